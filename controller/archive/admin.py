"""The archive's read-side commands: ``tablectl verify --dsn``/``--archive-file`` and
``tablectl archive-admin``, apart from the walks so those stay usable without an output format.
``verify`` on the archive says what it says on a journal, one line per table prefixed with its id.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from tablectl.controller.archive.db import ArchiveError
from tablectl.controller.core.exits import EXIT_ERROR, EXIT_OK
from tablectl.controller.journal import UNKEYED_NOTE, KeyedEvidenceError

if TYPE_CHECKING:  # the walks import psycopg: only when a command runs, not to build the parser
    from tablectl.controller.archive.audit import MonthFolder, TableChain
    from tablectl.controller.archive.reader import Archive

MANIFEST: Final = "manifest.json"
"""A detached month's manifest (:data:`tablectl.controller.archive.partitions.MANIFEST`)."""


def add_verify_arguments(parser: argparse.ArgumentParser) -> None:
    """``tablectl verify`` on the archive: ``--dsn``, ``--table``, ``--archive-file``."""
    group = parser.add_argument_group(
        "the floor's archive (instead of journal files)",
        "each table's chain from the archive in PostgreSQL and/or its detached months' files,"
        " as one chain; example: tablectl verify --dsn postgresql://archive@db/tablectl"
        " --archive-file /srv/archive/detached --table ROU-01",
    )
    group.add_argument(
        "--dsn",
        metavar="DSN",
        help="the archive's PostgreSQL connection string (postgresql://user@host:port/db);"
        " read-only (default: no archive)",
    )
    group.add_argument(
        "--table",
        action="append",
        metavar="ID",
        help="only this table (repeatable; default: every table in the archive or files)",
    )
    group.add_argument(
        "--archive-file",
        type=Path,
        action="append",
        metavar="DIR",
        help="a detached month's folder (records_YYYY_MM/ with manifest.json) or the folder of"
        " them (archive-admin detach --to DIR); repeatable. A journal path that holds them is"
        " recognised too",
    )


def _holds_months(path: Path) -> bool:
    return (
        path.name == MANIFEST
        or (path / MANIFEST).is_file()
        or any(path.glob(f"records_*/{MANIFEST}"))
    )


def wants_archive(args: argparse.Namespace) -> bool:
    """Whether ``tablectl verify`` was asked about the archive rather than journal files: a
    ``--dsn`` or ``--archive-file``, or paths that are detached months' folders."""
    paths: list[Path] = list(getattr(args, "journal", None) or [])
    if getattr(args, "dsn", None) or getattr(args, "archive_file", None):
        return True
    return bool(paths) and all(_holds_months(p) for p in paths)


def run_verify(
    args: argparse.Namespace, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    """Verify the archive's chains; 0 when every table's is intact (and, with ``--key``, vouched for
    by the key), 1 otherwise."""
    out = out or sys.stdout
    err = err or sys.stderr
    if getattr(args, "anchor", None) is not None:
        raise ArchiveError(
            "--anchor compares a journal with its published anchor; the archive"
            " holds the anchors itself (use --key)"
        )
    paths = list(args.archive_file or []) + [
        p for p in (getattr(args, "journal", None) or []) if _holds_months(p)
    ]
    others = [p for p in (getattr(args, "journal", None) or []) if not _holds_months(p)]
    if others:
        raise ArchiveError(f"{others[0]}: a journal file; verify journals and the archive apart")
    from tablectl.controller.archive.audit import find_months, verify_archive  # noqa: PLC0415
    from tablectl.controller.archive.reader import open_archive  # noqa: PLC0415

    key: bytes | None = None
    if args.key is not None:
        from tablectl.controller.secrets import read_journal_key  # noqa: PLC0415 - only when asked

        key = read_journal_key(args.key, "verify --key")
    months = find_months(paths)
    archive = open_archive(args.dsn) if args.dsn else None
    try:
        chains = verify_archive(archive, months, tables=args.table, key=key)
    finally:
        if archive is not None:
            archive.close()
    where = archive.where if archive is not None else f"{len(months)} detached month(s)' files"
    failed = 0
    for chain in chains:
        if chain.ok and key is not None and chain.count and not chain.keyed_through:
            # With the key, a chain nothing keyed vouches for is no table's proven record: a
            # table fabricated on the broker links as well as a real one (issue 26).
            failed += 1
            err.write(
                f"tablectl verify: {chain.table}: no keyed evidence: none of its"
                f" {chain.count} records is covered by an anchor the key matches (a table"
                " without [journal] key_file, another key, or records not its own)\n"
            )
        elif chain.ok:
            _print_ok(out, chain, where, months, key)
        else:
            failed += 1
            err.write(f"tablectl verify: {_failure(chain)}\n")
    if key is None and chains and failed < len(chains):
        out.write(UNKEYED_NOTE + "\n")
    out.flush()
    return EXIT_ERROR if failed else EXIT_OK


def _failure(chain: TableChain) -> str:
    if chain.problem is not None:
        if isinstance(chain.problem, KeyedEvidenceError):
            return str(chain.problem)  # "TABLE: seq N: why"
        return f"{chain.table}: {chain.problem}"
    (first, last), *more = chain.gaps
    text = (
        f"{chain.table}: hash chain broken at seq {first}: records {first}-{last} missing"
        f" (next seq is {last + 1}; the archiver re-requests gaps: cmd/resend)"
    )
    if more:
        text += f"; {len(more)} more gap(s): " + ", ".join(f"{a}-{b}" for a, b in more[:5])
        text += ", …" if len(more) > 5 else ""
    return text


def _print_ok(
    out: TextIO, chain: TableChain, where: str, months: list[MonthFolder], key: bytes | None
) -> None:
    span = f"seq {chain.first_seq}-{chain.last_seq}; " if chain.count else ""
    out.write(f"OK: {chain.table}: {chain.count} records, hash chain intact ({span}{where})\n")
    if chain.from_files:
        out.write(f"  {chain.from_files} of them from {len(months)} detached month(s)' files\n")
    if chain.starts_after:
        out.write(
            f"  seq 1-{chain.starts_after} not read: in detached months before the files given,"
            " or detached (--archive-file DIR checks their files)\n"
        )
    for first, last, name in chain.detached:
        out.write(f"  seq {first}-{last} detached ({name}; its files not given)\n")
    if chain.withheld:
        out.write(
            f"  {chain.withheld} card(s) published face down (withheld): linked, not re-hashed"
            " (the table's journal holds them in full)\n"
        )
    if key is None:
        if chain.anchors:
            out.write(f"  keyed evidence not checked: {chain.anchors} anchor(s) (no --key)\n")
        return
    own = f", {chain.authenticated} record(s) carry their own auth" if chain.authenticated else ""
    out.write(
        f"keyed: {chain.anchors} anchor(s) match{own}: the key vouches for seq"
        f" {chain.first_seq}-{chain.keyed_through}\n"
    )


# -- archive-admin ------------------------------------------------------------------------------


def add_admin_arguments(parser: argparse.ArgumentParser) -> None:
    """``tablectl archive-admin partitions|create|detach --dsn DSN …``."""
    sub = parser.add_subparsers(dest="admin_command", required=True, metavar="COMMAND")
    listing = sub.add_parser(
        "partitions",
        help="list the archive's months: attached, detached (and where their files are)",
        description="Every monthly partition of records (attached or detached, rows estimated),"
        " then the detached months recorded with their folders.",
        epilog="example: tablectl archive-admin partitions --dsn postgresql://archive@db/tablectl",
    )
    create = sub.add_parser(
        "create",
        help="create the monthly partitions ahead of time",
        description="Create the partitions from --from for --months months (existing ones are"
        " kept). The archiver creates a month when its first record arrives; creating them"
        " ahead (a monthly timer) keeps that DDL off the ingest path.",
        epilog="example: tablectl archive-admin create --dsn postgresql://archive@db/tablectl"
        " --months 3",
    )
    create.add_argument(
        "--from",
        dest="start",
        metavar="YYYY-MM",
        help="first month (default: this month)",
    )
    create.add_argument(
        "--months", type=int, default=3, help="how many months (default: %(default)s)"
    )
    detach = sub.add_parser(
        "detach",
        help="detach old months and export them to files that tablectl verify checks",
        description="Detach every month before --before from records, export each to"
        " DIR/records_YYYY_MM/ (per table TABLE.jsonl.gz: the published bytes in seq order; a"
        " manifest.json with each table's first and last seq and hashes), read the files back,"
        " record the month in archive_detached, then drop it from the database. Repeatable: an"
        " interrupted run is finished by the next. Retention: docs/fleet.md.",
        epilog="example: tablectl archive-admin detach --dsn postgresql://archive@db/tablectl"
        " --before 2025-01 --to /srv/archive/detached",
    )
    detach.add_argument(
        "--before", required=True, metavar="YYYY-MM", help="detach the months before this one"
    )
    detach.add_argument(
        "--to", required=True, type=Path, metavar="DIR", help="where the months' folders go"
    )
    detach.add_argument(
        "--keep",
        action="store_true",
        help="keep the detached tables in the database (default: drop them once exported)",
    )
    detach.add_argument(
        "--force",
        action="store_true",
        help="detach a month that ended less than 100 days ago (tables may still re-send into"
        " it; default: refuse)",
    )
    for each in (listing, create, detach):
        each.add_argument(
            "--dsn",
            required=True,
            metavar="DSN",
            help="the archive's PostgreSQL connection string (postgresql://user@host:port/db)",
        )


def run_admin(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Run one ``archive-admin`` command."""
    from tablectl.controller.archive.reader import open_archive  # noqa: PLC0415

    out = out or sys.stdout
    command: str = args.admin_command
    with open_archive(args.dsn, read_only=command == "partitions") as archive:
        if command == "partitions":
            _print_partitions(out, archive)
        elif command == "create":
            _create(out, archive, args)
        else:
            _detach(out, archive, args)
    out.flush()
    return EXIT_OK


def _print_partitions(out: TextIO, archive: Archive) -> None:
    from tablectl.controller.archive.partitions import (  # noqa: PLC0415
        detached_catalog,
        list_partitions,
        month_text,
    )
    from tablectl.controller.archive.schema import partition_name  # noqa: PLC0415

    partitions = list_partitions(archive)
    if not partitions:
        out.write(f"{archive.where}: no monthly partitions yet\n")
    for p in partitions:
        state = "attached" if p.attached else "DETACHED (not yet exported and dropped)"
        name = partition_name(p.month)
        out.write(f"{month_text(p.month)}  {name}  ~{p.rows} rows  {_size(p.size)}  {state}\n")
    for manifest in detached_catalog(archive):
        tables: dict[str, Any] = manifest.get("tables", {})
        count = sum(int(e.get("records", 0)) for e in tables.values())
        out.write(
            f"{manifest.get('month')}  detached to {manifest.get('directory')}  {count} records,"
            f" {len(tables)} table(s)\n"
        )


def _size(size: int) -> str:
    value = float(size)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} B"  # pragma: no cover - the loop returns


def _create(out: TextIO, archive: Archive, args: argparse.Namespace) -> None:
    from tablectl.controller.archive.partitions import (  # noqa: PLC0415
        ensure_partitions,
        month_text,
        parse_month,
    )
    from tablectl.controller.archive.schema import month_of  # noqa: PLC0415

    if args.months < 1:
        raise ArchiveError("--months must be at least 1")
    month = parse_month(args.start, "--from") if args.start else month_of(datetime.now(UTC))
    months = []
    for _ in range(args.months):
        months.append(month)
        month = month.next()
    created = ensure_partitions(archive, months)
    out.write(
        f"created {len(created)} partition(s):"
        f" {', '.join(map(month_text, created)) or 'none needed'}\n"
    )


def _detach(out: TextIO, archive: Archive, args: argparse.Namespace) -> None:
    from tablectl.controller.archive.partitions import (  # noqa: PLC0415
        detach_months,
        month_text,
        parse_month,
    )

    before = parse_month(args.before, "--before")

    def progress(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    written = detach_months(
        archive, before, args.to, keep=args.keep, force=args.force, progress=progress
    )
    for manifest in written:
        tables = manifest["tables"]
        count = sum(int(e["records"]) for e in tables.values())
        out.write(
            f"{manifest['month']}: {count} records of {len(tables)} table(s) in"
            f" {args.to / manifest['partition']}"
            f"{' (table kept)' if args.keep else ', dropped from the database'}\n"
        )
    if not written:
        out.write(f"nothing to detach before {month_text(before)}\n")
    else:
        out.write(f"check them: tablectl verify --dsn DSN --archive-file {args.to}\n")
