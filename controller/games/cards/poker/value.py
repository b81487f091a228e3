"""What a poker hand is worth: the categories of the two rankings and :class:`HandValue`, which
compares as the rule books rank hands.

- 5-card order: PKH-19, seed 000 §9.3 [L895–907]; seed 001 §3.9 L299–310, §3.12 L461–473 (five of
  a kind above the royal flush, which is only the top straight flush).
- Suits never rank (PKH-18); kickers high to low (seed 001 §3.9 L318–320; BMP-H5 §30), best five
  only (UTH-H1 §11).
- "One Pair or lower (Ace and King)" (L299–300, C32) keeps the standard order inside it.
- 3-card order: straight above flush (TCP §17); the rest from seed 001's paytables (§14 item 17;
  L533–538, L540–548); the "Mini Royal" (L540–548; L3445–3455)."""

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
    """A hand's rank: (category, ranks, natural). ``cards`` are kept for the outcome (UTH §14) but
    never compared (PKH-18); comparing values of different rankings is a programming error
    (TypeError)."""

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
