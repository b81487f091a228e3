"""Verifying a journal file without writing to it (``tablectl verify``; R13, R19, R20).

Beyond the chain: every column against the body, the body as *the* canonical JSON, ``published`` as
a 0/1 prefix, SQLite's integrity check, the seal, and with the key every mac.
"""

from __future__ import annotations

import dataclasses
import os
import sqlite3
import struct
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablectl.controller.core.errors import ChainBrokenError, JournalError
from tablectl.controller.journal.anchors import ANCHOR, anchor_problem, mac_matches
from tablectl.controller.journal.db import (
    APPLICATION_ID,
    READ_ERRORS,
    as_str,
    connect_read_only,
    describe_read_error,
    expected_schema,
    read_meta,
)
from tablectl.controller.journal.errors import JournalIntegrityError, KeyedEvidenceError
from tablectl.controller.journal.files import file_digest, looks_rotated, wal_path
from tablectl.controller.journal.records import (
    AUTH,
    GENESIS_HASH,
    HEX64,
    canonical_json,
    loads_record,
    record_hash,
)
from tablectl.controller.journal.seals import check_seal_mac, read_seal


@dataclass(frozen=True)
class FileSummary:
    """What verifying one journal file established: its chain ends and whether it is sealed."""

    path: Path
    table: str | None
    count: int
    anchor_seq: int
    anchor_hash: str
    last_seq: int
    last_hash: str
    sealed: bool
    anchors: int = 0
    """Keyed ``anchor`` records in the file (their macs checked only when ``keyed``)."""
    last_anchor: int = 0
    """``seq`` of the newest anchor record, 0 when there is none."""
    seal_mac: bool = False
    """The seal carries a ``mac`` (a keyed journal sealed it)."""
    keyed: bool = False
    """Verified with a key: every anchor's mac and the seal's (if any) matched."""

    @property
    def first_seq(self) -> int:
        """``seq`` of the file's first record (``last_seq + 1`` when it is empty)."""
        return self.anchor_seq + 1

    @property
    def keyed_through(self) -> int:
        """The last ``seq`` the key vouches for in this file (``keyed`` only; else 0): the end
        of a keyed seal, else the newest anchor, else the file's start (the previous file's
        keyed seal covers that). Records after it are not covered by the key."""
        if not self.keyed:
            return 0
        if self.sealed and self.seal_mac:
            return self.last_seq
        return max(self.last_anchor, self.anchor_seq)


_COLUMNS = ("ts", "type", "body", "prev_hash", "hash")


def _text(value: object, seq: int, column: str) -> str:
    if not isinstance(value, bytes):
        raise ChainBrokenError(seq, f"{column} column is not text ({type(value).__name__})")
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ChainBrokenError(seq, f"{column} column is not valid UTF-8") from None


def verify_conn(
    conn: sqlite3.Connection, path: Path, table: str | None = None, key: bytes | None = None
) -> FileSummary:
    """Chain, columns and structure of one open file. The chain goes first, so an altered record is
    named by its ``seq`` even where SQLite's own check would notice too."""
    old_factory = conn.text_factory
    conn.text_factory = bytes  # a flipped byte may leave invalid UTF-8: name it, do not crash
    try:
        try:
            meta = read_meta(conn)
        except JournalIntegrityError as exc:
            raise JournalIntegrityError(f"{path}: {exc}") from None
        _check_schema(conn, path)
        # No anchor: the chain's start. A file only gets a later start by rotation, which
        # writes the anchor, so deleting a file's first records is a missing link here.
        anchor_seq, anchor_hash = meta if meta is not None else (0, GENESIS_HASH)
        walk = _ChainWalk(path, anchor_seq + 1, anchor_hash, table, key)
        for row in conn.execute(
            "SELECT seq, ts, type, body, prev_hash, hash, published FROM records ORDER BY seq"
        ):
            walk.check(row)
        problems = [
            r[0].decode("utf-8", "replace") if isinstance(r[0], bytes) else str(r[0])
            for r in conn.execute("PRAGMA integrity_check(5)")
        ]
        if problems != ["ok"]:
            raise JournalIntegrityError(
                f"{path}: SQLite integrity check failed: {'; '.join(problems)}"
            )
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id not in (0, APPLICATION_ID):
            raise JournalIntegrityError(f"{path}: application_id {app_id:#x} is not a journal's")
    except READ_ERRORS as exc:
        raise JournalIntegrityError(
            f"{path}: cannot read journal: {describe_read_error(exc)}"
        ) from None
    finally:
        conn.text_factory = old_factory
    return FileSummary(
        path=path,
        table=walk.table,
        count=walk.seq - anchor_seq - 1,
        anchor_seq=anchor_seq,
        anchor_hash=anchor_hash,
        last_seq=walk.seq - 1,
        last_hash=walk.prev,
        sealed=False,
        anchors=walk.anchors,
        last_anchor=walk.last_anchor,
        keyed=key is not None,
    )


class _ChainWalk:
    """The state of a walk along one file's records: the next expected link."""

    def __init__(
        self, path: Path, seq: int, prev: str, table: str | None, key: bytes | None = None
    ) -> None:
        self.path = path
        self.seq = seq
        self.prev = prev
        self.table = table
        self.key = key
        self.unpublished_from: int | None = None
        self.anchors = 0
        self.last_anchor = 0
        self.authed = False
        """Whether a record of this walk carried ``auth`` (every later one must)."""

    def check(self, row: tuple[Any, ...]) -> None:
        """One row (``seq, ts, type, body, prev_hash, hash, published``) against the chain."""
        if type(row[0]) is not int:
            raise JournalIntegrityError(f"{self.path}: a record has no integer seq ({row[0]!r})")
        seq = row[0]
        if seq != self.seq:
            raise ChainBrokenError(self.seq, f"record missing (next seq is {seq})")
        ts_col, type_col, body, prev_col, hash_col = (
            _text(v, seq, c) for v, c in zip(row[1:6], _COLUMNS, strict=True)
        )
        rec = loads_record(body, seq)
        if canonical_json(rec) != body:
            raise ChainBrokenError(seq, "body is not in canonical form")
        if rec.get("seq") != seq:
            raise ChainBrokenError(seq, f"body says seq {rec.get('seq')!r}")
        if prev_col != self.prev or rec.get("prev_hash") != self.prev:
            raise ChainBrokenError(seq, "prev_hash does not match the previous record's hash")
        if rec.get("hash") != hash_col:
            raise ChainBrokenError(seq, "hash column differs from the body's hash")
        if record_hash(self.prev, rec) != hash_col:
            raise ChainBrokenError(seq, "content does not match its hash")
        if rec.get("ts") != ts_col:
            raise ChainBrokenError(seq, "ts column differs from the body's ts")
        if rec.get("type") != type_col:
            raise ChainBrokenError(seq, "type column differs from the body's type")
        if self.table is None:
            self.table = rec.get("table") if isinstance(rec.get("table"), str) else None
        elif rec.get("table") != self.table:
            raise ChainBrokenError(seq, f"record names table {rec.get('table')!r}")
        self._check_published(seq, row[6])
        if type_col == ANCHOR:
            self._check_anchor(seq, rec)
        self._check_auth(seq, rec, hash_col)
        self.prev = hash_col
        self.seq += 1

    def _check_anchor(self, seq: int, rec: Mapping[str, Any]) -> None:
        """An anchor must name the record before it; with the key, its mac must match it."""
        problem = anchor_problem(rec)
        if problem is not None:
            raise ChainBrokenError(seq, problem)
        if self.key is not None and not mac_matches(
            self.key, rec["mac"], rec.get("table"), seq - 1, self.prev
        ):
            raise KeyedEvidenceError(
                self.path,
                seq,
                f"anchor mac does not match the chain head it names (seq {seq - 1}): records up"
                " to it are not the ones keyed (chain recomputed?), or the key is not this"
                " journal's",
            )
        self.anchors += 1
        self.last_anchor = seq

    def _check_auth(self, seq: int, rec: Mapping[str, Any], digest: str) -> None:
        """A record's own ``auth`` (a keyed journal since issue 26): well formed; with the key,
        the MAC of this record as a chain head; once records carry one, every later one must
        (``auth`` is outside the hash, so stripping it breaks no link: only the key sees it)."""
        auth = rec.get(AUTH)
        if auth is None:
            if self.authed and self.key is not None:
                raise KeyedEvidenceError(
                    self.path, seq, "record has no auth after authenticated records (stripped?)"
                )
            return
        if not isinstance(auth, str) or not HEX64.fullmatch(auth):
            raise ChainBrokenError(seq, "auth is not 64 hex digits")
        if self.key is not None and not mac_matches(self.key, auth, rec.get("table"), seq, digest):
            raise KeyedEvidenceError(
                self.path,
                seq,
                "record auth does not match the record: not written with this key (forged, or "
                "another journal's key)",
            )
        self.authed = True

    def _check_published(self, seq: int, published: object) -> None:
        if type(published) is not int or published not in (0, 1):
            raise JournalIntegrityError(
                f"{self.path}: published flag of seq {seq} is {published!r}, not 0 or 1"
            )
        if published == 0 and self.unpublished_from is None:
            self.unpublished_from = seq
        elif published == 1 and self.unpublished_from is not None:
            raise JournalIntegrityError(
                f"{self.path}: seq {seq} is marked published after unpublished seq "
                f"{self.unpublished_from} (the outbox marks a prefix only)"
            )


_META_OBJECTS = (b"meta", b"sqlite_autoindex_meta_1")


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """The tables and indexes must be exactly the journal's: an altered declaration (a flipped
    byte in the schema text) can change what a column means without SQLite noticing."""
    # Read as bytes (the verifying connection's text factory): a damaged name is no crash.
    found = dict(conn.execute("SELECT name, sql FROM sqlite_master").fetchall())
    expected = expected_schema()
    if b"meta" not in found:  # journals from before rotation have no meta table
        expected = {k: v for k, v in expected.items() if k not in _META_OBJECTS}
    if found != expected:
        altered = sorted(
            repr(as_str(k)) for k in set(found) | set(expected) if found.get(k) != expected.get(k)
        )
        raise JournalIntegrityError(f"{path}: schema altered ({', '.join(altered)})")


_HEADER = 100


def _check_header(path: Path, data: bytes, size: int) -> None:
    """Header fields SQLite ignores or tolerates, where they have one valid value (the others only a
    seal covers)."""
    if len(data) < _HEADER or not data.startswith(b"SQLite format 3\x00"):
        raise JournalIntegrityError(f"{path}: not an SQLite file (header altered?)")
    page_size = struct.unpack(">H", data[16:18])[0]
    page_size = 65536 if page_size == 1 else page_size
    if data[18] not in (1, 2) or data[19] not in (1, 2) or data[20] != 0:
        raise JournalIntegrityError(f"{path}: header read/write version or reserve altered")
    if data[21:24] != b"\x40\x20\x20" or any(data[72:92]):
        raise JournalIntegrityError(f"{path}: header has altered fixed fields")
    counter, valid_for = struct.unpack(">I", data[24:28])[0], struct.unpack(">I", data[92:96])[0]
    pages = struct.unpack(">I", data[28:32])[0]
    if counter != valid_for or pages * page_size != size:
        raise JournalIntegrityError(f"{path}: header change counter or page count altered")
    if struct.unpack(">I", data[44:48])[0] != 4 or struct.unpack(">I", data[56:60])[0] != 1:
        raise JournalIntegrityError(f"{path}: header schema format or text encoding altered")
    if struct.unpack(">I", data[52:56])[0] != 0 or struct.unpack(">I", data[64:68])[0] != 0:
        raise JournalIntegrityError(f"{path}: header vacuum fields altered")


def verify_journal_file(
    path: Path | str, *, table: str | None = None, key: bytes | None = None
) -> FileSummary:
    """Verify one journal file without writing to it (R13, R15 with ``key``: a closed or rotated
    file must then have a keyed seal; ``keyed_through`` says where the key's word ends on a live
    file)."""
    path = Path(path)
    if not path.is_file():
        raise JournalError(f"{path}: no such journal file")
    seal = read_seal(path)
    wal = wal_path(path)
    conn = connect_read_only(path)
    try:
        summary = verify_conn(conn, path, table, key)
    finally:
        conn.close()
    try:
        with path.open("rb") as stream:
            header = stream.read(_HEADER)
            size = os.fstat(stream.fileno()).st_size
    except OSError as exc:
        raise JournalError(f"{path}: cannot read: {exc.strerror or exc}") from None
    live_wal = wal.exists() and wal.stat().st_size > 0
    if not live_wal:
        # With frames in the WAL the main file's header is legitimately behind.
        _check_header(path, header, size)
    if seal is None:
        if looks_rotated(path):
            raise JournalIntegrityError(f"{path}: rotated journal file has no seal")
        if key is not None and not live_wal:
            # Closed: the journal closed it (and seals what it closes), or an SQLite edit by
            # someone else did. A live journal always has frames in its WAL.
            _no_keyed_seal(path, summary)
        return summary
    if looks_rotated(path) and seal["file"] != path.name:
        # A rotated file's name is its seq range: it must be the one it was sealed under.
        raise JournalIntegrityError(f"{path}: seal is for {seal['file']!r}")
    if live_wal:
        raise JournalIntegrityError(f"{path}: sealed journal has frames in its WAL (written since)")
    if summary.last_seq < seal["last_seq"]:
        raise JournalIntegrityError(
            f"{path}: the journal ends at seq {summary.last_seq}, its seal at seq"
            f" {seal['last_seq']}: records cut from the tail"
        )
    ends = (summary.anchor_seq, summary.anchor_hash, summary.last_seq, summary.last_hash)
    sealed = (seal["anchor_seq"], seal["anchor_hash"], seal["last_seq"], seal["last_hash"])
    if ends != sealed or summary.table not in (None, seal.get("table")):
        raise JournalIntegrityError(f"{path}: chain ends differ from the seal's")
    if (size, file_digest(path)[1]) != (seal["size"], seal["sha256"]):
        raise JournalIntegrityError(
            f"{path}: file differs from its seal (a changed byte outside the records' content:"
            " header, free space or index)"
        )
    if key is not None:
        check_seal_mac(path, seal, key)
    return dataclasses.replace(summary, sealed=True, seal_mac="mac" in seal)


def _no_keyed_seal(path: Path, summary: FileSummary) -> None:
    """A closed file without a seal, verified with the key: what it leaves unproven. Deleting the
    seal is what lets a recomputed chain or a cut tail pass the unkeyed checks."""
    through = summary.keyed_through
    if through < summary.last_seq:
        raise KeyedEvidenceError(
            path,
            through + 1,
            f"closed journal without a keyed seal: seq {through + 1}-{summary.last_seq} are not"
            " covered by the key (seal deleted, records rewritten or added?)",
        )
    raise KeyedEvidenceError(
        path,
        summary.last_seq,
        "closed journal without a keyed seal: whether records followed this one cannot be"
        " proven (seal deleted, tail cut?)",
    )


def verify_file(path: Path | str) -> int:
    """Verify a journal file, opened ``mode=ro`` so verification can never alter it; return the
    number of records checked."""
    return verify_journal_file(path).count
