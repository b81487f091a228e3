"""Red Dog (seed-001 §3.24, L1589–1591); the book's text: ``docs/games/single_card.md``.

Eight decks, two open cards, a bet that the third falls between (L1591); the card reader observes
the dealer's deal (L1599). Consecutive cards push; a pair takes a third card at once, since only
it can make three of a kind (C24; ``pair_third_card = false`` ends on the pair); a spread opens a
Ride/Stand window before the third card (its payout by spread is the back office's [GAP])."""

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

_RANKS: Final = "23456789TJQKA"
"""L1591: "The highest card is A, the lowest – 2"; suits do not rank."""

RED_DOG_ORDER: Final = ("first", "second")
"""The two open cards, in the order they are dealt; the third goes between them (``third``)."""

Kind = Literal["consecutive", "pair", "spread"]


def red_dog_value(card: Card) -> int:
    """A card's rank, 2 = 2 … A = 14 (L1591)."""
    if card.is_joker:
        raise RuleError("a joker has no rank in Red Dog")
    return _RANKS.index(card.rank) + 2


def red_dog_kind(first: Card, second: Card) -> tuple[Kind, int | None]:
    """What the two open cards are (L1591), and the spread: the ranks strictly between them
    (0 for consecutive cards, ``None`` for a pair)."""
    gap = abs(red_dog_value(first) - red_dog_value(second))
    if gap == 0:
        return "pair", None
    if gap == 1:
        return "consecutive", 0
    return "spread", gap - 1


class RedDogRules(GameRules):
    """Eight decks (L1591); a round takes at most 3 cards, so 3 behind the cut card (derived, as Top
    Card's 7)."""

    decks: int = pydantic.Field(default=8, ge=1, le=16)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    boxes: int = pydantic.Field(default=1, ge=1, le=9)
    cut_card_min_behind: int = pydantic.Field(default=3, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"
    pair_third_card: bool = True
    """A pair draws the third card (three of a kind pays 11:1); ``false``: refunded at once
    (C24's first sentence)."""


class RedDog(BaseGame):
    """Red Dog; the dealer's ``confirm`` closes the window whether or not every box decided: a box
    that did not press Ride stands (the Ride is the player's act)."""

    name: ClassVar[str] = "red_dog"
    script = DealScript((Step(RED_DOG_ORDER),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = RedDogRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"ride", "stand"})
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE
    window_rule: ClassVar[str] = "seed-001 L1591"  # Ride or Stand before the third card
    rules: RedDogRules

    @staticmethod
    def _open(deal: Deal) -> tuple[Card, Card] | None:
        first, second = deal.hand("first"), deal.hand("second")
        return (first[0], second[0]) if first and second else None

    def more(self, deal: Deal) -> list[Slot]:
        """The third card, by what the open cards are: none for consecutive cards, at once for a
        pair (with ``pair_third_card``), after the Ride/Stand window for a spread."""
        opened = self._open(deal)
        if opened is None or deal.hand("third"):
            return []
        kind, _ = red_dog_kind(*opened)
        if kind == "spread":
            return [Slot("third", stage=1)]
        if kind == "pair" and self.rules.pair_third_card:
            return [Slot("third")]
        return []

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``ride`` or ``stand``: once per box, while a spread's window is open (L1591)."""
        opened = self._open(deal)
        if opened is None or red_dog_kind(*opened)[0] != "spread":
            return Finding(DECISION_REFUSED, "seed-001 L1591", "Ride or Stand only on a spread")
        if deal.windows_closed or deal.hand("third"):
            return Finding(DECISION_REFUSED, "seed-001 L1591", "the third card is already due")
        if any(d.box == decision.box for d in deal.decisions):
            return Finding(DECISION_REFUSED, "seed-001 L1591", f"box {decision.box} decided")
        return []

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The open cards, the third, and what they make (L1591); ``rides``: the boxes that
        doubled."""
        (first,) = deal.hand("first")
        (second,) = deal.hand("second")
        kind, spread = red_dog_kind(first, second)
        third = deal.hand("third")
        result: str = "push"
        if third and kind == "pair":
            result = "three_of_a_kind" if third[0].rank == first.rank else "push"
        elif third:
            low, high = sorted((red_dog_value(first), red_dog_value(second)))
            result = "win" if low < red_dog_value(third[0]) < high else "lose"
        return {
            "first": first.code,
            "second": second.code,
            "third": third[0].code if third else None,
            "kind": kind,
            "spread": spread,
            "result": result,
            "rides": sorted(d.box for d in deal.decisions if d.action == "ride"),
        }
