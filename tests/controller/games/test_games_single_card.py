"""21 Bet, Jokerbet and Top Card through the real card engine (seed-001 §3.20, §3.21, §3.23).

Every case cites the rule book (``seed-001`` = ``shared/rules/seed-001-live-casino-regulations.md``,
``L…`` = source line). Tests marked ``xfail(strict=True)`` state what the rule book wants and the
framework cannot do yet (docs/games/single_card.md, "Framework changes"): they fail loudly once
the framework is changed, so the marker (and the doc) must go.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.single_card import (
    FOREIGN_CARD,
    JOKER_UNIDENTIFIED,
    Bet21,
    Jokerbet,
    TopCard,
    bet21_next,
    bet21_points,
    golden_point,
    jokerbet_facts,
    top_card_value,
)
from tablectl.drivers.cards import RANKS, SUITS, parse_card

# -- helpers -------------------------------------------------------------------------------------


def engine(game: str, **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def feed(eng: CardEngine, *events: dict[str, Any]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out += eng.apply(parse_event(event))
    return out


def cards(*codes: str) -> list[dict[str, Any]]:
    return [{"type": "card", "card": c} for c in codes]


OPEN = ({"type": "round_open"}, {"type": "bets_closed"})


def outcomes(out: list[EngineOutput]) -> list[Outcome]:
    return [o for o in out if isinstance(o, Outcome)]


def codes(out: list[EngineOutput]) -> list[str]:
    return [o.code for o in out if isinstance(o, Verdict)]


def settled(out: list[EngineOutput]) -> dict[str, Any]:
    (outcome,) = outcomes(out)
    assert outcome.status == "settled", outcome
    assert outcome.result is not None
    return outcome.result


# -- 21 Bet (seed-001 §3.21, L3495–3537) ---------------------------------------------------------

DECK36 = [r + s for s in SUITS for r in "6789TJQKA"]


def test_bet21_catalog_and_script() -> None:
    eng = engine("bet21")
    assert isinstance(eng.game_rules, Bet21)
    assert eng.game == "bet21"
    # L3497: two cards to player 1, then two to player 2; all face up.
    assert [(s.position, s.face) for s in Bet21.script.slots(())] == [
        ("player1", "up"),
        ("player1", "up"),
        ("player2", "up"),
        ("player2", "up"),
    ]
    assert Bet21.script.reshuffle == "every_round"


@pytest.mark.parametrize(
    ("codes_", "points"),
    [
        (["6S", "TS"], 16),  # L3499: 6–10 face value
        (["JS", "QS", "KS"], 9),  # L3499: J = 2, Q = 3, K = 4
        (["AS", "TS"], 21),  # A = 11
        (["AS", "6S"], 17),  # soft 17
        (["AS", "KS", "9S"], 14),  # A = 1 when 11 would bust
        (["AS", "AH"], 12),  # two aces: 1 + 11
        (["TS", "9S", "6S"], 25),
    ],
)
def test_bet21_points(codes_: list[str], points: int) -> None:
    assert bet21_points([parse_card(c) for c in codes_]) == points


@pytest.mark.parametrize(
    ("codes_", "golden"),
    [
        (["AS", "TS"], True),  # 21 at once
        (["AS", "AH"], True),  # "two Aces are considered a winning combination" (L3497)
        (["TS", "8S", "KS"], False),  # 22 with three cards: not at once (and bust)
        (["7S", "7H", "7D"], False),  # 21 with three cards is not a golden point
        (["AS", "KS"], False),  # 15
    ],
)
def test_bet21_golden_point(codes_: list[str], golden: bool) -> None:
    assert golden_point([parse_card(c) for c in codes_]) is golden


# (case id, cards in deal order, rules, expected facts). Every result field is asserted.
BET21_CASES: list[tuple[str, list[str], dict[str, Any], dict[str, Any]]] = [
    (
        "L3497-golden-point-on-the-deal-player1",
        ["AH", "TS", "9C", "8D"],
        {},
        {
            "player1": ["AH", "TS"],
            "player2": ["9C", "8D"],
            "points": (21, 17),
            "golden": (True, False),
            "winner": "player1",
            "winner_cards": 2,
            "winner_points": 21,
            "golden_point": True,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-two-aces-golden-point-player2-although-player1-is-below-17",
        ["9H", "6S", "AC", "AD"],
        {},
        {
            "player1": ["9H", "6S"],
            "player2": ["AC", "AD"],
            "points": (15, 12),
            "golden": (False, True),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 12,
            "golden_point": True,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-both-golden-points-draw",
        ["AS", "TS", "TH", "AH"],
        {},
        {
            "player1": ["AS", "TS"],
            "player2": ["TH", "AH"],
            "points": (21, 21),
            "golden": (True, True),
            "winner": "draw",
            "winner_cards": None,
            "winner_points": None,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-both-17-or-more-no-card-added-closest-to-21-wins",
        ["TS", "7S", "TH", "8H"],
        {},
        {
            "player1": ["TS", "7S"],
            "player2": ["TH", "8H"],
            "points": (17, 18),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 18,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-draw-equal-points-17-or-more",
        ["TS", "7S", "9H", "8H"],
        {},
        {
            "player1": ["TS", "7S"],
            "player2": ["9H", "8H"],
            "points": (17, 17),
            "winner": "draw",
            "winner_cards": None,
            "winner_points": None,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-soft-17-stands",
        ["AS", "6S", "9H", "9D"],
        {},
        {
            "player1": ["AS", "6S"],
            "player2": ["9H", "9D"],
            "points": (17, 18),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 18,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 0,
            "limit_reached": False,
        },
    ),
    (
        "L3497-only-the-player-below-17-draws-then-busts",
        ["9H", "6H", "TH", "8H", "7C"],
        {},
        {
            "player1": ["9H", "6H", "7C"],
            "player2": ["TH", "8H"],
            "points": (22, 18),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 18,
            "golden_point": False,
            "bust": True,
            "draw_rounds": 1,
            "limit_reached": False,
        },
    ),
    (
        "L3497-player2-below-17-draws-player1-stands",
        ["TH", "8H", "9H", "6H", "KC"],
        {},
        {
            "player1": ["TH", "8H"],
            "player2": ["9H", "6H", "KC"],
            "points": (18, 19),
            "winner": "player2",
            "winner_cards": 3,
            "winner_points": 19,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 1,
            "limit_reached": False,
        },
    ),
    (
        "L3497-both-draw-one-card-each-round-player1-first",
        ["6S", "7S", "6H", "8H", "6C", "KD"],
        {},
        {
            "player1": ["6S", "7S", "6C"],
            "player2": ["6H", "8H", "KD"],
            "points": (19, 18),
            "winner": "player1",
            "winner_cards": 3,
            "winner_points": 19,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 1,
            "limit_reached": False,
        },
    ),
    (
        "L3497-a-bust-ends-the-deal-at-once-player2-draws-no-more",
        ["TS", "JS", "TH", "QH", "TD"],
        {},
        {
            "player1": ["TS", "JS", "TD"],
            "player2": ["TH", "QH"],
            "points": (22, 13),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 13,
            "golden_point": False,
            "bust": True,
            "draw_rounds": 1,
            "limit_reached": False,
        },
    ),
    (
        "L3497-player2-busts-on-the-second-draw-round",
        ["JS", "QS", "JH", "QH", "TS", "TH", "AS", "9H"],
        {},
        {
            "player1": ["JS", "QS", "TS", "AS"],
            "player2": ["JH", "QH", "TH", "9H"],
            "points": (16, 24),
            "winner": "player1",
            "winner_cards": 4,
            "winner_points": 16,
            "golden_point": False,
            "bust": True,
            "draw_rounds": 2,
            "limit_reached": False,
        },
    ),
    (
        "L3499-ace-counts-1-when-11-busts",
        ["AH", "KH", "TS", "7S", "9C", "8C"],
        {},
        {
            "player1": ["AH", "KH", "9C", "8C"],
            "player2": ["TS", "7S"],
            "points": (22, 17),
            "winner": "player2",
            "winner_cards": 2,
            "winner_points": 17,
            "golden_point": False,
            "bust": True,
            "draw_rounds": 2,
            "limit_reached": False,
        },
    ),
    (
        "C23-win-with-5-cards-at-the-limit",
        ["JS", "QS", "JH", "QH", "KS", "KH", "JD", "JC", "QD", "KD"],
        {},
        {
            "player1": ["JS", "QS", "KS", "JD", "QD"],
            "player2": ["JH", "QH", "KH", "JC", "KD"],
            "points": (14, 15),
            "winner": "player2",
            "winner_cards": 5,
            "winner_points": 15,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 3,
            "limit_reached": True,
        },
    ),
    (
        "C23-three-cards-in-all-reading-max_extra_cards-1",
        ["JS", "QS", "JH", "QH", "KS", "KH"],
        {"max_extra_cards": 1},
        {
            "player1": ["JS", "QS", "KS"],
            "player2": ["JH", "QH", "KH"],
            "points": (9, 9),
            "winner": "draw",
            "winner_cards": None,
            "winner_points": None,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 1,
            "limit_reached": True,
        },
    ),
    (
        "C23-dealing_rounds-2",
        ["JS", "QS", "JH", "KH", "KS", "KC"],
        {"dealing_rounds": 2},
        {
            "player1": ["JS", "QS", "KS"],
            "player2": ["JH", "KH", "KC"],
            "points": (9, 10),
            "winner": "player2",
            "winner_cards": 3,
            "winner_points": 10,
            "golden_point": False,
            "bust": False,
            "draw_rounds": 1,
            "limit_reached": True,
        },
    ),
]


@pytest.mark.parametrize(
    ("deal", "rules", "want"), [c[1:] for c in BET21_CASES], ids=[c[0] for c in BET21_CASES]
)
def test_bet21_rounds(deal: list[str], rules: dict[str, Any], want: dict[str, Any]) -> None:
    eng = engine("bet21", **rules)
    out = feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 36}, *OPEN)
    for code in deal[:-1]:
        step = feed(eng, *cards(code))
        assert step == [], (code, step)  # nothing settles before the last card
        assert not eng.conceals(parse_event(cards(code)[0]))  # every card face up (L3497)
    result = settled(feed(eng, *cards(deal[-1])))
    p1, p2 = want["points"]
    g1, g2 = want.get("golden", (False, False))
    assert result == {
        "player1": {
            "cards": want["player1"],
            "points": p1,
            "bust": p1 > 21,
            "golden_point": g1,
        },
        "player2": {
            "cards": want["player2"],
            "points": p2,
            "bust": p2 > 21,
            "golden_point": g2,
        },
        "winner": want["winner"],
        "winner_cards": want["winner_cards"],
        "winner_points": want["winner_points"],
        "golden_point": want["golden_point"],
        "bust": want["bust"],
        "draw_rounds": want["draw_rounds"],
        "limit_reached": want["limit_reached"],
        "foreign_cards": [],
        "irregular": None,
    }
    assert out == []
    # The deal is over: one more card is not played (seed-001 §3.0 (2)), and the next round
    # needs a new shuffle (every_round).
    assert codes(feed(eng, *cards("6D"))) == ["extra_card"]
    assert codes(feed(eng, {"type": "round_open"})) == ["shuffle_required"]


def test_bet21_both_golden_points_facts() -> None:
    eng = engine("bet21")
    result = settled(feed(eng, *OPEN, *cards("AS", "TS", "AH", "AD")))
    assert result["winner"] == "draw"
    assert result["player1"]["golden_point"] is True
    assert result["player2"]["golden_point"] is True


def test_bet21_foreign_card_holds_the_round_and_leaves_no_winner() -> None:
    # L3499: the deck is 6 to A; a 2–5 proves a wrong deck: the shoe holds the round
    # (rank_not_in_deck) and the deal stops (no draw for player 1 at 15).
    eng = engine("bet21")
    out = feed(eng, *OPEN, *cards("5H"))
    assert codes(out) == ["rank_not_in_deck"]
    assert eng.phase == "pending_decision"
    assert feed(eng, *cards("TS", "9H", "6D")) == []
    # The supervisor lets the round settle: no winner, the flag and the foreign card.
    result = settled(feed(eng, {"type": "confirm"}))
    assert result["winner"] is None
    assert result["winner_cards"] is None
    assert result["winner_points"] is None
    assert result["irregular"] == FOREIGN_CARD
    assert result["foreign_cards"] == ["5H"]
    assert result["player1"] == {
        "cards": ["5H", "TS"],
        "points": 15,
        "bust": False,
        "golden_point": False,
    }
    assert result["draw_rounds"] == 0
    assert result["limit_reached"] is False


def test_bet21_foreign_card_in_a_draw_then_void() -> None:
    eng = engine("bet21")
    out = feed(eng, *OPEN, *cards("6S", "7S", "TH", "8H", "2C"))
    assert codes(out) == ["rank_not_in_deck"]
    (void,) = outcomes(feed(eng, {"type": "void", "reason": "foreign_card"}))
    assert (void.status, void.reason) == ("void", "foreign_card")
    assert void.result is not None
    assert void.result["cards"] == {"player1": ["6S", "7S", "2C"], "player2": ["TH", "8H"]}


def test_bet21_shuffler_counts_36_cards() -> None:
    # L3499: 36 cards; R6: the shuffler's count must match the deck.
    eng = engine("bet21")
    ok = feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 36})
    assert codes(ok) == []
    bad = feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 52})
    assert codes(bad) == ["shuffler_count_mismatch"]


def test_bet21_joker_is_refused_and_not_dealt() -> None:
    eng = engine("bet21")
    out = feed(eng, *OPEN, *cards("JK"))
    assert codes(out) == ["joker_not_allowed"]
    assert eng.phase == "pending_decision"


def test_bet21_repeated_card_is_a_composition_hold() -> None:
    # §10: "No duplicates within a round (single 36-card deck)".
    eng = engine("bet21")
    out = feed(eng, *OPEN, *cards("9S", "9S"))
    assert codes(out) == ["composition_exceeded"]
    assert eng.phase == "pending_decision"


@pytest.mark.parametrize("kind", ["card_exposed", "wrong_count"])
def test_bet21_deal_error_voids_with_refund(kind: str) -> None:
    # §10 "Void / remedy in source: none" → G1 (L59): technical shortcomings → odds of 1.
    eng = engine("bet21")
    feed(eng, *OPEN, *cards("9S", "8S", "7H"))
    out = feed(eng, {"type": "deal_error", "kind": kind, "position": "player2", "cards": 1})
    (outcome,) = outcomes(out)
    assert outcome.status == "void"
    assert outcome.reason == "misdeal"
    assert outcome.result is not None
    assert outcome.result["remedy"] == "refund"
    assert outcome.result["rule"] == "seed-001 G1 L59"
    assert outcome.result["cards"] == {"player1": ["9S", "8S"], "player2": ["7H"]}


def test_bet21_takes_no_decision() -> None:
    eng = engine("bet21")
    out = feed(eng, *OPEN, {"type": "decision", "box": 1, "action": "war"})
    assert codes(out) == ["not_for_this_game"]


def test_bet21_confirm_is_refused_while_cards_are_due() -> None:
    eng = engine("bet21")
    out = feed(eng, *OPEN, *cards("9S"), {"type": "confirm"})
    assert codes(out) == ["wrong_card_count"]


@pytest.mark.parametrize(
    "rules",
    [
        {"dealing_rounds": 0},
        {"dealing_rounds": 9},
        {"max_extra_cards": -1},
        {"max_extra_cards": "3"},  # strict: no strings for ints
        {"decks": 2},
        {"dealing_round": 4},  # unknown key
        {"variant": "bet21"},
        {"ranks": "23456789TJQKA"},  # L3499: the 36-card deck is the game
    ],
)
def test_bet21_bad_rules(rules: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        engine("bet21", **rules)


def _reference_21(
    deck: list[str], dealing_rounds: int, max_extra_cards: int
) -> tuple[list[str], list[str], str]:
    """An independent reading of L3497/L3499 (not the module's code): the hands and the winner."""
    values = {"J": 2, "Q": 3, "K": 4, "T": 10, "A": 1, **{str(n): n for n in range(6, 10)}}

    def pts(hand: list[str]) -> int:
        total = sum(values[c[0]] for c in hand)
        return total + 10 if any(c[0] == "A" for c in hand) and total <= 11 else total

    def golden(hand: list[str]) -> bool:
        return hand[0][0] == hand[1][0] == "A" or pts(hand) == 21

    top = iter(deck)
    p1 = [next(top), next(top)]
    p2 = [next(top), next(top)]
    if golden(p1) or golden(p2):
        if golden(p1) and golden(p2):
            return p1, p2, "draw"
        return p1, p2, "player1" if golden(p1) else "player2"
    busted = False
    for _round in range(dealing_rounds - 1):
        for hand in (p1, p2):
            if pts(hand) < 17 and len(hand) < 2 + max_extra_cards:
                hand.append(next(top))
                if pts(hand) > 21:
                    busted = True
                    break
        if busted:
            break
    if pts(p1) > 21:
        return p1, p2, "player2"
    if pts(p2) > 21:
        return p1, p2, "player1"
    if pts(p1) == pts(p2):
        return p1, p2, "draw"
    return p1, p2, "player1" if pts(p1) > pts(p2) else "player2"


@settings(max_examples=150, deadline=None)
@given(
    deck=st.permutations(DECK36),
    dealing_rounds=st.integers(1, 8),
    max_extra_cards=st.integers(0, 7),
)
def test_bet21_random_decks_match_an_independent_reading(
    deck: list[str], dealing_rounds: int, max_extra_cards: int
) -> None:
    p1, p2, winner = _reference_21(deck, dealing_rounds, max_extra_cards)
    dealt = len(p1) + len(p2)
    eng = engine("bet21", dealing_rounds=dealing_rounds, max_extra_cards=max_extra_cards)
    feed(eng, *OPEN)
    for code in deck[: dealt - 1]:
        assert outcomes(feed(eng, *cards(code))) == []
    result = settled(feed(eng, *cards(deck[dealt - 1])))
    # Terminates within the limits (C23) ...
    extra = min(dealing_rounds - 1, max_extra_cards)
    assert dealt <= 4 + 2 * extra
    assert result["draw_rounds"] <= extra
    assert all(len(result[p]["cards"]) <= 2 + extra for p in ("player1", "player2"))
    # ... and agrees with the independent reading.
    assert result["player1"]["cards"] == p1
    assert result["player2"]["cards"] == p2
    assert result["winner"] == winner
    if winner in ("player1", "player2"):
        assert result["winner_cards"] == len(p1 if winner == "player1" else p2)
    assert result["bust"] == (result["player1"]["bust"] or result["player2"]["bust"])
    assert codes(feed(eng, *cards(deck[dealt]))) == ["extra_card"]


def test_bet21_next_is_pure_of_the_hands() -> None:
    h = [parse_card(c) for c in ("6S", "7S", "6H", "8H", "6C")]
    assert bet21_next(h[:2], h[2:4]) == "player1"
    assert bet21_next(h[:2] + h[4:], h[2:4]) == "player2"
    assert bet21_next(h[:2], h[2:3]) is None  # the deal's cards are the script's
    assert bet21_next(h[:2], h[2:4], dealing_rounds=1) is None


# -- Jokerbet (seed-001 §3.20, L3153–3319) -------------------------------------------------------

DECK54 = [r + s for s in SUITS for r in RANKS] + ["JK1", "JK2"]


JOKERBET_CASES: list[tuple[str, dict[str, Any]]] = [
    (
        "JK1",  # L3155 "red and black" jokers; JK1 = red (items 14, 67, 74, 75)
        {
            "card": "JK1",
            "rank": None,
            "suit": None,
            "joker": True,
            "joker_colour": "red",
            "colour": "red",
            "digital": False,
            "winning_items": ["joker", "joker:red", "colour:red", "non_digital"],
            "irregular": None,
        },
    ),
    (
        "JK2",  # JK2 = black (items 14, 68, 73, 75)
        {
            "card": "JK2",
            "rank": None,
            "suit": None,
            "joker": True,
            "joker_colour": "black",
            "colour": "black",
            "digital": False,
            "winning_items": ["joker", "joker:black", "colour:black", "non_digital"],
            "irregular": None,
        },
    ),
    (
        "TH",  # 10 is "digital" (item 76); hearts red (item 74)
        {
            "card": "TH",
            "rank": "T",
            "suit": "H",
            "joker": False,
            "joker_colour": None,
            "colour": "red",
            "digital": True,
            "winning_items": ["rank:T", "card:TH", "suit:H", "colour:red", "digital"],
            "irregular": None,
        },
    ),
    (
        "2C",  # the lowest rank item; clubs black (item 73)
        {
            "card": "2C",
            "rank": "2",
            "suit": "C",
            "joker": False,
            "joker_colour": None,
            "colour": "black",
            "digital": True,
            "winning_items": ["rank:2", "card:2C", "suit:C", "colour:black", "digital"],
            "irregular": None,
        },
    ),
    (
        "AS",  # A is "non-digital" (item 75)
        {
            "card": "AS",
            "rank": "A",
            "suit": "S",
            "joker": False,
            "joker_colour": None,
            "colour": "black",
            "digital": False,
            "winning_items": ["rank:A", "card:AS", "suit:S", "colour:black", "non_digital"],
            "irregular": None,
        },
    ),
    (
        "QD",
        {
            "card": "QD",
            "rank": "Q",
            "suit": "D",
            "joker": False,
            "joker_colour": None,
            "colour": "red",
            "digital": False,
            "winning_items": ["rank:Q", "card:QD", "suit:D", "colour:red", "non_digital"],
            "irregular": None,
        },
    ),
    (
        "JK",  # a joker without its colour: only "any joker" and "non-digital" settle
        {
            "card": "JK",
            "rank": None,
            "suit": None,
            "joker": True,
            "joker_colour": None,
            "colour": None,
            "digital": False,
            "winning_items": ["joker", "non_digital"],
            "irregular": JOKER_UNIDENTIFIED,
        },
    ),
]


@pytest.mark.parametrize(("card", "want"), JOKERBET_CASES, ids=[c[0] for c in JOKERBET_CASES])
def test_jokerbet_round(card: str, want: dict[str, Any]) -> None:
    eng = engine("jokerbet")
    assert isinstance(eng.game_rules, Jokerbet)
    if card == "JK":  # the supervisor decides first; confirmed, it settles as unidentified
        assert codes(feed(eng, *OPEN, *cards(card))) == [JOKER_UNIDENTIFIED]
        assert eng.phase == "pending_decision"
        assert settled(feed(eng, {"type": "confirm"})) == want
        return
    assert settled(feed(eng, *OPEN, *cards(card))) == want


def test_jokerbet_item_facts_cover_the_76_items() -> None:
    # L3161–3311: 13 ranks + any joker + 52 exact cards + 2 jokers + 4 suits + 2 colours +
    # digital / non-digital = 76 items; the deck's 54 cards win them all between them.
    items = {i for code in DECK54 for i in jokerbet_facts(parse_card(code))["winning_items"]}
    assert len(items) == 76
    digital = [c for c in DECK54 if jokerbet_facts(parse_card(c))["digital"]]
    assert len(digital) == 36  # 2–10 of four suits


def test_jokerbet_a_full_deck_cycle_then_the_other_deck() -> None:
    # L3157: the deck runs to its end (one card a round), then is replaced; each identity once.
    eng = engine("jokerbet")
    out = feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    for code in DECK54:
        out += feed(eng, *OPEN, *cards(code))
    assert codes(out) == []
    assert [o.result["card"] for o in outcomes(out) if o.result] == DECK54
    report = feed(eng, {"type": "shoe_empty"})
    assert codes(report) == []
    assert [getattr(r, "reconciled", None) for r in report] == [True]
    # The replacement deck: the same identities again.
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    assert settled(feed(eng, *OPEN, *cards("KH")))["card"] == "KH"


def test_jokerbet_repeated_card_within_the_cycle_is_a_composition_hold() -> None:
    # §3.20 [DERIVED]: "a repeated identity within the cycle is an error".
    eng = engine("jokerbet")
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    assert settled(feed(eng, *OPEN, *cards("7C")))["card"] == "7C"
    out = feed(eng, *OPEN, *cards("7C"))
    assert codes(out) == ["composition_exceeded"]
    assert outcomes(out) == []
    assert eng.phase == "pending_decision"
    (void,) = outcomes(feed(eng, {"type": "void", "reason": "foreign_card"}))
    assert (void.status, void.reason) == ("void", "foreign_card")


def test_jokerbet_55th_card_of_a_deck() -> None:
    eng = engine("jokerbet")
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    for code in DECK54:
        feed(eng, *OPEN, *cards(code))
    out = feed(eng, *OPEN, *cards("AS"))
    # The shoe reports the first thing the 55th card proves (a repeat; R6's count comes after).
    assert codes(out) == ["composition_exceeded"]
    assert eng.phase == "pending_decision"


def test_jokerbet_same_joker_twice_in_a_cycle() -> None:
    eng = engine("jokerbet")
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    feed(eng, *OPEN, *cards("JK1"))
    assert codes(feed(eng, *OPEN, *cards("JK1"))) == ["composition_exceeded"]


def test_jokerbet_three_jokers_in_a_cycle() -> None:
    eng = engine("jokerbet")
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 54})
    feed(eng, *OPEN, *cards("JK1"))
    feed(eng, *OPEN, *cards("JK2"))
    assert codes(feed(eng, *OPEN, *cards("JK1"))) == ["joker_not_allowed"]


def test_jokerbet_shuffler_count_is_54() -> None:
    eng = engine("jokerbet")
    out = feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 52})
    assert codes(out) == ["shuffler_count_mismatch"]


def test_jokerbet_rounds_need_no_shuffle_between_them() -> None:
    eng = engine("jokerbet")
    for code in ("2H", "3H", "4H"):
        assert settled(feed(eng, *OPEN, *cards(code)))["card"] == code


def test_jokerbet_deal_error_voids_with_refund() -> None:
    eng = engine("jokerbet")
    feed(eng, *OPEN)
    (outcome,) = outcomes(feed(eng, {"type": "deal_error", "kind": "card_exposed"}))
    assert (outcome.status, outcome.reason) == ("void", "misdeal")
    assert outcome.result is not None
    assert (outcome.result["remedy"], outcome.result["rule"]) == ("refund", "seed-001 G1 L59")


@pytest.mark.parametrize(
    "rules",
    [
        {"decks": 2},
        {"jokers_per_deck": 0},
        {"jokers_per_deck": 3},
        {"ranks": "6789TJQKA"},
        {"cut": 1},
    ],
)
def test_jokerbet_bad_rules(rules: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        engine("jokerbet", **rules)


# -- Top Card Trump (seed-001 §3.23, L1597–1599) -------------------------------------------------


def test_top_card_values() -> None:
    # L1599: "A is highest, 2 lowest".
    assert [top_card_value(parse_card(r + "S")) for r in "23456789TJQKA"] == list(range(2, 15))
    with pytest.raises(ValueError, match="joker"):
        top_card_value(parse_card("JK"))


def _plain(player: str, dealer: str, winner: str) -> dict[str, Any]:
    return {
        "player": {"cards": [player]},
        "dealer": {"cards": [dealer]},
        "tie": False,
        "decision": None,
        "war": None,
        "winner": winner,
        "settlement": None,
    }


@pytest.mark.parametrize(
    ("player", "dealer", "winner"),
    [
        ("KH", "QS", "player"),  # L1599 "The higher card wins"
        ("2H", "AS", "dealer"),  # A highest, 2 lowest
        ("AH", "KD", "player"),
        ("9C", "TC", "dealer"),
        ("TD", "9D", "player"),
    ],
)
def test_top_card_no_tie(player: str, dealer: str, winner: str) -> None:
    eng = engine("top_card")
    assert isinstance(eng.game_rules, TopCard)
    assert feed(eng, *OPEN, *cards(player)) == []
    result = settled(feed(eng, *cards(dealer)))
    assert result == _plain(player, dealer, winner)


# (case, war player card, war dealer card, war winner, settlement)
WAR_CASES = [
    ("L1599-war-player-higher", "9H", "8D", "player", "raise_even_money_main_refunded"),
    ("L1599-war-dealer-higher", "8H", "9D", "dealer", "all_bets_lost"),
    ("L1599-war-tie-passes-to-the-player", "5H", "5D", "player", "raise_even_money_main_refunded"),
    ("L1599-war-ace-high", "AH", "KD", "player", "raise_even_money_main_refunded"),
]


@pytest.mark.parametrize(
    ("wp", "wd", "winner", "settlement"), [c[1:] for c in WAR_CASES], ids=[c[0] for c in WAR_CASES]
)
def test_top_card_tie_then_war(wp: str, wd: str, winner: str, settlement: str) -> None:
    eng = engine("top_card")
    out = feed(eng, *OPEN, *cards("KH", "KS"))
    assert out == []
    assert eng.phase == "dealing"  # the tie waits for the player's decision
    assert feed(eng, {"type": "decision", "box": 1, "action": "war"}) == []
    # L1599 "The dealer deals 3 cards face down": concealed, then one card each face up.
    for burn in ("2C", "3C", "4C"):
        assert eng.conceals(parse_event(cards(burn)[0]))
        assert feed(eng, *cards(burn)) == []
    assert not eng.conceals(parse_event(cards(wp)[0]))
    assert feed(eng, *cards(wp)) == []
    assert eng.snapshot()["coup"] == {
        "player": ["KH"],
        "dealer": ["KS"],
        "burn": [None, None, None],
        "war_player": [wp],
    }
    result = settled(feed(eng, *cards(wd)))
    assert result == {
        "player": {"cards": ["KH"]},
        "dealer": {"cards": ["KS"]},
        "tie": True,
        "decision": "war",
        "war": {
            "burned": 3,
            "burn": {"cards": ["2C", "3C", "4C"]},
            "player": {"cards": [wp]},
            "dealer": {"cards": [wd]},
            "tie": wp[0] == wd[0],
            "winner": winner,
        },
        "winner": winner,
        "settlement": settlement,
    }


@pytest.mark.parametrize(
    ("ending", "fold_by"),
    [
        ({"type": "decision", "box": 1, "action": "fold"}, "decision"),
        ({"type": "confirm"}, "confirm"),
    ],
)
def test_top_card_tie_then_fold(ending: dict[str, Any], fold_by: str) -> None:
    # L1599: Fold → "dealer takes the half of the bet"; a confirm without a war is a fold.
    eng = engine("top_card")
    feed(eng, *OPEN, *cards("7H", "7D"))
    result = settled(feed(eng, ending))
    assert result == {
        "player": {"cards": ["7H"]},
        "dealer": {"cards": ["7D"]},
        "tie": True,
        "decision": "fold",
        "war": None,
        "winner": None,
        "settlement": "half_bet_to_dealer",
        "fold_by": fold_by,
    }


def test_top_card_war_burn_is_configurable() -> None:
    eng = engine("top_card", war_burn=0)
    feed(eng, *OPEN, *cards("7H", "7D"), {"type": "decision", "box": 1, "action": "war"})
    result = settled(feed(eng, *cards("8H", "6D")))
    assert result["war"]["burned"] == 0
    assert result["winner"] == "player"


@pytest.mark.parametrize(
    ("before", "decision", "code"),
    [
        (["KH", "QS"], "war", "unexpected_event"),  # no tie: the round settled on its 2nd card
        (["KH"], "war", "decision_refused"),  # no tie yet
        (["KH"], "fold", "decision_refused"),
        ([], "war", "decision_refused"),
    ],
)
def test_top_card_decision_without_a_tie(before: list[str], decision: str, code: str) -> None:
    # L1599: War / Fold are the player's choice "on a tie" only.
    eng = engine("top_card")
    feed(eng, *OPEN, *cards(*before))
    out = feed(eng, {"type": "decision", "box": 1, "action": decision})
    assert codes(out) == [code]
    assert outcomes(out) == []


def test_top_card_decisions_refused_on_a_tie() -> None:
    eng = engine("top_card")
    feed(eng, *OPEN, *cards("7H", "7D"))
    assert codes(feed(eng, {"type": "decision", "box": 1, "action": "play"})) == [
        "decision_refused"
    ]
    assert codes(feed(eng, {"type": "decision", "box": 2, "action": "war"})) == ["decision_refused"]
    assert feed(eng, {"type": "decision", "box": 1, "action": "war"}) == []
    # A second decision on the same tie.
    assert codes(feed(eng, {"type": "decision", "box": 1, "action": "fold"})) == [
        "decision_refused"
    ]
    # The war cards are due: the dealer cannot close a window now (PKH-21).
    assert codes(feed(eng, {"type": "confirm"})) == ["wrong_card_count"]


def test_top_card_card_before_the_war_decision_holds() -> None:
    eng = engine("top_card")
    out = feed(eng, *OPEN, *cards("7H", "7D", "2C"))
    assert codes(out) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"


def test_top_card_an_early_card_is_the_first_war_card_once_war_is_called() -> None:
    # The supervisor lets the round go on; the player goes to war: the early card is the first
    # of the three burned ones (L1599), the deal goes on from there.
    eng = engine("top_card")
    feed(eng, *OPEN, *cards("7H", "7D", "2C"), {"type": "confirm"})
    feed(eng, {"type": "decision", "box": 1, "action": "war"})
    result = settled(feed(eng, *cards("3C", "4C", "KS", "2S")))
    assert result["war"]["burn"] == {"cards": ["2C", "3C", "4C"]}


def test_top_card_an_early_card_then_a_fold_is_reported_unplayed() -> None:
    eng = engine("top_card")
    feed(eng, *OPEN, *cards("7H", "7D", "2C"), {"type": "confirm"})
    result = settled(feed(eng, {"type": "decision", "box": 1, "action": "fold"}))
    assert result["unplayed"] == ["2C"]


def test_top_card_shoe_runs_rounds_without_a_shuffle() -> None:
    # L1599 "6 decks": a shoe, not a deck a round; a seventh KH is a foreign card.
    eng = engine("top_card")
    feed(eng, {"type": "shuffle_started"}, {"type": "shuffle_completed", "cards": 312})
    for _ in range(4):
        settled(feed(eng, *OPEN, *cards("KH", "2S")))
    feed(eng, *OPEN, *cards("KH", "KH"))
    feed(eng, {"type": "decision", "box": 1, "action": "fold"})
    out = feed(eng, *OPEN, *cards("KH"))
    assert codes(out) == ["composition_exceeded"]


def test_top_card_deal_error_voids_with_refund() -> None:
    eng = engine("top_card")
    feed(eng, *OPEN, *cards("7H", "7D"), {"type": "decision", "box": 1, "action": "war"})
    feed(eng, *cards("2C"))
    out = feed(eng, {"type": "deal_error", "kind": "card_exposed", "position": "burn"})
    (outcome,) = outcomes(out)
    assert (outcome.status, outcome.reason) == ("void", "misdeal")
    assert outcome.result is not None
    assert outcome.result["remedy"] == "refund"
    # The burned card stays hidden in the void result too.
    assert outcome.result["cards"] == {"player": ["7H"], "dealer": ["7D"], "burn": [None]}


def test_top_card_fault_before_the_first_card_cancels_the_hand() -> None:
    eng = engine("top_card")
    (outcome,) = outcomes(feed(eng, *OPEN, {"type": "fault", "code": "jam"}))
    assert (outcome.status, outcome.reason) == ("void", "hand_cancelled")


@pytest.mark.parametrize(
    "rules",
    [
        {"boxes": 2},
        {"war_burn": 6},
        {"order": "dealer_first"},
        {"decks": 0},
        {"jokers_per_deck": 1},
    ],
)
def test_top_card_bad_rules(rules: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        engine("top_card", **rules)


DECK52 = [r + s for r, s in itertools.product(RANKS, SUITS)]


@settings(max_examples=80, deadline=None)
@given(
    dealt=st.lists(st.sampled_from(DECK52), min_size=7, max_size=7, unique=True),
    war=st.booleans(),
)
def test_top_card_random_rounds(dealt: list[str], war: bool) -> None:
    first, second, *war_cards = dealt
    order = "23456789TJQKA"
    eng = engine("top_card")
    out = feed(eng, *OPEN, *cards(first, second))
    p, d = order.index(first[0]), order.index(second[0])
    if p != d:
        assert settled(out)["winner"] == ("player" if p > d else "dealer")
        return
    assert outcomes(out) == []
    action = "war" if war else "fold"
    out = feed(eng, {"type": "decision", "box": 1, "action": action})
    if not war:
        assert settled(out)["winner"] is None
        return
    out = feed(eng, *cards(*war_cards))
    wp, wd = order.index(war_cards[3][0]), order.index(war_cards[4][0])
    result = settled([o for o in out if isinstance(o, Outcome)])
    assert result["winner"] == ("player" if wp >= wd else "dealer")
