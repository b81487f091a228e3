"""A hand as the outcomes name it: words for people and logs; the value (:mod:`.value`) settles."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from tablectl.controller.games.cards.poker.value import HandValue

_NAMES: Final = {
    2: ("two", "twos"),
    3: ("three", "threes"),
    4: ("four", "fours"),
    5: ("five", "fives"),
    6: ("six", "sixes"),
    7: ("seven", "sevens"),
    8: ("eight", "eights"),
    9: ("nine", "nines"),
    10: ("ten", "tens"),
    11: ("jack", "jacks"),
    12: ("queen", "queens"),
    13: ("king", "kings"),
    14: ("ace", "aces"),
}


def _one(rank: int) -> str:
    return _NAMES[rank][0]


def _many(rank: int) -> str:
    return _NAMES[rank][1]


def describe(hand: HandValue) -> str:
    """E.g. ``"full house, kings over fives"``; ``"mini royal"`` per seed 001 L540–548. Kickers are
    left out: the description names the combination, the value settles."""
    name = hand.category.name
    r = hand.ranks
    if name == "STRAIGHT_FLUSH":
        if hand.is_royal:
            return "mini royal" if hand.ranking == "three_card" else "royal flush"
        return f"straight flush, {_one(r[0])} high"
    if name == "FIVE_OF_A_KIND":
        return f"five of a kind, {_many(r[0])}"
    if name == "FOUR_OF_A_KIND":
        return f"four of a kind, {_many(r[0])}"
    if name == "FULL_HOUSE":
        return f"full house, {_many(r[0])} over {_many(r[1])}"
    if name == "FLUSH":
        return f"flush, {_one(r[0])} high"
    if name == "STRAIGHT":
        return f"straight, {_one(r[0])} high"
    if name == "THREE_OF_A_KIND":
        return f"three of a kind, {_many(r[0])}"
    if name == "TWO_PAIR":
        return f"two pair, {_many(r[0])} and {_many(r[1])}"
    if name == "PAIR":
        return f"pair of {_many(r[0])}"
    return f"{_one(r[0])} high"


def summary(hand: HandValue) -> dict[str, object]:
    """A hand as the outcomes publish it: ``{"hand": "two pair, kings and fives",
    "category": "two_pair", "best": ["KH", "KD", "5S", "5C", "9H"]}`` (UTH §14: the cards that
    form the combination)."""
    return {
        "hand": describe(hand),
        "category": hand.category.name.lower(),
        "best": [card.code for card in hand.cards],
    }
