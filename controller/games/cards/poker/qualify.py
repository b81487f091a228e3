"""Whether a hand qualifies: the dealer's minimum, a bonus or a side bet's lowest paying hand."""

from __future__ import annotations

from typing import Final, Literal

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.cards.poker.value import HandCategory, HandValue, ThreeCardCategory

Minimum = Literal[
    "ace_king",
    "queen_high",
    "pair",
    "pair_of_twos",
    "pair_of_fours",
    "pair_of_jacks",
    "pair_of_aces",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
]

_THREE_BY_NAME: Final = {c.name: c for c in ThreeCardCategory}

#: The lowest qualifying hand for each minimum, as (category name, rank prefix): a hand qualifies
#: when (category, ranks) >= that. Which game uses which is in ``docs/poker.md``:
#: ``pair_of_twos`` — UTH dealer (UTH-H2 §12; §17 "two pairs" is C/§14 item 1, so ``two_pair``
#: is the alternative), Texas Hold'em vs dealer L645, Poker with Joker L485;
#: ``queen_high`` — 3 Card Poker dealer (TCP §10, seed 001 L527);
#: ``ace_king`` — Bombay Poker (BMP §18), Card Poker L318–320/L374/L426, Caribbean Stud L741;
#: ``pair_of_fours`` — Casino Hold'em dealer (L587); ``pair_of_jacks`` — Side Bet City 5-card
#: hand pays from "Pair JJ–AA" (L3481–3491); ``pair_of_aces`` — Casino Hold'em Bonus (L589–615);
#: ``three_of_a_kind`` — Trips (UTH §20, L668–677), 6 card / 5+1 bonuses, Bombay insurance (§11);
#: ``straight`` — UTH Blind pays from a straight (§19).
MINIMUMS: Final[dict[str, tuple[str, tuple[int, ...]]]] = {
    "ace_king": ("HIGH_CARD", (14, 13)),
    "queen_high": ("HIGH_CARD", (12,)),
    "pair": ("PAIR", ()),
    "pair_of_twos": ("PAIR", (2,)),
    "pair_of_fours": ("PAIR", (4,)),
    "pair_of_jacks": ("PAIR", (11,)),
    "pair_of_aces": ("PAIR", (14,)),
    "two_pair": ("TWO_PAIR", ()),
    "three_of_a_kind": ("THREE_OF_A_KIND", ()),
    "straight": ("STRAIGHT", ()),
    "flush": ("FLUSH", ()),
}


def qualifies(hand: HandValue, minimum: Minimum | str) -> bool:
    """At least ``minimum`` in the hand's own ranking: in 3-card play ``"straight"`` excludes a
    flush (TCP §17). Natural or joker-made never matters."""
    try:
        name, prefix = MINIMUMS[minimum]
    except KeyError:
        raise RuleError(f"unknown minimum {minimum!r}; known: {sorted(MINIMUMS)}") from None
    if isinstance(hand.category, ThreeCardCategory):
        if name not in _THREE_BY_NAME:
            raise RuleError(f"minimum {minimum!r} does not exist in the 3-card ranking")
        floor = int(_THREE_BY_NAME[name])
    else:
        floor = int(HandCategory[name])
    return (int(hand.category), hand.ranks) >= (floor, prefix)
