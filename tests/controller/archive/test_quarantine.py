"""The quarantine and the bounded verifier in a real PostgreSQL (issue 26, items 1 and 4).

``archive_quarantine`` keeps what the archive refused (one row per distinct message, its start,
at a bounded pace); the verifier looks for gaps only up to the table's ``seq`` horizon and plans a
bounded number of resend requests, so a hostile row stored before admission existed (``seq``
2**63-1, its gap open in ``archive_gaps``) is no gap to fill.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tablectl.controller.archive.chains import MAX_RESEND
from tablectl.controller.archive.db import connect, connect_async
from tablectl.controller.archive.gate.admission import MAX_SEQ, Limits, Quarantined, seq_horizon
from tablectl.controller.archive.gate.quarantine import QuarantineWriter
from tablectl.controller.archive.ingest import Incoming, Ingest, parse_published
from tablectl.controller.archive.schema import migrate
from tablectl.controller.archive.verifier import KeyRing, Verifier
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import canonical_json
from tests.controller.archive.published import KEY, Published, publish_journal

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def archive(postgres_dsn: str) -> str:
    with connect(postgres_dsn, autocommit=True) as conn:
        migrate(conn, now=T0)
    return postgres_dsn


def _rows(dsn: str, sql: str, *params: object) -> list[tuple[object, ...]]:
    with connect(dsn) as conn:
        return conn.execute(sql.encode(), params).fetchall()


def _incoming(published: list[Published]) -> list[Incoming]:
    return [parse_published(p.table, p.payload) for p in published]


def _hostile(table: str, seq: int, ts: datetime) -> Incoming:
    fields = {
        "table": table,
        "seq": seq,
        "ts": format_moment(ts),
        "type": "outcome",
        "hash": hashlib.sha256(b"h").hexdigest(),
        "prev_hash": hashlib.sha256(b"p").hexdigest(),
    }
    return parse_published(table, canonical_json(fields).encode("utf-8"))


async def test_the_quarantine_keeps_one_bounded_row_per_message(archive: str) -> None:
    writer = QuarantineWriter(keep_bytes=16)
    big = Quarantined("too_large", "100 bytes", "tablectl/T1/events", "T1", b"x" * 100)
    late = Quarantined("ts_ahead", "ts 9999-12-31", "tablectl/T1/events", "T1", b"{}", seq=7, ts=T0)
    odd = Quarantined("bad_table", "nul", "tablectl/a\x00b/events", "a\x00b", b"{}")
    async with await connect_async(archive) as conn:
        await writer.write(conn, [big, late, odd, late], T0)
        await writer.write(conn, [late], T0 + timedelta(seconds=5))
    rows = _rows(
        archive,
        "SELECT topic, table_id, seq, ts, reason, size, payload, times, received_at,"
        " last_received_at, sha256 FROM archive_quarantine ORDER BY reason",
    )
    assert [(r[4], r[1], r[2], r[5], bytes(r[6]), r[7]) for r in rows] == [
        ("bad_table", "a\ufffdb", None, 2, b"{}", 1),
        ("too_large", "T1", None, 100, b"x" * 16, 1),  # its start, its size
        ("ts_ahead", "T1", 7, 2, b"{}", 2),  # the same message again: counted, one row
    ]
    late_row = rows[2]
    assert (late_row[3], late_row[8], late_row[9]) == (T0, T0, T0 + timedelta(seconds=5))
    assert rows[1][10] == hashlib.sha256(b"x" * 100).hexdigest()  # of the whole message


def test_the_quarantine_is_written_at_a_bounded_pace() -> None:
    writer = QuarantineWriter(keep_bytes=16, per_minute=600)
    assert writer.take(1_000, now=0.0) == 600
    assert writer.take(100, now=1.0) == 10  # 10 a second
    assert writer.take(100, now=61.0) == 100
    assert writer.take(10_000, now=1_000.0) == 600  # never more than a minute's worth at once


async def test_a_gap_stored_before_admission_is_cut_to_the_horizon(
    archive: str, tmp_path: Path
) -> None:
    published = publish_journal(tmp_path / "j.sqlite", "OLD", rounds=1, key=None)
    now = T0 + timedelta(days=1)
    async with await connect_async(archive) as conn:
        await Ingest().store(conn, [*_incoming(published), _hostile("OLD", MAX_SEQ, T0)])
    with connect(archive, autocommit=True) as conn:
        conn.execute("UPDATE archive_tables SET last_seq = %s", (MAX_SEQ,))
        conn.execute(
            "INSERT INTO archive_gaps (table_id, from_seq, to_seq, since, requested_at, requests)"
            " VALUES ('OLD', %s, %s, %s, %s, 5)",
            (len(published) + 1, MAX_SEQ - 1, T0, T0),
        )
    verifier = Verifier(KeyRing(), gap_timeout=1)
    async with await connect_async(archive) as conn:
        result = await verifier.verify(conn, "OLD", now)
    assert result is not None
    assert result.walk.state.verified_seq == len(published)
    assert result.requests == []
    assert result.resends == []
    assert result.gaps.open == []
    assert result.gaps.filled == []  # nothing filled it: no gap_filled alarm
    assert result.head is not None
    assert result.last_seq == len(published)  # its newest record within the horizon
    assert seq_horizon(result.head, now, Limits()) < 2_000_000
    [(last_seq, verified_ts)] = _rows(archive, "SELECT last_seq, verified_ts FROM archive_tables")
    assert last_seq == result.last_seq
    assert verified_ts == result.head.ts == datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
    assert _rows(archive, "SELECT * FROM archive_gaps") == []


async def test_a_big_genuine_gap_is_asked_for_a_few_requests_a_pass(
    archive: str, tmp_path: Path
) -> None:
    published = publish_journal(tmp_path / "j.sqlite", "T1", rounds=1)
    far = 90_000
    async with await connect_async(archive) as conn:
        await Ingest().store(conn, [*_incoming(published), _hostile("T1", far, T0)])
        verifier = Verifier(KeyRing(KEY), gap_timeout=1)
        first = await verifier.verify(conn, "T1", T0)
        assert first is not None
        assert [(g.from_seq, g.to_seq) for g in first.gaps.open] == [(len(published) + 1, far - 1)]
        due = await verifier.verify(conn, "T1", T0 + timedelta(seconds=2), resends=3)
        assert due is not None
        start = len(published) + 1
        assert due.requests == [
            (start + n * MAX_RESEND, start + (n + 1) * MAX_RESEND - 1) for n in range(3)
        ]
        none = await verifier.verify(conn, "T1", T0 + timedelta(seconds=10), resends=0)
        assert none is not None
        assert none.requests == []
        [(requests,)] = _rows(archive, "SELECT requests FROM archive_gaps")
        assert requests == 1  # a pass without a budget does not count as asked


async def test_rows_beyond_the_horizon_make_no_gap_for_a_table_without_a_head(
    archive: str,
) -> None:
    limits = Limits(seq_window=1_000, seq_rate=0)
    async with await connect_async(archive) as conn:
        await Ingest().store(conn, [_hostile("NEW", 5, T0), _hostile("NEW", 10**12, T0)])
        result = await Verifier(KeyRing(), gap_timeout=1, limits=limits).verify(conn, "NEW", T0)
    assert result is not None
    assert [(g.from_seq, g.to_seq) for g in result.gaps.open] == [(1, 4)]
    assert result.last_seq == 5
