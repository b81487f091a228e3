"""The journal: an append-only, fsync'd, hash-chained SQLite file per table (DESIGN §3, §7).

Every table event is written here *before* it is acted on or published, so the journal is the
source of truth and the MQTT outbox is just the ``published`` column: a row is marked only after
the broker acknowledged it, and a restart publishes whatever is still unmarked.

Why SQLite in WAL mode with ``synchronous=FULL``: each commit is fsync'd (durable when
:meth:`Journal.append` returns) while readers never block the writer. Appends are group
commits: one transaction, hence one fsync, for a whole batch of records.

Why a hash chain: each record carries ``prev_hash`` and ``hash`` = sha256 over ``prev_hash`` +
the canonical JSON of the record without ``hash``. An edit, deletion or reordering of any row
breaks a link that :func:`verify_file` names by ``seq`` (``tablectl verify``), and consumers can
check the published payloads themselves because they are the same canonical JSON.

Tamper evidence beyond the chain (regulatory R13, R19, R20; "a single flipped byte anywhere"):

* every column is checked against the hashed body (``seq``, ``ts``, ``type``, ``prev_hash``,
  ``hash``), the body must be *the* canonical JSON byte for byte (``1e+20`` and ``1E+20`` decode
  alike, so decoding alone would miss that flip), ``published`` must be 0/1 and a prefix, and
  SQLite's own ``PRAGMA integrity_check`` covers the b-tree structure and the indexes;
* a SQLite file also has bytes that no query reads (free space inside pages, free pages, a few
  header fields such as the change counter). No structural check can see a flip there, so a
  journal closed cleanly — and every rotated file — gets a **seal**: ``FILE.seal`` next to it
  with the sha256 and size of the whole file and its chain ends. With a seal, any flipped byte
  of the file (or of the seal) is detected; without one (a journal open right now, or left by a
  crash), what the structural checks cannot see is only bytes that change no record.
* all of the above proves *order*, not *authorship*: whoever can write the file can recompute
  every hash after an edit and delete the seal. With ``[journal] key_file`` the journal also writes
  keyed evidence (R13, R15; :mod:`tablectl.controller.journal.anchors`): an ``anchor`` record with
  an HMAC over the chain head every ``anchor_every`` records (inside :meth:`Journal.append`, same
  transaction: the per-record cost is a counter check) and on :meth:`Journal.anchor_if_due`, and a
  ``mac`` in every seal; ``verify --key`` checks them.

Why rotation lives here: the chain must continue across files. :meth:`Journal.rotate` (called by
:meth:`Journal.append` itself once ``rotate_bytes``/``rotate_days`` is passed) closes the file,
seals it, renames it with its ``seq`` range (``ROU-01.000001-004711.sqlite``) and starts a new file
whose ``meta`` table holds the *anchor* (the last ``seq`` and ``hash`` of the old one), so the new
file's first record carries the old file's last hash and ``seq`` continues. :meth:`Journal.records`
and :meth:`Journal.last_record_of_type` read across the rotated files, so recovery sees the whole
retained history. Retention (deleting old files) is :mod:`tablectl.controller.journal.retention`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import os
import re
import sqlite3
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import structlog

from tablectl.controller.core.errors import ChainBrokenError, JournalError, JournalWriteError
from tablectl.controller.journal.anchors import ANCHOR, KeyedAnchors, anchor_problem, mac_matches

__all__ = [
    "APPLICATION_ID",
    "GENESIS_HASH",
    "SCHEMA",
    "Archive",
    "FileSummary",
    "Journal",
    "JournalIntegrityError",
    "KeyedEvidenceError",
    "archive_path",
    "canonical_json",
    "list_archives",
    "parse_ts",
    "read_seal",
    "record_hash",
    "seal_path",
    "verify_file",
    "verify_journal_file",
]

log = structlog.get_logger("tablectl.journal")

_WAL_PAGES: Final = 256
"""Pages in the write-ahead log before SQLite checkpoints it (its default is 1000)."""
_WAL_BYTES: Final = 1024 * 1024
"""Size the write-ahead log is truncated back to after a checkpoint."""

SCHEMA = 1
"""The ``schema`` value the journal stamps on every record (DESIGN §4.3)."""

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first record."""

APPLICATION_ID = 0x54424C43
"""``PRAGMA application_id`` of a journal file (``"TBLC"``): ``file(1)`` and ``verify`` can tell a
journal from any other SQLite file, and a flipped byte in this header field is caught."""

_ASSIGNED = ("seq", "prev_hash", "hash")
"""Keys only the journal may set: a caller supplying them is a bug, not something to paper over."""

_PAGE = 500
"""Rows fetched per query by the iterators, so a long read never holds the lock for long."""

_HEX64 = re.compile(r"[0-9a-f]{64}")

_Row = tuple[int, str, str, str, str, str]
"""An ``INSERT INTO records`` row: ``seq, ts, type, body, prev_hash, hash``."""

_READ_ERRORS = (sqlite3.Error, UnicodeDecodeError)
"""What reading a damaged file raises: SQLite's errors, and its *messages* can carry the
damaged (not UTF-8) schema text, which the sqlite3 module then fails to decode."""

_DDL = """
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    ts TEXT NOT NULL,
    type TEXT NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    published INTEGER NOT NULL DEFAULT 0
);
-- The outbox query: unpublished rows are always a suffix, and this keeps finding it O(log n).
CREATE INDEX IF NOT EXISTS records_unpublished ON records(seq) WHERE published = 0;
-- Restoring counters at startup asks for the last record of a type.
CREATE INDEX IF NOT EXISTS records_type ON records(type, seq);
-- A rotated-to file's anchor: anchor_seq / anchor_hash of the record before its first one.
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


class JournalIntegrityError(JournalError):
    """The journal file is damaged or altered outside the hash chain's links (SQLite structure,
    header, ``published`` flags, seal): the file is not what the journal wrote."""


class KeyedEvidenceError(JournalIntegrityError):
    """The keyed evidence does not vouch for the records (``verify --key``, R13/R15): an anchor's
    or the seal's mac does not match the chain head it names, or a closed file has no keyed
    seal. ``seq`` names the record concerned."""

    def __init__(self, path: Path, seq: int, why: str) -> None:
        super().__init__(f"{path}: seq {seq}: {why}")
        self.seq = seq
        self.why = why


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The one serialization that is hashed, stored and published.

    Sorted keys and no whitespace make it reproducible byte for byte; ``ensure_ascii=False``
    keeps it UTF-8 as published; NaN/Infinity are refused because they are not JSON.
    """
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def record_hash(prev_hash: str, record: Mapping[str, Any]) -> str:
    """sha256 hex of ``prev_hash`` + canonical JSON of ``record`` without its ``hash`` key."""
    unhashed = {k: v for k, v in record.items() if k != "hash"}
    return hashlib.sha256((prev_hash + canonical_json(unhashed)).encode("utf-8")).hexdigest()


def parse_ts(ts: object) -> datetime | None:
    """A record's ISO ``ts`` as an aware UTC datetime, ``None`` if it is not one."""
    if not isinstance(ts, str):
        return None
    try:
        moment = datetime.fromisoformat(ts)
    except ValueError:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# -- file names ----------------------------------------------------------------------------------


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


def seal_path(path: Path) -> Path:
    """Where the seal of journal file ``path`` lives: ``path`` + ``.seal``."""
    return path.with_name(path.name + ".seal")


def _fsync_dir(folder: Path) -> None:
    # A rename or unlink is durable only once the directory is; best effort where unsupported.
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _file_digest(path: Path) -> tuple[int, str]:
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 20):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def _write_seal(
    path: Path, summary: FileSummary, name: str | None = None, mac: str | None = None
) -> Path:
    """Seal journal file ``path`` (closed, no WAL): sha256 + size + chain ends, fsync'd.

    ``name`` is the file name the seal is for when the file is about to be renamed to it. ``mac`` (a
    keyed journal, :func:`tablectl.controller.journal.anchors.head_mac` over ``last_seq``/
    ``last_hash``) makes the seal keyed evidence: without the key nobody can write a seal that
    ``verify --key`` accepts for a recomputed chain or a cut tail.
    """
    size, sha = _file_digest(path)
    seal: dict[str, Any] = {
        "file": name or path.name,
        "size": size,
        "sha256": sha,
        "table": summary.table,
        "anchor_seq": summary.anchor_seq,
        "anchor_hash": summary.anchor_hash,
        "last_seq": summary.last_seq,
        "last_hash": summary.last_hash,
        "sealed_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }
    if mac is not None:
        seal["mac"] = mac
    target = seal_path(path.with_name(name or path.name))
    tmp = target.with_name(target.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as stream:
        stream.write(canonical_json(seal) + "\n")
        stream.flush()
        os.fsync(stream.fileno())
    tmp.replace(target)
    _fsync_dir(target.parent)
    return target


def read_seal(path: Path) -> dict[str, Any] | None:
    """The seal of journal file ``path``, ``None`` when it has none.

    Raises:
        JournalIntegrityError: the seal exists but is not a well-formed seal.
    """
    seal = seal_path(path)
    try:
        raw = seal.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise JournalError(f"{seal}: cannot read seal: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError):
        raise JournalIntegrityError(f"{seal}: seal is not JSON (altered?)") from None
    if not isinstance(obj, dict) or text != canonical_json(obj) + "\n":
        raise JournalIntegrityError(f"{seal}: seal is not in canonical form (altered?)")
    ints = ("size", "anchor_seq", "last_seq")
    hashes = ("sha256", "anchor_hash", "last_hash")
    if (
        not all(type(obj.get(k)) is int for k in ints)
        or not all(isinstance(obj.get(k), str) and _HEX64.fullmatch(obj[k]) for k in hashes)
        or not isinstance(obj.get("file"), str)
        or ("mac" in obj and not (isinstance(obj["mac"], str) and _HEX64.fullmatch(obj["mac"])))
    ):
        raise JournalIntegrityError(f"{seal}: seal lacks a field or has a malformed one")
    return obj


# -- the journal ---------------------------------------------------------------------------------


class Journal:
    """One table's journal file (plus, after rotations, its rotated files).

    Thread-safe (one lock around the single connection) so a caller may append from an executor
    while the publisher reads on the event loop. Not async on purpose: an fsync'd commit costs
    about 0.2 ms, less than a thread hop.

    Args:
        path: the live SQLite file; created (with its directory's existing permissions) if
            missing. Rotated files go next to it.
        table_id: stamped on every record; opening another table's journal is refused.
        rotate_bytes: rotate (inside :meth:`append`) once the live file is this large.
        rotate_days: rotate once the live file's first record is this many days older than the
            batch being appended (the caller's clock, so tests need not wait).
        retention_days: after a rotation (and at open), delete rotated files whose records are
            all published and older than this (:func:`tablectl.controller.journal.retention.prune`).
            ``None`` keeps everything. The floor (R19: 90 days) is the config's job, not this
            class's.
        anchors: the key and cadence of keyed evidence (:mod:`tablectl.controller.journal.anchors`,
        R13/R15):
            an ``anchor`` record every ``anchors.every`` records (inside :meth:`append`, same
            transaction) and on :meth:`anchor_if_due`, and a ``mac`` in every seal. ``None``:
            the chain proves order only.
    """

    def __init__(
        self,
        path: Path,
        table_id: str,
        *,
        rotate_bytes: int | None = None,
        rotate_days: float | None = None,
        retention_days: float | None = None,
        anchors: KeyedAnchors | None = None,
    ) -> None:
        self.path = Path(path)
        self.table_id = table_id
        self.rotate_bytes = rotate_bytes
        self.rotate_after = timedelta(days=rotate_days) if rotate_days is not None else None
        self.retention_days = retention_days
        self._anchors = anchors
        # Records after the newest anchor (or the live file's start): the count check of append.
        self._unanchored = 0
        # When the anchor timer first saw unanchored records (its clock): see anchor_if_due.
        self._unanchored_seen: float | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._last_seq = 0
        self._last_hash = GENESIS_HASH
        self._anchor_seq = 0
        self._anchor_hash = GENESIS_HASH
        self._file_first_ts: datetime | None = None
        self._last_ts: datetime | None = None
        self._archives: list[Archive] = list_archives(self.path)
        self._conn = self._open_live()
        if retention_days is not None:
            self.prune()

    def _open_live(self) -> sqlite3.Connection:
        """Open (or create) the live file, check its owner, unseal it and find its anchor."""
        try:
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        try:
            _use_wal(conn, self.path)
            has_records = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'"
            ).fetchone()
            last = first = None
            if has_records:
                last = conn.execute(
                    "SELECT seq, hash, body FROM records ORDER BY seq DESC LIMIT 1"
                ).fetchone()
                first = conn.execute(
                    "SELECT seq, prev_hash, ts FROM records ORDER BY seq LIMIT 1"
                ).fetchone()
            if last is not None:
                newest = _loads(last[2], int(last[0]))
                self._last_ts = parse_ts(newest.get("ts"))
                owner = newest.get("table")
                if owner != self.table_id:
                    raise JournalError(
                        f"{self.path}: journal belongs to table {owner!r}, not {self.table_id!r}"
                    )
            self._find_unanchored(conn, first, last)  # before the seal that may vouch goes
            # From here on the file will change: a seal from the last clean close is stale.
            self._unseal()
            conn.executescript(_DDL)
            if conn.execute("PRAGMA application_id").fetchone()[0] == 0:
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            meta = _read_meta(conn)
            if first is not None:
                self._anchor_seq, self._anchor_hash = int(first[0]) - 1, str(first[1])
                self._file_first_ts = parse_ts(first[2])
            elif meta is not None:
                self._anchor_seq, self._anchor_hash = meta
            else:
                # A new file: after a rotation (or a crash inside one) it continues the chain
                # of the newest rotated file.
                self._anchor_seq, self._anchor_hash = self._newest_archive_end()
                if self._anchor_seq:
                    _write_meta(conn, self._anchor_seq, self._anchor_hash)
            if last is not None:
                self._last_seq, self._last_hash = int(last[0]), str(last[1])
            else:
                self._last_seq, self._last_hash = self._anchor_seq, self._anchor_hash
        except sqlite3.Error as exc:
            conn.close()
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        except (JournalError, OSError) as exc:
            conn.close()
            if isinstance(exc, OSError):
                raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
            raise
        return conn

    def _find_unanchored(
        self,
        conn: sqlite3.Connection,
        first: tuple[Any, ...] | None,
        last: tuple[Any, ...] | None,
    ) -> None:
        self._unanchored = _unanchored(conn, first, last)
        tail = self._anchors is not None and self._unanchored > 0
        if tail and last is not None:
            self._check_tail_keyed(int(last[0]), str(last[1]))
        # The timer anchors a tail found at open at its first tick, not after a full period.
        self._unanchored_seen = -math.inf if tail else None

    def _check_tail_keyed(self, last_seq: int, last_hash: str) -> None:
        """Log whether the records after the newest anchor were keyed by the last close's seal.

        They get anchored soon (the first timer tick, or the count); if no keyed seal vouched for
        them, that anchor vouches for them *as found*, and this warning is the trace of it: a
        crash (no seal), a journal from before the key, another key, or an edit while stopped.
        """
        assert self._anchors is not None
        first = last_seq - self._unanchored + 1
        try:
            seal = read_seal(self.path)
        except JournalError as exc:
            seal, why = None, str(exc)
        else:
            why = "no seal (not closed cleanly)"
        if seal is not None:
            if "mac" not in seal:
                why = "the seal has no mac (sealed without a key)"
            elif (seal["last_seq"], seal["last_hash"]) != (last_seq, last_hash):
                why = f"the seal ends at seq {seal['last_seq']}, the file at seq {last_seq}"
            elif not mac_matches(
                self._anchors.key, seal["mac"], self.table_id, last_seq, last_hash
            ):
                why = "the seal's mac does not match (another key, or altered)"
            else:
                return
        log.warning(
            "journal_tail_not_keyed",
            path=str(self.path),
            first_seq=first,
            last_seq=last_seq,
            why=why,
            hint="records in this range are anchored as found; tablectl verify --key on a copy",
        )

    def _unseal(self) -> None:
        seal = seal_path(self.path)
        if seal.exists():
            seal.unlink()
            _fsync_dir(seal.parent)

    def _newest_archive_end(self) -> tuple[int, str]:
        if not self._archives:
            return 0, GENESIS_HASH
        newest = self._archives[-1]
        row = _read_only(newest.path, "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1")
        if not row or int(row[0][0]) != newest.last_seq:
            raise JournalError(
                f"{newest.path}: rotated file does not end at seq {newest.last_seq} as named"
            )
        return int(row[0][0]), str(row[0][1])

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file (idempotent) and seal it.

        The WAL is checkpointed into the main file first, so the seal covers every byte of the
        journal. No seal is written when that is not possible (another connection still reads
        the WAL): the journal is then checked structurally only, as a live one is.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            summary = self._summary()
            checkpointed = False
            with contextlib.suppress(sqlite3.Error):
                checkpointed = _checkpoint_now(self._conn)
            self._conn.close()
            wal = self.path.with_name(self.path.name + "-wal")
            if checkpointed and (not wal.exists() or wal.stat().st_size == 0):
                try:
                    _write_seal(self.path, summary, mac=self._head_mac(summary))
                except OSError as exc:  # a full disk must not stop a shutdown
                    log.warning("journal_seal_failed", path=str(self.path), error=str(exc))

    def _head_mac(self, summary: FileSummary) -> str | None:
        """The seal's ``mac`` over the file's last record, ``None`` for an unkeyed journal."""
        if self._anchors is None:
            return None
        return self._anchors.mac(self.table_id, summary.last_seq, summary.last_hash)

    def _summary(self) -> FileSummary:
        return FileSummary(
            path=self.path,
            table=self.table_id,
            count=self._last_seq - self._anchor_seq,
            anchor_seq=self._anchor_seq,
            anchor_hash=self._anchor_hash,
            last_seq=self._last_seq,
            last_hash=self._last_hash,
            sealed=False,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r}, table={self.table_id!r}, last_seq={self._last_seq})"

    # -- writing ---------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """``seq`` of the newest record, 0 when empty."""
        return self._last_seq

    @property
    def last_hash(self) -> str:
        """``hash`` of the newest record, :data:`GENESIS_HASH` when empty."""
        return self._last_hash

    @property
    def first_live_seq(self) -> int:
        """``seq`` of the live file's first record (the next one when it is empty)."""
        return self._anchor_seq + 1

    @property
    def archives(self) -> list[Archive]:
        """The rotated files still on disk, oldest first."""
        with self._lock:
            return list(self._archives)

    def append(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append a batch in one transaction (one fsync) and return the stored records.

        Each input needs ``type`` and ``ts`` (ISO string, the caller's clock). The journal adds
        ``schema``, ``table``, ``seq``, ``prev_hash`` and ``hash``. Either the whole batch is
        durable when this returns, or none of it is stored. When a rotation threshold is passed
        the live file is rotated first (see :meth:`rotate`), so the batch starts the new file.

        Raises:
            ValueError: a record lacks ``type``/``ts``, sets a journal-assigned key, names another
                table or schema, or is not JSON-serializable (nothing is written).
            JournalWriteError: the write failed (disk full, I/O error). Rolled back; the journal
                stays usable and the same batch can be retried.
        """
        with self._lock:
            self._check_open()
            prepared = [self._prepare(raw) for raw in records]
            if not prepared:
                return []
            if self._rotation_due(prepared[0]):
                self._rotate_locked()
            seq, prev = self._last_seq, self._last_hash
            stored: list[dict[str, Any]] = []
            rows: list[_Row] = []
            for rec in prepared:
                seq += 1
                rec["seq"] = seq
                rec["prev_hash"] = prev
                try:
                    # The hash's encoding is also the serializability check (one encoding
                    # fewer per record than checking separately).
                    rec["hash"] = prev = record_hash(rec["prev_hash"], rec)
                except (TypeError, ValueError) as exc:
                    raise ValueError(
                        f"{rec['type']} record is not JSON-serializable: {exc}"
                    ) from None
                rows.append(
                    (seq, rec["ts"], rec["type"], canonical_json(rec), rec["prev_hash"], prev)
                )
                stored.append(rec)
            # The anchor's whole per-record cost: this counter check (R13/R15 keyed evidence).
            anchored = (
                self._anchors is not None and self._unanchored + len(rows) >= self._anchors.every
            )
            if anchored:
                seq, prev = seq + 1, self._anchor_row(rows, seq, prev, stored[-1]["ts"])
            self._insert(rows, f"{len(rows)} record(s)")
            self._advance(seq, prev, stored[0]["ts"], stored[-1]["ts"])
            if anchored:
                self._unanchored, self._unanchored_seen = 0, None
            else:
                self._unanchored += len(rows)
            return stored

    def _advance(self, seq: int, last_hash: str, first_ts: str, last_ts: str) -> None:
        """After an insert: the newest record, and the live file's first ``ts`` (rotation)."""
        if self._last_seq == self._anchor_seq:
            self._file_first_ts = parse_ts(first_ts)
        self._last_ts = parse_ts(last_ts) or self._last_ts
        self._last_seq, self._last_hash = seq, last_hash

    def _insert(self, rows: list[_Row], what: str) -> None:
        """Insert ``rows`` in one transaction (one fsync); all or nothing.

        Raises:
            JournalWriteError: the storage refused (disk full, I/O error); rolled back.
        """
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            self._conn.executemany(
                "INSERT INTO records (seq, ts, type, body, prev_hash, hash)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self._rollback()
            raise JournalWriteError(
                f"{self.path}: cannot append {what} at seq {rows[0][0]}: {exc}"
            ) from None

    def _anchor_row(self, rows: list[_Row], head_seq: int, head_hash: str, ts: str) -> str:
        """Chain an anchor over ``head_seq``/``head_hash`` onto ``rows``; return its hash."""
        assert self._anchors is not None
        rec = self._anchors.record(self.table_id, head_seq, head_hash, ts)
        rec.update(schema=SCHEMA, table=self.table_id, seq=head_seq + 1, prev_hash=head_hash)
        rec["hash"] = record_hash(head_hash, rec)
        rows.append((head_seq + 1, ts, ANCHOR, canonical_json(rec), head_hash, rec["hash"]))
        return str(rec["hash"])

    @property
    def keyed(self) -> bool:
        """Whether this journal writes keyed evidence (anchors, seal macs)."""
        return self._anchors is not None

    def anchor(self, ts: str) -> dict[str, Any] | None:
        """Journal an anchor over the newest record now (its own transaction, one fsync).

        ``ts`` is the caller's clock, as for every record. Returns the stored anchor, or
        ``None`` when there is nothing to anchor: an unkeyed journal, or the newest record is
        already covered (an anchor, or nothing after the live file's keyed start).

        Raises:
            JournalWriteError: the write failed (rolled back; nothing changed).
        """
        with self._lock:
            self._check_open()
            if self._anchors is None or self._unanchored == 0:
                return None
            rows: list[_Row] = []
            new_hash = self._anchor_row(rows, self._last_seq, self._last_hash, ts)
            self._insert(rows, "an anchor")
            self._advance(rows[0][0], new_hash, ts, ts)
            self._unanchored, self._unanchored_seen = 0, None
            return _loads(rows[0][3], rows[0][0])

    def anchor_if_due(self, now: float, ts: str) -> dict[str, Any] | None:
        """The time-based anchor: journal one once records have waited ``anchors.seconds``.

        Called periodically by a timer (``tablectl.controller.service.app``) with its own clock
        ``now`` (seconds, e.g. ``time.monotonic()``; tests pass numbers) and ``ts`` for the record.
        The wait starts at the first call that sees unanchored records, so the clock need not be the
        one of the records' ``ts``; a tail found when the journal was opened is anchored at the
        first call. Returns the stored anchor or ``None``.
        """
        with self._lock:
            if self._anchors is None or self._closed or self._unanchored == 0:
                self._unanchored_seen = None
                return None
            if self._unanchored_seen is None:
                self._unanchored_seen = now
            if now - self._unanchored_seen < self._anchors.seconds:
                return None
        return self.anchor(ts)

    def _prepare(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        for key in _ASSIGNED:
            if key in raw:
                raise ValueError(f"record key {key!r} is assigned by the journal")
        kind, ts = raw.get("type"), raw.get("ts")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"record needs a non-empty string 'type', got {kind!r}")
        if kind == ANCHOR:
            raise ValueError("anchor records are written by the journal itself")
        if not isinstance(ts, str) or not ts:
            raise ValueError(f"{kind} record needs an ISO string 'ts', got {ts!r}")
        if raw.get("table", self.table_id) != self.table_id:
            raise ValueError(f"{kind} record names table {raw['table']!r}, not {self.table_id!r}")
        if raw.get("schema", SCHEMA) != SCHEMA:
            raise ValueError(f"{kind} record has schema {raw['schema']!r}, not {SCHEMA}")
        return {**raw, "schema": SCHEMA, "table": self.table_id}

    def _rollback(self) -> None:
        # A failed COMMIT may already have rolled back, and a failed ROLLBACK (no transaction)
        # must not hide the original error.
        if self._conn.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                self._conn.execute("ROLLBACK")

    # -- rotation --------------------------------------------------------------------------

    def _rotation_due(self, incoming: Mapping[str, Any]) -> bool:
        """Whether to rotate before ``incoming``: a threshold is passed, and preferably at a round
        boundary (the batch opens a round) so a round's events stay in one file; at twice the
        threshold the live file is rotated wherever it is."""
        if self._last_seq == self._anchor_seq or (
            self.rotate_bytes is None and self.rotate_after is None
        ):
            return False
        factor = 1 if incoming.get("type") == "round_open" else 2
        if self.rotate_bytes is not None:
            try:
                pages = self._conn.execute("PRAGMA page_count").fetchone()[0]
                size = self._conn.execute("PRAGMA page_size").fetchone()[0]
            except sqlite3.Error:
                return False
            if pages * size >= factor * self.rotate_bytes:
                return True
        if self.rotate_after is not None and self._file_first_ts is not None:
            now = parse_ts(incoming.get("ts"))
            if now is not None and now - self._file_first_ts >= factor * self.rotate_after:
                return True
        return False

    def rotate(self) -> Path | None:
        """Rotate now: seal the live file, rename it with its ``seq`` range, start a new one.

        The live :class:`Journal` object keeps working (same lock, new connection); the new
        file's first record will carry the old file's last ``hash`` as ``prev_hash``. Returns
        the rotated file, or ``None`` when nothing was rotated: the live file is empty, holds
        records the broker has not acknowledged yet (the outbox reads only the live file, so
        they must stay in it), or another connection holds its WAL. :meth:`append` calls this
        by itself when a threshold is passed, retrying on later appends when it could not.

        Raises:
            JournalError: the rename or the new file failed; the journal is then closed.
        """
        with self._lock:
            self._check_open()
            return self._rotate_locked()

    def _rotate_locked(self) -> Path | None:
        first, last = self._anchor_seq + 1, self._last_seq
        if last < first:
            return None
        try:
            if self._conn.execute("SELECT 1 FROM records WHERE published = 0 LIMIT 1").fetchone():
                return None
            if not _checkpoint_now(self._conn):
                return None
            # Leave WAL mode: the rotated file is then one self-contained file that a reader
            # opens read-only without creating -wal/-shm files next to it.
            mode = self._conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        except sqlite3.Error as exc:
            log.warning("journal_rotate_skipped", path=str(self.path), error=str(exc))
            return None
        if str(mode).lower() != "delete":
            return None
        summary = self._summary()
        target = archive_path(self.path, first, last)
        self._conn.close()
        try:
            if target.exists():
                raise JournalError(f"{target}: a rotated file of that name already exists")
            # Seal first, then rename: a crash between the two leaves a stray seal (removed by
            # retention's tidy-up), never a rotated file without a seal.
            _write_seal(self.path, summary, name=target.name, mac=self._head_mac(summary))
            os.rename(self.path, target)
            _fsync_dir(self.path.parent)
        except (OSError, JournalError) as exc:
            with contextlib.suppress(OSError):
                seal_path(target).unlink()
            self._conn = self._reopen_or_close()
            if isinstance(exc, JournalError):
                raise
            raise JournalError(f"{self.path}: cannot rotate: {exc}") from None
        self._archives.append(Archive(target, first, last))
        self._file_first_ts = None
        self._conn = self._reopen_or_close()
        log.info("journal_rotated", path=str(target), first_seq=first, last_seq=last)
        if self.retention_days is not None:
            self._prune_locked()
        return target

    def _reopen_or_close(self) -> sqlite3.Connection:
        try:
            return self._open_live()
        except JournalError:
            self._closed = True
            raise

    # -- retention -------------------------------------------------------------------------

    def prune(self, now: datetime | None = None) -> list[Path]:
        """Delete rotated files past ``retention_days`` (see
        :func:`tablectl.controller.journal.retention.prune`).

        ``now`` defaults to the earlier of the wall clock and the newest record's ``ts``: a wall
        clock that jumps ahead alone must not delete anything early. Returns the deleted files.
        A no-op without ``retention_days``.
        """
        with self._lock:
            return self._prune_locked(now)

    def _prune_locked(self, now: datetime | None = None) -> list[Path]:
        if self.retention_days is None:
            return []
        from tablectl.controller.journal.retention import prune  # noqa: PLC0415 - retention imports this module

        if now is None:
            now = datetime.now(UTC)
            if self._last_ts is not None:
                now = min(now, self._last_ts)
        removed = prune(self.path, retention_days=self.retention_days, now=now)
        if removed:
            self._archives = list_archives(self.path)
        return removed

    # -- outbox ----------------------------------------------------------------------------

    def unpublished(self, limit: int = 100) -> list[dict[str, Any]]:
        """The oldest ``limit`` records not yet acknowledged by the broker, in ``seq`` order."""
        rows = self._query(
            "SELECT seq, body FROM records WHERE published = 0 ORDER BY seq LIMIT ?", (limit,)
        )
        return [_loads(body, seq) for seq, body in rows]

    def unpublished_payloads(
        self, limit: int = 100, after: int = 0
    ) -> list[tuple[int, str, bytes]]:
        """Like :meth:`unpublished`, as ``(seq, type, payload)`` with the stored canonical JSON.

        The stored body *is* the canonical JSON of the record, byte for byte what
        ``canonical_json(record)`` gives after decoding it, so the outbox publishes it as is
        instead of decoding and re-encoding every record. ``after``: only records past this
        ``seq`` (those up to it were acknowledged, but their mark could not be written yet).
        """
        with self._lock:
            self._check_open()
            try:
                rows = self._conn.execute(
                    "SELECT seq, type, body FROM records WHERE published = 0 AND seq > ?"
                    " ORDER BY seq LIMIT ?",
                    (after, limit),
                ).fetchall()
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: cannot read journal: {exc}") from None
        return [(int(seq), str(kind), str(body).encode("utf-8")) for seq, kind, body in rows]

    def mark_published(self, up_to_seq: int) -> None:
        """Mark every record with ``seq <= up_to_seq`` as acknowledged.

        Call only after the broker's PUBACK for every topic the records went to. A lost mark
        costs a duplicate delivery after restart, never a gap — which is why this one write is
        committed without its own fsync (``synchronous=NORMAL`` for the statement): in WAL mode
        it can then only be lost on power failure, never corrupt anything, and the next append's
        fsync makes it durable with it. The records themselves are always fsync'd.

        Raises:
            JournalError: the update could not be written.
        """
        with self._lock:
            self._check_open()
            try:
                self._conn.execute("PRAGMA synchronous=NORMAL")
                self._conn.execute(
                    "UPDATE records SET published = 1 WHERE published = 0 AND seq <= ?",
                    (up_to_seq,),
                )
            except sqlite3.Error as exc:
                self._rollback()
                self._restore_full_sync()
                raise JournalError(
                    f"{self.path}: cannot mark records up to seq {up_to_seq} published: {exc}"
                ) from None
            self._restore_full_sync()

    def _restore_full_sync(self) -> None:
        try:
            self._conn.execute("PRAGMA synchronous=FULL")
        except sqlite3.Error as exc:
            # Never append a record without fsync: this journal refuses every further write.
            self._closed = True
            self._conn.close()
            raise JournalError(f"{self.path}: cannot restore synchronous=FULL: {exc}") from None

    # -- reading ---------------------------------------------------------------------------

    def records(self, since_seq: int = 0) -> Iterator[dict[str, Any]]:
        """Records with ``seq > since_seq`` in order (paged, so safe on a long journal).

        Reads the rotated files still on disk first, then the live file, so a caller (recovery)
        sees the whole retained history; a rotation during the iteration loses nothing.
        """
        after = since_seq
        while True:
            with self._lock:
                self._check_open()
                live_first = self._anchor_seq + 1
                archives = list(self._archives)
            if after + 1 < live_first:
                older = [a for a in archives if a.last_seq > after]
                if not older:
                    after = live_first - 1  # deleted by retention: nothing older to read
                    continue
                for record in _archive_records(older[0].path, after):
                    yield record
                    after = int(record["seq"])
                after = max(after, older[0].last_seq)
                continue
            rows = self._query(
                "SELECT seq, body FROM records WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, _PAGE),
            )
            for seq, body in rows:
                yield _loads(body, seq)
            if len(rows) < _PAGE:
                with self._lock:
                    rotated = self._anchor_seq + 1 != live_first
                if not rotated:
                    return
            if rows:
                after = rows[-1][0]

    def last_record_of_type(self, type: str) -> dict[str, Any] | None:
        """The newest record of ``type`` (e.g. the last ``round_open`` to restore counters)."""
        sql = "SELECT seq, body FROM records WHERE type = ? ORDER BY seq DESC LIMIT 1"
        rows = self._query(sql, (type,))
        if rows:
            return _loads(rows[0][1], rows[0][0])
        for archive in reversed(self.archives):
            found = _read_only(archive.path, sql, (type,))
            if found:
                return _loads(str(found[0][1]), int(found[0][0]))
        return None

    def verify(self) -> int:
        """Check the live file: its hash chain from its anchor, every column against the hashed
        body, and SQLite's integrity check; return the number of records checked.

        Raises:
            ChainBrokenError: naming the first ``seq`` whose link does not verify.
            JournalIntegrityError: the file is damaged outside the links.
        """
        with self._lock:
            self._check_open()
            return _verify_conn(self._conn, self.path, self.table_id).count

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[int, str]]:
        with self._lock:
            self._check_open()
            try:
                return [(int(r[0]), str(r[1])) for r in self._conn.execute(sql, params)]
            except sqlite3.Error as exc:
                raise JournalError(f"{self.path}: cannot read journal: {exc}") from None

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self.path}: journal is closed")


def _use_wal(conn: sqlite3.Connection, path: Path) -> None:
    """WAL mode, every commit fsync'd, and a bounded write-ahead log.

    Each commit adds whole pages to the WAL, and SQLite's defaults let it reach 4 MiB before a
    checkpoint and keep that size. On a nearly full disk that space was the journal's own
    lock-out: a checkpoint needs room in the main file, so a WAL that had filled the disk could
    never be given back (the fault suite's journal-outage lane, a 4 MiB disk). 1 MiB costs
    nothing measurable (an append took 0.57 ms against 0.64 ms with the defaults, here).
    """
    mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        raise JournalError(f"{path}: cannot switch to WAL mode (got {mode!r})")
    conn.execute("PRAGMA synchronous=FULL")
    conn.execute(f"PRAGMA wal_autocheckpoint={_WAL_PAGES}")
    conn.execute(f"PRAGMA journal_size_limit={_WAL_BYTES}")


def _checkpoint_now(conn: sqlite3.Connection) -> bool:
    """Checkpoint the whole WAL into the main file and empty it, or give up at once.

    Without waiting: a reader holding the WAL (``diag stats``, an export's snapshot) must not
    stall a shutdown or an append for the busy timeout; the caller just skips the seal or
    retries the rotation later.
    """
    conn.execute("PRAGMA busy_timeout = 0")
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.execute("PRAGMA busy_timeout = 5000")
    return bool(busy == 0)


def _loads(body: str, seq: int) -> dict[str, Any]:
    try:
        obj = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise ChainBrokenError(seq, f"body is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ChainBrokenError(seq, "body is not a JSON object")
    return obj


def _unanchored(
    conn: sqlite3.Connection, first: tuple[Any, ...] | None, last: tuple[Any, ...] | None
) -> int:
    """Records of the live file after its newest anchor (all of them when it has none: the
    rotated file before it ends with a keyed seal). One lookup on the ``(type, seq)`` index."""
    if first is None or last is None:
        return 0
    newest = conn.execute("SELECT max(seq) FROM records WHERE type = ?", (ANCHOR,)).fetchone()[0]
    start = int(newest) if newest is not None else int(first[0]) - 1
    return int(last[0]) - start


def _read_meta(conn: sqlite3.Connection) -> tuple[int, str] | None:
    if not conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone():
        return None  # a journal from before rotation existed
    rows = {
        _as_str(key): _as_str(value)
        for key, value in conn.execute("SELECT key, value FROM meta").fetchall()
    }
    if not rows:
        return None
    seq, anchor = rows.get("anchor_seq"), rows.get("anchor_hash")
    if (
        len(rows) != 2
        or not isinstance(seq, str)
        or not seq.isdigit()
        or not isinstance(anchor, str)
        or not _HEX64.fullmatch(anchor)
    ):
        raise JournalIntegrityError(f"meta table is malformed: {sorted(map(repr, rows))}")
    return int(seq), anchor


def _as_str(value: object) -> object:
    if isinstance(value, bytes):
        try:
            return value.decode("utf-8")
        except UnicodeDecodeError:
            return value
    return value


def _write_meta(conn: sqlite3.Connection, seq: int, anchor: str) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [("anchor_seq", str(seq)), ("anchor_hash", anchor)],
    )
    conn.execute("COMMIT")


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection that can never change ``path``.

    A file without a ``-wal`` next to it (closed, rotated, copied as evidence) is opened with
    ``immutable=1``: nothing else to read, and no ``-shm``/``-wal`` files are created next to
    the evidence. With a ``-wal`` (a live journal) ``mode=ro`` reads the writer's committed
    frames too; a copy in a read-only folder cannot get its ``-shm`` index created, so
    ``immutable=1`` is the fallback there as well.
    """
    uri = path.resolve().as_uri()
    last: BaseException | None = None
    options_tried = ["?mode=ro&immutable=1"]
    if path.with_name(path.name + "-wal").exists():
        options_tried.insert(0, "?mode=ro")
    for options in options_tried:
        try:
            conn = sqlite3.connect(uri + options, uri=True)
        except _READ_ERRORS as exc:
            last = exc
            continue
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except _READ_ERRORS as exc:
            conn.close()
            last = exc
            continue
        return conn
    raise JournalError(f"{path}: cannot open journal: {_describe(last)}")


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "the schema is damaged (not UTF-8)"
    return str(exc)


def _read_only(path: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    conn = _connect_read_only(path)
    try:
        return list(conn.execute(sql, params).fetchall())
    except _READ_ERRORS as exc:
        raise JournalError(f"{path}: cannot read journal: {_describe(exc)}") from None
    finally:
        conn.close()


def _archive_records(path: Path, after: int) -> Iterator[dict[str, Any]]:
    conn = _connect_read_only(path)
    try:
        while True:
            try:
                rows = conn.execute(
                    "SELECT seq, body FROM records WHERE seq > ? ORDER BY seq LIMIT ?",
                    (after, _PAGE),
                ).fetchall()
            except _READ_ERRORS as exc:
                raise JournalError(f"{path}: cannot read journal: {_describe(exc)}") from None
            for seq, body in rows:
                yield _loads(body, int(seq))
            if len(rows) < _PAGE:
                return
            after = int(rows[-1][0])
    finally:
        conn.close()


# -- verification --------------------------------------------------------------------------------


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


def _verify_conn(
    conn: sqlite3.Connection, path: Path, table: str | None = None, key: bytes | None = None
) -> FileSummary:
    """Chain, columns and structure of one file, through an open connection.

    The chain goes first so that an altered record is named by its ``seq`` even when SQLite's
    own check would also notice (a ``type`` edit breaks the type index too). ``key`` checks
    every anchor's mac as well (:class:`KeyedEvidenceError` naming the first that fails).
    """
    old_factory = conn.text_factory
    conn.text_factory = bytes  # a flipped byte may leave invalid UTF-8: name it, do not crash
    try:
        try:
            meta = _read_meta(conn)
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
    except _READ_ERRORS as exc:
        raise JournalIntegrityError(f"{path}: cannot read journal: {_describe(exc)}") from None
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
        rec = _loads(body, seq)
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


@functools.cache
def _expected_schema() -> dict[object, object]:
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_DDL)
        return {
            name.encode("utf-8"): sql.encode("utf-8") if sql is not None else None
            for name, sql in conn.execute("SELECT name, sql FROM sqlite_master")
        }
    finally:
        conn.close()


def _check_schema(conn: sqlite3.Connection, path: Path) -> None:
    """The tables and indexes must be exactly the journal's: an altered declaration (a flipped
    byte in the schema text) can change what a column means without SQLite noticing."""
    # Read as bytes (the verifying connection's text factory): a damaged name is no crash.
    found = dict(conn.execute("SELECT name, sql FROM sqlite_master").fetchall())
    expected = _expected_schema()
    if b"meta" not in found:  # journals from before rotation have no meta table
        expected = {k: v for k, v in expected.items() if k not in _META_OBJECTS}
    if found != expected:
        altered = sorted(
            repr(_as_str(k)) for k in set(found) | set(expected) if found.get(k) != expected.get(k)
        )
        raise JournalIntegrityError(f"{path}: schema altered ({', '.join(altered)})")


_HEADER = 100


def _check_header(path: Path, data: bytes, size: int) -> None:
    """Header fields SQLite itself ignores or tolerates, checked where they have one valid value.

    (The change counter, schema cookie and version fields have no fixed value: only a seal
    covers them.)
    """
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
    """Verify one journal file without writing to it; see :func:`verify_file`.

    Checks, in order: the hash chain from the file's anchor (naming the first broken link),
    every column against the hashed body, the ``published`` flags, SQLite's integrity check,
    the header fields that have a single valid value, and — when the file has a seal — that
    every byte of the file is the sealed one and the chain ends where the seal says.

    With ``key`` (the journal's ``[journal] key_file``; R13, R15) also who wrote it: every
    anchor's mac and the seal's must match the chain head they name, and a closed file (no WAL
    frames: the journal closed it, or someone else's SQLite edit did) or a rotated one must have
    a keyed seal. Records after the newest anchor of a live file are covered by nothing keyed yet:
    ``keyed_through`` of the result says where the key's word ends.

    Raises:
        JournalError: the file is missing or not a journal.
        ChainBrokenError: naming the first broken link.
        JournalIntegrityError: the file is altered outside the links (structure, header,
            flags) or differs from its seal; a rotated file without its seal.
        KeyedEvidenceError: (``key`` only) naming the anchor or seal end whose mac does not
            match, or the first record a closed file's missing keyed seal leaves unproven.
    """
    path = Path(path)
    if not path.is_file():
        raise JournalError(f"{path}: no such journal file")
    seal = read_seal(path)
    wal = path.with_name(path.name + "-wal")
    conn = _connect_read_only(path)
    try:
        summary = _verify_conn(conn, path, table, key)
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
        if _looks_rotated(path):
            raise JournalIntegrityError(f"{path}: rotated journal file has no seal")
        if key is not None and not live_wal:
            # Closed: the journal closed it (and seals what it closes), or an SQLite edit by
            # someone else did. A live journal always has frames in its WAL.
            _no_keyed_seal(path, summary)
        return summary
    if _looks_rotated(path) and seal["file"] != path.name:
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
    if (size, _file_digest(path)[1]) != (seal["size"], seal["sha256"]):
        raise JournalIntegrityError(
            f"{path}: file differs from its seal (a changed byte outside the records' content:"
            " header, free space or index)"
        )
    if key is not None:
        _check_seal_mac(path, seal, key)
    return dataclasses.replace(summary, sealed=True, seal_mac="mac" in seal)


def _no_keyed_seal(path: Path, summary: FileSummary) -> None:
    """A closed file without a seal, verified with the key: what it leaves unproven.

    The journal seals every file it closes and rotates; an SQLite edit by anyone else leaves a
    closed file too, and deleting the seal is what makes a recomputed chain or a cut tail pass
    the unkeyed checks. (A journal closed while another reader held its WAL is not sealed either:
    then the next start and clean close seal it.)
    """
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


def _check_seal_mac(path: Path, seal: Mapping[str, Any], key: bytes) -> None:
    last_seq, last_hash = seal["last_seq"], seal["last_hash"]
    if "mac" not in seal:
        raise KeyedEvidenceError(
            path,
            last_seq,
            "the seal has no mac (sealed without a key): the file's tail is not keyed",
        )
    if not mac_matches(key, seal["mac"], seal.get("table"), last_seq, last_hash):
        raise KeyedEvidenceError(
            path,
            last_seq,
            "the seal's mac does not match the chain head it names: the records are not the"
            " ones keyed (chain recomputed, seal rewritten?), or the key is not this journal's",
        )


def _looks_rotated(path: Path) -> bool:
    return re.search(r"\.\d{6,}-\d{6,}(\.[^.]*)?$", path.name) is not None


def verify_file(path: Path | str) -> int:
    """Verify a journal file without writing to it (``tablectl verify`` on a copy or evidence).

    Opened read-only through a ``mode=ro`` URI, so a verification can never alter the file.
    Returns the number of records checked. See :func:`verify_journal_file` for what is checked.

    Raises:
        JournalError: the file is missing or not a journal.
        ChainBrokenError: naming the first broken link.
        JournalIntegrityError: the file is altered outside the links or differs from its seal.
    """
    return verify_journal_file(path).count
