"""Read-only, verified access to one table's journal files, by ``seq`` (for ``tablectl export``):
the live file copied with SQLite's backup API (a consistent snapshot while the service appends),
rotated files opened immutable, every file verified before it is read."""

from __future__ import annotations

import contextlib
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablectl.controller.core.closing import Closing
from tablectl.controller.core.errors import ControllerError, JournalError
from tablectl.controller.journal import (
    FileSummary,
    JournalRecord,
    connect_read_only,
    journal_sets,
    list_archives,
    live_of,
    looks_rotated,
    read_record,
    verify_conn,
    verify_journal_file,
)


class ExportError(ControllerError):
    """What was asked for is not in the journal (an unknown round, an empty range)."""


@dataclass
class _File:
    path: Path
    first_seq: int
    last_seq: int
    conn: sqlite3.Connection


class JournalReader(Closing):
    """Read-only access to a journal (a live file, a rotated one, or a table's folder), by
    ``seq``."""

    def __init__(self, path: Path) -> None:
        path = Path(path)
        if path.is_dir():
            groups = journal_sets([path])
            if len(groups) != 1:
                names = ", ".join(sorted(live.name for live in groups))
                raise ExportError(f"{path}: holds several tables' journals ({names}): name one")
            (files,) = groups.values()
        else:
            live = live_of(path)
            files = [a.path for a in list_archives(live)] + ([live] if live.exists() else [])
            if not files:
                raise JournalError(f"{path}: no such journal file")
        self._tmp = tempfile.TemporaryDirectory(prefix="tablectl-export-")
        self._files: list[_File] = []
        try:
            for file in files:
                self._files.append(self._open(file))
        except BaseException:
            self.close()
            raise

    def _open(self, path: Path) -> _File:
        if looks_rotated(path):
            # Rotated files never change again (sealed, opened immutable): read in place.
            sealed = verify_journal_file(path)
            return _File(path, sealed.first_seq, sealed.last_seq, connect_read_only(path))
        wal = path.with_name(path.name + "-wal")
        if not wal.exists() or wal.stat().st_size == 0:
            verify_journal_file(path)  # closed: its seal and header can be checked too
        # The live journal: snapshot it (the backup API copies a consistent state including
        # the WAL, even while the service appends) and work on the copy only.
        copy = Path(self._tmp.name) / path.name
        source = connect_read_only(path)
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
            summary: FileSummary = verify_conn(target, path)
        except sqlite3.Error as exc:
            target.close()
            raise JournalError(f"{path}: cannot copy the journal: {exc}") from None
        except JournalError:
            target.close()
            raise
        finally:
            source.close()
        return _File(path, summary.first_seq, summary.last_seq, target)

    def close(self) -> None:
        """Close every file and delete the snapshot."""
        for file in self._files:
            with contextlib.suppress(sqlite3.Error):
                file.conn.close()
        self._files = []
        self._tmp.cleanup()

    @property
    def first_seq(self) -> int:
        """The oldest ``seq`` on disk."""
        return self._files[0].first_seq if self._files else 1

    @property
    def files(self) -> list[Path]:
        """The files read, in chain order."""
        return [f.path for f in self._files]

    def _query(self, file: _File, sql: str, params: tuple[Any, ...]) -> list[tuple[Any, ...]]:
        try:
            return list(file.conn.execute(sql, params).fetchall())
        except sqlite3.Error as exc:
            raise JournalError(f"{file.path}: cannot read journal: {exc}") from None

    def records(self, first: int = 1, last: int | None = None) -> Iterator[JournalRecord]:
        """Records with ``first <= seq <= last`` in order, across files."""
        end = last if last is not None else 1 << 62
        for file in self._files:
            if file.last_seq < first or file.first_seq > end:
                continue
            after = first - 1
            while True:
                rows = self._query(
                    file,
                    "SELECT seq, body FROM records WHERE seq > ? AND seq <= ? ORDER BY seq"
                    " LIMIT 500",
                    (after, end),
                )
                for seq, body in rows:
                    yield read_record(body, int(seq))
                if len(rows) < 500:
                    break
                after = int(rows[-1][0])

    def backwards(self, before: int) -> Iterator[JournalRecord]:
        """Records with ``seq < before``, newest first, across files."""
        for file in reversed(self._files):
            if file.first_seq >= before:
                continue
            upper = before
            while True:
                rows = self._query(
                    file,
                    "SELECT seq, body FROM records WHERE seq < ? ORDER BY seq DESC LIMIT 500",
                    (upper,),
                )
                for seq, body in rows:
                    yield read_record(body, int(seq))
                if len(rows) < 500:
                    break
                upper = int(rows[-1][0])

    def find_outcome(self, round_id: str) -> JournalRecord | None:
        """The (last) outcome record of ``round_id``."""
        for file in reversed(self._files):
            rows = self._query(
                file,
                "SELECT seq, body FROM records WHERE type = 'outcome'"
                " AND json_extract(body, '$.round') = ? ORDER BY seq DESC LIMIT 1",
                (round_id,),
            )
            if rows:
                return read_record(rows[0][1], int(rows[0][0]))
        return None
