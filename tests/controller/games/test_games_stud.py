"""Three Card Poker / Teen Patti and Caribbean Stud through the real card engine.

Worked examples from the rule books (seed 000 §7 TCP; seed 001 §3.13 L517–561, §3.17 L714–773),
fed as events (parse_event → apply), plus a property test against an independent evaluator.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.poker import evaluate3
from tablectl.controller.games.cards.stud import (
    MISDEAL,
    REFUND,
    RESHUFFLE_BETS_STAND,
    CaribbeanStudRules,
    Showdown,
    TeenPatti,
    ThreeCardPokerRules,
    showdown,
)
from tablectl.drivers.cards import parse_card

RANKS = "23456789TJQKA"
DECK = [r + s for r in RANKS for s in "SHDC"]


# --- helpers ------------------------------------------------------------------------------------


def make(game: str = "three_card_poker", **rules: Any) -> CardEngine:
    eng = build_engine("T1", game, rules, source="test.toml")
    assert eng.apply(parse_event({"type": "shuffle_completed", "cards": 52})) == []
    return eng


def send(eng: CardEngine, event: dict[str, Any]) -> list[Any]:
    return eng.apply(parse_event(event))


def open_round(eng: CardEngine, boxes: Sequence[int] | None = None) -> None:
    assert send(eng, {"type": "round_open"}) == []
    closed: dict[str, Any] = {"type": "bets_closed"}
    if boxes is not None:
        closed["boxes"] = list(boxes)
    assert send(eng, closed) == []


def rotation(hands: dict[str, list[str]], size: int) -> list[str]:
    """The cards in deal order: one to each position (boxes, then the dealer), ``size`` times."""
    order = [p for p in hands if p != "dealer"] + ["dealer"]
    return [hands[p][i] for i in range(size) for p in order]


def deal(eng: CardEngine, cards: Iterable[str]) -> list[Any]:
    out: list[Any] = []
    for card in cards:
        out += send(eng, {"type": "card", "card": card})
    return out


def play_round(
    game: str,
    hands: dict[str, list[str]],
    decisions: dict[int, str] | None = None,
    **rules: Any,
) -> dict[str, Any]:
    """One full round: every box of ``hands`` plays; the dealer closes the window; the result."""
    eng = make(game, **rules)
    boxes = sorted(int(p[3:]) for p in hands if p != "dealer")
    open_round(eng, boxes)
    size = 3 if game != "caribbean_stud" else 5
    assert deal(eng, rotation(hands, size)) == []
    for box, action in (decisions or {}).items():
        assert send(eng, {"type": "decision", "box": box, "action": action}) == []
    out = send(eng, {"type": "confirm"})
    assert len(out) == 1
    assert isinstance(out[0], Outcome)
    assert out[0].status == "settled"
    assert out[0].result is not None
    return out[0].result


def codes(out: list[Any]) -> list[str]:
    return [o.code for o in out if isinstance(o, Verdict)]


# --- the shared showdown ------------------------------------------------------------------------


def h3(*cards: str) -> Any:
    return evaluate3([parse_card(c) for c in cards])


@pytest.mark.parametrize(
    ("box", "dealer", "qualifies", "folded", "not_qualified", "expected"),
    [
        # TCP §10: dealer qualifies, player stronger → ante and BET 1:1.
        (("KH", "KD", "2C"), ("QS", "9H", "4D"), True, False, "ante_wins", ("win", "win", "win")),
        # TCP §11: dealer stronger → both lost.
        (
            ("QH", "9D", "2C"),
            ("KS", "9H", "4D"),
            True,
            False,
            "ante_wins",
            ("lose", "lose", "lose"),
        ),
        # TCP §16: fully equal → push.
        (("KH", "9D", "5C"), ("KS", "9C", "5H"), True, False, "ante_wins", ("tie", "push", "push")),
        # TCP §13: no qualifier → ante 1:1, BET untouched, whatever the hands.
        (
            ("5H", "3D", "2C"),
            ("JS", "TH", "8D"),
            False,
            False,
            "ante_wins",
            ("lose", "win", "push"),
        ),
        (("5H", "3D", "2C"), ("JS", "TH", "8D"), False, False, "push", ("lose", "push", "push")),
        # TCP §7: a fold loses the ante and makes no BET.
        (("AH", "AD", "AC"), ("JS", "TH", "8D"), False, True, "ante_wins", (None, "lose", None)),
    ],
)
def test_showdown(
    box: tuple[str, ...],
    dealer: tuple[str, ...],
    qualifies: bool,
    folded: bool,
    not_qualified: Any,
    expected: tuple[Any, ...],
) -> None:
    got = showdown(
        h3(*box),
        h3(*dealer),
        dealer_qualifies=qualifies,
        folded=folded,
        not_qualified=not_qualified,
    )
    assert got == Showdown(*expected)


# --- Three Card Poker: deal, concealment --------------------------------------------------------


def test_three_card_deal_order_and_concealment() -> None:
    eng = make()
    open_round(eng, [1, 3])
    cards = ["KH", "2C", "QS", "KD", "3C", "9S", "5H", "7C", "4S"]
    for card in cards:
        event = parse_event({"type": "card", "card": card})
        assert eng.conceals(event) is True  # PKH-09: every card face down
        assert eng.apply(event) == []
    assert eng.snapshot()["coup"] == {
        "box1": [None, None, None],
        "box3": [None, None, None],
        "dealer": [None, None, None],
    }
    # The deal is complete but the decision window is open: no outcome yet.
    assert eng.phase == "dealing"
    out = send(eng, {"type": "confirm"})
    result = out[0].result
    assert result["boxes"]["box1"]["cards"] == ["KH", "KD", "5H"]
    assert result["boxes"]["box3"]["cards"] == ["2C", "3C", "7C"]
    assert result["dealer"]["cards"] == ["QS", "9S", "4S"]
    assert set(result["boxes"]) == {"box1", "box3"}


# --- Three Card Poker: worked examples ----------------------------------------------------------

TCP_CASES: list[
    tuple[str, list[str], list[str], dict[int, str], dict[str, Any], dict[str, Any]]
] = [
    # TCP §10 / L527: Q-high is the minimum; a pair of kings beats it (ante, play 1:1, L529).
    (
        "dealer_queen_high_qualifies",
        ["KH", "KD", "5C"],
        ["QS", "3H", "2D"],
        {},
        {},
        {
            "qualifies": True,
            "result": "win",
            "ante": "win",
            "play": "win",
            "pair_plus": "pair",
            "ante_bonus": None,
        },
    ),
    # TCP §13: jack high does not qualify → ante 1:1, play push even though the box is lower.
    (
        "dealer_jack_high_not_qualified",
        ["5H", "3D", "2C"],
        ["JS", "TH", "8D"],
        {},
        {},
        {"qualifies": False, "result": "lose", "ante": "win", "play": "push", "pair_plus": None},
    ),
    # C35 alternative: every main bet pushes.
    (
        "not_qualified_push",
        ["AH", "9D", "2C"],
        ["JS", "TH", "8D"],
        {},
        {"not_qualified": "push"},
        {"qualifies": False, "result": "win", "ante": "push", "play": "push"},
    ),
    # TCP §11: the dealer's pair beats ace high.
    (
        "dealer_stronger",
        ["AH", "KD", "9C"],
        ["2S", "2H", "7D"],
        {},
        {},
        {"qualifies": True, "result": "lose", "ante": "lose", "play": "lose", "pair_plus": None},
    ),
    # TCP §15: same combination → the higher card, then the next decides.
    (
        "tie_broken_by_third_card_win",
        ["KH", "9D", "5C"],
        ["KS", "9H", "4D"],
        {},
        {},
        {"result": "win", "ante": "win", "play": "win"},
    ),
    (
        "tie_broken_by_third_card_lose",
        ["KH", "9D", "5C"],
        ["KS", "9H", "6D"],
        {},
        {},
        {"result": "lose", "ante": "lose", "play": "lose"},
    ),
    (
        "pair_kicker",
        ["8H", "8D", "AC"],
        ["8S", "8C", "KD"],
        {},
        {},
        {"result": "win", "pair_plus": "pair"},
    ),
    # TCP §16: fully equal → push (suits never break ties, PKH-18).
    (
        "full_tie",
        ["KH", "9D", "5C"],
        ["KS", "9C", "5H"],
        {},
        {},
        {"result": "tie", "ante": "push", "play": "push"},
    ),
    (
        "full_tie_low_straight",
        ["AH", "2D", "3C"],
        ["AS", "2C", "3H"],
        {},
        {},
        {"result": "tie", "ante": "push", "play": "push", "ante_bonus": "straight"},
    ),
    # TCP §12 / L531: Pair Plus is independent of the dealer.
    (
        "pair_plus_independent_of_dealer",
        ["8H", "8D", "3C"],
        ["4S", "5S", "6S"],
        {},
        {},
        {"result": "lose", "ante": "lose", "pair_plus": "pair", "ante_bonus": None},
    ),
    # TCP §17: a straight beats a flush.
    (
        "straight_beats_flush",
        ["9H", "TD", "JC"],
        ["2S", "7S", "KS"],
        {},
        {},
        {"result": "win", "pair_plus": "straight", "ante_bonus": "straight"},
    ),
    # TCP §14 / L533–538: the Ante Bonus pays "even if the dealer wins".
    (
        "ante_bonus_even_if_dealer_wins",
        ["4H", "5D", "6C"],
        ["7S", "8S", "9S"],
        {},
        {},
        {"result": "lose", "ante_bonus": "straight", "pair_plus": "straight"},
    ),
    (
        "ante_bonus_trips",
        ["7H", "7D", "7C"],
        ["AS", "2D", "9H"],
        {},
        {},
        {"ante_bonus": "three_of_a_kind", "pair_plus": "three_of_a_kind"},
    ),
    # L540–548: A-K-Q suited is the Mini Royal (Pair Plus); a straight flush for the Ante Bonus.
    (
        "mini_royal",
        ["QH", "KH", "AH"],
        ["AS", "2D", "9C"],
        {},
        {},
        {"result": "win", "ante_bonus": "straight_flush", "pair_plus": "mini_royal"},
    ),
    # seed 000 §14 item 17: a flush earns no Ante Bonus by default, and does as written.
    (
        "flush_no_ante_bonus_by_default",
        ["2H", "7H", "9H"],
        ["AS", "2D", "9C"],
        {},
        {},
        {"ante_bonus": None, "pair_plus": "flush"},
    ),
    (
        "flush_ante_bonus_as_written",
        ["2H", "7H", "9H"],
        ["AS", "2D", "9C"],
        {},
        {"ante_bonus": "flush"},
        {"ante_bonus": "flush", "pair_plus": "flush"},
    ),
    # V-TCP-3: a folded box loses ante and bonus, with no bonus evaluation.
    (
        "fold_table_form",
        ["7H", "7D", "7C"],
        ["AS", "2D", "9H"],
        {1: "fold"},
        {},
        {
            "decision": "fold",
            "decided": True,
            "result": None,
            "ante": "lose",
            "play": None,
            "pair_plus": None,
            "ante_bonus": None,
            "six_card": None,
        },
    ),
    # L531: "Plus a pair" wins "even if he chooses the Surrender"; the Ante Bonus needs Play.
    (
        "fold_live_form",
        ["7H", "7D", "7C"],
        ["AS", "2D", "9H"],
        {1: "fold"},
        {"form": "live"},
        {"result": None, "ante": "lose", "pair_plus": "three_of_a_kind", "ante_bonus": None},
    ),
    (
        "explicit_play",
        ["AH", "KD", "3C"],
        ["QS", "JH", "2D"],
        {1: "play"},
        {},
        {"decision": "play", "decided": True, "result": "win", "play": "win"},
    ),
    (
        "undecided_play_by_default",
        ["AH", "KD", "3C"],
        ["QS", "JH", "2D"],
        {},
        {},
        {"decision": "play", "decided": False, "result": "win"},
    ),
    (
        "undecided_fold",
        ["AH", "KD", "3C"],
        ["QS", "JH", "2D"],
        {},
        {"undecided": "fold"},
        {"decision": "fold", "decided": False, "result": None, "ante": "lose", "play": None},
    ),
]


@pytest.mark.parametrize(
    ("box", "dealer", "decisions", "rules", "expected"),
    [case[1:] for case in TCP_CASES],
    ids=[case[0] for case in TCP_CASES],
)
def test_three_card_outcomes(
    box: list[str],
    dealer: list[str],
    decisions: dict[int, str],
    rules: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    result = play_round("three_card_poker", {"box1": box, "dealer": dealer}, decisions, **rules)
    facts = {**result["boxes"]["box1"], "qualifies": result["dealer"]["qualifies"]}
    assert {k: facts[k] for k in expected} == expected


def test_three_card_full_outcome() -> None:
    result = play_round(
        "three_card_poker",
        {"box1": ["7H", "7D", "2C"], "box2": ["AH", "KS", "4C"], "dealer": ["7S", "KH", "KD"]},
        {2: "fold"},
    )
    assert result == {
        "dealer": {
            "cards": ["7S", "KH", "KD"],
            "hand": "pair of kings",
            "category": "pair",
            "best": ["7S", "KH", "KD"],
            "qualifies": True,
        },
        "boxes": {
            "box1": {
                "cards": ["7H", "7D", "2C"],
                "hand": "pair of sevens",
                "category": "pair",
                "best": ["7H", "7D", "2C"],
                "decision": "play",
                "decided": False,
                "result": "lose",
                "ante": "lose",
                "play": "lose",
                "pair_plus": "pair",
                "ante_bonus": None,
                # L550–559: best 5 of the box's 3 and the dealer's 3: sevens full of kings.
                "six_card": {
                    "hand": "full house, sevens over kings",
                    "category": "full_house",
                    "best": ["7H", "7D", "7S", "KH", "KD"],
                    "bonus": "full_house",
                },
            },
            "box2": {
                "cards": ["AH", "KS", "4C"],
                "hand": "ace high",
                "category": "high_card",
                "best": ["AH", "KS", "4C"],
                "decision": "fold",
                "decided": True,
                "result": None,
                "ante": "lose",
                "play": None,
                "pair_plus": None,
                "ante_bonus": None,
                "six_card": None,
            },
        },
        "ranking": "three_card_poker",
        "form": "table",
    }


@pytest.mark.parametrize(
    ("box", "dealer", "bonus", "hand"),
    [
        (["7H", "7D", "2C"], ["7S", "KH", "KD"], "full_house", "full house, sevens over kings"),
        (["7H", "7D", "2C"], ["7S", "7C", "KD"], "four_of_a_kind", "four of a kind, sevens"),
        (["TH", "JH", "QH"], ["KH", "AH", "2C"], "royal_flush", "royal flush"),
        (["2H", "5H", "9H"], ["KH", "3H", "2C"], "flush", "flush, king high"),
        (["AC", "2D", "3H"], ["4S", "5C", "KD"], "straight", "straight, five high"),
        (["9C", "9D", "3H"], ["9S", "5C", "KD"], "three_of_a_kind", "three of a kind, nines"),
        (["9C", "8D", "3H"], ["9S", "8C", "KD"], None, "two pair, nines and eights"),
    ],
)
def test_six_card_bonus_over_box_and_dealer(
    box: list[str], dealer: list[str], bonus: str | None, hand: str
) -> None:
    result = play_round("three_card_poker", {"box1": box, "dealer": dealer}, form="live")
    six = result["boxes"]["box1"]["six_card"]
    assert (six["bonus"], six["hand"]) == (bonus, hand)
    assert set(six["best"]) <= set(box) | set(dealer)


def test_teen_patti_preset_is_the_live_form() -> None:
    eng = make("teen_patti")
    rules = eng.game_rules.rules
    assert isinstance(rules, ThreeCardPokerRules)
    assert (rules.ranking, rules.form, rules.boxes, rules.bonus_on_fold) == (
        "teen_patti",
        "live",
        1,
        "settled",
    )
    assert isinstance(eng.game_rules, TeenPatti)
    assert eng.game == "teen_patti"
    assert make("three_card_poker").game == "three_card_poker"
    assert not isinstance(make("three_card_poker").game_rules, TeenPatti)
    open_round(eng)
    deal(eng, rotation({"box1": ["QH", "KH", "AH"], "dealer": ["2S", "3D", "9C"]}, 3))
    out = send(eng, {"type": "confirm"})
    assert out[0].game == "teen_patti"
    result = out[0].result
    assert (result["ranking"], result["form"]) == ("teen_patti", "live")
    assert result["dealer"]["qualifies"] is False
    assert result["boxes"]["box1"]["pair_plus"] == "mini_royal"


# --- Caribbean Stud -----------------------------------------------------------------------------


def test_caribbean_deal_order_and_concealment() -> None:
    eng = make("caribbean_stud", boxes=2)
    open_round(eng)
    hands = {
        "box1": ["AH", "KH", "QH", "JH", "TH"],
        "box2": ["2C", "3C", "4C", "5C", "7D"],
        "dealer": ["9S", "9D", "4D", "8C", "6S"],
    }
    hidden = []
    for card in rotation(hands, 5):
        event = parse_event({"type": "card", "card": card})
        hidden.append(eng.conceals(event))
        assert eng.apply(event) == []
    # L718: the boxes' cards face up; the dealer's face down except one (his fifth).
    assert hidden == [False, False, True] * 4 + [False, False, False]
    assert eng.snapshot()["coup"] == {
        "box1": hands["box1"],
        "box2": hands["box2"],
        "dealer": [None, None, None, None, "6S"],
    }
    result = send(eng, {"type": "confirm"})[0].result
    assert result["dealer"]["cards"] == hands["dealer"]
    assert result["dealer"]["up_card"] == "6S"
    assert result["boxes"]["box1"]["call_hand"] == "royal_flush"


CARIBBEAN_CASES: list[
    tuple[str, list[str], list[str], dict[int, str], dict[str, Any], dict[str, Any]]
] = [
    # L741: ace-king is the minimum; any pair beats it (Call paytable "Pair or AK", L745–758).
    (
        "dealer_ace_king_qualifies",
        ["2H", "2D", "9C", "7S", "4H"],
        ["AS", "KD", "7C", "5H", "3D"],
        {},
        {},
        {
            "qualifies": True,
            "result": "win",
            "ante": "win",
            "call": "win",
            "call_hand": "pair_or_ace_king",
        },
    ),
    # L741 GAP (C35): ace-queen does not qualify → default ante 1:1, call push.
    (
        "dealer_ace_queen_not_qualified",
        ["KH", "QD", "9C", "7S", "4H"],
        ["AS", "QC", "JD", "9H", "8D"],
        {},
        {},
        {"qualifies": False, "result": "lose", "ante": "win", "call": "push", "call_hand": None},
    ),
    (
        "not_qualified_push",
        ["KH", "KD", "9C", "7S", "4H"],
        ["AS", "QC", "JD", "9H", "8D"],
        {},
        {"not_qualified": "push"},
        {
            "qualifies": False,
            "result": "win",
            "ante": "push",
            "call": "push",
            "call_hand": "pair_or_ace_king",
        },
    ),
    # Same combination: the highest cards outside it decide, down to the last (L318–320).
    (
        "tie_broken_by_last_card",
        ["AH", "KH", "9C", "5D", "3S"],
        ["AD", "KC", "9S", "5H", "2C"],
        {},
        {},
        {"qualifies": True, "result": "win", "ante": "win", "call": "win"},
    ),
    (
        "two_pair_kicker",
        ["QH", "QD", "4C", "4D", "2S"],
        ["QS", "QC", "4S", "4H", "3C"],
        {},
        {},
        {"result": "lose", "ante": "lose", "call": "lose", "call_hand": "two_pair"},
    ),
    (
        "full_tie",
        ["AH", "KH", "9C", "5D", "3S"],
        ["AD", "KC", "9S", "5H", "3C"],
        {},
        {},
        {"result": "tie", "ante": "push", "call": "push"},
    ),
    (
        "dealer_stronger",
        ["AH", "KH", "9C", "5D", "3S"],
        ["2D", "2C", "9S", "5H", "3C"],
        {},
        {},
        {"result": "lose", "ante": "lose", "call": "lose", "call_hand": "pair_or_ace_king"},
    ),
    (
        "wheel_straight",
        ["AH", "2D", "3C", "4S", "5H"],
        ["KD", "KC", "9S", "8H", "3D"],
        {},
        {},
        {"result": "win", "call_hand": "straight", "category": "straight"},
    ),
    # L735: Fold loses the Ante; no call is made.
    (
        "fold",
        ["2H", "7D", "9C", "JS", "4H"],
        ["AS", "KD", "7C", "5H", "3D"],
        {1: "fold"},
        {},
        {"decision": "fold", "result": None, "ante": "lose", "call": None, "call_hand": None},
    ),
]


@pytest.mark.parametrize(
    ("box", "dealer", "decisions", "rules", "expected"),
    [case[1:] for case in CARIBBEAN_CASES],
    ids=[case[0] for case in CARIBBEAN_CASES],
)
def test_caribbean_outcomes(
    box: list[str],
    dealer: list[str],
    decisions: dict[int, str],
    rules: dict[str, Any],
    expected: dict[str, Any],
) -> None:
    result = play_round("caribbean_stud", {"box1": box, "dealer": dealer}, decisions, **rules)
    facts = {**result["boxes"]["box1"], "qualifies": result["dealer"]["qualifies"]}
    assert {k: facts[k] for k in expected} == expected


@pytest.mark.parametrize(
    ("box", "dealer", "decisions", "rules", "bonus", "hand"),
    [
        # The dealer's hole cards hold two nines: only the up card (4D) counts → two pair.
        (
            ["9H", "9D", "4C", "7S", "2H"],
            ["9S", "9C", "KD", "AH", "4D"],
            {},
            {},
            None,
            "two pair, nines and fours",
        ),
        # The up card is the third nine → three of a kind (L739: from Trips).
        (
            ["9H", "9D", "4C", "7S", "2H"],
            ["KD", "AH", "3C", "5S", "9S"],
            {},
            {},
            "three_of_a_kind",
            "three of a kind, nines",
        ),
        (
            ["TH", "JH", "QH", "KH", "2C"],
            ["3C", "4D", "5S", "6S", "AH"],
            {},
            {},
            "royal_flush",
            "royal flush",
        ),
        (
            ["5H", "5D", "5C", "KH", "2C"],
            ["3C", "4D", "8S", "6S", "KS"],
            {},
            {},
            "full_house",
            "full house, fives over kings",
        ),
        # A folded box's 5+1 is settled by default (GAP, L531 by analogy) …
        (
            ["5H", "5D", "5C", "KH", "2C"],
            ["3C", "4D", "8S", "6S", "5S"],
            {1: "fold"},
            {},
            "four_of_a_kind",
            "four of a kind, fives",
        ),
    ],
)
def test_five_plus_one_bonus_uses_the_up_card(
    box: list[str],
    dealer: list[str],
    decisions: dict[int, str],
    rules: dict[str, Any],
    bonus: str | None,
    hand: str,
) -> None:
    result = play_round("caribbean_stud", {"box1": box, "dealer": dealer}, decisions, **rules)
    five_plus_one = result["boxes"]["box1"]["five_plus_one"]
    assert (five_plus_one["bonus"], five_plus_one["hand"]) == (bonus, hand)
    assert set(five_plus_one["best"]) <= {*box, dealer[4]}


def test_five_plus_one_lost_on_fold_when_configured() -> None:
    result = play_round(
        "caribbean_stud",
        {"box1": ["5H", "5D", "5C", "KH", "2C"], "dealer": ["3C", "4D", "8S", "6S", "5S"]},
        {1: "fold"},
        bonus_on_fold="lost",
    )
    assert result["boxes"]["box1"]["five_plus_one"] is None


# --- decisions ----------------------------------------------------------------------------------


def test_decisions_refused_and_accepted() -> None:
    eng = make(boxes=2)
    open_round(eng, [1])
    hands = {"box1": ["AH", "KD", "3C"], "dealer": ["QS", "JH", "2D"]}
    cards = rotation(hands, 3)
    deal(eng, cards[:5])
    # PKH-10: no decision before every card is dealt.
    out = send(eng, {"type": "decision", "box": 1, "action": "fold"})
    assert codes(out) == ["decision_refused"]
    assert "before every card is dealt (5 of 6)" in out[0].message
    deal(eng, cards[5:])
    # Only fold / play; only a playing box.
    assert codes(send(eng, {"type": "decision", "box": 1, "action": "exchange"})) == [
        "decision_refused"
    ]
    assert codes(send(eng, {"type": "decision", "box": 2, "action": "fold"})) == [
        "decision_refused"
    ]
    assert send(eng, {"type": "decision", "box": 1, "action": "fold"}) == []
    # One decision per box.
    out = send(eng, {"type": "decision", "box": 1, "action": "play"})
    assert codes(out) == ["decision_refused"]
    assert "already decided" in out[0].message
    result = send(eng, {"type": "confirm"})[0].result
    assert result["boxes"]["box1"]["decision"] == "fold"


def test_confirm_before_the_deal_is_complete_is_wrong_card_count() -> None:
    eng = make("caribbean_stud")
    open_round(eng)
    deal(eng, ["AH", "KD", "3C"])
    assert codes(send(eng, {"type": "confirm"})) == ["wrong_card_count"]
    assert eng.phase == "dealing"


def test_stray_card_in_the_decision_window_is_not_played() -> None:
    eng = make(boxes=1)
    open_round(eng)
    deal(eng, rotation({"box1": ["AH", "KD", "3C"], "dealer": ["QS", "JH", "2D"]}, 3))
    # Every card is out; a card read while the window is open holds the round (the engine's
    # seed-000 PR-8.2 analogy) and is never played.
    assert codes(deal(eng, ["9C"])) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"
    assert send(eng, {"type": "confirm"}) == []  # the supervisor lets the round go on
    out = send(eng, {"type": "confirm"})  # the dealer closes the decision window
    result = out[0].result
    assert out[0].status == "settled"
    assert result["unplayed"] == ["9C"]
    assert result["boxes"]["box1"]["cards"] == ["AH", "KD", "3C"]
    assert result["dealer"]["cards"] == ["QS", "JH", "2D"]


# --- irregularities -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules", "error", "rule", "remedy"),
    [
        # PKH-21 / V-TCP-1: reshuffle, bets untouched.
        (
            "three_card_poker",
            {},
            {"kind": "wrong_count", "position": "box2", "cards": 4},
            "PKH-21",
            RESHUFFLE_BETS_STAND,
        ),
        (
            "three_card_poker",
            {},
            {"kind": "card_exposed", "position": "dealer"},
            "PKH-21",
            RESHUFFLE_BETS_STAND,
        ),
        # seed 001 L561: technical bug → cancelled, bets returned.
        (
            "three_card_poker",
            {"form": "live"},
            {"kind": "card_exposed", "position": "box1"},
            "seed-001 L561",
            REFUND,
        ),
        (
            "teen_patti",
            {},
            {"kind": "wrong_count", "position": "dealer", "cards": 2},
            "seed-001 L561",
            REFUND,
        ),
        # seed 001 L773 (C34).
        (
            "caribbean_stud",
            {},
            {"kind": "card_exposed", "position": "dealer"},
            "seed-001 L773",
            REFUND,
        ),
        (
            "caribbean_stud",
            {"boxes": 2},
            {"kind": "wrong_count", "position": "box2", "cards": 6},
            "seed-001 L773",
            REFUND,
        ),
    ],
)
def test_deal_error_remedies(
    game: str, rules: dict[str, Any], error: dict[str, Any], rule: str, remedy: str
) -> None:
    eng = make(game, **rules)
    open_round(eng)
    deal(eng, ["AH", "KD"])
    out = send(eng, {"type": "deal_error", **error})
    assert len(out) == 1
    void = out[0]
    assert isinstance(void, Outcome)
    assert (void.status, void.reason) == ("void", MISDEAL)
    assert void.result is not None
    assert (void.result["rule"], void.result["remedy"]) == (rule, remedy)
    # The void result shows face-up cards only.
    public = void.result["cards"]
    if game == "caribbean_stud":
        boxes = rules.get("boxes", 1)
        assert public["box1"] == ["AH"]
        assert public[("box2" if boxes == 2 else "dealer")] == (["KD"] if boxes == 2 else [None])
    else:
        assert all(card is None for cards in public.values() for card in cards)
    # A new deck for the next round (reshuffle every round).
    assert codes(send(eng, {"type": "round_open"})) == ["shuffle_required"]


def test_deal_error_after_the_deal_voids_too() -> None:
    eng = make(boxes=1)
    open_round(eng)
    deal(eng, rotation({"box1": ["AH", "KD", "3C"], "dealer": ["QS", "JH", "2D"]}, 3))
    out = send(eng, {"type": "deal_error", "kind": "card_exposed", "position": "dealer"})
    assert (out[0].status, out[0].result["remedy"]) == ("void", RESHUFFLE_BETS_STAND)


def test_reshuffle_every_round() -> None:
    eng = make("caribbean_stud")
    open_round(eng)
    deal(eng, rotation({"box1": DECK[:5], "dealer": DECK[5:10]}, 5))
    assert send(eng, {"type": "confirm"})[0].status == "settled"
    assert codes(send(eng, {"type": "round_open"})) == ["shuffle_required"]
    assert send(eng, {"type": "shuffle_started"}) == []
    assert send(eng, {"type": "shuffle_completed", "cards": 52}) == []
    open_round(eng)
    assert eng.phase == "dealing"


def test_duplicate_card_is_a_foul_deck() -> None:
    eng = make(boxes=1)
    open_round(eng)
    out = deal(eng, ["AH", "KD", "3C", "QS", "AH"])  # a second AH: the shoe holds the round
    assert eng.phase == "pending_decision"
    assert out
    assert send(eng, {"type": "confirm"}) == []  # the supervisor lets the deal go on
    deal(eng, ["2D"])
    out = send(eng, {"type": "confirm"})
    result = out[0].result
    assert out[0].status == "settled"
    assert result["foul_deck"] == ["AH"]
    assert result["boxes"] == {"box1": {"cards": ["AH", "3C", "AH"]}}
    assert "qualifies" not in result["dealer"]


# --- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules"),
    [
        ("three_card_poker", {"bogus": 1}),
        ("three_card_poker", {"decks": 2}),
        ("three_card_poker", {"jokers_per_deck": 1}),
        ("three_card_poker", {"boxes": 0}),
        ("three_card_poker", {"boxes": 10}),
        ("three_card_poker", {"ranking": "omaha"}),
        ("three_card_poker", {"form": "online"}),
        ("three_card_poker", {"ante_bonus": "pair"}),
        ("three_card_poker", {"boxes": "6"}),
        ("caribbean_stud", {"ranking": "teen_patti"}),
        ("caribbean_stud", {"form": "live"}),
        ("caribbean_stud", {"not_qualified": "ante_push"}),
        ("caribbean_stud", {"undecided": "surrender"}),
        ("caribbean_stud", {"bonus_on_fold": "void"}),
    ],
)
def test_bad_rules_are_config_errors(game: str, rules: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        build_engine("T1", game, rules, source="test.toml")


@pytest.mark.parametrize(
    ("game", "rules", "expected"),
    [
        ("three_card_poker", {}, {"form": "table", "boxes": 6, "bonus_on_fold": "lost"}),
        ("three_card_poker", {"form": "live"}, {"boxes": 1, "bonus_on_fold": "settled"}),
        ("three_card_poker", {"form": "live", "boxes": 3}, {"boxes": 3}),
        ("teen_patti", {"form": "table"}, {"boxes": 6, "ranking": "teen_patti"}),
        ("teen_patti", {"bonus_on_fold": "lost"}, {"form": "live", "bonus_on_fold": "lost"}),
        (
            "caribbean_stud",
            {},
            {"boxes": 1, "bonus_on_fold": "settled", "not_qualified": "ante_wins", "decks": 1},
        ),
    ],
)
def test_rule_defaults(game: str, rules: dict[str, Any], expected: dict[str, Any]) -> None:
    parsed = make(game, **rules).game_rules.rules
    assert isinstance(parsed, (ThreeCardPokerRules, CaribbeanStudRules))
    assert {k: getattr(parsed, k) for k in expected} == expected


# --- property: random decks against an independent evaluator ------------------------------------

_V = {r: i for i, r in enumerate(RANKS, start=2)}


def _ref3(cards: Sequence[str]) -> tuple[int, list[int]]:
    """3-card rank: SF 5 > trips 4 > straight 3 > flush 2 > pair 1 > high 0 (TCP §17)."""
    vals = sorted((_V[c[0]] for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    high = None
    if len(set(vals)) == 3:
        if vals[0] - vals[2] == 2:
            high = vals[0]
        elif vals == [14, 3, 2]:
            high = 3
    if high is not None:
        return (5 if flush else 3, [high])
    if len(set(vals)) == 1:
        return (4, vals[:1])
    if flush:
        return (2, vals)
    if len(set(vals)) == 2:
        pair = vals[1]
        return (1, [pair, next(v for v in vals if v != pair)])
    return (0, vals)


def _ref5(cards: Sequence[str]) -> tuple[int, list[int]]:
    vals = sorted((_V[c[0]] for c in cards), reverse=True)
    flush = len({c[1] for c in cards}) == 1
    distinct = sorted(set(vals), reverse=True)
    high = None
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            high = distinct[0]
        elif distinct == [14, 5, 4, 3, 2]:
            high = 5
    groups = sorted(((vals.count(v), v) for v in distinct), reverse=True)
    shape = [g[0] for g in groups]
    order = [g[1] for g in groups]
    if high is not None and flush:
        return (8, [high])
    if shape[0] == 4:
        return (7, order)
    if shape == [3, 2]:
        return (6, order)
    if flush:
        return (5, vals)
    if high is not None:
        return (4, [high])
    if shape[0] == 3:
        return (3, order)
    if shape[:2] == [2, 2]:
        return (2, order)
    if shape[0] == 2:
        return (1, order)
    return (0, vals)


def _ref_best5(cards: Sequence[str]) -> tuple[int, list[int]]:
    return max(_ref5(c) for c in itertools.combinations(cards, 5))


_CAT5 = [
    "high_card",
    "pair",
    "two_pair",
    "three_of_a_kind",
    "straight",
    "flush",
    "full_house",
    "four_of_a_kind",
    "straight_flush",
]


def _ref_showdown(
    box: tuple[int, list[int]], dealer: tuple[int, list[int]], qualifies: bool, folded: bool
) -> tuple[Any, Any, Any]:
    if folded:
        return (None, "lose", None)
    result = "win" if box > dealer else "lose" if box < dealer else "tie"
    if not qualifies:
        return (result, "win", "push")
    bet = "push" if result == "tie" else result
    return (result, bet, bet)


@settings(max_examples=60, deadline=None)
@given(
    deck=st.permutations(DECK),
    boxes=st.integers(min_value=1, max_value=6),
    folds=st.sets(st.integers(min_value=1, max_value=6)),
)
def test_three_card_random_decks(deck: list[str], boxes: int, folds: set[int]) -> None:
    eng = make(boxes=boxes, form="live")  # live: a folded box's bonuses are still evaluated
    open_round(eng)
    assert deal(eng, deck[: 3 * (boxes + 1)]) == []
    for box in sorted(folds):
        out = send(eng, {"type": "decision", "box": box, "action": "fold"})
        assert codes(out) == ([] if box <= boxes else ["decision_refused"])
    result = send(eng, {"type": "confirm"})[0].result
    positions = [f"box{b}" for b in range(1, boxes + 1)] + ["dealer"]
    hands = {p: deck[i : 3 * (boxes + 1) : boxes + 1] for i, p in enumerate(positions)}
    dealer = _ref3(hands["dealer"])
    qualifies = dealer[0] > 0 or dealer[1][0] >= 12
    assert result["dealer"]["qualifies"] is qualifies
    for b in range(1, boxes + 1):
        facts = result["boxes"][f"box{b}"]
        cards = hands[f"box{b}"]
        assert facts["cards"] == cards
        mine = _ref3(cards)
        expected = _ref_showdown(mine, dealer, qualifies, b in folds)
        assert (facts["result"], facts["ante"], facts["play"]) == expected
        assert (facts["pair_plus"] is not None) == (mine[0] >= 1)
        ante_bonus = mine[0] in (3, 4, 5) and b not in folds
        assert (facts["ante_bonus"] is not None) is ante_bonus
        six = _ref_best5([*cards, *hands["dealer"]])
        assert facts["six_card"]["category"] == _CAT5[six[0]]
        assert (facts["six_card"]["bonus"] is not None) == (six[0] >= 3)


@settings(max_examples=40, deadline=None)
@given(
    deck=st.permutations(DECK),
    boxes=st.integers(min_value=1, max_value=9),
    folds=st.sets(st.integers(min_value=1, max_value=9)),
)
def test_caribbean_random_decks(deck: list[str], boxes: int, folds: set[int]) -> None:
    eng = make("caribbean_stud", boxes=boxes)
    open_round(eng)
    assert deal(eng, deck[: 5 * (boxes + 1)]) == []
    for box in sorted(folds):
        send(eng, {"type": "decision", "box": box, "action": "fold"})
    result = send(eng, {"type": "confirm"})[0].result
    step = boxes + 1
    positions = [f"box{b}" for b in range(1, boxes + 1)] + ["dealer"]
    hands = {p: deck[i : 5 * step : step] for i, p in enumerate(positions)}
    dealer = _ref5(hands["dealer"])
    qualifies = dealer[0] > 0 or dealer[1][:2] == [14, 13]
    assert result["dealer"]["qualifies"] is qualifies
    assert result["dealer"]["up_card"] == hands["dealer"][4]
    for b in range(1, boxes + 1):
        facts = result["boxes"][f"box{b}"]
        cards = hands[f"box{b}"]
        mine = _ref5(cards)
        folded = b in folds
        assert facts["category"] == _CAT5[mine[0]]
        assert (facts["result"], facts["ante"], facts["call"]) == _ref_showdown(
            mine, dealer, qualifies, folded
        )
        beats_ak = mine[0] > 0 or mine[1][:2] >= [14, 13]
        assert (facts["call_hand"] is not None) == (beats_ak and not folded)
        plus = _ref_best5([*cards, hands["dealer"][4]])
        assert facts["five_plus_one"]["category"] == _CAT5[plus[0]]
        assert (facts["five_plus_one"]["bonus"] is not None) == (plus[0] >= 3)


def test_caribbean_a_box_card_reported_exposed_is_noted_and_the_round_goes_on() -> None:
    """L718: the players' cards are dealt face up; exposing one is no misdeal."""
    eng = build_engine("T1", "caribbean_stud", {}, source="test.toml")
    for raw in (
        {"type": "shuffle_started"},
        {"type": "shuffle_completed", "cards": 52},
        {"type": "round_open"},
        {"type": "bets_closed"},
    ):
        eng.apply(parse_event(raw))
    out = eng.apply(parse_event({"type": "deal_error", "kind": "card_exposed", "position": "box1"}))
    assert [getattr(o, "code", None) for o in out] == ["deal_error_noted"]
    assert eng.phase == "dealing"
    out = eng.apply(
        parse_event({"type": "deal_error", "kind": "card_exposed", "position": "dealer"})
    )
    assert [(getattr(o, "status", None), getattr(o, "reason", None)) for o in out] == [
        ("void", "misdeal")
    ]
