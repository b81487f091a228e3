"""UsbEndpointStream through real pyusb over the simulated backend (only libusb is replaced)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
import usb.core

from tablectl.drivers.errors import DriverInitError, DriverUnavailableError, TransportClosedError
from tablectl.drivers.transports.usb import UsbEndpointStream
from tablectl.simulators.usb_backend import SimUsbBackend
from tablectl.simulators.usb_device import SimUsbDevice
from tests.support.waiting import until_waiting, wait_until

pytestmark = pytest.mark.timeout(10)

VID, PID = 0x1209, 0x0001
REPORT = bytes([2, 0, 0x0E, 0, 0, 0, 0, 0])


@pytest.fixture
def scanner() -> SimUsbDevice:
    return SimUsbDevice.hid_keyboard(VID, PID, serial="SHOE-1")


@pytest.fixture
async def stream(scanner: SimUsbDevice) -> AsyncIterator[UsbEndpointStream]:
    s = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(scanner), timeout_ms=50)
    await s.open()
    try:
        yield s
    finally:
        await s.close()


async def test_open_detaches_kernel_driver_and_close_reattaches(scanner: SimUsbDevice) -> None:
    assert scanner.kernel_driver_active(0)
    s = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(scanner))
    await s.open()
    assert not scanner.kernel_driver_active(0)
    assert scanner.claimed(0)
    assert s.kernel_driver_detached
    await s.close()
    assert scanner.kernel_driver_active(0)
    assert not scanner.claimed(0)
    await s.close()  # idempotent
    assert scanner.kernel_driver_active(0)


async def test_hid_boot_protocol_requests_are_sent(scanner: SimUsbDevice) -> None:
    s = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(scanner), hid_boot_protocol=True)
    await s.open()
    await s.close()
    assert [(r[0], r[1], r[2], r[3]) for r in scanner.control_log] == [
        (0x21, 0x0B, 0, 0),  # SET_PROTOCOL boot
        (0x21, 0x0A, 0, 0),  # SET_IDLE 0
    ]


async def test_device_without_kernel_driver_is_not_reattached() -> None:
    device = SimUsbDevice.bulk(VID, PID)
    s = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(device))
    await s.open()
    assert not s.kernel_driver_detached
    await s.close()
    assert not device.kernel_driver_active(0)


async def test_find_by_serial_picks_the_right_one() -> None:
    first = SimUsbDevice.hid_keyboard(VID, PID, serial="SHOE-1")
    second = SimUsbDevice.hid_keyboard(VID, PID, serial="SHOE-2")
    s = UsbEndpointStream(vid=VID, pid=PID, serial="SHOE-2", backend=SimUsbBackend(first, second))
    await s.open()
    try:
        second.push_in(0x81, b"two")
        first.push_in(0x81, b"one")
        assert await s.read() == b"two"
        assert first.kernel_driver_active(0)  # the other shoe was left alone
    finally:
        await s.close()


@pytest.mark.parametrize(
    ("vid", "pid", "serial"), [(VID, 0x9999, None), (0x9999, PID, None), (VID, PID, "OTHER")]
)
async def test_not_found_names_the_device(
    scanner: SimUsbDevice, vid: int, pid: int, serial: str | None
) -> None:
    s = UsbEndpointStream(vid=vid, pid=pid, serial=serial, backend=SimUsbBackend(scanner))
    with pytest.raises(DriverInitError, match=f"{vid:04x}:{pid:04x}.*not found"):
        await s.open()


async def test_missing_libusb_is_driver_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_backend(*args: Any, **kwargs: Any) -> None:
        raise usb.core.NoBackendError("No backend available")

    monkeypatch.setattr(usb.core, "find", no_backend)
    with pytest.raises(DriverUnavailableError, match="libusb"):
        await UsbEndpointStream(vid=VID, pid=PID).open()


async def test_missing_interface_or_endpoint_is_init_error(scanner: SimUsbDevice) -> None:
    backend = SimUsbBackend(scanner)
    with pytest.raises(DriverInitError, match="no interface 3"):
        await UsbEndpointStream(vid=VID, pid=PID, interface=3, backend=backend).open()
    with pytest.raises(DriverInitError, match="no IN endpoint 0x83"):
        await UsbEndpointStream(vid=VID, pid=PID, ep_in=0x83, backend=backend).open()
    # A failed open gives the interface back to the kernel.
    assert scanner.kernel_driver_active(0)
    assert not scanner.claimed(0)


async def test_interface_busy_is_init_error(scanner: SimUsbDevice) -> None:
    backend = SimUsbBackend(scanner)
    holder = UsbEndpointStream(vid=VID, pid=PID, backend=backend)
    await holder.open()
    try:
        with pytest.raises(DriverInitError, match="busy"):
            await UsbEndpointStream(vid=VID, pid=PID, backend=backend).open()
    finally:
        await holder.close()


async def test_read_returns_one_transfer_each(
    scanner: SimUsbDevice, stream: UsbEndpointStream
) -> None:
    scanner.push_in(0x81, REPORT)
    scanner.push_in(0x81, bytes(8))
    assert await stream.read() == REPORT
    assert await stream.read() == bytes(8)


async def test_read_waits_across_timeouts_without_spinning(
    scanner: SimUsbDevice, stream: UsbEndpointStream, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = stream.backend
    assert isinstance(backend, SimUsbBackend)
    timeouts: list[int] = []
    original = backend.intr_read

    def counting(*args: Any) -> int:
        timeouts.append(args[-1])
        return original(*args)

    monkeypatch.setattr(backend, "intr_read", counting)
    reader = asyncio.create_task(stream.read())
    # One read ends in a timeout, the next starts: read() keeps waiting across them.
    await wait_until(lambda: len(timeouts) >= 3, what="three blocking reads")
    assert not reader.done()
    # Each read blocks for the stream's whole timeout_ms (50 ms): an idle scanner costs one
    # wake-up per 50 ms, never a spin.
    assert set(timeouts) == {50}
    scanner.push_in(0x81, REPORT)
    assert await asyncio.wait_for(reader, 1) == REPORT


async def test_cancelled_read_keeps_its_transfer(scanner: SimUsbDevice) -> None:
    # A long timeout_ms: the cancelled read's thread is surely still blocked when the report comes.
    stream = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(scanner), timeout_ms=5000)
    await stream.open()
    try:
        reader = asyncio.create_task(stream.read())
        await until_waiting(reader)
        reader.cancel()
        scanner.push_in(0x81, REPORT)  # lands in the read thread still running
        await wait_until(lambda: scanner.pending_in(0x81) == 0, what="the thread to take it")
        assert await asyncio.wait_for(stream.read(), 1) == REPORT
    finally:
        await stream.close()


async def test_write_reaches_the_out_endpoint() -> None:
    device = SimUsbDevice.bulk(VID, PID)
    got: list[tuple[int, bytes]] = []
    device.on_out(lambda ep, data: got.append((ep, data)))
    s = UsbEndpointStream(vid=VID, pid=PID, backend=SimUsbBackend(device))
    await s.open()
    try:
        await s.write(b"\x02STATUS\x03")
        device.push_in(0x81, b"\x02OK\x03")
        assert await s.read() == b"\x02OK\x03"
    finally:
        await s.close()
    assert got == [(0x02, b"\x02STATUS\x03")]


async def test_write_without_out_endpoint_is_a_configuration_error(
    stream: UsbEndpointStream,
) -> None:
    with pytest.raises(DriverInitError, match="no OUT endpoint"):
        await stream.write(b"x")


async def test_unplug_wakes_a_blocked_read_with_transport_closed(
    scanner: SimUsbDevice, stream: UsbEndpointStream
) -> None:
    reader = asyncio.create_task(stream.read())
    await until_waiting(reader)
    scanner.unplug()
    with pytest.raises(TransportClosedError, match="device gone"):
        await asyncio.wait_for(reader, 1)
    with pytest.raises(TransportClosedError):
        await stream.read()
    await stream.close()  # after an unplug: no errors, nothing to re-attach
    assert not scanner.kernel_driver_active(0)


async def test_replugged_device_opens_again(scanner: SimUsbDevice) -> None:
    backend = SimUsbBackend(scanner)
    first = UsbEndpointStream(vid=VID, pid=PID, backend=backend, timeout_ms=50)
    await first.open()
    scanner.unplug()
    with pytest.raises(TransportClosedError):
        await first.read()
    await first.close()
    with pytest.raises(DriverInitError, match="not found"):
        await UsbEndpointStream(vid=VID, pid=PID, backend=backend).open()
    scanner.plug()
    assert scanner.kernel_driver_active(0)  # usbhid binds the new device
    second = UsbEndpointStream(vid=VID, pid=PID, backend=backend, timeout_ms=50)
    await second.open()
    try:
        scanner.push_in(0x81, REPORT)
        assert await second.read() == REPORT
    finally:
        await second.close()


async def test_closed_stream_refuses_io(stream: UsbEndpointStream) -> None:
    await stream.close()
    with pytest.raises(TransportClosedError):
        await stream.read()
    with pytest.raises(TransportClosedError):
        await stream.write(b"x")


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="timeout_ms"):
        UsbEndpointStream(vid=VID, pid=PID, timeout_ms=0)
