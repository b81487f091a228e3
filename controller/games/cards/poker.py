"""Poker hand evaluation for the house-banked card games: pure, table-driven, exact ties.

Every poker-family game of the rule books (issue 8, Deliver 1) settles on one of two rankings:
the standard 5-card ranking (best 5 of 5–7 cards) or the 3-card ranking. This module turns cards
into a :class:`HandValue` whose ordering *is* the rule book's ordering, so ``max()`` picks the
winner and ``==`` means a tie (push). Rule ids point into ``../shared/rules/``: seed 000
(``seed-000-bombay-player-guide.md``: PKH-, UTH-, TCP-, BMP-) and seed 001
(``seed-001-live-casino-regulations.md``: §3.9–§3.21 with source lines ``L…``, contradictions
``C…`` in §12). ``docs/poker.md`` has the same readings in table form.

5-card ranking, low to high (PKH-19, seed 000 §9.3 [L895–907]; seed 001 §3.9 L299–310, §3.12
L461–473): high card, pair, two pair, three of a kind, straight, flush, full house, four of a kind,
straight flush (the ace-high one is *named* royal flush, :attr:`HandValue.is_royal`; it is not a
separate category because it is simply the top straight flush), five of a kind (only with a wild
joker: "Four of a Kind and Joker (Poker)", seed 001 §3.12 L461–473, above the royal flush).

- Suits never rank or break ties (PKH-18).
- A straight runs "from ace to ace": A-2-3-4-5 (five high, the lowest straight) and T-J-Q-K-A
  (ace high); no wrap-around such as Q-K-A-2-3 (PKH-19; Casino Hold'em L565; Side Bet City
  L3439–3441).
- Tie-break ranks are the ranks of the combination first, then the kickers high to low ("compare
  the highest cards outside the combination", seed 001 §3.9 L318–320; BMP-H5 §30: "by the higher
  card and then the next"; a full house "is ranked by its three of a kind"). Only the best five
  count: "the remaining two cards are not taken into account" (UTH-H1 §11).
- Card Poker lists "One Pair or lower (Ace and King)" as one paying class (L299–300, C32); the
  evaluator keeps the standard order inside it (any pair beats A-K high), as C32 suggests.

3-card ranking, low to high: high card, pair, flush, straight, three of a kind, straight flush.
"Straight is a higher combination than a flush" (TCP §17); the full order is not stated in seed 000
(§14 item 17) and is read from the seed 001 paytables (Ante Bonus L533–538, "Plus a pair"
L540–548: straight flush 40 > trips 30 > straight 5 > flush 4 > pair 1). A-2-3 and Q-K-A are both
straights (PKH-19); A-2-3 is the lowest (three high), as the 5-card wheel. A-K-Q suited is the
"Mini Royal" (L540–548; Side Bet City calls it "Royal Flush", L3445–3455), again a named straight
flush. Teen Patti: seed 001 §3.13 L519 puts "Three Card Poker / Teen Patti" under one rule set
("hereinafter all together 'Game' or 'Three Card Poker'") and states **no** Teen Patti
differences (C41), so ``ranking="teen_patti"`` is accepted and ranks exactly as Three Card Poker.
The traditional Teen Patti orders (trail above pure sequence, A-2-3 as the second-best sequence)
are not in either rule book and are not implemented.

Jokers: only Poker with Joker uses one in a poker hand (seed 001 §3.0 validator (4); §3.12 L455
"the Joker can replace any card"). With ``jokers="wild"`` each joker becomes the card that makes
the best hand: any card not already in the hand, or the fifth card of a rank the hand holds four
of (five of a kind, L461–473). The rule book's tie-break "the combination which has been
developed without a Joker is considered the winning one" (L475) is read as the last tie-break
(after category and every rank): :attr:`HandValue.natural`. Elsewhere a joker raises
:class:`ValueError` (a joker in a 52-card game is a foul card, PKH-01).

Low hands: no house-banked game of seed 000 §5–§8 or seed 001 §3.9–§3.21 ranks a low hand; low
rankings (Razz, 2-7, hi/lo 8-or-better) exist only in the player-vs-player poker room (seed 000
§9.3), which is out of scope, so there is no low evaluator.

Speed: a 5-card value depends only on the sorted ranks and whether all suits agree, so values are
computed once per such key and cached (7,462 distinct values); evaluating all 2,598,960 hands
takes seconds.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final, Literal

from tablectl.controller.core.errors import RuleError
from tablectl.drivers.cards import RANKS, SUITS, Card

__all__ = [
    "MINIMUMS",
    "HandCategory",
    "HandValue",
    "JokerMode",
    "Minimum",
    "ThreeCardCategory",
    "ThreeCardRanking",
    "best_of",
    "describe",
    "evaluate3",
    "evaluate5",
    "qualifies",
    "summary",
]

JokerMode = Literal["forbid", "wild"]
ThreeCardRanking = Literal["three_card_poker", "teen_patti"]
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


_VALUE: Final = {rank: (14 if rank == "A" else RANKS.index(rank) + 1) for rank in RANKS}
_ACE: Final = 14
_WHEEL: Final = (14, 5, 4, 3, 2)
_LOW_TRIPLE: Final = (14, 3, 2)


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
        return self.category.name == "STRAIGHT_FLUSH" and self.ranks[0] == _ACE

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


# --- 5-card core: (sorted ranks, flush) -> (category, ranks), cached -----------------------------


def _straight_high(desc: tuple[int, ...]) -> int | None:
    """The high card of a straight over distinct ranks sorted high to low, else ``None``."""
    if len(set(desc)) != len(desc):
        return None
    if desc in (_WHEEL, _LOW_TRIPLE):
        return desc[1]
    if desc[0] - desc[-1] == len(desc) - 1:
        return desc[0]
    return None


def _grouped(desc: tuple[int, ...]) -> tuple[list[int], tuple[int, ...]]:
    """Group sizes (largest first) and the ranks ordered by (group size, rank), high first."""
    counts = Counter(desc)
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    return [counts[r] for r in order], tuple(order)


_CACHE5: dict[tuple[tuple[int, ...], bool], tuple[HandCategory, tuple[int, ...]]] = {}


def _rank5(desc: tuple[int, ...], flush: bool) -> tuple[HandCategory, tuple[int, ...]]:
    key = (desc, flush)
    hit = _CACHE5.get(key)
    if hit is not None:
        return hit
    shape, order = _grouped(desc)
    high = _straight_high(desc)
    result: tuple[HandCategory, tuple[int, ...]]
    if shape[0] == 5:
        result = (HandCategory.FIVE_OF_A_KIND, order)
    elif high is not None and flush:
        result = (HandCategory.STRAIGHT_FLUSH, (high,))
    elif shape[0] == 4:
        result = (HandCategory.FOUR_OF_A_KIND, order)
    elif shape == [3, 2]:
        result = (HandCategory.FULL_HOUSE, order)
    elif flush:
        result = (HandCategory.FLUSH, desc)
    elif high is not None:
        result = (HandCategory.STRAIGHT, (high,))
    elif shape[0] == 3:
        result = (HandCategory.THREE_OF_A_KIND, order)
    elif shape[:2] == [2, 2]:
        result = (HandCategory.TWO_PAIR, order)
    elif shape[0] == 2:
        result = (HandCategory.PAIR, order)
    else:
        result = (HandCategory.HIGH_CARD, desc)
    _CACHE5[key] = result
    return result


def _check(cards: Sequence[Card], jokers: JokerMode, sizes: Iterable[int]) -> None:
    allowed = tuple(sizes)
    if len(cards) not in allowed:
        raise RuleError(f"expected {' or '.join(map(str, allowed))} cards, got {len(cards)}")
    if len(set(cards)) != len(cards):
        raise RuleError(f"duplicate card in {[c.code for c in cards]} (one 52-card deck, PKH-01)")
    if jokers != "wild" and any(c.is_joker for c in cards):
        raise RuleError("a joker is not a card of this game (jokers only in Poker with Joker)")
    for c in cards:
        if not c.is_joker and (c.rank not in _VALUE or c.suit not in SUITS):
            raise RuleError(f"not a card: {c!r}")


def _value5(cards: Sequence[Card]) -> HandValue:
    """Evaluate 5 natural cards (no jokers), already checked."""
    desc = tuple(sorted((_VALUE[c.rank] for c in cards), reverse=True))
    suit = cards[0].suit
    flush = all(c.suit == suit for c in cards)
    category, ranks = _rank5(desc, flush)
    return HandValue(category, ranks, tuple(cards))


def _wild5(cards: Sequence[Card]) -> HandValue:
    """Best substitution for the jokers among 5 cards (seed 001 §3.12 L455, L461–475).

    A joker stands for any card not in the hand; only the fifth card of a rank held four times
    (five of a kind) may repeat a card. Rather than trying all 52 cards, a single joker tries each
    rank in the flush suit (when the natural cards share one) and in one other free suit: the
    exact suit matters only for a flush. Several jokers try every free suit (they may need the
    same rank twice).
    """
    naturals = [c for c in cards if not c.is_joker]
    jokers = len(cards) - len(naturals)
    if jokers == 0:
        return _value5(cards)
    counts = Counter(_VALUE[c.rank] for c in naturals)
    # Five of a kind beats everything else a joker can make (L461–473).
    if not naturals or max(counts.values()) + jokers >= 5:
        top = max(counts, key=lambda r: (counts[r], r)) if naturals else _ACE
        return HandValue(HandCategory.FIVE_OF_A_KIND, (top,), tuple(cards), natural=False)
    held = {(c.rank, c.suit) for c in naturals}
    suits = {c.suit for c in naturals}
    flush_suit = next(iter(suits)) if len(suits) == 1 else None
    options: list[tuple[str, str]] = []
    for rank in RANKS:
        free = [s for s in SUITS if (rank, s) not in held]
        others = [s for s in free if s != flush_suit]
        picks = [s for s in free if s == flush_suit] + (others if jokers > 1 else others[:1])
        options.extend((rank, s) for s in picks)
    best: tuple[HandCategory, tuple[int, ...]] | None = None
    for combo in itertools.combinations(options, jokers):
        if len(set(combo)) != jokers:
            continue
        filled = [*naturals, *(Card(r, s) for r, s in combo)]
        desc = tuple(sorted((_VALUE[c.rank] for c in filled), reverse=True))
        flush = len({c.suit for c in filled}) == 1
        value = _rank5(desc, flush)
        if best is None or (int(value[0]), value[1]) > (int(best[0]), best[1]):
            best = value
    assert best is not None  # there are always free cards for at most 4 jokers
    return HandValue(best[0], best[1], tuple(cards), natural=False)


def evaluate5(cards: Sequence[Card], *, jokers: JokerMode = "forbid") -> HandValue:
    """The value of exactly 5 cards.

    Raises:
        ValueError: not 5 cards, a duplicate, or a joker without ``jokers="wild"``.
    """
    _check(cards, jokers, (5,))
    if jokers == "wild":
        return _wild5(cards)
    return _value5(cards)


def best_of(
    cards: Sequence[Card],
    k: int = 5,
    *,
    jokers: JokerMode = "forbid",
    ranking: ThreeCardRanking = "three_card_poker",
) -> HandValue:
    """The best ``k``-card hand among 5–7 cards (Hold'em best 5 of 7, UTH-H1 §11; 6-card poker,
    seed 001 §3.11 L422–424; the 6 card / 5+1 bonuses, L550–559, L739).

    ``k=3`` picks the best 3-card hand under ``ranking`` (no rule-book game needs it yet, but it
    keeps the two rankings symmetric). Natural cards win a tie against joker-made ones (L475).

    Raises:
        ValueError: fewer than ``k`` cards, more than 7, duplicates, jokers not allowed, or a
            ``k`` other than 3 or 5.
    """
    if k not in (3, 5):
        raise RuleError(f"k must be 3 or 5, got {k}")
    _check(cards, jokers, range(k, 8))
    if k == 3:
        if any(c.is_joker for c in cards):
            raise RuleError("jokers are not used in any 3-card game")
        return max(
            evaluate3(list(sub), ranking=ranking) for sub in itertools.combinations(cards, 3)
        )
    if jokers == "wild":
        return max(_wild5(sub) for sub in itertools.combinations(cards, 5))
    return max(_value5(sub) for sub in itertools.combinations(cards, 5))


# --- 3-card ------------------------------------------------------------------------------------

_THREE_BY_NAME: Final = {c.name: c for c in ThreeCardCategory}


def evaluate3(cards: Sequence[Card], ranking: ThreeCardRanking = "three_card_poker") -> HandValue:
    """The value of exactly 3 cards under the 3-card ranking (straight above flush, TCP §17).

    ``"teen_patti"`` ranks exactly as ``"three_card_poker"``: seed 001 §3.13 L519 runs both under
    one rule set and states no Teen Patti differences (C41).

    Raises:
        ValueError: not 3 cards, a duplicate, a joker, or an unknown ranking.
    """
    if ranking not in ("three_card_poker", "teen_patti"):
        raise RuleError(f"unknown 3-card ranking: {ranking!r}")
    _check(cards, "forbid", (3,))
    desc = tuple(sorted((_VALUE[c.rank] for c in cards), reverse=True))
    flush = len({c.suit for c in cards}) == 1
    high = _straight_high(desc)
    shape, order = _grouped(desc)
    category: ThreeCardCategory
    ranks: tuple[int, ...]
    if high is not None:
        category = ThreeCardCategory.STRAIGHT_FLUSH if flush else ThreeCardCategory.STRAIGHT
        ranks = (high,)
    elif shape[0] == 3:
        category, ranks = ThreeCardCategory.THREE_OF_A_KIND, order
    elif flush:
        category, ranks = ThreeCardCategory.FLUSH, desc
    elif shape[0] == 2:
        category, ranks = ThreeCardCategory.PAIR, order
    else:
        category, ranks = ThreeCardCategory.HIGH_CARD, desc
    return HandValue(category, ranks, tuple(cards))


# --- qualification -----------------------------------------------------------------------------

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
    """Whether ``hand`` is at least ``minimum`` in its own ranking.

    Category names are read in the hand's ranking, so in 3-card play ``"straight"`` excludes a
    flush (a flush ranks below a straight there, TCP §17). Natural/joker status never matters for
    qualification.

    Raises:
        ValueError: an unknown minimum, or one that the hand's ranking has no category for
            (``two_pair`` for a 3-card hand).
    """
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


# --- descriptions ------------------------------------------------------------------------------

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
    """The canonical English description put in the outcome.

    ``"royal flush"``, ``"mini royal"`` (A-K-Q suited, seed 001 L540–548),
    ``"straight flush, nine high"``, ``"four of a kind, queens"``,
    ``"full house, kings over fives"``, ``"flush, ace high"``, ``"straight, five high"``,
    ``"three of a kind, sevens"``, ``"two pair, kings and fives"``, ``"pair of jacks"``,
    ``"ace high"``; ``"five of a kind, aces"``. Kickers are left out on purpose: the description
    names the combination, the value settles.
    """
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
