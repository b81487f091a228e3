"""The betting timer (seed-004 BAC 2.1.6 / BJ 2.1.3: the system timer blocks bets)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pydantic
import pytest

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.events import Fault
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.outage import JournalOutage
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.service.runner.views import betting_view
from tests.support.clocks import WallClock
from tests.support.waiting import wait_until


def _runner(journal: Journal, betting: BettingConfig) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=WallClock(lambda: 1_764_496_800.0),
        betting=betting,
    )


@contextlib.asynccontextmanager
async def _running(runner: TableRunner) -> AsyncIterator[None]:
    task = asyncio.create_task(runner.run())
    try:
        yield
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task


async def _more_looks(runner: TableRunner, count: int) -> None:
    """Wait until the timer looked at the table ``count`` more times (each could have acted)."""
    until = runner.timer.looks + count
    await wait_until(lambda: runner.timer.looks >= until, what=f"{count} looks of the timer")


async def test_timer_opens_then_closes_betting_through_the_journal(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode="timer", open_seconds=0.3, pause_seconds=0.1))
        async with _running(runner):
            await wait_until(lambda: journal.last_seq >= 2, what="round_open and bets_closed")
            await _more_looks(runner, 3)
        types = [r["type"] for r in journal.records()]
        # Roulette then waits for the wheel: one round opened, betting closed once.
        assert types == ["round_open", "bets_closed"]
        assert runner.engine.snapshot()["phase"] == "closed"


async def test_timer_leaves_a_faulted_table_alone(tmp_path: Path) -> None:
    # R14/R18: while a fault is latched no round opens.
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode="timer", open_seconds=0.2, pause_seconds=0))
        runner.committer.handle(
            Fault(device="shoe", code="shoe_removed", ts="2026-11-30T10:00:00Z")
        )
        async with _running(runner):
            # With no pause, an idle table would be opened at the first look.
            await _more_looks(runner, 3)
        assert [r["type"] for r in journal.records()] == ["fault"]


@pytest.mark.parametrize("mode", ["device", "external"])
async def test_other_modes_open_nothing(tmp_path: Path, mode: str) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode=mode, pause_seconds=0))  # type: ignore[arg-type]
        # Off in these modes: not among the table's periodic work, so it looks at nothing.
        assert runner.timer.start() is None
        assert "betting" not in runner.ticks().names
        async with _running(runner):
            await asyncio.sleep(0.3)
        assert runner.timer.looks == 0
        assert journal.last_seq == 0


def test_config_is_strict() -> None:
    with pytest.raises(pydantic.ValidationError):
        BettingConfig.model_validate({"mode": "sometimes"})
    with pytest.raises(pydantic.ValidationError):
        BettingConfig.model_validate({"open_seconds": 0})


def test_the_timer_looks_at_the_phase_without_building_a_snapshot(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Ten looks a second: a round engine's ``phase`` and ``faults``, never its snapshot."""
    engine = build_engine("T1", "roulette", {}, source="test")
    assert betting_view(engine, None) == (engine.snapshot()["phase"], False)

    def no_snapshot(self: object) -> dict[str, Any]:
        raise AssertionError("a snapshot was built")

    monkeypatch.setattr(type(engine), "snapshot", no_snapshot)
    assert betting_view(engine, None) == ("idle", False)
    outage = JournalOutage(started_ts="2026-11-30T10:00:00Z", error="disk full", round=None)
    assert betting_view(engine, outage) == ("idle", True)
    engine.apply(Fault(device="wheel", code="ss2_fault_5", ts="2026-11-30T10:00:00Z"))
    assert betting_view(engine, None) == ("idle", True)
