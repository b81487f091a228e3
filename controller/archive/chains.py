"""Per-table verification in the archive: links, body hashes, anchors, gaps (pure).

Per table and over the *stored* rows, because archivers share the work and none sees all of a
table's records, nor in order. A break stops the walk and stays until an operator deals with it; a
missing ``seq`` stops it as a gap a resend may fill (docs/fleet.md, "What is verified").
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final

from tablectl.controller.journal.anchors import (
    ANCHOR,
    anchor_problem,
    mac_matches,
    withheld_matches,
)
from tablectl.controller.journal.records import AUTH, GENESIS_HASH, record_hash
from tablectl.controller.mqtt.outbound import withheld_form

MAX_RESEND: Final = 10_000
"""Records asked per ``cmd/resend`` (the table's cap: it answers at most this many)."""

BACKOFF_CAP: Final = timedelta(minutes=10)
"""Longest wait between two resend requests for the same gap (and at most 8 gap timeouts: a
request lost while its table restarted must not leave a gap open for long)."""


@dataclass(frozen=True)
class StoredRow:
    """One row of ``records`` as the verifier reads it."""

    seq: int
    hash: str
    prev_hash: str
    type: str
    raw: bytes


@dataclass(frozen=True)
class ChainBreak:
    """Where a table's chain broke in the archive, and why (the alarm names both)."""

    table: str
    seq: int
    reason: str


@dataclass(frozen=True)
class ChainState:
    """How far a table's chain is verified: ``seq`` 0 = nothing yet (expects the genesis)."""

    verified_seq: int = 0
    verified_hash: str | None = None
    broken_at: int | None = None
    broken_reason: str | None = None

    @property
    def head_hash(self) -> str:
        """The hash the next record must link to."""
        return self.verified_hash if self.verified_seq and self.verified_hash else GENESIS_HASH


@dataclass(frozen=True)
class Walk:
    """The outcome of one walk over a table's rows after its verified head."""

    state: ChainState
    checked: int = 0
    withheld: int = 0
    anchors: int = 0
    broke: ChainBreak | None = None
    stopped_at_gap: bool = False
    """The walk stopped because the next ``seq`` is not stored (later rows exist)."""


def is_withheld(record: Mapping[str, Any]) -> bool:
    """Whether the outbox withheld part of this record (a face-down card), so its ``hash`` covers
    what was not published. Exactly the outbox's form: a record that merely says ``"withheld":
    true`` is re-hashed, so the flag cannot spare a forger the hash."""
    kind = record.get("type")
    if not isinstance(kind, str) or record.get("withheld") is not True:
        return False
    return withheld_form(kind, record) == dict(record)


@dataclass(frozen=True)
class RecordProblem:
    """What is wrong with one record in its chain; ``code`` lets a caller word it its own way."""

    code: str
    reason: str


@dataclass(frozen=True)
class RecordCheck:
    """The outcome of :func:`check_record`."""

    problem: RecordProblem | None = None
    withheld: bool = False
    """Only linked: the outbox withheld part of it (:func:`is_withheld`)."""
    anchor: bool = False
    keyed: bool = False
    """An anchor whose mac matched the key."""
    authenticated: bool = False
    """The record's own ``auth`` matched the key: the key vouches for it and, through its
    ``prev_hash``, for every record before it."""


def check_record(
    table: str, record: Mapping[str, Any], head: str | None, key: bytes | None = None
) -> RecordCheck:
    """One published record of ``table`` in its chain, with the journal's own code: the archive's
    one per-record check (the walk, ``verify --dsn`` and the export's reads call it).

    ``head`` ``None``: the record before it is not at hand, so the link is not checked. A record
    without ``auth`` is not refused here (older journals have none; anchors vouch for those):
    whether it may lack one is the walk's rule (:func:`auth_stripped`).
    """
    if record.get("table") != table:
        why = f"record's own 'table' is {record.get('table')!r}, not {table!r}"
        return RecordCheck(RecordProblem("table", why))
    prev = record.get("prev_hash")
    if head is not None and prev != head:
        return RecordCheck(
            RecordProblem("link", "prev_hash does not match the previous record's hash")
        )
    withheld = is_withheld(record)
    if not withheld:
        try:
            digest = record_hash(str(prev), record)
        except (TypeError, ValueError):
            return RecordCheck(RecordProblem("hash", "record is not canonical JSON"))
        if digest != record.get("hash"):
            return RecordCheck(RecordProblem("hash", "content does not match its hash"))
    authenticated = False
    if key is not None and record.get(AUTH) is not None:
        seq, own_hash = record.get("seq"), record.get("hash")
        if not (
            isinstance(seq, int)
            and isinstance(own_hash, str)
            and mac_matches(key, record.get(AUTH), table, seq, own_hash)
        ):
            why = (
                "record auth does not match the record: not written with this key (forged, or"
                " the key is not this table's)"
            )
            return RecordCheck(RecordProblem("auth", why), withheld)
        if withheld and not withheld_matches(key, record):
            why = (
                "withheld record's withheld_auth does not match what was published (a genuine"
                " seq, hash and auth on another body)"
            )
            return RecordCheck(RecordProblem("auth", why), withheld)
        authenticated = True
    if record.get("type") != ANCHOR:
        return RecordCheck(None, withheld, authenticated=authenticated)
    problem = anchor_problem(record)
    if problem is not None:
        return RecordCheck(RecordProblem("anchor", problem), withheld, anchor=True)
    if key is None:
        return RecordCheck(None, withheld, anchor=True)
    head_seq = int(record["seq"]) - 1  # anchor_problem: an int, and head_seq is seq - 1
    if not mac_matches(key, record.get("mac"), table, head_seq, str(prev)):
        why = (
            f"anchor mac does not match the chain head it names (seq {head_seq}): records up to"
            " it are not the ones keyed (chain recomputed?), or the key is not this table's"
        )
        return RecordCheck(RecordProblem("mac", why), withheld, anchor=True)
    return RecordCheck(None, withheld, anchor=True, keyed=True, authenticated=authenticated)


def auth_stripped(record: Mapping[str, Any], authenticated_before: bool) -> RecordProblem | None:
    """A record without ``auth`` after records that carried one: stripped (a forger cannot make
    an ``auth``, only remove one), as ``tablectl verify --key`` says of a journal."""
    if authenticated_before and record.get(AUTH) is None:
        return RecordProblem("auth", "record has no auth after authenticated records (stripped?)")
    return None


def _row_problem(table: str, row: StoredRow, head: str, key: bytes | None) -> RecordCheck:
    """:func:`check_record` of a stored row, after its own link and envelope: its ``prev_hash``
    column links to ``head``, its bytes are a JSON object whose ``seq``, ``prev_hash`` and
    ``hash`` are the row's."""
    if row.prev_hash != head:
        why = f"prev_hash {row.prev_hash[:12]}… does not link to seq {row.seq - 1}"
        return RecordCheck(RecordProblem("link", why))
    try:
        record = json.loads(row.raw)
    except (ValueError, UnicodeDecodeError):
        return RecordCheck(RecordProblem("stored", "stored bytes are not JSON"))
    if not isinstance(record, dict):
        return RecordCheck(RecordProblem("stored", "stored bytes are not a JSON object"))
    envelope = {"seq": row.seq, "type": row.type, "prev_hash": row.prev_hash, "hash": row.hash}
    for name, value in envelope.items():
        if record.get(name) != value:
            why = f"record's own {name!r} is {record.get(name)!r}, not the row's"
            return RecordCheck(RecordProblem("stored", why))
    return check_record(table, record, head, key)


def walk(
    table: str,
    state: ChainState,
    rows: Sequence[StoredRow],
    *,
    key: bytes | None = None,
) -> Walk:
    """Advance ``state`` over ``rows`` as far as they verify, to the first gap or break. The head's
    row is read again so a second row for its ``seq`` is seen however the rows are paged."""
    if state.broken_at is not None:
        return Walk(state)
    seq, head = state.verified_seq, state.head_hash
    checked = withheld = anchors = 0
    broke: ChainBreak | None = None
    gap = False
    seen_head = False  # the head's own row, when the rows start with it (they should)
    for row in rows:
        if row.seq < seq or (row.seq == seq == 0):
            continue
        if row.seq == seq:
            if seen_head or row.hash != head:
                broke = ChainBreak(table, row.seq, f"a second, different record for seq {seq}")
                break
            seen_head = True
            continue
        if row.seq != seq + 1:
            gap = True
            break
        check = _row_problem(table, row, head, key)
        if check.problem is not None:
            broke = ChainBreak(table, row.seq, check.problem.reason)
            break
        checked += 1
        withheld += check.withheld
        anchors += check.anchor
        seq, head, seen_head = row.seq, row.hash, True
    new = ChainState(seq, head if seq else None)
    if broke is not None:
        new = replace(new, broken_at=broke.seq, broken_reason=broke.reason)
    return Walk(new, checked, withheld, anchors, broke, gap)


# --- gaps -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Gap:
    """Missing ``seq`` range ``from_seq..to_seq`` of a table, open since ``since``."""

    table: str
    from_seq: int
    to_seq: int
    since: datetime
    requested_at: datetime | None = None
    requests: int = 0

    @property
    def size(self) -> int:
        return self.to_seq - self.from_seq + 1


@dataclass(frozen=True)
class GapChange:
    """The gaps of a table after a walk: what is open, what was filled, what is new."""

    open: list[Gap] = field(default_factory=list)
    filled: list[Gap] = field(default_factory=list)
    opened: list[Gap] = field(default_factory=list)


def find_gaps(after: int, seqs: Sequence[int]) -> list[tuple[int, int]]:
    """The missing ranges between ``after`` (verified) and the stored ``seqs`` (ascending)."""
    out: list[tuple[int, int]] = []
    last = after
    for seq in seqs:
        if seq > last + 1:
            out.append((last + 1, seq - 1))
        last = max(last, seq)
    return out


def reconcile_gaps(
    table: str, old: Sequence[Gap], ranges: Sequence[tuple[int, int]], now: datetime
) -> GapChange:
    """The table's open gaps now: ``ranges`` found by this walk, carrying over what is known of
    the old gaps they overlap (open since, resend requests), so a gap that a partial resend
    shrank is the same gap and not a new one."""
    change = GapChange()
    for first, last in ranges:
        overlapping = [g for g in old if g.from_seq <= last and first <= g.to_seq]
        if not overlapping:
            gap = Gap(table, first, last, now)
            change.opened.append(gap)
        else:
            asked = [g.requested_at for g in overlapping if g.requested_at is not None]
            gap = Gap(
                table,
                first,
                last,
                min(g.since for g in overlapping),
                max(asked) if asked else None,
                max(g.requests for g in overlapping),
            )
        change.open.append(gap)
    for gap in old:
        if not any(gap.from_seq <= last and first <= gap.to_seq for first, last in ranges):
            change.filled.append(gap)
    return change


def resends_due(gaps: Sequence[Gap], now: datetime, timeout: timedelta) -> list[Gap]:
    """Gaps to ask the table for now: open for ``timeout`` (records may just be reordered), and
    not asked within the backoff (``timeout`` × 2^requests, at most 8 × ``timeout`` and
    :data:`BACKOFF_CAP`)."""
    cap = min(BACKOFF_CAP, 8 * timeout)
    due = []
    for gap in gaps:
        if now - gap.since < timeout:
            continue
        if gap.requested_at is not None:
            wait = min(timeout * (2 ** min(gap.requests, 16)), max(cap, timeout))
            if now - gap.requested_at < wait:
                continue
        due.append(gap)
    return due


def plan_resends(
    due: Sequence[Gap], limit: int, chunk: int = MAX_RESEND
) -> tuple[list[tuple[int, int]], list[Gap]]:
    """The ``cmd/resend`` requests for the ``due`` gaps of one table, oldest first, and the gaps
    they ask for: at most ``limit`` requests of ``chunk`` records, whatever a gap's size (2**63)."""
    requests: list[tuple[int, int]] = []
    asked: list[Gap] = []
    for gap in sorted(due, key=lambda g: g.from_seq):
        if len(requests) >= limit:
            break
        asked.append(gap)
        first = gap.from_seq
        while first <= gap.to_seq and len(requests) < limit:
            last = min(gap.to_seq, first + chunk - 1)
            requests.append((first, last))
            first = last + 1
    return requests, asked
