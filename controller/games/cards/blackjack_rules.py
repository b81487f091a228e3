"""Blackjack's rule book as pure functions: values, the dealer's rule, the deal order, settlement,
and the ``[rules]`` model.

Rule ids: seed-000 §2 (BJ-E1, BJ-E5, §2.3, BJ-V1..V8, BJ-O1..O4, BJ-I1, V-BJ-1..11); seed-001
§3.4 (L189–287, C14); seed-002-004 A.2 (BJ 1.2.1, 2.5, 2.6, 2.7, 3.4, 3.7, 4.4)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.cards.shoe import LastCoup, OnFault, ShoeRules
from tablectl.drivers.cards import Card

Action: TypeAlias = Literal[
    "hit", "stand", "double", "split", "insurance", "even_money", "surrender"
]
HoleCard: TypeAlias = Literal["none", "scanned"]

# Stable verdict codes of refused decisions (docs/verdicts.md, "Blackjack").
DECISION_OUT_OF_TURN: Final = "decision_out_of_turn"
DOUBLE_NOT_ALLOWED: Final = "double_not_allowed"
SPLIT_NOT_ALLOWED: Final = "split_not_allowed"
INSURANCE_NOT_ALLOWED: Final = "insurance_not_allowed"
EVEN_MONEY_NOT_ALLOWED: Final = "even_money_not_allowed"
SURRENDER_NOT_ALLOWED: Final = "surrender_not_allowed"
UNKNOWN_BOX: Final = "unknown_box"
EXTRA_CARD: Final = "extra_card"
DECISION_NOT_BLACKJACK: Final = "decision_not_blackjack"
"""A poker decision (``fold``, ``exchange`` …) sent to a blackjack table."""


class BlackjackRules(ShoeRules):
    """Defaults are seed-000's (European); seed-002-004 tables set ``hole_card = "scanned"``,
    ``max_splits = 1``; seed-001 tables ``decks = 8``, ``surrender_vs_ace = true``."""

    decks: int = pydantic.Field(default=6, ge=1, le=16)
    """seed-000 BJ-E1: six decks unless the table says otherwise."""
    burn: bool = False
    """seed-000 BJ-E5: no burn card in blackjack."""
    cut_card_min_behind: int = pydantic.Field(default=0, ge=0)
    """Not checked by default: seed-000 BJ-E3 says "approximately 52 cards", seed-002-004 BJ 3.3
    "4 decks from the back"; set e.g. 52 to flag a cut card that comes out too deep."""
    last_coup: LastCoup = "current"
    """seed-002-004 BJ 3.2; seed-000 V-BJ-11 and §13 gap 4: finish the round, then shuffle."""
    on_fault: OnFault = "decide"
    """seed-000 BJ-I6 (the deal is finished by hand) and GEN-12: a manager decides."""

    boxes: int = pydantic.Field(default=7, ge=1, le=7)
    """Boxes on the layout (seed-002-004 BJ 1.2.1: at most seven seats)."""
    hole_card: HoleCard = "none"
    """``none``: European (seed-000 §2.3 §9, seed-001 L203); ``scanned``: read and kept secret
    (seed-002-004 BJ 3.4, 3.7, A.2.5)."""
    hit_soft_17: bool = False
    """The dealer stands on every 17 by default (seed-000 BJ §22, seed-001 L209 C14,
    seed-002-004 BJ 4.4)."""
    max_splits: int | None = pydantic.Field(default=4, ge=0)
    """Splits per box: seed-000 BJ-O1 "up to four times" (``None``: unlimited, the promotion);
    seed-002-004 BJ 2.7 "not … more than once" → 1."""
    resplit_aces: bool = False
    """seed-000 BJ-O1: "Aces can only be Split once"."""
    split_aces_one_card: bool = True
    """seed-000 BJ-O1 "only one card can be added to each Split ace" (seed-004: at discretion)."""
    double_after_split: bool = True
    """seed-000 BJ-O2: "It is also possible to Double down on a Split Bet"."""
    surrender: bool = False
    """seed-000 BJ-O4: only where the casino offers it."""
    surrender_vs_ace: bool = False
    """seed-000 §33: not against the dealer's open ace; seed-001 L219: "regardless"."""
    insurance: bool = True
    """seed-000 BJ-O3; ``False`` for Blackjack Turbo (seed-001 L3077–3085): no window, a scanned
    hole card is checked at once."""


def card_value(card: Card) -> int:
    """A = 1 (or 11, see :func:`hand_value`), 2–9 face value, T/J/Q/K = 10 (seed-000 BJ-V1)."""
    if card.is_joker:
        raise RuleError("a joker has no blackjack value")
    if card.rank == "A":
        return 1
    if card.rank in "TJQK":
        return 10
    return int(card.rank)


@dataclass(frozen=True, slots=True)
class HandValue:
    """A hand's best total; ``soft`` when an ace counts 11 in it."""

    total: int
    soft: bool


def hand_value(cards: Sequence[Card]) -> HandValue:
    """The best total ≤ 21 if there is one (an ace counts 11 when that does not bust)."""
    hard = sum(card_value(c) for c in cards)
    if any(c.rank == "A" for c in cards) and hard + 10 <= 21:
        return HandValue(hard + 10, True)
    return HandValue(hard, False)


def is_blackjack(cards: Sequence[Card], *, from_split: bool = False) -> bool:
    """Ace and a ten-value card as the first two cards (seed-000 BJ-V2); never after a split
    (BJ-V3, seed-002-004 BJ 2.7: "21, not Blackjack")."""
    return not from_split and len(cards) == 2 and hand_value(cards).total == 21


def dealer_draws(cards: Sequence[Card], hit_soft_17: bool = False) -> bool:
    """The dealer draws on 16 or less and stands on 17 or more (seed-000 BJ §22, seed-002-004
    BJ 4.4); with ``hit_soft_17`` the dealer also draws on a soft 17."""
    value = hand_value(cards)
    return value.total < 17 or (value.total == 17 and value.soft and hit_soft_17)


def initial_deal_order(boxes: Sequence[int], hole_card: bool) -> list[int | None]:
    """The initial deal, box numbers and ``None`` for the dealer: box1..boxN, dealer up,
    box1..boxN, then the hole card if dealt (seed-000 §2.3 §9, V-BJ-1; seed-002-004 BJ 3.4)."""
    order: list[int | None] = [*boxes, None, *boxes]
    if hole_card:
        order.append(None)
    return order


def settle_hand(
    cards: Sequence[Card], dealer: Sequence[Card], *, from_split: bool = False
) -> Literal["win", "lose", "push", "blackjack"]:
    """One finished hand against the dealer's (seed-000 BJ-V3..V8): bust loses even on a dealer bust
    (BJ-V5, C-A5); a dealer blackjack beats a split 21 (BJ-V3, V6)."""
    mine = hand_value(cards)
    if mine.total > 21:
        return "lose"
    dealer_bj = is_blackjack(dealer)
    if is_blackjack(cards, from_split=from_split):
        return "push" if dealer_bj else "blackjack"
    if dealer_bj:
        return "lose"
    theirs = hand_value(dealer).total
    if theirs > 21 or mine.total > theirs:
        return "win"
    return "push" if mine.total == theirs else "lose"
