"""The checkpoint's guards (issue 25): its fingerprint covers the code that runs, and a checkpoint
that loads but cannot be used is discarded, never a crash.

Before the fix the digest walked folders that do not exist and was sha256 of nothing in every
install, so every version loaded every other version's engines; a roulette table started on
newer code died in ``power_on`` (``'RouletteEngine' object has no attribute '_extras'``).
"""

from __future__ import annotations

import hashlib
import json
import pickle
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import Fault, TableEvent, parse_event
from tablectl.controller.engines import ENGINES, build_engine
from tablectl.controller.journal import Journal, canonical_json
from tablectl.controller.service import checkpoint
from tablectl.controller.service.checkpoint import (
    SOURCE_PACKAGES,
    Checkpoints,
    RecoveryState,
    SourcesNotFoundError,
    checkpoint_path,
    fingerprint,
    source_digest,
    source_roots,
    state_mismatch,
)
from tablectl.controller.service.recovery import JournalScan
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock
from tests.support.checkpoints import LogRecorder, record_checkpoint_logs

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"
CLOCK = 1_764_496_800.0
EMPTY = hashlib.sha256(b"").hexdigest()


@pytest.fixture(autouse=True)
def _fresh_digest() -> Iterator[None]:
    """Each test computes the code's digest from its own roots (a test may patch them)."""
    checkpoint._code_digest.cache_clear()
    yield
    checkpoint._code_digest.cache_clear()


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> LogRecorder:
    return record_checkpoint_logs(monkeypatch)


def _events() -> list[TableEvent]:
    lines = (DATA / "roulette-rounds.jsonl").read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


def _runner(journal: Journal) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=ManualClock(CLOCK),
        checkpoints=Checkpoints(
            journal.path, "T1", fingerprint(table="T1", game="roulette", rules={})
        ),
    )


def _state(runner: TableRunner) -> tuple[Any, ...]:
    return (
        runner.engine.snapshot(),
        runner.engine.current_round,
        runner.state.scan,
        runner.latches.journaled,
    )


def _stopped_table(path: Path, *, crash_tail: bool = False) -> int:
    """A roulette journal whose checkpoint was written at an orderly stop; with ``crash_tail``,
    a start that journaled more events after it and died (no ``power_off``). The events."""
    events = _events()
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        runner.restart.power_on()
        for event in events:
            runner.committer.handle(event)
        runner.restart.power_off("shutdown")
    if not crash_tail:
        return len(events)
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        runner.restart.power_on()
        for event in events[:5]:
            runner.committer.handle(event)
    return len(events) + 5


def _full_replay(path: Path) -> tuple[Any, ...]:
    copy = path.with_name("full-" + path.name)
    shutil.copyfile(path, copy)
    with Journal(copy, "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(CLOCK),
        )
        runner.restart.recover()
        return _state(runner)


# --- the fingerprint covers the running code ------------------------------------------------


def _copy_sources(tmp_path: Path) -> dict[str, Path]:
    """The running code's packages copied (sources only), as the digest's roots."""
    copies = {}
    for name, root in source_roots().items():
        copies[name] = tmp_path / "src" / name
        shutil.copytree(root, copies[name], ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return copies


def test_the_digest_covers_the_sources_of_the_imported_packages() -> None:
    roots = source_roots()
    assert set(roots) == set(SOURCE_PACKAGES) == {"tablectl.controller", "tablectl.drivers"}
    # The running module itself, and a driver, are below the roots it walks.
    assert Path(checkpoint.__file__).resolve() == roots["tablectl.controller"] / (
        "service/checkpoint.py"
    )
    assert (roots["tablectl.drivers"] / "ss2" / "protocol.py").is_file()
    digest = checkpoint._code_digest()
    assert digest != EMPTY  # the bug: sha256 of nothing, in every install
    assert digest == source_digest(roots)


def test_the_digest_changes_with_any_source_file(tmp_path: Path) -> None:
    copies = _copy_sources(tmp_path)
    assert source_digest(copies) == checkpoint._code_digest()  # the same bytes, the same names
    engine = copies["tablectl.controller"] / "engines" / "roulette.py"
    engine.write_text(engine.read_text(encoding="utf-8") + "\n# one more line\n", "utf-8")
    edited = source_digest(copies)
    assert edited != checkpoint._code_digest()
    (copies["tablectl.drivers"] / "new_driver.py").write_text("X = 1\n", encoding="utf-8")
    assert source_digest(copies) not in {edited, checkpoint._code_digest()}


def test_no_sources_is_an_error_never_an_empty_digest(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "README").write_text("no code here\n", encoding="utf-8")
    roots = {"tablectl.controller": tmp_path / "empty", "tablectl.drivers": tmp_path / "none"}
    with pytest.raises(SourcesNotFoundError, match="no Python sources"):
        source_digest(roots)


def test_a_changed_source_file_replays_the_journal_in_full(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogRecorder
) -> None:
    """The guard itself: the same journal and checkpoint, code that differs by one line."""
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    copies = _copy_sources(tmp_path)
    monkeypatch.setattr(checkpoint, "source_roots", lambda: copies)
    checkpoint._code_digest.cache_clear()
    with Journal(path, "T1") as journal:  # the same code from another folder: still current
        assert _runner(journal).restart.recover() == 0
    assert logs.events("checkpoint_ignored") == []
    rules = copies["tablectl.controller"] / "games" / "roulette.py"
    rules.write_text(rules.read_text(encoding="utf-8") + "\n# a rules fix\n", encoding="utf-8")
    checkpoint._code_digest.cache_clear()
    before = fingerprint(table="T1", game="roulette", rules={})
    expected = _full_replay(path)
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        assert runner.restart.recover() == total  # every event again
        assert _state(runner) == expected
        assert runner.restart.checkpoints is not None
        assert runner.restart.checkpoints.fingerprint == before
    [ignored] = logs.events("checkpoint_ignored")
    assert ignored["reason"] == "written by other code or rules"
    # The full replay wrote a checkpoint for the new code: the next start uses it.
    with Journal(path, "T1") as journal:
        assert _runner(journal).restart.recover() == 0


def test_code_without_sources_neither_uses_nor_writes_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogRecorder
) -> None:
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    written = checkpoint_path(path).read_bytes()
    empty = {name: tmp_path / "nothing" / name for name in SOURCE_PACKAGES}
    monkeypatch.setattr(checkpoint, "source_roots", lambda: empty)
    checkpoint._code_digest.cache_clear()
    assert fingerprint(table="T1", game="roulette", rules={}) is None
    [off] = logs.events("checkpoints_off")
    assert "no Python sources" in off["reason"]
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        assert runner.restart.recover() == total
        runner.restart.power_on()
        runner.restart.power_off("shutdown")
    assert "no fingerprint" in logs.events("checkpoint_ignored")[0]["reason"]
    assert checkpoint_path(path).read_bytes() == written  # nothing written by unknown code


# --- a checkpoint that loads but cannot be used ---------------------------------------------


def _rewrite_state(path: Path, edit: Any) -> None:
    """Load the checkpoint's state, ``edit`` it, and write it back under the same header (the
    fingerprint still says: this code)."""
    file = checkpoint_path(path)
    head, _, body = file.read_bytes().partition(b"\n")
    state = pickle.loads(body)  # noqa: S301 - our own file, written by this test
    edit(state)
    body = pickle.dumps(state)
    fields = {**json.loads(head), "sha256": hashlib.sha256(body).hexdigest()}
    file.write_bytes(canonical_json(fields).encode() + b"\n" + body)


def _restart_and_play(path: Path, total: int) -> TableRunner:
    """A start that must replay every event, then play a round: the table is up."""
    expected = _full_replay(path)
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        assert runner.restart.recover() == total
        assert _state(runner) == expected
        runner.restart.power_on()
        records = [r for event in _events()[:6] for r in runner.committer.handle(event)]
        assert any(r.type == "outcome" for r in records)
        runner.restart.power_off("shutdown")
    return runner


@pytest.mark.parametrize(
    "drop",
    [
        lambda state: delattr(state.engine, "_extras"),
        # A rules dataclass of an older version (as lucky7's DrawRules without crash_color).
        lambda state: object.__delattr__(state.engine._rules, "lightning_max"),
        lambda state: delattr(state.scan, "power_ons"),
    ],
    ids=["engine-attribute", "nested-object", "scan-field"],
)
def test_a_state_of_an_older_class_is_discarded_not_a_crash(
    tmp_path: Path, logs: LogRecorder, drop: Any
) -> None:
    """The bug as it struck: the fingerprint said "same code", the pickle was of older classes
    (an attribute the current code sets in ``__init__`` missing)."""
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    _rewrite_state(path, drop)
    _restart_and_play(path, total)
    reasons = [line["reason"] for line in logs.events("checkpoint_ignored")]
    assert len(reasons) == 1
    assert reasons[0].startswith("unusable: ")
    assert " has no " in reasons[0]
    # Discarded, then written again by the current code: the next start uses it.
    with Journal(path, "T1") as journal:
        assert _runner(journal).restart.recover() == 0


class _BrokenError(Exception):
    pass


def _raise(*_args: Any) -> Any:
    raise _BrokenError("the restored engine cannot take this")


@pytest.mark.parametrize("method", ["apply", "snapshot"])
def test_a_state_that_raises_in_recovery_is_discarded_and_the_journal_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, logs: LogRecorder, method: str
) -> None:
    """``apply``: while the records after the checkpoint are replayed (a crash left some);
    ``snapshot``: as ``power_on`` reads it."""
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path, crash_tail=True)
    original = Checkpoints.load

    def load(self: Checkpoints, journal: Journal) -> tuple[int, RecoveryState] | None:
        loaded = original(self, journal)
        if loaded is not None:
            setattr(loaded[1].engine, method, _raise)  # this instance only
        return loaded

    monkeypatch.setattr(Checkpoints, "load", load)
    runner = _restart_and_play(path, total)
    assert not hasattr(runner.engine, "__dict__") or method not in vars(runner.engine)
    [ignored] = logs.events("checkpoint_ignored")
    # (the runner may wrap what the engine raised: engine_error's EngineFailedError)
    assert ignored["reason"].startswith("unusable: ")
    assert "_BrokenError" in ignored["reason"]
    assert "the restored engine cannot take this" in ignored["reason"]


def test_a_full_replay_that_raises_is_not_taken_for_a_bad_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a checkpoint in use there is nothing to fall back to: the error is the start's."""
    path = tmp_path / "j.sqlite"
    _stopped_table(path)
    checkpoint_path(path).unlink()
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        monkeypatch.setattr(runner.engine, "apply", _raise)
        with pytest.raises(Exception, match="cannot take this"):
            runner.restart.recover()


def test_every_engine_has_the_shape_of_its_own_fresh_state() -> None:
    """No false alarm: a state the current code pickles is never "missing" anything."""
    for game in sorted(ENGINES):
        engine = build_engine("T1", game, {}, source="test")
        engine.apply(Fault(ts="2026-11-30T10:00:00.000000Z", device="x", code="jam"))
        state = pickle.loads(pickle.dumps(RecoveryState(engine, JournalScan(), {})))  # noqa: S301
        fresh = build_engine("T1", game, {}, source="test")
        assert state_mismatch(state, fresh) is None, game
    other = build_engine("T1", "baccarat", {}, source="test")
    assert "the engine is a" in (state_mismatch(state, other) or "")
