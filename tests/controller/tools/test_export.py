"""``tablectl export``: a round exported from the journal replays to the journal's own outcome."""

from __future__ import annotations

import argparse
import io
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import ChainBrokenError
from tablectl.controller.core.events import TableEvent, event_from_json
from tablectl.controller.core.outcomes import Outcome
from tablectl.controller.core.time import parse_ts
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.replay import run_replay
from tablectl.controller.journal import Journal
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.export import (
    add_arguments,
    export_all,
    export_round,
    export_time_range,
    run,
)
from tablectl.controller.tools.journal_reader import ExportError, JournalReader
from tablectl.drivers.clock import ManualClock

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"
JOURNAL_ONLY = ("type", "seq", "hash", "prev_hash")


def _events(name: str) -> list[TableEvent]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [event_from_json(line) for line in lines if line.strip()]


def _journal(
    path: Path, table: str, game: str, batches: Sequence[Sequence[TableEvent]]
) -> list[dict[str, Any]]:
    """Run the events through the real runner (group commits as given); the outcomes."""
    with Journal(path, table) as journal:
        runner = TableRunner(
            table_id=table,
            engine=build_engine(table, game, {}, source="test"),
            journal=journal,
            clock=ManualClock(1_764_496_800.0),
        )
        for batch in batches:
            runner.committer.handle_batch(batch)
        return [r for r in journal.records() if r["type"] == "outcome"]


def _replay(table: str, game: str, lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out, err = io.StringIO(), io.StringIO()
    engine = build_engine(table, game, {}, source="test")
    source = io.StringIO("".join(json.dumps(line) + "\n" for line in lines))
    report = run_replay(engine, source, out, err)
    assert report.errors == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def _as_replayed(outcome: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in outcome.items() if k not in JOURNAL_ONLY}


def _roulette_batches() -> list[list[TableEvent]]:
    """The roulette rounds, with each round's deciding event and the next round_open journaled
    in one group commit (so the next round's first event precedes this round's outcome)."""
    events = _events("roulette-rounds.jsonl")
    batches: list[list[TableEvent]] = []
    for event in events:
        if event.type == "round_open" and batches and batches[-1][-1].type == "winning_number":
            batches[-1].append(event)
        else:
            batches.append([event])
    return batches


@pytest.fixture
def roulette(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    path = tmp_path / "ROU-01.sqlite"
    outcomes = _journal(path, "ROU-01", "roulette", _roulette_batches())
    assert len(outcomes) == 5
    return path, outcomes


def test_each_exported_round_replays_to_the_journals_outcome(
    roulette: tuple[Path, list[dict[str, Any]]],
) -> None:
    path, outcomes = roulette
    with JournalReader(path) as reader:
        for outcome in outcomes:
            exported = export_round(reader, outcome["round"])
            first = exported.events[0]
            assert (first["type"], first["round"]) == ("round_open", outcome["round"])
            assert all(
                set(e) & {"hash", "prev_hash", "schema", "table"} == set() for e in exported.events
            )
            assert all("seq" in e and "ts" in e for e in exported.events)
            # The next round's round_open (same group commit) is not part of this round.
            assert [e["type"] for e in exported.events].count("round_open") == 1
            assert _replay("ROU-01", "roulette", exported.events) == [_as_replayed(outcome)]
            # The evidence ends with the outcome itself, hashes included.
            assert exported.records[-1] == outcome


def test_a_mid_shoe_baccarat_round_replays_to_the_same_outcome(tmp_path: Path) -> None:
    """A card dealt after a coup ended is the next coup's first (BAC-I2), and it can survive a
    misdealt coup: the self-checking export goes back as far as reproducing takes."""
    path = tmp_path / "BAC-01.sqlite"
    outcomes = _journal(path, "BAC-01", "baccarat", [[e] for e in _events("baccarat-shoe.jsonl")])
    assert len(outcomes) >= 2
    with JournalReader(path) as reader:
        for outcome in outcomes:
            exported = export_round(
                reader, outcome["round"], lambda: build_engine("BAC-01", "baccarat", {}, source="t")
            )
            assert exported.reproduced
            opening = [e for e in exported.events if e["type"] == "round_open"][-1]
            assert opening["round"] == outcome["round"]
            replayed = _replay("BAC-01", "baccarat", exported.events)
            assert replayed[-1] == _as_replayed(outcome)
            # Reaching back, the earlier rounds replay under their journal ids too.
            assert [o["round"] for o in replayed] == [
                o["round"] for o in outcomes if o["seq"] <= outcome["seq"]
            ][-len(replayed) :]
        # Coup 3 begins with QH, dealt after coup 2 ended: the export starts with it.
        third = export_round(reader, outcomes[2]["round"])
        assert (third.events[0]["type"], third.events[0]["card"]) == ("card", "QH")
        assert _replay("BAC-01", "baccarat", third.events) == [_as_replayed(outcomes[2])]


def test_an_abandoned_round_replays_to_its_void(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    events = _events("roulette-rounds.jsonl")
    opened, launched = events[0], events[1]
    outcomes = _journal(
        path, "ROU-01", "roulette", [[opened], [launched], [opened], *[[e] for e in events[1:4]]]
    )
    abandoned = outcomes[0]
    assert abandoned["status"] == "void"
    with JournalReader(path) as reader:
        exported = export_round(reader, abandoned["round"])
    assert _replay("ROU-01", "roulette", exported.events)[0] == _as_replayed(abandoned)


def test_export_reads_across_rotated_files(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    batches = _roulette_batches()
    with Journal(path, "ROU-01") as journal:
        runner = TableRunner(
            table_id="ROU-01",
            engine=build_engine("ROU-01", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(1_764_496_800.0),
        )
        for batch in batches:
            runner.committer.handle_batch(batch)
            journal.mark_published(journal.last_seq)
            if batch[-1].type == "round_open":
                journal.rotate()
        outcomes = [r for r in journal.records() if r["type"] == "outcome"]
    with JournalReader(path) as reader:
        assert len(reader.files) > 2
        for outcome in outcomes:
            exported = export_round(reader, outcome["round"])
            assert _replay("ROU-01", "roulette", exported.events) == [_as_replayed(outcome)]


def test_time_range_and_all(roulette: tuple[Path, list[dict[str, Any]]]) -> None:
    path, _ = roulette
    with JournalReader(path) as reader:
        everything = export_all(reader)
        assert len(everything.events) == 16
        since = parse_ts("2026-11-30T10:00:30Z")
        until = parse_ts("2026-11-30T10:01:00Z")
        part = export_time_range(reader, since, until)
    assert part.events
    assert all("2026-11-30T10:00:30" <= e["ts"] < "2026-11-30T10:01:00" for e in part.events)
    assert all(r["type"] != "outcome" for r in part.events)


def test_unknown_round_is_an_error(roulette: tuple[Path, list[dict[str, Any]]]) -> None:
    path, _ = roulette
    with JournalReader(path) as reader, pytest.raises(ExportError, match="no outcome"):
        export_round(reader, "ROU-01-999999")


def test_a_broken_journal_exports_nothing(roulette: tuple[Path, list[dict[str, Any]]]) -> None:
    path, _ = roulette
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE records SET body = replace(body, '17', '18') WHERE seq = 4")
    conn.close()
    with pytest.raises(ChainBrokenError) as info:
        JournalReader(path)
    assert info.value.seq == 4


def test_export_of_a_live_journal_works_on_a_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "ROU-01.sqlite"
    events = _events("roulette-rounds.jsonl")
    with Journal(path, "ROU-01") as journal:
        runner = TableRunner(
            table_id="ROU-01",
            engine=build_engine("ROU-01", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(1_764_496_800.0),
        )
        for event in events[:4]:
            runner.committer.handle(event)
        (outcome,) = [r for r in journal.records() if r["type"] == "outcome"]
        before = sorted(p.name for p in tmp_path.iterdir())
        with JournalReader(path) as reader:
            exported = export_round(reader, outcome["round"])
            runner.committer.handle(events[4])  # the service goes on appending meanwhile
        assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert len(exported.events) == 4


def test_cli(
    roulette: tuple[Path, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, outcomes = roulette
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    out, evidence = tmp_path / "round.jsonl", tmp_path / "records.jsonl"
    args = parser.parse_args(
        [
            "--journal",
            str(path),
            "--round",
            outcomes[1]["round"],
            "--out",
            str(out),
            "--records",
            str(evidence),
        ]
    )
    assert run(args) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert _replay("ROU-01", "roulette", lines) == [_as_replayed(outcomes[1])]
    records = [json.loads(line) for line in evidence.read_text(encoding="utf-8").splitlines()]
    assert records[-1] == outcomes[1]
    assert "export: 4 events" in capsys.readouterr().err
    # stdout, and a time range
    assert (
        run(
            parser.parse_args(
                [
                    "--journal",
                    str(path),
                    "--since",
                    "2026-11-30T10:00:30Z",
                    "--until",
                    "2026-11-30T10:00:31Z",
                ]
            )
        )
        == 0
    )
    assert capsys.readouterr().out.count("\n") == 1
    with pytest.raises(ExportError, match="--until needs --since"):
        run(parser.parse_args(["--journal", str(path), "--all", "--until", "2026-11-30T10:00:31Z"]))
    with pytest.raises(ExportError, match="not an ISO"):
        run(parser.parse_args(["--journal", str(path), "--since", "yesterday"]))
    with pytest.raises(SystemExit):
        parser.parse_args(["--journal", str(path), "--all", "--round", "x"])


def test_outcome_type_is_what_the_engine_produces() -> None:
    # Guards the premise: replay's outcome payload is the journal's minus its own fields.
    outcome = Outcome(table="T", game="roulette", round="T-000001", status="settled")
    assert set(outcome.to_payload()) == {
        "schema",
        "table",
        "game",
        "round",
        "ts",
        "status",
        "reason",
        "result",
    }


def test_cli_with_config_checks_itself(
    roulette: tuple[Path, list[dict[str, Any]]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path, outcomes = roulette
    config = tmp_path / "table.toml"
    config.write_text(
        f'[table]\nid = "ROU-01"\ngame = "roulette"\n[journal]\npath = "{path}"\n',
        encoding="utf-8",
    )
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    assert run(parser.parse_args(["--config", str(config), "--round", outcomes[0]["round"]])) == 0
    assert "reproduces the journal's outcome" in capsys.readouterr().err
    # Rules that differ from the live ones: the export says so and exits non-zero.
    config.write_text(
        config.read_text(encoding="utf-8") + "[rules]\nmin_revolutions = 20\n", encoding="utf-8"
    )
    assert run(parser.parse_args(["--config", str(config), "--round", outcomes[0]["round"]])) == 1
    assert "does not reproduce" in capsys.readouterr().err
