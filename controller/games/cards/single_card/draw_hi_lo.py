"""Draw Hi-Lo (seed-001 §3.25, L1593–1595), a game of
:mod:`tablectl.controller.games.cards.single_card`; the book's text: ``docs/games/single_card.md``.

One deck, K high, A low: guess whether the next card is higher or lower, with an optional Tie Bet at
10:1 (L1595). The "Deal button" is the dealer's, as in Top Card (L1599). A round: the ``base`` card
face up; a decision window (``higher`` or ``lower`` per box; the Tie Bet is the back office's)
closed by ``confirm``; the ``next`` card. Where the book is silent:

- **The deck** [GAP: shuffle not stated]: dealt through (``reshuffle = "shoe"``), as odds "on the
  table for that moment" suggest odds that follow the cards out; reshuffled after 52.
- **"Continue the main game"**: each guess is a round with its own base card; chaining guesses
  is the back office's (the outcome gives both cards).
- **A tie and the Higher/Lower bet** [GAP]: ``direction = "tie"``, no guess is ``right``;
  whether it loses or refunds is the back office's rule.

Pure: no I/O.
"""

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
    """A card's rank, A = 1 … K = 13 (L1595).

    Raises:
        ValueError: a joker.
    """
    if card.is_joker:
        raise RuleError("a joker has no rank in Draw Hi-Lo")
    return _RANKS.index(card.rank) + 1


def hi_lo_direction(base: Card, following: Card) -> Direction:
    """Whether ``following`` is higher, lower or of the same rank as ``base`` (L1595)."""
    a, b = hi_lo_value(base), hi_lo_value(following)
    return "higher" if b > a else "lower" if b < a else "tie"


class DrawHiLoRules(GameRules):
    """The ``[rules]`` of a Draw Hi-Lo table; defaults are seed-001's reading (§3.25).

    "1 deck" (L1595), dealt through: a round takes 2 cards, so the cut card (if the table uses
    one) must leave 2 behind it.
    """

    decks: int = pydantic.Field(default=1, ge=1, le=8)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    boxes: int = pydantic.Field(default=1, ge=1, le=9)
    cut_card_min_behind: int = pydantic.Field(default=2, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"


class DrawHiLo(BaseGame):
    """Draw Hi-Lo (seed-001 §3.25, L1593–1595); see the module docstring.

    ``decision_actions``: ``higher`` and ``lower``, once per playing box, while the window is
    open ("it is necessary to make a decision", L1595). The dealer's ``confirm`` closes it; a box
    that made no guess has none in the outcome.
    """

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
        """The two cards, the ``direction`` of the next from the base (``higher`` | ``lower`` |
        ``tie``: the Tie Bet wins 10:1, L1595) and each box's guess (``right`` when it names the
        direction)."""
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
