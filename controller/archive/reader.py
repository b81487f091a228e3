"""Reading the floor's archive: one table's records by ``seq``, by round and by time window.

``raw`` is the payload's exact bytes; a record is read from it alone and every other column checked
against it. Connections are read-only: a query for evidence can never alter it. Withheld cards link
but cannot be re-hashed (:func:`.chains.is_withheld`).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

import psycopg
from psycopg import sql

from tablectl.controller.archive.chains import auth_stripped, check_record
from tablectl.controller.archive.db import (
    ArchiveError,
    ArchiveUnavailableError,
    connect,
    describe_dsn,
    one_line,
)
from tablectl.controller.core.closing import Closing
from tablectl.controller.core.errors import ChainBrokenError
from tablectl.controller.core.time import format_moment, parse_ts
from tablectl.controller.journal import JournalRecord, canonical_json
from tablectl.controller.journal.anchors import mac_matches
from tablectl.controller.journal.records import AUTH, loads_record, stored_record

COLUMNS: Final = "table_id, seq, ts, type, round, hash, prev_hash, record, raw"
"""The columns :func:`row_record` reads, in its order."""

PAGE: Final = 1000
"""Rows per query of a keyset-paginated walk (bounded memory whatever the archive's size)."""


@dataclass
class Archive(Closing):
    """An open connection to an archive and what to call it in messages."""

    conn: psycopg.Connection[tuple[object, ...]]
    where: str

    def query(
        self, statement: str | sql.Composable, params: Sequence[Any] = ()
    ) -> list[tuple[Any, ...]]:
        """Rows of ``statement`` (none for a statement without a result); a database error
        becomes a one-line :class:`ArchiveError`."""
        try:
            cursor = self.conn.execute(statement, params)  # type: ignore[arg-type]
            return cursor.fetchall() if cursor.description is not None else []
        except psycopg.OperationalError as exc:  # the server went away, or never answered
            raise ArchiveUnavailableError(f"PostgreSQL {self.where}: {one_line(exc)}") from None
        except psycopg.Error as exc:
            raise ArchiveError(f"PostgreSQL {self.where}: {one_line(exc)}") from None

    def close(self) -> None:
        with contextlib.suppress(psycopg.Error):
            self.conn.close()


def open_archive(dsn: str, *, read_only: bool = True) -> Archive:
    """Connect to the archive at ``dsn`` (autocommit; read-only unless asked otherwise)."""
    conn = connect(dsn, autocommit=True)
    archive = Archive(conn, describe_dsn(dsn))
    try:
        if read_only:
            archive.query("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        (found,) = archive.query("SELECT to_regclass('records') IS NOT NULL")[0]
    except BaseException:
        archive.close()
        raise
    if not found:
        archive.close()
        raise ArchiveError(
            f"PostgreSQL {archive.where}: no archive here (no 'records' table; tablectl"
            " archive makes it)"
        )
    return archive


def table_ids(archive: Archive) -> list[str]:
    """Every table the archive knows, sorted: a loose index scan, where ``DISTINCT`` would read
    every row of every month."""
    rows = archive.query(
        "WITH RECURSIVE t(id) AS ("
        " SELECT min(table_id) FROM records"
        " UNION ALL SELECT (SELECT min(table_id) FROM records WHERE table_id > t.id)"
        " FROM t WHERE t.id IS NOT NULL)"
        " SELECT id FROM t WHERE id IS NOT NULL"
        " UNION SELECT table_id FROM archive_tables ORDER BY 1"
        if _has(archive, "archive_tables")
        else "WITH RECURSIVE t(id) AS ("
        " SELECT min(table_id) FROM records"
        " UNION ALL SELECT (SELECT min(table_id) FROM records WHERE table_id > t.id)"
        " FROM t WHERE t.id IS NOT NULL)"
        " SELECT id FROM t WHERE id IS NOT NULL ORDER BY 1"
    )
    return [str(r[0]) for r in rows]


def _has(archive: Archive, relation: str) -> bool:
    return bool(archive.query("SELECT to_regclass(%s) IS NOT NULL", (relation,))[0][0])


def row_record(row: Sequence[Any]) -> JournalRecord:
    """A ``records`` row as the record its ``raw`` bytes hold, every column checked against them."""
    table_id, seq, ts, kind, round_id, digest, prev, document, raw = row
    seq = int(seq)
    try:
        text = bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise ChainBrokenError(seq, "raw is not valid UTF-8") from None
    fields = loads_record(text, seq)
    if canonical_json(fields) != text:
        raise ChainBrokenError(seq, "raw is not in canonical form (altered?)")
    record = stored_record(fields, seq)
    checks = (
        ("table_id", table_id, fields.get("table")),
        ("type", kind, record.type),
        ("hash", digest, record.hash),
        ("prev_hash", prev, record.prev_hash),
    )
    for column, stored, published in checks:
        if stored != published:
            raise ChainBrokenError(seq, f"{column} column differs from the published record's")
    moment = parse_ts(record.ts)
    if moment is None or ts != moment:
        raise ChainBrokenError(seq, "ts column differs from the published record's ts")
    own_round = fields.get("round") if isinstance(fields.get("round"), str) else None
    if round_id is not None and round_id != own_round:
        raise ChainBrokenError(seq, "round column differs from the published record's round")
    if document != fields:
        raise ChainBrokenError(seq, "record column (jsonb) differs from the published bytes")
    return record


def _check_link(
    table: str,
    before: JournalRecord | None,
    record: JournalRecord,
    where: str,
    *,
    span: bool = True,
    key: bytes | None = None,
) -> None:
    """Within a read span: consecutive, and each record checked in its chain. ``span=False`` (a time
    window): a conclusion carries its deciding event's ``ts``, so ``seq`` may skip; only consecutive
    ones are linked."""
    head = None
    if before is not None:
        if record.seq == before.seq:
            raise ChainBrokenError(record.seq, f"stored twice in {where}")
        if record.seq != before.seq + 1 and span:
            raise ChainBrokenError(
                before.seq + 1,
                f"records {before.seq + 1}-{record.seq - 1} missing in {where}"
                f" (next seq is {record.seq})",
            )
        if record.seq == before.seq + 1:
            head = before.hash
    check = check_record(table, record, head, key)
    authenticated = key is not None and before is not None and before.get(AUTH) is not None
    problem = check.problem or auth_stripped(record, authenticated)
    if problem is not None:
        raise ChainBrokenError(record.seq, problem.reason)


class ArchiveReader:
    """One table's records in the archive, read-only, optionally within a time window.

    The journal reader's interface, so one export serves both. ``key``: each record's own ``auth``
    is checked as read; ``through``: the archiver's verified head.
    """

    def __init__(
        self,
        archive: Archive,
        table: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        key: bytes | None = None,
        through: int | None = None,
    ) -> None:
        self.archive = archive
        self.table = table
        self.since = since
        self.until = until
        self.key = key
        self.through = through
        self.refused = 0
        """Records ``rows`` left out because their ``auth`` did not match ``key`` (or was
        missing)."""

    def window(self, since: datetime | None, until: datetime | None) -> ArchiveReader:
        """The same table, key and verified head, within ``[since, until)``: every window of one
        report counts up to one head."""
        return ArchiveReader(
            self.archive, self.table, since=since, until=until, key=self.key, through=self.through
        )

    def __str__(self) -> str:
        window = ""
        if self.since is not None or self.until is not None:
            start = format_moment(self.since, "seconds") if self.since else "…"
            end = format_moment(self.until, "seconds") if self.until else "…"
            window = f" [{start}, {end})"
        return f"archive {self.archive.where} table {self.table}{window}"

    @property
    def files(self) -> list[str]:
        """What is read, for messages (a journal reader lists its files here)."""
        return [str(self)]

    @property
    def first_seq(self) -> int:
        """The oldest ``seq`` the archive holds for the table (1 when it holds none)."""
        rows = self.archive.query("SELECT min(seq) FROM records WHERE table_id = %s", (self.table,))
        return int(rows[0][0]) if rows and rows[0][0] is not None else 1

    @property
    def last_seq(self) -> int:
        """The newest ``seq`` the archive holds for the table (0 when it holds none)."""
        rows = self.archive.query("SELECT max(seq) FROM records WHERE table_id = %s", (self.table,))
        return int(rows[0][0]) if rows and rows[0][0] is not None else 0

    def _page(self, where: str, params: Sequence[Any], order: str = "ASC") -> list[JournalRecord]:
        rows = self.archive.query(
            f"SELECT {COLUMNS} FROM records WHERE table_id = %s AND {where}"  # noqa: S608 - ours
            f" ORDER BY seq {order} LIMIT {PAGE}",
            (self.table, *params),
        )
        return [row_record(r) for r in rows]

    def records(self, first: int = 1, last: int | None = None) -> Iterator[JournalRecord]:
        """Records with ``first <= seq <= last`` in order, linked and hashed as they are read."""
        end = last if last is not None else 1 << 62
        after, before = first - 1, None
        while True:
            page = self._page("seq > %s AND seq <= %s", (after, end))
            for record in page:
                _check_link(self.table, before, record, str(self), key=self.key)
                before = record
                yield record
            if len(page) < PAGE:
                return
            after = page[-1].seq

    def between(self, since: datetime | None, until: datetime | None) -> Iterator[JournalRecord]:
        """Records with ``since <= ts < until`` (either bound open) in ``seq`` order, checked as
        :meth:`records` checks them; only the months the window touches are read."""
        after, before = 0, None
        params: list[Any]
        while True:
            where, params = "seq > %s", [after]
            if since is not None:
                where += " AND ts >= %s"
                params.append(since)
            if until is not None:
                where += " AND ts < %s"
                params.append(until)
            page = self._page(where, params)
            for record in page:
                _check_link(self.table, before, record, str(self), span=False, key=self.key)
                before = record
                yield record
            if len(page) < PAGE:
                return
            after = page[-1].seq

    def backwards(self, before: int) -> Iterator[JournalRecord]:
        """Records with ``seq < before``, newest first (column-checked; links are the forward
        read's to check)."""
        upper = before
        while True:
            page = self._page("seq < %s", (upper,), "DESC")
            yield from page
            if len(page) < PAGE:
                return
            upper = page[-1].seq

    def find_outcome(self, round_id: str) -> JournalRecord | None:
        """The (last) outcome record of ``round_id``."""
        page = self.archive.query(
            f"SELECT {COLUMNS} FROM records WHERE table_id = %s AND type = 'outcome'"  # noqa: S608
            " AND round = %s ORDER BY seq DESC LIMIT 1",
            (self.table, round_id),
        )
        if not page:
            return None
        record = row_record(page[0])
        return record if record.get("round") == round_id else None

    def _window(self) -> tuple[str, list[Any]]:
        """The SQL condition and parameters of ``since``/``until``."""
        where, params = "", []
        if self.since is not None:
            where += " AND ts >= %s"
            params.append(self.since)
        if self.until is not None:
            where += " AND ts < %s"
            params.append(self.until)
        return where, params

    def rows(self, types: Sequence[str]) -> Iterator[tuple[int, str, str]]:
        """``(seq, type, body)`` of the table's records of ``types`` in the window, newest first
        (the statistics' reading: :mod:`tablectl.controller.tools.diag.stats.source`): only up
        to ``through``, and with ``key`` only those whose own ``auth`` matches it."""
        upper = 1 << 62 if self.through is None else self.through + 1
        window, extra = self._window()
        while True:
            rows = self.archive.query(
                f"SELECT seq, type, raw, hash FROM records WHERE table_id = %s"  # noqa: S608
                f" AND type = ANY(%s) AND seq < %s{window} ORDER BY seq DESC LIMIT {PAGE}",
                (self.table, list(types), upper, *extra),
            )
            for seq, kind, raw, digest in rows:
                body = bytes(raw).decode("utf-8", "replace")
                if self.key is not None and not _own(self.key, self.table, int(seq), digest, body):
                    self.refused += 1
                    continue
                yield int(seq), str(kind), body
            if len(rows) < PAGE:
                return
            upper = int(rows[-1][0])

    def unverified(self) -> int:
        """Records of the window after ``through`` (not yet verified by the archiver: not read
        by ``rows``)."""
        if self.through is None:
            return 0
        window, extra = self._window()
        rows = self.archive.query(
            f"SELECT count(*) FROM records WHERE table_id = %s AND seq > %s{window}",  # noqa: S608
            (self.table, self.through, *extra),
        )
        return int(rows[0][0])


def _own(key: bytes, table: str, seq: int, digest: str, body: str) -> bool:
    """Whether a stored record's own ``auth`` is its table's under ``key``."""
    try:
        auth = json.loads(body).get(AUTH)
    except (ValueError, AttributeError):
        return False
    return mac_matches(key, auth, table, seq, str(digest))


def verified_reader(
    archive: Archive,
    table: str,
    *,
    since: datetime | None = None,
    until: datetime | None = None,
    key: bytes | None = None,
) -> ArchiveReader:
    """``table``'s records up to the archiver's verified head only (issue 26), what every
    statistic reads: a record past it may be a forgery that a gap or a quarantine has not yet
    exposed."""
    head = verified_head(archive, table)
    return ArchiveReader(archive, table, since=since, until=until, key=key, through=head)


def verified_head(archive: Archive, table: str) -> int:
    """How far the archiver has verified ``table``'s chain (``archive_tables.verified_seq``; 0:
    nothing, or no archiver has run on this archive)."""
    if not _has(archive, "archive_tables"):
        return 0
    rows = archive.query("SELECT verified_seq FROM archive_tables WHERE table_id = %s", (table,))
    return int(rows[0][0]) if rows else 0
