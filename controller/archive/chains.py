"""Per-table verification in the archive: links, body hashes, anchors, gaps (pure).

Why per table and over the *stored* rows: several archivers share the work (MQTT shared
subscriptions), so no archiver sees all of a table's records, nor in order. Storage is
idempotent; verification reads back what is stored, in ``seq`` order, from where the table's
chain was last verified (``archive_tables.verified_seq`` / ``verified_hash``), and advances as far
as the chain is contiguous. Everything here is a pure function of those rows; the SQL is
:mod:`tablectl.controller.archive.verifier`'s.

What is checked for each row after the verified head (the journal's own rules, with its code:
:func:`~tablectl.controller.journal.records.record_hash`, :data:`GENESIS_HASH`,
:func:`~tablectl.controller.journal.anchors.anchor_problem` and ``mac_matches``):

* **the link**: ``seq`` is the head's + 1 and ``prev_hash`` is the head's ``hash`` (the genesis
  hash for ``seq`` 1);
* **the body**: ``hash`` is sha256 over ``prev_hash`` + the canonical JSON of the record as
  published — except a **withheld** record (a card dealt face down, published ``"card": null,
  "withheld": true`` while ``hash`` covers the journaled card, docs/mqtt.md): its body cannot be
  re-hashed here, so only its link is checked (the next record's ``prev_hash`` must still be its
  ``hash``; a keyed anchor after it authenticates that hash; the table's journal has the body);
* **the envelope**: the record's own ``table``, ``seq``, ``prev_hash``, ``hash`` are the row's;
* **anchors**: an ``anchor`` names the record before it and, with the table's key
  (``[journal] key_file``'s copy), carries the HMAC of that head;
* **one record per seq**: a second, different record for a ``seq`` is a break.

A break stops the walk at that ``seq`` (nothing after it is vouched for) and is kept until an
operator deals with it (docs/fleet.md). A missing ``seq`` stops it too, as a **gap**: a range
that may still arrive (shared subscriptions reorder; a resend fills it).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, Final

from tablectl.controller.journal.anchors import ANCHOR, anchor_problem, mac_matches
from tablectl.controller.journal.records import GENESIS_HASH, record_hash

__all__ = [
    "BACKOFF_CAP",
    "ChainBreak",
    "ChainState",
    "Gap",
    "GapChange",
    "StoredRow",
    "Walk",
    "find_gaps",
    "is_withheld",
    "reconcile_gaps",
    "resends_due",
    "walk",
]

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
    """Whether the table published this record without part of what its hash covers."""
    return record.get("withheld") is True


def _row_problem(
    table: str, row: StoredRow, head: str, key: bytes | None
) -> tuple[str | None, bool]:
    """``(what is wrong with row, withheld)``; ``None`` when it verifies after ``head``."""
    if row.prev_hash != head:
        return f"prev_hash {row.prev_hash[:12]}… does not link to seq {row.seq - 1}", False
    try:
        record = json.loads(row.raw)
    except (ValueError, UnicodeDecodeError):
        return "stored bytes are not JSON", False
    if not isinstance(record, dict):
        return "stored bytes are not a JSON object", False
    envelope = {"table": table, "seq": row.seq, "prev_hash": row.prev_hash, "hash": row.hash}
    for name, value in envelope.items():
        if record.get(name) != value:
            return f"record's own {name!r} is {record.get(name)!r}, not the row's", False
    withheld = is_withheld(record)
    if not withheld:
        try:
            digest = record_hash(row.prev_hash, record)
        except (TypeError, ValueError):
            return "record is not canonical JSON", False
        if digest != row.hash:
            return "content does not match its hash", False
    if row.type == ANCHOR:
        problem = anchor_problem(record)
        if problem is not None:
            return problem, withheld
        head_seq = record["head_seq"]
        if key is not None and not mac_matches(key, record["mac"], table, head_seq, head):
            return f"anchor mac does not match head seq {head_seq} under the key", withheld
    return None, withheld


def walk(
    table: str,
    state: ChainState,
    rows: Sequence[StoredRow],
    *,
    key: bytes | None = None,
) -> Walk:
    """Advance ``state`` over ``rows`` (``seq`` order from its head's own row on) as far as
    they verify.

    The head's row is read again so that a second row for the head's ``seq`` (another ``ts``:
    the primary key let it in) is seen however the rows are paged.

    Stops at the first missing ``seq`` (``stopped_at_gap``), or at a break (``broke``; the state
    then records it). A broken state is returned unchanged: nothing after a break is vouched for.
    """
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
        problem, hidden = _row_problem(table, row, head, key)
        if problem is not None:
            broke = ChainBreak(table, row.seq, problem)
            break
        checked += 1
        withheld += hidden
        anchors += row.type == ANCHOR
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
