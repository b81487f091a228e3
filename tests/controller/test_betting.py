"""The betting timer (seed-004 BAC 2.1.6 / BJ 2.1.3: the system timer blocks bets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pydantic
import pytest

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.events import Fault
from tablectl.controller.engines import build_engine
from tablectl.controller.journal.store import Journal
from tablectl.controller.service.runner import TableRunner


def _runner(journal: Journal, betting: BettingConfig) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=lambda: 1_764_496_800.0,
        betting=betting,
    )


async def _run_for(runner: TableRunner, seconds: float) -> None:
    task = asyncio.create_task(runner.run())
    await asyncio.sleep(seconds)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_timer_opens_then_closes_betting_through_the_journal(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode="timer", open_seconds=0.3, pause_seconds=0.1))
        await _run_for(runner, 0.9)
        types = [r["type"] for r in journal.records()]
        # Roulette then waits for the wheel: one round opened, betting closed once.
        assert types == ["round_open", "bets_closed"]
        assert runner.engine.snapshot()["phase"] == "closed"


async def test_timer_leaves_a_faulted_table_alone(tmp_path: Path) -> None:
    # R14/R18: while a fault is latched no round opens.
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode="timer", open_seconds=0.2, pause_seconds=0))
        runner.handle(Fault(device="shoe", code="shoe_removed", ts="2026-11-30T10:00:00Z"))
        await _run_for(runner, 0.5)
        assert [r["type"] for r in journal.records()] == ["fault"]


@pytest.mark.parametrize("mode", ["device", "external"])
async def test_other_modes_open_nothing(tmp_path: Path, mode: str) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, BettingConfig(mode=mode, pause_seconds=0))  # type: ignore[arg-type]
        await _run_for(runner, 0.4)
        assert journal.last_seq == 0


def test_config_is_strict() -> None:
    with pytest.raises(pydantic.ValidationError):
        BettingConfig.model_validate({"mode": "sometimes"})
    with pytest.raises(pydantic.ValidationError):
        BettingConfig.model_validate({"open_seconds": 0})
