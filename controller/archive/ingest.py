"""A published record as a row of ``records``, and batched, idempotent inserts.

COPY into a temporary table, then one ``INSERT … ON CONFLICT DO NOTHING``: at 1–4k records/s
per-record round trips would be the limit. A redelivery is skipped; a *different* record for a
stored ``(table_id, seq)`` is kept in ``archive_conflicts`` or refused by the walk (docs/fleet.md,
"Schema"). A record of a detached month is counted as late and dropped.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import structlog

from tablectl.controller.archive.db import ArchiveError, lost_errors, one_line
from tablectl.controller.archive.schema import Month, month_of, partition_name, partition_sql
from tablectl.controller.core.time import parse_ts
from tablectl.controller.journal.records import HEX64

if TYPE_CHECKING:
    import psycopg

log = structlog.get_logger("tablectl.archive")

_COLUMNS: Final = "table_id, seq, ts, type, round, hash, prev_hash, record, raw"
_TEMP: Final = "archive_incoming"
_MAX_SEQ: Final = 2**63 - 1


class MalformedRecordError(ArchiveError):
    """A message on a table's ``events``/``anchor`` that is not one of its journal records."""


@dataclass(frozen=True)
class Incoming:
    """One published record, ready to be a row of ``records``."""

    table_id: str
    seq: int
    ts: datetime
    type: str
    round: str | None
    hash: str
    prev_hash: str
    raw: bytes
    month: Month = field(init=False, compare=False)
    """The month of ``ts`` (its partition), worked out once."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "month", month_of(self.ts))


def parse_published(table: str, payload: bytes) -> Incoming:
    """The record a table published on ``{prefix}/{table}/events`` (or ``anchor``); the bounds are
    admission's, checked first."""
    try:
        record: Any = json.loads(payload.decode("utf-8"))  # as published: UTF-8 only
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise MalformedRecordError(f"{table}: message is not UTF-8 JSON") from None
    return incoming_of(table, payload, record)


def incoming_of(table: str, payload: bytes, record: Any) -> Incoming:
    """The row of ``payload``, whose JSON is ``record`` (parsed once by the caller)."""
    if not isinstance(record, dict):
        raise MalformedRecordError(f"{table}: message is not a JSON object")
    seq = record.get("seq")
    if type(seq) is not int or not 1 <= seq <= _MAX_SEQ:
        raise MalformedRecordError(f"{table}: record has no valid seq: {_short(seq)}")
    if record.get("table") != table:
        raise MalformedRecordError(
            f"{table}: record {seq} names table {_short(record.get('table'))}, not its topic's"
        )
    ts = parse_ts(record.get("ts"))
    kind = record.get("type")
    if ts is None or not isinstance(kind, str) or not kind:
        raise MalformedRecordError(f"{table}: record {seq} lacks an ISO ts with a zone or a type")
    digest, prev = record.get("hash"), record.get("prev_hash")
    if not isinstance(digest, str) or not HEX64.fullmatch(digest):
        raise MalformedRecordError(f"{table}: record {seq} has no sha256 hash")
    if not isinstance(prev, str) or not HEX64.fullmatch(prev):
        raise MalformedRecordError(f"{table}: record {seq} has no sha256 prev_hash")
    if b"\\u0000" in payload:  # jsonb cannot hold NUL: no journal record has one
        raise MalformedRecordError(f"{table}: record {seq} holds a NUL character")
    round_id = record.get("round")
    return Incoming(
        table_id=table,
        seq=seq,
        ts=ts,
        type=kind,
        round=round_id if isinstance(round_id, str) else None,
        hash=digest,
        prev_hash=prev,
        raw=bytes(payload),
    )


def _short(value: Any) -> str:
    """A value of a message in a one-line reason: its ``repr`` cut to 40 characters (a
    container is only named: its ``repr`` may be deep or huge)."""
    if isinstance(value, dict | list):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    return f"{value!r:.40}"


@dataclass(frozen=True)
class StoreResult:
    """What one batch did: rows inserted, redeliveries skipped, conflicts kept, late drops."""

    inserted: int = 0
    duplicates: int = 0
    conflicts: list[tuple[str, int]] = field(default_factory=list)
    late: int = 0
    tables: frozenset[str] = frozenset()


def _unique(batch: Sequence[Incoming]) -> list[Incoming]:
    """The batch without exact repeats (a redelivery inside one batch), in order."""
    seen: set[tuple[str, int, str, bytes]] = set()
    out = []
    for item in batch:
        key = (item.table_id, item.seq, item.hash, item.raw)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


class Ingest:
    """Stores batches in ``records``; remembers which partitions exist, so only a new month costs a
    catalog look-up."""

    def __init__(self) -> None:
        self._months: set[Month] = set()
        self._detached: set[Month] = set()
        # The connection whose temporary table is made (a new connection has none yet).
        self._temp_ready: object | None = None

    async def _prepare_months(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], months: set[Month]
    ) -> None:
        import psycopg  # noqa: PLC0415 - optional extra

        for month in sorted(months - self._months - self._detached):
            async with conn.transaction():
                text = f"{month.year:04d}-{month.month:02d}"
                found = await (
                    await conn.execute("SELECT 1 FROM archive_detached WHERE month = %s", (text,))
                ).fetchone()
            if found is not None:
                self._detached.add(month)
                log.warning("archive_month_detached", partition=partition_name(month))
                continue
            try:
                async with conn.transaction():
                    await conn.execute(partition_sql(month).encode("utf-8"))
            except (psycopg.errors.DuplicateTable, psycopg.errors.UniqueViolation):
                pass  # another archiver created it at the same moment
            self._months.add(month)

    async def store(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], batch: Sequence[Incoming]
    ) -> StoreResult:
        """Insert ``batch`` (one transaction); return what happened."""
        rows = _unique(batch)
        if not rows:
            return StoreResult()
        await self._prepare_months(conn, {r.month for r in rows})
        late = [r for r in rows if r.month in self._detached]
        rows = [r for r in rows if r.month not in self._detached]
        tables = sorted({r.table_id for r in rows})
        if not rows:
            return StoreResult(late=len(late))
        try:
            return await self._store(conn, rows, tables, late)
        except BaseException:
            self._temp_ready = None  # its creation may have been rolled back with the batch
            raise

    async def store_each(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], batch: Sequence[Incoming]
    ) -> tuple[StoreResult, list[tuple[Incoming, str]]]:
        """:meth:`store` the batch; when a statement (not the connection) fails, record by record: a
        record the database refuses must not stop the floor."""
        lost = lost_errors()
        try:
            return await self.store(conn, batch), []
        except lost:
            raise
        except Exception as exc:  # a statement's error (or ours, say a month out of range)
            log.exception("archive_batch_refused", error=one_line(exc))
        total, refused = StoreResult(), []
        for record in batch:
            try:
                one = await self.store(conn, [record])
            except lost:
                raise
            except Exception as exc:  # this record, not the floor
                refused.append(
                    (record, f"record {record.seq} refused by the database: " + one_line(exc))
                )
                continue
            total = StoreResult(
                total.inserted + one.inserted,
                total.duplicates + one.duplicates,
                total.conflicts + one.conflicts,
                total.late + one.late,
                total.tables | one.tables,
            )
        return total, refused

    async def _store(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        rows: list[Incoming],
        tables: list[str],
        late: list[Incoming],
    ) -> StoreResult:
        async with conn.transaction():
            if self._temp_ready is not conn:
                await conn.execute(
                    f"CREATE TEMP TABLE IF NOT EXISTS {_TEMP} (LIKE records INCLUDING DEFAULTS)"
                    " ON COMMIT DELETE ROWS"
                )
                self._temp_ready = conn
            await conn.execute(
                "INSERT INTO archive_tables (table_id) SELECT unnest(%s::text[]) ORDER BY 1"
                " ON CONFLICT DO NOTHING",
                (tables,),
            )
            # Share lock: the verifier (FOR UPDATE) cannot move a table's head meanwhile.
            locked = await (
                await conn.execute(
                    "SELECT table_id, verified_seq FROM archive_tables WHERE table_id = ANY(%s)"
                    " ORDER BY table_id FOR SHARE",
                    (tables,),
                )
            ).fetchall()
            verified = {str(t): int(s) for t, s in locked}
            async with conn.cursor() as cur:
                async with cur.copy(f"COPY {_TEMP} ({_COLUMNS}) FROM STDIN") as copy:
                    for r in rows:
                        await copy.write_row(
                            (
                                r.table_id,
                                r.seq,
                                r.ts,
                                r.type,
                                r.round,
                                r.hash,
                                r.prev_hash,
                                r.raw.decode("utf-8"),
                                r.raw,
                            )
                        )
                await cur.execute(
                    f"INSERT INTO records ({_COLUMNS}) SELECT {_COLUMNS} FROM {_TEMP}"  # noqa: S608
                    " ON CONFLICT DO NOTHING RETURNING table_id, seq, ts, hash"
                )
                inserted = await cur.fetchall()
            # A row whose key is taken by another content (same table, seq and ts).
            clashes = await (
                await conn.execute(
                    f"INSERT INTO archive_conflicts (table_id, seq, ts, hash, raw)"  # noqa: S608
                    f" SELECT i.table_id, i.seq, i.ts, i.hash, i.raw FROM {_TEMP} i"
                    " JOIN records r ON r.table_id = i.table_id AND r.seq = i.seq"
                    " AND r.ts = i.ts WHERE r.hash <> i.hash OR r.raw <> i.raw"
                    " ON CONFLICT DO NOTHING RETURNING table_id, seq"
                )
            ).fetchall()
            conflicts = [(str(t), int(s)) for t, s in clashes]
            # A new row for a seq already verified: another ts, so the key did not catch it.
            late_dupes = [
                (str(t), int(s), ts, str(h))
                for t, s, ts, h in inserted
                if int(s) <= verified.get(str(t), 0)
            ]
            for table, seq, ts, digest in late_dupes:
                await conn.execute(
                    "WITH moved AS (DELETE FROM records WHERE table_id = %s AND seq = %s"
                    " AND ts = %s AND hash = %s RETURNING table_id, seq, ts, hash, raw)"
                    " INSERT INTO archive_conflicts (table_id, seq, ts, hash, raw)"
                    " SELECT * FROM moved ON CONFLICT DO NOTHING",
                    (table, seq, ts, digest),
                )
                conflicts.append((table, seq))
        for table, seq in conflicts:
            log.error("archive_conflict", table=table, seq=seq)
        return StoreResult(
            inserted=len(inserted) - len(late_dupes),
            duplicates=len(rows) - len(inserted),
            conflicts=conflicts,
            late=len(late),
            tables=frozenset(tables),
        )
