"""The real SS2 driver over a real pty pair: the test plays the wheel on the master side.

No mocks: the driver opens the slave's path with pyserial exactly as it would open
``/dev/ttyUSB0``, so these tests also cover what a mock would get wrong (pyserial flushing input on
open, EIO when the master goes away, reconnect attempts on a path that has vanished).

Nothing here sleeps to let time pass: where timing matters the driver runs on a
:class:`~tablectl.drivers.clock.ManualClock` that the test moves, and what the driver wrote is read
from its trace seam, which it calls before each write. The loop flushes its writes before it
handles the next read, so once the trace shows a line read, every write queued before it is in
``trace.tx``: an assertion that nothing was written is then exact, not a bet on a delay.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import pytest

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock, ManualClock
from tablectl.drivers.events import (
    BallLaunched,
    DeviceAvailable,
    DeviceEvent,
    DeviceUnavailable,
    SpinInvalid,
    WheelReady,
)
from tablectl.drivers.ss2.driver import SS2Driver, SS2Settings
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(10)

E = TypeVar("E", bound=DeviceEvent)


def status(state: int, spin: int, warn: int = 0, rotor: int = 0) -> bytes:
    return b"*X;%d;%03d;  ;%X;140;%d\r\n" % (state, spin, warn, rotor)


class Wheel:
    """The far side of the pty: repeats its current status line (the wheel's automatic status,
    faster than the real 500 ms to keep tests short) and records what the host sent."""

    def __init__(self, link: Path) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        os.set_blocking(self.master, False)
        # The host opens a symlink (as /dev/serial/by-id/... in the field): unplugging removes
        # it, so a /dev/pts number reused by another process meanwhile is never mistaken for it.
        link.symlink_to(os.ttyname(self.slave))
        self.link = link
        self.path = str(link)
        self.line: bytes | None = None
        self.received = b""
        self._arrived = asyncio.Event()
        self.closed = False
        asyncio.get_running_loop().add_reader(self.master, self._on_readable)
        self._repeater = asyncio.create_task(self._repeat())

    def show(self, line: bytes) -> None:
        """Make ``line`` the status the wheel repeats (and send it now)."""
        self.line = line
        self.send(line)

    def send(self, data: bytes) -> None:
        # A pty buffers kilobytes; these tests never come close, so a plain write is enough.
        with contextlib.suppress(OSError):
            os.write(self.master, data)

    async def wait_for(self, needle: bytes) -> None:
        """Until the host has written ``needle``."""
        while needle not in self.received:
            self._arrived.clear()
            await self._arrived.wait()

    def unplug(self) -> None:
        """Pull the cable: the master and the slave path both go away."""
        if self.closed:
            return
        self.closed = True
        self.link.unlink(missing_ok=True)
        self._repeater.cancel()
        asyncio.get_running_loop().remove_reader(self.master)
        os.close(self.master)
        os.close(self.slave)

    async def _repeat(self) -> None:
        while True:
            await asyncio.sleep(0.1)
            if self.line is not None:
                self.send(self.line)

    def _on_readable(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            self.received += os.read(self.master, 4096)
        self._arrived.set()


class Trace:
    """The driver's trace seam: everything it read, and each write, in the driver's own order."""

    def __init__(self) -> None:
        self.rx = bytearray()
        self.tx: list[bytes] = []

    def __call__(self, direction: Literal["rx", "tx"], data: bytes) -> None:
        if direction == "rx":
            self.rx += data
        else:
            self.tx.append(data)

    def read(self, line: bytes) -> int:
        """How many times the driver has read ``line``."""
        return self.rx.count(line)


class Host:
    """Runs ``driver.events()`` in a task and lets the test wait for particular events."""

    def __init__(self, driver: SS2Driver, trace: Trace) -> None:
        self.driver = driver
        self.trace = trace
        self.queue: asyncio.Queue[DeviceEvent] = asyncio.Queue()
        self.seen: list[DeviceEvent] = []
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.queue.put_nowait(event)

    async def expect(self, kind: type[E]) -> E:
        """The next event of ``kind`` (others are kept in ``seen``)."""
        while True:
            event = await self.queue.get()
            self.seen.append(event)
            if isinstance(event, kind):
                return event


@pytest.fixture
async def wheel(tmp_path: Path) -> AsyncIterator[Wheel]:
    w = Wheel(tmp_path / "wheel")
    try:
        yield w
    finally:
        w.unplug()


def make_host(wheel: Wheel, clock: Clock = SYSTEM_CLOCK, **options: Any) -> Host:
    options.setdefault("reconnect_min_delay", 0.1)
    options.setdefault("reconnect_max_delay", 0.5)
    trace = Trace()
    return Host(SS2Driver("wheel-1", wheel.path, options, clock=clock, trace=trace), trace)


@contextlib.asynccontextmanager
async def running(host: Host) -> AsyncIterator[Host]:
    try:
        yield host
    finally:
        await host.driver.aclose()
        async with asyncio.timeout(2):
            await host.task


async def test_handshake_sends_mode_and_sensor_stream(wheel: Wheel) -> None:
    host = make_host(wheel, operating_mode=1159, sensor_stream=True)
    async with asyncio.timeout(3), running(host):
        await wheel.wait_for(b"*o 1159\r\n*I 4\r\n")
        wheel.show(status(1, 11))
        await host.expect(DeviceAvailable)


async def test_no_handshake_commands_by_default(wheel: Wheel) -> None:
    host = make_host(wheel)
    async with asyncio.timeout(3), running(host):
        wheel.show(status(1, 11))
        await host.expect(DeviceAvailable)
        # Three more status lines handled (and the ticks after them): nothing was written.
        await wait_until(lambda: host.trace.read(status(1, 11)) >= 4)
        assert host.trace.tx == []
        assert wheel.received == b""


async def test_misspin_gets_restart_written_back_once(wheel: Wheel) -> None:
    host = make_host(wheel)
    async with asyncio.timeout(3), running(host):
        wheel.show(status(2, 40))
        assert (await host.expect(WheelReady)).spin == 40
        wheel.show(status(3, 40, warn=2))
        invalid = await host.expect(SpinInvalid)
        assert (invalid.reason, invalid.spin) == ("same_direction", 40)
        await wheel.wait_for(b"*R\r\n")
        # The misspin line keeps repeating; three more of it are answered with nothing.
        misspin = status(3, 40, warn=2)
        seen = host.trace.read(misspin)
        await wait_until(lambda: host.trace.read(misspin) >= seen + 3)
        assert host.trace.tx == [b"*R\r\n"]
        assert wheel.received == b"*R\r\n"


async def test_garbage_between_lines_is_counted_and_skipped(wheel: Wheel) -> None:
    host = make_host(wheel)
    async with asyncio.timeout(3), running(host):
        wheel.show(status(1, 7))
        await host.expect(DeviceAvailable)
        wheel.line = None
        wheel.send(b"\x00\xffgarbage\r\n" + status(2, 7) + b"*X;9;bad\r\n")
        wheel.send(b"\x07\x07" + status(3, 7, rotor=1))  # a lost terminator before the packet
        assert (await host.expect(WheelReady)).spin == 7
        launched = await host.expect(BallLaunched)
        assert (launched.spin, launched.rotor_direction) == (7, "ccw")
        assert host.driver.counters["decode_errors"] == 3


async def test_unplugged_mid_game_reports_disconnected_and_retries_calmly(wheel: Wheel) -> None:
    clock = ManualClock()
    host = make_host(wheel, clock)
    async with asyncio.timeout(4), running(host):
        wheel.show(status(2, 50))
        await host.expect(WheelReady)
        wheel.show(status(3, 50))
        await host.expect(BallLaunched)
        wheel.unplug()
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "disconnected"

        def failures() -> int:
            return host.driver.counters.get("open_failures", 0)

        # Backoff 0.1 s doubling to the 0.5 s cap, each pause jittered over its upper half; the
        # driver waits on the clock and tries nothing until the clock has moved (not a spin).
        for attempt, ceiling in enumerate([0.1, 0.2, 0.4, 0.5, 0.5], start=1):
            await wait_until(lambda: len(clock.pending) == 1, what="a backoff pause")
            (pause,) = clock.pending
            assert ceiling / 2 - 1e-9 <= pause <= ceiling + 1e-9
            assert failures() == attempt - 1
            clock.advance_to_next()
            await wait_until(lambda n=attempt: failures() == n, what=f"open attempt {attempt}")
        assert host.queue.empty()  # port_error is not re-reported while already down
        assert not host.driver.available


async def test_polls_when_auto_status_is_off(wheel: Wheel) -> None:
    clock = ManualClock()
    host = make_host(wheel, clock, auto_status=False, poll_interval=0.1)
    poll = b"*X\r\n"
    async with asyncio.timeout(3), running(host):
        wheel.show(status(1, 11))
        await wheel.wait_for(poll)  # the first tick after connecting polls at once
        # Every status line read is followed by a tick, all at the same clock time: no poll.
        seen = host.trace.read(b"*X;")
        await wait_until(lambda: host.trace.read(b"*X;") >= seen + 3)
        assert host.trace.tx == [poll]
        # Each step of more than poll_interval (and tick_interval) gives exactly one poll: at most
        # one every 100 ms of the driver's clock, the vendor's minimum.
        for polls in range(2, 5):
            clock.advance(0.125)
            await wait_until(lambda n=polls: len(host.trace.tx) >= n, what=f"poll {polls}")
        assert host.trace.tx == [poll] * 4
        await wheel.wait_for(poll * 4)
        assert wheel.received == poll * 4


async def test_aclose_ends_events(wheel: Wheel) -> None:
    host = make_host(wheel)
    async with asyncio.timeout(3):
        wheel.show(status(1, 3))
        await host.expect(DeviceAvailable)
        await host.driver.aclose()
        await asyncio.wait_for(host.task, 1)
        await host.driver.aclose()  # idempotent


def test_settings_are_strict() -> None:
    assert SS2Settings().poll_interval == 0.2
    with pytest.raises(ValueError, match="extra"):
        SS2Settings.model_validate({"baud": 9600})
    with pytest.raises(ValueError, match="poll_interval"):
        SS2Settings(poll_interval=0.05)
    with pytest.raises(ValueError, match="silence_timeout"):
        SS2Settings(silence_timeout=0.4)
