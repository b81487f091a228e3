"""The archive's months: monthly partitions of ``records``, and old ones detached to files.

A time window reads only its months, and retention is ``DETACH PARTITION`` plus an export, not a
``DELETE`` over billions of rows. A month is detached only once no table can still send into it
(R19); each step of :func:`detach_months` is safe to repeat (docs/fleet.md).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final
from urllib.parse import quote

from psycopg.types.json import Jsonb

from tablectl.controller.archive.db import ArchiveError
from tablectl.controller.archive.reader import COLUMNS, Archive, row_record
from tablectl.controller.archive.schema import Month, month_of, partition_name, partition_sql
from tablectl.controller.core.errors import ChainBrokenError
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import JournalRecord, canonical_json, fsync_dir
from tablectl.controller.journal.records import loads_record, stored_record

MANIFEST: Final = "manifest.json"
CATALOG: Final = "archive_detached"
"""The archive's record of detached months (a table of the schema: migration 2)."""
MIN_AGE_DAYS: Final = 100
"""Days a month must have ended before it may be detached: the tables' journals keep ≥ 90 days
(R19) and a gap may be re-sent from them until then; ten days' margin."""
_NAME = re.compile(r"records_(\d{4})_(\d{2})")
_KIND = "tablectl-archive-month"


def parse_month(text: str, what: str = "month") -> Month:
    """``2025-01`` → ``Month(2025, 1)``."""
    found = re.fullmatch(r"(\d{4})-(\d{2})", text.strip())
    if found is None or not 1 <= int(found[2]) <= 12:
        raise ArchiveError(f"{what}: {text!r} is not a month (YYYY-MM, e.g. 2025-01)")
    return Month(int(found[1]), int(found[2]))


def month_text(month: Month) -> str:
    """``Month(2025, 1)`` → ``2025-01``."""
    return f"{month.year:04d}-{month.month:02d}"


def month_of_name(name: str) -> Month | None:
    """``records_2025_01`` → ``Month(2025, 1)``; ``None`` for any other name."""
    found = _NAME.fullmatch(name)
    return Month(int(found[1]), int(found[2])) if found and 1 <= int(found[2]) <= 12 else None


@dataclass(frozen=True)
class Partition:
    """One month of the archive as the database has it."""

    month: Month
    attached: bool
    rows: int
    """The planner's estimate (``reltuples``): counting billions of rows is not a listing."""
    size: int
    """Bytes on disk, indexes and TOAST included."""


def ensure_partitions(archive: Archive, months: Sequence[Month]) -> list[Month]:
    """Create the partitions of ``months`` that do not exist yet; the months created. A detached
    month is refused rather than started over."""
    detached = {p.month for p in list_partitions(archive) if not p.attached}
    detached |= {parse_month(str(e["month"])) for e in detached_catalog(archive)}
    created: list[Month] = []
    for month in sorted(set(months)):
        if month in detached:
            raise ArchiveError(
                f"month {month_text(month)} is detached from the archive: nothing more goes in"
            )
        exists = archive.query("SELECT to_regclass(%s) IS NOT NULL", (partition_name(month),))
        if exists[0][0]:
            continue
        archive.query(partition_sql(month))
        created.append(month)
    return created


def list_partitions(archive: Archive) -> list[Partition]:
    """Every ``records_YYYY_MM`` table, attached or detached (not yet dropped), by month."""
    rows = archive.query(
        "SELECT c.relname, c.relispartition, GREATEST(c.reltuples, 0)::bigint,"
        " pg_total_relation_size(c.oid)"
        " FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE c.relkind = 'r' AND n.nspname = current_schema()"
        " AND c.relname ~ '^records_[0-9]{4}_[0-9]{2}$' ORDER BY c.relname"
    )
    found = []
    for name, attached, estimate, size in rows:
        month = month_of_name(str(name))
        if month is not None:
            found.append(Partition(month, bool(attached), int(estimate), int(size)))
    return found


def detached_catalog(archive: Archive) -> list[dict[str, Any]]:
    """The manifests of the detached months, oldest first (none when nothing was detached, or
    when the archive's schema predates the catalog)."""
    if not archive.query("SELECT to_regclass(%s) IS NOT NULL", (CATALOG,))[0][0]:
        return []
    rows = archive.query(f"SELECT manifest, directory FROM {CATALOG} ORDER BY month")  # noqa: S608
    return [{**manifest, "directory": directory} for manifest, directory in rows]


def _file_name(table: str) -> str:
    """A table id as a file name: itself when it is plain, else percent-encoded."""
    return quote(table, safe="") + ".jsonl.gz"


def _export_month(archive: Archive, month: Month, target: Path) -> dict[str, Any]:
    """Write the detached ``month``'s rows to ``target`` (a new folder) and its manifest."""
    tmp = target.with_name(target.name + ".tmp")
    if tmp.exists():
        _remove_tree(tmp)  # left by an interrupted run
    tmp.mkdir(parents=True)
    name = partition_name(month)
    tables = [
        str(r[0])
        for r in archive.query(
            f"WITH RECURSIVE t(id) AS (SELECT min(table_id) FROM {name}"  # noqa: S608 - ours
            f" UNION ALL SELECT (SELECT min(table_id) FROM {name} WHERE table_id > t.id)"
            " FROM t WHERE t.id IS NOT NULL) SELECT id FROM t WHERE id IS NOT NULL"
        )
    ]
    entries: dict[str, Any] = {}
    for table in tables:
        entries[table] = _export_table(archive, month, table, tmp / _file_name(table))
    manifest = {
        "schema": 1,
        "kind": _KIND,
        "month": month_text(month),
        "partition": name,
        "from": format_moment(month.start, "seconds"),
        "until": format_moment(month.next().start, "seconds"),
        "source": archive.where,
        "exported_at": format_moment(datetime.now(UTC), "seconds"),
        "tables": entries,
    }
    _write_synced(tmp / MANIFEST, (json.dumps(manifest, indent=2, sort_keys=True) + "\n").encode())
    fsync_dir(tmp)
    os.replace(tmp, target)
    fsync_dir(target.parent)
    return manifest


def _write_synced(path: Path, data: bytes) -> None:
    with path.open("wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())


def _export_table(archive: Archive, month: Month, table: str, path: Path) -> dict[str, Any]:
    first: JournalRecord | None = None
    last: JournalRecord | None = None
    count, after = 0, 0
    with path.open("wb") as raw_out:
        # mtime 0 and no name: the same rows give the same bytes, whoever exports them.
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw_out, mtime=0) as out:
            while True:
                rows = archive.query(
                    f"SELECT {COLUMNS} FROM {partition_name(month)}"  # noqa: S608 - ours
                    " WHERE table_id = %s AND seq > %s"
                    " ORDER BY seq LIMIT 5000",
                    (table, after),
                )
                for row in rows:
                    record = row_record(row)  # a column edited behind raw is not exported
                    out.write(bytes(row[-1]) + b"\n")
                    first = first or record
                    last = record
                    count += 1
                if len(rows) < 5000:
                    break
                after = int(rows[-1][1])
        raw_out.flush()
        os.fsync(raw_out.fileno())
    assert first is not None  # the table has rows in this month
    assert last is not None
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return {
        "file": path.name,
        "sha256": digest,
        "records": count,
        "first_seq": first.seq,
        "first_prev_hash": first.prev_hash,
        "last_seq": last.seq,
        "last_hash": last.hash,
    }


def read_manifest(folder: Path) -> dict[str, Any]:
    """A detached month's manifest (``folder/manifest.json``)."""
    path = folder / MANIFEST
    try:
        manifest = json.loads(path.read_bytes())
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except ValueError:
        raise ArchiveError(f"{path}: not JSON (altered?)") from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("kind") != _KIND
        or not isinstance(manifest.get("tables"), dict)
        or month_of_name(str(manifest.get("partition"))) is None
    ):
        raise ArchiveError(f"{path}: not an archive month's manifest")
    return manifest


def read_month_file(folder: Path, table: str, entry: dict[str, Any]) -> Iterator[JournalRecord]:
    """One table's records from a detached month, each parsed from its bytes, the file checked
    against the manifest; the chain itself is the caller's walk."""
    path = folder / str(entry.get("file"))
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ArchiveError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if digest != entry.get("sha256"):
        raise ArchiveError(f"{path}: differs from its manifest (sha256): altered or replaced")
    count = 0
    try:
        with gzip.open(path, "rb") as stream:
            for line in stream:
                count += 1
                yield _line_record(line, table, path, count)
    except (OSError, EOFError) as exc:
        raise ArchiveError(f"{path}: not a whole gzip file: {exc}") from None
    if count != entry.get("records"):
        raise ArchiveError(f"{path}: {count} records, its manifest says {entry.get('records')}")


def _line_record(line: bytes, table: str, path: Path, number: int) -> JournalRecord:
    try:
        text = line.rstrip(b"\n").decode("utf-8")
    except UnicodeDecodeError:
        raise ArchiveError(f"{path}:{number}: not UTF-8 (altered?)") from None
    try:
        fields = loads_record(text, 0)
    except ChainBrokenError:
        raise ArchiveError(f"{path}:{number}: not a JSON record (altered?)") from None
    seq = fields.get("seq")
    if type(seq) is not int:
        raise ArchiveError(f"{path}:{number}: a record without an integer seq")
    if canonical_json(fields) != text:
        raise ChainBrokenError(seq, f"not in canonical form in {path.name} (altered?)")
    if fields.get("table") != table:
        raise ChainBrokenError(seq, f"record in {path} names table {fields.get('table')!r}")
    return stored_record(fields, seq)


def detach_months(
    archive: Archive,
    before: Month,
    to: Path,
    *,
    keep: bool = False,
    force: bool = False,
    now: datetime | None = None,
    progress: Any = None,
) -> list[dict[str, Any]]:
    """Detach every month before ``before`` and export it under ``to``; the manifests written."""
    now = now or datetime.now(UTC)
    if not force and before.start > now - timedelta(days=MIN_AGE_DAYS):
        latest = month_text(month_of(now - timedelta(days=MIN_AGE_DAYS)))
        raise ArchiveError(
            f"--before {month_text(before)}: a month detached must have ended {MIN_AGE_DAYS}"
            f" days ago (--before {latest} at the latest): tables keep their journals >= 90"
            " days (R19) and may still re-send records into it; --force to detach anyway"
        )
    if not archive.query("SELECT to_regclass(%s) IS NOT NULL", (CATALOG,))[0][0]:
        raise ArchiveError(
            f"PostgreSQL {archive.where}: the archive's schema has no {CATALOG} yet: start"
            " tablectl archive of this version once (it migrates the schema)"
        )
    done = {str(e["month"]) for e in detached_catalog(archive)}
    try:
        to.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ArchiveError(f"{to}: cannot create: {exc.strerror or exc}") from None
    written: list[dict[str, Any]] = []
    for partition in list_partitions(archive):
        month = partition.month
        if month >= before:
            continue
        name = partition_name(month)
        if month_text(month) in done:
            if not keep and not partition.attached:
                archive.query(f"DROP TABLE IF EXISTS {name}")
            continue
        if partition.attached:
            archive.query(f"ALTER TABLE records DETACH PARTITION {name}")
        target = to / name
        if progress is not None:
            progress(f"{month_text(month)}: detached, exporting to {target}")
        try:
            if target.exists():
                # A folder from an interrupted run: re-export, the rows are still here.
                _remove_tree(target)
            manifest = _export_month(archive, month, target)
        except OSError as exc:
            raise ArchiveError(f"{target}: cannot write: {exc.strerror or exc}") from None
        _check_export(target, manifest)
        archive.query(
            f"INSERT INTO {CATALOG} (month, manifest, directory) VALUES (%s, %s, %s)"  # noqa: S608
            " ON CONFLICT (month) DO NOTHING",
            (month_text(month), Jsonb(manifest), str(target.resolve())),
        )
        if not keep:
            archive.query(f"DROP TABLE {name}")
        written.append(manifest)
    return written


def _check_export(folder: Path, manifest: dict[str, Any]) -> None:
    """Read the files back: every line a record of its table, consecutive ``seq`` within the
    manifest's ends (the full chain check is ``tablectl verify``'s)."""
    for table, entry in manifest["tables"].items():
        last: JournalRecord | None = None
        for record in read_month_file(folder, table, entry):
            if last is None and (record.seq, record.prev_hash) != (
                entry["first_seq"],
                entry["first_prev_hash"],
            ):
                raise ArchiveError(f"{folder}: {table}'s file does not start as exported")
            last = record
        if last is None or (last.seq, last.hash) != (entry["last_seq"], entry["last_hash"]):
            raise ArchiveError(f"{folder}: {table}'s file does not end as exported")


def _remove_tree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink()
    path.rmdir()
