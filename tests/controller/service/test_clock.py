"""The wall clock, watched (tablectl.controller.service.clock), and what a step changes.

Readings are injected (a wall clock and a boot clock the test moves), the journals and engines
are real. The end-to-end case under libfaketime, with ``tablectl run`` processes, is
tests/integration/test_clock_step.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tablectl.controller.core.events import RoundOpen
from tablectl.controller.core.time import format_ts, parse_ts
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.journal.files import list_archives
from tablectl.controller.journal.retention import trusted_age
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.service.clock import (
    CLOCK_CONFIRMED,
    CLOCK_STEP,
    ClockReading,
    ClockWatch,
)
from tablectl.controller.service.runner import TableRunner
from tests.support.clocks import WallClock
from tests.support.events import roulette_spin
from tests.support.waiting import wait_until

DAY = 86_400.0
START = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC).timestamp()
KEY = b"s" * 32
REQUIRED = {
    "void": frozenset({"supervisor"}),
    "event": frozenset({"supervisor"}),
    "clear_fault": frozenset({"supervisor"}),
    "clock_confirm": frozenset({"supervisor"}),
}


@dataclass
class Clocks:
    """A machine's clocks: ``boot`` runs as time passes, ``wall`` too unless someone steps it."""

    wall: float = START
    boot: float = 1_000.0
    boot_id: str = "boot-1"
    calls: list[float] = field(default_factory=list)

    def read(self) -> ClockReading:
        return ClockReading(wall=self.wall, boot=self.boot, boot_id=self.boot_id)

    def now(self) -> float:
        return self.wall

    def pass_(self, seconds: float) -> None:
        self.wall += seconds
        self.boot += seconds

    def step(self, seconds: float) -> None:
        self.wall += seconds

    def reboot(self, down: float) -> None:
        self.wall += down
        self.boot = 10.0
        self.boot_id = self.boot_id + "+"


def _runner(journal: Journal, clocks: Clocks, **extra: Any) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=WallClock(clocks.now),
        clock_watch=ClockWatch(max_step=120, read=clocks.read),
        **extra,
    )


def _start(path: Path, clocks: Clocks, **extra: Any) -> tuple[Journal, TableRunner]:
    journal = Journal(path, "T1", rotate_days=1, retention_days=90)
    runner = _runner(journal, clocks, **extra)
    runner.restart.recover()
    runner.restart.power_on()
    return journal, runner


def _types(journal: Journal) -> list[str]:
    return [r.type for r in journal.records()]


# --- the watch alone -----------------------------------------------------------------------------


def test_time_passing_is_no_step_and_a_step_beyond_the_bound_is() -> None:
    clocks = Clocks()
    watch = ClockWatch(max_step=120, read=clocks.read)
    assert watch.at_start(None) is None
    clocks.pass_(3 * DAY)
    clocks.step(100)  # within the bound: NTP's business
    assert watch.check() is None
    clocks.step(100 * DAY)
    record = watch.check()
    assert record is not None
    assert (record["type"], record["detected"], record["suspect"]) == (CLOCK_STEP, "running", True)
    assert record["step_s"] == 100 * DAY + 100
    assert record["after"] == format_ts(clocks.wall)
    assert record["before"] == format_ts(START + 3 * DAY)
    assert watch.suspect is not None
    assert watch.discount_s == 100 * DAY + 100
    assert watch.steps == 1
    assert watch.check() is None  # the new course, once journaled, is not a step again


def test_a_clock_that_returns_ends_the_suspicion_and_gives_its_discount_back() -> None:
    clocks = Clocks()
    watch = ClockWatch(max_step=120, read=clocks.read)
    watch.at_start(None)
    clocks.pass_(60)
    clocks.step(-30 * DAY)
    stepped = watch.check()
    assert stepped is not None
    assert stepped["step_s"] == -30 * DAY
    clocks.pass_(60)
    clocks.step(30 * DAY)  # someone fixes it
    back = watch.check()
    assert back is not None
    assert (back["detected"], back["suspect"]) == ("returned", False)
    assert watch.suspect is None
    assert abs(watch.discount_s) < 1e-6


def test_without_a_reading_of_this_boot_a_gap_forward_is_unverified_not_a_step() -> None:
    """A journal of an earlier version (no readings) or a restart after a reboot: nobody vouches
    for the time since the newest record, so retention does not count it (the discount)."""
    clocks = Clocks()
    clocks.reboot(600)
    clocks.step(100 * DAY)
    watch = ClockWatch(max_step=120, read=clocks.read)
    assert watch.at_start(START) is None
    assert watch.discount_s == 100 * DAY + 600
    assert watch.suspect is None


def test_after_a_reboot_a_clock_behind_the_journal_is_a_step() -> None:
    clocks = Clocks()
    watch = ClockWatch(max_step=120, read=clocks.read)
    clocks.reboot(-30 * DAY)
    record = watch.at_start(START)
    assert record is not None
    assert record["step_s"] == -30 * DAY
    assert record["before"] == format_ts(START)


def test_trusted_age_never_exceeds_the_wall_age() -> None:
    wall = timedelta(days=102)
    assert trusted_age(wall, 100 * DAY) == timedelta(days=2)
    assert trusted_age(wall, -30 * DAY) == wall  # a step back makes nothing older
    assert trusted_age(wall, 0) == wall


# --- the table --------------------------------------------------------------------------------


def test_the_power_records_carry_a_reading_and_a_step_between_runs_is_journaled_first(
    tmp_path: Path,
) -> None:
    clocks = Clocks()
    path = tmp_path / "T1.sqlite"
    journal, runner = _start(path, clocks)
    runner.restart.power_off("shutdown")
    journal.close()
    [power_on] = [r for r in Journal(path, "T1").records() if r.type == "power_on"]
    assert power_on["clock"]["boot_id"] == "boot-1"
    assert power_on["clock"]["discount_s"] == 0

    clocks.pass_(60)
    clocks.step(100 * DAY)
    journal, runner = _start(path, clocks)
    types = _types(journal)
    assert types[-2:] == [CLOCK_STEP, "power_on"]
    step = journal.last_record_of_type(CLOCK_STEP)
    assert step is not None
    assert (step["detected"], step["step_s"]) == ("start", 100 * DAY)
    assert parse_ts(step["before"]) == datetime.fromtimestamp(START + 60, UTC)
    assert journal.retention_hold is not None
    assert runner.views.clock_suspect() is not None
    journal.close()

    # The second start at +100 d: consistent with the last reading, but still not confirmed.
    clocks.pass_(60)
    journal, runner = _start(path, clocks)
    assert _types(journal).count(CLOCK_STEP) == 1
    assert journal.retention_hold is not None
    journal.close()


def test_a_step_while_running_is_journaled_alarmed_and_shown(tmp_path: Path) -> None:
    clocks = Clocks()

    async def play() -> None:
        journal, runner = _start(tmp_path / "T1.sqlite", clocks)
        alarms: list[str] = []
        runner.listeners.append(lambda r: alarms.append(r.type))
        task = asyncio.create_task(runner.run())
        try:
            await runner.step(roulette_spin(7, ts=format_ts(clocks.wall)))
            clocks.pass_(1)
            clocks.step(-2 * DAY)
            await wait_until(lambda: CLOCK_STEP in alarms, 5.0, what="the clock-step alarm")
            state = runner.views.clock_suspect()
            assert state is not None
            assert "-172800.0 s" in state
            # Journal times: back only at the clock_step record.
            await runner.step(roulette_spin(8))
            times = [(r.type, r.ts) for r in journal.records()]
            for (_, earlier), (kind, later) in itertools.pairwise(times):
                assert later >= earlier or kind == CLOCK_STEP, (kind, earlier, later)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            journal.close()

    asyncio.run(play())


def test_timestamps_never_go_backwards_without_a_clock_step(tmp_path: Path) -> None:
    """A device's time taken before a command's (the restart gate's void stamped before the
    ``round_open`` it follows): the journal keeps its times in order."""
    clocks = Clocks()
    journal, runner = _start(tmp_path / "T1.sqlite", clocks)
    late = format_ts(clocks.wall + 5)
    early = format_ts(clocks.wall - 5)
    runner.committer.handle(RoundOpen(ts=late, device="wheel"))
    runner.committer.handle(RoundOpen(ts=early, device="wheel"))
    stamps = [r.ts for r in journal.records()]
    assert stamps == sorted(stamps)
    assert stamps[-1] == late
    journal.close()


def _signed(verb: str, payload: dict[str, Any], at: float, nonce: str) -> bytes:
    request = sign_command(
        payload,
        verb=verb,
        table="T1",
        role="supervisor",
        key=KEY,
        by="FM-0042",
        ts=datetime.fromtimestamp(at, UTC),
        nonce=nonce,
    )
    return json.dumps(request).encode()


def test_while_the_clock_is_suspect_commands_are_judged_by_nonce_and_a_supervisor_confirms(
    tmp_path: Path,
) -> None:
    clocks = Clocks()

    async def play() -> None:
        authority = CommandAuthority({"supervisor": KEY}, REQUIRED, table="T1")
        journal, runner = _start(tmp_path / "T1.sqlite", clocks, authority=authority)
        task = asyncio.create_task(runner.run())
        try:
            signer = clocks.wall  # the pit's clock stays right
            clocks.pass_(1)
            clocks.step(100 * DAY)
            await wait_until(
                lambda: runner.views.clock_suspect() is not None,
                5.0,
                what="the clock to be suspect",
            )
            runner.committer.handle(RoundOpen(device="wheel"))
            held = runner.engine.current_round
            # A dealer's card or a number: its time cannot be judged.
            reply = await runner.commands.command(
                "event",
                _signed("event", {"event": {"type": "bets_closed"}}, signer, "nonce-event-1"),
            )
            assert (reply["ok"], reply["code"]) == (False, "clock_suspect")
            assert "cannot be judged" in reply["error"]
            # A supervisor's void of the round in play: signature and nonce carry it.
            void = _signed("void", {"reason": "clock", "round": held}, signer, "nonce-void-1")
            reply = await runner.commands.command("void", void)
            assert reply["ok"], reply
            assert [o["reason"] for o in reply["outputs"]] == ["clock"]
            again = await runner.commands.command("void", void)
            assert again["error"] == "refused: replayed command: nonce already used"
            # Confirm the clock: retention resumes, commands are timed again.
            reply = await runner.commands.command(
                "clock_confirm", _signed("clock_confirm", {}, signer, "nonce-confirm-1")
            )
            assert reply["ok"], reply
            assert runner.views.clock_suspect() is None
            assert journal.retention_hold is None
            confirmed = journal.last_record_of_type(CLOCK_CONFIRMED)
            assert confirmed is not None
            assert confirmed["by"] == "FM-0042"
            reply = await runner.commands.command(
                "clock_confirm", _signed("clock_confirm", {}, clocks.wall, "nonce-confirm-2")
            )
            assert reply["code"] == "clock_trusted"
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            journal.close()

    asyncio.run(play())


def test_retention_keeps_files_younger_than_the_period_by_real_time_across_a_step(
    tmp_path: Path,
) -> None:
    """The issue's scenario in one process: runs at −3 d … 0, then +100 d twice. Before, the
    second +100 d start deleted every rotated file (at most 4 days old)."""
    clocks = Clocks(wall=START - 3 * DAY)
    path = tmp_path / "T1.sqlite"
    for offset in (-3, -2, -1, 0, 100, 100):
        clocks.wall = START + offset * DAY + (clocks.boot - 1_000.0)
        journal, runner = _start(path, clocks)
        journal.mark_published(journal.last_seq)  # the broker has it: the file may rotate
        runner.committer.handle(RoundOpen(device="wheel"))
        journal.mark_published(journal.last_seq)
        clocks.pass_(60)
        runner.restart.power_off("shutdown")
        journal.mark_published(journal.last_seq)
        journal.close()
        clocks.pass_(60)
    assert len(list_archives(path)) >= 4
    assert not path.with_name("T1.retired.jsonl").exists()
    # Confirmed: the clock is right now; the files are still days old, not 100.
    journal, runner = _start(path, clocks)
    runner.commands.confirm_clock(by="FM-0042", role="supervisor")
    assert journal.prune(datetime.fromtimestamp(clocks.wall, UTC)) == []
    assert len(list_archives(path)) >= 4
    # Without the steps' discount the same files are past retention (the guard can fail).
    late = datetime.fromtimestamp(clocks.wall, UTC) + timedelta(days=200)
    assert len(journal.prune(late)) >= 4
    journal.close()
