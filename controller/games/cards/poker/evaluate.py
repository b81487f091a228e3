"""Cards → :class:`~.value.HandValue`: the 5-card and 3-card evaluators and the best hand of many.

- Straights run "from ace to ace", no wrap-around (PKH-19; Casino Hold'em L565; Side Bet City
  L3439–3441); in 3 cards A-2-3 and Q-K-A both count (PKH-19).
- Teen Patti ranks exactly as Three Card Poker: seed 001 §3.13 L519 states no differences (C41);
  the traditional orders are in no rule book.
- Jokers only in Poker with Joker (§3.0 validator (4); §3.12 L455, L461–473): wild, the natural
  hand winning the last tie-break (L475); elsewhere a foul card (PKH-01).

Values are cached by sorted ranks and flushness (7,462 distinct), so all 2,598,960 hands take
seconds."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Final

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.cards.poker.value import (
    ACE,
    RANK_VALUES,
    HandCategory,
    HandValue,
    JokerMode,
    ThreeCardCategory,
    ThreeCardRanking,
)
from tablectl.drivers.cards import RANKS, SUITS, Card

_WHEEL: Final = (14, 5, 4, 3, 2)
_LOW_TRIPLE: Final = (14, 3, 2)


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
        if not c.is_joker and (c.rank not in RANK_VALUES or c.suit not in SUITS):
            raise RuleError(f"not a card: {c!r}")


def _value5(cards: Sequence[Card]) -> HandValue:
    """Evaluate 5 natural cards (no jokers), already checked."""
    desc = tuple(sorted((RANK_VALUES[c.rank] for c in cards), reverse=True))
    suit = cards[0].suit
    flush = all(c.suit == suit for c in cards)
    category, ranks = _rank5(desc, flush)
    return HandValue(category, ranks, tuple(cards))


def _wild5(cards: Sequence[Card]) -> HandValue:
    """Best substitution for the jokers (seed 001 §3.12 L455, L461–475). The suit matters only for a
    flush, so one joker tries each rank in the flush suit and one other free suit, not all 52
    cards; several jokers try every free suit (they may need the same rank twice)."""
    naturals = [c for c in cards if not c.is_joker]
    jokers = len(cards) - len(naturals)
    if jokers == 0:
        return _value5(cards)
    counts = Counter(RANK_VALUES[c.rank] for c in naturals)
    # Five of a kind beats everything else a joker can make (L461–473).
    if not naturals or max(counts.values()) + jokers >= 5:
        top = max(counts, key=lambda r: (counts[r], r)) if naturals else ACE
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
        desc = tuple(sorted((RANK_VALUES[c.rank] for c in filled), reverse=True))
        flush = len({c.suit for c in filled}) == 1
        value = _rank5(desc, flush)
        if best is None or (int(value[0]), value[1]) > (int(best[0]), best[1]):
            best = value
    assert best is not None  # there are always free cards for at most 4 jokers
    return HandValue(best[0], best[1], tuple(cards), natural=False)


def evaluate5(cards: Sequence[Card], *, jokers: JokerMode = "forbid") -> HandValue:
    """The value of exactly 5 cards."""
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
    """The best ``k``-card hand among 5–7 cards (UTH-H1 §11; seed 001 §3.11 L422–424; L550–559,
    L739). ``k=3`` keeps the two rankings symmetric; natural cards win a tie (L475)."""
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


def evaluate3(cards: Sequence[Card], ranking: ThreeCardRanking = "three_card_poker") -> HandValue:
    """Exactly 3 cards, straight above flush (TCP §17); ``"teen_patti"`` ranks the same (§3.13 L519,
    C41)."""
    if ranking not in ("three_card_poker", "teen_patti"):
        raise RuleError(f"unknown 3-card ranking: {ranking!r}")
    _check(cards, "forbid", (3,))
    desc = tuple(sorted((RANK_VALUES[c.rank] for c in cards), reverse=True))
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
