"""``tablectl verify``: a journal file, a set of files or a folder, and the published anchor.

Without ``--key`` it proves order, not authorship; with it, the keyed anchors and seal macs (R13,
R15); ``--anchor`` compares with the anchor published off the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tablectl.controller.core.errors import JournalError
from tablectl.controller.journal.anchors import ANCHOR, anchor_problem, mac_matches
from tablectl.controller.journal.db import read_only
from tablectl.controller.journal.errors import KeyedEvidenceError
from tablectl.controller.journal.records import record_hash
from tablectl.controller.journal.retention import verify_chain
from tablectl.controller.journal.verify import FileSummary, verify_journal_file


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """``tablectl verify [--key FILE [--anchor FILE]] JOURNAL…``."""
    parser.add_argument(
        "journal",
        type=Path,
        nargs="*",  # none with `tablectl verify --dsn` (the archive): tools/cli.py checks
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

AUTHORSHIP_UNVERIFIED = (
    "authorship unverified (no --key): the hash chain proves order, not authorship"
)
"""What a report read from the archive without the tables' key says (``diag stats --dsn``,
``export --dsn``; issue 26): a table fabricated on the broker links as well as a real one."""


def run_verify(args: argparse.Namespace) -> int:
    """Print ``OK: N records, hash chain intact`` (and what was checked) or raise the journal's
    error (``ConfigError`` for an unusable ``--key`` file)."""
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

    The off-machine copy catches what the file alone cannot: a tail cut right after an anchor with
    the seal deleted (R13, R15). ``False``: its ``seq`` is before the files given.
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
    rows = read_only(holder.path, "SELECT hash FROM records WHERE seq = ?", (seq,))
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


if __name__ == "__main__":  # pragma: no cover - python -m tablectl.controller.journal.cli DIR
    parser = argparse.ArgumentParser(prog="tablectl verify")
    add_verify_arguments(parser)
    sys.exit(run_verify(parser.parse_args()))
