"""The compatibility corpus: the current code starts on what earlier versions left on disk.

contracts §7: an upgrade never takes a table down. ``tests/data/compat/<commit>/`` holds the
journals and checkpoints of earlier landed versions (written by ``tests/compat/generate.py``; see
docs/journal.md, "Format versions and the compatibility corpus"). For each journal, the current
code ignores the old checkpoint (another fingerprint: ``checkpoint_ignored``), replays the journal
in full, journals ``power_on``, plays the rest of the stream, and ``tablectl verify`` and
``tablectl export`` read the file across both versions' records.

The corpus is copied to ``tmp_path`` first: the committed files are never opened for writing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import TableEvent, parse_event
from tablectl.controller.core.outcomes import Outcome
from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import SCHEMA as JOURNAL_SCHEMA
from tablectl.controller.journal import Journal, JournalRecord, canonical_json
from tablectl.controller.service import checkpoint
from tablectl.controller.service.checkpoint import SCHEMA as CHECKPOINT_SCHEMA
from tablectl.controller.service.checkpoint import Checkpoints, checkpoint_path, fingerprint
from tablectl.controller.service.runner import TableRunner, output_record
from tablectl.controller.tools.cli import main
from tests.support.checkpoints import LogRecorder, record_checkpoint_logs

CORPUS = Path(__file__).resolve().parents[1] / "data" / "compat"
STREAMS = Path(__file__).resolve().parents[1] / "data" / "replay"

KNOWN_FORMATS = {(1, 1)}
"""``(journal SCHEMA, checkpoint SCHEMA)`` pairs this corpus was built for. A new version of
either format fails :func:`test_the_formats_are_known`: add the corpus files of the version
before it (tests/compat/generate.py), then the pair here, and a line in docs/journal.md."""


def _manifests() -> list[dict[str, Any]]:
    return [
        json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
        for folder in sorted(CORPUS.iterdir())
        if (folder / "manifest.json").is_file()
    ]


def _entries() -> Iterator[Any]:
    for manifest in _manifests():
        commit = manifest["commit"][:7]
        for table in manifest["tables"]:
            yield pytest.param(commit, table, id=f"{commit}-{table['game']}")


ENTRIES = list(_entries())


@pytest.fixture
def logs(monkeypatch: pytest.MonkeyPatch) -> LogRecorder:
    return record_checkpoint_logs(monkeypatch)


class _Clock:
    def __init__(self, now: float) -> None:
        self.at = now

    def now(self) -> float:
        return self.at

    def wall(self) -> datetime:
        return datetime.fromtimestamp(self.at, UTC)

    def monotonic(self) -> float:
        return self.at

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)


def _copy(tmp_path: Path, commit: str) -> Path:
    folder = tmp_path / commit
    shutil.copytree(CORPUS / commit, folder)
    return folder


def _events(path: Path) -> list[TableEvent]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


def _runner(journal: Journal, spec: dict[str, Any], clock: _Clock) -> TableRunner:
    """The table as ``tablectl run`` builds it from the same config (service/app.py)."""
    table, game, rules = spec["table"], spec["game"], spec["rules"]
    return TableRunner(
        table_id=table,
        engine=build_engine(table, game, rules, source="test"),
        journal=journal,
        clock=clock,
        checkpoints=Checkpoints(
            journal.path, table, fingerprint(table=table, game=game, rules=rules)
        ),
    )


def _outcome(record: Any) -> dict[str, Any]:
    keep = ("round", "status", "reason", "result")
    return {key: record.get(key) for key in keep}


def _expected_tail(spec: dict[str, Any], played: int) -> list[dict[str, Any]]:
    """The outcomes of the stream's events after ``played``, as the current engine decides
    them when it sees the whole stream without a stop."""
    engine = build_engine(spec["table"], spec["game"], spec["rules"], source="test")
    outcomes = []
    for index, event in enumerate(_events(STREAMS / spec["stream"])):
        for output in engine.apply(event):
            if index >= played and isinstance(output, Outcome):
                outcomes.append(_outcome(output_record(output, event.ts)))
    return outcomes


def _start_and_play(
    folder: Path, spec: dict[str, Any]
) -> tuple[TableRunner, int, list[JournalRecord]]:
    """Start the current code on the old journal, play the rest of its stream, stop. The
    events replayed at the start and the records journaled in play."""
    path = folder / spec["journal"]
    rest = _events(folder / spec["continue"])
    with Journal(path, spec["table"]) as journal:
        last_ts = parse_ts_seconds(next(journal.records(journal.last_seq - 1)).ts)
        assert last_ts is not None
        clock = _Clock(last_ts + 30)
        runner = _runner(journal, spec, clock)
        replayed = runner.restart.recover()
        runner.restart.power_on()
        played: list[JournalRecord] = []
        for event in rest:
            clock.at = max(clock.at, parse_ts_seconds(event.ts) or clock.at)
            played.extend(runner.committer.handle(event))
        clock.at += 1
        runner.restart.power_off("shutdown")
    return runner, replayed, played


@pytest.mark.parametrize(("commit", "spec"), ENTRIES)
def test_the_current_code_starts_on_an_earlier_versions_journal(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    logs: LogRecorder,
    commit: str,
    spec: dict[str, Any],
) -> None:
    folder = _copy(tmp_path, commit)
    path = folder / spec["journal"]
    old_records = spec["records"]

    runner, replayed, played = _start_and_play(folder, spec)

    if _written_by_this_code(spec):
        # The corpus of the version under test (until its code changes): its checkpoint is
        # this code's own and is used; nothing is replayed.
        assert not logs.events("checkpoint_ignored")
        assert replayed == 0
    else:
        # The old checkpoint is not this code's: ignored, the journal replayed in full.
        [ignored] = logs.events("checkpoint_ignored")
        assert ignored["reason"] == "written by other code or rules"
        assert replayed == spec["events_played"]
    assert runner.state.scan.previous == "power_off"  # the old version's orderly stop, read
    # It keeps playing: the rounds after the restart decide as an uninterrupted table would.
    outcomes = [_outcome(record) for record in played if record.type == "outcome"]
    assert outcomes
    assert outcomes == _expected_tail(spec, spec["events_played"])

    # The next start uses the checkpoint the current code wrote.
    with Journal(path, spec["table"]) as journal:
        assert _runner(journal, spec, _Clock(0.0)).restart.recover() == 0
        records = list(journal.records())
    kinds = [record.type for record in records]
    assert kinds[old_records - 1] == "power_off"  # the old era, then the current one
    assert kinds[old_records] == "power_on"
    assert "outcome" in kinds[:old_records]
    assert "outcome" in kinds[old_records:]

    # verify: one chain across both versions' records.
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert "hash chain intact" in capsys.readouterr().out

    # export: the events and records of both versions.
    events_out, records_out = tmp_path / "events.jsonl", tmp_path / "records.jsonl"
    assert (
        main(
            [
                "export",
                "--journal",
                str(path),
                "--all",
                "--out",
                str(events_out),
                "--records",
                str(records_out),
            ]
        )
        == 0
    )
    exported = [json.loads(line) for line in events_out.read_text("utf-8").splitlines()]
    stream = _events(STREAMS / spec["stream"])
    assert len(exported) == len(stream)
    assert [event["type"] for event in exported] == [event.type for event in stream]
    spanned = [json.loads(line) for line in records_out.read_text("utf-8").splitlines()]
    old = [r for r in spanned if r["seq"] <= old_records]
    new = [r for r in spanned if r["seq"] > old_records]
    assert any(r["type"] == "outcome" for r in old)
    assert any(r["type"] == "outcome" for r in new)
    assert [r["hash"] for r in spanned] == [records[r["seq"] - 1].hash for r in spanned]


SHAPES_CHANGED = frozenset({"a857d59", "71c517b"})
"""Entries whose engines' state the current code's no longer has: their checkpoints, claimed
as this code's, must be discarded. A newer entry's may still be usable; either way the start
must not fail and the table must play on as an uninterrupted one would."""


def _written_by_this_code(spec: dict[str, Any]) -> bool:
    """Whether the entry's checkpoint carries this code's fingerprint: the newest corpus entry,
    generated from the commit under test, until the next change of the sources."""
    current = fingerprint(table=spec["table"], game=spec["game"], rules=spec["rules"])
    return bool(spec.get("fingerprint") == current)


def _claim_current_code(path: Path, spec: dict[str, Any]) -> None:
    """The old checkpoint under this code's fingerprint: what the empty-digest bug did."""
    file = checkpoint_path(path)
    head, _, body = file.read_bytes().partition(b"\n")
    current = fingerprint(table=spec["table"], game=spec["game"], rules=spec["rules"])
    header = {**json.loads(head), "fingerprint": current}
    file.write_bytes(canonical_json(header).encode() + b"\n" + body)


@pytest.mark.parametrize(("commit", "spec"), ENTRIES)
def test_an_old_checkpoint_under_a_current_fingerprint_does_not_stop_the_start(
    tmp_path: Path, logs: LogRecorder, commit: str, spec: dict[str, Any]
) -> None:
    """The bug's own case: a fingerprint that says "this code" over older engines (before the
    fix: ``AttributeError: 'RouletteEngine' object has no attribute '_extras'`` in power_on,
    every start). The state is discarded, the journal replayed in full, the table plays on."""
    folder = _copy(tmp_path, commit)
    _claim_current_code(folder / spec["journal"], spec)

    _, replayed, played = _start_and_play(folder, spec)

    found = logs.events("checkpoint_ignored")
    if commit in SHAPES_CHANGED:
        # Older engines lack attributes (unusable); the oldest layout's classes are not even
        # importable names (controller.engines.*, refused by the unpickler).
        [ignored] = found
        assert ignored["reason"].startswith(("unusable: ", "unreadable: "))
        if commit == "a857d59":
            assert " has no " in ignored["reason"]
        assert replayed == spec["events_played"]
    elif not found:
        assert replayed == 0  # a state of the current shape: used (the fingerprint vouched)
    outcomes = [_outcome(record) for record in played if record.type == "outcome"]
    assert outcomes == _expected_tail(spec, spec["events_played"])
    assert outcomes


def test_the_corpus_files_are_as_generated() -> None:
    """Nothing rewrote the committed files (a test that opened one in place would have)."""
    manifests = _manifests()
    assert {m["commit"][:7] for m in manifests} >= {"a857d59", "71c517b"}
    total = 0
    for manifest in manifests:
        folder = CORPUS / manifest["commit"][:7]
        names = {path.name for path in folder.iterdir()} - {"manifest.json"}
        assert names == set(manifest["files"]), folder
        for name, digest in manifest["files"].items():
            data = (folder / name).read_bytes()
            total += len(data)
            assert hashlib.sha256(data).hexdigest() == digest, folder / name
    assert total < 2_000_000


def test_the_formats_are_known() -> None:
    """A new journal or checkpoint format needs corpus files of the version before it."""
    current = (JOURNAL_SCHEMA, CHECKPOINT_SCHEMA)
    assert current in KNOWN_FORMATS, (
        f"journal/checkpoint format {current} is new: run tests/compat/generate.py on the "
        "last commit of the old format, then add it to KNOWN_FORMATS and docs/journal.md"
    )
    for manifest in _manifests():
        assert (manifest["journal_schema"], manifest["checkpoint_schema"]) in KNOWN_FORMATS
    assert checkpoint.SOURCE_PACKAGES == ("tablectl.controller", "tablectl.drivers")
