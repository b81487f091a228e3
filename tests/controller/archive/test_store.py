"""Storing and verifying in a real PostgreSQL: idempotent inserts, conflicts, gaps, partitions.

The archive's database side without MQTT: batches of real published records
(tests/controller/archive/published.py) go through :class:`Ingest` and :class:`Verifier` as
the archiver drives them.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from tablectl.controller.archive.chains import ChainState
from tablectl.controller.archive.db import (
    ArchiveConfigError,
    ArchiveUnavailableError,
    connect,
    connect_async,
)
from tablectl.controller.archive.ingest import (
    Incoming,
    Ingest,
    MalformedRecordError,
    parse_published,
)
from tablectl.controller.archive.schema import MIGRATIONS, applied_versions, migrate
from tablectl.controller.archive.verifier import KeyRing, Verifier
from tablectl.controller.journal import canonical_json
from tests.controller.archive.published import KEY, Published, publish_journal

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def archive(postgres_dsn: str) -> str:
    with connect(postgres_dsn, autocommit=True) as conn:
        migrate(conn, now=T0)
    return postgres_dsn


def _incoming(published: list[Published]) -> list[Incoming]:
    return [parse_published(p.table, p.payload) for p in published]


def _rows(dsn: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with connect(dsn) as conn:
        return conn.execute(sql.encode(), params).fetchall()


def test_migrations_run_once_and_make_this_and_next_month(postgres_dsn: str) -> None:
    with connect(postgres_dsn, autocommit=True) as conn:
        assert migrate(conn, now=T0) == [1, 2, 3]
        assert migrate(conn, now=T0) == []
        assert applied_versions(conn) == [1, 2, 3]
    names = {r[0] for r in _rows(postgres_dsn, "SELECT relname FROM pg_class WHERE relkind = 'r'")}
    assert {"records_2026_11", "records_2026_12", "archive_tables", "archive_gaps"} <= names
    assert "archive_detached" in names  # the archiver's ingest reads it: the schema's own


def test_an_archive_whose_detach_made_the_catalog_itself_migrates(postgres_dsn: str) -> None:
    # archive-admin detach of the first release created archive_detached at run time.
    with connect(postgres_dsn, autocommit=True) as conn:
        migrate(conn, now=T0, migrations=MIGRATIONS[:1])
        conn.execute(
            "CREATE TABLE archive_detached (month text PRIMARY KEY, manifest jsonb NOT NULL,"
            " directory text NOT NULL, detached_at timestamptz NOT NULL DEFAULT now())"
        )
        conn.execute("INSERT INTO archive_detached VALUES ('2019-03', '{}', '/srv/a')")
        assert migrate(conn, now=T0) == [2, 3]
    assert _rows(postgres_dsn, "SELECT month FROM archive_detached") == [("2019-03",)]


def test_a_bad_dsn_and_a_missing_server_are_one_line_errors(postgres_dsn: str) -> None:
    with pytest.raises(ArchiveConfigError, match="scheme must be postgresql"):
        connect("mysql://x/y")
    with pytest.raises(ArchiveConfigError, match="--dsn"):
        connect("host=x port")
    with pytest.raises(ArchiveUnavailableError, match=r"PostgreSQL 127\.0\.0\.1:1/nope") as err:
        connect("postgresql://u@127.0.0.1:1/nope")
    assert "\n" not in str(err.value)


def test_parse_refuses_what_is_not_a_record_of_the_topics_table(tmp_path: Path) -> None:
    [first, *_] = publish_journal(tmp_path / "j.sqlite", "T1", rounds=1)
    assert parse_published("T1", first.payload).seq == 1
    with pytest.raises(MalformedRecordError, match="names table 'T1', not its topic's"):
        parse_published("T2", first.payload)
    for bad in (b"nope", b"[1]", b'{"seq": 1, "table": "T1"}', "é".encode("latin-1")):
        with pytest.raises(MalformedRecordError):
            parse_published("T1", bad)


async def test_redelivery_is_harmless_and_the_chain_verifies(archive: str, tmp_path: Path) -> None:
    published = publish_journal(tmp_path / "j.sqlite", "T1", rounds=4)
    ingest, verifier = Ingest(), Verifier(KeyRing(KEY), gap_timeout=5)
    conn = await connect_async(archive)
    async with conn:
        first = await ingest.store(conn, _incoming(published))
        again = await ingest.store(conn, _incoming(published) + _incoming(published[:3]))
        assert (first.inserted, first.duplicates) == (len(published), 0)
        assert (again.inserted, again.duplicates) == (0, len(published))
        result = await verifier.verify(conn, "T1", T0)
    assert result is not None
    assert result.walk.state.verified_seq == len(published)
    assert result.walk.withheld == 4
    assert result.broke is None
    assert result.gaps.open == []
    rows = _rows(archive, "SELECT seq, type, round, record, raw, hash FROM records ORDER BY seq")
    assert [r[0] for r in rows] == list(range(1, len(published) + 1))
    for (seq, kind, round_id, record, raw, digest), sent in zip(rows, published, strict=True):
        assert (seq, kind, bytes(raw)) == (sent.seq, sent.type, sent.payload)  # bytes as published
        assert record == json.loads(sent.payload)
        assert digest == record["hash"]
        assert round_id == record.get("round")
    [(verified_seq, last_seq, broken)] = _rows(
        archive, "SELECT verified_seq, last_seq, chain_broken_at FROM archive_tables"
    )
    assert (verified_seq, last_seq, broken) == (len(published), len(published), None)


async def test_a_gap_is_asked_for_after_the_timeout_and_filled(
    archive: str, tmp_path: Path
) -> None:
    published = publish_journal(tmp_path / "j.sqlite", "T1", rounds=3)
    missing = published[3:6]
    ingest, verifier = Ingest(), Verifier(KeyRing(KEY), gap_timeout=5)
    async with await connect_async(archive) as conn:
        await ingest.store(conn, _incoming(published[:3] + published[6:]))
        seen = await verifier.verify(conn, "T1", T0)
        assert seen is not None
        assert seen.walk.state.verified_seq == 3
        assert [(g.from_seq, g.to_seq) for g in seen.gaps.open] == [(4, 6)]
        assert seen.resends == []  # may just be reordered: not asked yet
        due = await verifier.verify(conn, "T1", T0 + timedelta(seconds=5))
        assert due is not None
        assert [(g.from_seq, g.to_seq) for g in due.resends] == [(4, 6)]
        again = await verifier.verify(conn, "T1", T0 + timedelta(seconds=6))
        assert again is not None
        assert again.resends == []  # asked a second ago: backoff
        [(requests, since)] = _rows(archive, "SELECT requests, since FROM archive_gaps")
        assert (requests, since) == (1, T0)
        await ingest.store(conn, _incoming(missing))  # the table's resend
        filled = await verifier.verify(conn, "T1", T0 + timedelta(seconds=7))
    assert filled is not None
    assert filled.walk.state.verified_seq == len(published)
    assert [(g.from_seq, g.to_seq, g.requests) for g in filled.gaps.filled] == [(4, 6, 1)]
    assert _rows(archive, "SELECT * FROM archive_gaps") == []


async def test_another_record_for_a_stored_seq_is_a_conflict_and_a_break(
    archive: str, tmp_path: Path
) -> None:
    published = publish_journal(tmp_path / "j.sqlite", "T1", rounds=2)
    ingest, verifier = Ingest(), Verifier(KeyRing(KEY), gap_timeout=5)
    outcome = next(p for p in published if p.type == "outcome")
    forged = json.loads(outcome.payload)
    forged["result"] = {"number": 36}  # same seq, same ts: the key refuses it
    moved = json.loads(published[0].payload)
    moved["ts"] = "2026-10-01T00:00:00.000000Z"  # same seq, another month: a second row
    async with await connect_async(archive) as conn:
        await ingest.store(conn, _incoming(published))
        result = await verifier.verify(conn, "T1", T0)
        assert result is not None
        assert result.broke is None
        clash = await ingest.store(
            conn, [parse_published("T1", canonical_json(forged).encode("utf-8"))]
        )
        late = await ingest.store(
            conn, [parse_published("T1", canonical_json(moved).encode("utf-8"))]
        )
        assert clash.conflicts == [("T1", outcome.seq)]
        assert late.conflicts == [("T1", 1)]
        assert (late.inserted, clash.inserted) == (0, 0)
        broken = await verifier.verify(conn, "T1", T0)
    assert broken is not None
    assert broken.broke is not None
    assert (broken.broke.table, broken.broke.seq) == ("T1", 1)
    assert "second, different record for seq 1" in broken.broke.reason
    assert broken.walk.state == ChainState(0, None, 1, broken.broke.reason)
    # Nothing of it in records: one row per seq, as published first.
    assert _rows(archive, "SELECT count(*) FROM records") == [(len(published),)]
    assert _rows(archive, "SELECT seq FROM archive_conflicts ORDER BY seq") == [
        (1,),
        (outcome.seq,),
    ]


async def test_a_record_of_another_month_gets_its_partition(archive: str, tmp_path: Path) -> None:
    old = publish_journal(tmp_path / "j.sqlite", "T9", rounds=1, key=None, month="2019-03")
    async with await connect_async(archive) as conn:
        stored = await Ingest().store(conn, _incoming(old))
    assert stored.inserted == len(old)
    partitions = _rows(archive, "SELECT tableoid::regclass::text, count(*) FROM records GROUP BY 1")
    assert partitions == [("records_2019_03", len(old))]


async def test_records_of_a_detached_month_are_dropped_not_recreated(
    archive: str, tmp_path: Path
) -> None:
    with connect(archive, autocommit=True) as conn:  # as archive-admin detach records it
        conn.execute("INSERT INTO archive_detached VALUES ('2019-03', '{}', '/srv/archive')")
    old = publish_journal(tmp_path / "j.sqlite", "T9", rounds=1, key=None, month="2019-03")
    async with await connect_async(archive) as conn:
        stored = await Ingest().store(conn, _incoming(old))
    assert (stored.inserted, stored.late) == (0, len(old))
    with pytest.raises(psycopg.errors.UndefinedTable):
        _rows(archive, "SELECT 1 FROM records_2019_03")
