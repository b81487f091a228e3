"""Draw Hi-Lo (seed-001 §3.25, L1593–1595); the book's text: ``docs/games/single_card.md``.

One deck, K high, A low: a ``base`` card, a higher/lower window closed by ``confirm``, the
``next`` card; the Tie Bet (10:1) is the back office's (L1595). Gaps: the deck is dealt through,
as odds "on the table for that moment" follow the cards out; each guess is its own round; whether
a tie loses or refunds a guess is the back office's."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    DECISION_REFUSED,
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Slot,
    Step,
)
from tablectl.controller.games.cards.shoe import LastCoup, OnFault
from tablectl.controller.games.cards.single_card.irregularities import DEAL_ERROR_RULE
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

_RANKS: Final = "A23456789TJQK"
"""L1595: "The highest card is K, the lowest – A"; suits do not rank."""

Direction = Literal["higher", "lower", "tie"]


def hi_lo_value(card: Card) -> int:
    """A card's rank, A = 1 … K = 13 (L1595)."""
    if card.is_joker:
        raise RuleError("a joker has no rank in Draw Hi-Lo")
    return _RANKS.index(card.rank) + 1


def hi_lo_direction(base: Card, following: Card) -> Direction:
    """Whether ``following`` is higher, lower or of the same rank as ``base`` (L1595)."""
    a, b = hi_lo_value(base), hi_lo_value(following)
    return "higher" if b > a else "lower" if b < a else "tie"


class DrawHiLoRules(GameRules):
    """One deck (L1595), dealt through: 2 cards a round, so 2 behind a cut card."""

    decks: int = pydantic.Field(default=1, ge=1, le=8)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    boxes: int = pydantic.Field(default=1, ge=1, le=9)
    cut_card_min_behind: int = pydantic.Field(default=2, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"


class DrawHiLo(BaseGame):
    """Draw Hi-Lo: ``higher``/``lower`` once per box (L1595); a box that made no guess has none in
    the outcome."""

    name: ClassVar[str] = "draw_hi_lo"
    script = DealScript((Step(("base",)), Step(("next",), stage=1)), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = DrawHiLoRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"higher", "lower"})
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE
    window_rule: ClassVar[str] = "seed-001 L1595"  # the guess before the next card

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``higher`` or ``lower``: once per box, after the base card and before the next."""
        if not deal.hand("base") or deal.windows_closed:
            return Finding(
                DECISION_REFUSED, "seed-001 L1595", "a guess is made on the base card only"
            )
        if any(d.box == decision.box for d in deal.decisions):
            return Finding(DECISION_REFUSED, "seed-001 L1595", f"box {decision.box} guessed")
        return []

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The two cards, the ``direction`` (a tie wins the Tie Bet 10:1, L1595) and each box's
        guess."""
        (base,) = deal.hand("base")
        (following,) = deal.hand("next")
        direction = hi_lo_direction(base, following)
        return {
            "base": base.code,
            "next": following.code,
            "direction": direction,
            "tie": direction == "tie",
            "guesses": {
                str(d.box): {"guess": d.action, "right": d.action == direction}
                for d in deal.decisions
            },
        }
