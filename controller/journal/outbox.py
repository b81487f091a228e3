"""The outbox: the journal's unpublished tail, and marking what the broker acknowledged.

There is no separate outbox: it is the ``published`` column, marked only after the broker's
acknowledgement, so unpublished rows are a suffix of the live file (see docs/mqtt.md). Runs on the
live file's connection, under the ``Journal``'s lock.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tablectl.controller.core.errors import JournalError
from tablectl.controller.journal.db import rollback
from tablectl.controller.journal.records import JournalRecord, read_record


class FullSyncLostError(JournalError):
    """``synchronous=FULL`` could not be restored after a mark: the connection must not append
    again (a record would not be fsync'd)."""


def unpublished(conn: sqlite3.Connection, path: Path, limit: int) -> list[JournalRecord]:
    """The oldest ``limit`` records not yet acknowledged by the broker, in ``seq`` order."""
    try:
        rows = [
            (int(r[0]), str(r[1]))
            for r in conn.execute(
                "SELECT seq, body FROM records WHERE published = 0 ORDER BY seq LIMIT ?", (limit,)
            )
        ]
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read journal: {exc}") from None
    return [read_record(body, seq) for seq, body in rows]


def unpublished_payloads(
    conn: sqlite3.Connection, path: Path, limit: int, after: int
) -> list[tuple[int, str, bytes]]:
    """``(seq, type, payload)`` of the oldest ``limit`` unpublished records past ``after``.

    The stored body *is* the canonical JSON of the record, so it is published as is.
    """
    try:
        rows = conn.execute(
            "SELECT seq, type, body FROM records WHERE published = 0 AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (after, limit),
        ).fetchall()
    except sqlite3.Error as exc:
        raise JournalError(f"{path}: cannot read journal: {exc}") from None
    return [(int(seq), str(kind), str(body).encode("utf-8")) for seq, kind, body in rows]


def first_unpublished(conn: sqlite3.Connection) -> int | None:
    """The oldest ``seq`` of the file that still waits for the broker (``None``: none does)."""
    row = conn.execute("SELECT MIN(seq) FROM records WHERE published = 0").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def has_unpublished(conn: sqlite3.Connection) -> bool:
    """Whether any record of the file still waits for the broker."""
    return bool(conn.execute("SELECT 1 FROM records WHERE published = 0 LIMIT 1").fetchone())


def mark_published(conn: sqlite3.Connection, path: Path, up_to_seq: int) -> None:
    """Mark every record with ``seq <= up_to_seq`` as acknowledged, without its own fsync.

    A lost mark costs a duplicate delivery, never a gap: ``synchronous=NORMAL`` for this write, and
    the next append's fsync makes it durable. ``FullSyncLostError``: the caller must close the
    connection.
    """
    try:
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute(
            "UPDATE records SET published = 1 WHERE published = 0 AND seq <= ?",
            (up_to_seq,),
        )
    except sqlite3.Error as exc:
        rollback(conn)
        _restore_full_sync(conn, path)
        raise JournalError(
            f"{path}: cannot mark records up to seq {up_to_seq} published: {exc}"
        ) from None
    _restore_full_sync(conn, path)


def _restore_full_sync(conn: sqlite3.Connection, path: Path) -> None:
    try:
        conn.execute("PRAGMA synchronous=FULL")
    except sqlite3.Error as exc:
        raise FullSyncLostError(f"{path}: cannot restore synchronous=FULL: {exc}") from None
