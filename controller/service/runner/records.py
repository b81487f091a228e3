"""What the runner journals besides the events' own fields, and how recovery matches it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tablectl.controller.core.events import TableEvent, event_to_dict
from tablectl.controller.core.outcomes import EngineOutput, Outcome, ShoeReport
from tablectl.controller.journal import canonical_json

__all__ = [
    "JOURNAL_FIELDS",
    "MAX_REASON",
    "OUTPUT_TYPES",
    "clip",
    "event_record",
    "output_key",
    "output_record",
]

OUTPUT_TYPES: Final = frozenset({"outcome", "verdict", "shoe_end"})
"""The record types of engine conclusions."""

JOURNAL_FIELDS: Final = frozenset({"schema", "table", "seq", "hash", "prev_hash"})
"""What the journal adds to every record."""

_MAX_TEXT = 64
MAX_REASON: Final = 300
"""Longest reason or error text journaled or published."""


def output_record(output: EngineOutput, ts: str | None = None) -> dict[str, Any]:
    """The journal record for an engine conclusion; ``ts`` is the deciding event's when unset."""
    if isinstance(output, Outcome):
        record = {**output.to_payload(), "type": "outcome"}
    elif isinstance(output, ShoeReport):
        record = {"type": "shoe_end", **output.to_payload()}
    else:
        record = {"type": "verdict", **output.to_payload()}
    if record.get("ts") is None:
        record["ts"] = ts
    return record


def event_record(event: TableEvent) -> dict[str, Any]:
    """The journal record for an event (the journal numbers it)."""
    record = event_to_dict(event)
    record.pop("seq", None)
    return record


def output_key(record: Mapping[str, Any]) -> str:
    """An output record's content without what the journal adds, for matching in recovery."""
    return canonical_json({k: v for k, v in record.items() if k not in JOURNAL_FIELDS})


def clip(text: str, limit: int = _MAX_TEXT) -> str:
    """Untrusted text made safe to journal and publish: bounded, valid UTF-8 (no surrogates)."""
    clipped = text if len(text) <= limit else text[: limit - 1] + "…"
    return clipped.encode("utf-8", "backslashreplace").decode("utf-8")
