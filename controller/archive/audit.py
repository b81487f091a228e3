"""Verifying the archive: each table's chain from its records in PostgreSQL and its detached months
(``tablectl verify --dsn``, ``--archive-file``; what is checked: docs/fleet.md).

Across sources a record may come before its predecessor (a clock stepped back at a month's end):
early records wait, up to :data:`PENDING_LIMIT` a table, before a gap is declared.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tablectl.controller.archive.chains import auth_stripped, check_record
from tablectl.controller.archive.db import ArchiveError
from tablectl.controller.archive.partitions import (
    MANIFEST,
    detached_catalog,
    parse_month,
    read_manifest,
    read_month_file,
)
from tablectl.controller.archive.reader import COLUMNS, PAGE, Archive, row_record, table_ids
from tablectl.controller.archive.schema import Month
from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.journal import GENESIS_HASH, JournalRecord, KeyedEvidenceError

PENDING_LIMIT: Final = 20_000
"""Records of one table held back waiting for a missing predecessor before its gap is declared."""


@dataclass(frozen=True)
class MonthFolder:
    """A detached month's folder and its manifest."""

    path: Path
    manifest: dict[str, Any]

    @property
    def month(self) -> Month:
        return parse_month(str(self.manifest.get("month")), f"{self.path / MANIFEST}")


def find_months(paths: Iterable[Path]) -> list[MonthFolder]:
    """The detached months under ``paths`` (a month's folder, its manifest, or a folder of month
    folders), oldest first."""
    found: list[MonthFolder] = []
    for path in paths:
        folder = path.parent if path.name == MANIFEST else path
        if (folder / MANIFEST).is_file():
            found.append(MonthFolder(folder, read_manifest(folder)))
            continue
        inside = sorted(p for p in folder.glob("records_*") if (p / MANIFEST).is_file())
        if not folder.is_dir() or not inside:
            raise ArchiveError(f"{path}: no detached archive month here (no {MANIFEST})")
        found += [MonthFolder(p, read_manifest(p)) for p in inside]
    found.sort(key=lambda m: m.month)
    for before, after in itertools.pairwise(found):
        if before.month == after.month:
            raise ArchiveError(f"month {after.month} given twice: {before.path}, {after.path}")
    return found


@dataclass
class TableChain:
    """One table's chain as verified: what it holds, its gaps, and its first broken link."""

    table: str
    count: int = 0
    first_seq: int = 0
    last_seq: int = 0
    last_hash: str = GENESIS_HASH
    gaps: list[tuple[int, int]] = field(default_factory=list)
    """Missing ``seq`` ranges, inclusive."""
    detached: list[tuple[int, int, str]] = field(default_factory=list)
    """``seq`` ranges not read because they are in detached months whose files were not given
    (first, last, the month's partition name)."""
    withheld: int = 0
    anchors: int = 0
    keyed_through: int = 0
    """With a key: the newest ``seq`` the key vouches for (an anchor's head, or a record whose own
    ``auth`` matched: its ``prev_hash`` vouches for every record before it)."""
    authenticated: int = 0
    """With a key: records whose own ``auth`` matched it."""
    from_files: int = 0
    """Records read from detached months' files."""
    starts_after: int = 0
    """The chain was taken up after this ``seq`` (earlier records detached, files not given)."""
    problem: JournalError | None = None
    """The first broken link (:class:`ChainBrokenError`), or an anchor whose mac does not match
    (:class:`KeyedEvidenceError`, naming the table and ``seq``)."""

    @property
    def ok(self) -> bool:
        return self.problem is None and not self.gaps


class _Walk:
    """The state of one table's walk: the next expected link and the records that came early."""

    def __init__(self, chain: TableChain, key: bytes | None, seq: int, prev: str) -> None:
        self.chain = chain
        self.key = key
        self.next = seq
        self.prev = prev
        self.pending: dict[int, JournalRecord] = {}
        self.after_gap = False
        self.authenticated = False
        """A record of this walk carried a matching ``auth``: every later one must carry one."""

    def feed(self, record: JournalRecord, where: str) -> None:
        if self.chain.problem is not None:
            return
        if record.seq < self.next or record.seq in self.pending:
            raise ChainBrokenError(record.seq, f"stored twice (again in {where})")
        if record.seq > self.next:
            self.pending[record.seq] = record
            if len(self.pending) > PENDING_LIMIT:
                self._skip_gap()
            return
        self._take(record)
        while self.next in self.pending:
            self._take(self.pending.pop(self.next))

    def finish(self) -> None:
        while self.pending and self.chain.problem is None:
            self._skip_gap()

    def _skip_gap(self) -> None:
        """Declare the hole before the earliest waiting record and carry on from it."""
        resume = min(self.pending)
        self.chain.gaps.append((self.next, resume - 1))
        self.next = resume
        self.after_gap = True
        while self.next in self.pending:
            self._take(self.pending.pop(self.next))

    def _take(self, record: JournalRecord) -> None:
        """The record checked in its chain (:func:`check_record`; after a gap its link cannot
        be), counted, and the walk's head moved to it."""
        chain, seq = self.chain, record.seq
        head = None if self.after_gap else self.prev
        check = check_record(chain.table, record, head, self.key)
        problem = check.problem or auth_stripped(record, self.authenticated)
        if problem is not None:
            if problem.code in ("mac", "auth"):
                raise KeyedEvidenceError(Path(chain.table), seq, problem.reason)
            raise ChainBrokenError(seq, problem.reason)
        chain.withheld += check.withheld
        chain.anchors += check.anchor
        if check.keyed:
            chain.keyed_through = seq - 1
        if check.authenticated:
            self.authenticated = True
            chain.authenticated += 1
            chain.keyed_through = seq
        chain.count += 1
        chain.first_seq = chain.first_seq or seq
        chain.last_seq, chain.last_hash = seq, record.hash
        self.prev, self.next, self.after_gap = record.hash, seq + 1, False


def _start(
    table: str, months: list[MonthFolder], catalog: list[dict[str, Any]]
) -> tuple[int, str, int]:
    """Where a table's walk starts: ``(seq, prev_hash, starts_after)``: from genesis when files are
    given or nothing was detached, else after the last detached month that holds the table."""
    if months:
        for folder in months:
            entry = folder.manifest["tables"].get(table)
            if entry is not None:
                first = int(entry["first_seq"])
                if first > 1:
                    return first, str(entry["first_prev_hash"]), first - 1
                return 1, GENESIS_HASH, 0
        return 1, GENESIS_HASH, 0
    for manifest in reversed(catalog):
        entry = manifest.get("tables", {}).get(table)
        if entry is not None:
            last = int(entry["last_seq"])
            return last + 1, str(entry["last_hash"]), last
    return 1, GENESIS_HASH, 0


def _database_records(archive: Archive, table: str) -> Iterator[JournalRecord]:
    after = 0
    while True:
        rows = archive.query(
            f"SELECT {COLUMNS} FROM records WHERE table_id = %s AND seq > %s"  # noqa: S608
            f" ORDER BY seq, ts LIMIT {PAGE}",
            (table, after),
        )
        for row in rows:
            yield row_record(row)
        if len(rows) < PAGE:
            return
        after = int(rows[-1][1])
        # Two rows of one seq straddling a page: the next page starts after it, so the
        # duplicate would be skipped; look for it explicitly.
        twice = archive.query(
            "SELECT count(*) FROM records WHERE table_id = %s AND seq = %s", (table, after)
        )
        if int(twice[0][0]) > 1:
            raise ChainBrokenError(after, "stored twice in the archive")


def verify_archive(
    archive: Archive | None,
    months: list[MonthFolder],
    *,
    tables: list[str] | None = None,
    key: bytes | None = None,
) -> list[TableChain]:
    """Verify each table's chain across ``months`` and the ``archive``: a broken link ends that
    table's walk, the other tables are verified all the same."""
    catalog = detached_catalog(archive) if archive is not None else []
    known = set(table_ids(archive)) if archive is not None else set()
    for folder in months:
        known |= set(folder.manifest["tables"])
    wanted = sorted(known) if not tables else list(tables)
    if not wanted:
        raise ArchiveError("no table's records found")
    missing = [t for t in wanted if t not in known]
    if missing:
        where = archive.where if archive is not None else "the files given"
        raise ArchiveError(f"no records of table {', '.join(map(repr, missing))} in {where}")
    results = []
    for table in wanted:
        seq, prev, starts_after = _start(table, months, catalog)
        chain = TableChain(table, starts_after=starts_after)
        walk = _Walk(chain, key, seq, prev)
        try:
            for folder in months:
                entry = folder.manifest["tables"].get(table)
                if entry is None:
                    continue
                for record in read_month_file(folder.path, table, entry):
                    walk.feed(record, folder.path.name)
                    chain.from_files += 1
            if archive is not None:
                for record in _database_records(archive, table):
                    walk.feed(record, "the archive")
            walk.finish()
        except (ChainBrokenError, KeyedEvidenceError) as exc:
            chain.problem = exc
        _not_given(chain, months, catalog)
        results.append(chain)
    return results


def _not_given(chain: TableChain, months: list[MonthFolder], catalog: list[dict[str, Any]]) -> None:
    """Gaps that detached months account for (their files not given) are not missing records."""
    given = {str(m.manifest.get("month")) for m in months}
    spans = [
        (int(e["first_seq"]), int(e["last_seq"]), str(m.get("partition")))
        for m in catalog
        if str(m.get("month")) not in given and (e := m.get("tables", {}).get(chain.table))
    ]
    missing = []
    for first, last in chain.gaps:
        inside = [s for s in spans if s[0] <= last and s[1] >= first]
        covered = sum(min(last, s[1]) - max(first, s[0]) + 1 for s in inside)
        if inside and covered == last - first + 1:
            chain.detached += [(max(first, s[0]), min(last, s[1]), s[2]) for s in inside]
        else:
            missing.append((first, last))
    chain.gaps = missing
