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
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from controller.errors import ChainBrokenError, JournalError

__all__ = ["GENESIS_HASH", "SCHEMA", "Journal", "canonical_json", "record_hash", "verify_file"]

SCHEMA = 1
"""The ``schema`` value the journal stamps on every record (DESIGN §4.3)."""

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first record."""

_ASSIGNED = ("seq", "prev_hash", "hash")
"""Keys only the journal may set: a caller supplying them is a bug, not something to paper over."""

_PAGE = 500
"""Rows fetched per query by the iterators, so a long read never holds the lock for long."""

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
"""


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


class Journal:
    """One table's journal file.

    Thread-safe (one lock around the single connection) so a caller may append from an executor
    while the publisher reads on the event loop. Not async on purpose: an fsync'd commit costs
    about 0.2 ms, less than a thread hop.

    Args:
        path: the SQLite file; created (with its directory's existing permissions) if missing.
        table_id: stamped on every record; opening another table's journal is refused.
    """

    def __init__(self, path: Path, table_id: str) -> None:
        self.path = Path(path)
        self.table_id = table_id
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        try:
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise JournalError(f"{self.path}: cannot switch to WAL mode (got {mode!r})")
            self._conn.execute("PRAGMA synchronous=FULL")
            self._conn.executescript(_DDL)
            row = self._conn.execute(
                "SELECT seq, hash, body FROM records ORDER BY seq DESC LIMIT 1"
            ).fetchone()
        except sqlite3.Error as exc:
            self._conn.close()
            raise JournalError(f"{self.path}: cannot open journal: {exc}") from None
        except JournalError:
            self._conn.close()
            raise
        self._last_seq = 0
        self._last_hash = GENESIS_HASH
        if row is not None:
            self._last_seq, self._last_hash = int(row[0]), str(row[1])
            owner = _loads(row[2], int(row[0])).get("table")
            if owner != table_id:
                self._conn.close()
                raise JournalError(
                    f"{self.path}: journal belongs to table {owner!r}, not {table_id!r}"
                )

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the file (idempotent). The last close checkpoints the WAL into the main file."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._conn.close()

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

    def append(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Append a batch in one transaction (one fsync) and return the stored records.

        Each input needs ``type`` and ``ts`` (ISO string, the caller's clock). The journal adds
        ``schema``, ``table``, ``seq``, ``prev_hash`` and ``hash``. Either the whole batch is
        durable when this returns, or none of it is stored.

        Raises:
            ValueError: a record lacks ``type``/``ts``, sets a journal-assigned key, names another
                table or schema, or is not JSON-serializable (nothing is written).
            JournalError: the write failed (disk full, I/O error). Rolled back; the journal
                stays usable and the same batch can be retried.
        """
        with self._lock:
            self._check_open()
            seq, prev = self._last_seq, self._last_hash
            stored: list[dict[str, Any]] = []
            rows: list[tuple[int, str, str, str, str, str]] = []
            for raw in records:
                rec = self._prepare(raw)
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
            if not rows:
                return []
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
                raise JournalError(
                    f"{self.path}: cannot append {len(rows)} record(s) at seq {rows[0][0]}: {exc}"
                ) from None
            self._last_seq, self._last_hash = seq, prev
            return stored

    def _prepare(self, raw: Mapping[str, Any]) -> dict[str, Any]:
        for key in _ASSIGNED:
            if key in raw:
                raise ValueError(f"record key {key!r} is assigned by the journal")
        kind, ts = raw.get("type"), raw.get("ts")
        if not isinstance(kind, str) or not kind:
            raise ValueError(f"record needs a non-empty string 'type', got {kind!r}")
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

    # -- outbox ----------------------------------------------------------------------------

    def unpublished(self, limit: int = 100) -> list[dict[str, Any]]:
        """The oldest ``limit`` records not yet acknowledged by the broker, in ``seq`` order."""
        rows = self._query(
            "SELECT seq, body FROM records WHERE published = 0 ORDER BY seq LIMIT ?", (limit,)
        )
        return [_loads(body, seq) for seq, body in rows]

    def unpublished_payloads(self, limit: int = 100) -> list[tuple[int, str, bytes]]:
        """Like :meth:`unpublished`, as ``(seq, type, payload)`` with the stored canonical JSON.

        The stored body *is* the canonical JSON of the record, byte for byte what
        ``canonical_json(record)`` gives after decoding it, so the outbox publishes it as is
        instead of decoding and re-encoding every record.
        """
        with self._lock:
            self._check_open()
            try:
                rows = self._conn.execute(
                    "SELECT seq, type, body FROM records WHERE published = 0 ORDER BY seq LIMIT ?",
                    (limit,),
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
        """Records with ``seq > since_seq`` in order (paged, so safe on a long journal)."""
        after = since_seq
        while True:
            rows = self._query(
                "SELECT seq, body FROM records WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, _PAGE),
            )
            for seq, body in rows:
                yield _loads(body, seq)
            if len(rows) < _PAGE:
                return
            after = rows[-1][0]

    def last_record_of_type(self, type: str) -> dict[str, Any] | None:
        """The newest record of ``type`` (e.g. the last ``round_open`` to restore counters)."""
        rows = self._query(
            "SELECT seq, body FROM records WHERE type = ? ORDER BY seq DESC LIMIT 1", (type,)
        )
        return _loads(rows[0][1], rows[0][0]) if rows else None

    def verify(self) -> int:
        """Check the whole hash chain; return the number of records checked.

        Raises:
            ChainBrokenError: naming the first ``seq`` whose link does not verify.
        """
        with self._lock:
            self._check_open()
            return _verify(self._conn)

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


def _loads(body: str, seq: int) -> dict[str, Any]:
    try:
        obj = json.loads(body)
    except ValueError as exc:
        raise ChainBrokenError(seq, f"body is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ChainBrokenError(seq, "body is not a JSON object")
    return obj


def _verify(conn: sqlite3.Connection) -> int:
    expected_prev = GENESIS_HASH
    expected_seq = 1
    count = 0
    try:
        cursor = conn.execute("SELECT seq, prev_hash, hash, body FROM records ORDER BY seq")
        for seq, prev_col, hash_col, body in cursor:
            if seq != expected_seq:
                raise ChainBrokenError(expected_seq, f"record missing (next seq is {seq})")
            rec = _loads(body, seq)
            if rec.get("seq") != seq:
                raise ChainBrokenError(seq, f"body says seq {rec.get('seq')!r}")
            if prev_col != expected_prev or rec.get("prev_hash") != expected_prev:
                raise ChainBrokenError(seq, "prev_hash does not match the previous record's hash")
            if rec.get("hash") != hash_col:
                raise ChainBrokenError(seq, "hash column differs from the body's hash")
            if record_hash(expected_prev, rec) != hash_col:
                raise ChainBrokenError(seq, "content does not match its hash")
            expected_prev = hash_col
            expected_seq += 1
            count += 1
    except sqlite3.Error as exc:
        raise JournalError(f"cannot read journal: {exc}") from None
    return count


def verify_file(path: Path | str) -> int:
    """Verify a journal file without writing to it (``tablectl verify`` on a copy or evidence).

    Opened read-only through a ``mode=ro`` URI, so a verification can never alter the file.

    Raises:
        JournalError: the file is missing or not a journal.
        ChainBrokenError: naming the first broken link.
    """
    path = Path(path)
    if not path.is_file():
        raise JournalError(f"{path}: no such journal file")
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        return _verify_uri(uri)
    except ChainBrokenError:
        raise
    except JournalError:
        # A WAL file copied into a read-only directory cannot get its -shm index created;
        # immutable=1 reads it without one (safe: nobody writes to a copy under verification).
        try:
            return _verify_uri(uri + "&immutable=1")
        except ChainBrokenError:
            raise
        except JournalError as exc:
            raise JournalError(f"{path}: {exc}") from None


def _verify_uri(uri: str) -> int:
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error as exc:
        raise JournalError(f"cannot open journal: {exc}") from None
    try:
        return _verify(conn)
    finally:
        conn.close()
