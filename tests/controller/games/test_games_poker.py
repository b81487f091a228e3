"""Poker hand evaluation (controller/games/cards/poker/): counts, brute force, ties, descriptions.

The evaluator is checked against a deliberately naive reference written here (category by
explicit checks, best-of by trying every subset, jokers by trying every card), on all 3-card
hands, on sampled and (``slow``) all 5-card hands, and on random 6–7 card and joker hands.
Rule ids point into ``../shared/rules/`` (seed 000 PKH-/UTH-/TCP-/BMP-, seed 001 L… and C…).
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.games.cards.poker import (
    HandCategory,
    HandValue,
    ThreeCardCategory,
    best_of,
    describe,
    evaluate3,
    evaluate5,
    qualifies,
)
from tablectl.drivers.cards import Card, full_deck, parse_card

DECK = full_deck()
JOKER = parse_card("JK")


def cards(text: str) -> list[Card]:
    return [parse_card(t) for t in text.split()]


# --- the naive reference -----------------------------------------------------------------------

VAL = {r: i for i, r in enumerate("23456789TJQKA", start=2)}


def ref5(hand: Sequence[Card]) -> tuple[int, tuple[int, ...]]:
    """Category number and tie-break ranks of 5 natural cards, by the book, no cleverness."""
    vals = sorted((VAL[c.rank] for c in hand), reverse=True)
    counts = Counter(vals)
    by_group = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    shape = [n for _, n in by_group]
    order = tuple(v for v, _ in by_group)
    flush = len({c.suit for c in hand}) == 1
    straight = None
    if len(counts) == 5:
        if vals[0] - vals[4] == 4:
            straight = vals[0]
        if vals == [14, 5, 4, 3, 2]:
            straight = 5
    if shape == [5]:
        return 9, order
    if straight and flush:
        return 8, (straight,)
    if shape == [4, 1]:
        return 7, order
    if shape == [3, 2]:
        return 6, order
    if flush:
        return 5, tuple(vals)
    if straight:
        return 4, (straight,)
    if shape == [3, 1, 1]:
        return 3, order
    if shape == [2, 2, 1]:
        return 2, order
    if shape == [2, 1, 1, 1]:
        return 1, order
    return 0, tuple(vals)


def ref_best(hand: Sequence[Card]) -> tuple[int, tuple[int, ...]]:
    return max(ref5(sub) for sub in itertools.combinations(hand, 5))


def ref_wild(hand: Sequence[Card]) -> tuple[int, tuple[int, ...]]:
    """Every joker tried as every one of the 52 cards (and four of a kind + joker = five)."""
    naturals = [c for c in hand if not c.is_joker]
    n_jokers = len(hand) - len(naturals)
    best: tuple[int, tuple[int, ...]] = (-1, ())
    for subs in itertools.product(DECK, repeat=n_jokers):
        filled = naturals + list(subs)
        ranks = Counter(c.rank for c in filled)
        if max(ranks.values()) == 5:
            top = max(ranks, key=lambda r: VAL[r])
            best = max(best, (9, (VAL[top],)))
        elif len(set(filled)) == 5:
            best = max(best, ref5(filled))
    return best


def key(value: HandValue) -> tuple[int, tuple[int, ...]]:
    return int(value.category), value.ranks


FIVE_COUNTS = {
    HandCategory.STRAIGHT_FLUSH: 40,
    HandCategory.FOUR_OF_A_KIND: 624,
    HandCategory.FULL_HOUSE: 3_744,
    HandCategory.FLUSH: 5_108,
    HandCategory.STRAIGHT: 10_200,
    HandCategory.THREE_OF_A_KIND: 54_912,
    HandCategory.TWO_PAIR: 123_552,
    HandCategory.PAIR: 1_098_240,
    HandCategory.HIGH_CARD: 1_302_540,
}


# --- category counts ---------------------------------------------------------------------------


@pytest.mark.slow
def test_all_2598960_five_card_hands_have_the_textbook_category_counts() -> None:
    counts: Counter[HandCategory | ThreeCardCategory] = Counter()
    royals = 0
    for hand in itertools.combinations(DECK, 5):
        value = evaluate5(hand)
        counts[value.category] += 1
        royals += value.is_royal
    assert dict(counts) == FIVE_COUNTS
    assert royals == 4


def test_five_card_sample_matches_the_reference_and_all_straight_flushes_are_found() -> None:
    rng = random.Random(8)
    for _ in range(20_000):
        hand = rng.sample(DECK, 5)
        assert key(evaluate5(hand)) == ref5(hand), hand
    # The rare categories exhaustively: every suited 5-run (10 per suit), every quad.
    flushes = [
        evaluate5(list(h))
        for suit in "SHDC"
        for h in itertools.combinations([c for c in DECK if c.suit == suit], 5)
    ]
    by_cat = Counter(v.category for v in flushes)
    assert by_cat[HandCategory.STRAIGHT_FLUSH] == 40
    assert by_cat[HandCategory.FLUSH] == 5_108
    assert sum(v.is_royal for v in flushes) == 4


def test_all_22100_three_card_hands_have_the_textbook_category_counts() -> None:
    expected = {
        ThreeCardCategory.STRAIGHT_FLUSH: 48,
        ThreeCardCategory.THREE_OF_A_KIND: 52,
        ThreeCardCategory.STRAIGHT: 720,
        ThreeCardCategory.FLUSH: 1_096,
        ThreeCardCategory.PAIR: 3_744,
        ThreeCardCategory.HIGH_CARD: 16_440,
    }
    for ranking in ("three_card_poker", "teen_patti"):
        counts = Counter(
            evaluate3(h, ranking=ranking).category for h in itertools.combinations(DECK, 3)
        )
        assert dict(counts) == expected
    assert sum(evaluate3(h).is_royal for h in itertools.combinations(DECK, 3)) == 4


def test_three_card_ranking_puts_straight_above_flush_and_trips_above_straight() -> None:
    """TCP §17 ("straight is a higher combination than a flush"); seed 001 L533–548 paytables."""
    order = [
        evaluate3(cards("KS 9H 4D")),  # high card
        evaluate3(cards("2S 2H 3D")),  # pair
        evaluate3(cards("AS KS 9S")),  # flush
        evaluate3(cards("AS 2H 3D")),  # straight, three high (the lowest)
        evaluate3(cards("QS KH AD")),  # straight, ace high
        evaluate3(cards("2S 2H 2D")),  # three of a kind
        evaluate3(cards("AS 2S 3S")),  # straight flush, three high
        evaluate3(cards("AS KS QS")),  # mini royal
    ]
    assert order == sorted(order)
    assert len(set(order)) == len(order)
    assert evaluate3(cards("KS QH JD")) > evaluate3(cards("AS 2H 3D"))  # no A-2-3 bonus (C41)


# --- brute force on random hands ---------------------------------------------------------------

hands6or7 = st.integers(6, 7).flatmap(
    lambda n: st.lists(st.sampled_from(DECK), min_size=n, max_size=n, unique=True)
)


@settings(max_examples=400, deadline=None)
@given(hands6or7)
def test_best_of_equals_the_max_over_all_5_card_subsets(hand: list[Card]) -> None:
    value = best_of(hand)
    assert key(value) == ref_best(hand)
    assert len(value.cards) == 5
    assert set(value.cards) <= set(hand)
    assert key(evaluate5(list(value.cards))) == key(value)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=4, max_size=4, unique=True))
def test_one_wild_joker_equals_the_best_substitution_by_brute_force(naturals: list[Card]) -> None:
    """Poker with Joker: "the Joker can replace any card" (seed 001 §3.12 L455)."""
    hand = [*naturals, JOKER]
    value = evaluate5(hand, jokers="wild")
    assert key(value) == ref_wild(hand)
    assert not value.natural


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=3, max_size=3, unique=True))
def test_two_wild_jokers_equal_the_best_substitution_by_brute_force(naturals: list[Card]) -> None:
    hand = [*naturals, parse_card("JK1"), parse_card("JK2")]
    assert key(evaluate5(hand, jokers="wild")) == ref_wild(hand)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(DECK), min_size=5, max_size=6, unique=True))
def test_best_of_with_a_joker_equals_brute_force(naturals: list[Card]) -> None:
    hand = [*naturals, JOKER]
    expected = max(
        ref_wild(sub) if any(c.is_joker for c in sub) else ref5(sub)
        for sub in itertools.combinations(hand, 5)
    )
    assert key(best_of(hand, jokers="wild")) == expected


def test_wild_jokers_named_cases() -> None:
    """L461–473: "Four of a Kind and Joker (Poker)" ranks above the royal flush."""
    five = evaluate5(cards("AS AH AD AC JK"), jokers="wild")
    assert five.category is HandCategory.FIVE_OF_A_KIND
    assert five > evaluate5(cards("AS KS QS JS TS"))
    assert describe(five) == "five of a kind, aces"
    assert describe(evaluate5(cards("KS QS JS TS JK"), jokers="wild")) == "royal flush"
    assert describe(evaluate5(cards("2H 3H 4H 5H JK"), jokers="wild")) == "straight flush, six high"
    assert (
        describe(evaluate5(cards("9S 9H 4D 4C JK"), jokers="wild"))
        == "full house, nines over fours"
    )


def test_a_natural_combination_beats_the_same_one_made_with_a_joker() -> None:
    """L475: "the combination which has been developed without a Joker is considered the winning
    one" — read as the last tie-break, after category and all ranks."""
    natural = evaluate5(cards("KS KH 9D 5C 2S"), jokers="wild")
    joker = evaluate5(cards("KD JK 9H 5S 2C"), jokers="wild")
    assert key(natural) == key(joker)
    assert natural > joker
    assert best_of(cards("KS KH 9D 5C 2S JK"), jokers="wild").natural is False  # trips is better
    # A joker-made better hand still beats a natural worse one.
    assert evaluate5(cards("AD JK 9H 5S 2C"), jokers="wild") > natural


# --- ties and kickers, table-driven with rule ids -----------------------------------------------

TIES = [
    # (rule, a, b, expected sign of a vs b)
    ("PKH-18 suits never break ties", "AS KS QH JD 9C", "AH KH QS JC 9D", 0),
    ("PKH-19 wheel is the lowest straight", "AS 2H 3D 4C 5S", "2H 3D 4C 5S 6H", -1),
    ("PKH-19 no wrap-around: Q-K-A-2-3 is ace high", "QS KH AD 2C 3S", "AS KH QD 4C 2S", -1),
    ("PKH-19 broadway beats king high", "TS JH QD KC AS", "9S TH JD QC KS", 1),
    ("L318–320 kicker decides a pair", "KS KH 9D 5C 3S", "KD KC 9H 5S 2D", 1),
    ("L318–320 pair rank before kickers", "KS KH 4D 3C 2S", "QD QC AH JS 9D", 1),
    ("two pair: top pair first", "KS KH 3D 3C 2S", "QD QC JH JS AD", 1),
    ("two pair: then the second pair", "KS KH 5D 5C 2S", "KD KC 4H 4S AD", 1),
    ("two pair: then the kicker", "KS KH 5D 5C 7S", "KD KC 5H 5S 6D", 1),
    ("BMP-H5 §30 full house by its three of a kind", "3S 3H 3D 2C 2S", "2H 2D 2C AH AS", 1),
    ("flush compares every card", "AS JS 9S 6S 4S", "AH JH 9H 6H 3H", 1),
    ("quads: kicker", "9S 9H 9D 9C AS", "9S 9H 9D 9C KS", 1),
    ("C32 any pair beats ace-king high", "2S 2H 7D 5C 3S", "AS KH QD JC 9S", 1),
    ("BMP-H5 §30 fully equal is a tie", "AS KH 8D 5C 3S", "AD KC 8H 5S 3D", 0),
]


@pytest.mark.parametrize(("rule", "a", "b", "sign"), TIES, ids=[t[0] for t in TIES])
def test_ties_and_kickers(rule: str, a: str, b: str, sign: int) -> None:
    va, vb = evaluate5(cards(a)), evaluate5(cards(b))
    assert ((va > vb) - (va < vb)) == sign
    assert (va == vb) == (sign == 0)
    if sign == 0:
        assert hash(va) == hash(vb)


def test_uth_best_five_only_the_remaining_two_do_not_count() -> None:
    """UTH-H1 §11: an equal best five is a tie; "the remaining two cards are not taken into
    account"."""
    board = cards("AS KD QH JC 9S")
    player = best_of([*board, *cards("2H 3D")])
    dealer = best_of([*board, *cards("4H 5D")])
    assert player == dealer
    assert max([player, dealer]) == player


def test_three_card_ties_and_kickers() -> None:
    """TCP §15–16: the higher card, then the next card; fully equal is a push."""
    assert evaluate3(cards("AS 9H 4D")) == evaluate3(cards("AH 9D 4C"))
    assert evaluate3(cards("AS 9H 5D")) > evaluate3(cards("AH 9D 4C"))
    assert evaluate3(cards("5S 5H AD")) > evaluate3(cards("5D 5C KH"))
    assert evaluate3(cards("6S 6H 2D")) > evaluate3(cards("5D 5C AH"))


def test_three_and_five_card_values_do_not_compare() -> None:
    with pytest.raises(TypeError):
        _ = evaluate3(cards("AS KS QS")) < evaluate5(cards("AS KS QS JS TS"))


# --- descriptions --------------------------------------------------------------------------------

DESCRIPTIONS = [
    ("AS KS QS JS TS", "royal flush"),
    ("9H 8H 7H 6H 5H", "straight flush, nine high"),
    ("AD 2D 3D 4D 5D", "straight flush, five high"),
    ("QS QH QD QC 3S", "four of a kind, queens"),
    ("KS KH KD 5C 5S", "full house, kings over fives"),
    ("AS JS 9S 6S 4S", "flush, ace high"),
    ("AS 2H 3D 4C 5S", "straight, five high"),
    ("TS JH QD KC AS", "straight, ace high"),
    ("7S 7H 7D KC 2S", "three of a kind, sevens"),
    ("KS KH 5D 5C 2S", "two pair, kings and fives"),
    ("JS JH 9D 5C 2S", "pair of jacks"),
    ("AS KH 9D 5C 2S", "ace high"),
]


@pytest.mark.parametrize(("hand", "text"), DESCRIPTIONS)
def test_describe_five_cards(hand: str, text: str) -> None:
    assert describe(evaluate5(cards(hand))) == text
    assert str(evaluate5(cards(hand))) == text


@pytest.mark.parametrize(
    ("hand", "text"),
    [
        ("AS KS QS", "mini royal"),
        ("AS 2S 3S", "straight flush, three high"),
        ("4S 4H 4D", "three of a kind, fours"),
        ("QS KH AD", "straight, ace high"),
        ("AS 9S 2S", "flush, ace high"),
        ("8S 8H 2D", "pair of eights"),
        ("QS 9H 2D", "queen high"),
    ],
)
def test_describe_three_cards(hand: str, text: str) -> None:
    assert describe(evaluate3(cards(hand))) == text


# --- qualification -------------------------------------------------------------------------------

QUALIFY5 = [
    # (rule, minimum, hand, qualifies)
    ("UTH-H2 §12 pair of twos", "pair_of_twos", "2S 2H 7D 5C 3S", True),
    ("UTH-H2 §12 pair of twos", "pair_of_twos", "AS KH 7D 5C 3S", False),
    ("UTH §17 two pair (C/§14.1)", "two_pair", "AS AH 7D 5C 3S", False),
    ("UTH §17 two pair (C/§14.1)", "two_pair", "3S 3H 2D 2C 4S", True),
    ("BMP §18 ace-king", "ace_king", "AS KH 4D 3C 2S", True),
    ("BMP §18 ace-king", "ace_king", "AS QH JD 9C 8S", False),
    ("L741 Caribbean ace-king: any pair", "ace_king", "2S 2H 4D 3C 7S", True),
    ("L587 Casino Hold'em pair of fours", "pair_of_fours", "4S 4H 2D 3C 7S", True),
    ("L587 Casino Hold'em pair of fours", "pair_of_fours", "3S 3H AD KC QS", False),
    ("L3481 Side Bet City JJ+", "pair_of_jacks", "JS JH 2D 3C 7S", True),
    ("L3481 Side Bet City JJ+", "pair_of_jacks", "TS TH AD 3C 7S", False),
    ("Casino Hold'em bonus pair of aces", "pair_of_aces", "AS AH 2D 3C 7S", True),
    ("Casino Hold'em bonus pair of aces", "pair_of_aces", "KS KH AD 3C 7S", False),
    ("UTH §20 Trips", "three_of_a_kind", "7S 7H 7D 3C 2S", True),
    ("UTH §19 Blind from a straight", "straight", "AS 2H 3D 4C 5S", True),
    ("UTH §19 Blind from a straight", "straight", "AS AH AD 4C 5S", False),
]


@pytest.mark.parametrize(("rule", "minimum", "hand", "ok"), QUALIFY5, ids=[q[0] for q in QUALIFY5])
def test_qualifies_five_cards(rule: str, minimum: str, hand: str, ok: bool) -> None:
    assert qualifies(evaluate5(cards(hand)), minimum) is ok


@pytest.mark.parametrize(
    ("hand", "minimum", "ok"),
    [
        ("QS 3H 2D", "queen_high", True),  # TCP §10 "a hand that starts with one queen"
        ("JS TH 8D", "queen_high", False),  # TCP §13 "no queen or higher"
        ("2S 2H 3D", "queen_high", True),
        ("AS 9S 2S", "straight", False),  # flush ranks below straight in 3 cards
        ("AS 2H 3D", "straight", True),
    ],
)
def test_qualifies_three_cards(hand: str, minimum: str, ok: bool) -> None:
    assert qualifies(evaluate3(cards(hand)), minimum) is ok


def test_qualifies_rejects_unknown_or_impossible_minimums() -> None:
    with pytest.raises(ValueError, match="unknown minimum"):
        qualifies(evaluate5(cards("AS KH 9D 5C 2S")), "pair_of_sevens")
    with pytest.raises(ValueError, match="3-card"):
        qualifies(evaluate3(cards("AS KH 9D")), "two_pair")


# --- input checking ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: evaluate5(cards("AS KH 9D 5C")), "expected 5"),
        (lambda: evaluate5(cards("AS AS 9D 5C 2S")), "duplicate"),
        (lambda: evaluate5(cards("AS KH 9D 5C JK")), "joker"),
        (lambda: best_of(cards("AS KH 9D 5C 2S 3S 4S 6S")), "expected"),
        (lambda: best_of(cards("AS KH 9D 5C 2S"), k=4), "k must be"),
        (lambda: evaluate3(cards("AS KH JK")), "joker"),
        (lambda: evaluate3(cards("AS KH")), "expected 3"),
        (lambda: evaluate3(cards("AS KH QD"), ranking="bogus"), "ranking"),  # type: ignore[arg-type]
    ],
)
def test_bad_input_raises_value_error(call: object, match: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=match):
        call()


def test_best_three_of_more() -> None:
    assert describe(best_of(cards("AS KS QS 2H 2D"), k=3)) == "mini royal"
