"""What an engine concludes: a round's :class:`Outcome` (settled or void) or a :class:`Verdict`.

Both are values. An irregularity never propagates as an exception: it becomes a verdict with a
stable code (listed in ``docs/verdicts.md``) that is journaled and published, and, when it ends the
round, a void outcome with that code as its ``reason``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SCHEMA = 1


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """A round's end. ``reason`` is a stable code when ``status == "void"``, else ``None``."""

    table: str
    game: str
    round: str
    status: Literal["settled", "void"]
    reason: str | None = None
    result: dict[str, Any] | None = None
    ts: str | None = None
    dealer: str | None = None
    """The dealer on duty when the round opened (docs/station.md); left out when none was."""

    def to_payload(self) -> dict[str, Any]:
        """The outcome payload (contracts §4.3) less ``seq``/``hash``/``prev_hash`` (journal's)."""
        payload = {
            "schema": SCHEMA,
            "table": self.table,
            "game": self.game,
            "round": self.round,
            "ts": self.ts,
            "status": self.status,
            "reason": self.reason,
            "result": self.result,
        }
        if self.dealer is not None:
            payload["dealer"] = self.dealer
        return payload


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """An irregularity that does not by itself end the round (or an event refused outright).

    ``code`` is stable (documented); ``rule`` names the rule-book id it comes from, if any.
    """

    code: str
    message: str
    round: str | None = None
    rule: str | None = None
    ts: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_payload(self) -> dict[str, Any]:
        """JSON form as journaled and published (under ``type: "verdict"``)."""
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.round is not None:
            out["round"] = self.round
        if self.rule is not None:
            out["rule"] = self.rule
        if self.ts is not None:
            out["ts"] = self.ts
        if self.data:
            out["data"] = self.data
        return out


@dataclass(frozen=True, kw_only=True)
class ShoeReport:
    """A shoe's end, reconciled: the cards read against the shuffler's count (R6, R10).

    ``reconciled`` is ``None`` when the shoe was not seen from its start (a stream that began
    mid-shoe) and nothing can be said; otherwise whether every card was read exactly once.
    """

    cards_read: int
    expected: int
    shuffler_count: int | None = None
    reconciled: bool | None = None
    rounds: int = 0
    ts: str | None = None

    def to_payload(self) -> dict[str, Any]:
        """JSON form as journaled and published (under ``type: "shoe_end"``)."""
        return {
            "cards_read": self.cards_read,
            "expected": self.expected,
            "shuffler_count": self.shuffler_count,
            "reconciled": self.reconciled,
            "rounds": self.rounds,
            "ts": self.ts,
        }


EngineOutput = Outcome | Verdict | ShoeReport
