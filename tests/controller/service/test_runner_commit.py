"""The runner's commit: one transaction per batch, on the journal's own thread.

Real SQLite journals; the only stand-ins are journals that hold their writer thread at a
``threading.Event`` so a test can act while a commit is in flight.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import JournalWriteError
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Committed, Journal
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.service.runner.batch import Before
from tablectl.drivers.clock import ManualClock
from tests.support.events import roulette_spin

TS = "2026-11-30T10:00:00.000000Z"


class HeldJournal(Journal):
    """A journal whose appends on the writer thread wait for :attr:`release` (a slow disk)."""

    def __init__(self, path: Path, table_id: str) -> None:
        super().__init__(path, table_id)
        self.release = threading.Event()
        self.entered = threading.Event()
        self.appends: list[int] = []

    def commit(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        if threading.current_thread() is not threading.main_thread():
            self.entered.set()
            assert self.release.wait(10), "the test never released the commit"
        self.appends.append(len(records))
        return super().commit(records, after_seq=after_seq)


class Views:
    """The runner's outputs, recorded."""

    key: bytes | None = None

    def __init__(self) -> None:
        self.states: list[dict[str, Any]] = []
        self.handed: list[list[int]] = []

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        self.handed.append([seq for seq, _, _ in committed.rows])

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        if suffix == "state":
            self.states.append(dict(payload))

    def alarm(self, payload: Mapping[str, Any]) -> None:
        del payload

    def set_status(self, extra: Mapping[str, Any]) -> None:
        del extra


def _runner(journal: Journal, views: Views | None = None) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=ManualClock(1_764_496_800.0),
        outputs=views or Views(),
        insecure_commands=True,
    )


def _replayed(path: Path) -> dict[str, Any]:
    """The engine state a restart rebuilds from the journal alone."""
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        return runner.engine.snapshot()


async def test_a_batch_and_its_conclusions_are_one_commit_each_event_followed_by_its_own(
    tmp_path: Path,
) -> None:
    with HeldJournal(tmp_path / "j.sqlite", "T1") as journal:
        journal.release.set()
        runner = _runner(journal)
        await runner.step(roulette_spin(7) + roulette_spin(8))
        assert journal.appends == [10]  # eight events and two outcomes: one transaction
        records = list(journal.records())
        assert [r.type for r in records] == [
            *("round_open", "ball_launched", "bets_closed", "winning_number", "outcome"),
            *("round_open", "ball_launched", "bets_closed", "winning_number", "outcome"),
        ]
        assert [r["result"]["number"] for r in records if r.type == "outcome"] == [7, 8]
        assert journal.verify() == 10
        live = runner.engine.snapshot()
    assert _replayed(tmp_path / "j.sqlite") == live


async def test_a_slow_commit_leaves_the_event_loop_free_and_nothing_out_before_it_is_durable(
    tmp_path: Path,
) -> None:
    views = Views()
    with HeldJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, views)
        step = asyncio.create_task(runner.step(roulette_spin(3)[:3]))
        # The commit waits on its thread; the loop still runs this test's code meanwhile.
        # (Were the commit on the loop, nothing below would run before it ended: a deadlock.)
        assert await asyncio.to_thread(journal.entered.wait, 10)
        assert journal.last_seq == 0
        assert runner.engine.current_round == "T1-000001"  # decided, not yet journaled...
        runner.views.publish_state()
        assert (views.states, views.handed) == ([], [])  # ...so nothing about it goes out
        journal.release.set()
        await step
        assert views.handed == [[1, 2, 3]]  # the outbox is handed the commit's rows
        assert [s["seq"] for s in views.states] == [3]


async def test_a_record_written_during_the_commit_makes_the_batch_decide_again(
    tmp_path: Path,
) -> None:
    with HeldJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        journal.release.set()
        await runner.step(roulette_spin(1)[:2])
        journal.release.clear()
        step = asyncio.create_task(runner.step(roulette_spin(1)[2:]))
        assert await asyncio.to_thread(journal.entered.wait, 10)
        # A command's record takes the seq the batch was decided for (on the loop, directly).
        runner.committer.journal_records([{"type": "power_on", "ts": TS}], raising=True)
        journal.release.set()
        await step
        types = [r.type for r in journal.records()]
        assert types == [
            *("round_open", "ball_launched", "power_on"),
            *("bets_closed", "winning_number", "outcome"),
        ]
        assert journal.verify() == 6
        live = runner.engine.snapshot()
    assert _replayed(tmp_path / "j.sqlite") == live


async def test_cancelled_mid_commit_the_engine_still_matches_the_journal(tmp_path: Path) -> None:
    with HeldJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        step = asyncio.create_task(runner.step(roulette_spin(9)))
        assert await asyncio.to_thread(journal.entered.wait, 10)
        step.cancel()
        threading.Timer(0.05, journal.release.set).start()
        await asyncio.gather(step, return_exceptions=True)
        assert step.cancelled()
        # The write went on in its thread: the outcome is journaled and the engine has it.
        assert [r.type for r in journal.records()][-1] == "outcome"
        assert runner.engine.current_round is None
        live = runner.engine.snapshot()
    assert _replayed(tmp_path / "j.sqlite") == live


class FailingJournal(HeldJournal):
    """Appends on the writer thread fail while :attr:`failing` is set (a full disk)."""

    failing = False

    def commit(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        if self.failing and threading.current_thread() is not threading.main_thread():
            raise JournalWriteError(f"{self.path}: database or disk is full")
        return super().commit(records, after_seq=after_seq)


@pytest.fixture
def takes(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """One entry per undo pickle the runner takes (:meth:`Before.take`)."""
    taken: list[int] = []
    take = Before.take.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(
        Before, "take", classmethod(lambda cls, *a: taken.append(1) or take(cls, *a))
    )
    return taken


async def test_the_undo_taken_after_a_batch_went_out_restores_the_engine_of_a_failed_commit(
    tmp_path: Path, takes: list[int]
) -> None:
    """The next batch's undo is pickled once the last batch is out (off the path from the
    device line to the broker); a commit that then fails must still leave the engine exactly
    as the journal has it, whether the pickle came from that idle moment or was taken fresh."""
    with FailingJournal(tmp_path / "j.sqlite", "T1") as journal:
        journal.release.set()
        runner = _runner(journal)
        await runner.step(roulette_spin(4)[:2])
        await asyncio.sleep(0)  # the loop turn after the batch went out: the undo is taken
        await asyncio.sleep(0)
        durable = runner.engine.snapshot()
        takes.clear()
        journal.failing = True
        await runner.step(roulette_spin(4)[2:])
        assert takes == []  # the idle moment's pickle was used, none taken on the path
        assert runner.state.outage is not None  # the failed commit locked the table...
        assert runner.engine.snapshot() == durable  # ...with the engine as the journal has it
        assert [r.type for r in journal.records()] == ["round_open", "ball_launched"]


async def test_a_record_between_batches_makes_the_next_batch_take_a_fresh_undo(
    tmp_path: Path, takes: list[int]
) -> None:
    """An idle pickle is only used at the ``seq`` it was taken at: another record in between
    (a command's, an anchor) means a fresh one."""
    with FailingJournal(tmp_path / "j.sqlite", "T1") as journal:
        journal.release.set()
        runner = _runner(journal)
        await runner.step(roulette_spin(5)[:2])
        await asyncio.sleep(0)
        await asyncio.sleep(0)
        runner.committer.journal_records([{"type": "power_on", "ts": TS}], raising=True)
        durable = runner.engine.snapshot()
        takes.clear()
        journal.failing = True
        await runner.step(roulette_spin(5)[2:])
        assert takes == [1]
        assert runner.engine.snapshot() == durable
