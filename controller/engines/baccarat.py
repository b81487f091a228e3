"""The baccarat engine (seed-000 §4, seed-001 §3.1, seed-002-004 A.1): a :class:`CardEngine`
with the baccarat coup model (P1, B1, P2, B2, then the third-card tableau).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from tablectl.controller.config import validate_section
from tablectl.controller.core.events import BetsClosed, Decision
from tablectl.controller.engines.cards import NOT_FOR_THIS_GAME, CardEngine
from tablectl.controller.games.cards.baccarat import BaccaratRules, next_expected, outcome
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card as PlayingCard

__all__ = ["BaccaratCoup", "BaccaratEngine"]


class BaccaratCoup:
    """One baccarat coup: cards go to the hand
    :func:`~tablectl.controller.games.cards.baccarat.next_expected` names (P1, B1, P2, B2, then the
    tableau)."""

    def __init__(self, commission: bool) -> None:
        self._commission = commission
        self._hands: dict[str, list[PlayingCard]] = {"player": [], "banker": []}

    def expects_card(self) -> bool:
        return next_expected(self._hands["player"], self._hands["banker"]) is not None

    def place(self, card: PlayingCard) -> Finding | None:
        hand = next_expected(self._hands["player"], self._hands["banker"])
        assert hand is not None, "place() only when a card is expected"
        self._hands[hand].append(card)
        return None

    def next_hidden(self) -> bool:
        return False  # seed-002-004 BAC 3.4.3: every card face up

    def decide(self, decision: Decision) -> Finding | None:
        return Finding(NOT_FOR_THIS_GAME, "DESIGN §4.4", "baccarat has no player decisions")

    def confirm(self) -> bool:
        return False

    def complete(self) -> bool:
        return not self.expects_card()

    def result(self) -> dict[str, Any]:
        return outcome(self._hands["player"], self._hands["banker"], commission=self._commission)

    def public(self) -> dict[str, Any]:
        return {hand: [c.code for c in cards] for hand, cards in self._hands.items()}


def _new_coup(commission: bool, _bets_closed: BetsClosed | None) -> BaccaratCoup:
    return BaccaratCoup(commission)


class BaccaratEngine(CardEngine):
    """A baccarat table (seed-000 §4, seed-001 §3.1, seed-002-004 A.1)."""

    def __init__(
        self, table_id: str, rules: BaccaratRules | None = None, *, next_round: int = 1
    ) -> None:
        self._rules = rules if rules is not None else BaccaratRules()
        super().__init__(
            table_id,
            "baccarat",
            self._rules,
            # A partial, not a closure: the engine is pickled into recovery checkpoints.
            functools.partial(_new_coup, self._rules.commission),
            next_round=next_round,
        )

    @classmethod
    def from_rules(
        cls, table_id: str, rules: Mapping[str, Any], *, source: str, next_round: int = 1
    ) -> BaccaratEngine:
        """Build from a raw ``[rules]`` mapping (raises ConfigError naming key and file)."""
        parsed = validate_section(BaccaratRules, rules, source=source, section="rules")
        return cls(table_id, parsed, next_round=next_round)

    @property
    def rules(self) -> BaccaratRules:
        return self._rules
