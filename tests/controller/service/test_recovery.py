"""Restart recovery: power records, and whether an interrupted round resumes or is voided.

The policy (:mod:`tablectl.controller.service.recovery`) is pure and tested directly; the runner
tests check that it is wired: ``power_on``/``power_off`` in the journal, the void journaled before
the device event that caused it, catch-up milestones of a resumed round not journaled twice. Real
processes (kill -9, a wheel on a pty) are in ``tests/fault``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    BallLaunched,
    BetsClosed,
    Card,
    Fault,
    RoundOpen,
    TableEvent,
    WinningNumber,
)
from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.recovery import (
    CONTROLLER_RESTART,
    GATE_MACHINE,
    GateAnswer,
    Interrupted,
    JournalScan,
    RestartGate,
)
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers import events as dev
from tablectl.drivers.base import Driver
from tests.support.clocks import WallClock
from tests.support.records import journaled
from tests.support.waiting import wait_until

TS = "2026-11-30T10:00:00.000000Z"
T0 = 1_796_032_800.0  # TS as epoch seconds


# --- the pure policy ---------------------------------------------------------------------------


def _wheel_round(spin: int | None, phase: str = "closed") -> Interrupted:
    return Interrupted(round="T1-000002", game="roulette", phase=phase, spin=spin, outage=1.0)


def test_scan_tells_a_clean_stop_from_an_unclean_one() -> None:
    scan = JournalScan()
    assert scan.previous == "none"
    scan.record(journaled({"type": "round_open", "ts": TS}), "T1-000001")
    assert scan.previous == "unclean"
    scan.record(journaled({"type": "power_off", "ts": TS}), "T1-000001")
    assert scan.previous == "power_off"
    assert scan.newest_ts == TS


def test_scan_keeps_the_newest_time_as_written_and_skips_what_is_no_time() -> None:
    scan = JournalScan()
    scan.record(journaled({"type": "round_open", "ts": TS}), "T1-000001")
    scan.record(journaled({"type": "bets_closed", "ts": "not a time"}), "T1-000001")
    assert scan.newest_ts == TS  # the newest readable one
    scan.record(journaled({"type": "bets_closed", "ts": "2026-11-30T11:00:02+01:00"}), None)
    assert scan.newest_ts == "2026-11-30T11:00:02+01:00"
    found = Interrupted.of({"round": "T-000001", "phase": "open"}, "lucky7", scan, T0 + 5)
    assert found is not None
    assert found.outage == 3.0


def test_scan_keeps_the_spin_of_the_round_in_play_only() -> None:
    scan = JournalScan()
    scan.record(journaled({"type": "round_open", "ts": TS}), "T1-000001")
    scan.record(journaled({"type": "ball_launched", "ts": TS, "spin": 7}), "T1-000001")
    assert scan.spin == 7
    scan.record(journaled({"type": "outcome", "ts": TS}), None)
    scan.record(journaled({"type": "round_open", "ts": TS}), "T1-000002")
    assert scan.spin is None  # a new round: its spin is not known yet
    scan.record(
        journaled({"type": "round_resumed", "ts": TS, "round": "T1-000001", "spin": 9}), "T1-000002"
    )
    assert scan.spin is None  # another round's confirmation


def test_same_spin_resumes_and_drops_the_catch_up_milestones_the_round_has() -> None:
    gate = RestartGate(_wheel_round(7), devices=["wheel"], now=T0)
    assert gate.at_start() is None
    first = gate.on_event(RoundOpen(device="wheel"), 7, T0)
    assert (first.decision, first.forward) == ("resume", False)
    assert first.detail["spin"] == 7
    assert gate.on_event(BallLaunched(device="wheel", spin=7), 7, T0).forward
    assert not gate.on_event(BetsClosed(device="wheel"), 7, T0).forward  # already closed
    settled = gate.on_event(WinningNumber(device="wheel", number=3, spin=7), 7, T0)
    assert (settled.decision, settled.forward) == (None, True)
    assert not gate.active


def test_a_round_still_betting_takes_the_wheels_bets_closed() -> None:
    gate = RestartGate(_wheel_round(7, phase="open"), devices=["wheel"], now=T0)
    assert gate.on_event(RoundOpen(device="wheel"), 7, T0).decision == "resume"
    assert gate.on_event(BetsClosed(device="wheel"), 7, T0).forward
    assert not gate.on_event(BetsClosed(device="wheel"), 7, T0).forward


@pytest.mark.parametrize(
    ("known", "shown"),
    [pytest.param(7, 8, id="another-spin"), pytest.param(None, 7, id="spin-never-journaled")],
)
def test_another_or_unknown_spin_voids(known: int | None, shown: int) -> None:
    gate = RestartGate(_wheel_round(known), devices=["wheel"], now=T0)
    answer = gate.on_event(RoundOpen(device="wheel"), shown, T0)
    assert (answer.decision, answer.forward) == ("void", True)
    assert not gate.active


def test_reports_without_a_spin_decide_nothing_and_the_window_ends_it() -> None:
    gate = RestartGate(_wheel_round(7), devices=["wheel"], now=T0, window=5.0)
    assert gate.on_event(RoundOpen(device="wheel"), None, T0 + 1) == GateAnswer()
    assert gate.expire(T0 + 4.9) is None
    answer = gate.expire(T0 + 5.0)
    assert answer is not None
    assert answer.decision == "void"
    assert gate.expire(T0 + 6.0) is None  # once


def test_nothing_in_play_means_nothing_to_decide() -> None:
    gate = RestartGate(None, devices=["wheel"], now=T0)
    assert not gate.active
    assert gate.at_start() is None
    assert gate.expire(T0 + 100) is None


def _coup(phase: str, outage: float | None = 1.0) -> Interrupted:
    return Interrupted(round="B-000004", game="baccarat", phase=phase, spin=None, outage=outage)


@pytest.mark.parametrize(
    ("phase", "outage", "devices", "decision"),
    [
        pytest.param("dealing", 30.0, ["shoe"], "void", id="long-outage-mid-deal"),
        pytest.param("dealing", None, ["shoe"], "void", id="unknown-outage-mid-deal"),
        pytest.param("pending_decision", 30.0, ["shoe"], "resume", id="supervisor-decides"),
        pytest.param("open", 1.0, [], "resume", id="no-device-to-wait-for"),
        pytest.param("dealing", 1.0, ["shoe"], None, id="short-outage-waits-for-the-shoe"),
    ],
)
def test_card_tables_decide_at_start_when_no_device_can_change_the_answer(
    phase: str, outage: float | None, devices: list[str], decision: str | None
) -> None:
    answer = RestartGate(_coup(phase, outage), devices=devices, now=T0).at_start()
    assert (answer.decision if answer else None) == decision


@pytest.mark.parametrize(
    ("game", "phase", "in_play"),
    [
        ("roulette", "closed", True),
        ("baccarat", "dealing", True),
        ("sic_bo", "open", True),
        ("craps", "closed", True),
        ("lightning_dice", "rolling", True),
        ("dice_duel", "held", True),
        ("sic_bo", "idle", False),
        ("dream_catcher", "open", True),
        ("dream_catcher", "spinning", False),
        ("lucky7", "open", True),
        ("no_such_game", "open", False),
    ],
)
def test_which_phases_are_in_play_follows_the_engine_family(
    game: str, phase: str, in_play: bool
) -> None:
    scan = JournalScan(newest_ts=format_ts(T0 - 2))
    found = Interrupted.of({"round": "T-000001", "phase": phase}, game, scan, T0)
    assert (found is not None) is in_play
    if found is not None:
        assert (found.phase, found.outage) == (phase, 2.0)


@pytest.mark.parametrize(
    ("phase", "outage", "decision"),
    [
        pytest.param("rolling", 30.0, "void", id="long-outage-mid-roll"),
        pytest.param("closed", None, "void", id="unknown-outage-after-bets-closed"),
        pytest.param("held", 30.0, "resume", id="held-stays-with-the-supervisor"),
        pytest.param("rolling", 1.0, None, id="short-outage-waits-for-the-reader"),
        pytest.param("open", 30.0, None, id="still-betting-waits-for-the-reader"),
    ],
)
def test_dice_tables_are_gated_like_card_tables(
    phase: str, outage: float | None, decision: str | None
) -> None:
    round_ = Interrupted(round="SB-000009", game="sic_bo", phase=phase, spin=None, outage=outage)
    gate = RestartGate(round_, devices=["dice"], now=T0)
    answer = gate.at_start()
    assert (answer.decision if answer else None) == decision
    if answer is None:
        assert gate.device_available("dice") == GateAnswer(
            "resume", True, {"confirmed_by": ["dice"], "outage": outage, "phase": phase}
        )


def test_card_table_resumes_once_every_device_is_back() -> None:
    gate = RestartGate(_coup("dealing"), devices=["shoe", "shuffler"], now=T0)
    assert gate.at_start() is None
    unavailable = gate.on_event(Fault(device="shoe", code="device_unavailable"), None, T0)
    assert unavailable.decision is None
    assert gate.device_available("shoe") is None
    answer = gate.on_event(Card(device="shuffler", card="KH"), None, T0)
    assert answer.decision == "resume"
    assert answer.forward
    assert not gate.active


# --- wired into the runner ---------------------------------------------------------------------


class _ScriptedWheel(Driver):
    """A driver that yields the given device events, then waits (until closed)."""

    def __init__(self, script: Sequence[dev.DeviceEvent]) -> None:
        super().__init__("wheel", None)
        self.script = list(script)
        self.exhausted = False
        """Every event of the script was taken (the runner asked for the one after the last)."""

    async def events(self) -> AsyncIterator[dev.DeviceEvent]:
        for event in self.script:
            await asyncio.sleep(0.01)  # pacing, as a device's events come (nothing waits on it)
            yield event
        self.exhausted = True
        await asyncio.Event().wait()

    async def send_raw(self, data: bytes) -> None:
        del data


def _runner(journal: Journal, drivers: Sequence[Driver] = (), **kwargs: Any) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        drivers=drivers,
        clock=WallClock(lambda: T0 + 2),
        **kwargs,
    )


def _mid_spin(journal: Journal, spin: int) -> None:
    """A first run that settles round 1 and dies (no power_off) with round 2's ball in play."""
    runner = _runner(journal)
    runner.restart.recover()
    runner.restart.power_on()
    events: list[TableEvent] = [
        RoundOpen(ts=TS, device="wheel"),
        BallLaunched(ts=TS, device="wheel", spin=spin - 1, rotor_direction="cw"),
        BetsClosed(ts=TS, device="wheel"),
        WinningNumber(ts=TS, device="wheel", number=5, spin=spin - 1),
        RoundOpen(ts=TS, device="wheel"),
        BallLaunched(ts=TS, device="wheel", spin=spin, rotor_direction="cw"),
        BetsClosed(ts=TS, device="wheel"),
    ]
    for event in events:
        runner.committer.handle(event)


def _types(journal: Journal) -> list[str]:
    return [r["type"] for r in journal.records()]


def test_power_on_and_off_are_journaled_and_say_how_the_last_run_ended(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        first = runner.restart.power_on()
        assert (first["previous"], first["interrupted"]) == ("none", None)
        runner.restart.power_off("shutdown")
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        assert runner.restart.power_on()["previous"] == "power_off"
        # no power_off: the next start sees an unclean stop
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        assert runner.restart.power_on()["previous"] == "unclean"
        assert _types(journal) == ["power_on", "power_off", "power_on", "power_on"]
        journal.verify()


async def _run_until(runner: TableRunner, done: Callable[[], object], what: str) -> None:
    """Run ``runner`` until ``done()`` holds (with a deadline), then stop it."""
    task = asyncio.create_task(runner.run())
    try:
        await wait_until(lambda: done() or task.done(), what=what)
        if task.done():
            task.result()  # ended by itself: its error, if any
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)


def _wheel(spin: int, state: int) -> list[dev.DeviceEvent]:
    """What a fresh SS2 interpreter reports for the first status it sees (its catch-up)."""
    out: list[dev.DeviceEvent] = [
        dev.DeviceAvailable(device="wheel", at=T0 + 2),
        dev.WheelReady(device="wheel", at=T0 + 2, spin=spin),
    ]
    if state >= 3:
        out.append(dev.BallLaunched(device="wheel", at=T0 + 2, spin=spin, rotor_direction="cw"))
    if state >= 4:
        out.append(dev.NoMoreBets(device="wheel", at=T0 + 2, spin=spin))
    return out


async def test_wheel_confirming_the_spin_resumes_the_round(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        _mid_spin(journal, spin=42)
    settle = dev.WheelSettled(device="wheel", at=T0 + 3, number=17, spin=42, revolutions=None)
    wheel = _ScriptedWheel([*_wheel(42, state=4), settle])
    with Journal(path, "T1") as journal:
        runner = _runner(journal, [wheel])
        runner.restart.recover()
        on = runner.restart.power_on()
        assert on["previous"] == "unclean"
        assert on["interrupted"]["round"] == "T1-000002"
        assert on["interrupted"]["spin"] == 42
        await _run_until(
            runner,
            lambda: wheel.exhausted and _types(journal)[-1] == "outcome",
            "the script played and an outcome journaled",
        )
        tail = list(journal.records())[-5:]
        # round_open and bets_closed of the catch-up are not journaled again; the launch is (the
        # rotor direction it carries was measured again).
        assert [r["type"] for r in tail] == [
            "power_on",
            "round_resumed",
            "ball_launched",
            "winning_number",
            "outcome",
        ]
        assert tail[1]["spin"] == 42
        assert (tail[4]["round"], tail[4]["status"], tail[4]["result"]["number"]) == (
            "T1-000002",
            "settled",
            17,
        )
        assert not any(r["type"] == "verdict" for r in tail)
        journal.verify()


async def test_wheel_on_another_spin_voids_the_round_before_opening_the_next(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        _mid_spin(journal, spin=42)
    with Journal(path, "T1") as journal:
        wheel = _ScriptedWheel(_wheel(43, state=2))
        runner = _runner(journal, [wheel])
        runner.restart.recover()
        runner.restart.power_on()
        await _run_until(
            runner,
            lambda: wheel.exhausted and _types(journal)[-1] == "round_open",
            "the script played and the next round opened",
        )
        records = list(journal.records())
        start = _types(journal).index("power_on", 1)
        # One commit: each event followed by its conclusions (the void's outcome).
        assert [r["type"] for r in records[start:]] == ["power_on", "void", "outcome", "round_open"]
        void, outcome = records[start + 1], records[start + 2]
        assert (void["reason"], void["by"]) == (CONTROLLER_RESTART, "controller")
        assert (outcome["round"], outcome["status"], outcome["reason"]) == (
            "T1-000002",
            "void",
            CONTROLLER_RESTART,
        )
        assert runner.engine.current_round == "T1-000003"


async def test_no_confirmation_within_the_window_voids(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        _mid_spin(journal, spin=42)
    clock = [T0 + 2]
    with Journal(path, "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            drivers=[_ScriptedWheel([])],
            clock=WallClock(lambda: clock[0]),
            restart_window=5.0,
        )
        runner.restart.recover()
        runner.restart.power_on()
        task = asyncio.create_task(runner.run())
        try:
            # Stays: an absence check (nothing voids while the window is open); a slow machine
            # only makes it check less, never fail.
            await asyncio.sleep(0.05)
            assert runner.engine.current_round == "T1-000002"
            clock[0] += 5.0
            await wait_until(
                lambda: _types(journal)[-1] == "outcome" or task.done(),
                what="the void once the window passed",
            )
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        outcome = list(journal.records())[-1]
        assert (outcome["type"], outcome["status"], outcome["reason"]) == (
            "outcome",
            "void",
            CONTROLLER_RESTART,
        )


def test_a_coup_interrupted_by_a_long_outage_is_voided_at_start(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    engine_args = ("B1", "baccarat", {"decks": 8})
    with Journal(path, "B1") as journal:
        runner = TableRunner(
            table_id="B1",
            engine=build_engine(*engine_args, source="test"),
            journal=journal,
            clock=WallClock(lambda: T0),
        )
        for event in (
            RoundOpen(ts=TS),
            BetsClosed(ts=TS),
            Card(ts=TS, device="shoe", card="KH"),
        ):
            runner.committer.handle(event)
        assert runner.engine.snapshot()["phase"] == "dealing"

    class _Shoe(_ScriptedWheel):
        pass

    with Journal(path, "B1") as journal:
        runner = TableRunner(
            table_id="B1",
            engine=build_engine(*engine_args, source="test"),
            journal=journal,
            drivers=[_Shoe([])],
            clock=WallClock(lambda: T0 + 60),  # a minute later
        )
        runner.restart.recover()
        runner.restart.power_on()
        outcome = list(journal.records())[-1]
        assert (outcome["type"], outcome["status"], outcome["reason"]) == (
            "outcome",
            "void",
            CONTROLLER_RESTART,
        )


def test_the_restart_gate_is_a_validated_machine() -> None:
    # Checked at import like the engines' machines: `done` is final, nothing leaves it.
    assert GATE_MACHINE.states == ("pending", "resumed", "done")
    assert GATE_MACHINE.final == frozenset({"done"})
    assert GATE_MACHINE.allowed("done") == frozenset()
    nothing = RestartGate(None, devices=["wheel"], now=0.0)
    assert (nothing.state, nothing.active) == ("done", False)
    nothing.round_ended()  # standing down when there is nothing to decide is harmless
    wheel = Interrupted("T-000001", "roulette", "closed", 7, 1.0)
    gate = RestartGate(wheel, devices=["wheel"], now=0.0)
    assert gate.pending
    void = gate.expire(now=1e9)
    assert void is not None
    assert void.decision == "void"
    assert gate.state == "done"
    assert gate.expire(now=2e9) is None  # decided once
    with pytest.raises(TransitionNotAllowedError):
        gate._machine.fire("confirmed")
