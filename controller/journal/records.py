"""Journal records: the canonical JSON, the hash chain, and what a caller may append.

Why a hash chain: each record carries ``prev_hash`` and ``hash`` = sha256 over ``prev_hash`` +
the canonical JSON of the record without ``hash``. An edit, deletion or reordering of any row
breaks a link that :func:`tablectl.controller.journal.verify.verify_file` names by ``seq``
(``tablectl verify``), and consumers can check the published payloads themselves because they are
the same canonical JSON.

Pure: no I/O, no clock.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.core.errors import ChainBrokenError, JournalRecordError
from tablectl.controller.journal.anchors import ANCHOR, head_mac

SCHEMA = 1
"""The ``schema`` value the journal stamps on every record (contracts §4.3)."""

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first record."""

AUTH: Final = "auth"
"""A keyed journal's per-record MAC (:func:`chain_record`); journal format 1 since issue 26."""

ASSIGNED: Final = ("seq", "prev_hash", "hash", AUTH)
"""Keys only the journal may set: a caller supplying them is a bug, not something to paper over."""

ENVELOPE: Final = frozenset({"schema", "table", "hash", "prev_hash", AUTH})
"""What the journal adds to a record besides ``seq``: not part of a normalized event (replay
refuses it), left out wherever a record is read back as an event or compared by content."""

_UNHASHED: Final = frozenset({"hash", AUTH})

HEX64: Final = re.compile(r"[0-9a-f]{64}")
"""A sha256 (or HMAC-SHA256) in hex, as the journal writes it."""

Row = tuple[int, str, str, str, str, str]
"""An ``INSERT INTO records`` row: ``seq, ts, type, body, prev_hash, hash``."""


@dataclass(frozen=True, slots=True, eq=False)
class JournalRecord(Mapping[str, Any]):
    """One journaled record: the chain's envelope typed, the record's own fields beside it.

    Why a type: records cross the journal, the outbox, the runner, recovery, checkpoints, metrics
    and export. What every one of them relies on — ``seq``, ``ts``, ``type`` and the chain's
    hashes — is checked once, where the record leaves the journal (:func:`stored_record`), and
    read as attributes after that. The rest of a record is what its writer put there (an
    event's card, an outcome's result), different per type, so it stays a mapping: ``fields``
    holds the whole hashed object, envelope included, exactly as stored and published, and the
    record reads as that (read-only) mapping too, equal to a dict with the same items.
    """

    seq: int
    ts: str
    type: str
    prev_hash: str
    hash: str
    fields: Mapping[str, Any]

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def as_dict(self) -> dict[str, Any]:
        """A copy of the whole record, as published (for JSON output and callers that edit)."""
        return dict(self.fields)


def stored_record(fields: dict[str, Any], seq: int) -> JournalRecord:
    """``fields``, the record chained as ``seq``, as a :class:`JournalRecord`.

    Raises:
        ChainBrokenError: its ``seq`` is not ``seq``, or an envelope key is missing or not a
            string (naming ``seq``).
    """
    if fields.get("seq") != seq:
        raise ChainBrokenError(seq, f"record's own 'seq' is {fields.get('seq')!r}")
    for key in ("ts", "type", "prev_hash", "hash"):
        if not isinstance(fields.get(key), str):
            raise ChainBrokenError(seq, f"record's {key!r} is not a string: {fields.get(key)!r}")
    return JournalRecord(
        seq=seq,
        ts=fields["ts"],
        type=fields["type"],
        prev_hash=fields["prev_hash"],
        hash=fields["hash"],
        fields=fields,
    )


def read_record(body: str, seq: int) -> JournalRecord:
    """A stored body as a :class:`JournalRecord` (:func:`loads_record`, then the envelope).

    Raises:
        ChainBrokenError: the body is not a JSON object or its envelope is malformed.
    """
    return stored_record(loads_record(body, seq), seq)


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The one serialization that is hashed, stored and published.

    Sorted keys and no whitespace make it reproducible byte for byte; ``ensure_ascii=False``
    keeps it UTF-8 as published; NaN/Infinity are refused because they are not JSON.
    """
    if not isinstance(obj, dict):  # a JournalRecord or another mapping: json encodes dicts
        obj = dict(obj)
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def record_hash(prev_hash: str, record: Mapping[str, Any]) -> str:
    """sha256 hex of ``prev_hash`` + canonical JSON of ``record`` without its ``hash`` and
    ``auth`` keys (``auth`` is a MAC over the hash: it cannot be inside it)."""
    unhashed = {k: v for k, v in record.items() if k not in _UNHASHED}
    return hashlib.sha256((prev_hash + canonical_json(unhashed)).encode("utf-8")).hexdigest()


def loads_record(body: str, seq: int) -> dict[str, Any]:
    """A stored body (the record's canonical JSON) as the record.

    Raises:
        ChainBrokenError: the body is not a JSON object (naming ``seq``).
    """
    try:
        obj = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise ChainBrokenError(seq, f"body is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ChainBrokenError(seq, "body is not a JSON object")
    return obj


def prepare_record(raw: Mapping[str, Any], table_id: str) -> dict[str, Any]:
    """A caller's record, checked and stamped with ``schema`` and ``table`` (not yet chained).

    Raises:
        ValueError: it lacks ``type``/``ts``, sets a journal-assigned key, is an ``anchor``, or
            names another table or schema.
    """
    for key in ASSIGNED:
        if key in raw:
            raise JournalRecordError(f"record key {key!r} is assigned by the journal")
    kind, ts = raw.get("type"), raw.get("ts")
    if not isinstance(kind, str) or not kind:
        raise JournalRecordError(f"record needs a non-empty string 'type', got {kind!r}")
    if kind == ANCHOR:
        raise JournalRecordError("anchor records are written by the journal itself")
    if not isinstance(ts, str) or not ts:
        raise JournalRecordError(f"{kind} record needs an ISO string 'ts', got {ts!r}")
    if raw.get("table", table_id) != table_id:
        raise JournalRecordError(f"{kind} record names table {raw['table']!r}, not {table_id!r}")
    if raw.get("schema", SCHEMA) != SCHEMA:
        raise JournalRecordError(f"{kind} record has schema {raw['schema']!r}, not {SCHEMA}")
    return {**raw, "schema": SCHEMA, "table": table_id}


def chain_record(rec: dict[str, Any], seq: int, prev_hash: str, key: bytes | None = None) -> Row:
    """Link ``rec`` after ``prev_hash`` as ``seq`` (sets ``seq``, ``prev_hash``, ``hash`` in place,
    and ``auth`` with a ``key``) and return its row.

    ``auth`` makes each record's authorship checkable on its own, not only at the next anchor:
    :func:`~tablectl.controller.journal.anchors.head_mac` of the record as a chain head (its
    table, ``seq`` and ``hash``), so whoever holds the key (the floor's archive) refuses a forged
    record on arrival. It is the same MAC an anchor over this record would carry.

    Raises:
        ValueError: ``rec`` is not JSON-serializable (the hash's encoding is the check).
    """
    rec["seq"] = seq
    rec["prev_hash"] = prev_hash
    try:
        rec["hash"] = digest = record_hash(prev_hash, rec)
    except (TypeError, ValueError) as exc:
        raise JournalRecordError(f"{rec['type']} record is not JSON-serializable: {exc}") from None
    if key is not None:
        rec[AUTH] = head_mac(key, rec["table"], seq, digest)
    return (seq, rec["ts"], rec["type"], canonical_json(rec), prev_hash, digest)
