"""``tablectl_fault_latched_since_seconds``: when each latched fault was latched, from the journal.

The alert on a fault latched too long (config/prometheus/tablectl.rules.yml) is ``time() - this``,
so the time must be the fault's own — its journaled record's ``ts`` (or ``since``, for a fault
journaled late) — and must survive a restart, whether the state comes back by replaying the
journal or from a checkpoint; a cleared fault has no series.
"""

from __future__ import annotations

from pathlib import Path

from tablectl.controller.core.events import Fault, FaultCleared, ShoeRemoved
from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.checkpoint import Checkpoints, fingerprint
from tablectl.controller.service.metrics import MetricsRegistry
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock
from tests.support.tables import sample

RAISED = "2026-11-30T10:00:00.000000Z"
LATER = "2026-11-30T10:07:30.000000Z"
NAME = "tablectl_fault_latched_since_seconds"


def _runner(journal: Journal, *, game: str = "roulette", checkpoints: bool = False) -> TableRunner:
    store = None
    if checkpoints:
        store = Checkpoints(journal.path, "T1", fingerprint(table="T1", game=game, rules={}))
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", game, {}, source="test"),
        journal=journal,
        clock=ManualClock(1_764_496_800.0),
        checkpoints=store,
        insecure_commands=True,
    )


def _scrape(journal: Journal, runner: TableRunner) -> str:
    registry = MetricsRegistry()
    registry.table("T1").attach(journal=journal, drivers=[], publisher=None, runner=runner)
    return registry.render()


def _since(body: str, device: str, code: str) -> float | None:
    return sample(body, NAME, table="T1", device=device, code=code)


def test_a_latched_fault_is_exported_with_its_journaled_time_until_cleared(
    tmp_path: Path,
) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        runner.committer.handle(Fault(ts=RAISED, device="wheel", code="ss2_fault_5"))
        # The same fault again: still latched since the first.
        runner.committer.handle(Fault(ts=LATER, device="wheel", code="ss2_fault_5"))
        runner.committer.handle(Fault(ts=LATER, device="wheel", code="ss2_fault_7"))
        body = _scrape(journal, runner)
        assert _since(body, "wheel", "ss2_fault_5") == parse_ts_seconds(RAISED)
        assert _since(body, "wheel", "ss2_fault_7") == parse_ts_seconds(LATER)
        assert f"# TYPE {NAME} gauge" in body

        runner.committer.handle(FaultCleared(ts=LATER, device="wheel", code="ss2_fault_5"))
        body = _scrape(journal, runner)
        assert _since(body, "wheel", "ss2_fault_5") is None
        assert _since(body, "wheel", "ss2_fault_7") == parse_ts_seconds(LATER)

        # Raised again later: a new latch, with its own time.
        runner.committer.handle(Fault(ts=LATER, device="wheel", code="ss2_fault_5"))
        assert _since(_scrape(journal, runner), "wheel", "ss2_fault_5") == parse_ts_seconds(LATER)


def test_a_fault_journaled_late_counts_from_when_it_began(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        runner.committer.handle(Fault(ts=LATER, since=RAISED, device="wheel", code="ss2_fault_5"))
        assert _since(_scrape(journal, runner), "wheel", "ss2_fault_5") == parse_ts_seconds(RAISED)


def test_the_time_survives_a_restart_by_replay_and_by_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    for checkpoints in (False, True):
        path.unlink(missing_ok=True)
        with Journal(path, "T1") as journal:
            runner = _runner(journal, checkpoints=checkpoints)
            runner.committer.handle(Fault(ts=RAISED, device="wheel", code="ss2_fault_5"))
            runner.committer.handle(Fault(ts=LATER, device="wheel", code="ss2_fault_9"))
            runner.committer.handle(FaultCleared(ts=LATER, device="wheel", code="ss2_fault_9"))
            runner.restart.checkpoint()
        with Journal(path, "T1") as journal:
            runner = _runner(journal, checkpoints=checkpoints)
            replayed = runner.restart.recover()
            assert replayed == (0 if checkpoints else 3)  # the checkpoint had them all
            body = _scrape(journal, runner)
        assert runner.latches.journaled["wheel"] == {"ss2_fault_5"}, checkpoints
        assert _since(body, "wheel", "ss2_fault_5") == parse_ts_seconds(RAISED), checkpoints
        assert _since(body, "wheel", "ss2_fault_9") is None, checkpoints


def test_a_removed_shoe_is_latched_as_shoe_removed_until_it_is_back(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, game="baccarat")
        runner.committer.handle(ShoeRemoved(ts=RAISED, device="shoe"))
        assert _since(_scrape(journal, runner), "shoe", "shoe_removed") == parse_ts_seconds(RAISED)
        runner.committer.handle(FaultCleared(ts=LATER, device="shoe", code="shoe_removed"))
        assert _since(_scrape(journal, runner), "shoe", "shoe_removed") is None


def test_no_runner_no_series(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        registry = MetricsRegistry()
        registry.table("T1").attach(journal=journal, drivers=[], publisher=None)
        assert NAME not in registry.render()
