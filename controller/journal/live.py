"""The journal's live file: its SQLite connection, its chain ends, and its seal when it closes.

Opening it checks whose journal it is and whether the last clean close's seal vouched for the
tail, then removes that seal (the file changes from here on). Not locked: the ``Journal`` holds
its lock around every use.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import structlog

from tablectl.controller.core.errors import JournalError, JournalWriteError
from tablectl.controller.journal.db import (
    checkpoint_now,
    count_unanchored,
    create_schema,
    file_ends,
    read_meta,
    read_only,
    rollback,
    use_wal,
    write_meta,
)
from tablectl.controller.journal.files import Archive, fsync_dir, wal_path
from tablectl.controller.journal.records import GENESIS_HASH, Row, loads_record
from tablectl.controller.journal.seals import seal_path, unkeyed_tail, unseal, write_seal

log = structlog.get_logger("tablectl.journal")


class LiveFile:
    """One journal's live SQLite file, opened (created if missing) for appending.

    ``archives`` (rotated files, oldest first) lets an empty file continue the newest one's chain.
    """

    def __init__(
        self, path: Path, table_id: str, archives: Sequence[Archive], key: bytes | None
    ) -> None:
        self.path = path
        self.table_id = table_id
        self.anchor_seq = 0
        """``seq`` of the record before the file's first one (the previous file's last)."""
        self.anchor_hash = GENESIS_HASH
        self.last_seq = 0
        self.last_hash = GENESIS_HASH
        self.first_ts: str | None = None
        """``ts`` of the file's first record, as written (rotation by age)."""
        self.newest_ts: str | None = None
        """``ts`` of the newest record found when the file was opened, as written."""
        self.unanchored = 0
        """Records after the newest anchor when the file was opened (all of them without one)."""
        self._page_size: int | None = None
        self.conn = self._open(archives, key)

    def _open(self, archives: Sequence[Archive], key: bytes | None) -> sqlite3.Connection:
        """Open (or create) the file, check its owner, unseal it and find its anchor."""
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        try:
            use_wal(conn, self.path)
            first, last = file_ends(conn)
            if last is not None:
                newest = loads_record(last[2], int(last[0]))
                ts = newest.get("ts")
                self.newest_ts = ts if isinstance(ts, str) else None
                owner = newest.get("table")
                if owner != self.table_id:
                    raise JournalError(
                        f"{self.path}: journal belongs to table {owner!r}, not {self.table_id!r}"
                    )
            self.unanchored = count_unanchored(conn, first, last)
            if key is not None and self.unanchored > 0 and last is not None:
                self._check_tail_keyed(key, int(last[0]), str(last[1]))  # before the seal goes
            # From here on the file will change: a seal from the last clean close is stale.
            unseal(self.path)
            create_schema(conn)
            meta = read_meta(conn)
            if first is not None:
                self.anchor_seq, self.anchor_hash = int(first[0]) - 1, str(first[1])
                self.first_ts = str(first[2])
            elif meta is not None:
                self.anchor_seq, self.anchor_hash = meta
            else:
                # A new file: after a rotation (or a crash inside one) it continues the chain
                # of the newest rotated file.
                self.anchor_seq, self.anchor_hash = _newest_archive_end(archives)
                if self.anchor_seq:
                    write_meta(conn, self.anchor_seq, self.anchor_hash)
            if last is not None:
                self.last_seq, self.last_hash = int(last[0]), str(last[1])
            else:
                self.last_seq, self.last_hash = self.anchor_seq, self.anchor_hash
        except sqlite3.Error as exc:
            conn.close()
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        except (JournalError, OSError) as exc:
            conn.close()
            if isinstance(exc, OSError):
                raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
            raise
        return conn

    def _check_tail_keyed(self, key: bytes, last_seq: int, last_hash: str) -> None:
        """Log (``journal_tail_not_keyed``) a tail the last seal did not key: the next anchor
        vouches for it *as found*, and this is the trace (a crash, another key, an edit while
        stopped)."""
        why = unkeyed_tail(self.path, key, self.table_id, last_seq, last_hash)
        if why is None:
            return
        log.warning(
            "journal_tail_not_keyed",
            path=str(self.path),
            first_seq=last_seq - self.unanchored + 1,
            last_seq=last_seq,
            why=why,
            hint="records in this range are anchored as found; tablectl verify --key on a copy",
        )

    @property
    def empty(self) -> bool:
        """The file holds no record yet."""
        return self.last_seq == self.anchor_seq

    def insert(self, rows: list[Row], what: str) -> None:
        """Insert ``rows`` in one transaction (one fsync); all or nothing
        (``JournalWriteError``)."""
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            self.conn.executemany(
                "INSERT INTO records (seq, ts, type, body, prev_hash, hash)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            self.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            rollback(self.conn)
            raise JournalWriteError(
                f"{self.path}: cannot append {what} at seq {rows[0][0]}: {exc}"
            ) from None

    def advance(self, seq: int, last_hash: str, first_ts: str) -> None:
        """After an insert: the newest record, and the file's first ``ts`` when it was empty."""
        if self.empty:
            self.first_ts = first_ts
        self.last_seq, self.last_hash = seq, last_hash

    def size(self) -> int:
        """Bytes in the main file (pages × page size)."""
        pages = self.conn.execute("PRAGMA page_count").fetchone()[0]
        if self._page_size is None:  # fixed once the file exists: asked once, not per append
            self._page_size = int(self.conn.execute("PRAGMA page_size").fetchone()[0])
        return int(pages) * self._page_size

    def query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[int, str]]:
        """``(seq, text)`` rows of a query on the file."""
        try:
            return [(int(r[0]), str(r[1])) for r in self.conn.execute(sql, params)]
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot read journal: {exc}") from None

    def close(self, mac: str | None, sealed_at: datetime) -> None:
        """Checkpoint the WAL, close, and seal; no seal when another connection still reads the WAL
        (the file is then checked structurally only, as a live one is)."""
        checkpointed = False
        with contextlib.suppress(sqlite3.Error):
            checkpointed = checkpoint_now(self.conn)
        self.conn.close()
        wal = wal_path(self.path)
        if checkpointed and (not wal.exists() or wal.stat().st_size == 0):
            try:
                self._seal(None, mac, sealed_at)
            except OSError as exc:  # a full disk must not stop a shutdown
                log.warning("journal_seal_failed", path=str(self.path), error=str(exc))

    def move_to(self, target: Path, mac: str | None, sealed_at: datetime) -> None:
        """Close, seal for ``target``, rename there. Seal first: a crash between the two leaves a
        stray seal (retention tidies it), never a rotated file without one."""
        self.conn.close()
        try:
            if target.exists():
                raise JournalError(f"{target}: a rotated file of that name already exists")
            self._seal(target.name, mac, sealed_at)
            os.rename(self.path, target)
            fsync_dir(self.path.parent)
        except (OSError, JournalError) as exc:
            with contextlib.suppress(OSError):
                seal_path(target).unlink()
            if isinstance(exc, JournalError):
                raise
            raise JournalError(f"{self.path}: cannot rotate: {exc}") from None

    def _seal(self, name: str | None, mac: str | None, sealed_at: datetime) -> None:
        write_seal(
            self.path,
            table=self.table_id,
            anchor_seq=self.anchor_seq,
            anchor_hash=self.anchor_hash,
            last_seq=self.last_seq,
            last_hash=self.last_hash,
            sealed_at=sealed_at,
            name=name,
            mac=mac,
        )


def _newest_archive_end(archives: Sequence[Archive]) -> tuple[int, str]:
    if not archives:
        return 0, GENESIS_HASH
    newest = archives[-1]
    row = read_only(newest.path, "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1")
    if not row or int(row[0][0]) != newest.last_seq:
        raise JournalError(
            f"{newest.path}: rotated file does not end at seq {newest.last_seq} as named"
        )
    return int(row[0][0]), str(row[0][1])
