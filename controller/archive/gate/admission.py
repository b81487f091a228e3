"""Admission: what the archive stores of a message on a table's topic, and what it quarantines.

Nothing on the broker is trusted (contracts §7). :func:`admit` never raises; its checks run cheap
and bounding ones first: size, table id, bounded JSON, envelope, authorship, the seq window, the
time window (so no flood creates thousands of partitions). A record refused for its window is a
gap the table resends. Pure: no database, no clock of its own (docs/fleet.md, "What the archive
refuses").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from tablectl.controller.archive.chains import is_withheld
from tablectl.controller.archive.ingest import Incoming, MalformedRecordError, incoming_of
from tablectl.controller.archive.schema import Month, month_of
from tablectl.controller.core.bounded_json import MAX_BYTES, MAX_DEPTH, MAX_INT_DIGITS, read_object
from tablectl.controller.core.errors import MalformedError
from tablectl.controller.journal import AUTH, record_hash
from tablectl.controller.journal.anchors import WITHHELD_AUTH, mac_matches, withheld_matches

MAX_SEQ: Final = 2**63 - 1
"""The largest ``seq`` (PostgreSQL's ``bigint``)."""

REASONS: Final[Mapping[str, str]] = {
    "too_large": "larger than the archive's message size cap",
    "bad_table": "the topic's table id is not one a table may have",
    "too_deep": "JSON nested deeper than the archive's cap",
    "not_json": (
        f"not UTF-8 JSON (or NaN, Infinity, an integer over {MAX_INT_DIGITS} digits,"
        " a lone surrogate)"
    ),
    "not_record": "not a journal record of the topic's table (not an object, or its envelope)",
    "seq_ahead": "seq too far ahead of the table's verified head",
    "ts_ahead": "dated after now + the archive's slack",
    "ts_behind": "dated before the table's verified head − the archive's slack",
    "ts_too_old": "dated before the oldest the archive takes",
    "forged": "not its table's own: auth or body does not match under the table's key",
    "unauthenticated": "no auth, where the archive holds the table's key",
    "db_refused": "PostgreSQL refused the record",
    "error": "the archive failed to judge it (a defect: the detail says what)",
}
"""Every reason code a message is quarantined for (stable: metrics, alarms, the table)."""

MALFORMED: Final = frozenset({"too_large", "bad_table", "too_deep", "not_json", "not_record"})
"""The reasons that mean the message is no journal record at all (alarm ``malformed``)."""

_TABLE: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")
_AS_QUARANTINED: Final[Mapping[str, str]] = {"bad_number": "not_json", "not_object": "not_record"}
"""The bounded reader's reasons that have another code here (the rest are the same words)."""


@dataclass(frozen=True)
class Limits:
    """The bounds :func:`admit` applies (``tablectl archive``'s options; docs/fleet.md)."""

    max_bytes: int = MAX_BYTES
    """Bytes of a message at most (``--max-message-bytes``)."""
    max_depth: int = MAX_DEPTH
    """JSON nesting at most (``--max-json-depth``; a journal record is 2–5 deep)."""
    seq_window: int = 100_000
    """``seq`` values a record may be ahead of its table's verified head (``--seq-window``)."""
    seq_rate: float = 10.0
    """Records a table may journal per second since its head's ``ts``, beyond the window
    (``--seq-rate``; a busy card table journals about one)."""
    ts_back: timedelta = timedelta(days=1)
    """How much older than its table's verified head a later record may be dated
    (``--ts-slack-back``: a clock stepped back)."""
    ts_ahead: timedelta = timedelta(hours=1)
    """How far after now a record may be dated (``--ts-slack-ahead``: clocks differ)."""
    max_age: timedelta = timedelta(days=400)
    """How old a record may be at all, and the span a table with nothing verified gets
    (``--max-age-days``: a first start archives the tables' journals, ≥ 90 days)."""

    def months(self, now: datetime) -> tuple[Month, Month]:
        """The first and the last month an admitted record may fall in (partitions)."""
        return month_of(now - self.max_age), month_of(now + self.ts_ahead)


@dataclass(frozen=True)
class Head:
    """A table's verified head: its ``seq`` and that record's own ``ts`` (if known)."""

    seq: int
    ts: datetime | None = None


@dataclass(frozen=True)
class Context:
    """What :func:`admit` judges a message by."""

    topic: str
    table: str
    """The table id of the topic (``{prefix}/{table}/events``)."""
    now: datetime
    head: Head | None = None
    """The table's verified head as this archiver last saw it; ``None``: nothing verified."""
    limits: Limits = field(default_factory=Limits)
    key: bytes | None = field(default=None, repr=False)
    """The table's journal key (``--key``), for a per-record authentication check."""


@dataclass(frozen=True)
class Admitted:
    """A message to store in ``records``."""

    record: Incoming


@dataclass(frozen=True)
class Quarantined:
    """A message not stored in ``records``: why (:data:`REASONS`), and what it was."""

    reason: str
    detail: str
    """One line, bounded: what exactly (``seq 9223372036854775807 is more than …``)."""
    topic: str
    table: str
    payload: bytes = field(repr=False)
    seq: int | None = None
    ts: datetime | None = None

    @property
    def malformed(self) -> bool:
        """No journal record at all (:data:`MALFORMED`)."""
        return self.reason in MALFORMED


def admit(payload: bytes, context: Context) -> Admitted | Quarantined:
    """Whether the archive stores ``payload`` (see the module doc). Never raises."""
    data = payload if type(payload) is bytes else bytes(payload)
    try:
        return _admit(data, context)
    except Exception as exc:  # a defect of ours: the message is kept, never fatal
        detail = f"{type(exc).__name__}: {str(exc)[:120]}"
        return Quarantined("error", detail, context.topic, context.table, data)


def _admit(payload: bytes, context: Context) -> Admitted | Quarantined:
    limits, table = context.limits, context.table

    def refuse(reason: str, detail: str, record: Incoming | None = None) -> Quarantined:
        seq, ts = (record.seq, record.ts) if record is not None else (None, None)
        return Quarantined(reason, detail, context.topic, table, payload, seq, ts)

    if len(payload) > limits.max_bytes:
        return refuse("too_large", f"{len(payload)} bytes, more than {limits.max_bytes}")
    if not _TABLE.fullmatch(table):
        return refuse("bad_table", f"table id {table[:40]!r} is not 1-64 of A-Z a-z 0-9 _ -")
    try:
        fields = read_object(payload, max_bytes=limits.max_bytes, max_depth=limits.max_depth)
    except MalformedError as malformed:
        return refuse(*refusal_of(malformed))
    try:
        record = incoming_of(table, payload, fields)
    except MalformedRecordError as exc:
        return refuse("not_record", str(exc))

    if context.key is not None:
        forged = authorship_problem(fields, record, context.key)
        if forged is not None:
            return refuse(*forged, record)

    horizon = seq_horizon(context.head, context.now, limits)
    if record.seq > horizon:
        head = context.head.seq if context.head is not None else 0
        return refuse(
            "seq_ahead",
            f"seq {record.seq} is more than the window ahead of the verified head"
            f" (seq {head}; at most {horizon})",
            record,
        )
    earliest, latest, behind = ts_window(record.seq, context.head, context.now, limits)
    if record.ts > latest:
        return refuse(
            "ts_ahead", f"ts {record.ts.isoformat()} is after {latest.isoformat()}", record
        )
    if record.ts < earliest:
        reason, what = (
            ("ts_behind", "verified head - slack") if behind else ("ts_too_old", "max age")
        )
        return refuse(
            reason, f"ts {record.ts.isoformat()} is before {earliest.isoformat()} ({what})", record
        )
    return Admitted(record)


def authorship_problem(
    fields: Mapping[str, Any], record: Incoming, key: bytes
) -> tuple[str, str] | None:
    """``(reason, detail)`` when a record is not its table's own under ``key``, else ``None``.

    A record without ``auth`` is refused too: a forger cannot make one, only strip it, so a forgery
    never reaches ``records`` (issue 26). A withheld record's hash covers what was not published.
    """
    auth = fields.get(AUTH)
    if auth is None:
        return "unauthenticated", "no auth: every record of a keyed journal carries one"
    if not mac_matches(key, auth, record.table_id, record.seq, record.hash):
        return "forged", f"auth of seq {record.seq} does not match under the table's key"
    if is_withheld(fields):
        # Its hash covers the face it does not show: the body is vouched for by its own MAC,
        # or a genuine seq, hash and auth could be replayed on any made-up card (issue 26).
        if fields.get(WITHHELD_AUTH) is None:
            return "unauthenticated", f"seq {record.seq} is withheld without withheld_auth"
        if not withheld_matches(key, fields):
            return "forged", f"seq {record.seq}'s withheld body does not match its withheld_auth"
    elif record_hash(record.prev_hash, fields) != record.hash:
        return "forged", f"seq {record.seq}'s body does not hash to its authenticated hash"
    return None


def seq_horizon(head: Head | None, now: datetime, limits: Limits) -> int:
    """The highest ``seq`` of the table admitted now: the verified head's (0 without one) +
    the window + what the table could have journaled since the head's ``ts`` at
    :attr:`Limits.seq_rate` (since :attr:`Limits.max_age` ago without a head or its ``ts``)."""
    age = limits.max_age.total_seconds()
    if head is None or head.seq <= 0:
        base, elapsed = 0, age
    else:
        base = head.seq
        elapsed = age if head.ts is None else (now - head.ts).total_seconds()
    elapsed = min(max(elapsed, 0.0), age)
    return min(MAX_SEQ, base + limits.seq_window + int(limits.seq_rate * elapsed))


def ts_window(
    seq: int, head: Head | None, now: datetime, limits: Limits
) -> tuple[datetime, datetime, bool]:
    """``(earliest, latest, by_head)``: the dates a record of ``seq`` may have now. A record at or
    before the head does not continue the chain: held to :attr:`Limits.max_age` only."""
    latest = now + limits.ts_ahead
    floor = now - limits.max_age
    if head is not None and head.ts is not None and seq > head.seq:
        after_head = head.ts - limits.ts_back
        if after_head > floor:
            return after_head, latest, True
    return floor, latest, False


def refusal_of(malformed: MalformedError) -> tuple[str, str]:
    """``(reason, detail)`` of a message the bounded reader refused, in :data:`REASONS`' codes
    (``bad_number`` is ``not_json`` here, ``not_object`` ``not_record``)."""
    return _AS_QUARANTINED.get(malformed.reason, malformed.reason), malformed.detail
