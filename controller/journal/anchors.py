"""Keyed anchors: an HMAC over the journal's chain head, journaled and published off the machine.

The sha256 chain proves *order*; whoever can write the file can recompute it. A keyed MAC proves
*authorship* while the key is not where the journal is (R13 "secure transaction file", R15 audit
trail). Anchor records, keyed seals and what ``verify --key`` proves: docs/journal.md. Pure.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

ANCHOR: Final = "anchor"
"""The record type of a keyed anchor (written by the journal only)."""

DEFAULT_EVERY: Final = 1000
"""Records between two count-based anchors (``[journal] anchor_every``)."""

DEFAULT_SECONDS: Final = 60.0
"""Seconds an unanchored record waits at most for a time-based anchor (``anchor_seconds``)."""

_PURPOSE: Final = "tablectl-journal-head"

WITHHELD_AUTH: Final = "withheld_auth"
"""The field of a record published withheld (a card dealt face down) that authenticates what was
published: its ``auth`` covers the journaled record's ``hash``, which covers the face, so the
published body itself is covered by nothing else (:func:`withheld_mac`)."""

_WITHHELD_PURPOSE: Final = "tablectl-withheld"
"""Domain separation: a MAC made with this key for anything else never equals a head MAC."""

_HEX64 = re.compile(r"[0-9a-f]{64}")


def head_mac(key: bytes, table: str, head_seq: int, head_hash: str) -> str:
    """HMAC-SHA256 (hex) of a chain head, over canonical JSON so a verifier in another language
    reproduces it from the record's fields."""
    message = json.dumps(
        {"head_hash": head_hash, "head_seq": head_seq, "purpose": _PURPOSE, "table": table},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def withheld_mac(key: bytes, published: Mapping[str, Any]) -> str:
    """HMAC-SHA256 (hex) of a record as published withheld, :data:`WITHHELD_AUTH` left out: the
    table's key vouches for the body a keyed archive stores, which it cannot re-hash (issue 26:
    a genuine record's ``seq``, ``hash`` and ``auth`` replayed on a made-up face-down card).
    Canonical JSON, as :func:`head_mac`'s, under another purpose."""
    body = {k: v for k, v in published.items() if k != WITHHELD_AUTH}
    message = json.dumps(
        {"purpose": _WITHHELD_PURPOSE, "record": body},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).hexdigest()


def withheld_matches(key: bytes, published: Mapping[str, Any]) -> bool:
    """Whether a record published withheld carries :func:`withheld_mac` of itself (constant
    time)."""
    mac = published.get(WITHHELD_AUTH)
    return isinstance(mac, str) and hmac.compare_digest(mac, withheld_mac(key, published))


def anchor_problem(record: Mapping[str, Any]) -> str | None:
    """What is wrong with a stored anchor's own fields, or ``None`` (no key needed; the chained
    fields are the chain walk's to check)."""
    seq, prev = record.get("seq"), record.get("prev_hash")
    head_seq, mac = record.get("head_seq"), record.get("mac")
    if type(seq) is not int or type(head_seq) is not int or head_seq != seq - 1:
        return f"anchor names head seq {head_seq!r}, not the record before it"
    if record.get("head_hash") != prev:
        return f"anchor names a head hash that is not seq {head_seq}'s (chain recomputed?)"
    if not isinstance(mac, str) or not _HEX64.fullmatch(mac):
        return "anchor mac is not 64 hex digits"
    return None


def mac_matches(key: bytes, mac: object, table: object, head_seq: int, head_hash: str) -> bool:
    """Whether ``mac`` is :func:`head_mac` of that head under ``key`` (constant time)."""
    if not isinstance(mac, str) or not isinstance(table, str):
        return False
    return hmac.compare_digest(mac, head_mac(key, table, head_seq, head_hash))


@dataclass(frozen=True)
class KeyedAnchors:
    """The journal's keyed-evidence settings: the key (``[journal] key_file``), an anchor every
    ``every`` records, and once the oldest unanchored record is ``seconds`` old."""

    key: bytes = field(repr=False)
    every: int = DEFAULT_EVERY
    seconds: float = DEFAULT_SECONDS

    def __post_init__(self) -> None:
        if self.every < 1 or self.seconds <= 0:
            raise ValueError("anchor every and seconds must be positive")

    def mac(self, table: str, head_seq: int, head_hash: str) -> str:
        """:func:`head_mac` with this key."""
        return head_mac(self.key, table, head_seq, head_hash)

    def record(self, table: str, head_seq: int, head_hash: str, ts: str) -> dict[str, Any]:
        """The anchor record (before the journal stamps it) covering ``head_seq``."""
        return {
            "type": ANCHOR,
            "ts": ts,
            "head_seq": head_seq,
            "head_hash": head_hash,
            "mac": self.mac(table, head_seq, head_hash),
        }
