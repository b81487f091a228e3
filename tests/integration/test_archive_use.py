"""Using the floor's archive (issue 17, item 4): export, verify and statistics from PostgreSQL.

Real parts: a private PostgreSQL (``postgres_dsn``: a fresh database on the session's server,
``initdb`` on a free port), the archive's own schema (``migrate``), and real journals — events
run through the table runner into a real (keyed) journal, whose records are stored in ``records``
as the archiver stores them: the published bytes (a card dealt face down withheld, as the outbox
publishes it), their hash and link. The archiver itself is not needed to test the read side.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

from tablectl.controller.archive.ingest import Ingest, parse_published
from tablectl.controller.archive.reader import ArchiveReader, open_archive
from tablectl.controller.archive.schema import migrate
from tablectl.controller.archive.verifier import KeyRing, Verifier
from tablectl.controller.core.events import TableEvent, event_from_json
from tablectl.controller.core.time import format_moment, parse_moment, parse_ts
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import (
    Journal,
    JournalRecord,
    KeyedAnchors,
    canonical_json,
    record_hash,
)
from tablectl.controller.mqtt.outbound import published_payload
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.cli import main
from tablectl.controller.tools.export import export_round, export_time_range
from tablectl.controller.tools.journal_reader import JournalReader
from tablectl.drivers.clock import ManualClock
from tests.support.mosquitto import free_port

pytestmark = pytest.mark.slow  # a PostgreSQL server (one per worker) and real journals

DATA = Path(__file__).resolve().parents[1] / "data" / "replay"
KEY = b"9c1e5a7b3d2f4e6a8b0c1d2e3f4a5b6c"
NOW = datetime(2026, 3, 31, tzinfo=UTC)
"""The verifier's "now": after every record these tests write (its windows are relative)."""


# -- building journals and storing them as the archiver does ---------------------------------------


def _events(name: str) -> list[TableEvent]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [event_from_json(line) for line in lines if line.strip()]


def _journal(
    path: Path,
    table: str,
    game: str,
    batches: Sequence[Sequence[TableEvent]],
    *,
    keyed: bool = False,
) -> list[JournalRecord]:
    """Run the events through the real runner into a real journal; every record journaled."""
    anchors = KeyedAnchors(KEY, every=5) if keyed else None
    with Journal(path, table, anchors=anchors) as journal:
        runner = TableRunner(
            table_id=table,
            engine=build_engine(table, game, {}, source="test"),
            journal=journal,
            clock=ManualClock(1_764_496_800.0),
        )
        for batch in batches:
            runner.committer.handle_batch(list(batch))
        return list(journal.records())


def _spins(start: str, numbers: Iterable[int], every: timedelta) -> list[list[TableEvent]]:
    """Roulette rounds, one spin per ``every`` from ``start``: round_open, bets_closed, number."""
    moment = parse_moment(start, "start")
    batches = []
    for number in numbers:
        for offset, line in enumerate(
            ({"type": "round_open"}, {"type": "bets_closed"}, {"type": "winning_number"})
        ):
            fields: dict[str, Any] = {
                **line,
                "ts": format_moment(moment + timedelta(seconds=offset)),
            }
            if line["type"] == "winning_number":
                fields["number"] = number
            batches.append([event_from_json(json.dumps(fields))])
        moment += every
    return batches


def _store(dsn: str, records: Iterable[JournalRecord]) -> None:
    """Store the records as the archiver does: each as the outbox publishes it (a face-down
    card withheld), parsed and inserted by the archive's own ingest (one batch)."""
    _ingest(
        dsn,
        [published_payload(r.type, canonical_json(r).encode("utf-8")) for r in records],
    )


def _ingest(dsn: str, payloads: Iterable[bytes]) -> None:
    """Parse and insert published payloads by the archive's own ingest (one batch)."""
    batch = [parse_published(json.loads(p)["table"], p) for p in payloads]

    async def store() -> None:
        conn = await psycopg.AsyncConnection.connect(dsn)
        try:
            await Ingest().store(conn, batch)
        finally:
            await conn.close()

    asyncio.run(store())


def _verify(dsn: str) -> None:
    """The archiver's verification passes over every table until none advances (what a running
    archiver does after storing): statistics count only records up to the verified head."""

    async def passes() -> None:
        verifier = Verifier(KeyRing(), gap_timeout=3600)
        conn = await psycopg.AsyncConnection.connect(dsn)
        try:
            for table in await Verifier.tables(conn):
                while (done := await verifier.verify(conn, table, NOW)) and done.walk.checked:
                    pass
        finally:
            await conn.close()

    asyncio.run(passes())


def _execute(dsn: str, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cursor = conn.execute(sql, params)  # type: ignore[arg-type]
        return cursor.fetchall() if cursor.description else []


def _rewrite(dsn: str, fields: dict[str, Any]) -> None:
    """Replace a stored record (by table and seq) with ``fields``: raw, jsonb and columns."""
    raw = canonical_json(fields).encode("utf-8")
    _execute(
        dsn,
        "UPDATE records SET raw = %s, record = %s, hash = %s, prev_hash = %s"
        " WHERE table_id = %s AND seq = %s",
        (raw, Jsonb(fields), fields["hash"], fields["prev_hash"], fields["table"], fields["seq"]),
    )


@pytest.fixture
def archive_dsn(postgres_dsn: str) -> str:
    with psycopg.connect(postgres_dsn) as conn:
        migrate(conn)
    return postgres_dsn


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "etc" / "journal.key"
    path.parent.mkdir()
    path.write_bytes(KEY)
    os.chmod(path, 0o600)
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()  # not what came before (the runner's log lines when run alone)
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# -- export ---------------------------------------------------------------------------------------


def _roulette_batches() -> list[list[TableEvent]]:
    """Each round's deciding event and the next round_open in one group commit (as in
    tests/controller/tools/test_export.py), so a round's records interleave with the next one's."""
    batches: list[list[TableEvent]] = []
    for event in _events("roulette-rounds.jsonl"):
        if event.type == "round_open" and batches and batches[-1][-1].type == "winning_number":
            batches[-1].append(event)
        else:
            batches.append([event])
    return batches


def test_export_from_the_archive_equals_export_from_the_journal(
    archive_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rou = tmp_path / "ROU-01.sqlite"
    bac = tmp_path / "BAC-01.sqlite"
    _store(archive_dsn, _journal(rou, "ROU-01", "roulette", _roulette_batches()))
    _store(
        archive_dsn,
        _journal(bac, "BAC-01", "baccarat", [[e] for e in _events("baccarat-shoe.jsonl")]),
    )

    with (
        JournalReader(rou) as journal,
        open_archive(archive_dsn) as archive,
    ):
        stored = ArchiveReader(archive, "ROU-01")
        rounds = [r["round"] for r in journal.records() if r.type == "outcome"]
        assert len(rounds) == 5
        for round_id in rounds:
            want, got = export_round(journal, round_id), export_round(stored, round_id)
            assert got.events == want.events
            assert [r.fields for r in got.records] == [r.fields for r in want.records]
        since, until = parse_ts("2026-11-30T10:00:30Z"), parse_ts("2026-11-30T10:01:30Z")
        window = export_time_range(stored, since, until)
        assert window.events == export_time_range(journal, since, until).events
        assert {e["type"] for e in window.events} >= {"round_open", "winning_number", "no_spin"}

    with JournalReader(bac) as journal, open_archive(archive_dsn) as archive:

        def engine() -> Any:
            return build_engine("BAC-01", "baccarat", {}, source="test")

        for outcome in [r for r in journal.records() if r.type == "outcome"]:
            want = export_round(journal, outcome["round"], engine)
            got = export_round(ArchiveReader(archive, "BAC-01"), outcome["round"], engine)
            assert got.reproduced
            assert want.reproduced
            assert got.events == want.events

    # The command line: one export, two sources, the same lines.
    for flags in (
        ["--round", rounds[2]],
        ["--since", "2026-11-30T10:00:30Z", "--until", "2026-11-30T10:01:30Z"],
    ):
        code, _, err = _run(
            capsys, "export", "--journal", str(rou), *flags, "--out", str(tmp_path / "j.jsonl")
        )
        assert code == 0, err
        code, _, err = _run(
            capsys,
            "export",
            "--dsn",
            archive_dsn,
            "--table",
            "ROU-01",
            *flags,
            "--out",
            str(tmp_path / "a.jsonl"),
            "--records",
            str(tmp_path / "a.records"),
        )
        assert code == 0, err
        assert (tmp_path / "a.jsonl").read_text() == (tmp_path / "j.jsonl").read_text()
    code, _, err = _run(
        capsys, "export", "--dsn", archive_dsn, "--table", "ROU-01", "--round", "ROU-01-999999"
    )
    assert code == 1
    assert err.startswith("tablectl export: round 'ROU-01-999999' has no outcome in archive ")
    assert err.count("\n") == 1


# -- verify ---------------------------------------------------------------------------------------


@pytest.fixture
def keyed_roulette(archive_dsn: str, tmp_path: Path) -> list[JournalRecord]:
    """ROU-01's keyed journal (an anchor every 5 records), stored in the archive."""
    numbers = [17, 0, 32, 5, 23, 8, 36, 11, 2, 29]
    records = _journal(
        tmp_path / "ROU-01.sqlite",
        "ROU-01",
        "roulette",
        _spins("2026-03-02T10:00:00Z", numbers, timedelta(minutes=1)),
        keyed=True,
    )
    _store(archive_dsn, records)
    return records


def _restore(dsn: str, records: Sequence[JournalRecord]) -> None:
    _execute(dsn, "DELETE FROM records")
    _store(dsn, records)


def test_with_the_key_a_table_nothing_keyed_vouches_for_fails(
    archive_dsn: str,
    keyed_roulette: list[JournalRecord],
    key_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 26: a whole fake table of records (chain-valid, no key) passed
    ``verify --dsn --key``. Without the key it still verifies (order, not authorship)."""
    fake = _journal(
        tmp_path / "FAKE-01.sqlite",
        "FAKE-01",
        "roulette",
        _spins("2026-03-02T10:00:00Z", [0] * 30, timedelta(minutes=1)),
    )
    _store(archive_dsn, fake)
    code, out, err = _run(capsys, "verify", "--dsn", archive_dsn)
    assert code == 0, err
    assert "OK: FAKE-01" in out
    code, out, err = _run(capsys, "verify", "--dsn", archive_dsn, "--key", str(key_file))
    assert code == 1
    assert f"FAKE-01: no keyed evidence: none of its {len(fake)} records" in err
    assert f"OK: ROU-01: {len(keyed_roulette)} records" in out  # the keyed table still passes


def test_verify_names_what_was_changed_in_the_archive(
    archive_dsn: str,
    keyed_roulette: list[JournalRecord],
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = keyed_roulette
    count = len(records)
    anchors = [r.seq for r in records if r.type == "anchor"]
    assert len(anchors) >= 4

    code, out, err = _run(capsys, "verify", "--dsn", archive_dsn)
    assert (code, err) == (0, "")
    assert f"OK: ROU-01: {count} records, hash chain intact (seq 1-{count};" in out
    assert "proves order, not authorship" in out
    code, out, err = _run(capsys, "verify", "--dsn", archive_dsn, "--key", str(key_file))
    assert code == 0, err
    assert (
        f"keyed: {len(anchors)} anchor(s) match, {count} record(s) carry their own auth: the key"
        f" vouches for seq 1-{count}" in out
    )

    def broken(*flags: str) -> str:
        code, out, err = _run(capsys, "verify", "--dsn", archive_dsn, *flags)
        assert code == 1, out
        assert err.count("\n") == 1
        return err

    number = next(r for r in records if r.type == "winning_number")
    # A changed byte in the published bytes: the jsonb no longer says the same.
    raw = canonical_json(number).encode()
    forged = raw.replace(b'"number":17', b'"number":19')
    _execute(archive_dsn, "UPDATE records SET raw = %s WHERE seq = %s", (forged, number.seq))
    assert broken() == (
        f"tablectl verify: ROU-01: hash chain broken at seq {number.seq}: record column (jsonb)"
        " differs from the published bytes\n"
    )
    # ... and with the jsonb changed to match: the content no longer matches its hash.
    _execute(
        archive_dsn,
        "UPDATE records SET record = %s WHERE seq = %s",
        (Jsonb(json.loads(forged)), number.seq),
    )
    assert broken() == (
        f"tablectl verify: ROU-01: hash chain broken at seq {number.seq}: content does not"
        " match its hash\n"
    )
    _restore(archive_dsn, records)

    # A deleted row: the gap is named with its seq range.
    _execute(archive_dsn, "DELETE FROM records WHERE seq IN (12, 13)")
    assert broken().startswith(
        "tablectl verify: ROU-01: hash chain broken at seq 12: records 12-13 missing"
        " (next seq is 14;"
    )
    _restore(archive_dsn, records)

    # A forged prev_hash, the record itself rehashed: its link is what breaks.
    victim = records[14].as_dict()
    victim["prev_hash"] = "f" * 64
    victim["hash"] = record_hash(victim["prev_hash"], victim)
    _rewrite(archive_dsn, victim)
    assert broken() == (
        f"tablectl verify: ROU-01: hash chain broken at seq {victim['seq']}: prev_hash does not"
        " match the previous record's hash\n"
    )
    _restore(archive_dsn, records)


def test_verify_with_the_key_names_the_well_informed_forger(
    archive_dsn: str,
    keyed_roulette: list[JournalRecord],
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    records = keyed_roulette
    anchors = [r.seq for r in records if r.type == "anchor"]

    def broken(*flags: str) -> str:
        code, out, err = _run(capsys, "verify", "--dsn", archive_dsn, *flags)
        assert code == 1, out
        assert err.count("\n") == 1
        return err

    # The well-informed forger: a settled number changed and the whole chain recomputed after
    # it, anchors' head_hash included. Unkeyed it verifies; with the key, the changed record's
    # own auth names it (issue 26) — kept, it does not match; stripped, it is missing after
    # authenticated records; and in a journal from before per-record auth (none anywhere), the
    # first anchor after it does.
    def recompute(strip: str) -> int:
        prev = None
        changed = 0
        for record in records:
            fields = record.as_dict()
            if strip == "all":
                fields.pop("auth")
            if record.type == "winning_number" and not changed:
                fields["number"] = 19
                changed = record.seq
            if changed:
                if strip == "forged":
                    fields.pop("auth", None)
                fields["prev_hash"] = prev or fields["prev_hash"]
                if fields["type"] == "anchor":
                    fields["head_hash"] = fields["prev_hash"]
                fields["hash"] = record_hash(fields["prev_hash"], fields)
            if changed or strip == "all":
                _rewrite(archive_dsn, fields)
            prev = fields["hash"]
        code, _, err = _run(capsys, "verify", "--dsn", archive_dsn)
        assert code == 0, err
        return changed

    changed = recompute("kept")
    assert broken("--key", str(key_file)) == (
        f"tablectl verify: ROU-01: seq {changed}: record auth does not match the record: not"
        " written with this key (forged, or the key is not this table's)\n"
    )
    _restore(archive_dsn, records)
    changed = recompute("forged")
    assert broken("--key", str(key_file)) == (
        f"tablectl verify: ROU-01: seq {changed}: record has no auth after authenticated records"
        " (stripped?)\n"
    )
    _restore(archive_dsn, records)
    changed = recompute("all")
    first_anchor = next(a for a in anchors if a > changed)
    assert broken("--key", str(key_file)) == (
        f"tablectl verify: ROU-01: seq {first_anchor}: anchor mac does not match the chain head"
        f" it names (seq {first_anchor - 1}): records up to it are not the ones keyed (chain"
        " recomputed?), or the key is not this table's\n"
    )


def test_a_card_published_face_down_is_linked_not_rehashed(
    archive_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Journal(tmp_path / "BJ-01.sqlite", "BJ-01") as journal:
        journal.append([{"type": "shuffle_completed", "ts": "2026-03-02T10:00:00Z", "cards": 416}])
        journal.append(
            [{"type": "card", "ts": "2026-03-02T10:00:01Z", "card": "KH", "face_down": True}]
        )
        journal.append([{"type": "card", "ts": "2026-03-02T10:00:02Z", "card": "2C"}])
        records = list(journal.records())
    _store(archive_dsn, records)
    stored = _execute(
        archive_dsn, "SELECT record->>'card', record->>'withheld' FROM records WHERE seq = 2"
    )
    assert stored == [(None, "true")]

    code, out, err = _run(capsys, "verify", "--dsn", archive_dsn)
    assert code == 0, err
    assert "1 card(s) published face down (withheld): linked, not re-hashed" in out
    # Claiming "withheld" on a card that was not dealt face down hides nothing …
    fields = records[2].as_dict() | {"card": None, "withheld": True}
    _rewrite(archive_dsn, fields)
    code, _, err = _run(capsys, "verify", "--dsn", archive_dsn)
    assert code == 1
    assert "hash chain broken at seq 3: content does not match its hash" in err
    _restore(archive_dsn, records)
    # … nor on a record that is no card: its changed body is a break.
    fields = records[0].as_dict() | {"cards": 312, "withheld": True}
    _rewrite(archive_dsn, fields)
    code, _, err = _run(capsys, "verify", "--dsn", archive_dsn)
    assert code == 1
    assert err == (
        "tablectl verify: BJ-01: hash chain broken at seq 1: content does not match its hash\n"
    )


# -- detached months -------------------------------------------------------------------------------


@pytest.fixture
def two_months_detached(
    archive_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> tuple[list[JournalRecord], list[JournalRecord], Path]:
    """ROU-01 (keyed) spinning every 9 days from January to April 2024, ROU-02 in February and
    March; January and February detached to files."""
    rou1 = _journal(
        tmp_path / "ROU-01.sqlite",
        "ROU-01",
        "roulette",
        _spins("2024-01-03T12:00:00Z", range(12), timedelta(days=9)),
        keyed=True,
    )
    rou2 = _journal(
        tmp_path / "ROU-02.sqlite",
        "ROU-02",
        "roulette",
        _spins("2024-02-10T12:00:00Z", range(5), timedelta(days=9)),
    )
    code, out, err = _run(
        capsys, *f"archive-admin create --dsn {archive_dsn} --from 2024-01 --months 2".split()
    )
    assert (code, out) == (0, "created 2 partition(s): 2024-01, 2024-02\n"), err
    _store(archive_dsn, [*rou1, *rou2])
    detached = tmp_path / "detached"
    code, out, err = _run(
        capsys,
        *f"archive-admin detach --dsn {archive_dsn} --before 2024-03 --to {detached}".split(),
    )
    assert code == 0, err
    assert "2024-01: " in out
    assert "2024-02: " in out
    return rou1, rou2, detached


def test_detached_months_and_the_archive_verify_as_one_chain(
    archive_dsn: str,
    two_months_detached: tuple[list[JournalRecord], list[JournalRecord], Path],
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    rou1, rou2, detached = two_months_detached
    assert sorted(p.name for p in detached.iterdir()) == ["records_2024_01", "records_2024_02"]
    february = detached / "records_2024_02"
    assert sorted(p.name for p in february.iterdir()) == [
        "ROU-01.jsonl.gz",
        "ROU-02.jsonl.gz",
        "manifest.json",
    ]
    remaining = _execute(archive_dsn, "SELECT count(*) FROM records")[0][0]
    assert 0 < remaining < len(rou1) + len(rou2)
    code, out, _ = _run(capsys, "archive-admin", "partitions", "--dsn", archive_dsn)
    assert "2024-01  detached to " in out
    assert not out.startswith("2024-01  records_2024_01")  # dropped once exported

    # Files and archive as one chain, with the key; the archive alone; the files alone.
    dsn = archive_dsn
    code, out, err = _run(
        capsys,
        *f"verify --dsn {dsn} --archive-file {detached} --key {key_file} --table ROU-01".split(),
    )
    assert code == 0, err
    assert f"OK: ROU-01: {len(rou1)} records, hash chain intact (seq 1-{len(rou1)};" in out
    assert "keyed: " in out
    code, out, err = _run(capsys, "verify", "--dsn", dsn)
    assert code == 0, err
    assert "not read: in detached months" in out
    code, out, err = _run(capsys, "verify", str(detached))  # recognised as detached months
    assert code == 0, err
    assert out.count("OK: ") == 2
    # Only January given: February's records are detached, not missing.
    code, out, err = _run(
        capsys, *f"verify --dsn {dsn} --archive-file {detached / 'records_2024_01'}".split()
    )
    assert code == 0, err
    assert "detached (records_2024_02; its files not given)" in out

    # Repeating the detach finds nothing more; a month too recent is refused in one line.
    detach = f"archive-admin detach --dsn {dsn} --to {detached} --before"
    code, out, _ = _run(capsys, *f"{detach} 2024-03".split())
    assert (code, out) == (0, "nothing to detach before 2024-03\n")
    code, _, err = _run(capsys, *f"{detach} {format_moment(datetime.now(UTC))[:7]}".split())
    assert code == 1
    assert "a month detached must have ended 100 days ago" in err
    assert err.count("\n") == 1


def test_a_line_cut_from_a_detached_month_is_a_named_gap(
    archive_dsn: str,
    two_months_detached: tuple[list[JournalRecord], list[JournalRecord], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, _, detached = two_months_detached
    month = detached / "records_2024_02"
    data = month / "ROU-01.jsonl.gz"
    lines = gzip.decompress(data.read_bytes()).splitlines(keepends=True)
    cut = json.loads(lines[1])["seq"]
    data.write_bytes(gzip.compress(b"".join(lines[:1] + lines[2:])))
    verify = f"verify --dsn {archive_dsn} --archive-file {detached}".split()
    code, _, err = _run(capsys, *verify)
    assert code == 1
    assert "differs from its manifest (sha256): altered or replaced" in err
    # The manifest rewritten to match: the chain across the files and the archive names it.
    manifest = json.loads((month / "manifest.json").read_text())
    entry = manifest["tables"]["ROU-01"]
    entry["sha256"] = hashlib.sha256(data.read_bytes()).hexdigest()
    entry["records"] -= 1
    (month / "manifest.json").write_text(json.dumps(manifest))
    code, _, err = _run(capsys, *verify)
    assert code == 1
    assert f"ROU-01: hash chain broken at seq {cut}: records {cut}-{cut} missing" in err


# -- statistics -----------------------------------------------------------------------------------


def test_diag_stats_over_two_tables_and_a_window(
    archive_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    january = [7, 7, 12, 30, 7, 0]
    february = [3, 3, 3, 19, 25]
    rou1 = _spins("2026-01-20T10:00:00Z", january, timedelta(days=2))
    rou1 += _spins("2026-02-03T10:00:00Z", february, timedelta(days=2))
    rou2 = _spins("2026-02-01T10:00:00Z", [1, 2, 3, 4], timedelta(days=1))
    _store(archive_dsn, _journal(tmp_path / "R1.sqlite", "ROU-01", "roulette", rou1))
    _store(archive_dsn, _journal(tmp_path / "R2.sqlite", "ROU-02", "roulette", rou2))
    _store(
        archive_dsn,
        _journal(
            tmp_path / "B1.sqlite",
            "BAC-01",
            "baccarat",
            [[e] for e in _events("baccarat-shoe.jsonl")],
        ),
    )
    _verify(archive_dsn)

    code, out, err = _run(
        capsys,
        "diag",
        "stats",
        "--dsn",
        archive_dsn,
        "--json",
        "--since",
        "2026-02-01T00:00:00Z",
        "--until",
        "2026-03-01T00:00:00Z",
    )
    assert code == 0, err
    assert err.endswith(
        "authorship unverified (no --key): the hash chain proves order, not authorship\n"
    ), err  # beside the JSON, once
    assert err.count("authorship unverified") == 1
    docs = {d["table"]: d for d in map(json.loads, out.splitlines())}
    assert set(docs) == {"ROU-01", "ROU-02", "BAC-01"}
    assert docs["BAC-01"]["kind"] == "shuffle"
    counts = {f["number"]: f["count"] for f in docs["ROU-01"]["journal_stats"]["frequencies"]}
    assert docs["ROU-01"]["window"]["spins"] == len(february)
    assert {n: c for n, c in counts.items() if c} == {3: 3, 19: 1, 25: 1}
    assert docs["ROU-02"]["window"]["spins"] == 4

    # Per month, one table: January's and February's spins apart.
    code, out, err = _run(
        capsys, "diag", "stats", "--dsn", archive_dsn, "--table", "ROU-01", "--per-month", "--json"
    )
    assert code == 0, err
    months = [json.loads(line) for line in out.splitlines()]
    assert [m["window"]["spins"] for m in months] == [len(january), len(february)]
    assert months[0]["window"]["first"]["ts"].startswith("2026-01-20")
    # The text report names the table and the archive window.
    code, out, err = _run(capsys, "diag", "stats", "--dsn", archive_dsn, "--table", "ROU-02")
    assert code == 0, err
    assert out.startswith("wheel bias, table ROU-02, archive ")
    assert "settled spins: 4" in out


def test_diag_stats_counts_only_verified_and_authenticated_records(
    archive_dsn: str, tmp_path: Path, key_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 26: 300 forged spins of 0 made the archive's wheel report FLAGGED. Only records the
    archiver verified in their chain count, and with the key only those whose own auth is the
    table's; the report says how many it left out."""
    numbers = [7, 12, 30, 0, 3, 19, 25, 7, 12, 30]
    records = _journal(
        tmp_path / "R1.sqlite",
        "ROU-01",
        "roulette",
        _spins("2026-02-03T10:00:00Z", numbers, timedelta(minutes=1)),
        keyed=True,
    )
    _store(archive_dsn, records)
    _verify(archive_dsn)
    # Forgeries after the verified head: chain-valid zeros with no auth (a forger has no key),
    # stored behind admission's back, as a database written by an archiver without --key holds.
    template = next(r for r in reversed(records) if r.type == "outcome").as_dict()
    prev, seq, forged = records[-1].hash, records[-1].seq, []
    for minute in range(30):
        seq += 1
        fields: dict[str, Any] = {k: v for k, v in template.items() if k not in ("auth", "hash")}
        fields |= {
            "seq": seq,
            "ts": format_moment(datetime(2026, 2, 3, 12, minute, tzinfo=UTC)),
            "round": f"ROU-01-{900 + minute}",
            "result": template["result"] | {"number": 0, "color": "green"},
            "prev_hash": prev,
        }
        fields["hash"] = prev = record_hash(prev, fields)
        forged.append(fields)
    _ingest(archive_dsn, [canonical_json(f).encode() for f in forged])
    spins = len(numbers)

    def stats(*flags: str) -> tuple[dict[str, Any], str]:
        code, out, err = _run(capsys, "diag", "stats", "--dsn", archive_dsn, "--json", *flags)
        assert code == 0, err
        return json.loads(out), err

    # Before the verifier reaches them, the forgeries are not counted, and the report says so.
    doc, err = stats()
    assert doc["window"]["spins"] == spins
    assert "ROU-01: 30 record(s) after the archive's verified head" in err
    # The forged chain links: an archiver without the key verifies it. Unkeyed, they count …
    _verify(archive_dsn)
    doc, err = stats()
    assert doc["window"]["spins"] == spins + 30
    assert "authorship unverified" in err
    # … with the key, they do not, and the report names them.
    doc, err = stats("--key", str(key_file))
    assert doc["window"]["spins"] == spins
    assert "authorship unverified" not in err
    assert "ROU-01: 30 record(s) left out: their auth does not match the table's key" in err
    # The text report says it on its own lines.
    code, out, _ = _run(capsys, "diag", "stats", "--dsn", archive_dsn, "--key", str(key_file))
    assert code == 0
    assert f"settled spins: {spins}" in out
    assert "30 record(s) left out" in out


def test_export_from_the_archive_checks_each_records_auth_with_the_key(
    archive_dsn: str,
    keyed_roulette: list[JournalRecord],
    key_file: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    export = ["export", "--dsn", archive_dsn, "--table", "ROU-01", "--all"]
    code, _, err = _run(capsys, *export)
    assert code == 0, err
    assert "authorship unverified (no --key)" in err
    code, _, err = _run(capsys, *export, "--key", str(key_file))
    assert code == 0, err
    assert "authorship unverified" not in err
    # A settled number changed, rehashed, its auth kept: the key names it.
    number = next(r for r in keyed_roulette if r.type == "winning_number")
    fields = number.as_dict() | {"number": 19}
    fields["hash"] = record_hash(fields["prev_hash"], fields)
    _rewrite(archive_dsn, fields)
    later = keyed_roulette[number.seq]  # the next record links to the forged hash
    relinked = later.as_dict() | {"prev_hash": fields["hash"]}
    relinked["hash"] = record_hash(relinked["prev_hash"], relinked)
    _rewrite(archive_dsn, relinked)
    code, _, err = _run(capsys, *export, "--key", str(key_file))
    assert code == 1
    assert f"seq {number.seq}" in err
    assert "record auth does not match the record" in err
    assert err.count("\n") == 1


# -- errors ---------------------------------------------------------------------------------------


def test_a_bad_dsn_is_one_line_and_never_shows_the_password(
    postgres_dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    down = f"postgresql://tablectl:s3cret@127.0.0.1:{free_port()}/archive"
    for argv in (
        ["verify", "--dsn", down],
        ["export", "--dsn", down, "--table", "ROU-01", "--all"],
        ["diag", "stats", "--dsn", down],
        ["archive-admin", "partitions", "--dsn", down],
        ["verify", "--dsn", "nonsense=1"],
        # Not readable: libpq quotes the URL whole, password included.
        ["verify", "--dsn", "postgresql://tablectl:s3cret@[::1"],
        ["export", "--dsn", "postgresql://tablectl:s3cret@[::1", "--table", "ROU-01", "--all"],
        ["verify", "--dsn", "nonsense=1 password=s3cret"],
        ["diag", "stats", "--dsn", "PGPASSWORD=s3cret host=127.0.0.1"],
        ["archive-admin", "partitions", "--dsn", "password=my s3cret host=127.0.0.1"],
    ):
        code, _, err = _run(capsys, *argv)
        assert code == 1, argv
        assert err.count("\n") == 1, err
        assert err.startswith(f"tablectl {argv[0]}"), err
        assert "s3cret" not in err
        assert "Traceback" not in err
    # A database that is no archive says so.
    code, _, err = _run(capsys, "verify", "--dsn", postgres_dsn)
    assert code == 1
    assert "no archive here (no 'records' table" in err
