"""The journal: an append-only, fsync'd, hash-chained SQLite file per table (contracts §3, §7).

Every table event is written here *before* it is acted on or published. Rotation lives here
because the chain must continue across files; format and guarantees: docs/journal.md.
"""

from __future__ import annotations

import math
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

import structlog

from tablectl.controller.core.closing import Closing
from tablectl.controller.core.errors import JournalConflictError, JournalError
from tablectl.controller.core.time import earlier, format_moment, is_canonical, parse_ts
from tablectl.controller.journal import outbox
from tablectl.controller.journal.anchors import KeyedAnchors
from tablectl.controller.journal.db import PAGE, file_records, leave_wal, read_only
from tablectl.controller.journal.files import Archive, archive_path, list_archives
from tablectl.controller.journal.live import LiveFile
from tablectl.controller.journal.records import (
    SCHEMA,
    JournalRecord,
    Row,
    chain_record,
    prepare_record,
    read_record,
    stored_record,
)
from tablectl.controller.journal.retention import archived_discount, newest_discount
from tablectl.controller.journal.retention import prune as prune_rotated
from tablectl.controller.journal.verify import verify_conn
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.journal")

T = TypeVar("T")

StoredRow = tuple[int, str, bytes]
"""A record as stored: ``(seq, type, body)``, the body its canonical JSON (what is published)."""


class Committed(NamedTuple):
    """What one :meth:`Journal.commit` wrote."""

    records: list[JournalRecord]
    """The records given, as stored (in order)."""
    rows: list[StoredRow]
    """Every row the transaction wrote, in ``seq`` order: the records given, then the anchor
    the journal chained after them, if one was due (the outbox is handed these)."""


class Journal(Closing):
    """One table's journal file (plus, after rotations, its rotated files).

    Thread-safe, not async: a running table sends its calls to the journal's own writer thread
    (:meth:`in_writer`), so a slow fsync stalls that table only. ``anchors``: keyed evidence
    (R13/R15); the R19 retention floor is the config's job.
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
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.path = Path(path)
        self._clock = clock
        self.table_id = table_id
        self.rotate_bytes = rotate_bytes
        self.rotate_after = timedelta(days=rotate_days) if rotate_days is not None else None
        self.retention_days = retention_days
        self._anchors = anchors
        self._key = anchors.key if anchors is not None else None
        """Each record's ``auth`` MAC (records.chain_record): the anchors' key."""
        # Records after the newest anchor (or the live file's start): the count check of append.
        self._unanchored = 0
        # When the anchor timer first saw unanchored records (its clock): see anchor_if_due.
        self._unanchored_seen: float | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._writer: ThreadPoolExecutor | None = None
        """The journal's own thread (:meth:`in_writer`), started on first use."""
        self._last_ts: datetime | None = None
        """The newest time a record's ``ts`` gave, as of the last one not in ``format_ts``'s form
        (or the open): what :meth:`_newest_time` falls back on."""
        self._last_ts_text: str | None = None
        """The newest record's ``ts`` as written (:attr:`newest_ts`)."""
        self._age_limits: tuple[str | None, str | None] = (None, None)
        """When the live file is old enough to rotate (:meth:`_rotation_due`), worked out from
        its first ``ts`` (:attr:`_age_limits_of`) once per file, not per append."""
        self._age_limits_of: str | None = None
        self.retention_hold: str | None = None
        """Why retention is suspended (a suspect clock: tablectl.controller.service.clock), or
        ``None``. Nothing is pruned while it is set. The journal does not prune when it opens:
        its owner does, once it has checked the clock (``Journal.prune``)."""
        self.retention_guard: Callable[[], str | None] | None = None
        """Asked before each prune (on the thread that prunes): why not now, or ``None``. The
        clock watch's: a step it has not journaled yet (it looks once a second, and a rotation
        in that second would judge ages by the stepped clock)."""
        self._archives: list[Archive] = list_archives(self.path)
        self._live = self._open_live()

    def _open_live(self) -> LiveFile:
        """Open (or create) the live file; its tail after the newest anchor is due at once."""
        key = self._anchors.key if self._anchors is not None else None
        live = LiveFile(self.path, self.table_id, self._archives, key)
        if not live.empty:
            self._last_ts = parse_ts(live.newest_ts)
        try:
            first = outbox.first_unpublished(live.conn)
        except sqlite3.Error as exc:
            live.conn.close()
            raise JournalError(f"{self.path}: cannot read the outbox: {exc}") from None
        self.acknowledged_seq = live.last_seq if first is None else first - 1
        """Every record up to this ``seq`` is marked published (acknowledged by the broker);
        read without the lock (an int), so the table's ``state`` tells the outbox's backlog
        without a query on the event loop."""
        self._unanchored = live.unanchored
        tail = self._anchors is not None and self._unanchored > 0
        # The timer anchors a tail found at open at its first tick, not after a full period.
        self._unanchored_seen = -math.inf if tail else None
        return live

    # -- lifecycle -------------------------------------------------------------------------

    def close(self) -> None:
        """Close (idempotent) and seal; see :meth:`LiveFile.close`."""
        if self._writer is not None:
            # What is queued on the journal's thread (the outbox's last mark) runs first; not
            # under the lock, which those calls take.
            self._writer.shutdown(wait=True)
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._live.close(self._head_mac(), self._clock.wall())

    def in_writer(self, call: Callable[[], T]) -> Future[T]:
        """Run ``call`` on the journal's own thread, in order, so one table's slow fsync never
        stalls the shared event loop (direct calls take the same lock)."""
        # Not under the lock: the writer thread holds it for a whole commit, and the loop must
        # never wait for that (the call is queued behind it instead).
        self._check_open()
        if self._writer is None:
            self._writer = ThreadPoolExecutor(1, thread_name_prefix=f"journal-{self.table_id}")
        try:
            return self._writer.submit(call)
        except RuntimeError:  # closed (and its thread shut down) since the check above
            raise JournalError(f"{self.path}: journal is closed") from None

    def _head_mac(self) -> str | None:
        """The seal's ``mac`` over the live file's last record, ``None`` for an unkeyed journal."""
        if self._anchors is None:
            return None
        return self._anchors.mac(self.table_id, self._live.last_seq, self._live.last_hash)

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r}, table={self.table_id!r}, last_seq={self.last_seq})"

    # -- writing ---------------------------------------------------------------------------

    @property
    def last_seq(self) -> int:
        """``seq`` of the newest record, 0 when empty."""
        return self._live.last_seq

    @property
    def last_hash(self) -> str:
        """``hash`` of the newest record, :data:`~tablectl.controller.journal.records.GENESIS_HASH`
        when empty."""
        return self._live.last_hash

    @property
    def first_live_seq(self) -> int:
        """``seq`` of the live file's first record (the next one when it is empty)."""
        return self._live.anchor_seq + 1

    @property
    def archives(self) -> list[Archive]:
        """The rotated files still on disk, oldest first."""
        with self._lock:
            return list(self._archives)

    def append(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> list[JournalRecord]:
        """:meth:`commit` ``records``; the stored records."""
        return self.commit(records, after_seq=after_seq).records

    def commit(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        """Append a batch in one transaction (one fsync): all durable when this returns, or none
        stored.

        Returns the stored records and every row written (the outbox publishes those without reading
        them back). ``after_seq``: a caller that decided from the ``seq`` the records will get
        passes it, so a record appended meanwhile is a ``JournalConflictError`` (nothing written),
        never a wrong ``seq``. A passed rotation threshold rotates first. A failed write
        (``JournalWriteError``) can be retried.
        """
        with self._lock:
            self._check_open()
            if after_seq is not None and after_seq != self._live.last_seq:
                raise JournalConflictError(
                    f"{self.path}: batch expected to follow seq {after_seq}, "
                    f"the journal is at {self._live.last_seq}"
                )
            prepared = [prepare_record(raw, self.table_id) for raw in records]
            if not prepared:
                return Committed([], [])
            if self._rotation_due(prepared[0]):
                self._rotate_locked()
            seq, prev = self._live.last_seq, self._live.last_hash
            stored: list[JournalRecord] = []
            rows: list[Row] = []
            for rec in prepared:
                seq += 1
                rows.append(chain_record(rec, seq, prev, self._key))
                prev = rows[-1][5]
                stored.append(stored_record(rec, seq))
            # The anchor's whole per-record cost: this counter check (R13/R15 keyed evidence).
            anchored = (
                self._anchors is not None and self._unanchored + len(rows) >= self._anchors.every
            )
            if anchored:
                seq, prev = seq + 1, self._anchor_row(rows, seq, prev, stored[-1].ts)
            self._live.insert(rows, f"{len(rows)} record(s)")
            self._advance(seq, prev, stored[0].ts, stored[-1].ts)
            if anchored:
                self._unanchored, self._unanchored_seen = 0, None
            else:
                self._unanchored += len(rows)
            return Committed(stored, [(row[0], row[2], row[3].encode("utf-8")) for row in rows])

    def _advance(self, seq: int, last_hash: str, first_ts: str, last_ts: str) -> None:
        """After an insert: the newest record, and the live file's first ``ts`` (rotation). A ``ts``
        in ``format_ts``'s form is read only when retention needs it; another form may be no
        time."""
        self._live.advance(seq, last_hash, first_ts)
        if not is_canonical(last_ts):
            self._last_ts = parse_ts(last_ts) or self._newest_time()
        self._last_ts_text = last_ts

    def _newest_time(self) -> datetime | None:
        """The newest record's time (across rotations; retention's clock never runs ahead of
        it): its ``ts``, or the newest one before it that was a time."""
        return parse_ts(self._last_ts_text) or self._last_ts

    def _anchor_row(self, rows: list[Row], head_seq: int, head_hash: str, ts: str) -> str:
        """Chain an anchor over ``head_seq``/``head_hash`` onto ``rows``; return its hash."""
        assert self._anchors is not None
        rec = self._anchors.record(self.table_id, head_seq, head_hash, ts)
        rec.update(schema=SCHEMA, table=self.table_id)
        rows.append(chain_record(rec, head_seq + 1, head_hash, self._key))
        return rows[-1][5]

    @property
    def keyed(self) -> bool:
        """Whether this journal writes keyed evidence (anchors, seal macs)."""
        return self._anchors is not None

    def anchor(self, ts: str) -> JournalRecord | None:
        """Journal an anchor over the newest record now (its own transaction), or ``None`` when
        there is nothing to anchor (unkeyed, or already covered)."""
        with self._lock:
            self._check_open()
            if self._anchors is None or self._unanchored == 0:
                return None
            rows: list[Row] = []
            new_hash = self._anchor_row(rows, self._live.last_seq, self._live.last_hash, ts)
            self._live.insert(rows, "an anchor")
            self._advance(rows[0][0], new_hash, ts, ts)
            self._unanchored, self._unanchored_seen = 0, None
            return read_record(rows[0][3], rows[0][0])

    def anchor_if_due(self, now: float, ts: str) -> JournalRecord | None:
        """The time-based anchor, once records have waited ``anchors.seconds`` by the timer's own
        ``now``: the wait starts at the first call that sees them, so that clock need not be the
        records'."""
        with self._lock:
            if self._anchors is None or self._closed or self._unanchored == 0:
                self._unanchored_seen = None
                return None
            if self._unanchored_seen is None:
                self._unanchored_seen = now
            if now - self._unanchored_seen < self._anchors.seconds:
                return None
        return self.anchor(ts)

    # -- rotation --------------------------------------------------------------------------

    def _rotation_due(self, incoming: Mapping[str, Any]) -> bool:
        """Whether to rotate before ``incoming``: a threshold is passed, and preferably at a round
        boundary (the batch opens a round) so a round's events stay in one file; at twice the
        threshold the live file is rotated wherever it is."""
        if self._live.empty or (self.rotate_bytes is None and self.rotate_after is None):
            return False
        factor = 1 if incoming.get("type") == "round_open" else 2
        if self.rotate_bytes is not None:
            try:
                size = self._live.size()
            except sqlite3.Error:
                return False
            if size >= factor * self.rotate_bytes:
                return True
        if self.rotate_after is not None:
            limit = self._age_limit(factor)
            if limit is not None and earlier(incoming["ts"], limit) is False:
                return True
        return False

    def _age_limit(self, factor: int) -> str | None:
        """The ``ts`` from which the live file is ``factor`` × ``rotate_days`` old: its first
        record's plus that, in ``format_ts``'s form so that an append compares texts
        (:func:`~tablectl.controller.core.time.earlier`); parsed once per file. ``None``: no
        first time, or past the year 9999 (no ``ts`` reaches it)."""
        first = self._live.first_ts
        if first != self._age_limits_of:
            self._age_limits_of, self._age_limits = first, (None, None)
            start = parse_ts(first)
            if start is not None and self.rotate_after is not None:
                self._age_limits = (
                    _later(start, self.rotate_after, 1),
                    _later(start, self.rotate_after, 2),
                )
        return self._age_limits[factor - 1]

    def rotate(self) -> Path | None:
        """Rotate now: seal the live file, rename it with its ``seq`` range, start a new one.

        ``None`` when nothing was rotated: empty, holding unacknowledged records (the outbox reads
        only the live file), or another connection holds its WAL; :meth:`append` retries later. A
        failed rename or new file closes the journal.
        """
        with self._lock:
            self._check_open()
            return self._rotate_locked()

    def _rotate_locked(self) -> Path | None:
        live = self._live
        first, last = live.anchor_seq + 1, live.last_seq
        if last < first:
            return None
        try:
            if outbox.has_unpublished(live.conn) or not leave_wal(live.conn):
                return None
        except sqlite3.Error as exc:
            log.warning("journal_rotate_skipped", path=str(self.path), error=str(exc))
            return None
        target = archive_path(self.path, first, last)
        try:
            live.move_to(target, self._head_mac(), self._clock.wall())
        except JournalError:
            self._live = self._reopen_or_close()
            raise
        self._archives.append(Archive(target, first, last))
        self._live = self._reopen_or_close()
        log.info("journal_rotated", path=str(target), first_seq=first, last_seq=last)
        if self.retention_days is not None:
            self._prune_locked()
        return target

    def _reopen_or_close(self) -> LiveFile:
        try:
            return self._open_live()
        except JournalError:
            self._closed = True
            raise

    # -- retention -------------------------------------------------------------------------

    def prune(self, now: datetime | None = None) -> list[Path]:
        """Delete rotated files past ``retention_days``. ``now`` defaults to the earlier of the wall
        clock and the newest record's ``ts``: a clock that jumps ahead alone must not delete
        anything early."""
        with self._lock:
            return self._prune_locked(now)

    @property
    def newest_ts(self) -> str | None:
        """The newest record's ``ts`` (across rotations), ``None`` for an empty journal: what a
        new record's time must not be before (the runner keeps journal times in order)."""
        if self._last_ts_text is None and self._last_ts is not None:
            self._last_ts_text = format_moment(self._last_ts)
        return self._last_ts_text

    def _prune_locked(self, now: datetime | None = None) -> list[Path]:
        if self.retention_days is None:
            return []
        why = self.retention_hold
        if why is None and self.retention_guard is not None:
            why = self.retention_guard()
        if why is not None:
            log.warning("retention_suspended", path=str(self.path), why=why)
            return []
        if now is None:
            now = self._clock.wall()
            newest = self._newest_time()
            if newest is not None:
                now = min(now, newest)
        removed = prune_rotated(
            self.path, retention_days=self.retention_days, now=now, discount_now=self._discount()
        )
        if removed:
            self._archives = list_archives(self.path)
        return removed

    def _discount(self) -> float:
        """Retention's running clock discount as of the newest clock record, read through the
        live file's own connection (a second one would keep its descriptor open until close)."""
        found = newest_discount(self._live.query)
        return found if found is not None else archived_discount(self._archives)

    # -- outbox ----------------------------------------------------------------------------

    def unpublished(self, limit: int = 100) -> list[JournalRecord]:
        """The oldest ``limit`` records not yet acknowledged by the broker, in ``seq`` order."""
        with self._lock:
            self._check_open()
            return outbox.unpublished(self._live.conn, self.path, limit)

    def unpublished_payloads(
        self, limit: int = 100, after: int = 0
    ) -> list[tuple[int, str, bytes]]:
        """Like :meth:`unpublished`, with the stored body: it *is* the canonical JSON, so the outbox
        publishes it as is. ``after``: acknowledged records whose mark could not be written yet."""
        with self._lock:
            self._check_open()
            return outbox.unpublished_payloads(self._live.conn, self.path, limit, after)

    def mark_published(self, up_to_seq: int) -> None:
        """Mark every record with ``seq <= up_to_seq`` as acknowledged: only after the broker's
        PUBACK for every topic the records went to (see :func:`outbox.mark_published`)."""
        with self._lock:
            self._check_open()
            try:
                outbox.mark_published(self._live.conn, self.path, up_to_seq)
            except outbox.FullSyncLostError:
                # Never append a record without fsync: this journal refuses every further write.
                self._closed = True
                self._live.conn.close()
                raise
            self.acknowledged_seq = max(self.acknowledged_seq, up_to_seq)

    # -- reading ---------------------------------------------------------------------------

    def records(self, since_seq: int = 0) -> Iterator[JournalRecord]:
        """Records with ``seq > since_seq`` in order, paged, rotated files first: the whole retained
        history, and a rotation during the iteration loses nothing."""
        after = since_seq
        while True:
            with self._lock:
                self._check_open()
                live_first = self._live.anchor_seq + 1
                archives = list(self._archives)
            if after + 1 < live_first:
                older = [a for a in archives if a.last_seq > after]
                if not older:
                    after = live_first - 1  # deleted by retention: nothing older to read
                    continue
                for record in file_records(older[0].path, after):
                    yield record
                    after = record.seq
                after = max(after, older[0].last_seq)
                continue
            rows = self._query(
                "SELECT seq, body FROM records WHERE seq > ? ORDER BY seq LIMIT ?",
                (after, PAGE),
            )
            for seq, body in rows:
                yield read_record(body, seq)
            if len(rows) < PAGE:
                with self._lock:
                    rotated = self._live.anchor_seq + 1 != live_first
                if not rotated:
                    return
            if rows:
                after = rows[-1][0]

    def last_record_of_type(self, type: str) -> JournalRecord | None:
        """The newest record of ``type`` (e.g. the last ``round_open`` to restore counters)."""
        sql = "SELECT seq, body FROM records WHERE type = ? ORDER BY seq DESC LIMIT 1"
        rows = self._query(sql, (type,))
        if rows:
            return read_record(rows[0][1], rows[0][0])
        for archive in reversed(self.archives):
            found = read_only(archive.path, sql, (type,))
            if found:
                return read_record(str(found[0][1]), int(found[0][0]))
        return None

    def verify(self) -> int:
        """Check the live file (chain, columns, integrity); return the number of records checked."""
        with self._lock:
            self._check_open()
            return verify_conn(self._live.conn, self.path, self.table_id).count

    def _query(self, sql: str, params: tuple[Any, ...]) -> list[tuple[int, str]]:
        with self._lock:
            self._check_open()
            return self._live.query(sql, params)

    def _check_open(self) -> None:
        if self._closed:
            raise JournalError(f"{self.path}: journal is closed")


def _later(start: datetime, by: timedelta, times: int) -> str | None:
    """``start`` + ``times`` × ``by`` in ``format_ts``'s form; ``None`` past the year 9999."""
    try:
        return format_moment(start + times * by)
    except OverflowError:
        return None
