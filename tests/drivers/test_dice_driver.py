"""The real dice driver against the real simulator, over a pty pair and over ``socket://``.

No mocks: the driver opens the port with pyserial as it would open ``/dev/ttyUSB0``, the
simulator model speaks through the production codec, and :mod:`tablectl.simulators.serve` moves
the bytes (the model's cycle time-lapsed with ``speed``).

Nothing here sleeps to let time pass, and nothing asserts how much happened within some time. The
driver's loop runs on a :class:`~tablectl.drivers.clock.ManualClock`: it polls, times out and
retries only when a test moves that clock, so a test decides exactly when the driver's timers
fire. Everything else is waited for as a condition (:func:`tests.support.waiting.wait_until`):
the simulator's own cycle produces the frames, and the test waits until their events arrive. The
deadlines of those waits only bound a failing test.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tablectl.drivers.clock import ManualClock
from tablectl.drivers.dice.driver import DiceDriver, DiceSettings
from tablectl.drivers.dice.protocol import Ack, Identity, Nak, Status, TestReport
from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.events import (
    BettingOpened,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    DiceRead,
    DiceRollInvalid,
    DiceRollStarted,
    NoMoreBets,
)
from tablectl.drivers.registry import get_driver_class
from tablectl.simulators.dice import FaultSpec, SimDice
from tablectl.simulators.serve import serve_pty, serve_tcp
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(20)

E = TypeVar("E", bound=DeviceEvent)

QUICK = {
    "speed": 20.0,
    "betting_seconds": None,
    "roll_delay": 0.5,
    "shake_seconds": 1.0,
    "settle_seconds": 0.5,
    "result_seconds": 1.0,
}
"""Betting stays open until the host closes it (so a game's roll never happens before the driver
is there to see it); then a roll of ~2 device seconds, ~0.1 s of real time."""
OPTIONS = {
    "poll_interval": 0.5,
    "silence_timeout": 2.0,
    "reconnect_min_delay": 0.1,
    "reconnect_max_delay": 0.2,
}


class Host:
    """Runs ``driver.events()`` in a task; the test waits for the events it expects, in order."""

    def __init__(self, driver: DiceDriver) -> None:
        self.driver = driver
        self.clock = driver.clock
        self.events: list[DeviceEvent] = []
        self._next = 0
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.events.append(event)

    async def expect(self, kind: type[E], *, what: str = "") -> E:
        """The next event of ``kind`` after the last one expected (others are skipped)."""
        found: list[int] = []

        def arrived() -> bool:
            found[:] = [
                i for i in range(self._next, len(self.events)) if isinstance(self.events[i], kind)
            ][:1]
            return bool(found)

        await wait_until(arrived, timeout=10, what=what or f"a {kind.__name__}")
        self._next = found[0] + 1
        event = self.events[found[0]]
        assert isinstance(event, kind)
        return event

    def since_start(self, kind: type[DeviceEvent]) -> list[DeviceEvent]:
        return [e for e in self.events if isinstance(e, kind)]

    async def close(self) -> None:
        await self.driver.aclose()
        await wait_until(self.task.done, what="the driver's loop to end")
        await self.task


@contextlib.asynccontextmanager
async def served(
    model: SimDice, *, tcp: bool = False, link: Path | None = None
) -> AsyncIterator[str]:
    """``model`` on a pty (or TCP), as ``tablectl simulate dice`` serves it; yields the port."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    if tcp:
        server = asyncio.create_task(serve_tcp(model, "127.0.0.1", 0, on_ready=ready.set_result))
    else:
        server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    try:
        where = await ready
        yield f"socket://{where}" if tcp else str(link or where)
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


@contextlib.asynccontextmanager
async def dice(
    *faults: str, tcp: bool = False, link: Path | None = None, host: Any = None, **sim: Any
) -> AsyncIterator[tuple[SimDice, Host]]:
    """A simulated unit and the real driver on it, on a manual clock."""
    model = SimDice(faults=[FaultSpec.from_spec(f) for f in faults], **{**QUICK, **sim})
    async with served(model, tcp=tcp, link=link) as port:
        driver = DiceDriver("dice-1", port, {**OPTIONS, **(host or {})}, clock=ManualClock())
        running = Host(driver)
        try:
            yield model, running
        finally:
            await running.close()


async def open_game(host: Host) -> None:
    """Connected, betting open: close it (the unit then rolls by itself)."""
    await host.expect(DeviceAvailable)
    await host.expect(BettingOpened)
    assert await host.driver.close_betting() == Ack("CLOS")


async def advance_until(host: Host, condition: Callable[[], bool], what: str) -> None:
    """Move the driver's clock one waiting timer at a time until ``condition`` holds (backoff
    pauses, polls): each step waits until the driver is parked on the clock, so nothing races."""
    clock = host.clock
    assert isinstance(clock, ManualClock)
    for _ in range(200):
        if condition():
            return
        await wait_until(lambda: condition() or bool(clock.pending), what=f"{what} (a timer)")
        if not condition():
            clock.advance_to_next()
    raise AssertionError(f"never: {what}")


# --- a normal game, over a pty and over TCP ------------------------------------------------------


@pytest.mark.parametrize("tcp", [False, True], ids=["pty", "socket"])
async def test_a_game_from_betting_to_the_dice(tcp: bool) -> None:
    sim: dict[str, Any] = {"seed": 7, "dice": 2, "colors": ["red", "blue"], "faces": [(5, 2)] * 3}
    async with dice(tcp=tcp, host={"dice": 2, "colors": ["red", "blue"]}, **sim) as (model, host):
        up = await host.expect(DeviceAvailable)
        assert up.detail == "TDS-1 firmware 1.0.0 serial SIM00007, 2 dice (red,blue)"
        await host.expect(BettingOpened)
        assert await host.driver.close_betting() == Ack("CLOS")
        await host.expect(NoMoreBets)
        await host.expect(DiceRollStarted)
        read = await host.expect(DiceRead)
        assert (read.dice, read.colors, read.reader) == ((5, 2), ("red", "blue"), "CAM1")
        assert read.confidence is not None
        assert 0.9 <= read.confidence <= 1.0
        assert (await host.expect(BettingOpened)).device == "dice-1"  # the next game
        assert host.driver.counters.get("decode_errors", 0) == 0
        assert model.results[0].faces == (5, 2)


async def test_identify_status_and_self_test_requests() -> None:
    async with dice(seed=42) as (_, host):
        await host.expect(DeviceAvailable)
        assert await host.driver.identify() == Identity("TDS-1", "1.0.0", "SIM00042", 3)
        assert await host.driver.query_status() == Status("ready", 1, 0)
        report = await host.driver.self_test()
        assert isinstance(report, TestReport)
        assert report.passed
        assert host.driver.interpreter.last_test == report


async def test_the_host_closes_betting_and_rolls() -> None:
    async with dice(roll_delay=None) as (_, host):
        await host.expect(BettingOpened)
        assert await host.driver.roll() == Nak("ROLL", "STATE")
        assert await host.driver.close_betting() == Ack("CLOS")
        await host.expect(NoMoreBets)
        assert await host.driver.self_test() == Nak("TEST", "STATE")
        assert await host.driver.roll() == Ack("ROLL")
        await host.expect(DiceRollStarted)
        await host.expect(DiceRead)


# --- roll faults ---------------------------------------------------------------------------------


async def test_a_cocked_die_then_the_re_roll() -> None:
    async with dice("cocked@1=2", faces=[(3, 3, 4)]) as (_, host):
        await open_game(host)
        await host.expect(DiceRollStarted)
        invalid = await host.expect(DiceRollInvalid)
        assert (invalid.code, invalid.detail) == ("die_cocked", "die 2")
        await host.expect(DiceRollStarted, what="the re-roll")
        assert (await host.expect(DiceRead)).dice == (3, 3, 4)
        await host.expect(BettingOpened, what="the next game")
        assert len(host.since_start(BettingOpened)) == 2  # one game, two rolls
        assert len(host.since_start(NoMoreBets)) == 1


async def test_a_result_sent_twice_is_reported_once() -> None:
    async with dice("duplicate_result@1") as (_, host):
        await open_game(host)
        await host.expect(DiceRead)
        await wait_until(lambda: host.driver.counters.get("duplicate_results") == 1)
        await host.expect(BettingOpened, what="the next game")
        assert len(host.since_start(DiceRead)) == 1


async def test_garbage_split_frames_and_a_corrupted_result_cost_only_decode_errors() -> None:
    # The RSLT frame arrives with a bad checksum; the result stays on show (an hour) while the
    # test moves the driver's clock to its next poll: STAT shows RESULT for a roll without a
    # result, the driver asks LAST, and reports the repeated frame.
    faults = ("garbage@1", "split@1", "bad_checksum@1")
    async with dice(*faults, result_seconds=3600) as (model, host):
        await open_game(host)
        await host.expect(DiceRollStarted)
        await wait_until(lambda: model.state == "result", what="the corrupted result")
        await wait_until(lambda: host.driver.counters.get("decode_errors") == 3)
        assert not host.since_start(DiceRead)
        await advance_until(host, lambda: bool(host.since_start(DiceRead)), "the repeated result")
        assert (await host.expect(DiceRead)).dice == model.results[0].faces


async def test_a_motion_fault_is_raised_cleared_and_the_roll_repeated() -> None:
    async with dice("motion_fault@1=3600") as (model, host):
        await open_game(host)
        await host.expect(DiceRollStarted)
        raised = await host.expect(DeviceFaultRaised)
        assert raised.code == "dice_motion_fault"
        assert await host.driver.roll() == Nak("ROLL", "FAULT")
        assert await host.driver.clear_fault(1) == Ack("CLRF")
        assert (await host.expect(DeviceFaultCleared)).code == "dice_motion_fault"
        await host.expect(DiceRollStarted, what="the re-roll")
        await host.expect(DiceRead)
        assert [(r.roll, r.faces is not None) for r in model.results] == [(2, True)]
        assert host.driver.interpreter.active_faults == frozenset()


async def test_a_silent_reader_makes_the_unit_unavailable() -> None:
    async with dice("silence@1=3600") as (model, host):
        await open_game(host)
        await host.expect(DiceRollStarted)  # the unit hangs right after saying ROLL
        # No frame can come now; the silence timeout passes on the driver's clock, not ours.
        await advance_until(
            host, lambda: bool(host.since_start(DeviceUnavailable)), "the silence verdict"
        )
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "silent"
        assert math.isclose(down.at, 2.0)  # silence_timeout on the driver's clock, exactly
        assert not host.driver.available
        # The polls went on (one every 0.5 s of the driver's clock), unanswered.
        await wait_until(lambda: model.ignored_commands >= 1, what="the unanswered polls")


async def test_unplugged_at_the_roll_then_back(tmp_path: Path) -> None:
    # The cable is pulled as the roll starts (its ROLL frame may be lost with the pty) and is back
    # 1 device second later; the result shows for an hour, so whether the driver is back before
    # the read or after it, it reports the roll and its result once each: from the status and
    # live, or from the status and asked for with LAST.
    link = tmp_path / "dice"
    async with dice("disconnect@1=1", link=link, result_seconds=3600) as (model, host):
        await open_game(host)
        down = await host.expect(DeviceUnavailable)
        assert down.reason == "disconnected"
        # Reconnect attempts wait on the driver's clock: move it until the port is back.
        await advance_until(host, lambda: host.driver.available, "the reconnect")
        await host.expect(DeviceAvailable)
        read = await host.expect(DiceRead)
        assert read.dice == model.results[0].faces
        assert len(host.since_start(DiceRollStarted)) == 1
        assert len(host.since_start(BettingOpened)) == 1


# --- settings, registry --------------------------------------------------------------------------


def test_registry_entry_loads_this_driver() -> None:
    assert get_driver_class("tablectl-dice") is DiceDriver


@pytest.mark.parametrize(
    ("port", "options", "message"),
    [
        (None, {}, "needs a serial port"),
        ("/dev/null", {"baudrate": 4800}, "baudrate"),
        ("/dev/null", {"dice": 0}, "dice"),
        ("/dev/null", {"dice": 7}, "dice"),
        ("/dev/null", {"dice": 2, "colors": ["red"]}, "1 colours for 2 dice"),
        ("/dev/null", {"dice": 2, "colors": ["red", "red"]}, "its own colour"),
        ("/dev/null", {"dice": 2, "colors": ["Red", "blue"]}, "lower-case"),
        ("/dev/null", {"poll_interval": 2, "silence_timeout": 2}, "must exceed poll_interval"),
        ("/dev/null", {"colour": "red"}, "colour"),
    ],
)
def test_settings_are_strict(port: str | None, options: dict[str, Any], message: str) -> None:
    with pytest.raises(DriverInitError, match=message):
        DiceDriver("d", port, options)


def test_settings_defaults() -> None:
    settings = DiceSettings()
    assert (settings.baudrate, settings.dice, settings.colors) == (9600, 3, None)
    assert (settings.poll_interval, settings.silence_timeout) == (1.0, 3.0)


async def test_requests_need_a_connection() -> None:
    driver = DiceDriver("d", "/dev/null", OPTIONS)
    with pytest.raises(TransportClosedError):
        await driver.close_betting()
    with pytest.raises(TransportClosedError):
        await driver.self_test()
    with pytest.raises(ValueError, match="fault code"):
        await driver.clear_fault(100)
