"""Journal files on disk: the names of rotated files (``ROU-01.000001-004711.sqlite`` for seq
1..4711), sets of files per table, durable renames. Opens no database."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.core.errors import JournalError

_ROTATED = re.compile(r"^(?P<stem>.+)\.(?P<first>\d{6,})-(?P<last>\d{6,})(?P<suffix>\.[^.]*)?$")
_NOT_JOURNALS = ("-wal", "-shm", ".seal", ".tmp", ".jsonl")
_SQLITE_MAGIC = b"SQLite format 3\x00"


@dataclass(frozen=True)
class Archive:
    """A rotated journal file: its path and the ``seq`` range its name claims."""

    path: Path
    first_seq: int
    last_seq: int


def archive_path(live: Path, first_seq: int, last_seq: int) -> Path:
    """``ROU-01.sqlite`` holding seq 1..4711 → ``ROU-01.000001-004711.sqlite`` (same folder)."""
    return live.with_name(f"{live.stem}.{first_seq:06d}-{last_seq:06d}{live.suffix}")


def _archive_pattern(live: Path) -> re.Pattern[str]:
    return re.compile(re.escape(live.stem) + r"\.(\d{6,})-(\d{6,})" + re.escape(live.suffix) + "$")


def list_archives(live: Path) -> list[Archive]:
    """The rotated files of the journal whose live file is ``live``, oldest first."""
    pattern = _archive_pattern(live)
    found: list[Archive] = []
    try:
        entries = list(live.parent.iterdir())
    except OSError:
        return []
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match and entry.is_file():
            found.append(Archive(entry, int(match[1]), int(match[2])))
    return sorted(found, key=lambda a: a.first_seq)


def looks_rotated(path: Path) -> bool:
    """Whether ``path`` is named as a rotated file (``STEM.FIRST-LAST.sqlite``)."""
    return re.search(r"\.\d{6,}-\d{6,}(\.[^.]*)?$", path.name) is not None


def live_of(path: Path) -> Path:
    """The live file a journal file belongs to: itself, or the one a rotated file came from."""
    match = _ROTATED.match(path.name)
    if match is None:
        return path
    return path.with_name(match["stem"] + (match["suffix"] or ""))


def _is_journal_file(path: Path) -> bool:
    if not path.is_file() or path.name.endswith(_NOT_JOURNALS):
        return False
    try:
        with path.open("rb") as stream:
            return stream.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def journal_sets(paths: Iterable[Path]) -> dict[Path, list[Path]]:
    """Journal files (folders expanded) grouped by the live file they rotated from, each group in
    chain order: rotated files by ``seq``, then the live file."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if _is_journal_file(p))
        elif path.exists():
            files.append(path)
        else:
            raise JournalError(f"{path}: no such journal file")
    groups: dict[Path, list[Path]] = {}
    for path in files:
        groups.setdefault(live_of(path), []).append(path)

    def order(path: Path) -> tuple[int, int]:
        match = _ROTATED.match(path.name)
        return (0, int(match["first"])) if match else (1, 0)

    return {live: sorted(set(group), key=order) for live, group in groups.items()}


def wal_path(path: Path) -> Path:
    """SQLite's write-ahead log of database file ``path``: ``path`` + ``-wal``."""
    return path.with_name(path.name + "-wal")


def fsync_dir(folder: Path) -> None:
    """Make a rename or unlink in ``folder`` durable (best effort where unsupported)."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def file_digest(path: Path) -> tuple[int, str]:
    """``(size, sha256 hex)`` of the whole file ``path``."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()
