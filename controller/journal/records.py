"""Journal records: the canonical JSON, the hash chain, and what a caller may append.

``hash`` = sha256 over ``prev_hash`` + the record's canonical JSON: an edit, deletion or reordering
breaks a link that ``tablectl verify`` names, and consumers check the published payloads
themselves (the same canonical JSON). Pure.
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

    The envelope (``seq``, ``ts``, ``type``, hashes) is checked once where the record leaves the
    journal (:func:`stored_record`); the rest differs per type, so it stays a read-only mapping of
    the whole hashed object, exactly as stored and published.
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
    """``fields``, the record chained as ``seq``, as a :class:`JournalRecord` (a bad envelope is a
    ``ChainBrokenError``)."""
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
    """A stored body as a :class:`JournalRecord`."""
    return stored_record(loads_record(body, seq), seq)


def canonical_json(obj: Mapping[str, Any]) -> str:
    """The one serialization that is hashed, stored and published: reproducible byte for byte, UTF-8
    as published, no NaN/Infinity (not JSON)."""
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
    """A stored body (the record's canonical JSON) as the record."""
    try:
        obj = json.loads(body)
    except (TypeError, ValueError) as exc:
        raise ChainBrokenError(seq, f"body is not JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ChainBrokenError(seq, "body is not a JSON object")
    return obj


def prepare_record(raw: Mapping[str, Any], table_id: str) -> dict[str, Any]:
    """A caller's record, checked (``ValueError``) and stamped with ``schema`` and ``table``."""
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
    """Link ``rec`` after ``prev_hash`` as ``seq`` in place and return its row.

    ``auth`` (with a ``key``) is the MAC an anchor over this record would carry, so whoever holds
    the key (the floor's archive) refuses a forged record on arrival, not only at the next anchor.
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
