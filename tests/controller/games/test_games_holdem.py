"""Hold'em against the dealer (controller/games/cards/holdem/) through the real card engine.

Ultimate Texas Hold'em (seed-000 §6, PKH-), Casino Hold'em (seed-001 §3.14, L563–617) and Texas
Hold'em against the dealer (seed-001 §3.15, L619–679): deal order and concealment, worked
examples of every settlement rule, dealer qualification edges, decisions accepted and refused,
the irregularities and their codes, config validation, and a hypothesis property test that deals
random decks and checks every fact against an independent reading of the rule books.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.deal import box_name
from tablectl.controller.games.cards.holdem import HoldemGame
from tablectl.controller.games.cards.poker import HandCategory, HandValue, best_of
from tablectl.drivers.cards import full_deck, parse_card

UTH = "ultimate_texas_holdem"
CASINO = "casino_holdem"
TEXAS = "texas_holdem"
GAMES = (UTH, CASINO, TEXAS)
DECK = [card.code for card in full_deck()]

Decisions = Mapping[int, Sequence[tuple[int, str]]]
"""Window index (windows closed so far) → (box, action) decided in that window."""


# --- driving the engine ---------------------------------------------------------------------------


def new_engine(game: str, rules: Mapping[str, Any] | None = None) -> CardEngine:
    engine = build_engine("T1", game, dict(rules or {}), source="test.toml")
    assert engine.apply(parse_event({"type": "shuffle_completed", "cards": 52})) == []
    return engine


def send(engine: CardEngine, event: dict[str, Any]) -> list[EngineOutput]:
    return engine.apply(parse_event(event))


def start(engine: CardEngine, boxes: Sequence[int] | None = None) -> None:
    assert send(engine, {"type": "round_open"}) == []
    closed: dict[str, Any] = {"type": "bets_closed"}
    if boxes is not None:
        closed["boxes"] = list(boxes)
    assert send(engine, closed) == []


def awaits_confirm(engine: CardEngine) -> bool:
    deal = engine.snapshot()["deal"]
    return isinstance(deal, dict) and bool(deal["awaits_confirm"])


def play_round(
    engine: CardEngine,
    cards: Iterable[str],
    decisions: Decisions | None = None,
    boxes: Sequence[int] | None = None,
) -> tuple[Outcome, list[Verdict]]:
    """Deal ``cards`` in order; whenever the dealer must close a window, the window's decisions
    are taken and the window is confirmed. Returns the outcome and every verdict."""
    decisions = decisions or {}
    start(engine, boxes)
    outputs: list[EngineOutput] = []
    window = 0

    def close_window() -> None:
        nonlocal window
        for box, action in decisions.get(window, ()):
            outputs.extend(send(engine, {"type": "decision", "box": box, "action": action}))
        outputs.extend(send(engine, {"type": "confirm"}))
        window += 1

    for card in cards:
        while awaits_confirm(engine):
            close_window()
        outputs.extend(send(engine, {"type": "card", "card": card}))
    while awaits_confirm(engine):
        close_window()
    outcomes = [o for o in outputs if isinstance(o, Outcome)]
    verdicts = [o for o in outputs if isinstance(o, Verdict)]
    assert len(outcomes) == 1, outputs
    return outcomes[0], verdicts


def deal_order(game: str, hands: Mapping[str, str], boxes: Sequence[int] = (1,)) -> list[str]:
    """The cards of ``hands`` (position → "c1 c2 …") in the order the game deals them.

    The order is written out here from the rule books, not read from the game's script:
    UTH: one card at a time to each box then the dealer, twice (PKH-09); Casino/Texas: player 2,
    dealer 2 (L571); then flop 3, turn, river."""
    pool = {p: cards.split() for p, cards in hands.items()}
    if game == UTH:
        rotation = [box_name(b) for b in boxes] + ["dealer"]
        order = [pool[p][i] for i in range(2) for p in rotation]
    else:
        order = pool["player"] + pool["dealer"]
    board = pool["board"]
    assert len(board) == 5
    return order + board


def facts(hand: Mapping[str, Any], keys: Iterable[str]) -> dict[str, Any]:
    return {k: hand[k] for k in keys}


# --- deal order, faces, concealment ---------------------------------------------------------------


def test_uth_deals_hole_cards_in_rotation_face_down_then_community_face_up() -> None:
    """PKH-09: boxes then the dealer, one card at a time, all face down; the flop after window 1
    (UTH §6) and turn + river after window 2 (§8) face up; window 3 (§9) then settles."""
    engine = new_engine(UTH)
    start(engine, boxes=[1, 3])
    hole = ["2C", "3C", "4C", "5C", "6C", "7C"]  # box1, box3, dealer, box1, box3, dealer
    for code in hole:
        card = parse_event({"type": "card", "card": code})
        assert engine.conceals(card) is True
        assert engine.apply(card) == []
    assert engine.snapshot()["coup"] == {
        "box1": [None, None],
        "box3": [None, None],
        "dealer": [None, None],
    }
    assert engine.snapshot()["deal"] == {
        "boxes": [1, 3],
        "next": "flop",
        "windows_closed": 0,
        "awaits_confirm": True,
    }
    assert send(engine, {"type": "confirm"}) == []
    for code in ["8D", "9D", "TD"]:
        card = parse_event({"type": "card", "card": code})
        assert engine.conceals(card) is False
        assert engine.apply(card) == []
    assert send(engine, {"type": "confirm"}) == []
    assert send(engine, {"type": "card", "card": "JH"}) == []
    assert send(engine, {"type": "card", "card": "QH"}) == []
    assert engine.snapshot()["coup"]["flop"] == ["8D", "9D", "TD"]
    assert engine.snapshot()["deal"]["awaits_confirm"] is True  # the river decision (§9)
    [outcome] = send(engine, {"type": "confirm"})
    assert isinstance(outcome, Outcome)
    assert outcome.status == "settled"
    result = outcome.result
    assert result is not None
    assert result["board"] == {"flop": ["8D", "9D", "TD"], "turn": ["JH"], "river": ["QH"]}
    assert result["dealer"]["cards"] == ["4C", "7C"]
    assert sorted(result["boxes"]) == ["box1", "box3"]
    assert result["boxes"]["box1"]["cards"] == ["2C", "5C"]
    assert result["boxes"]["box3"]["cards"] == ["3C", "6C"]


@pytest.mark.parametrize("game", [CASINO, TEXAS])
def test_single_hand_games_deal_player_up_dealer_down(game: str) -> None:
    """L571 (and L621 for Texas): "two open cards" to the player, then "two closed cards" to the
    dealer; community cards open."""
    engine = new_engine(game)
    start(engine)
    for code, hidden in [("AH", False), ("KH", False), ("2C", True), ("3C", True)]:
        card = parse_event({"type": "card", "card": code})
        assert engine.conceals(card) is hidden
        assert engine.apply(card) == []
    if game == TEXAS:  # window 1 (L627) before the flop
        assert awaits_confirm(engine)
        assert send(engine, {"type": "confirm"}) == []
    for code in ["9S", "8S", "7S"]:
        card = parse_event({"type": "card", "card": code})
        assert engine.conceals(card) is False
        assert engine.apply(card) == []
    assert engine.snapshot()["coup"] == {
        "player": ["AH", "KH"],
        "dealer": [None, None],
        "flop": ["9S", "8S", "7S"],
    }


# --- Ultimate Texas Hold'em worked examples (seed-000 §6.4) ---------------------------------------

BETS = ("versus", "ante", "play", "blind", "trips")

UTH_CASES: list[tuple[str, dict[str, Any], dict[str, str], bool, dict[str, Any]]] = [
    (
        "§16-§19-straight-beats-qualified-dealer-blind-pays",
        {},
        {"box1": "9H TD", "dealer": "2C 2D", "board": "JS QH KC 4D 7S"},
        True,
        {"versus": "win", "ante": "win", "play": "win", "blind": "paytable", "trips": "straight"},
    ),
    (
        "§17-dealer-does-not-qualify-ante-push",
        {},
        {"box1": "AH 8D", "dealer": "KC 3S", "board": "AS 9C 6H 4D 2S"},
        False,
        {"versus": "win", "ante": "push", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "UTH-H2-pair-of-kings-qualifies",
        {},
        {"box1": "AH AD", "dealer": "KC KD", "board": "9S 7H 4C 3D 2S"},
        True,
        {"versus": "win", "ante": "win", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "§17-two-pair-reading-pair-does-not-qualify",
        {"dealer_qualifies": "two_pair"},
        {"box1": "AH AD", "dealer": "KC KD", "board": "9S 7H 4C 3D 2S"},
        False,
        {"versus": "win", "ante": "push", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "§17-two-pair-reading-two-pair-qualifies",
        {"dealer_qualifies": "two_pair"},
        {"box1": "AH AD", "dealer": "KC 9D", "board": "9S KH 4C 3D 2S"},
        True,
        {"versus": "lose", "ante": "lose", "play": "lose", "blind": "lose", "trips": "lose"},
    ),
    (
        "UTH-H2-pair-of-twos-is-the-lowest-qualifier",
        {},
        {"box1": "AH KD", "dealer": "2C 5D", "board": "2S 9H JC 7D 4S"},
        True,
        {"versus": "lose", "ante": "lose", "play": "lose", "blind": "lose", "trips": "lose"},
    ),
    (
        "§11-tie-remaining-two-cards-not-counted",
        {},
        {"box1": "AH 3C", "dealer": "AD 4C", "board": "KS KD 8H 7C 2S"},
        True,
        {"versus": "tie", "ante": "push", "play": "push", "blind": "push", "trips": "lose"},
    ),
    (
        "§11-kicker-decides",
        {},
        {"box1": "AH 3C", "dealer": "QD 4C", "board": "KS KD 8H 7C 2S"},
        True,
        {"versus": "win", "ante": "win", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "§15-§19-flush-loses-to-full-house-blind-lost-trips-pays",
        {},
        {"box1": "AH 5H", "dealer": "7S KD", "board": "KH 9H 2H 7C 7D"},
        True,
        {"versus": "lose", "ante": "lose", "play": "lose", "blind": "lose", "trips": "flush"},
    ),
    (
        "§18.1-neither-has-a-hand-dealer-higher",
        {},
        {"box1": "QH 3C", "dealer": "KC 4D", "board": "AS 9D 7H 6C 2S"},
        False,
        {"versus": "lose", "ante": "push", "play": "lose", "blind": "lose", "trips": "lose"},
    ),
    (
        "§18.2-neither-has-a-hand-dealer-lower",
        {},
        {"box1": "KC 4D", "dealer": "QH 3C", "board": "AS 9D 7H 6C 2S"},
        False,
        {"versus": "win", "ante": "push", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "§18.3-board-plays-for-both",
        {},
        {"box1": "2C 3D", "dealer": "2H 3S", "board": "AS KD QC JH 9S"},
        False,
        {"versus": "tie", "ante": "push", "play": "push", "blind": "push", "trips": "lose"},
    ),
    (
        "§20-royal-flush-trips-and-blind",
        {},
        {"box1": "AH KH", "dealer": "2C 2D", "board": "QH JH TH 3S 8C"},
        True,
        {
            "versus": "win",
            "ante": "win",
            "play": "win",
            "blind": "paytable",
            "trips": "royal_flush",
        },
    ),
    (
        "PKH-19-wheel-is-a-straight",
        {},
        {"box1": "AC 9D", "dealer": "KH KS", "board": "2C 3D 4S 5H 5C"},
        True,
        {"versus": "win", "ante": "win", "play": "win", "blind": "paytable", "trips": "straight"},
    ),
]


@pytest.mark.parametrize(
    ("rules", "hands", "dealer_qualifies", "expected"),
    [case[1:] for case in UTH_CASES],
    ids=[case[0] for case in UTH_CASES],
)
def test_uth_settles_by_seed_000_6_4(
    rules: dict[str, Any],
    hands: dict[str, str],
    dealer_qualifies: bool,
    expected: dict[str, Any],
) -> None:
    engine = new_engine(UTH, rules)
    outcome, verdicts = play_round(engine, deal_order(UTH, hands), boxes=[1])
    assert verdicts == []
    assert outcome.status == "settled"
    result = outcome.result
    assert result is not None
    assert result["dealer"]["qualifies"] is dealer_qualifies
    assert result["qualifier"] == rules.get("dealer_qualifies", "pair")
    box = result["boxes"]["box1"]
    assert facts(box, BETS) == expected
    assert box["folded"] is False
    assert box["play_street"] is None


def test_uth_full_result_of_a_round() -> None:
    """The whole published result, field by field (docs/games/holdem.md)."""
    engine = new_engine(UTH)
    hands = {"box1": "AH KH", "dealer": "2C 2D", "board": "QH JH TH 3S 8C"}
    outcome, _ = play_round(engine, deal_order(UTH, hands), {0: [(1, "play")]}, boxes=[1])
    assert outcome.result == {
        "board": {"flop": ["QH", "JH", "TH"], "turn": ["3S"], "river": ["8C"]},
        "dealer": {
            "cards": ["2C", "2D"],
            "hand": "pair of twos",
            "category": "pair",
            "best": ["2C", "2D", "QH", "JH", "TH"],
            "paytable_hand": "pair",
            "qualifies": True,
        },
        "qualifier": "pair",
        "boxes": {
            "box1": {
                "cards": ["AH", "KH"],
                "hand": "royal flush",
                "category": "straight_flush",
                "best": ["AH", "KH", "QH", "JH", "TH"],
                "paytable_hand": "royal_flush",
                "folded": False,
                "play_street": "preflop",
                "versus": "win",
                "ante": "win",
                "play": "win",
                "blind": "paytable",
                "trips": "royal_flush",
            }
        },
    }


def test_uth_folded_box_loses_ante_blind_play_but_trips_is_settled() -> None:
    """UTH §9–10 fold, GEN-09.2.2: "The Ante and Blind bets are collected, but … a Trips bet …
    is collected or paid out according to the outcome of the game". The box still beats the
    dealer on the cards (``versus``); the other box plays on."""
    engine = new_engine(UTH)
    hands = {"box1": "8H 8D", "box2": "AH KH", "dealer": "9S 9D", "board": "8C 5S 2D JC QS"}
    cards = deal_order(UTH, hands, boxes=[1, 2])
    outcome, verdicts = play_round(
        engine, cards, {0: [(2, "play")], 2: [(1, "fold")]}, boxes=[1, 2]
    )
    assert verdicts == []
    assert outcome.result is not None
    boxes = outcome.result["boxes"]
    assert facts(boxes["box1"], (*BETS, "folded", "play_street")) == {
        "versus": "win",
        "ante": "lose",
        "play": "lose",
        "blind": "lose",
        "trips": "three_of_a_kind",
        "folded": True,
        "play_street": None,
    }
    assert facts(boxes["box2"], (*BETS, "folded", "play_street")) == {
        "versus": "lose",
        "ante": "lose",
        "play": "lose",
        "blind": "lose",
        "trips": "lose",
        "folded": False,
        "play_street": "preflop",
    }


@pytest.mark.parametrize("window", [0, 1, 2])
def test_uth_fold_is_taken_in_any_window_until_the_last_closes(window: int) -> None:
    """UTH §9 folds at the river; an absent player's box is folded whenever found (GEN-09.2.2)."""
    engine = new_engine(UTH)
    hands = {"box1": "AH KH", "dealer": "2C 2D", "board": "QH JH TH 3S 8C"}
    outcome, verdicts = play_round(
        engine, deal_order(UTH, hands), {window: [(1, "fold")]}, boxes=[1]
    )
    assert verdicts == []
    assert outcome.result is not None
    box = outcome.result["boxes"]["box1"]
    assert (box["folded"], box["ante"], box["trips"]) == (True, "lose", "royal_flush")


@pytest.mark.parametrize(("window", "street"), [(0, "preflop"), (1, "flop"), (2, "river")])
def test_uth_play_records_its_street(window: int, street: str) -> None:
    """UTH §5 pre-flop 3×/4×, §7 flop 2×, §9 river 1×: the street says the PLAY multiple."""
    engine = new_engine(UTH)
    hands = {"box1": "AH KH", "dealer": "2C 2D", "board": "QH JH TH 3S 8C"}
    outcome, _ = play_round(engine, deal_order(UTH, hands), {window: [(1, "play")]}, boxes=[1])
    assert outcome.result is not None
    assert outcome.result["boxes"]["box1"]["play_street"] == street


def test_uth_six_boxes_special_game() -> None:
    """UTH-B1: up to 6 boxes in a "special game"."""
    engine = new_engine(UTH, {"boxes": 6})
    deck = DECK[:19]
    outcome, verdicts = play_round(engine, deck)
    assert verdicts == []
    assert outcome.result is not None
    assert sorted(outcome.result["boxes"]) == [f"box{b}" for b in range(1, 7)]
    assert outcome.result["dealer"]["cards"] == [deck[6], deck[13]]


# --- Casino Hold'em worked examples (seed-001 §3.14) ----------------------------------------------

CASINO_KEYS = ("versus", "ante", "call", "paytable_hand")

CASINO_CASES: list[tuple[str, dict[str, Any], dict[str, str], bool, dict[str, Any], str]] = [
    (
        "L587-pair-of-fours-qualifies-player-wins",
        {},
        {"player": "AH KD", "dealer": "4C 4D", "board": "AS 9C 7H 2S JD"},
        True,
        {"versus": "win", "ante": "paytable", "call": "win", "paytable_hand": "pair"},
        "player",
    ),
    (
        "L587-pair-of-threes-does-not-qualify-ante-pays-call-push",
        {},
        {"player": "AH KD", "dealer": "3C 3D", "board": "AS 9C 7H 2S JD"},
        False,
        {"versus": "win", "ante": "paytable", "call": "push", "paytable_hand": "pair"},
        "player",
    ),
    (
        "C35-ante-push-reading",
        {"unqualified_dealer": "ante_push"},
        {"player": "AH KD", "dealer": "3C 3D", "board": "AS 9C 7H 2S JD"},
        False,
        {"versus": "win", "ante": "push", "call": "push", "paytable_hand": "pair"},
        "player",
    ),
    (
        "non-qualifying-dealer-pays-ante-even-when-higher",
        {},
        {"player": "5C 6D", "dealer": "KC 3D", "board": "AS 9C 2H JS 8D"},
        False,
        {"versus": "lose", "ante": "paytable", "call": "push", "paytable_hand": "high_card"},
        "dealer",
    ),
    (
        "qualified-dealer-wins",
        {},
        {"player": "5C 6D", "dealer": "KC KD", "board": "AS 9C 2H JS 8D"},
        True,
        {"versus": "lose", "ante": "lose", "call": "lose", "paytable_hand": "high_card"},
        "dealer",
    ),
    (
        "tie-is-a-push",
        {},
        {"player": "2C 3D", "dealer": "2H 3S", "board": "AS AD KC 9H 7S"},
        True,
        {"versus": "tie", "ante": "push", "call": "push", "paytable_hand": "pair"},
        "tie",
    ),
    (
        "L589-ante-paytable-four-of-a-kind",
        {},
        {"player": "AH AD", "dealer": "KC KD", "board": "AC 7S 2D AS 9H"},
        True,
        {"versus": "win", "ante": "paytable", "call": "win", "paytable_hand": "four_of_a_kind"},
        "player",
    ),
]


@pytest.mark.parametrize(
    ("rules", "hands", "dealer_qualifies", "expected", "winner"),
    [case[1:] for case in CASINO_CASES],
    ids=[case[0] for case in CASINO_CASES],
)
def test_casino_holdem_settles(
    rules: dict[str, Any],
    hands: dict[str, str],
    dealer_qualifies: bool,
    expected: dict[str, Any],
    winner: str,
) -> None:
    engine = new_engine(CASINO, rules)
    outcome, verdicts = play_round(engine, deal_order(CASINO, hands))
    assert verdicts == []
    result = outcome.result
    assert result is not None
    assert result["dealer"]["qualifies"] is dealer_qualifies
    assert result["qualifier"] == "pair_of_fours"
    assert facts(result["player"], CASINO_KEYS) == expected
    assert result["winner"] == winner


BONUS_CASES: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    (
        "L579-first-five-only-trips-not-quads",
        {"player": "AH AD", "dealer": "KC KD", "board": "AC 7S 2D AS 9H"},
        {"category": "three_of_a_kind", "qualifies": True, "result": "three_of_a_kind"},
    ),
    (
        "L589-pair-of-aces-is-the-lowest-bonus",
        {"player": "AH KD", "dealer": "4C 4D", "board": "AS 9C 7H 2S JD"},
        {"category": "pair", "qualifies": True, "result": "pair"},
    ),
    (
        "L589-pair-of-kings-loses",
        {"player": "KH 5D", "dealer": "4C 4D", "board": "KS 9C 7H 2S JD"},
        {"category": "pair", "qualifies": False, "result": "lose"},
    ),
    (
        "L589-turn-and-river-do-not-count",
        {"player": "QH JH", "dealer": "4C 4D", "board": "9H 8H 2S TH 3C"},
        {"category": "high_card", "qualifies": False, "result": "lose"},
    ),
    (
        "L589-royal-flush-on-the-flop",
        {"player": "AS KS", "dealer": "4C 4D", "board": "QS JS TS 2H 3C"},
        {"category": "straight_flush", "qualifies": True, "result": "royal_flush"},
    ),
]


@pytest.mark.parametrize(
    ("hands", "expected"), [c[1:] for c in BONUS_CASES], ids=[c[0] for c in BONUS_CASES]
)
def test_casino_holdem_bonus_is_the_first_five_cards(
    hands: dict[str, str], expected: dict[str, Any]
) -> None:
    engine = new_engine(CASINO)
    cards = deal_order(CASINO, hands)
    outcome, _ = play_round(engine, cards)
    assert outcome.result is not None
    bonus = outcome.result["player"]["bonus"]
    assert bonus["cards"] == cards[:2] + cards[4:7]
    assert facts(bonus, ("category", "qualifies", "result")) == expected


def test_casino_holdem_fold_loses_ante_bonus_still_settled() -> None:
    """L571: Fold loses the Ante; "The 'Call' or 'Fold' option does not affect the 'Bonus'"."""
    engine = new_engine(CASINO)
    hands = {"player": "AH AD", "dealer": "KC KD", "board": "AC 7S 2D AS 9H"}
    outcome, verdicts = play_round(engine, deal_order(CASINO, hands), {0: [(1, "fold")]})
    assert verdicts == []
    assert outcome.result is not None
    player = outcome.result["player"]
    assert facts(player, ("folded", "versus", "ante", "call")) == {
        "folded": True,
        "versus": "win",
        "ante": "lose",
        "call": "lose",
    }
    assert player["bonus"]["result"] == "three_of_a_kind"
    assert outcome.result["board"]["river"] == ["9H"]


def test_casino_holdem_call_is_recorded_and_closes_with_the_window() -> None:
    """L571–573: Call or Fold after the flop, then turn and river; a decision once the window is
    closed is refused."""
    engine = new_engine(CASINO)
    start(engine)
    for code in ["AH", "KD", "4C", "4D", "AS", "9C", "7H"]:
        assert send(engine, {"type": "card", "card": code}) == []
    assert send(engine, {"type": "decision", "box": 1, "action": "play"}) == []
    assert send(engine, {"type": "confirm"}) == []
    [refused] = send(engine, {"type": "decision", "box": 1, "action": "fold"})
    assert isinstance(refused, Verdict)
    assert (refused.code, refused.rule) == ("decision_refused", "seed-001 L571")
    assert send(engine, {"type": "card", "card": "2S"}) == []
    [outcome] = send(engine, {"type": "card", "card": "JD"})
    assert isinstance(outcome, Outcome)
    assert outcome.result is not None
    assert outcome.result["player"]["play_street"] == "flop"
    assert outcome.result["player"]["folded"] is False


# --- Texas Hold'em against the dealer (seed-001 §3.15) --------------------------------------------

TEXAS_CASES: list[tuple[str, dict[str, str], Decisions, bool, dict[str, Any]]] = [
    (
        "L645-pair-qualifies-flush-wins-blind-and-trips-pay",
        {"player": "AH 5H", "dealer": "2C 2D", "board": "KH 9H 3H 7C 8D"},
        {0: [(1, "play")]},
        True,
        {"versus": "win", "ante": "win", "play": "win", "blind": "paytable", "trips": "flush"},
    ),
    (
        "L647-ante-draw-when-dealer-does-not-qualify",
        {"player": "AH 8D", "dealer": "KC 3S", "board": "AS 9C 6H 4D 2S"},
        {1: [(1, "play")]},
        False,
        {"versus": "win", "ante": "push", "play": "win", "blind": "push", "trips": "lose"},
    ),
    (
        "L657-blind-lost-when-dealer-wins",
        {"player": "AH 5H", "dealer": "7S KD", "board": "KH 9H 2H 7C 7D"},
        {},
        True,
        {"versus": "lose", "ante": "lose", "play": "lose", "blind": "lose", "trips": "flush"},
    ),
    (
        "L631-fold-loses-ante-and-blind-trips-regardless",
        {"player": "8H 8D", "dealer": "9S 9D", "board": "8C 5S 2D JC QS"},
        {2: [(1, "fold")]},
        True,
        {
            "versus": "win",
            "ante": "lose",
            "play": "lose",
            "blind": "lose",
            "trips": "three_of_a_kind",
        },
    ),
    (
        "L579-tie-push",
        {"player": "AH 3C", "dealer": "AD 4C", "board": "KS KD 8H 7C 2S"},
        {2: [(1, "play")]},
        True,
        {"versus": "tie", "ante": "push", "play": "push", "blind": "push", "trips": "lose"},
    ),
]


@pytest.mark.parametrize(
    ("hands", "decisions", "dealer_qualifies", "expected"),
    [c[1:] for c in TEXAS_CASES],
    ids=[c[0] for c in TEXAS_CASES],
)
def test_texas_holdem_settles(
    hands: dict[str, str],
    decisions: Decisions,
    dealer_qualifies: bool,
    expected: dict[str, Any],
) -> None:
    engine = new_engine(TEXAS)
    outcome, verdicts = play_round(engine, deal_order(TEXAS, hands), decisions)
    assert verdicts == []
    result = outcome.result
    assert result is not None
    assert result["qualifier"] == "pair"
    assert result["dealer"]["qualifies"] is dealer_qualifies
    assert facts(result["player"], BETS) == expected
    assert result["winner"] == {"win": "player", "lose": "dealer", "tie": "tie"}[expected["versus"]]


@pytest.mark.parametrize("window", [0, 1])
def test_texas_holdem_fold_only_after_turn_and_river(window: int) -> None:
    """L627–631: Check before the flop and after it; Fold only "After Turn and River"."""
    engine = new_engine(TEXAS)
    hands = {"player": "8H 8D", "dealer": "9S 9D", "board": "8C 5S 2D JC QS"}
    outcome, verdicts = play_round(engine, deal_order(TEXAS, hands), {window: [(1, "fold")]})
    assert [(v.code, v.rule) for v in verdicts] == [("decision_refused", "seed-001 L625–633")]
    assert outcome.result is not None
    assert outcome.result["player"]["folded"] is False


# --- decisions refused ----------------------------------------------------------------------------

REFUSALS: list[tuple[str, str, Sequence[tuple[int, str]], str]] = [
    ("V-UTH-2-one-play-per-box", UTH, [(1, "play"), (1, "play")], "UTH §5–§10"),
    ("fold-after-play", UTH, [(1, "play"), (1, "fold")], "UTH §5–§10"),
    ("play-after-fold", UTH, [(1, "fold"), (1, "play")], "UTH §5–§10"),
    ("fold-twice", UTH, [(1, "fold"), (1, "fold")], "UTH §5–§10"),
    ("L633-raise-once", TEXAS, [(1, "play"), (1, "play")], "seed-001 L625–633"),
    ("L571-call-then-fold", CASINO, [(1, "play"), (1, "fold")], "seed-001 L571"),
]


@pytest.mark.parametrize(
    ("game", "decisions", "rule"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_second_decision_is_refused(
    game: str, decisions: Sequence[tuple[int, str]], rule: str
) -> None:
    engine = new_engine(game)
    hands = {
        "box1" if game == UTH else "player": "AH KH",
        "dealer": "2C 2D",
        "board": "QH JH TH 3S 8C",
    }
    window = 0 if game != TEXAS else 2
    outcome, verdicts = play_round(
        engine, deal_order(game, hands), {window: decisions}, boxes=[1] if game == UTH else None
    )
    assert [(v.code, v.rule) for v in verdicts] == [("decision_refused", rule)]
    assert outcome.status == "settled"


@pytest.mark.parametrize("game", GAMES)
def test_decision_before_the_cards_are_out_is_refused(game: str) -> None:
    """PKH-10: the cards are looked at once all are dealt; a decision follows its cards."""
    engine = new_engine(game)
    start(engine, [1] if game == UTH else None)
    assert send(engine, {"type": "card", "card": "AH"}) == []
    [refused] = send(engine, {"type": "decision", "box": 1, "action": "fold"})
    assert isinstance(refused, Verdict)
    assert refused.code == "decision_refused"
    assert "not all out" in refused.message


@pytest.mark.parametrize(
    ("game", "event", "message"),
    [
        (UTH, {"action": "exchange", "cards": ["AH"]}, "takes no 'exchange'"),
        (UTH, {"action": "fold", "box": 4}, "box 4 is not playing"),
        (CASINO, {"action": "fold", "box": 2}, "box 2 is not playing"),
        (TEXAS, {"action": "sixth_card"}, "takes no 'sixth_card'"),
    ],
)
def test_foreign_decisions_are_refused(game: str, event: dict[str, Any], message: str) -> None:
    engine = new_engine(game)
    start(engine, [1, 2] if game == UTH else None)
    [refused] = send(engine, {"type": "decision", "box": 1, **event})
    assert isinstance(refused, Verdict)
    assert refused.code == "decision_refused"
    assert message in refused.message


# --- irregularities -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
def test_card_before_the_window_is_closed_holds_the_round(game: str) -> None:
    """A community card read before the dealer closed the decision window (seed-000 PR-8.2 by
    analogy; seed-000 §6.5 "not covered"): ``card_before_decisions``, a supervisor decides."""
    engine = new_engine(game)
    start(engine, [1] if game == UTH else None)
    first = ["AH", "KH", "2C", "2D"] + ([] if game != CASINO else ["QH", "JH", "TH"])
    for code in first:
        assert send(engine, {"type": "card", "card": code}) == []
    [early] = send(engine, {"type": "card", "card": "3S"})
    assert isinstance(early, Verdict)
    assert (early.code, early.rule) == ("card_before_decisions", "seed-000 PR-8.2")
    assert engine.phase == "pending_decision"
    [void] = send(engine, {"type": "void", "reason": "card_before_decisions"})
    assert isinstance(void, Outcome)
    assert void.status == "void"


@pytest.mark.parametrize("game", GAMES)
def test_confirm_while_cards_are_due_is_wrong_card_count(game: str) -> None:
    """PKH-21, seed-001 §3.0 (2): a window cannot close before its cards are all out."""
    engine = new_engine(game)
    start(engine, [1] if game == UTH else None)
    assert send(engine, {"type": "card", "card": "AH"}) == []
    [verdict] = send(engine, {"type": "confirm"})
    assert isinstance(verdict, Verdict)
    assert (verdict.code, verdict.rule) == ("wrong_card_count", "PKH-21")
    assert engine.phase == "dealing"


@pytest.mark.parametrize(
    ("game", "rule", "remedy"),
    [
        (UTH, "PKH-21", "reshuffle_bets_stand"),
        (CASINO, "seed-001 L617", "refund"),
        (TEXAS, "seed-001 L679", "refund"),
    ],
)
@pytest.mark.parametrize("kind", ["card_exposed", "wrong_count"])
def test_deal_error_voids_the_round_with_the_rule_books_remedy(
    game: str, rule: str, remedy: str, kind: str
) -> None:
    engine = new_engine(game)
    start(engine, [1] if game == UTH else None)
    for code in ["AH", "KH", "2C"]:
        assert send(engine, {"type": "card", "card": code}) == []
    position = "dealer"
    [void] = send(engine, {"type": "deal_error", "kind": kind, "position": position})
    assert isinstance(void, Outcome)
    assert (void.status, void.reason) == ("void", "misdeal")
    assert void.result is not None
    assert (void.result["remedy"], void.result["rule"]) == (remedy, rule)
    assert void.result["error"] == f"{kind.replace('_', ' ')} at dealer"
    hidden = {"box1": [None, None], "dealer": [None]} if game == UTH else None
    if hidden is not None:
        assert void.result["cards"] == hidden
    else:
        assert void.result["cards"] == {"player": ["AH", "KH"], "dealer": [None]}


@pytest.mark.parametrize("game", GAMES)
def test_every_round_needs_a_new_shuffle(game: str) -> None:
    """PKH-01; L569 "The cards are mixed up after each round": ``shuffle_required``."""
    engine = new_engine(game)
    outcome, _ = play_round(engine, DECK[:9], boxes=[1] if game == UTH else None)
    assert outcome.status == "settled"
    [refused] = send(engine, {"type": "round_open"})
    assert isinstance(refused, Verdict)
    assert refused.code == "shuffle_required"
    assert send(engine, {"type": "shuffle_started"}) == []
    assert send(engine, {"type": "shuffle_completed", "cards": 52}) == []
    outcome, verdicts = play_round(engine, DECK[9:18], boxes=[1] if game == UTH else None)
    assert (outcome.status, verdicts) == ("settled", [])


@pytest.mark.parametrize("game", GAMES)
def test_card_after_the_settled_round_is_extra(game: str) -> None:
    engine = new_engine(game)
    play_round(engine, DECK[:9], boxes=[1] if game == UTH else None)
    [extra] = send(engine, {"type": "card", "card": DECK[9]})
    assert isinstance(extra, Verdict)
    assert extra.code == "extra_card"


def test_a_card_seen_twice_is_held_and_cannot_be_ranked() -> None:
    """PKH-01: a duplicate means the deck is foul. The shoe holds the round
    (``composition_exceeded``); if the supervisor lets it settle, the result lists the cards and
    ``foul_cards`` and no settlement facts."""
    engine = new_engine(CASINO)
    start(engine)
    outputs: list[EngineOutput] = []
    for code in ["AH", "KD", "4C", "4D", "AS", "9C", "7H"]:
        outputs += send(engine, {"type": "card", "card": code})
    outputs += send(engine, {"type": "confirm"})
    outputs += send(engine, {"type": "card", "card": "2S"})
    outputs += send(engine, {"type": "card", "card": "AH"})
    assert [getattr(o, "code", None) for o in outputs] == ["composition_exceeded"]
    assert engine.phase == "pending_decision"
    [outcome] = send(engine, {"type": "confirm"})
    assert isinstance(outcome, Outcome)
    assert outcome.result == {
        "dealer": ["4C", "4D"],
        "player": ["AH", "KD"],
        "board": {"flop": ["AS", "9C", "7H"], "turn": ["2S"], "river": ["AH"]},
        "foul_cards": ["AH"],
    }


# --- config ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules", "message"),
    [
        (UTH, {"boxes": 7}, "boxes"),
        (UTH, {"dealer_qualifies": "three_of_a_kind"}, "dealer_qualifies"),
        (UTH, {"decks": 2}, "decks"),
        (UTH, {"jokers_per_deck": 1}, "jokers_per_deck"),
        (UTH, {"ranks": "6789TJQKA"}, "ranks"),
        (UTH, {"variant": "uth"}, "variant"),
        (CASINO, {"boxes": 2}, "boxes"),
        (CASINO, {"unqualified_dealer": "call_pays"}, "unqualified_dealer"),
        (CASINO, {"dealer_qualifies": "pair"}, "dealer_qualifies"),
        (TEXAS, {"boxes": 2}, "boxes"),
        (TEXAS, {"unqualified_dealer": "ante_pays"}, "unqualified_dealer"),
    ],
)
def test_bad_rules_are_config_errors(game: str, rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_engine("T1", game, rules, source="test.toml")


def test_rule_book_defaults() -> None:
    uth = build_engine("T1", UTH, {}, source="t.toml").game_rules
    casino = build_engine("T1", CASINO, {}, source="t.toml").game_rules
    texas = build_engine("T1", TEXAS, {}, source="t.toml").game_rules
    assert uth.rules.model_dump() == {
        "decks": 1,
        "jokers_per_deck": 0,
        "ranks": "A23456789TJQK",
        "burn": False,
        "burn_after_dealer_change": 0,
        "cut_card_min_behind": 0,
        "last_coup": "current",
        "on_fault": "decide",
        "boxes": 5,
        "dealer_qualifies": "pair",
    }
    assert casino.rules.model_dump()["unqualified_dealer"] == "ante_pays"
    assert (casino.rules.boxes, texas.rules.boxes, texas.rules.on_fault) == (1, 1, "void")
    assert isinstance(uth, HoldemGame)
    assert isinstance(casino, HoldemGame)
    assert isinstance(texas, HoldemGame)
    assert (uth.windows, casino.windows, texas.windows) == (3, 1, 3)


# --- property: random decks against an independent reading ---------------------------------------


def reference_bets(player: HandValue, dealer: HandValue, dq: bool, folded: bool) -> dict[str, str]:
    """seed-000 §6.4 / seed-001 L645–677 as a lookup, written apart from the module."""
    if player > dealer:
        versus = "win"
    elif player < dealer:
        versus = "lose"
    else:
        versus = "tie"
    royal = player.category == HandCategory.STRAIGHT_FLUSH and player.ranks == (14,)
    name = "royal_flush" if royal else player.category.name.lower()
    trips = name if player.category >= HandCategory.THREE_OF_A_KIND else "lose"
    if folded:
        return {"versus": versus, "ante": "lose", "play": "lose", "blind": "lose", "trips": trips}
    table = {
        # versus: (ante if dealer qualifies, play, blind with < straight, blind with straight+)
        "win": ("win", "win", "push", "paytable"),
        "lose": ("lose", "lose", "lose", "lose"),
        "tie": ("push", "push", "push", "push"),
    }
    ante, play, low, high = table[versus]
    blind = high if player.category >= HandCategory.STRAIGHT else low
    return {
        "versus": versus,
        "ante": ante if dq else "push",
        "play": play,
        "blind": blind,
        "trips": trips,
    }


def reference_casino(
    player: HandValue, dealer: HandValue, dq: bool, folded: bool
) -> dict[str, str]:
    versus = "win" if player > dealer else "lose" if player < dealer else "tie"
    if folded:
        return {"versus": versus, "ante": "lose", "call": "lose"}
    if not dq:
        return {"versus": versus, "ante": "paytable", "call": "push"}
    ante, call = {"win": ("paytable", "win"), "lose": ("lose", "lose"), "tie": ("push", "push")}[
        versus
    ]
    return {"versus": versus, "ante": ante, "call": call}


def dealer_qualifies(value: HandValue, minimum: str) -> bool:
    if minimum == "pair_of_fours":
        return value.category > HandCategory.PAIR or (
            value.category == HandCategory.PAIR and value.ranks[0] >= 4
        )
    floor = HandCategory.PAIR if minimum == "pair" else HandCategory.TWO_PAIR
    return value.category >= floor


@settings(max_examples=60, deadline=None)
@given(
    game=st.sampled_from(GAMES),
    deck=st.permutations(DECK),
    boxes=st.sets(st.integers(1, 5), min_size=1, max_size=5),
    folds=st.dictionaries(st.integers(1, 5), st.integers(0, 2), max_size=5),
    two_pair=st.booleans(),
)
def test_random_decks_settle_consistently(
    game: str, deck: list[str], boxes: set[int], folds: dict[int, int], two_pair: bool
) -> None:
    rules = {"dealer_qualifies": "two_pair"} if game == UTH and two_pair else {}
    engine = new_engine(game, rules)
    played = sorted(boxes) if game == UTH else [1]
    positions = [box_name(b) for b in played] if game == UTH else ["player"]
    fold_window = {UTH: None, CASINO: 0, TEXAS: 2}[game]
    folded = {
        b: (w if fold_window is None else fold_window) for b, w in folds.items() if b in played
    }
    decisions: dict[int, list[tuple[int, str]]] = {}
    for box, window in folded.items():
        decisions.setdefault(window, []).append((box, "fold"))
    # Deal order written out from the rule books (PKH-09 rotation; L571 player then dealer).
    n = len(positions)
    hole = 2 * (n + 1)
    if game == UTH:
        rotation = [*positions, "dealer"]
        hands = {p: [deck[i] for i in range(hole) if rotation[i % (n + 1)] == p] for p in rotation}
    else:
        hands = {"player": deck[0:2], "dealer": deck[2:4]}
    board = deck[hole : hole + 5]

    outcome, verdicts = play_round(engine, deck[: hole + 5], decisions, boxes=played)
    assert verdicts == []
    assert outcome.status == "settled"
    result = outcome.result
    assert result is not None
    assert result["board"] == {"flop": board[:3], "turn": board[3:4], "river": board[4:]}

    def value(cards: list[str]) -> HandValue:
        return best_of([parse_card(c) for c in [*cards, *board]])

    dealer = value(hands["dealer"])
    minimum = {UTH: "two_pair" if rules else "pair", CASINO: "pair_of_fours", TEXAS: "pair"}[game]
    dq = dealer_qualifies(dealer, minimum)
    assert result["dealer"]["cards"] == hands["dealer"]
    assert result["dealer"]["qualifies"] is dq
    published = result["boxes"] if game == UTH else {"player": result["player"]}
    assert sorted(published) == sorted(positions)
    for box, position in zip(played, positions, strict=True):
        hand = published[position]
        player = value(hands[position])
        assert hand["cards"] == hands[position]
        assert set(hand["best"]) <= {*hands[position], *board}
        assert len(hand["best"]) == 5
        assert best_of([parse_card(c) for c in hand["best"]]) == player
        assert hand["folded"] is (box in folded)
        if game == CASINO:
            expected = reference_casino(player, dealer, dq, box in folded)
            assert facts(hand, ("versus", "ante", "call")) == expected
            first_five = best_of([parse_card(c) for c in [*hands["player"], *board[:3]]])
            assert hand["bonus"]["qualifies"] is (
                first_five.category > HandCategory.PAIR
                or (first_five.category == HandCategory.PAIR and first_five.ranks[0] == 14)
            )
        else:
            assert facts(hand, BETS) == reference_bets(player, dealer, dq, box in folded)
    if game != UTH:
        versus = result["player"]["versus"]
        assert result["winner"] == {"win": "player", "lose": "dealer", "tie": "tie"}[versus]
