"""The journal's SQLite file: its schema, WAL settings, ``meta`` table and read-only connections.

WAL with ``synchronous=FULL``: each commit is fsync'd while readers never block the writer. A
rotated-to file's ``meta`` holds the ``seq`` and ``hash`` of the record before its first one, so
the chain continues across files.
"""

from __future__ import annotations

import contextlib
import functools
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from tablectl.controller.core.errors import JournalError
from tablectl.controller.journal.anchors import ANCHOR
from tablectl.controller.journal.errors import JournalIntegrityError
from tablectl.controller.journal.files import wal_path
from tablectl.controller.journal.records import HEX64, JournalRecord, read_record

_WAL_PAGES: Final = 256
"""Pages in the write-ahead log before SQLite checkpoints it (its default is 1000)."""
_WAL_BYTES: Final = 1024 * 1024
"""Size the write-ahead log is truncated back to after a checkpoint."""
CACHE_KIB: Final = 256
"""SQLite's page cache per journal connection, KiB (its default is 2,000 KiB).

The cache fills as the journal grows and is never given back while the connection is open: at
2 MB per table it was the soak's RSS growth (issue 16: at most 1 MB per 100,000 records) and
four times the per-table RSS target of a 100-table process. An append and the outbox's read touch
a few dozen pages (the right edge of the table and its two indexes, the newest rows); 256 KiB (64
pages) holds them: the micro-benchmark of an append, outbox read and mark on a 100,000-record
journal read 4.6 KiB from the file per round against 4.3 KiB with the default, at the same
median time; 128 KiB read 5.2 KiB, 64 KiB 17 KiB. Full scans (recovery, ``verify``) read every
page once whatever the size and took the same time."""

APPLICATION_ID = 0x54424C43
"""``PRAGMA application_id`` of a journal file (``"TBLC"``): ``file(1)`` and ``verify`` can tell a
journal from any other SQLite file, and a flipped byte in this header field is caught."""

PAGE: Final = 500
"""Rows fetched per query by the iterators, so a long read never holds the lock for long."""

READ_ERRORS: Final = (sqlite3.Error, UnicodeDecodeError)
"""What reading a damaged file raises: SQLite's errors, and its *messages* can carry the
damaged (not UTF-8) schema text, which the sqlite3 module then fails to decode."""

DDL: Final = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 0
);
-- The outbox query: unpublished rows are always a suffix, and this keeps finding it O(log n).
CREATE INDEX IF NOT EXISTS records_unpublished ON records(seq) WHERE published = 0;
-- Restoring counters at startup asks for the last record of a type.
CREATE INDEX IF NOT EXISTS records_type ON records(type, seq);
-- A rotated-to file's anchor: anchor_seq / anchor_hash of the record before its first one.
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


# -- the live file ---------------------------------------------------------------------------------


def use_wal(conn: sqlite3.Connection, path: Path) -> None:
    """WAL mode, every commit fsync'd, a bounded WAL and page cache.

    SQLite lets the WAL reach 4 MiB and keep it; on a nearly full disk that was the journal's own
    lock-out (a checkpoint needs room in the main file). 1 MiB costs nothing measurable.
    """
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise JournalError(f"{path}: cannot switch to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA wal_autocheckpoint={_WAL_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit={_WAL_BYTES}")
    bound_memory(conn)


def bound_memory(conn: sqlite3.Connection) -> None:
    """Cap the page cache and map nothing: a build may default ``mmap_size`` to more than 0, and a
    mapped journal counts its file in the RSS."""
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    conn.execute("PRAGMA mmap_size = 0")


def file_ends(conn: sqlite3.Connection) -> tuple[tuple[Any, ...] | None, tuple[Any, ...] | None]:
    """The live file's first record ``(seq, prev_hash, ts)`` and last ``(seq, hash, body)``;
    ``None`` for a file without records (or without the table yet)."""
    has_records = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'"
    ).fetchone()
    if not has_records:
        return None, None
    last = conn.execute("SELECT seq, hash, body FROM records ORDER BY seq DESC LIMIT 1").fetchone()
    first = conn.execute("SELECT seq, prev_hash, ts FROM records ORDER BY seq LIMIT 1").fetchone()
    return first, last


def create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables and indexes (if missing) and stamp :data:`APPLICATION_ID`."""
    conn.executescript(DDL)
    if conn.execute("PRAGMA application_id").fetchone()[0] == 0:
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")


def checkpoint_now(conn: sqlite3.Connection) -> bool:
    """Checkpoint and empty the WAL, or give up at once: a reader holding the WAL must not stall a
    shutdown or an append for the busy timeout."""
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.execute("PRAGMA busy_timeout = 5000")
    return bool(busy == 0)


def leave_wal(conn: sqlite3.Connection) -> bool:
    """Checkpoint the WAL and leave WAL mode for a rotation, so the rotated file opens read-only
    without ``-wal``/``-shm`` files; ``False`` when not possible now."""
    if not checkpoint_now(conn):
        return False
    mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    return str(mode).lower() == "delete"


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back without raising: a failed COMMIT may already have rolled back, and a failed
    ROLLBACK must not hide the original error."""
    if conn.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            conn.execute("ROLLBACK")


def count_unanchored(
    conn: sqlite3.Connection, first: tuple[Any, ...] | None, last: tuple[Any, ...] | None
) -> int:
    """Records of the live file after its newest anchor (all of them when it has none: the
    rotated file before it ends with a keyed seal). One lookup on the ``(type, seq)`` index."""
    if first is None or last is None:
        return 0
    newest = conn.execute("SELECT max(seq) FROM records WHERE type = ?", (ANCHOR,)).fetchone()[0]
    start = int(newest) if newest is not None else int(first[0]) - 1
    return int(last[0]) - start


# -- meta ------------------------------------------------------------------------------------------


def read_meta(conn: sqlite3.Connection) -> tuple[int, str] | None:
    """The file's anchor ``(anchor_seq, anchor_hash)`` or ``None``; anything else in ``meta`` is a
    ``JournalIntegrityError``."""
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone():
        return None  # a journal from before rotation existed
    rows = {
        as_str(key): as_str(value)
        for key, value in conn.execute("SELECT key, value FROM meta").fetchall()
    }
    if not rows:
        return None
    seq, anchor = rows.get("anchor_seq"), rows.get("anchor_hash")
    if (
        len(rows) != 2
        or not isinstance(seq, str)
        or not seq.isdigit()
        or not isinstance(anchor, str)
        or not HEX64.fullmatch(anchor)
    ):
        raise JournalIntegrityError(f"meta table is malformed: {sorted(map(repr, rows))}")
    return int(seq), anchor


def write_meta(conn: sqlite3.Connection, seq: int, anchor: str) -> None:
    """Record the file's anchor (the chain's end in the file before it)."""
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [("anchor_seq", str(seq)), ("anchor_hash", anchor)],
    )
    conn.execute("COMMIT")


def as_str(value: object) -> object:
    """A value read with ``text_factory = bytes`` as text when it is UTF-8, else unchanged."""
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


@functools.cache
def expected_schema() -> dict[object, object]:
    """``sqlite_master``'s ``name → sql`` (as bytes) of a journal file created by :data:`DDL`."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(DDL)
        return {
            name.encode("utf-8"): sql.encode("utf-8") if sql is not None else None
            for name, sql in conn.execute("SELECT name, sql FROM sqlite_master")
        }
    finally:
        conn.close()


# -- reading without writing -----------------------------------------------------------------------


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that can never change ``path``.

    Without a ``-wal`` (closed, rotated, evidence) ``immutable=1``: no ``-shm``/``-wal`` is created
    next to it. With one, ``mode=ro`` reads the writer's commits too; ``immutable=1`` is the
    fallback in a read-only folder, where the ``-shm`` index cannot be created.
    """
    uri = path.resolve().as_uri()
    last: BaseException | None = None
    options_tried = ["?mode=ro&immutable=1"]
    if wal_path(path).exists():
        options_tried.insert(0, "?mode=ro")
    for options in options_tried:
        try:
            conn = sqlite3.connect(uri + options, uri=True)
        except READ_ERRORS as exc:
            last = exc
            continue
        try:
            bound_memory(conn)
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except READ_ERRORS as exc:
            conn.close()
            last = exc
            continue
        return conn
    raise JournalError(f"{path}: cannot open journal: {describe_read_error(last)}")


def describe_read_error(exc: BaseException | None) -> str:
    """One of :data:`READ_ERRORS` as text (a damaged schema's message cannot be decoded)."""
    if isinstance(exc, UnicodeDecodeError):
        return "the schema is damaged (not UTF-8)"
    return str(exc)


def read_only(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of one query on ``path``, opened read-only (:func:`connect_read_only`)."""
    conn = connect_read_only(path)
    try:
        return list(conn.execute(sql, params).fetchall())
    except READ_ERRORS as exc:
        raise JournalError(f"{path}: cannot read journal: {describe_read_error(exc)}") from None
    finally:
        conn.close()


def file_records(path: Path, after: int) -> Iterator[JournalRecord]:
    """The records of file ``path`` with ``seq > after``, in order (paged, read-only)."""
    conn = connect_read_only(path)
    try:
        while True:
            try:
                rows = conn.execute(
                    "SELECT seq, body FROM records WHERE seq > ? ORDER BY seq LIMIT ?",
                    (after, PAGE),
                ).fetchall()
            except READ_ERRORS as exc:
                raise JournalError(
                    f"{path}: cannot read journal: {describe_read_error(exc)}"
                ) from None
            for seq, body in rows:
                yield read_record(body, int(seq))
            if len(rows) < PAGE:
                return
            after = int(rows[-1][0])
    finally:
        conn.close()
