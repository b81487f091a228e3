"""The shoe drivers end to end: HidShoeDriver through real pyusb on the simulated backend, and
SerialShoeDriver over a real pty pair (the test plays the scanner on the master side)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import pytest

from tablectl.drivers.codec import DecodeError, FrameScanner
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.events import (
    CardScanned,
    CutCardSeen,
    DeviceAvailable,
    DeviceEvent,
    DeviceUnavailable,
    ScanRejected,
    ShoeEmptied,
    ShoeInserted,
    ShoeRemoved,
)
from tablectl.drivers.registry import get_driver_class
from tablectl.drivers.shoe.barcodes import Decoded
from tablectl.drivers.shoe.driver import (
    LINE_FRAMINGS,
    HidShoeDriver,
    SerialShoeDriver,
    ShoeSettings,
)
from tablectl.drivers.shoe.hid import encode_line
from tablectl.simulators.shoe import (
    SIM_PID,
    SIM_VID,
    SimShoe,
    encode_serial_line,
    make_usb_device,
    push_lines,
)
from tablectl.simulators.usb_backend import SimUsbBackend
from tablectl.simulators.usb_device import SimUsbDevice
from tests.support.pty import Pty, pty_fixture  # noqa: F401 - the `pty` fixture
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(10)

E = TypeVar("E", bound=DeviceEvent)
FAST = {"reconnect_min_delay": 0.05, "reconnect_max_delay": 0.1}


class Host:
    """Runs ``driver.events()`` in a task; the test waits for events."""

    def __init__(self, driver: HidShoeDriver | SerialShoeDriver) -> None:
        self.driver = driver
        self.queue: asyncio.Queue[DeviceEvent] = asyncio.Queue()
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.queue.put_nowait(event)

    async def expect(self, kind: type[E]) -> E:
        """The next event, which must be a ``kind``."""
        event = await self.queue.get()
        assert isinstance(event, kind), event
        return event

    async def take(self, n: int) -> list[DeviceEvent]:
        return [await self.queue.get() for _ in range(n)]


@contextlib.asynccontextmanager
async def running(driver: HidShoeDriver | SerialShoeDriver) -> AsyncIterator[Host]:
    host = Host(driver)
    try:
        async with asyncio.timeout(5):
            yield host
    finally:
        await driver.aclose()
        async with asyncio.timeout(2):
            await host.task


def card_codes(events: list[DeviceEvent]) -> list[str]:
    return [e.card for e in events if isinstance(e, CardScanned)]


# --- HID ---------------------------------------------------------------------------------------


@pytest.fixture
def scanner() -> SimUsbDevice:
    return make_usb_device()


def hid_driver(backend: SimUsbBackend, **options: Any) -> HidShoeDriver:
    return HidShoeDriver(
        "shoe", None, {"vid": SIM_VID, "pid": SIM_PID, **FAST, **options}, usb_backend=backend
    )


async def test_hid_deals_a_sequence_in_order(scanner: SimUsbDevice) -> None:
    model = SimShoe(seed=3, decks=1, cut_from_end=5)
    async with running(hid_driver(SimUsbBackend(scanner))) as host:
        available = await host.expect(DeviceAvailable)
        assert available.detail == f"usb {SIM_VID:04x}:{SIM_PID:04x}"
        assert not scanner.kernel_driver_active(0)
        push_lines(scanner, model.deal(len(model.script)))
        events = await host.take(len(model.script))
    assert card_codes(events) == list(model.cards)
    cut = next(i for i, e in enumerate(events) if isinstance(e, CutCardSeen))
    assert cut == 52 - 5  # after the 47th card
    assert isinstance(events[-1], ShoeEmptied)
    assert all(e.device == "shoe" for e in events)
    assert scanner.kernel_driver_active(0)  # given back to usbhid on close


async def test_hid_rejections_and_signals(scanner: SimUsbDevice) -> None:
    driver = hid_driver(SimUsbBackend(scanner), deck_serials=["B1"])
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        push_lines(scanner, ["B1-KH", "X9-KH", "K\ufffd", "ZZ", "REMOVED", "INSERTED", ""])
        scanned = await host.expect(CardScanned)
        assert (scanned.card, scanned.barcode) == ("KH", "B1-KH")
        reasons = [(await host.expect(ScanRejected)).reason for _ in range(3)]
        assert reasons == ["foreign_deck", "unreadable", "unknown_barcode"]
        await host.expect(ShoeRemoved)
        await host.expect(ShoeInserted)
        scanner.push_in(0x81, b"\x00\x00\x04")  # a malformed report
        push_lines(scanner, ["CUT"])
        await host.expect(CutCardSeen)
    assert driver.counters["rejected_barcodes"] == 3
    assert driver.counters["decode_errors"] == 1
    assert driver.counters["blank_lines"] == 1


async def test_hid_unplug_then_replug(scanner: SimUsbDevice) -> None:
    driver = hid_driver(SimUsbBackend(scanner))
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        push_lines(scanner, ["KH"])
        assert (await host.expect(CardScanned)).card == "KH"
        scanner.push_in(0x81, encode_line("QS")[0])  # K pressed when the cable goes
        scanner.unplug()
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "disconnected"
        # A few failed finds while it is away, not re-reported: each failure is counted in the
        # same step that would report it, so none can still be in flight.
        await wait_until(lambda: driver.counters.get("open_failures", 0) >= 2)
        assert host.queue.empty()
        scanner.plug()
        await host.expect(DeviceAvailable)
        assert not scanner.kernel_driver_active(0)
        push_lines(scanner, ["TD"])
        assert (await host.expect(CardScanned)).card == "TD"


async def test_hid_absent_at_start_is_port_error() -> None:
    backend = SimUsbBackend()
    async with running(hid_driver(backend)) as host:
        down = await host.expect(DeviceUnavailable)
        assert (down.reason, "not found" in down.detail) == ("port_error", True)
        late = make_usb_device()
        backend.add(late)
        await host.expect(DeviceAvailable)


async def test_hid_finds_by_serial() -> None:
    other = make_usb_device(serial="SHOE-A")
    ours = make_usb_device(serial="SHOE-B")
    async with running(hid_driver(SimUsbBackend(other, ours), serial="SHOE-B")) as host:
        await host.expect(DeviceAvailable)
        push_lines(other, ["KH"])
        push_lines(ours, ["QS"])
        assert (await host.expect(CardScanned)).card == "QS"
    assert other.kernel_driver_active(0)


def test_hid_needs_vid_and_pid_and_no_port() -> None:
    with pytest.raises(DriverInitError, match="vid and pid"):
        HidShoeDriver("shoe", None, {"vid": 1})
    with pytest.raises(DriverInitError, match="remove port"):
        HidShoeDriver("shoe", "/dev/ttyUSB0", {"vid": 1, "pid": 2})


def test_registry_names() -> None:
    assert get_driver_class("hid-shoe") is HidShoeDriver
    assert get_driver_class("serial-shoe") is SerialShoeDriver


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": "red"}, "colour"),
        ({"barcode_pattern": "(?P<rank>.)"}, "lacks named group"),
        ({"cut_card_barcodes": ["EMPTY"]}, "in both"),
        ({"signal_barcodes": {"X": "boom"}}, "signal_barcodes"),
        ({"vid": 0x10000}, "vid"),
        ({"line_ending": "nul"}, "line_ending"),
    ],
)
def test_bad_settings_fail_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(DriverInitError, match=message):
        SerialShoeDriver("shoe", "loop://", options)


def test_settings_build_the_codec() -> None:
    settings = ShoeSettings(barcodes={"777": "AS"}, deck_serials=("B1",))
    assert settings.codec().decode("777") == Decoded("AS")


# --- serial ------------------------------------------------------------------------------------


async def test_serial_lines_become_events(pty: Pty) -> None:
    driver = SerialShoeDriver("shoe", pty.path, FAST)
    async with running(driver) as host:
        assert (await host.expect(DeviceAvailable)).detail == pty.path
        pty.send(b"KH\r\n10")
        assert (await host.expect(CardScanned)).card == "KH"
        pty.send(b"D\r\n\r\nCUT\rNOREAD\n\xff\xfeH\r\nEMPTY\r\n")
        assert (await host.expect(CardScanned)).card == "TD"
        await host.expect(CutCardSeen)
        assert (await host.expect(ScanRejected)).reason == "unreadable"
        rejected = await host.expect(ScanRejected)
        assert (rejected.reason, rejected.barcode) == ("unreadable", "\ufffd\ufffdH")
        await host.expect(ShoeEmptied)


async def test_serial_shoe_from_the_simulator_model(pty: Pty) -> None:
    model = SimShoe(seed=9, decks=1, cut_from_end=7)
    driver = SerialShoeDriver("shoe", pty.path, FAST)
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        pty.send(b"".join(encode_serial_line(line) for line in model.deal(60)))
        events = await host.take(len(model.script))
    assert card_codes(events) == list(model.cards)
    assert isinstance(events[52 - 7], CutCardSeen)


async def test_serial_port_gone_is_unavailable(pty: Pty) -> None:
    async with running(SerialShoeDriver("shoe", pty.path, FAST)) as host:
        await host.expect(DeviceAvailable)
        pty.close()
        assert (await host.expect(DeviceUnavailable)).reason == "disconnected"


@pytest.mark.parametrize(
    ("ending", "data", "lines"),
    [
        ("any", b"KH\r\nQS\rTD\n", ["KH", "", "QS", "TD"]),
        ("crlf", b"K\rH\r\nQS\r\n", ["K\rH", "QS"]),
        ("cr", b"KH\r\nQS\r", ["KH", "\nQS"]),
        ("lf", b"KH\r\nQS\n", ["KH\r", "QS"]),
    ],
)
def test_line_framings(ending: Any, data: bytes, lines: list[str]) -> None:
    scanner = FrameScanner(LINE_FRAMINGS[ending])
    # Byte by byte: a split anywhere changes nothing.
    assert [line for b in data for line in scanner.feed(bytes([b]))] == [
        line.encode() for line in lines
    ]


@pytest.mark.parametrize("ending", ["any", "cr", "lf", "crlf"])
def test_an_over_long_line_is_reported_once_when_it_ends(ending: Any) -> None:
    scanner = FrameScanner(LINE_FRAMINGS[ending])
    end = {"any": b"\n", "cr": b"\r", "lf": b"\n", "crlf": b"\r\n"}[ending]
    assert scanner.feed(b"A" * 1000) == []
    assert scanner.feed(end) == [DecodeError("line too long", b"A" * 256)]
    # The next line reads exactly (with crlf the old splitter never found this line's end).
    assert scanner.feed(b"KH" + end) == [b"KH"]


async def test_an_over_long_serial_line_is_one_unreadable_scan(pty: Pty) -> None:
    driver = SerialShoeDriver("shoe", pty.path, FAST)
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        pty.send(b"A" * 300 + b"\r\nKH\r\n")
        rejected = await host.expect(ScanRejected)
        assert (rejected.reason, rejected.barcode) == ("unreadable", "A" * 256 + "\ufffd")
        assert (await host.expect(CardScanned)).card == "KH"
    assert driver.counters["decode_errors"] == 1
