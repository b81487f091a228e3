"""What a poker hand is worth: the categories of the two rankings and :class:`HandValue`.

A value compares as the rule books rank hands, so the games settle with ``<``, ``==`` and
``max()``; how cards become a value is :mod:`.evaluate`.

5-card ranking, low to high (PKH-19, seed 000 §9.3 [L895–907]; seed 001 §3.9 L299–310, §3.12
L461–473): high card, pair, two pair, three of a kind, straight, flush, full house, four of a kind,
straight flush (the ace-high one is *named* royal flush, :attr:`HandValue.is_royal`; it is not a
separate category because it is simply the top straight flush), five of a kind (only with a wild
joker: "Four of a Kind and Joker (Poker)", seed 001 §3.12 L461–473, above the royal flush).

- Suits never rank or break ties (PKH-18).
- Tie-break ranks are the ranks of the combination first, then the kickers high to low ("compare
  the highest cards outside the combination", seed 001 §3.9 L318–320; BMP-H5 §30: "by the higher
  card and then the next"; a full house "is ranked by its three of a kind"). Only the best five
  count: "the remaining two cards are not taken into account" (UTH-H1 §11).
- Card Poker lists "One Pair or lower (Ace and King)" as one paying class (L299–300, C32); the
  evaluator keeps the standard order inside it (any pair beats A-K high), as C32 suggests.

3-card ranking, low to high: high card, pair, flush, straight, three of a kind, straight flush.
"Straight is a higher combination than a flush" (TCP §17); the full order is not stated in seed 000
(§14 item 17) and is read from the seed 001 paytables (Ante Bonus L533–538, "Plus a pair"
L540–548: straight flush 40 > trips 30 > straight 5 > flush 4 > pair 1). A-K-Q suited is the
"Mini Royal" (L540–548; Side Bet City calls it "Royal Flush", L3445–3455), again a named straight
flush.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final, Literal

from tablectl.controller.games.cards.poker.describe import describe
from tablectl.drivers.cards import RANKS, Card

JokerMode = Literal["forbid", "wild"]
ThreeCardRanking = Literal["three_card_poker", "teen_patti"]


class HandCategory(IntEnum):
    """5-card categories; the value order is the ranking order (PKH-19, seed 001 L299–310)."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8
    FIVE_OF_A_KIND = 9


class ThreeCardCategory(IntEnum):
    """3-card categories: a straight beats a flush (TCP §17; seed 001 L533–548)."""

    HIGH_CARD = 0
    PAIR = 1
    FLUSH = 2
    STRAIGHT = 3
    THREE_OF_A_KIND = 4
    STRAIGHT_FLUSH = 5


RANK_VALUES: Final = {rank: (14 if rank == "A" else RANKS.index(rank) + 1) for rank in RANKS}
"""A rank's number in a value's ``ranks``: 2…13, and the ace 14."""
ACE: Final = 14


@dataclass(frozen=True, slots=True, eq=False)
class HandValue:
    """A hand's rank: compare with ``<``/``==``/``max`` to settle; equal means a tie.

    The order is (category, ranks, natural). ``ranks`` are 2…14 (ace 14; the five-high straight
    is ``(5,)``), combination first then kickers. ``cards`` are the cards that make the hand
    (jokers as themselves), kept for the outcome (UTH §14 highlights them) but never compared:
    suits do not break ties (PKH-18). Values of different rankings (5-card, 3-card) do not
    compare: that would be a programming error, so it raises :class:`TypeError`.
    """

    category: HandCategory | ThreeCardCategory
    ranks: tuple[int, ...]
    cards: tuple[Card, ...] = field(default=())
    natural: bool = True

    @property
    def ranking(self) -> str:
        """``"five_card"`` or ``"three_card"``: which ranking the value belongs to."""
        return "three_card" if isinstance(self.category, ThreeCardCategory) else "five_card"

    @property
    def is_royal(self) -> bool:
        """The ace-high straight flush: royal flush (5 cards) or mini royal A-K-Q (3 cards)."""
        return self.category.name == "STRAIGHT_FLUSH" and self.ranks[0] == ACE

    def _key(self) -> tuple[int, tuple[int, ...], bool]:
        return (int(self.category), self.ranks, self.natural)

    def _other(self, other: object) -> HandValue | None:
        if not isinstance(other, HandValue):
            return None
        if type(self.category) is not type(other.category):
            raise TypeError("cannot compare a 3-card hand value with a 5-card one")
        return other

    def __eq__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return self._key() == o._key()

    def __hash__(self) -> int:
        return hash((self.ranking, self._key()))

    def __lt__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return self._key() < o._key()

    def __le__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return self._key() <= o._key()

    def __gt__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return self._key() > o._key()

    def __ge__(self, other: object) -> bool:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return self._key() >= o._key()

    def __str__(self) -> str:
        return describe(self)
