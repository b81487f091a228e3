"""Caribbean Stud (seed 001 §3.17, L714–773): five cards each, the dealer's down but one (L718); he
qualifies with ace-king (L741). Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import pydantic

from tablectl.controller.core.events import DealError
from tablectl.controller.games.cards.deal import BOXES, Deal, DealScript, Remedy, Step
from tablectl.controller.games.cards.poker import (
    HandCategory,
    HandValue,
    evaluate5,
    qualifies,
)
from tablectl.controller.games.cards.stud.base import (
    DEALER,
    StudGame,
    StudRules,
    paytable_line,
    six_card_bonus,
)
from tablectl.drivers.cards import Card


class CaribbeanStudRules(StudRules):
    """Caribbean Stud ``[rules]``: one box by default (the online single hand, L718 "each of those
    sitting": more are configurable); the 5+1 bonus of a folded box is settled, as seed 001's
    other side bets (L531; Casino Hold'em "does not affect the 'Bonus'", §3.14) — a GAP."""

    boxes: int = pydantic.Field(default=1, ge=1, le=9)


_UP_CARD: Final = 5
"""Which of the dealer's cards is face up. L718 says only "one of the dealer's cards": we take
the last one dealt (the usual Caribbean Stud procedure), documented in docs/games/stud.md."""


def _caribbean_script() -> DealScript:
    """L718: five rounds of one card to each box, then the dealer (L295's "clockwise … including
    him"); the dealer's fifth card is the face-up one."""
    steps: list[Step] = []
    for n in range(1, 6):
        steps.append(Step(to=(BOXES,), count=1, face="up"))
        steps.append(Step(to=(DEALER,), count=1, face="up" if n == _UP_CARD else "down"))
    return DealScript(tuple(steps), "every_round")


class CaribbeanStud(StudGame):
    """Caribbean Stud: ``call_hand`` (L745–758, ``None`` below ace-king or folded) and
    ``five_plus_one`` (best 5 with the dealer's up card, a bonus from three of a kind, L739,
    L760–769)."""

    name = "caribbean_stud"
    rules_model = CaribbeanStudRules
    script = _caribbean_script()
    hand_size = 5
    minimum = "ace_king"  # L741 "at least an Ace and a King"
    raise_name = "call"
    deal_error_rule = "seed-001 L773"

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """A box card reported exposed is no irregularity: box cards are dealt face up (L718);
        anything else is L773's technical bug (void, bets returned)."""
        position = error.position or ""
        if error.kind == "card_exposed" and position.startswith("box"):
            return Remedy("note", "seed-001 L718", remedy="box_cards_are_face_up")
        return super().deal_error(deal, error)

    """L773 "Any technical bug cancels the round …" (truncated; C34: a refund)."""

    def evaluate(self, cards: Sequence[Card]) -> HandValue:
        return evaluate5(cards)

    def box_facts(
        self,
        cards: Sequence[Card],
        hand: HandValue,
        dealer_cards: Sequence[Card],
        folded: bool,
        bonuses_lost: bool,
    ) -> dict[str, Any]:
        call_hand = None
        if not folded and qualifies(hand, "ace_king"):
            call_hand = (
                "pair_or_ace_king"
                if hand.category <= HandCategory.PAIR
                else paytable_line(hand, "royal_flush")
            )
        five_plus_one: dict[str, Any] | None = None
        if not bonuses_lost:
            five_plus_one = six_card_bonus([*cards, dealer_cards[_UP_CARD - 1]])
        return {"call_hand": call_hand, "five_plus_one": five_plus_one}

    def dealer_facts(self, dealer_cards: Sequence[Card]) -> dict[str, Any]:
        return {"up_card": dealer_cards[_UP_CARD - 1].code}
