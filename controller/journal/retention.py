"""Journal retention (R19 at least 90 days, R13 enough to recreate play) and verifying many files
as one chain.

Only a published prefix of the chain that is old by the wall clock, the newest ``ts`` and
:func:`trusted_age` is deleted, each deletion first logged to ``STEM.retired.jsonl`` so
:func:`verify_chain` tells "retired by policy" from "files removed" (docs/journal.md).
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import structlog

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.core.time import format_moment, parse_ts
from tablectl.controller.journal.db import read_only
from tablectl.controller.journal.errors import JournalIntegrityError
from tablectl.controller.journal.files import Archive, fsync_dir, journal_sets, list_archives
from tablectl.controller.journal.records import GENESIS_HASH, canonical_json
from tablectl.controller.journal.seals import read_seal, seal_path
from tablectl.controller.journal.verify import FileSummary, verify_journal_file

log = structlog.get_logger("tablectl.retention")


def retired_log_path(live: Path) -> Path:
    """``ROU-01.sqlite`` → ``ROU-01.retired.jsonl``: one line per deleted rotated file."""
    return live.with_name(f"{live.stem}.retired.jsonl")


# -- deleting --------------------------------------------------------------------------------------


def prune(
    live: Path,
    *,
    retention_days: float,
    now: datetime | None = None,
    discount_now: float | None = None,
) -> list[Path]:
    """Delete the oldest rotated files of ``live`` past retention, stopping at the first that does
    not qualify (only a prefix of the chain goes); return them."""
    live = Path(live)
    moment = now if now is not None else datetime.now(UTC)
    period = timedelta(days=retention_days)
    _tidy(live)
    removed: list[Path] = []
    archives = list_archives(live)
    if discount_now is None:
        discount_now = _discount_now(live, archives)
    retired = read_retired(live)
    carried = _number(retired[-1].get("discount_s")) if retired else None
    discount = carried or 0.0
    for archive in archives:
        try:
            rows = read_only(
                archive.path,
                "SELECT min(seq), max(seq), max(ts), sum(published = 0) FROM records",
            )
            last = read_only(
                archive.path,
                "SELECT seq, hash, ts, prev_hash FROM records ORDER BY seq DESC LIMIT 1",
            )
            first = read_only(archive.path, "SELECT prev_hash FROM records ORDER BY seq LIMIT 1")
        except JournalError as exc:
            log.warning("retention_unreadable", path=str(archive.path), error=str(exc))
            break
        first_seq, last_seq, max_ts, unpublished = rows[0]
        newest = max(
            (t for t in (parse_ts(max_ts), parse_ts(last[0][2] if last else None)) if t),
            default=None,
        )
        in_file = _discount_at_end(archive.path)
        discount = in_file if in_file is not None else discount
        if (
            (first_seq, last_seq) != (archive.first_seq, archive.last_seq)
            or unpublished
            or newest is None
            or trusted_age(moment - newest, discount_now - discount) <= period
        ):
            break
        seal = read_seal(archive.path) or {}
        entry = {
            "file": archive.path.name,
            "first_seq": archive.first_seq,
            "last_seq": archive.last_seq,
            "anchor_seq": archive.first_seq - 1,
            "anchor_hash": str(first[0][0]),
            "last_hash": str(last[0][1]),
            "sha256": seal.get("sha256"),
            "newest_ts": str(max_ts),
            "retired_at": format_moment(moment, "seconds"),
            "retention_days": retention_days,
            "discount_s": round(discount, 3),
        }
        _append_retired(live, entry)
        seal_path(archive.path).unlink(missing_ok=True)
        archive.path.unlink()
        fsync_dir(archive.path.parent)
        log.info("journal_file_retired", path=str(archive.path), last_seq=archive.last_seq)
        removed.append(archive.path)
    return removed


def trusted_age(wall_age: timedelta, discount_after: float) -> timedelta:
    """A file's age as retention counts it: its wall-clock age less the seconds of wall time
    that no clock vouched for since (``discount_after``: clock steps forward, unverified gaps;
    tablectl.controller.service.clock), and never more than the wall-clock age — a step back
    does not make anything older. When in doubt, a file is kept."""
    return min(wall_age, wall_age - timedelta(seconds=discount_after))


CLOCK_TYPES: Final = ("power_on", "power_off", "clock_step", "clock_confirmed")
"""Records whose ``clock.discount_s`` is the running discount (service.clock)."""


CLOCK_QUERY: Final = "SELECT seq, body FROM records WHERE type = ? ORDER BY seq DESC LIMIT 1"
"""The newest record of one type (the ``records_type`` index: a look-up, not a scan)."""


def newest_discount(
    query: Callable[[str, tuple[Any, ...]], Sequence[tuple[Any, ...]]],
) -> float | None:
    """The running discount as of the newest clock record that ``query`` (a connection to one
    journal file) finds, ``None`` when the file has none (written before clock records)."""
    newest: tuple[int, float] | None = None
    for kind in CLOCK_TYPES:
        rows = query(CLOCK_QUERY, (kind,))
        if not rows:
            continue
        try:
            clock = json.loads(str(rows[0][1])).get("clock")
        except (ValueError, AttributeError):
            continue
        value = _number(clock.get("discount_s")) if isinstance(clock, dict) else None
        if value is not None and (newest is None or int(rows[0][0]) > newest[0]):
            newest = (int(rows[0][0]), value)
    return None if newest is None else newest[1]


def _discount_at_end(path: Path) -> float | None:
    """:func:`newest_discount` of a closed journal file (a read-only connection of its own)."""
    try:
        return newest_discount(functools.partial(read_only, path))
    except JournalError:
        return None


def archived_discount(archives: Sequence[Archive]) -> float:
    """The running discount as of the newest clock record of the rotated files."""
    for archive in reversed(archives):
        found = _discount_at_end(archive.path)
        if found is not None:
            return found
    return 0.0


def _discount_now(live: Path, archives: Sequence[Archive]) -> float:
    """The running discount of the whole journal, read from the files — only for a journal no
    :class:`~tablectl.controller.journal.store.Journal` has open: a second connection to an open
    live file keeps its descriptor until the journal closes (SQLite holds the file's locks), one
    more at every prune. An open journal passes its own (``discount_now``)."""
    found = _discount_at_end(live) if live.exists() else None
    return found if found is not None else archived_discount(archives)


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _tidy(live: Path) -> None:
    """Remove what a crash inside a rotation can leave: a seal whose rotated file never got its
    name, and half-written seals."""
    pattern = re.compile(
        re.escape(live.stem) + r"\.\d{6,}-\d{6,}" + re.escape(live.suffix) + r"\.seal(\.tmp)?$"
    )
    try:
        entries = list(live.parent.iterdir())
    except OSError:
        return
    for entry in entries:
        if not pattern.fullmatch(entry.name):
            continue
        journal_file = entry.with_name(entry.name.removesuffix(".tmp").removesuffix(".seal"))
        if entry.name.endswith(".tmp") or not journal_file.exists():
            entry.unlink(missing_ok=True)


def _append_retired(live: Path, entry: dict[str, Any]) -> None:
    path = retired_log_path(live)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(canonical_json(entry) + "\n")
        stream.flush()
        os.fsync(stream.fileno())
    fsync_dir(path.parent)


def read_retired(live: Path) -> list[dict[str, Any]]:
    """The retirement log's entries, checked to link up from the genesis hash."""
    path = retired_log_path(live)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise JournalIntegrityError(f"{path}: cannot read retirement log: {exc}") from None
    entries: list[dict[str, Any]] = []
    prev_seq, prev_hash = 0, GENESIS_HASH
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        try:
            entry = json.loads(line)
        except ValueError:
            raise JournalIntegrityError(f"{path}:{number}: not JSON (altered?)") from None
        if not isinstance(entry, dict) or canonical_json(entry) + "\n" != line:
            raise JournalIntegrityError(f"{path}:{number}: not canonical JSON (altered?)")
        if (entry.get("anchor_seq"), entry.get("anchor_hash")) != (prev_seq, prev_hash) or (
            entry.get("first_seq") != prev_seq + 1
        ):
            raise JournalIntegrityError(
                f"{path}:{number}: does not continue the previous entry (seq {prev_seq})"
            )
        last_seq, last_hash = entry.get("last_seq"), entry.get("last_hash")
        if type(last_seq) is not int or not isinstance(last_hash, str):
            raise JournalIntegrityError(f"{path}:{number}: malformed entry")
        prev_seq, prev_hash = last_seq, last_hash
        entries.append(entry)
    return entries


# -- verifying sets --------------------------------------------------------------------------------


@dataclass
class ChainReport:
    """One table's chain across its files, verified."""

    live: Path
    """The live file's path (it need not exist: a folder of rotated files only)."""
    files: list[FileSummary] = field(default_factory=list)
    retired_through: int = 0
    """The last ``seq`` deleted by retention, per the retirement log (0: none)."""
    partial_start: bool = False
    """The chain starts after seq 1 and nothing given accounts for the earlier records."""

    @property
    def count(self) -> int:
        return sum(f.count for f in self.files)

    @property
    def first_seq(self) -> int:
        return self.files[0].first_seq if self.files else 1

    @property
    def last_seq(self) -> int:
        return self.files[-1].last_seq if self.files else 0

    @property
    def sealed(self) -> int:
        return sum(1 for f in self.files if f.sealed)

    @property
    def anchors(self) -> int:
        return sum(f.anchors for f in self.files)

    @property
    def keyed_through(self) -> int:
        """Verified with a key: the last ``seq`` it vouches for (every file before the last one
        is rotated, hence has a keyed seal). 0 without a key."""
        return self.files[-1].keyed_through if self.files else 0


def verify_chain(
    paths: Sequence[Path], *, complete: bool | None = None, key: bytes | None = None
) -> list[ChainReport]:
    """Verify every file and the links between them.

    ``complete`` (a folder was given) also requires the chain's start be accounted for: seq 1 from
    the genesis hash, or the end of the last retired file. ``key``: every keyed anchor and seal
    (R13, R15).
    """
    if complete is None:
        complete = any(p.is_dir() for p in paths)
    reports: list[ChainReport] = []
    for live, files in journal_sets(paths).items():
        report = ChainReport(live=live)
        table: str | None = None
        for path in files:
            summary = verify_journal_file(path, table=table, key=key)
            table = table or summary.table
            if report.files:
                prev = report.files[-1]
                if summary.anchor_seq < prev.last_seq:
                    raise ChainBrokenError(
                        summary.first_seq,
                        f"files overlap: {prev.path.name} ends at seq {prev.last_seq},"
                        f" {path.name} starts at seq {summary.first_seq}",
                    )
                if summary.anchor_seq != prev.last_seq:
                    raise ChainBrokenError(
                        prev.last_seq + 1,
                        f"record missing: {prev.path.name} ends at seq {prev.last_seq},"
                        f" {path.name} continues from seq {summary.anchor_seq}",
                    )
                if summary.anchor_hash != prev.last_hash:
                    raise ChainBrokenError(
                        summary.first_seq,
                        f"{path.name} does not continue {prev.path.name} (anchor hash differs)",
                    )
            report.files.append(summary)
        _check_start(report, complete=complete)
        reports.append(report)
    if not reports:
        raise JournalError("no journal files found")
    return reports


def _check_start(report: ChainReport, *, complete: bool) -> None:
    start = report.files[0]
    retired = read_retired(report.live)
    if retired:
        report.retired_through = int(retired[-1]["last_seq"])
    if start.anchor_seq == 0:
        return
    for entry in retired:
        if entry["last_seq"] == start.anchor_seq:
            if entry["last_hash"] != start.anchor_hash:
                raise ChainBrokenError(
                    start.first_seq,
                    f"{start.path.name} does not continue the retired {entry['file']}",
                )
            if entry is retired[-1]:
                return
    if complete:
        raise ChainBrokenError(
            start.first_seq,
            f"records before seq {start.first_seq} are missing and no retirement accounts for them",
        )
    report.partial_start = True
