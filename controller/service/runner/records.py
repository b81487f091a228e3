"""What the runner journals besides the events' own fields, and how recovery matches it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

import structlog

from tablectl.controller.core.events import TableEvent, event_to_dict
from tablectl.controller.core.outcomes import EngineOutput, Outcome, ShoeReport, Verdict
from tablectl.controller.journal import ENVELOPE, canonical_json

OUTPUT_TYPES: Final = frozenset({"outcome", "verdict", "shoe_end"})
"""The record types of engine conclusions."""

JOURNAL_FIELDS: Final = ENVELOPE | {"seq"}
"""What the journal adds to every record."""

log = structlog.get_logger("tablectl.runner")

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


def log_conclusions(outputs: Iterable[EngineOutput]) -> None:
    """One log line per outcome (info) and verdict (warning) the engine concluded."""
    for output in outputs:
        if isinstance(output, Outcome):
            log.info(
                "round_outcome",
                round=output.round,
                status=output.status,
                reason=output.reason,
                result=output.result,
            )
        elif isinstance(output, Verdict):
            log.warning("verdict", code=output.code, round=output.round, message=output.message)
