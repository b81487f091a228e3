"""The blackjack engine: the shared shoe-game lifecycle
(:class:`~tablectl.controller.engines.baccarat.CardEngine`) around the pure round model
:class:`~tablectl.controller.games.cards.blackjack.BlackjackRound`.

Which boxes play: the ``bets_closed`` event's ``boxes`` (when the event carries them), else every
box of ``[rules] boxes`` (seed-000 BJ-B4: only boxes with a bet before the deal take part).
Decisions arrive as ``decision`` events (box, action, hand) from the dealer's screen; refused ones
are verdicts (``double_not_allowed``, ``split_not_allowed``, ``insurance_not_allowed``, …). The
round settles right after the last card the rules call for (dealer to 17, or nothing when no live
hand is left, seed-002-004 BJ 4.4), or, with an ace up and a scanned hole card, once the insurance
window is over and the dealer has blackjack (BJ 3.7).

Hole card (``hole_card = "scanned"``): recorded when dealt, never in the snapshot, a verdict or a
void's result; only the settled outcome carries it (seed-002-004 A.2.5, seed-000 L79). Cards dealt
with no round are each carried to the next round (seed-000 BJ-I1: "all cards are played").
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final, cast, get_args

from tablectl.controller.config import validate_section
from tablectl.controller.core.events import BetsClosed, Decision
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.blackjack import Action, BlackjackRound, BlackjackRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

__all__ = ["DECISION_NOT_BLACKJACK", "BlackjackEngine", "BlackjackModel"]

DECISION_NOT_BLACKJACK: Final = "decision_not_blackjack"
"""A poker decision (``fold``, ``exchange`` …) sent to a blackjack table."""


class BlackjackModel:
    """Adapts :class:`BlackjackRound` to the engine's round-model protocol."""

    def __init__(self, rules: BlackjackRules, bets_closed: BetsClosed | None) -> None:
        boxes = bets_closed.boxes if bets_closed is not None else None
        if boxes:
            chosen = sorted({b for b in boxes if 1 <= b <= rules.boxes})
        else:
            chosen = list(range(1, rules.boxes + 1))
        self._round = BlackjackRound(rules, chosen)

    @property
    def round(self) -> BlackjackRound:
        return self._round

    def expects_card(self) -> bool:
        return self._round.expects_card()

    def place(self, card: Card) -> Finding | None:
        return self._round.place(card)

    def next_hidden(self) -> bool:
        return self._round.next_hidden()

    def decide(self, decision: Decision) -> Finding | None:
        action = decision.action
        if action not in get_args(Action):
            return Finding(
                DECISION_NOT_BLACKJACK, "seed-000 §2.5", f"{action!r} is not a blackjack decision"
            )
        return self._round.decide(decision.box, cast(Action, action), decision.hand)

    def confirm(self) -> bool:
        return self._round.confirm()

    def complete(self) -> bool:
        return self._round.complete()

    def result(self) -> dict[str, Any]:
        return self._round.result()

    def public(self) -> dict[str, Any]:
        return self._round.public()


class BlackjackEngine(CardEngine):
    """A blackjack table (seed-000 §2, seed-001 §3.4, seed-002-004 A.2)."""

    def __init__(
        self, table_id: str, rules: BlackjackRules | None = None, *, next_round: int = 1
    ) -> None:
        self._rules = rules if rules is not None else BlackjackRules()
        super().__init__(
            table_id,
            "blackjack",
            self._rules,
            # A partial, not a closure: the engine is pickled into recovery checkpoints.
            functools.partial(BlackjackModel, self._rules),
            no_bets_deal=False,
            decisions=True,
            next_round=next_round,
        )

    @classmethod
    def from_rules(
        cls, table_id: str, rules: Mapping[str, Any], *, source: str, next_round: int = 1
    ) -> BlackjackEngine:
        """Build from a raw ``[rules]`` mapping (raises ConfigError naming key and file)."""
        parsed = validate_section(BlackjackRules, rules, source=source, section="rules")
        return cls(table_id, parsed, next_round=next_round)

    @property
    def rules(self) -> BlackjackRules:
        return self._rules
