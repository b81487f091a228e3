"""Andar Bahar, Side Bet City and Speedy 7 (tablectl.controller.games.cards.sequences) through the
CardEngine.

Table-driven from seed-001 §3.8a (L3539–3597), §3.18 (L3419–3493), §3.19 (L2513–2533) and §12
(C19, C22): deal order and positions, every outcome fact with a worked example, the decision
windows, each irregularity and its code, config validation, and random decks dealt through the
engine checked against an independent computation.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError, EventFormatError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import HAND_CANCELLED, CardEngine
from tablectl.controller.games.cards.poker import evaluate3, evaluate5
from tablectl.controller.games.cards.sequences import (
    MAX_AFTER_JOKER,
    RULE_BOOK_BRACKETS,
    AndarBahar,
    SideBetCity,
    Speedy7,
    bracket_label,
    compare_rank,
    five_card_line,
    runs,
    three_card_line,
)
from tablectl.controller.games.cards.shoe import full_shoe_codes
from tablectl.drivers.cards import parse_card

DECK = full_shoe_codes(1)
SHUFFLED = ({"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 52})
OPEN = ({"type": "round_open"}, {"type": "bets_closed"})
CONFIRM = {"type": "confirm"}
Event = dict[str, Any] | str


def engine(game: str, **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def run(eng: CardEngine, *events: Event) -> list[Outcome | Verdict]:
    """Feed events (a bare string is a card); every output, in order."""
    out: list[Outcome | Verdict] = []
    for event in events:
        raw = {"type": "card", "card": event} if isinstance(event, str) else event
        for o in eng.apply(parse_event(raw)):
            assert isinstance(o, Outcome | Verdict)
            out.append(o)
    return out


def codes(outputs: Sequence[Outcome | Verdict]) -> list[str]:
    return [o.code for o in outputs if isinstance(o, Verdict)]


def outcomes(outputs: Sequence[Outcome | Verdict]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def settled(outputs: Sequence[Outcome | Verdict]) -> dict[str, Any]:
    (outcome,) = outcomes(outputs)
    assert outcome.status == "settled", outcome
    assert outcome.result is not None
    return outcome.result


def others(rank: str) -> list[str]:
    """The 48 cards of a deck whose rank is not ``rank``, in deck order."""
    return [c for c in DECK if c[0] != rank]


# --- catalog --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "cls"),
    [("andar_bahar", AndarBahar), ("side_bet_city", SideBetCity), ("speedy7", Speedy7)],
)
def test_catalog_keys_build_the_games_with_one_deck_per_round(key: str, cls: type) -> None:
    eng = engine(key)
    assert type(eng.game_rules) is cls
    assert eng.game == key
    assert eng.game_rules.script.reshuffle == "every_round"
    assert eng.game_rules.rules.decks == 1
    assert eng.game_rules.rules.on_fault == "void"


# --- Andar Bahar (seed-001 §3.8a) -----------------------------------------------------------------


def test_andar_bahar_worked_example_match_on_the_fourth_card() -> None:
    """L3543: joker, then andar, bahar, andar, bahar … until a card of the joker's rank."""
    eng = engine("andar_bahar")
    out = run(eng, *SHUFFLED, *OPEN, "7H", "2C", "3D", "9S", "7S")
    assert codes(out) == []
    assert settled(out) == {
        "joker": {
            "card": "7H",
            "colour": "red",
            "suit": "hearts",
            "vs_7": "equal",
            "vs_8": "lower",
        },
        "first_side": "andar",
        "andar": {"cards": ["2C", "9S"]},
        "bahar": {"cards": ["3D", "7S"]},
        "after_joker": ["2C", "3D", "9S", "7S"],
        "winner": "bahar",
        "winning_card": {"card": "7S", "colour": "black"},
        "cards_dealt": 4,
        "cards_bracket": "1-5",
    }


@pytest.mark.parametrize(
    ("first_side", "winner", "andar", "bahar"),
    [
        ("andar", "andar", ["KD"], []),
        ("bahar", "bahar", [], ["KD"]),
    ],
)
def test_andar_bahar_match_on_the_first_card_after_the_joker(
    first_side: str, winner: str, andar: list[str], bahar: list[str]
) -> None:
    """The first card goes to the configured side (L3543 "determined randomly" [GAP])."""
    eng = engine("andar_bahar", first_side=first_side)
    result = settled(run(eng, *OPEN, "KS", "KD"))
    assert result["winner"] == winner
    assert result["first_side"] == first_side
    assert result["andar"] == {"cards": andar}
    assert result["bahar"] == {"cards": bahar}
    assert result["cards_dealt"] == 1
    assert result["cards_bracket"] == "1-5"
    assert result["winning_card"] == {"card": "KD", "colour": "red"}


@pytest.mark.parametrize("first_side", ["andar", "bahar"])
def test_andar_bahar_alternates_strictly_from_the_first_side(first_side: str) -> None:
    eng = engine("andar_bahar", first_side=first_side)
    after = ["2C", "3C", "4C", "5C", "6C", "8C", "9C", "QH"]
    result = settled(run(eng, *OPEN, "QS", *after))
    second = "bahar" if first_side == "andar" else "andar"
    assert result[first_side] == {"cards": after[0::2]}
    assert result[second] == {"cards": after[1::2]}
    assert result["winner"] == second  # the 8th card: an even position
    assert result["cards_dealt"] == 8
    assert result["cards_bracket"] == "6-10"


@pytest.mark.parametrize(("configured", "drawn"), [("andar", "bahar"), ("bahar", "andar")])
def test_andar_bahar_first_side_drawn_per_round_on_bets_closed(configured: str, drawn: str) -> None:
    """L3543 "determined randomly": the RNG's draw, committed with the close of bets (§2.2 (d)),
    overrides the table setting for that round only."""
    eng = engine("andar_bahar", first_side=configured)
    closed = {"type": "bets_closed", "first_side": drawn}
    first = settled(run(eng, {"type": "round_open"}, closed, "KS", "2C", "KD"))
    assert first["first_side"] == drawn
    assert first[drawn] == {"cards": ["2C"]}
    assert first[configured] == {"cards": ["KD"]}
    assert first["winner"] == configured  # the second card after the joker
    again = settled(run(eng, *SHUFFLED, *OPEN, "QS", "3C", "QD"))  # no draw: the table setting
    assert again["first_side"] == configured
    assert again[configured] == {"cards": ["3C"]}
    assert again["winner"] == drawn


@pytest.mark.parametrize("bad", ["left", 1, True, ""])
def test_andar_bahar_first_side_on_bets_closed_is_andar_or_bahar(bad: object) -> None:
    with pytest.raises(EventFormatError, match="first_side"):
        parse_event({"type": "bets_closed", "first_side": bad})


def test_first_side_is_ignored_by_other_games() -> None:
    eng = engine("speedy7")
    plain = run(eng, *OPEN)
    eng2 = engine("speedy7")
    with_side = run(eng2, {"type": "round_open"}, {"type": "bets_closed", "first_side": "bahar"})
    assert codes(plain) == codes(with_side) == []
    assert eng.snapshot() == eng2.snapshot()


def test_andar_bahar_match_on_the_49th_card_after_the_joker() -> None:
    """§3.8a [DERIVED]: 48 cards of other ranks, then the first match, the 49th (odd: the first
    side's)."""
    eng = engine("andar_bahar")
    rest = others("5")
    out = run(eng, *SHUFFLED, *OPEN, "5H", *rest)
    assert outcomes(out) == []
    assert codes(out) == []
    result = settled(run(eng, "5S"))
    assert result["cards_dealt"] == MAX_AFTER_JOKER == 49
    assert result["cards_bracket"] == "41+"
    assert result["winner"] == "andar"
    assert len(result["andar"]["cards"]) == 25
    assert len(result["bahar"]["cards"]) == 24
    # The deck's last two cards come after the round: not played.
    assert codes(run(eng, "5C")) == ["extra_card"]


def test_andar_bahar_a_50th_card_without_a_match_is_a_repeated_card() -> None:
    """49 cards of other ranks after the joker need one of the 48 twice: the shoe holds it."""
    eng = engine("andar_bahar")
    rest = others("5")
    out = run(eng, *OPEN, "5H", *rest, rest[0])
    assert outcomes(out) == []
    assert codes(out) == ["composition_exceeded"]
    assert eng.phase == "pending_decision"


@pytest.mark.parametrize(
    ("count", "label"),
    [
        (1, "1-5"),
        (5, "1-5"),
        (6, "6-10"),
        (10, "6-10"),
        (11, "11-15"),
        (15, "11-15"),
        (16, "16-25"),
        (20, "16-25"),
        (21, "16-25"),
        (25, "16-25"),
        (26, "26-30"),
        (30, "26-30"),
        (31, "31-35"),
        (35, "31-35"),
        (36, "36-40"),
        (40, "36-40"),
        (41, "41+"),
        (49, "41+"),
    ],
)
def test_andar_bahar_brackets_of_the_rule_book(count: int, label: str) -> None:
    """L3553–3567, C19: 16–25 is one bracket in the rule book."""
    assert bracket_label(count) == label
    assert bracket_label(count, RULE_BOOK_BRACKETS) == label


@pytest.mark.parametrize(
    ("count", "label"),
    [(15, "11-15"), (16, "16-20"), (20, "16-20"), (21, "21-25"), (25, "21-25"), (26, "26-30")],
)
def test_andar_bahar_five_wide_brackets_are_a_config_choice(count: int, label: str) -> None:
    """C19's alternative reading (16–20, 21–25) through the engine."""
    brackets = [1, 6, 11, 16, 21, 26, 31, 36, 41]
    eng = engine("andar_bahar", count_brackets=brackets)
    result = settled(run(eng, *OPEN, "5H", *others("5")[: count - 1], "5D"))
    assert result["cards_dealt"] == count
    assert result["cards_bracket"] == label


@pytest.mark.parametrize(
    ("count", "label"),
    [(15, "11-15"), (16, "16-25"), (25, "16-25"), (26, "26-30"), (40, "36-40"), (41, "41+")],
)
def test_andar_bahar_bracket_boundaries_through_the_engine(count: int, label: str) -> None:
    eng = engine("andar_bahar")
    result = settled(run(eng, *OPEN, "JC", *others("J")[: count - 1], "JD"))
    assert (result["cards_dealt"], result["cards_bracket"]) == (count, label)
    assert result["winner"] == ("andar" if count % 2 else "bahar")


def test_bracket_label_refuses_a_count_below_the_first_bracket() -> None:
    with pytest.raises(ValueError, match="no bracket"):
        bracket_label(0)


@pytest.mark.parametrize(
    ("joker", "ace", "facts"),
    [
        # L3573–3595: colour, suit, rank against 7 and against 8.
        ("7H", "high", ("red", "hearts", "equal", "lower")),
        ("8S", "high", ("black", "spades", "higher", "equal")),
        ("6D", "high", ("red", "diamonds", "lower", "lower")),
        ("9C", "high", ("black", "clubs", "higher", "higher")),
        ("2C", "high", ("black", "clubs", "lower", "lower")),
        ("TD", "high", ("red", "diamonds", "higher", "higher")),
        ("KS", "high", ("black", "spades", "higher", "higher")),
        ("AD", "high", ("red", "diamonds", "higher", "higher")),
        ("AD", "low", ("red", "diamonds", "lower", "lower")),
        ("AS", "low", ("black", "spades", "lower", "lower")),
    ],
)
def test_andar_bahar_joker_card_facts(joker: str, ace: str, facts: tuple[str, ...]) -> None:
    eng = engine("andar_bahar", ace=ace)
    match = next(c for c in DECK if c[0] == joker[0] and c != joker)
    result = settled(run(eng, *OPEN, joker, match))
    colour, suit, vs_7, vs_8 = facts
    assert result["joker"] == {
        "card": joker,
        "colour": colour,
        "suit": suit,
        "vs_7": vs_7,
        "vs_8": vs_8,
    }


def test_compare_rank_ace_default_is_high() -> None:
    assert compare_rank(parse_card("AH"), 7) == "higher"
    assert compare_rank(parse_card("AH"), 8, "low") == "lower"


def test_andar_bahar_cards_are_face_up_and_public() -> None:
    eng = engine("andar_bahar")
    run(eng, *OPEN, "QH")
    assert eng.conceals(parse_event({"type": "card", "card": "2C"})) is False
    run(eng, "2C", "3C")
    assert eng.snapshot()["coup"] == {"joker": ["QH"], "andar": ["2C"], "bahar": ["3C"]}


def test_andar_bahar_has_no_decision_and_no_window() -> None:
    eng = engine("andar_bahar")
    run(eng, *OPEN, "QH")
    out = run(eng, {"type": "decision", "box": 1, "action": "play"})
    assert codes(out) == ["not_for_this_game"]
    assert codes(run(eng, CONFIRM)) == ["wrong_card_count"]  # the next side's card is due


def test_andar_bahar_joker_card_is_never_a_real_joker() -> None:
    """§3.0 (4): no jokers in Andar Bahar's deck (the "Joker Card" is an ordinary card)."""
    eng = engine("andar_bahar")
    out = run(eng, *OPEN, "JK")
    assert codes(out) == ["joker_not_allowed"]
    assert eng.phase == "pending_decision"


# --- Side Bet City (seed-001 §3.18) ---------------------------------------------------------------


def sbc(*cards: str) -> dict[str, Any]:
    """Deal seven cards in the three stages (L3431–3435) and return the settled result."""
    eng = engine("side_bet_city")
    a, b, c = cards[:3], cards[3:5], cards[5:]
    out = run(eng, *SHUFFLED, *OPEN, *a, CONFIRM, *b, CONFIRM, *c)
    assert codes(out) == []
    return settled(out)


def lines(result: dict[str, Any]) -> tuple[str | None, str | None, str | None, bool]:
    return (
        result["three_card"]["paying_hand"],
        result["five_card"]["paying_hand"],
        result["seven_card"]["paying_hand"],
        result["all_lose"],
    )


def test_side_bet_city_worked_example() -> None:
    result = sbc("AH", "KH", "QH", "JH", "TH", "2C", "2D")
    assert result == {
        "board": {"cards": ["AH", "KH", "QH", "JH", "TH", "2C", "2D"]},
        "three_card": {
            "cards": ["AH", "KH", "QH"],
            "hand": "mini royal",
            "category": "straight_flush",
            "best": ["AH", "KH", "QH"],
            "paying_hand": "royal_flush",
            "wins": True,
        },
        "five_card": {
            "cards": ["AH", "KH", "QH", "JH", "TH"],
            "hand": "royal flush",
            "category": "straight_flush",
            "best": ["AH", "KH", "QH", "JH", "TH"],
            "paying_hand": "royal_flush",
            "wins": True,
        },
        "seven_card": {
            "cards": ["AH", "KH", "QH", "JH", "TH", "2C", "2D"],
            "hand": "royal flush",
            "category": "straight_flush",
            "best": ["AH", "KH", "QH", "JH", "TH"],
            "paying_hand": "royal_flush",
            "wins": True,
        },
        "all_lose": False,
    }


@pytest.mark.parametrize(
    ("name", "cards", "expected"),
    [
        # L3453–3455, L3486–3487: a 3-card straight is a straight (5:1), above a flush (4:1).
        ("3c-straight-mixed-suits", "9H 8C 7D 2S 4H KC 5D", ("straight", None, None, False)),
        ("3c-flush-not-in-sequence", "KC 9C JC 2S 4H 6D 5D", ("flush", None, None, False)),
        ("3c-a23-is-a-straight", "AD 2C 3S 9H 7S KD QC", ("straight", None, None, False)),
        ("3c-straight-flush", "KD QD JD 2S 4H 6C 8C", ("straight_flush", None, None, False)),
        (
            "3c-three-of-a-kind",
            "KD KH KC 2S 4H 6D 8C",
            ("three_of_a_kind", "three_of_a_kind", "three_of_a_kind", False),
        ),
        # L3457 any pair pays in the 3 card hand; the 5 card hand pays only JJ–AA (L3477).
        ("3c-pair-of-twos-5c-no", "2D 2H 9C 5S 7H KC 4D", ("any_pair", None, None, False)),
        ("5c-pair-of-tens-loses", "TD TH 9C 5S 7H 2C 4D", ("any_pair", None, None, False)),
        ("5c-pair-of-jacks-wins", "JD 4H 9C JS 7H 2C 3D", (None, "pair_jj_aa", None, False)),
        ("5c-pair-of-aces-wins", "AD 4H 9C 6S AH 2C 3D", (None, "pair_jj_aa", None, False)),
        # Two pairs pay only in the 5 card hand (L3475, L3489).
        ("5c-two-pairs-7c-none", "9D 4H 9C 4S KH 2C 3D", ("any_pair", "two_pairs", None, False)),
        ("5c-wheel-straight", "AD 2H 4C 3S 5H KC KD", (None, "straight", "straight", False)),
        (
            "5c-full-house",
            "QD QH QC 3S 3H 8C 9D",
            ("three_of_a_kind", "full_house", "full_house", False),
        ),
        (
            "7c-four-of-a-kind",
            "6D 6H 2C 6S 9H 6C KD",
            ("any_pair", "three_of_a_kind", "four_of_a_kind", False),
        ),
        ("7c-flush-only", "2H 9H 4C KH 7S 5H JH", (None, None, "flush", False)),
        ("7c-royal-late", "AS 2D 3C KS QS JS TS", ("straight", None, "royal_flush", False)),
        ("7c-straight-flush", "9C 2D 8C KH 7C 6C 5C", (None, None, "straight_flush", False)),
        ("7c-trips-late", "8D 2H 5C KS 9S 8C 8H", (None, None, "three_of_a_kind", False)),
        ("7c-two-pairs-do-not-win", "2D 7H 9C KS 4H 9D KD", (None, None, None, True)),
        # L3437: All Lose wins when none of the three wins.
        ("all-lose", "2C 7D 9H KS 4C 8D JH", (None, None, None, True)),
        ("all-lose-pair-of-tens", "2C 7D TH KS TC 8D 4H", (None, None, None, True)),
    ],
)
def test_side_bet_city_paying_hands(
    name: str, cards: str, expected: tuple[str | None, str | None, str | None, bool]
) -> None:
    result = sbc(*cards.split())
    assert lines(result) == expected, name
    for key in ("three_card", "five_card", "seven_card"):
        assert result[key]["wins"] is (result[key]["paying_hand"] is not None)


def test_side_bet_city_three_card_straight_ranks_above_flush() -> None:
    """L3486–3487 (5:1 over 4:1); the evaluator's 3-card order."""
    straight = evaluate3([parse_card(c) for c in ("2H", "3C", "4D")])
    flush = evaluate3([parse_card(c) for c in ("AC", "KC", "9C")])
    assert straight > flush
    assert (three_card_line(straight), three_card_line(flush)) == ("straight", "flush")


def test_side_bet_city_five_card_pair_line_starts_at_jacks() -> None:
    tens = evaluate5([parse_card(c) for c in ("TH", "TC", "AS", "KD", "2C")])
    jacks = evaluate5([parse_card(c) for c in ("JH", "JC", "2S", "3D", "4C")])
    assert (five_card_line(tens), five_card_line(jacks)) == (None, "pair_jj_aa")


def test_side_bet_city_stages_are_decision_windows() -> None:
    """L3431–3435: 3 cards, then +2, then +2; the dealer closes each stage with ``confirm``."""
    eng = engine("side_bet_city")
    run(eng, *OPEN, "2C", "3C")
    assert codes(run(eng, CONFIRM)) == ["wrong_card_count"]  # card 3 still due
    run(eng, "4C")
    assert eng.phase == "dealing"
    out = run(eng, "5C")  # card 4 before the window closed
    assert codes(out) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"
    run(eng, CONFIRM)  # the supervisor lets the deal go on
    assert eng.phase == "dealing"
    run(eng, "6C", CONFIRM, "7C")
    result = settled(run(eng, "8C"))
    assert result["board"]["cards"] == ["2C", "3C", "4C", "5C", "6C", "7C", "8C"]
    assert lines(result) == ("straight_flush", "straight_flush", "straight_flush", False)


def test_side_bet_city_card_of_the_last_stage_before_its_window() -> None:
    eng = engine("side_bet_city")
    run(eng, *OPEN, "2C", "3D", "4H", CONFIRM, "9S", "JD")
    assert codes(run(eng, "KC")) == ["card_before_decisions"]


def test_side_bet_city_takes_no_decision() -> None:
    eng = engine("side_bet_city")
    run(eng, *OPEN, "2C")
    assert codes(run(eng, {"type": "decision", "box": 1, "action": "fold"})) == [
        "not_for_this_game"
    ]


def test_side_bet_city_settles_a_repeated_card_the_supervisor_let_through() -> None:
    """A repeat is held (``composition_exceeded``); settled on confirm, it is ranked as dealt."""
    eng = engine("side_bet_city")
    out = run(eng, *OPEN, "AH", "KH", "QH", CONFIRM, "JC", "JC")
    assert codes(out) == ["composition_exceeded"]
    run(eng, CONFIRM, CONFIRM)
    result = settled(run(eng, "2C", "3D"))
    assert result["five_card"]["hand"] == "pair of jacks"
    assert result["five_card"]["best"] == ["AH", "KH", "QH", "JC", "JC"]
    assert lines(result) == ("royal_flush", "pair_jj_aa", None, False)


# --- Speedy 7 (seed-001 §3.19) --------------------------------------------------------------------


def speedy(*cards: str) -> list[Event]:
    """Seven cards, each after the betting window before it closed (C22: seven rounds)."""
    events: list[Event] = [cards[0]]
    for card in cards[1:]:
        events += [CONFIRM, card]
    return events


def test_speedy7_worked_example() -> None:
    eng = engine("speedy7")
    cards = ("AH", "KD", "2S", "3C", "4C", "5C", "6H")
    out = run(eng, *SHUFFLED, *OPEN, *speedy(*cards))
    assert codes(out) == []
    assert settled(out) == {
        "cards": list(cards),
        "colours": ["red", "red", "black", "black", "black", "black", "red"],
        "counts": {"red": 3, "black": 4},
        "runs": [
            {"colour": "red", "length": 2},
            {"colour": "black", "length": 4},
            {"colour": "red", "length": 1},
        ],
        "longest_run": {"colour": "black", "length": 4},
    }


def test_speedy7_one_card_per_betting_round() -> None:
    """L2517: card 1 after the first betting round (bets_closed); card k after window k-1."""
    eng = engine("speedy7")
    run(eng, *OPEN)
    assert codes(run(eng, CONFIRM)) == ["wrong_card_count"]  # card 1 is due first
    for n, card in enumerate(("2H", "3H", "4H", "5H", "6H", "7H"), start=1):
        assert codes(run(eng, card)) == []
        assert eng.phase == "dealing"
        assert eng.snapshot()["coup"] == {"cards": [c + "H" for c in "234567"[:n]]}
        assert codes(run(eng, CONFIRM)) == []
    result = settled(run(eng, "8H"))
    assert result["colours"] == ["red"] * 7
    assert result["longest_run"] == {"colour": "red", "length": 7}


def test_speedy7_card_before_the_window_closed_is_held() -> None:
    eng = engine("speedy7")
    run(eng, *OPEN, "2H")
    out = run(eng, "3S")
    assert codes(out) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"
    assert codes(run(eng, CONFIRM)) == []  # supervisor: go on
    assert eng.phase == "dealing"
    result = settled(run(eng, CONFIRM, *speedy("4S", "5S", "6S", "7S", "8S")))
    assert result["cards"] == ["2H", "3S", "4S", "5S", "6S", "7S", "8S"]
    assert result["longest_run"] == {"colour": "black", "length": 6}


def test_speedy7_decisions_are_not_deal_decisions() -> None:
    """Cash-out / no action (L2519–2525) are bets, not events of the deal."""
    eng = engine("speedy7")
    run(eng, *OPEN, "2H")
    assert codes(run(eng, {"type": "decision", "box": 1, "action": "play"})) == [
        "not_for_this_game"
    ]


def test_runs_of_colours() -> None:
    assert runs([]) == []
    assert runs(["red", "red", "black"]) == [
        {"colour": "red", "length": 2},
        {"colour": "black", "length": 1},
    ]


# --- common irregularities ------------------------------------------------------------------------

ROUNDS: dict[str, tuple[list[Event], list[Event]]] = {
    # game: (a complete round after bets_closed, the first card or cards of a round)
    "andar_bahar": (["QH", "2C", "QS"], ["QH"]),
    "side_bet_city": (["2C", "7D", "9H", CONFIRM, "KS", "4C", CONFIRM, "8D", "JH"], ["2C"]),
    "speedy7": (speedy("AH", "KD", "2S", "3C", "4C", "5C", "6H"), ["AH"]),
}


@pytest.mark.parametrize("game", sorted(ROUNDS))
def test_extra_card_after_the_round_and_per_round_reshuffle(game: str) -> None:
    eng = engine(game)
    complete, _ = ROUNDS[game]
    out = run(eng, *SHUFFLED, *OPEN, *complete)
    assert settled(out)
    assert eng.phase == "shoe_end"
    assert codes(run(eng, "5H")) == ["extra_card"]
    assert codes(run(eng, {"type": "round_open"})) == ["shuffle_required"]
    out = run(eng, *SHUFFLED, *OPEN, *complete)
    assert settled(out)
    assert (outcomes(out)[0].round) == "T1-000002"


@pytest.mark.parametrize("game", sorted(ROUNDS))
@pytest.mark.parametrize("kind", ["wrong_count", "card_exposed"])
def test_deal_error_voids_the_round_with_bets_returned(game: str, kind: str) -> None:
    """No irregularity rule in §3.8a/§3.18/§3.19: seed-001 G1 (L59), technical shortcomings →
    odds of 1 (a refund)."""
    eng = engine(game)
    _, started = ROUNDS[game]
    run(eng, *SHUFFLED, *OPEN, *started)
    out = run(eng, {"type": "deal_error", "kind": kind, "position": "board", "cards": 2})
    (outcome,) = outcomes(out)
    assert outcome.status == "void"
    assert outcome.reason == "misdeal"
    assert outcome.result is not None
    assert outcome.result["remedy"] == "refund"
    assert outcome.result["rule"] == "seed-001 G1 L59"
    assert eng.phase == "shoe_end"


@pytest.mark.parametrize("game", sorted(ROUNDS))
def test_device_faults_void_the_round(game: str) -> None:
    eng = engine(game)
    run(eng, *SHUFFLED, *OPEN)
    (before,) = outcomes(run(eng, {"type": "fault", "code": "jam"}))
    assert (before.status, before.reason) == ("void", HAND_CANCELLED)
    eng = engine(game)
    _, started = ROUNDS[game]
    run(eng, *SHUFFLED, *OPEN, *started)
    (during,) = outcomes(run(eng, {"type": "fault", "code": "jam"}))
    assert (during.status, during.reason) == ("void", "device_fault")


@pytest.mark.parametrize("game", sorted(ROUNDS))
def test_a_card_during_betting_is_a_misdeal(game: str) -> None:
    eng = engine(game)
    out = run(eng, *SHUFFLED, {"type": "round_open"}, "2C")
    (outcome,) = outcomes(out)
    assert (outcome.status, outcome.reason) == ("void", "misdeal")


# --- config ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules", "match"),
    [
        ("andar_bahar", {"first_side": "left"}, "first_side"),
        ("andar_bahar", {"first_side": 1}, "first_side"),
        ("andar_bahar", {"ace": "middle"}, "ace"),
        ("andar_bahar", {"count_brackets": []}, "count_brackets"),
        ("andar_bahar", {"count_brackets": [2, 6]}, "start at 1"),
        ("andar_bahar", {"count_brackets": [1, 6, 6]}, "increase"),
        ("andar_bahar", {"count_brackets": [1, 10, 5]}, "increase"),
        ("andar_bahar", {"count_brackets": [1, 50]}, "cannot be reached"),
        ("andar_bahar", {"count_brackets": [1, "6"]}, "count_brackets"),
        ("andar_bahar", {"decks": 2}, "decks"),
        ("andar_bahar", {"jokers_per_deck": 1}, "jokers_per_deck"),
        ("andar_bahar", {"ranks": "6789TJQKA"}, "ranks"),
        ("andar_bahar", {"variant": "x"}, "variant"),
        ("side_bet_city", {"decks": 2}, "decks"),
        ("side_bet_city", {"first_side": "andar"}, "first_side"),
        ("speedy7", {"reshuffle": "shoe"}, "reshuffle"),
        ("speedy7", {"decks": 0}, "decks"),
    ],
)
def test_bad_rules_are_config_errors(game: str, rules: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        engine(game, **rules)


def test_andar_bahar_rule_book_defaults() -> None:
    rules = engine("andar_bahar").game_rules.rules
    dumped = rules.model_dump()
    assert dumped["first_side"] == "andar"
    assert dumped["ace"] == "high"
    assert dumped["count_brackets"] == [1, 6, 11, 16, 26, 31, 36, 41]
    assert (dumped["decks"], dumped["jokers_per_deck"]) == (1, 0)
    one = engine("andar_bahar", count_brackets=[1]).game_rules.rules.model_dump()
    assert one["count_brackets"] == [1]


# --- properties: random decks through the engine --------------------------------------------------

decks = st.permutations(DECK)


@settings(max_examples=150, deadline=None)
@given(deck=decks, first_side=st.sampled_from(["andar", "bahar"]))
def test_andar_bahar_always_ends_on_the_first_rank_match(deck: list[str], first_side: str) -> None:
    eng = engine("andar_bahar", first_side=first_side)
    run(eng, *OPEN)
    joker, rest = deck[0], deck[1:]
    match = next(i for i, c in enumerate(rest) if c[0] == joker[0])  # independent: 0-based
    out = run(eng, joker)
    for card in rest[: match + 1]:
        assert outcomes(out) == []
        out = run(eng, card)
    result = settled(out)
    dealt = rest[: match + 1]
    second = "bahar" if first_side == "andar" else "andar"
    assert result["after_joker"] == dealt
    assert result["cards_dealt"] == match + 1 <= MAX_AFTER_JOKER
    assert result["winner"] == (first_side if match % 2 == 0 else second)
    assert result[first_side]["cards"] == dealt[0::2]
    assert result[second]["cards"] == dealt[1::2]
    assert result["winning_card"]["card"] == rest[match]
    assert result["winning_card"]["colour"] == ("red" if rest[match][1] in "HD" else "black")
    assert result["joker"]["card"] == joker
    assert result["cards_bracket"] == bracket_label(match + 1)
    if match + 1 < len(rest):
        assert codes(run(eng, rest[match + 1])) == ["extra_card"]


_ORDER = "23456789TJQKA"
_RANKING = [
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
    "royal_flush",
]


def _values(cards: Sequence[str]) -> list[int]:
    return sorted((_ORDER.index(c[0]) + 2 for c in cards), reverse=True)


def _straight(values: list[int]) -> bool:
    distinct = sorted(set(values))
    if len(distinct) != len(values):
        return False
    low_ace = sorted(1 if v == 14 else v for v in distinct)
    return distinct[-1] - distinct[0] == len(values) - 1 or (
        low_ace[-1] - low_ace[0] == len(values) - 1
    )


def _category5(cards: Sequence[str]) -> str:
    values = _values(cards)
    shape = sorted(Counter(values).values(), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    straight = _straight(values)
    if straight and flush:
        return "royal_flush" if values[-1] == 10 else "straight_flush"
    if shape[0] == 4:
        return "four_of_a_kind"
    if shape == [3, 2]:
        return "full_house"
    if flush:
        return "flush"
    if straight:
        return "straight"
    if shape[0] == 3:
        return "three_of_a_kind"
    if shape[:2] == [2, 2]:
        return "two_pair"
    return "pair" if shape[0] == 2 else "high_card"


def _line3(cards: Sequence[str]) -> str | None:
    values = _values(cards)
    flush = len({c[1] for c in cards}) == 1
    if _straight(values):
        if flush:
            return "royal_flush" if values == [14, 13, 12] else "straight_flush"
        return "straight"
    shape = sorted(Counter(values).values(), reverse=True)
    if shape[0] == 3:
        return "three_of_a_kind"
    if flush:
        return "flush"
    return "any_pair" if shape[0] == 2 else None


def _line5(cards: Sequence[str]) -> str | None:
    category = _category5(cards)
    if category == "pair":
        pair = next(v for v, n in Counter(_values(cards)).items() if n == 2)
        return "pair_jj_aa" if pair >= 11 else None
    return {"high_card": None, "two_pair": "two_pairs"}.get(category, category)


def _line7(cards: Sequence[str]) -> str | None:
    best = max((_category5(sub) for sub in itertools.combinations(cards, 5)), key=_RANKING.index)
    return None if best in ("high_card", "pair", "two_pair") else best


@settings(max_examples=150, deadline=None)
@given(deck=decks)
def test_side_bet_city_random_boards_match_an_independent_ranking(deck: list[str]) -> None:
    board = deck[:7]
    result = sbc(*board)
    expected = (_line3(board[:3]), _line5(board[:5]), _line7(board))
    assert lines(result)[:3] == expected
    assert result["all_lose"] is (expected == (None, None, None))
    assert result["board"]["cards"] == board
    assert result["three_card"]["cards"] == board[:3]
    assert result["five_card"]["cards"] == board[:5]


@settings(max_examples=100, deadline=None)
@given(deck=decks)
def test_speedy7_random_decks_report_every_colour(deck: list[str]) -> None:
    cards = deck[:7]
    eng = engine("speedy7")
    result = settled(run(eng, *OPEN, *speedy(*cards)))
    colours = ["red" if c[1] in "HD" else "black" for c in cards]
    assert result["cards"] == cards
    assert result["colours"] == colours
    assert result["counts"] == {"red": colours.count("red"), "black": colours.count("black")}
    assert sum(r["length"] for r in result["runs"]) == 7
    longest = max(len(list(g)) for _, g in itertools.groupby(colours))
    assert result["longest_run"]["length"] == longest
    assert codes(run(eng, deck[7])) == ["extra_card"]
