"""The real big-wheel driver over a real pty pair, against the simulator model or scripted bytes.

No mocks: the driver opens the slave's path with pyserial exactly as it would open ``/dev/ttyUSB0``;
the far side is either :class:`~tablectl.simulators.bigwheel.SimBigWheel` served by
:func:`tablectl.simulators.serve.serve_pty` (time-lapsed) or the test writing sentences itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from collections.abc import AsyncIterator
from typing import Any, TypeVar

import pytest

from tablectl.drivers.base import DriverSettings
from tablectl.drivers.bigwheel.driver import BigWheelDriver, BigWheelSettings
from tablectl.drivers.bigwheel.protocol import (
    RevolutionTick,
    SpinStarted,
    Status,
    Stopped,
    encode_message,
)
from tablectl.drivers.errors import DriverInitError
from tablectl.drivers.events import (
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    WheelSpinStarted,
    WheelStopped,
)
from tablectl.drivers.registry import get_driver_class
from tablectl.simulators.bigwheel import FaultSpec, SimBigWheel
from tablectl.simulators.serve import serve_pty
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(10)

E = TypeVar("E", bound=DeviceEvent)
SPEED = 25.0


class Host:
    """Runs ``driver.events()`` in a task and lets the test wait for particular events."""

    def __init__(self, driver: BigWheelDriver) -> None:
        self.driver = driver
        self.queue: asyncio.Queue[DeviceEvent] = asyncio.Queue()
        self.seen: list[DeviceEvent] = []
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.queue.put_nowait(event)

    async def expect(self, kind: type[E], within: float = 3.0) -> E:
        """The next event of ``kind`` (others are kept in ``seen``)."""
        async with asyncio.timeout(within):
            while True:
                event = await self.queue.get()
                self.seen.append(event)
                if isinstance(event, kind):
                    return event

    async def close(self) -> None:
        await self.driver.aclose()
        async with asyncio.timeout(2):
            await self.task


@contextlib.asynccontextmanager
async def simulated(model: SimBigWheel, **options: Any) -> AsyncIterator[Host]:
    """``model`` on a pty (as ``tablectl simulate bigwheel`` serves it) and a driver on it."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result))
    path = await ready
    options.setdefault("reconnect_min_delay", 0.05)
    options.setdefault("reconnect_max_delay", 0.2)
    host = Host(BigWheelDriver("wheel-1", path, options))
    try:
        yield host
    finally:
        await host.close()
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


async def test_spin_started_then_stopped_with_index_revolutions_direction() -> None:
    model = SimBigWheel(seed=3, speed=SPEED, every=1.0, stops=[17], spins=1)
    async with simulated(model, segments=54) as host:
        await host.expect(DeviceAvailable)
        started = await host.expect(WheelSpinStarted)
        assert started.direction == "cw"
        stop = await host.expect(WheelStopped)
        result = model.results[0]
        assert (stop.index, stop.revolutions, stop.direction, stop.on_divider) == (
            17,
            result.revolutions,
            "cw",
            False,
        )
        assert 3 <= result.revolutions <= 6
        assert host.driver.interpreter.tick_mismatches == 0
        assert host.driver.counters.get("decode_errors", 0) == 0


async def test_divider_and_short_spin_pass_through_as_data() -> None:
    faults = [
        FaultSpec("divider", 1),
        FaultSpec("short_spin", 2, 2),
        FaultSpec("wrong_direction", 2),
    ]
    model = SimBigWheel(seed=5, speed=SPEED, every=1.0, stops=[53, 8], faults=faults, spins=2)
    async with simulated(model, segments=54) as host:
        first = await host.expect(WheelStopped)
        assert (first.index, first.on_divider) == (53, True)
        assert await host.expect(WheelSpinStarted) == WheelSpinStarted(
            device="wheel-1", at=host.seen[-1].at, direction="ccw"
        )
        second = await host.expect(WheelStopped)
        assert (second.index, second.revolutions, second.direction) == (8, 2, "ccw")


async def test_handshake_sets_the_segment_count() -> None:
    model = SimBigWheel(seed=1, speed=SPEED, segments=54, every=100.0)
    async with simulated(model, segments=19) as host:
        await host.expect(DeviceAvailable)
        await wait_until(lambda: model.segments == 19, what="SEG 19 to reach the sensor")
        version = host.driver.interpreter.version
        assert version is not None
        assert version.model == "TBW-SIM"


async def test_sensor_fault_is_raised_and_cleared_by_the_wheel() -> None:
    model = SimBigWheel(
        seed=2, speed=SPEED, every=1.0, faults=[FaultSpec("sensor_fault", 1, "ENC")], spins=1
    )
    async with simulated(model) as host:
        raised = await host.expect(DeviceFaultRaised)
        assert raised.code == "bigwheel_encoder"
        await host.expect(WheelStopped)
        cleared = await host.expect(DeviceFaultCleared)
        assert cleared.code == "bigwheel_encoder"


async def test_silence_makes_the_wheel_unavailable_and_back() -> None:
    # 30 wheel seconds of silence at speed 20 = 1.5 s real, beyond a 1.1 s timeout.
    model = SimBigWheel(
        seed=4, speed=20.0, every=1.0, faults=[FaultSpec("silence", 1, 30.0)], spins=1
    )
    async with simulated(model, silence_timeout=1.1) as host:
        await host.expect(DeviceAvailable)
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "silent"
        await host.expect(DeviceAvailable)
        # Its STP may have fallen into the silence: then the heartbeat's level reports it.
        stop = await host.expect(WheelStopped)
        assert stop.index == model.results[0].index


async def test_scripted_frames_with_garbage_and_split() -> None:
    master, slave = os.openpty()
    tty.setraw(master)
    os.set_blocking(master, False)
    host = Host(BigWheelDriver("wheel-1", os.ttyname(slave), {"silence_timeout": 5}))
    try:
        stream = b"".join(
            [
                encode_message(Status("idle", 54, 0)),
                b"\x00\xffnoise",
                encode_message(SpinStarted(1, "cw")),
                encode_message(RevolutionTick(1, 1, 2100)),
                b"$BWREV,1,2,2500*00\r\n",  # bad checksum: the host must not care
                encode_message(Stopped(1, 40, 2, "cw")),
            ]
        )
        # pyserial flushes the input when it opens the port: talk once the handshake shows it open.
        sent = bytearray()

        def handshake_seen() -> bool:
            with contextlib.suppress(BlockingIOError):
                sent.extend(os.read(master, 4096))
            return b"$BHIDN*49\r\n" in sent

        await wait_until(handshake_seen, what="the host's IDN")
        for i in range(0, len(stream), 7):
            os.write(master, stream[i : i + 7])
            await asyncio.sleep(0.005)  # pacing, so that the host reads the sentences in pieces
        stop = await host.expect(WheelStopped)
        assert (stop.index, stop.revolutions) == (40, 2)
        assert host.driver.counters["decode_errors"] == 2
        assert sent.startswith(b"$BHIDN*49\r\n")
    finally:
        await host.close()
        os.close(master)
        os.close(slave)


def test_settings_are_validated() -> None:
    with pytest.raises(DriverInitError, match="baudrate"):
        BigWheelDriver("w", "/dev/null", {"baudrate": 115200})
    with pytest.raises(DriverInitError, match="segments"):
        BigWheelDriver("w", "/dev/null", {"segments": 1})
    with pytest.raises(DriverInitError, match="silence_timeout"):
        BigWheelDriver("w", "/dev/null", {"silence_timeout": 1.0})
    with pytest.raises(DriverInitError, match="unknown"):
        BigWheelDriver("w", "/dev/null", {"unknown": 1})
    with pytest.raises(DriverInitError, match="serial port"):
        BigWheelDriver("w", None)
    settings: DriverSettings = BigWheelSettings(baudrate=19200, segments=54)
    assert BigWheelDriver("w", "/dev/null", settings).settings.baudrate == 19200


def test_registry_entry_loads_the_driver() -> None:
    assert get_driver_class("tablectl-bigwheel") is BigWheelDriver
