"""The card-poker family (seed-001 §3.9–§3.12) and Bombay Poker (seed-000 §8) through the real
:class:`CardEngine`: deal, concealment, decisions, irregularities, outcomes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.card_poker import (
    BombayPoker,
    CardPoker,
    bombay_combinations,
    combination_cards,
    combination_class,
    settle,
)
from tablectl.controller.games.cards.poker import HandCategory, JokerMode, best_of, evaluate5
from tablectl.drivers.cards import full_deck, parse_card

Out = list[Any]


# --- helpers -----------------------------------------------------------------------------------


def make(game: str, rules: dict[str, Any] | None = None) -> CardEngine:
    return build_engine("T1", game, rules or {}, source="test.toml")


def feed(engine: CardEngine, *events: dict[str, Any]) -> Out:
    out: Out = []
    for event in events:
        out += engine.apply(parse_event(event))
    return out


def cards(*codes: str) -> list[dict[str, Any]]:
    return [{"type": "card", "card": c} for c in codes]


def rotation(boxes: list[str], dealer: str) -> list[str]:
    """Five rotations box1 … boxN, dealer (seed-001 L295, seed-000 BMP §6)."""
    hands = [b.split() for b in boxes]
    dealt = dealer.split()
    return [c for i in range(5) for c in [*(h[i] for h in hands), dealt[i]]]


def start(engine: CardEngine, *, deck: int = 52, boxes: list[int] | None = None) -> Out:
    closed: dict[str, Any] = {"type": "bets_closed"}
    if boxes is not None:
        closed["boxes"] = boxes
    return feed(
        engine,
        {"type": "shuffle_completed", "cards": deck},
        {"type": "round_open"},
        closed,
    )


def deal(
    game: str,
    boxes: list[str],
    dealer: str,
    rules: dict[str, Any] | None = None,
    *,
    bets: list[int] | None = None,
) -> tuple[CardEngine, Out]:
    engine = make(game, rules)
    deck = 53 if (rules or {}).get("variant", game) == "poker_with_joker" else 52
    out = start(engine, deck=deck, boxes=bets)
    out += feed(engine, *cards(*rotation(boxes, dealer)))
    return engine, out


def decide(box: int, action: str, *given: str) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "decision", "box": box, "action": action}
    if given:
        event["cards"] = list(given)
    return event


CONFIRM: dict[str, Any] = {"type": "confirm"}


def outcomes(out: Out) -> list[Outcome]:
    return [o for o in out if isinstance(o, Outcome)]


def result(out: Out) -> dict[str, Any]:
    (only,) = outcomes(out)
    assert only.status == "settled", only
    assert only.result is not None
    return only.result


def codes(out: Out) -> list[str]:
    return [v.code for v in out if isinstance(v, Verdict)]


def verdict(out: Out) -> Verdict:
    (only,) = [v for v in out if isinstance(v, Verdict)]
    return only


# --- card poker: deal ----------------------------------------------------------------------------


def test_deal_rotation_and_concealment() -> None:
    """L295: five cards to each box and the dealer clockwise, face down except the dealer's one
    face-up card, here his fifth (the deal's last card)."""
    engine = make("card_poker", {"boxes": 2})
    start(engine)
    order = rotation(["2S 3S 4S 5S 7H", "2H 3H 4H 5H 7D"], "AD KC 9H 6S 3C")
    concealed = []
    for code in order:
        event = parse_event({"type": "card", "card": code})
        concealed.append(engine.conceals(event))
        assert engine.apply(event) == []
    assert concealed == [True] * 14 + [False]
    assert engine.snapshot()["coup"] == {
        "box1": [None] * 5,
        "box2": [None] * 5,
        "dealer": [None, None, None, None, "3C"],
    }
    out = feed(engine, CONFIRM)
    res = result(out)
    assert res["dealer"]["cards"] == ["AD", "KC", "9H", "6S", "3C"]
    assert res["dealer"]["up_card"] == "3C"
    assert res["boxes"]["box1"]["cards"] == ["2S", "3S", "4S", "5S", "7H"]
    assert res["boxes"]["box2"]["cards"] == ["2H", "3H", "4H", "5H", "7D"]


def test_bets_closed_boxes_pick_the_playing_boxes() -> None:
    engine, out = deal(
        "card_poker",
        ["2S 3S 4S 5S 7H", "2H 3H 4H 5H 7D"],
        "AD KC 9H 6S 3C",
        {"boxes": 3},
        bets=[1, 3],
    )
    assert out == []
    res = result(feed(engine, CONFIRM))
    assert sorted(res["boxes"]) == ["box1", "box3"]


def test_outcome_waits_for_the_decision_window() -> None:
    engine, out = deal("card_poker", ["JS JH 8C 6D 3S"], "AD KC 7H 4S 2C")
    assert outcomes(out) == []
    res = result(feed(engine, decide(1, "play"), CONFIRM))
    assert res["boxes"]["box1"]["result"] == "win"


# --- card poker: qualification, ties, classes ---------------------------------------------------

BOX_JACKS = "JS JH 8C 6D 3S"


@pytest.mark.parametrize(
    ("variant", "dealer", "qualifies", "box_result"),
    [
        # L318–320: at least ace-king.
        ("card_poker", "AD KC 7H 4S 2C", True, "win"),
        ("card_poker", "AD QC JD 9H 7S", False, "dealer_no_game"),
        ("card_poker", "KD QC TD 9H 7S", False, "dealer_no_game"),
        ("card_poker", "2D 2H 9C 5H 4C", True, "win"),
        ("card_poker", "QD QC 9D 5H 4C", True, "lose"),
        ("card_poker_exchange", "AD KC 7H 4S 2C", True, "win"),  # L374 (C20: the dealer)
        ("card_poker_exchange", "AD QC 7H 4S 2C", False, "dealer_no_game"),
        ("six_card_poker", "AD KC 7H 4S 2C", True, "win"),  # L426
        ("six_card_poker", "AD QC 7H 4S 2C", False, "dealer_no_game"),
        # L485: Poker with Joker, at least a pair: ace-king is no game.
        ("poker_with_joker", "AD KC 7H 4S 2C", False, "dealer_no_game"),
        ("poker_with_joker", "2D 2H 9C 5H 4C", True, "win"),
        ("poker_with_joker", "AD KC 7H 4S JK", True, "lose"),  # the joker pairs the ace
    ],
)
def test_dealer_qualification(variant: str, dealer: str, qualifies: bool, box_result: str) -> None:
    engine, _ = deal(variant, [BOX_JACKS], dealer)
    res = result(feed(engine, CONFIRM))
    assert res["variant"] == variant
    assert res["dealer"]["qualifies"] is qualifies
    assert res["dealer_no_game"] is not qualifies
    assert res["boxes"]["box1"]["result"] == box_result


@pytest.mark.parametrize(
    ("box", "dealer", "expected"),
    [
        # L318–320: same combination → the highest cards outside it, high to low.
        ("QS QH AC 9D 5S", "QD QC AH 9S 4C", "win"),
        ("QS QH AC 9D 4S", "QD QC AH 9S 4C", "tie"),
        ("AS KH 9C 6D 3S", "AD KC 9H 6S 2C", "win"),
        ("AS KH 9C 6D 2S", "AD KC 9H 6S 3C", "lose"),
        ("8S 8H 4C 4D KS", "8D 8C 4H 4S QC", "win"),
        ("9S 8H 7C 6D 5S", "9D 8C 7H 6S 5C", "tie"),
        ("5S 5H 3C 3D 2S", "6D 6C 4H 3S 2C", "win"),  # two pair beats any pair
    ],
)
def test_kickers_and_ties(box: str, dealer: str, expected: str) -> None:
    engine, _ = deal("card_poker", [box], dealer)
    res = result(feed(engine, CONFIRM))
    assert res["boxes"]["box1"]["result"] == expected


@pytest.mark.parametrize(
    ("variant", "box", "category", "paytable_class"),
    [
        ("card_poker", "AS KH 7C 6D 5S", "high_card", "ak_or_pair"),  # L299–300, C32
        ("card_poker", "AS QH 7C 6D 5S", "high_card", None),
        ("card_poker", "5S 5H AC JD 7S", "pair", "ak_or_pair"),
        ("card_poker", "5S 5H JC JD 7S", "two_pair", "two_pair"),
        ("card_poker", "5S 5H 5D JD 7S", "three_of_a_kind", "three_of_a_kind"),
        ("card_poker", "TS JH QC KD AS", "straight", "straight"),
        ("card_poker", "2S 7S 9S JS KS", "flush", "flush"),
        ("card_poker", "5S 5H 5D JD JS", "full_house", "full_house"),
        ("card_poker", "5S 5H 5D 5C JS", "four_of_a_kind", "four_of_a_kind"),
        ("card_poker", "5H 6H 7H 8H 9H", "straight_flush", "straight_flush"),
        ("card_poker", "TS JS QS KS AS", "straight_flush", "royal_flush"),
        ("card_poker_exchange", "AS KH 7C 6D 5S", "high_card", "ak_or_pair"),
        # L461–473: the Joker table starts at One Pair and tops with "Poker".
        ("poker_with_joker", "AS KH 7C 6D 5S", "high_card", None),
        ("poker_with_joker", "5S 5H AC JD 7S", "pair", "one_pair"),
        ("poker_with_joker", "5S 5H 5D 5C JK", "five_of_a_kind", "poker"),
        ("poker_with_joker", "JK AS KS QS JS", "straight_flush", "royal_flush"),
    ],
)
def test_paytable_class(variant: str, box: str, category: str, paytable_class: str | None) -> None:
    engine, _ = deal(variant, [box], "2C 3D 4H 8S 9C")
    res = result(feed(engine, CONFIRM))
    assert res["boxes"]["box1"]["category"] == category
    assert res["boxes"]["box1"]["paytable_class"] == paytable_class


def test_joker_five_of_a_kind_beats_a_straight_flush() -> None:
    """L461–473: "Four of a Kind and Joker (Poker)" is the top hand."""
    engine, _ = deal("poker_with_joker", ["AS AH AD AC JK"], "9D TD JD QD KD")
    box = result(feed(engine, CONFIRM))["boxes"]["box1"]
    assert box["hand"] == "five of a kind, aces"
    assert box["result"] == "win"


@pytest.mark.parametrize(
    ("box", "dealer", "expected"),
    [
        # L475: on an otherwise equal hand the natural one wins.
        ("KS KH 9C 7D 4S", "KD 9H 7C 4H JK", "win"),
        ("KD 9H 7C 4H JK", "KS KH 9C 7D 4S", "lose"),
        # Only as the last tie-break: a joker-made pair of aces beats natural kings.
        ("AS 9H 7C 4H JK", "KS KH 9C 7D 4S", "win"),
    ],
)
def test_natural_beats_joker(box: str, dealer: str, expected: str) -> None:
    engine, _ = deal("poker_with_joker", [box], dealer)
    assert result(feed(engine, CONFIRM))["boxes"]["box1"]["result"] == expected


def test_joker_refused_outside_poker_with_joker() -> None:
    """seed-001 §3.0 validator (4): the shoe refuses the joker; it takes no place in a hand."""
    engine = make("card_poker")
    start(engine)
    out = feed(engine, *cards("JK"))
    assert codes(out) == ["joker_not_allowed"]
    assert engine.snapshot()["coup"] == {}


# --- card poker: decisions ---------------------------------------------------------------------


def test_exchange_flow() -> None:
    """L366–372: the card given back leaves the hand; the new card comes at once, face down."""
    engine, _ = deal("card_poker_exchange", ["AS AH KS KH 9C"], "AD KC 8H 6S 3D")
    assert feed(engine, decide(1, "exchange", "9C")) == []
    assert engine.snapshot()["coup"]["box1"] == [None] * 4
    replacement = parse_event({"type": "card", "card": "KD"})
    assert engine.conceals(replacement) is True
    assert engine.apply(replacement) == []
    assert engine.snapshot()["coup"]["box1"] == [None] * 5
    res = result(feed(engine, decide(1, "play"), CONFIRM))
    box = res["boxes"]["box1"]
    assert box["cards"] == ["AS", "AH", "KS", "KH", "KD"]
    assert box["given_back"] == ["9C"]
    assert box["hand"] == "full house, kings over aces"
    assert box["result"] == "win"
    assert box["paytable_class"] == "full_house"
    assert box["bonus"]["cards"] == ["AS", "AH", "KS", "KH", "9C"]
    assert box["bonus"]["category"] == "two_pair"
    assert box["bonus"]["eligible"] is False


def test_exchange_lowercase_and_joker_given_back() -> None:
    engine, _ = deal("poker_with_joker", ["JK 2H 7C 9D QS"], "AD AC 8H 6S 3D")
    assert feed(engine, decide(1, "exchange", "jk")) == []
    res = result(feed(engine, *cards("QH"), CONFIRM))
    assert res["boxes"]["box1"]["given_back"] == ["JK"]
    assert res["boxes"]["box1"]["cards"] == ["2H", "7C", "9D", "QS", "QH"]


@pytest.mark.parametrize(
    ("variant", "dealt", "changed", "eligible"),
    [
        # L397–403: Flush and better "without having to exchange"; an exchange loses it.
        ("card_poker_exchange", "2S 7S 9S JS KS", None, True),
        ("card_poker_exchange", "2S 7S 9S JS KS", "exchange", False),
        ("card_poker_exchange", "2S 7S 9S JS KH", None, False),
        ("poker_with_joker", "2S 7S 9S JS JK", None, True),  # L513–515
        ("poker_with_joker", "2S 7S 9S JS JK", "exchange", False),
        ("six_card_poker", "2S 7S 9S JS KS", None, True),
        ("six_card_poker", "2S 7S 9S JS KS", "sixth_card", False),  # L447–451
        ("card_poker", "5S 5H 5D JD JS", None, True),
    ],
)
def test_bonus_eligibility(variant: str, dealt: str, changed: str | None, eligible: bool) -> None:
    engine, _ = deal(variant, [dealt], "AD KC 8H 6D 3D")
    events: list[dict[str, Any]] = []
    if changed == "exchange":
        events = [decide(1, "exchange", "2S"), *cards("3S")]
    elif changed == "sixth_card":
        events = [decide(1, "sixth_card"), *cards("4S")]
    res = result(feed(engine, *events, CONFIRM))
    assert res["boxes"]["box1"]["bonus"]["eligible"] is eligible


def test_sixth_card_best_five_of_six() -> None:
    """L422–424: the box's sixth card comes at once; the best 5 of 6 play."""
    engine, _ = deal("six_card_poker", ["9S 9H 4C 7D 2S"], "AD AC 8H 6S 3D")
    assert feed(engine, decide(1, "sixth_card")) == []
    sixth = parse_event({"type": "card", "card": "9D"})
    assert engine.conceals(sixth) is True
    assert engine.apply(sixth) == []
    res = result(feed(engine, decide(1, "play"), CONFIRM))
    box = res["boxes"]["box1"]
    assert box["cards"] == ["9S", "9H", "4C", "7D", "2S", "9D"]
    assert box["sixth_card"] is True
    assert box["hand"] == "three of a kind, nines"
    assert box["best"] == ["9S", "9H", "4C", "7D", "9D"]
    assert box["result"] == "win"


def test_fold_and_play() -> None:
    engine, _ = deal(
        "card_poker", ["JS JH 8C 6D 3S", "QS QH 8D 6C 3H"], "AD KC 7H 4S 2C", {"boxes": 2}
    )
    res = result(feed(engine, decide(1, "fold"), decide(2, "play"), CONFIRM))
    assert res["boxes"]["box1"]["result"] == "fold"
    assert res["boxes"]["box1"]["folded"] is True
    assert res["boxes"]["box2"]["result"] == "win"


def test_all_boxes_folded_settles_at_once() -> None:
    engine, _ = deal(
        "card_poker", ["JS JH 8C 6D 3S", "QS QH 8D 6C 3H"], "AD KC 7H 4S 2C", {"boxes": 2}
    )
    assert feed(engine, decide(1, "fold")) == []
    res = result(feed(engine, decide(2, "fold")))
    assert [b["result"] for b in res["boxes"].values()] == ["fold", "fold"]


REFUSALS: list[tuple[str, list[dict[str, Any]]]] = [
    ("card_poker", [decide(1, "exchange", "9C")]),  # §3.9 has no exchange
    ("card_poker", [decide(1, "sixth_card")]),
    ("card_poker_exchange", [decide(1, "exchange", "QD")]),  # not in the hand
    ("card_poker_exchange", [decide(1, "exchange", "9C", "KS")]),  # exactly one card
    ("card_poker_exchange", [decide(1, "exchange")]),
    ("card_poker_exchange", [decide(1, "exchange", "XX")]),
    ("card_poker_exchange", [decide(1, "sixth_card")]),
    ("six_card_poker", [decide(1, "exchange", "9C")]),
    ("poker_with_joker", [decide(1, "sixth_card")]),
    ("card_poker", [decide(1, "buy_game")]),  # not a card poker decision
    ("card_poker", [decide(1, "war")]),
    ("card_poker", [decide(2, "fold")]),  # box 2 is not playing
]


@pytest.mark.parametrize(("variant", "events"), REFUSALS)
def test_decisions_refused(variant: str, events: list[dict[str, Any]]) -> None:
    engine, _ = deal(variant, ["AS AH KS KH 9C"], "AD KC 8H 6S 3D")
    before = engine.snapshot()["coup"]
    out = feed(engine, *events)
    assert codes(out) == ["decision_refused"]
    assert engine.snapshot()["coup"] == before
    # The round goes on: nothing was dealt for the refused decision.
    res = result(feed(engine, CONFIRM))
    assert res["boxes"]["box1"]["cards"] == ["AS", "AH", "KS", "KH", "9C"]
    assert res["boxes"]["box1"]["given_back"] == []


def test_refusal_never_names_the_hidden_card() -> None:
    engine, _ = deal("card_poker_exchange", ["AS AH KS KH 9C"], "AD KC 8H 6S 3D")
    message = verdict(feed(engine, decide(1, "exchange", "QD"))).message
    assert "QD" not in message
    assert "9C" not in message


@pytest.mark.parametrize(
    ("variant", "first", "second"),
    [
        ("card_poker_exchange", decide(1, "exchange", "9C"), decide(1, "exchange", "KD")),
        ("card_poker_exchange", decide(1, "play"), decide(1, "exchange", "9C")),
        ("card_poker_exchange", decide(1, "fold"), decide(1, "exchange", "9C")),
        ("card_poker_exchange", decide(1, "play"), decide(1, "fold")),
        ("six_card_poker", decide(1, "sixth_card"), decide(1, "sixth_card")),
    ],
)
def test_second_decision_refused(
    variant: str, first: dict[str, Any], second: dict[str, Any]
) -> None:
    engine, _ = deal(variant, ["AS AH KS KH 9C", "2S 3S 4S 5S 7H"], "AD KC 8H 6D 3D", {"boxes": 2})
    assert feed(engine, first) == []
    if first["action"] in ("exchange", "sixth_card"):
        feed(engine, *cards("KD"))
    assert codes(feed(engine, second)) == ["decision_refused"]


def test_no_decision_before_the_end_of_the_deal() -> None:
    """L295: "Until the end of the deal none of the players has right to touch the cards"."""
    engine = make("card_poker_exchange")
    start(engine)
    feed(engine, *cards("AS", "AD", "AH"))
    out = feed(engine, decide(1, "exchange", "AS"))
    assert codes(out) == ["decision_refused"]
    assert verdict(out).rule == "seed-001 L295"


def test_exchange_after_the_window_closed() -> None:
    engine, _ = deal("card_poker_exchange", ["AS AH KS KH 9C"], "AD KC 8H 6S 3D")
    assert len(outcomes(feed(engine, CONFIRM))) == 1
    out = feed(engine, decide(1, "exchange", "9C"))
    assert codes(out) == ["unexpected_event"]
    assert outcomes(out) == []


def test_window_cannot_close_while_the_replacement_is_due() -> None:
    engine, _ = deal("card_poker_exchange", ["AS AH KS KH 9C"], "AD KC 8H 6S 3D")
    feed(engine, decide(1, "exchange", "9C"))
    out = feed(engine, CONFIRM)
    assert codes(out) == ["wrong_card_count"]
    assert outcomes(out) == []
    assert result(feed(engine, *cards("2C"), CONFIRM))["boxes"]["box1"]["cards"][-1] == "2C"


# --- card poker: irregularities ----------------------------------------------------------------

TWO_BOXES = ["JS JH 8C 6D 3S", "QS QH 8D 6C 3H"]
DEALER_AK = "AD KC 7H 4S 2C"


@pytest.mark.parametrize(
    ("variant", "rule"),
    [
        ("card_poker", "seed-001 L335"),
        ("card_poker_exchange", "seed-001 L391"),
        ("six_card_poker", "seed-001 L335 (C21)"),
    ],
)
def test_box_wrong_count_puts_that_box_out(variant: str, rule: str) -> None:
    """L335: "his combination is not taken into account and he gets his bet and a fine at the
    amount of 50% of his Ante"; the other boxes play on."""
    engine, _ = deal(variant, TWO_BOXES, DEALER_AK, {"boxes": 2})
    out = feed(
        engine, {"type": "deal_error", "kind": "wrong_count", "position": "box2", "cards": 4}
    )
    v = verdict(out)
    assert (v.code, v.rule) == ("wrong_card_count", rule)
    assert codes(feed(engine, decide(2, "fold"))) == ["decision_refused"]
    res = result(feed(engine, CONFIRM))
    assert res["void_positions"] == {"box2": "refund_plus_half_ante"}
    assert res["boxes"]["box2"] == {
        "cards": ["QS", "QH", "8D", "6C", "3H"],
        "result": "void",
        "remedy": "refund_plus_half_ante",
    }
    assert res["boxes"]["box1"]["result"] == "win"


def test_box_out_mid_deal_gets_no_more_cards() -> None:
    engine = make("card_poker", {"boxes": 2})
    start(engine)
    feed(engine, *cards("JS", "QS", "AD"))
    feed(engine, {"type": "deal_error", "kind": "wrong_count", "position": "box2", "cards": 2})
    feed(engine, *cards("JH", "KC", "8C", "7H", "6D", "4S", "3S", "2C"))
    res = result(feed(engine, CONFIRM))
    assert res["boxes"]["box1"]["cards"] == ["JS", "JH", "8C", "6D", "3S"]
    assert res["dealer"]["cards"] == ["AD", "KC", "7H", "4S", "2C"]
    assert res["boxes"]["box2"]["cards"] == ["QS"]


def test_dealer_with_four_cards_takes_his_fifth() -> None:
    """L335: "If the dealer has got 4 cards instead of 5 for himself, he needs to get for himself
    one more card": the deal goes on; his fifth card is the scripted last card."""
    engine = make("card_poker")
    start(engine)
    order = rotation([BOX_JACKS], DEALER_AK)
    feed(engine, *cards(*order[:-1]))
    out = feed(
        engine, {"type": "deal_error", "kind": "wrong_count", "position": "dealer", "cards": 4}
    )
    v = verdict(out)
    assert (v.code, v.rule) == ("wrong_card_count", "seed-001 L335")
    assert outcomes(out) == []
    feed(engine, *cards(order[-1]))
    res = result(feed(engine, CONFIRM))
    assert res["dealer"]["cards"] == ["AD", "KC", "7H", "4S", "2C"]
    assert "void_positions" not in res


@pytest.mark.parametrize(
    ("variant", "error", "after", "remedy", "rule"),
    [
        # L335: "Any other wrong deal … annulation of all combinations … 50% of the Ante".
        (
            "card_poker",
            {"kind": "wrong_count", "position": "dealer", "cards": 4},
            10,
            "refund_plus_half_ante",
            "seed-001 L335",
        ),
        (
            "card_poker",
            {"kind": "wrong_count", "position": "dealer", "cards": 6},
            10,
            "refund_plus_half_ante",
            "seed-001 L335",
        ),
        (
            "card_poker",
            {"kind": "wrong_count", "position": "dealer", "cards": 4},
            3,
            "refund_plus_half_ante",
            "seed-001 L335",
        ),
        ("card_poker", {"kind": "wrong_count"}, 10, "refund_plus_half_ante", "seed-001 L335"),
        (
            "card_poker",
            {"kind": "card_exposed", "position": "dealer"},
            4,
            "refund_plus_half_ante",
            "seed-001 L335",
        ),
        (
            "card_poker",
            {"kind": "card_exposed", "position": "box1"},
            4,
            "refund_plus_half_ante",
            "seed-001 L335",
        ),
        (
            "card_poker_exchange",
            {"kind": "card_exposed", "position": "box1"},
            10,
            "refund_plus_half_ante",
            "seed-001 L391",
        ),
        # §3.12 states no deal or wrong-count rule: the general G3 (L79).
        (
            "poker_with_joker",
            {"kind": "wrong_count", "position": "box1", "cards": 4},
            10,
            "refund",
            "seed-001 L79",
        ),
        (
            "poker_with_joker",
            {"kind": "card_exposed", "position": "dealer"},
            2,
            "refund",
            "seed-001 L79",
        ),
    ],
)
def test_round_void(
    variant: str, error: dict[str, Any], after: int, remedy: str, rule: str
) -> None:
    engine = make(variant)
    start(engine, deck=53 if variant == "poker_with_joker" else 52)
    order = rotation([BOX_JACKS], DEALER_AK)
    feed(engine, *cards(*order[:after]))
    out = feed(engine, {"type": "deal_error", **error})
    (void,) = outcomes(out)
    assert (void.status, void.reason) == ("void", "misdeal")
    assert void.result is not None
    assert (void.result["remedy"], void.result["rule"]) == (remedy, rule)


@pytest.mark.parametrize(
    ("variant", "irregularities", "action"),
    [
        ("poker_with_joker", "l335", "wrong_card_count"),
        ("card_poker", "refund", "void"),
    ],
)
def test_irregularities_key(variant: str, irregularities: str, action: str) -> None:
    engine = make(variant, {"irregularities": irregularities, "boxes": 2})
    start(engine, deck=53 if variant == "poker_with_joker" else 52)
    feed(engine, *cards(*rotation(TWO_BOXES, DEALER_AK)))
    out = feed(
        engine, {"type": "deal_error", "kind": "wrong_count", "position": "box2", "cards": 6}
    )
    if action == "void":
        assert [o.reason for o in outcomes(out)] == ["misdeal"]
    else:
        assert codes(out) == [action]


# --- card poker: config ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules"),
    [
        ("card_poker", {"colour": "red"}),
        ("card_poker", {"variant": "texas"}),
        ("card_poker", {"decks": 2}),
        ("card_poker", {"boxes": 10}),
        ("card_poker", {"jokers_per_deck": 1}),
        ("poker_with_joker", {"jokers_per_deck": 0}),
        ("card_poker", {"irregularities": "fine"}),
        ("card_poker", {"bonus_minimum": "queen"}),
        ("card_poker", {"boxes": "2"}),
        ("bombay_poker", {"boxes": 4}),
        ("bombay_poker", {"decks": 2}),
        ("bombay_poker", {"jokers_per_deck": 1}),
        ("bombay_poker", {"variant": "card_poker"}),
        ("bombay_poker", {"bonus_on_sixth_card": "kept"}),
    ],
)
def test_config_errors(game: str, rules: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        make(game, rules)


def test_presets_and_defaults() -> None:
    joker = make("poker_with_joker").game_rules
    assert isinstance(joker, CardPoker)
    assert (joker.rules.variant, joker.rules.jokers_per_deck, joker.rules.irregularities) == (
        "poker_with_joker",
        1,
        "refund",
    )
    six = make("six_card_poker").game_rules
    assert isinstance(six, CardPoker)
    assert (six.rules.jokers_per_deck, six.rules.irregularities, six.rules.boxes) == (
        0,
        "l335",
        1,
    )
    bombay = make("bombay_poker").game_rules
    assert isinstance(bombay, BombayPoker)
    assert (bombay.rules.boxes, bombay.rules.decks, bombay.rules.on_fault) == (3, 1, "decide")


# --- shared settling ---------------------------------------------------------------------------


def hv(codes_: str) -> Any:
    return best_of([parse_card(c) for c in codes_.split()], jokers="wild")


@pytest.mark.parametrize(
    ("box", "dealer", "qualifies", "tie", "expected"),
    [
        ("AS AH 3C 4D 5S", "KS KH 3D 4C 6S", True, "tie", "win"),
        ("AS AH 3C 4D 5S", "KS KH 3D 4C 6S", False, "tie", "dealer_no_game"),
        ("AS KH 3C 4D 6S", "AD KD 3D 4C 6H", True, "push", "push"),
        ("AS KH 3C 4D 6S", "AD KD 3D 4C 6H", True, "tie", "tie"),
        ("2S 3H 4C 5D 7S", "AD KD 3D 4C 6H", True, "tie", "lose"),
    ],
)
def test_settle(box: str, dealer: str, qualifies: bool, tie: str, expected: str) -> None:
    assert settle(hv(box), hv(dealer), dealer_qualifies=qualifies, tie=tie) == expected


# --- Bombay Poker: deal, draw, play ------------------------------------------------------------

B3 = ["2S 3S 4S 9H JD", "5C 5D 7H 8H TC", "6S 6H QC KH 2D"]
DEALER_GAME = "AD KC 9D 7S 3C"


def test_bombay_deal_and_concealment() -> None:
    """§6: five cards to every playing box and the dealer, his last card face up; PKH-09."""
    engine = make("bombay_poker")
    start(engine)
    concealed = []
    for code in rotation(B3, DEALER_GAME):
        event = parse_event({"type": "card", "card": code})
        concealed.append(engine.conceals(event))
        engine.apply(event)
    assert concealed == [True] * 19 + [False]
    assert engine.snapshot()["coup"]["dealer"] == [None, None, None, None, "3C"]


def test_bombay_draw_dealt_left_to_right() -> None:
    """§9: the exchange starts only after all decisions and runs left to right, whatever order
    the decisions came in."""
    engine, _ = deal("bombay_poker", B3, DEALER_GAME)
    assert feed(engine, decide(3, "exchange", "QC", "2D"), decide(1, "exchange", "JD")) == []
    assert engine.snapshot()["coup"]["box3"] == [None, None, None]
    assert feed(engine, CONFIRM) == []
    concealed = []
    for code in ("5S", "6C", "6D"):
        event = parse_event({"type": "card", "card": code})
        concealed.append(engine.conceals(event))
        assert engine.apply(event) == []
    assert concealed == [True, True, True]
    # The play window ("insurance closed", §15) is still open.
    res = result(feed(engine, decide(1, "play"), decide(2, "play"), decide(3, "play"), CONFIRM))
    boxes = res["boxes"]
    assert boxes["box1"]["cards"] == ["2S", "3S", "4S", "9H", "5S"]
    assert boxes["box1"]["given_back"] == ["JD"]
    assert boxes["box3"]["cards"] == ["6S", "6H", "KH", "6C", "6D"]
    assert boxes["box3"]["given_back"] == ["QC", "2D"]
    assert [boxes[b]["result"] for b in ("box1", "box2", "box3")] == ["lose", "win", "win"]
    assert res["dealer"]["qualifies"] is True
    assert res["dealer"]["replacement"] is None


def test_bombay_window_cannot_close_while_draw_cards_are_due() -> None:
    engine, _ = deal("bombay_poker", B3, DEALER_GAME)
    feed(engine, decide(2, "exchange", "TC"), CONFIRM)
    assert codes(feed(engine, CONFIRM)) == ["wrong_card_count"]


def test_bombay_sixth_card_two_combinations() -> None:
    """BMP-H2: Q-Q-Q-Q-8-8 is four queens first, then the full house Q-Q-Q-8-8; both are paid
    when the first beats the dealer (BMP-H3)."""
    engine, _ = deal("bombay_poker", ["QS QH QD QC 8S"], DEALER_GAME, {"boxes": 1})
    feed(engine, decide(1, "sixth_card"), CONFIRM, *cards("8H"))
    box = result(feed(engine, CONFIRM))["boxes"]["box1"]
    assert box["cards"] == ["QS", "QH", "QD", "QC", "8S", "8H"]
    assert box["sixth_card"] is True
    assert box["category"] == "four_of_a_kind"
    assert [(c["class"], c["combination_cards"]) for c in box["combinations"]] == [
        ("four_of_a_kind", ["QS", "QH", "QD", "QC"]),
        ("full_house", ["QS", "QH", "QD", "8S", "8H"]),
    ]
    assert box["result"] == "win"
    assert box["second_combination_paid"] is True
    assert box["insurable"] is True
    assert box["bonus"]["eligible"] is False


@pytest.mark.parametrize(
    ("box", "dealer", "expected", "second_paid", "insurable"),
    [
        ("AS KH 9C 6D 3S", "AD KC 9H 6S 3C", "push", False, False),  # BMP-H5: tie is a push
        ("KS KH AC 7D 2S", "QD QC 9D 7S 3C", "win", True, False),  # pair + AK, both paid
        ("KS KH AC 7D 2S", "AD AH 9D 7S 3C", "lose", False, False),
        ("5S 5H 5C 7D 2S", "AD KC 9D 7S 3C", "win", False, True),  # §11: trips insurable
        ("5S 5H 7C 7D 2S", "AD KC 9D 8S 3C", "win", False, False),
    ],
)
def test_bombay_results(
    box: str, dealer: str, expected: str, second_paid: bool, insurable: bool
) -> None:
    engine, _ = deal("bombay_poker", [box], dealer, {"boxes": 1})
    res = result(feed(engine, CONFIRM, CONFIRM))
    assert res["boxes"]["box1"]["result"] == expected
    assert res["boxes"]["box1"]["second_combination_paid"] is second_paid
    assert res["boxes"]["box1"]["insurable"] is insurable


@pytest.mark.parametrize(
    ("hand", "first", "second"),
    [
        # BMP-H1: ace-king plays beside a pair, two pair, trips or quads …
        ("KS KH AC 7D 2S", "pair", "ace_king"),
        ("AS AH KC 7D 2S", "pair", "ace_king"),
        ("5S 5H 7C 7D AS KD", "two_pair", "ace_king"),
        ("5S 5H 5C AD KS", "three_of_a_kind", "ace_king"),
        ("5S 5H 5C 5D AS KH", "four_of_a_kind", "ace_king"),
        # … but not where its cards are all in the first combination (BMP-H3) …
        ("AS AH KC KD 2S", "two_pair", None),
        ("AS AH AD KC KD", "full_house", None),
        ("AS KS QS JS TS", "royal_flush", None),
        ("AS KH QC JD TS", "straight", None),
        # … nor with no other combination.
        ("AS KH 7C 6D 3S", "ace_king", None),
        ("5S 5H 7C 9D 2S", "pair", None),
        ("QS JH 7C 6D 3S", None, None),
        # BMP-H2, six cards.
        ("QS QH QD QC 8S 8H", "four_of_a_kind", "full_house"),
        ("9S 9H AC KD 4S 2H", "pair", "ace_king"),
        # The same straight with the other ten: literally "at least one card … not included".
        ("AS KH QC JD TS TH", "straight", "straight"),
        ("AS KH QC JD 9S 9H", "pair", "ace_king"),
    ],
)
def test_two_combinations(hand: str, first: str | None, second: str | None) -> None:
    one, two = bombay_combinations([parse_card(c) for c in hand.split()])

    def cls(v: Any) -> str | None:
        return None if v is None else combination_class(v, ace_king="ace_king", pair="pair")

    assert (cls(one), cls(two)) == (first, second)
    if one is not None and two is not None:
        assert set(combination_cards(two)) - set(combination_cards(one))


@pytest.mark.parametrize(
    ("events", "rule"),
    [
        ([decide(1, "exchange", "AS", "AH", "KS", "KH", "9C", "9D")], "seed-000 BMP §7–10"),
        ([decide(1, "exchange")], "seed-000 BMP §7–10"),
        ([decide(1, "exchange", "QD")], "seed-000 BMP §7–10"),
        ([decide(1, "exchange", "9C", "9C")], "seed-000 BMP §7–10"),
        ([decide(1, "sixth_card"), decide(1, "exchange", "9C")], "seed-000 BMP §7"),
        ([decide(1, "exchange", "9C"), decide(1, "sixth_card")], "seed-000 BMP §7"),
        ([decide(1, "exchange", "9C"), decide(1, "fold")], "seed-000 BMP §7"),
        ([decide(1, "play")], "seed-000 BMP §10"),  # the BET comes after the exchange
        ([decide(1, "buy_game")], "seed-000 BMP §21"),
        ([CONFIRM, decide(1, "exchange", "9C")], "seed-000 BMP §9"),  # window closed
        ([CONFIRM, decide(1, "sixth_card")], "seed-000 BMP §9"),
        ([CONFIRM, decide(1, "play"), decide(1, "play")], "seed-000 BMP §10"),
        ([CONFIRM, decide(1, "buy_game")], "seed-000 BMP §21"),
    ],
)
def test_bombay_decisions_refused(events: list[dict[str, Any]], rule: str) -> None:
    engine, _ = deal("bombay_poker", ["AS AH KS KH 9C"], "QD JC 8H 6S 3D", {"boxes": 1})
    out = feed(engine, *events)
    refused = [v for v in out if isinstance(v, Verdict)]
    assert [(v.code, v.rule) for v in refused] == [("decision_refused", rule)]


def test_bombay_no_fold_after_the_reveal() -> None:
    engine, _ = deal("bombay_poker", ["AS AH KS KH 9C"], "QD JC 8H 6S 3D", {"boxes": 1})
    feed(engine, CONFIRM, CONFIRM)  # dealer Q-high: the buy window is open
    v = verdict(feed(engine, decide(1, "fold")))
    assert (v.code, v.rule) == ("decision_refused", "seed-000 BMP §10")


@pytest.mark.parametrize(
    ("dealt", "events", "rules", "eligible"),
    [
        # §31: the bonus starts from a straight, on the five cards dealt.
        ("5S 6H 7C 8D 9S", [], {}, True),
        ("5S 6H 7C 8D JS", [], {}, False),
        # §33: lost on an exchange or a sixth card (§32 reading by the config key).
        ("5S 6H 7C 8D 9S", [decide(1, "exchange", "5S"), CONFIRM, *cards("TS")], {}, False),
        ("5S 6H 7C 8D 9S", [decide(1, "sixth_card"), CONFIRM, *cards("TS")], {}, False),
        (
            "5S 6H 7C 8D 9S",
            [decide(1, "sixth_card"), CONFIRM, *cards("TS")],
            {"bonus_on_sixth_card": "paid"},
            True,
        ),
        # §34: not checked on the player's immediate surrender.
        ("5S 6H 7C 8D 9S", [decide(1, "fold")], {}, False),
        ("5S 6H 7C 8D 9S", [CONFIRM, decide(1, "fold")], {}, True),
    ],
)
def test_bombay_bonus(
    dealt: str, events: list[dict[str, Any]], rules: dict[str, Any], eligible: bool
) -> None:
    engine, _ = deal("bombay_poker", [dealt, "2S 2H 3D 4D JD"], DEALER_GAME, {"boxes": 2, **rules})
    out = feed(engine, *events)
    while not outcomes(out):
        out += feed(engine, CONFIRM)
    assert result(out)["boxes"]["box1"]["bonus"]["eligible"] is eligible


# --- Bombay Poker: the dealer has no game ------------------------------------------------------

PAIR_AK = "KS KH AC 7D 2S"


def buy_round(
    dealer: str,
    replacements: list[str],
    *,
    boxes: list[str] | None = None,
    buyers: tuple[int, ...] = (1,),
) -> tuple[CardEngine, dict[str, Any], list[bool]]:
    hands = boxes or [PAIR_AK]
    engine, _ = deal("bombay_poker", hands, dealer, {"boxes": len(hands)})
    assert outcomes(feed(engine, CONFIRM, CONFIRM)) == []  # draw, insurance closed
    feed(engine, *(decide(b, "buy_game") for b in buyers))
    out = feed(engine, CONFIRM)
    concealed = []
    for code in replacements:
        event = parse_event({"type": "card", "card": code})
        concealed.append(engine.conceals(event))
        out += engine.apply(event)
    return engine, result(out), concealed


@pytest.mark.parametrize(
    ("dealer", "replacements", "final", "discarded", "qualifies", "box_result"),
    [
        # §23: the highest card out, the next in; still no game → nothing paid (§24).
        ("QS 9H 6C 4D 3S", ["5H"], "9H 6C 4D 3S 5H", [], False, "no_game_after_buy"),
        # The replacement makes a game: the box is compared.
        ("QS 9H 6C 4D 3S", ["9S"], "9H 6C 4D 3S 9S", [], True, "win"),
        ("QS 9H 6C 4D 3S", ["AH"], "9H 6C 4D 3S AH", [], False, "no_game_after_buy"),
        # Same rank as the removed card: put aside and replaced again, without limit.
        ("QS 9H 6C 4D 3S", ["QD", "QH", "3H"], "9H 6C 4D 3S 3H", ["QD", "QH"], True, "win"),
        (
            "QS 9H 6C 4D 3S",
            ["QD", "QH", "QC", "7H"],
            "9H 6C 4D 3S 7H",
            ["QD", "QH", "QC"],
            False,
            "no_game_after_buy",
        ),
        # … "unless the selected cards form a combination, such as a flush" (§23).
        ("QS 9H 6H 4H 3H", ["QH"], "9H 6H 4H 3H QH", [], True, "lose"),
    ],
)
def test_bombay_dealer_replacement(
    dealer: str,
    replacements: list[str],
    final: str,
    discarded: list[str],
    qualifies: bool,
    box_result: str,
) -> None:
    _, res, concealed = buy_round(dealer, replacements)
    assert concealed == [False] * len(replacements)
    assert res["dealer"]["dealt"] == dealer.split()
    assert res["dealer"]["cards"] == final.split()
    assert res["dealer"]["replacement"] == {
        "removed": "QS",
        "discarded": discarded,
        "bought_by": ["box1"],
    }
    assert res["dealer"]["qualifies"] is qualifies
    assert res["dealer_no_game"] is not qualifies
    box = res["boxes"]["box1"]
    assert box["bought_game"] is True
    assert box["result"] == box_result
    assert box["second_combination_paid"] is (box_result == "win")


def test_bombay_no_buyer_takes_the_ante() -> None:
    """§21: each box takes the ANTE unless it buys; with no buyer no card is replaced."""
    engine, _ = deal("bombay_poker", [PAIR_AK], "QS 9H 6C 4D 3S", {"boxes": 1})
    assert outcomes(feed(engine, CONFIRM, CONFIRM)) == []
    res = result(feed(engine, CONFIRM))
    assert res["boxes"]["box1"]["result"] == "dealer_no_game"
    assert res["dealer"]["replacement"] is None
    assert res["dealer_no_game"] is True


def test_bombay_buyer_and_non_buyer() -> None:
    _, res, _ = buy_round("QS 9H 6C 4D 3S", ["9S"], boxes=[PAIR_AK, "2H 2D 5C 8D TS"], buyers=(1,))
    assert res["boxes"]["box1"]["result"] == "win"
    assert res["boxes"]["box2"]["result"] == "dealer_no_game"
    assert res["dealer"]["replacement"]["bought_by"] == ["box1"]


def test_bombay_buy_refused_twice_and_when_dealer_has_game() -> None:
    engine, _ = deal("bombay_poker", [PAIR_AK], "QS 9H 6C 4D 3S", {"boxes": 1})
    feed(engine, CONFIRM, CONFIRM, decide(1, "buy_game"))
    assert codes(feed(engine, decide(1, "buy_game"))) == ["decision_refused"]
    engine, _ = deal("bombay_poker", [PAIR_AK], DEALER_GAME, {"boxes": 1})
    out = feed(engine, CONFIRM, decide(1, "buy_game"))
    assert codes(out) == ["decision_refused"]


@pytest.mark.parametrize(
    "error",
    [
        {"kind": "wrong_count", "position": "box2", "cards": 4},
        {"kind": "wrong_count", "position": "dealer", "cards": 4},
        {"kind": "wrong_count", "position": "dealer", "cards": 6},
        {"kind": "card_exposed", "position": "box1"},
        {"kind": "card_exposed"},
    ],
)
def test_bombay_misdeal(error: dict[str, Any]) -> None:
    """PKH-21: "all cards will be reshuffled and Bets will remain untouched"."""
    engine = make("bombay_poker")
    start(engine)
    feed(engine, *cards(*rotation(B3, DEALER_GAME)[:12]))
    (void,) = outcomes(feed(engine, {"type": "deal_error", **error}))
    assert (void.status, void.reason) == ("void", "misdeal")
    assert void.result is not None
    assert (void.result["remedy"], void.result["rule"]) == ("reshuffle_bets_stand", "PKH-21")
    assert void.result["cards"]["dealer"] == [None, None, None]


def test_bombay_card_exposed_after_the_reveal_is_noted() -> None:
    """PKH-15: once the dealer has revealed, every card is open; the round goes on."""
    engine, _ = deal("bombay_poker", [PAIR_AK], "QS 9H 6C 4D 3S", {"boxes": 1})
    feed(engine, CONFIRM, CONFIRM)
    out = feed(engine, {"type": "deal_error", "kind": "card_exposed", "position": "dealer"})
    v = verdict(out)
    assert (v.code, v.rule) == ("deal_error_noted", "PKH-15")
    assert "face_up_anyway" in v.message
    res = result(feed(engine, decide(1, "buy_game"), CONFIRM, *cards("9S")))
    assert res["boxes"]["box1"]["result"] == "win"


def test_bombay_card_before_the_draw_window_closed_waits() -> None:
    """A draw card read before the dealer closed the draw window is held for a supervisor; it
    fills the first draw slot once the window is closed."""
    engine, _ = deal("bombay_poker", [PAIR_AK], DEALER_GAME, {"boxes": 1})
    out = feed(engine, decide(1, "exchange", "2S"), *cards("9S"))
    assert codes(out) == ["card_before_decisions"]
    feed(engine, CONFIRM)  # the supervisor lets the deal go on
    res = result(feed(engine, CONFIRM, CONFIRM))
    assert res["boxes"]["box1"]["cards"] == ["KS", "KH", "AC", "7D", "9S"]


def test_bombay_fault_before_the_first_card_cancels_the_hand() -> None:
    engine = make("bombay_poker")
    start(engine)
    (void,) = outcomes(feed(engine, {"type": "fault", "code": "jam"}))
    assert void.reason == "hand_cancelled"


# --- property tests ----------------------------------------------------------------------------

DECK = [c.code for c in full_deck()]
FAMILY_ACTIONS = {
    "card_poker": ["none", "fold", "play"],
    "card_poker_exchange": ["none", "fold", "play", "exchange"],
    "six_card_poker": ["none", "fold", "play", "sixth_card"],
    "poker_with_joker": ["none", "fold", "play", "exchange"],
}


def _deal_positions(order: list[str], n: int) -> tuple[dict[int, list[str]], list[str]]:
    """An independent reading of the rotation: card i of rotation r goes to position i."""
    initial = order[: 5 * (n + 1)]
    hands = {b: [initial[i * (n + 1) + b - 1] for i in range(5)] for b in range(1, n + 1)}
    dealer = [initial[i * (n + 1) + n] for i in range(5)]
    return hands, dealer


def _versus(box: Any, dealer: Any, tie: str) -> str:
    return "win" if box > dealer else "lose" if box < dealer else tie


def _rank(code: str) -> int:
    return 14 if code[0] == "A" else "A23456789TJQK".index(code[0]) + 1


def _ace_king_or_better(codes_: list[str]) -> bool:
    v = evaluate5([parse_card(c) for c in codes_])
    return v.category >= HandCategory.PAIR or v.ranks[:2] == (14, 13)


class _Table:
    """A round driven card by card, with the cards and hands kept independently."""

    def __init__(self, game: str, n: int, order: list[str], joker: bool = False) -> None:
        self.engine = make(game, {"boxes": n})
        self.order = order
        self.out = start(self.engine, deck=53 if joker else 52)
        self.out += feed(self.engine, *cards(*order[: 5 * (n + 1)]))
        self.hands, self.dealer = _deal_positions(order, n)
        self.dealt = {b: list(h) for b, h in self.hands.items()}
        self.next = 5 * (n + 1)

    def send(self, *events: dict[str, Any]) -> None:
        self.out += feed(self.engine, *events)

    def draw(self, count: int = 1) -> list[str]:
        """The next ``count`` cards of the deck, read by the shoe."""
        taken = self.order[self.next : self.next + count]
        self.next += count
        self.send(*cards(*taken))
        return taken

    def settled(self) -> dict[str, Any]:
        assert [v for v in self.out if isinstance(v, Verdict)] == []
        return result(self.out)


def _card_poker_round(data: st.DataObject, variant: str, n: int, t: _Table) -> list[str]:
    actions = [data.draw(st.sampled_from(FAMILY_ACTIONS[variant])) for _ in range(n)]
    for box, action in enumerate(actions, 1):
        if action == "exchange":
            given = data.draw(st.sampled_from(t.hands[box]))
            t.send(decide(box, "exchange", given))
            t.hands[box].remove(given)
            t.hands[box] += t.draw()
        elif action == "sixth_card":
            t.send(decide(box, "sixth_card"))
            t.hands[box] += t.draw()
        elif action != "none":
            t.send(decide(box, action))
    if any(a != "fold" for a in actions):
        assert outcomes(t.out) == []
        t.send(CONFIRM)
    return actions


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_card_poker_random_decks(data: st.DataObject) -> None:
    """Random decks and decisions: the outcome agrees with an independent reading."""
    variant = data.draw(st.sampled_from(sorted(FAMILY_ACTIONS)))
    joker = variant == "poker_with_joker"
    n = data.draw(st.integers(1, 4))
    t = _Table(variant, n, data.draw(st.permutations(DECK + (["JK"] if joker else []))), joker)
    actions = _card_poker_round(data, variant, n, t)
    res = t.settled()
    mode: JokerMode = "wild" if joker else "forbid"
    dv = best_of([parse_card(c) for c in t.dealer], jokers=mode)
    if joker:
        qualifies = dv.category >= HandCategory.PAIR
    else:
        qualifies = dv.category >= HandCategory.PAIR or dv.ranks[:2] == (14, 13)
    assert (res["dealer"]["cards"], res["dealer"]["up_card"]) == (t.dealer, t.dealer[4])
    assert res["dealer"]["qualifies"] is qualifies
    for box, action in enumerate(actions, 1):
        got = res["boxes"][f"box{box}"]
        value = best_of([parse_card(c) for c in t.hands[box]], jokers=mode)
        if action == "fold":
            expected = "fold"
        else:
            expected = _versus(value, dv, "tie") if qualifies else "dealer_no_game"
        assert (got["cards"], got["result"]) == (t.hands[box], expected)
        assert got["category"] == value.category.name.lower()
        bonus = evaluate5([parse_card(c) for c in t.dealt[box]], jokers=mode)
        unchanged = action not in ("exchange", "sixth_card")
        assert got["bonus"]["eligible"] is (unchanged and bonus.category >= HandCategory.FLUSH)


def _bombay_draw(data: st.DataObject, n: int, t: _Table) -> tuple[dict[int, int], set[int]]:
    """Draw decisions in random box order; the cards still come left to right (§9)."""
    draws: dict[int, int] = {}
    folded: set[int] = set()
    for box in data.draw(st.permutations(range(1, n + 1))):
        action = data.draw(st.sampled_from(["none", "fold", "exchange", "sixth_card"]))
        if action == "exchange":
            given = data.draw(st.lists(st.sampled_from(t.hands[box]), min_size=1, unique=True))
            t.send(decide(box, "exchange", *given))
            t.hands[box] = [c for c in t.hands[box] if c not in given]
            draws[box] = len(given)
        elif action == "sixth_card":
            t.send(decide(box, "sixth_card"))
            draws[box] = 1
        elif action == "fold":
            t.send(decide(box, "fold"))
            folded.add(box)
    return draws, folded


def _bombay_buy(data: st.DataObject, live: list[int], t: _Table) -> tuple[list[int], list[str]]:
    """§21–24 read independently: the highest card out, same-rank cards put aside."""
    final = list(t.dealer)
    if not live or _ace_king_or_better(t.dealer):
        return [], final
    buyers = [b for b in live if data.draw(st.booleans())]
    t.send(*(decide(b, "buy_game") for b in buyers), CONFIRM)
    if buyers:
        highest = max(t.dealer, key=_rank)
        final.remove(highest)
        while True:
            (new,) = t.draw()
            if new[0] != highest[0] or _ace_king_or_better([*final, new]):
                final.append(new)
                break
    return buyers, final


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_bombay_random_decks(data: st.DataObject) -> None:
    """Random decks, draws and buys: the outcome agrees with an independent reading."""
    n = data.draw(st.integers(1, 3))
    t = _Table("bombay_poker", n, data.draw(st.permutations(DECK)))
    draws, folded = _bombay_draw(data, n, t)
    live = [b for b in range(1, n + 1) if b not in folded]
    if live:
        t.send(CONFIRM)
        for box in sorted(draws):
            t.hands[box] += t.draw(draws[box])
        t.send(CONFIRM)
    buyers, final = _bombay_buy(data, live, t)
    res = t.settled()
    assert res["dealer"]["cards"] == final
    has_game, final_game = _ace_king_or_better(t.dealer), _ace_king_or_better(final)
    dv = evaluate5([parse_card(c) for c in final])
    for box in range(1, n + 1):
        got = res["boxes"][f"box{box}"]
        value = best_of([parse_card(c) for c in t.hands[box]])
        if box in folded:
            expected = "fold"
        elif not has_game and box not in buyers:
            expected = "dealer_no_game"
        elif not final_game:
            expected = "no_game_after_buy"
        else:
            expected = _versus(value, dv, "push")
        assert (got["cards"], got["result"]) == (t.hands[box], expected)
        assert got["insurable"] is (value.category >= HandCategory.THREE_OF_A_KIND)
        combos = got["combinations"]
        assert len(combos) <= 2
        if combos:
            assert combos[0]["category"] == value.category.name.lower()
        assert got["second_combination_paid"] is (len(combos) == 2 and expected == "win")


def test_bombay_a_duplicate_the_supervisor_let_through_ends_the_round_unsettled() -> None:
    # Found by the "one structure" refactor: the dealer's hand with a duplicate card (confirmed
    # by a supervisor after composition_exceeded) made apply raise instead of ending the round.
    from tablectl.controller.core.events import parse_event  # noqa: PLC0415
    from tablectl.controller.core.outcomes import Outcome  # noqa: PLC0415
    from tablectl.controller.engines import build_engine  # noqa: PLC0415

    engine = build_engine("T1", "bombay_poker", {}, source="t.toml")
    events: list[dict[str, object]] = [
        {"type": "shuffle_started"},
        {"type": "shuffle_completed", "cards": 52},
        {"type": "round_open"},
        {"type": "bets_closed", "boxes": [1]},
    ]
    cards = ["AS", "2H", "KD", "2H", "3C", "4D", "5S", "6H", "7C", "8D"]
    events += [{"type": "card", "card": c} for c in cards] + [{"type": "confirm"}] * 3
    outputs = [o for event in events for o in engine.apply(parse_event(event))]
    codes = [getattr(o, "code", None) for o in outputs]
    assert "composition_exceeded" in codes
    (outcome,) = [o for o in outputs if isinstance(o, Outcome)]
    assert "duplicate card" in outcome.result["unsettled"]
    assert outcome.result["cards"]["dealer"].count("2H") == 2
