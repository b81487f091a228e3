"""A journal outage: the table is locked while the journal cannot write (regulatory R14, R18).

An event that cannot be journaled is not acted on (contracts §3). While it lasts device events are
dropped (faults kept, R18) and commands refused; the first write that succeeds journals the void of
the round in play (``journal_outage``, R23) and the outage as a fault (docs/operations.md). Pure.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from tablectl.controller.core.events import Fault, FaultCleared, ShoeRemoved, TableEvent, Void
from tablectl.controller.core.time import parse_ts

JOURNAL_UNAVAILABLE: Final = "journal_unavailable"
"""The fault code: the journal cannot write (disk full, I/O error); the table is locked."""

JOURNAL_OUTAGE: Final = "journal_outage"
"""The void reason of the round that was in play when the journal stopped writing."""

JOURNAL_DEVICE: Final = "journal"
"""The ``device`` of the journal's own fault records (it is not a table device)."""

_KEPT = (Fault, FaultCleared, ShoeRemoved)
"""Device events an outage keeps to journal afterwards: latched faults must persist (R18)."""


@dataclass
class JournalOutage:
    """One outage, from the first failed write to the first successful one (the round in play then
    is voided when writing resumes)."""

    started_ts: str
    error: str
    round: str | None
    dropped: Counter[str] = field(default_factory=Counter)
    """Events not journaled (so not acted on), by type."""
    kept: list[TableEvent] = field(default_factory=list)
    """Device faults and clears that arrived meanwhile, journaled when writing resumes."""
    commands_refused: int = 0

    def drop(self, event: TableEvent) -> None:
        """An event that could not be journaled: count it; keep it if it is a device fault."""
        self.dropped[event.type] += 1
        if isinstance(event, _KEPT):
            self.kept.append(event)

    @property
    def not_journaled(self) -> int:
        return sum(self.dropped.values())

    def alarm(self, table: str, *, cleared_ts: str | None = None) -> dict[str, Any]:
        """The ``alarms`` payload when it is raised (``cleared_ts`` unset) or when it cleared.

        Published directly, not from the journal: the raise cannot be journaled yet.
        """
        return {
            "type": "fault" if cleared_ts is None else "fault_cleared",
            "table": table,
            "device": JOURNAL_DEVICE,
            "code": JOURNAL_UNAVAILABLE,
            "ts": self.started_ts if cleared_ts is None else cleared_ts,
            "since": self.started_ts,
            "detail": self.error,
            "journaled": False,
        }

    def view(self) -> dict[str, Any]:
        """What ``state`` and ``status`` show while it lasts."""
        return {
            "since": self.started_ts,
            "error": self.error,
            "round": self.round,
            "events_not_journaled": self.not_journaled,
            "commands_refused": self.commands_refused,
        }

    def closing_events(self, now_ts: str, *, void_round: bool) -> list[TableEvent]:
        """The events journaled when writing resumes. A round still in play is voided
        ``journal_outage`` first, so the fault that follows does not void it as a device fault."""
        seconds = _seconds(self.started_ts, now_ts)
        detail = (
            f"journal could not write from {self.started_ts} to {now_ts} ({seconds}); "
            f"{self.not_journaled} event(s) not journaled, not acted on: {self.error}"
        )
        events: list[TableEvent] = []
        if void_round:
            events.append(Void(ts=now_ts, reason=JOURNAL_OUTAGE, by="controller"))
        events.append(
            Fault(
                ts=now_ts,
                since=self.started_ts,
                device=JOURNAL_DEVICE,
                code=JOURNAL_UNAVAILABLE,
                detail=detail[:500],
            )
        )
        events.append(
            FaultCleared(
                ts=now_ts, since=self.started_ts, device=JOURNAL_DEVICE, code=JOURNAL_UNAVAILABLE
            )
        )
        return events


def _seconds(start: str, end: str) -> str:
    begun, ended = parse_ts(start), parse_ts(end)
    if begun is None or ended is None:
        return "duration unknown"
    return f"{(ended - begun).total_seconds():.1f} s"
