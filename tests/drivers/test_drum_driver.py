"""DrumDriver end to end against SimDrum, both on python-can's real ``virtual`` bus.

No mocks: the driver opens ``can.Bus(interface="virtual", channel=...)`` exactly as it would
open ``socketcan``/``can0``, and the simulator speaks through its own bus on the same channel.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Sequence
from typing import Any, TypeVar

import pytest

from tablectl.drivers.drum.driver import DrumDriver, DrumSettings
from tablectl.drivers.drum.protocol import AckResult, Opcode
from tablectl.drivers.errors import DeviceTimeoutError, DriverInitError, TransportClosedError
from tablectl.drivers.events import (
    BallRead,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    MixingChanged,
    TubeFull,
)
from tablectl.drivers.registry import open_driver
from tablectl.drivers.transports.can import CanLink, open_can_link
from tablectl.simulators.drum import FaultSpec, SimDrum, run_sim_drum
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(10)

E = TypeVar("E", bound=DeviceEvent)
_names = itertools.count()


class Host:
    """Runs ``driver.events()`` in a task; the test waits for particular events."""

    def __init__(self, driver: DrumDriver, sent: list[bytes] | None = None) -> None:
        self.driver = driver
        self.sent = [] if sent is None else sent
        """Frames the driver wrote, in candump form (filled by its trace seam)."""
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

    def drain(self) -> list[DeviceEvent]:
        """Every event so far: those already expected and those still queued."""
        while not self.queue.empty():
            self.seen.append(self.queue.get_nowait())
        return self.seen

    async def close(self) -> None:
        await self.driver.aclose()
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


class Bench:
    """A simulated drum on a fresh virtual channel, and a driver factory for the same channel."""

    def __init__(self) -> None:
        self.channel = f"tablectl-drum-test-{next(_names)}"
        self.model: SimDrum | None = None
        self._link: CanLink | None = None
        self._task: asyncio.Task[None] | None = None
        self._hosts: list[Host] = []

    async def start(self, model: SimDrum) -> SimDrum:
        self.model = model
        self._link = await open_can_link("virtual", self.channel)
        self._task = asyncio.create_task(run_sim_drum(model, self._link))
        return model

    async def stop_sim(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        if self._link is not None:
            await self._link.close()

    def host(self, **options: Any) -> Host:
        settings = {"interface": "virtual", "channel": self.channel, "heartbeat_timeout": 0.5}
        settings.update(options)
        sent: list[bytes] = []

        def trace(direction: str, data: bytes) -> None:
            if direction == "tx":
                sent.append(data)

        host = Host(DrumDriver("drum", None, settings, trace=trace), sent)
        self._hosts.append(host)
        return host

    async def close(self) -> None:
        for host in self._hosts:
            await host.close()
        await self.stop_sim()


@pytest.fixture
async def bench() -> AsyncIterator[Bench]:
    b = Bench()
    try:
        yield b
    finally:
        await b.close()


def of(kind: type[E], events: Sequence[DeviceEvent]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


async def draw_by_commands(host: Host, count: int) -> list[BallRead]:
    """What a draw engine does: start mixing, release ``count`` balls, one after the other."""
    assert await host.driver.start_mixing() is AckResult.OK
    reads: list[BallRead] = []
    for _ in range(count):
        assert await host.driver.release_ball() is AckResult.OK
        reads.append(await host.expect(BallRead))
    return reads


async def test_a_draw_of_seven_balls_arrives_in_order(bench: Bench) -> None:
    model = await bench.start(SimDrum(seed=7, speed=20, draw=7, balls=42))
    host = bench.host()
    await host.expect(DeviceAvailable)
    reads = await draw_by_commands(host, 7)
    await host.expect(TubeFull)
    assert [r.ball for r in reads] == list(model.results[0].balls)
    assert [r.position for r in reads] == [1, 2, 3, 4, 5, 6, 7]
    assert all(1 <= r.ball <= 42 and r.reader == 1 for r in reads)
    assert len({r.ball for r in reads}) == 7
    assert of(MixingChanged, host.seen)[-1].on is True
    # The tube is full: the drum refuses another ball until the balls are returned.
    assert await host.driver.release_ball() is AckResult.REFUSED
    assert await host.driver.return_balls() is AckResult.OK
    assert await host.driver.stop_mixing() is AckResult.OK
    assert (await host.expect(MixingChanged)).on is False


async def test_the_automatic_cycle_draws_by_itself(bench: Bench) -> None:
    model = await bench.start(SimDrum(seed=3, speed=40, draw=5, balls=36, auto=True))
    host = bench.host()
    reads = [await host.expect(BallRead) for _ in range(5)]
    await host.expect(TubeFull)
    assert [r.ball for r in reads] == list(model.results[0].balls)


@pytest.mark.parametrize("kind", ["double_read", "repeat_frame"])
async def test_a_ball_read_twice_is_one_event(bench: Bench, kind: str) -> None:
    model = await bench.start(
        SimDrum(seed=1, speed=20, draw=3, readers=2, faults=[FaultSpec(kind, 1, 2)])
    )
    host = bench.host(readers=2)
    await host.expect(DeviceAvailable)
    reads = await draw_by_commands(host, 3)
    await host.expect(TubeFull)
    expected = "rereads" if kind == "double_read" else "repeated_frames"
    # The second copy is counted, never a second event.
    await wait_until(lambda: host.driver.counters.get(expected) == 1, what=expected)
    assert [r.ball for r in of(BallRead, host.drain())] == list(model.results[0].balls)
    assert [r.ball for r in reads] == list(model.results[0].balls)


async def test_heartbeat_lost_then_back(bench: Bench) -> None:
    # The whole drum goes quiet for 0.8 s at the start of draw 1 (0.3 s after mixing starts).
    await bench.start(SimDrum(speed=1, faults=[FaultSpec("silence", 1, 0.8)]))
    host = bench.host(heartbeat_timeout=0.3)
    await host.expect(DeviceAvailable)
    assert await host.driver.start_mixing() is AckResult.OK
    down = await host.expect(DeviceUnavailable)
    assert down.reason == "silent"
    assert not host.driver.available
    await host.expect(DeviceAvailable)
    assert host.driver.available


async def test_blower_fault_raised_and_cleared(bench: Bench) -> None:
    model = await bench.start(SimDrum(speed=10, faults=[FaultSpec("blower_fault", 1, 2.0)]))
    host = bench.host()
    await host.expect(DeviceAvailable)
    assert await host.driver.start_mixing() is AckResult.OK
    raised = await host.expect(DeviceFaultRaised)
    assert raised.code == "drum_blower_fault"
    assert not model.mixing
    # While the blower is stalled the drum refuses to release a ball or to clear the fault.
    assert await host.driver.release_ball() is AckResult.FAULT_ACTIVE
    assert await host.driver.clear_fault() is AckResult.REFUSED
    cleared = await host.expect(DeviceFaultCleared)
    assert cleared.code == "drum_blower_fault"
    # The blower restarts after the clear: the fourth mixing change may still be on its way.
    await wait_until(lambda: len(of(MixingChanged, host.drain())) >= 4)
    events = host.drain()
    assert [m.on for m in of(MixingChanged, events)] == [False, True, False, True]
    assert [e.code for e in of(DeviceFaultRaised, events)] == ["drum_blower_fault"]


async def test_reader_silent_is_a_fault(bench: Bench) -> None:
    await bench.start(SimDrum(speed=1, readers=2, faults=[FaultSpec("reader_silent", 1, 1.0)]))
    host = bench.host(readers=2, heartbeat_timeout=0.3)
    await host.expect(DeviceAvailable)
    assert await host.driver.start_mixing() is AckResult.OK
    raised = await host.expect(DeviceFaultRaised)
    assert raised.code == "drum_reader_silent_2"
    assert await host.driver.release_ball() is AckResult.FAULT_ACTIVE
    cleared = await host.expect(DeviceFaultCleared)
    assert cleared.code == "drum_reader_silent_2"
    assert host.driver.available


async def test_commands_reach_the_sim(bench: Bench) -> None:
    model = await bench.start(SimDrum(speed=20))
    host = bench.host()
    await host.expect(DeviceAvailable)
    assert await host.driver.query_status() is AckResult.OK
    assert await host.driver.start_mixing() is AckResult.OK
    assert await host.driver.stop_mixing() is AckResult.OK
    assert await host.driver.clear_fault() is AckResult.OK
    assert await host.driver.return_balls() is AckResult.OK
    opcodes = [c.opcode for c in model.commands]
    # The driver's own status query on connect comes first.
    assert opcodes == [
        Opcode.QUERY_STATUS,
        Opcode.QUERY_STATUS,
        Opcode.START_MIXING,
        Opcode.STOP_MIXING,
        Opcode.CLEAR_FAULT,
        Opcode.RETURN_BALLS,
    ]
    assert host.driver.last_ack is not None
    assert host.driver.last_ack.opcode is Opcode.RETURN_BALLS
    state = host.driver.state
    assert state is not None
    assert state.tube_count == 0


async def test_garbage_on_the_bus_is_counted_not_fatal(bench: Bench) -> None:
    model = await bench.start(SimDrum(seed=2, speed=20, draw=2, faults=[FaultSpec("garbage", 1)]))
    host = bench.host()
    await host.expect(DeviceAvailable)
    reads = await draw_by_commands(host, 2)
    assert [r.ball for r in reads] == list(model.results[0].balls)
    assert host.driver.counters["decode_errors"] >= 4
    assert host.driver.available


async def test_send_raw_takes_an_id_and_data(bench: Bench) -> None:
    model = await bench.start(SimDrum(speed=20))
    host = bench.host()
    await host.expect(DeviceAvailable)
    await host.driver.send_raw(bytes.fromhex("031001630000"))  # start mixing, token 0x63
    await wait_until(lambda: any(c.token == 0x63 for c in model.commands))
    with pytest.raises(ValueError, match="2-byte id"):
        await host.driver.send_raw(b"\x03")


async def test_no_acknowledgement_is_a_timeout(bench: Bench) -> None:
    host = bench.host(command_timeout=0.2, heartbeat_timeout=0.2, relink_after=5)
    await wait_until(lambda: host.sent, what="the status query on connecting")  # bus empty
    with pytest.raises(DeviceTimeoutError, match="START_MIXING"):
        await host.driver.start_mixing()


async def test_commands_need_a_connection() -> None:
    driver = DrumDriver("drum", None, {"interface": "virtual", "channel": "nowhere"})
    with pytest.raises(TransportClosedError):
        await driver.start_mixing()
    await driver.aclose()


async def test_an_absent_bus_is_unavailable_port_error() -> None:
    driver = DrumDriver("drum", "tablectl-no-such-can9", {"reconnect_min_delay": 0.05})
    host = Host(driver)
    try:
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "port_error"
        await wait_until(lambda: driver.counters["open_failures"] >= 3)
        # Each failure is counted in the same step that would report it: none can be in flight.
        assert of(DeviceUnavailable, host.drain()) == [down]  # reported once
    finally:
        await host.close()


async def test_a_silent_bus_is_reopened(bench: Bench) -> None:
    host = bench.host(heartbeat_timeout=0.1, relink_after=0.2, reconnect_min_delay=0.05)
    await wait_until(lambda: host.driver.counters.get("relinks", 0) >= 1)
    # A drum that appears later is found on the reopened bus.
    await bench.start(SimDrum(speed=20))
    await host.expect(DeviceAvailable)


def test_registry_builds_the_drum_driver_with_port_as_channel() -> None:
    driver = open_driver("drum", "tablectl-drum", "vcan0", {"interface": "virtual"})
    assert isinstance(driver, DrumDriver)
    assert driver.channel == "vcan0"
    assert DrumDriver("d", None, {}).channel == "can0"
    assert DrumDriver("d", "can1", {"channel": "can1"}).channel == "can1"


@pytest.mark.parametrize(
    ("port", "options", "message"),
    [
        ("can0", {"channel": "can1"}, "disagree"),
        (None, {"interface": "no-such-bus"}, "unknown CAN interface"),
        (None, {"balls": 101}, "largest ball number"),
        (None, {"balls": 101, "first_ball": 0}, None),
        (None, {"readers": 9}, "readers"),
        (None, {"node_id": 0}, "node_id"),
        (None, {"heartbeat_timeout": 2, "relink_after": 1}, "relink_after"),
        (None, {"bogus": 1}, "bogus"),
    ],
)
def test_settings_are_checked(
    port: str | None, options: dict[str, Any], message: str | None
) -> None:
    if message is None:
        assert DrumDriver("d", port, options).settings.balls == options["balls"]
        return
    with pytest.raises(DriverInitError, match=message):
        DrumDriver("d", port, options)


def test_settings_defaults() -> None:
    s = DrumSettings()
    assert (s.interface, s.channel, s.heartbeat_timeout, s.node_id) == (
        "socketcan",
        None,
        1.0,
        0x10,
    )
