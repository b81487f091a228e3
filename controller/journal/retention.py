"""Journal retention and rotated-file sets: what may be deleted, and verifying many files as one.

Regulatory R19 wants logs kept at least 90 days, R13 enough to recreate play. A table PC cannot keep
everything forever, so the journal rotates
(:meth:`tablectl.controller.journal.store.Journal.rotate`) and this module deletes the *oldest*
rotated files once every record in them is

* published — the broker acknowledged it, so the back end has it (the journal is the outbox: an
  unpublished record is never deleted, however old), and
* older than the retention period, by both the wall clock and the newest journaled ``ts``, so a
  clock that jumps ahead alone deletes nothing early.

Only a prefix of the chain is ever deleted (never a file between two kept ones), and each
deletion is first appended to ``STEM.retired.jsonl`` with the file's ``seq`` range and chain
ends. That log is what lets :func:`verify_chain` tell "retired by policy" from "files removed":
the oldest kept file's anchor must be the last retired file's end, and the log's own entries
must link up from the genesis hash.

``tablectl verify`` lives here too, because it verifies sets of files. Without ``--key`` it proves
order, not authorship (anyone can recompute a sha256 chain); with the journal's key it checks the
keyed anchors and seal macs (:mod:`tablectl.controller.journal.anchors`; R13, R15), and ``--anchor``
compares the journal with the anchor published off the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import structlog

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.journal.anchors import ANCHOR, anchor_problem, mac_matches
from tablectl.controller.journal.store import (
    GENESIS_HASH,
    FileSummary,
    JournalIntegrityError,
    KeyedEvidenceError,
    _fsync_dir,
    _read_only,
    canonical_json,
    list_archives,
    parse_ts,
    read_seal,
    record_hash,
    seal_path,
    verify_journal_file,
)

__all__ = [
    "ChainReport",
    "add_verify_arguments",
    "check_published_anchor",
    "journal_sets",
    "live_of",
    "prune",
    "read_retired",
    "retired_log_path",
    "run_verify",
    "verify_chain",
]

log = structlog.get_logger("tablectl.retention")

_ROTATED = re.compile(r"^(?P<stem>.+)\.(?P<first>\d{6,})-(?P<last>\d{6,})(?P<suffix>\.[^.]*)?$")
_NOT_JOURNALS = ("-wal", "-shm", ".seal", ".tmp", ".jsonl")
_SQLITE_MAGIC = b"SQLite format 3\x00"


def retired_log_path(live: Path) -> Path:
    """``ROU-01.sqlite`` → ``ROU-01.retired.jsonl``: one line per deleted rotated file."""
    return live.with_name(f"{live.stem}.retired.jsonl")


# -- deleting --------------------------------------------------------------------------------------


def prune(live: Path, *, retention_days: float, now: datetime | None = None) -> list[Path]:
    """Delete the oldest rotated files of ``live`` that are past retention; return them.

    Stops at the first file that does not qualify (unpublished records, a record newer than the
    cutoff, a name that does not match its contents), so only a prefix of the chain goes. ``now``
    defaults to the wall clock; the :class:`~tablectl.controller.journal.store.Journal` passes the
    earlier of that and its newest record's ``ts``.
    """
    live = Path(live)
    moment = now if now is not None else datetime.now(UTC)
    cutoff = moment - timedelta(days=retention_days)
    _tidy(live)
    removed: list[Path] = []
    for archive in list_archives(live):
        try:
            rows = _read_only(
                archive.path,
                "SELECT min(seq), max(seq), max(ts), sum(published = 0) FROM records",
            )
            last = _read_only(
                archive.path,
                "SELECT seq, hash, ts, prev_hash FROM records ORDER BY seq DESC LIMIT 1",
            )
            first = _read_only(archive.path, "SELECT prev_hash FROM records ORDER BY seq LIMIT 1")
        except JournalError as exc:
            log.warning("retention_unreadable", path=str(archive.path), error=str(exc))
            break
        first_seq, last_seq, max_ts, unpublished = rows[0]
        newest = max(
            (t for t in (parse_ts(max_ts), parse_ts(last[0][2] if last else None)) if t),
            default=None,
        )
        if (
            (first_seq, last_seq) != (archive.first_seq, archive.last_seq)
            or unpublished
            or newest is None
            or newest >= cutoff
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
            "retired_at": _iso(moment),
            "retention_days": retention_days,
        }
        _append_retired(live, entry)
        seal_path(archive.path).unlink(missing_ok=True)
        archive.path.unlink()
        _fsync_dir(archive.path.parent)
        log.info("journal_file_retired", path=str(archive.path), last_seq=archive.last_seq)
        removed.append(archive.path)
    return removed


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
    _fsync_dir(path.parent)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def read_retired(live: Path) -> list[dict[str, Any]]:
    """The retirement log's entries, checked to link up from the genesis hash.

    Raises:
        JournalIntegrityError: a line is not canonical JSON, or the entries do not link.
    """
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


def _is_journal_file(path: Path) -> bool:
    if not path.is_file() or path.name.endswith(_NOT_JOURNALS):
        return False
    try:
        with path.open("rb") as stream:
            return stream.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except OSError:
        return False


def live_of(path: Path) -> Path:
    """The live file a journal file belongs to: itself, or the one a rotated file came from."""
    match = _ROTATED.match(path.name)
    if match is None:
        return path
    return path.with_name(match["stem"] + (match["suffix"] or ""))


def journal_sets(paths: Iterable[Path]) -> dict[Path, list[Path]]:
    """Group journal files (folders expanded) by the live file they rotated from.

    Each group is ordered as the chain runs: rotated files by ``seq``, then the live file.
    """
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


def verify_chain(
    paths: Sequence[Path], *, complete: bool | None = None, key: bytes | None = None
) -> list[ChainReport]:
    """Verify every file (see :func:`~tablectl.controller.journal.store.verify_journal_file`) and
    the links between them: each file's anchor is the previous file's last ``seq``/``hash``.

    ``complete`` (default: a folder was given) also requires the chain's start be accounted
    for: seq 1 from the genesis hash, or the end of the last file retired by retention.
    ``key`` checks every file's keyed anchors and seal mac as well (R13, R15).

    Raises:
        ChainBrokenError: naming the first broken link, within a file or between two.
        JournalIntegrityError: a file altered outside its links, or a bad retirement log.
        KeyedEvidenceError: (``key`` only) a mac that does not match, or a closed file without
            a keyed seal.
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


# -- CLI -------------------------------------------------------------------------------------------


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """``tablectl verify [--key FILE [--anchor FILE]] JOURNAL…``."""
    parser.add_argument(
        "journal",
        type=Path,
        nargs="+",
        help="journal file(s) or folder(s); several files or a folder are checked as one chain"
        " per table (rotated files included), a folder also back to seq 1 or the last retired"
        " file",
    )
    parser.add_argument(
        "--key",
        type=Path,
        default=None,
        metavar="FILE",
        help="the journal's [journal] key_file: check the keyed anchors and seal macs too"
        " (who wrote it, not only in what order); a closed file must then have a keyed seal",
    )
    parser.add_argument(
        "--anchor",
        type=Path,
        default=None,
        metavar="FILE",
        help="with --key: the anchor published on {prefix}/{table}/anchor (its JSON, e.g. from"
        " mosquitto_sub -C 1): the journal must hold it (a tail cut after it is caught)",
    )


UNKEYED_NOTE = (
    "hash chain intact: proves order, not authorship; pass --key to check the keyed anchors"
)
"""What an unkeyed ``verify`` says on stdout: anyone who can write the file can recompute it."""


def run_verify(args: argparse.Namespace) -> int:
    """Print ``OK: N records, hash chain intact`` (and what was checked) or raise.

    Raises:
        ChainBrokenError: naming the first broken link (the CLI prints it, exit 1).
        JournalError: a file that is missing, not a journal, or altered outside its links.
        KeyedEvidenceError: with ``--key``: naming the record whose keyed evidence fails.
        ConfigError: the ``--key`` file is unusable (missing, readable by others, too short).
    """
    paths: list[Path] = list(args.journal)
    key_file: Path | None = getattr(args, "key", None)
    anchor_file: Path | None = getattr(args, "anchor", None)
    if anchor_file is not None and key_file is None:
        raise JournalError("--anchor needs --key (an anchor is worth only its mac)")
    key: bytes | None = None
    if key_file is not None:
        from tablectl.controller.secrets import read_journal_key  # noqa: PLC0415 - only when asked

        key = read_journal_key(key_file, "verify --key")
    published = _read_anchor_file(anchor_file) if anchor_file is not None else None
    compared: bool | None = None
    if len(paths) == 1 and paths[0].is_file():
        summary = verify_journal_file(paths[0], key=key)
        if published is not None and key is not None:
            compared = check_published_anchor([summary], published, key)
        print(f"OK: {summary.count} records, hash chain intact")
        print(f"  {_describe(summary)}")
        _print_keyed([summary], key, published, compared)
        return 0
    reports = verify_chain(paths, key=key)
    if published is not None and key is not None:
        table = published.get("table")
        matching = [r for r in reports if r.files and r.files[0].table == table] or reports
        compared = check_published_anchor(matching[0].files, published, key)
    for report in reports:
        print(
            f"OK: {report.count} records, hash chain intact"
            f" ({report.live.name}: {len(report.files)} file(s), seq"
            f" {report.first_seq}-{report.last_seq})"
        )
        if report.retired_through:
            print(f"  seq 1-{report.retired_through} retired by retention (see retirement log)")
        if report.partial_start:
            print(f"  chain starts at seq {report.first_seq}: earlier files not given")
        for summary in report.files:
            print(f"  {_describe(summary)}")
        _print_keyed(report.files, key, published, compared)
    return 0


def _print_keyed(
    files: Sequence[FileSummary],
    key: bytes | None,
    published: Mapping[str, Any] | None = None,
    compared: bool | None = None,
) -> None:
    """What the key proved (or that nothing keyed was checked); warnings go to stderr."""
    anchors = sum(f.anchors for f in files)
    macs = sum(1 for f in files if f.seal_mac)
    evidence = f"{anchors} anchor(s) and {macs} seal mac(s)"
    if key is None:
        if anchors or macs:
            print(f"  keyed evidence not checked: {evidence} (no --key)")
        print(UNKEYED_NOTE)
        return
    if not files:
        return
    first, last = files[0].first_seq, files[-1].last_seq
    through = files[-1].keyed_through
    if through >= first:
        print(f"keyed: {evidence} match: the key vouches for seq {first}-{through}")
    else:
        print(f"keyed: {evidence} match: no record is covered by the key yet")
    if published is not None and compared is not None:
        seq = published.get("seq")
        print(
            f"  the published anchor (seq {seq}) is in the journal"
            if compared
            else f"  the published anchor (seq {seq}) precedes the files given: not compared"
        )
    if through < last:
        print(
            f"tablectl verify: warning: {files[-1].path}: seq {max(through + 1, first)}-{last}"
            " follow the newest anchor and are not covered by the key (a live or crashed"
            " journal's tail; compare with the published anchor: --anchor)",
            file=sys.stderr,
        )


def _read_anchor_file(path: Path) -> dict[str, Any]:
    try:
        obj = json.loads(path.read_bytes())
    except OSError as exc:
        raise JournalError(f"--anchor {path}: cannot read: {exc.strerror or exc}") from None
    except ValueError:
        raise JournalError(f"--anchor {path}: not JSON") from None
    if not isinstance(obj, dict) or obj.get("type") != ANCHOR:
        raise JournalError(f"--anchor {path}: not an anchor record")
    return obj


def check_published_anchor(
    files: Sequence[FileSummary], anchor: Mapping[str, Any], key: bytes
) -> bool:
    """The journal must hold ``anchor`` (published on ``{prefix}/{table}/anchor``) as it is.

    The published copy lives off the machine: it catches what the file alone cannot, a tail cut
    right after an anchor with the seal deleted (R13, R15). Returns whether it was compared
    with a record (``False``: its ``seq`` is before the files given).

    Raises:
        JournalError: the anchor itself is malformed, not hashed as a record, or its mac does
            not match (not this key's).
        KeyedEvidenceError: the journal ends before the anchor's ``seq``, or holds another
            record there.
    """
    problem = anchor_problem(anchor)
    seq, prev, digest = anchor.get("seq"), anchor.get("prev_hash"), anchor.get("hash")
    if problem is None and not (
        isinstance(prev, str) and isinstance(digest, str) and record_hash(prev, anchor) == digest
    ):
        problem = "its hash does not match its content"
    if problem is not None or type(seq) is not int:
        raise JournalError(f"--anchor: not a journal's anchor record: {problem}")
    if not mac_matches(key, anchor.get("mac"), anchor.get("table"), seq - 1, str(prev)):
        raise JournalError("--anchor: its mac does not match (another key, or altered)")
    if not files:
        return False
    if files[0].table is not None and anchor.get("table") != files[0].table:
        raise JournalError(
            f"--anchor: the anchor is table {anchor.get('table')!r}'s, the journal"
            f" {files[0].table!r}'s"
        )
    last = files[-1]
    if seq > last.last_seq:
        raise KeyedEvidenceError(
            last.path,
            seq,
            f"the published anchor names seq {seq}, beyond the journal's end (seq"
            f" {last.last_seq}): records cut from the tail",
        )
    holder = next((f for f in files if f.first_seq <= seq <= f.last_seq), None)
    if holder is None:
        return False  # before the files given (retired): nothing to compare it with
    rows = _read_only(holder.path, "SELECT hash FROM records WHERE seq = ?", (seq,))
    if not rows or rows[0][0] != digest:
        raise KeyedEvidenceError(
            holder.path,
            seq,
            "is not the published anchor: the journal was rewritten after it was published",
        )
    return True


def _describe(summary: FileSummary) -> str:
    seal = (
        "sealed: every byte checked"
        if summary.sealed
        else "not sealed (open, or not closed cleanly): checked record by record and"
        " structurally; free space is not covered"
    )
    return f"{summary.path}: seq {summary.first_seq}-{summary.last_seq}, {seal}"


if __name__ == "__main__":  # pragma: no cover - python -m tablectl.controller.journal.retention DIR
    parser = argparse.ArgumentParser(prog="tablectl verify")
    add_verify_arguments(parser)
    sys.exit(run_verify(parser.parse_args()))
