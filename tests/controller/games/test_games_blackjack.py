"""Blackjack rules and the blackjack engine: values, dealer rule, deal order, decisions, results,
and the secrecy of the scanned hole card."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest

from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    Confirm,
    Decision,
    RoundOpen,
    TableEvent,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import BlackjackEngine
from tablectl.controller.games.cards.blackjack import BlackjackRound
from tablectl.controller.games.cards.blackjack_rules import (
    Action,
    BlackjackRules,
    card_value,
    dealer_draws,
    hand_value,
    initial_deal_order,
    is_blackjack,
    settle_hand,
)
from tablectl.drivers.cards import parse_card

TABLE = "BJ-T1"


def cs(*codes: str) -> list[Any]:
    return [parse_card(c) for c in codes]


# -- pure rules ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("codes", "total", "soft"),
    [
        (("AS", "6H"), 17, True),
        (("AS", "6H", "TD"), 17, False),
        (("AS", "AH"), 12, True),
        (("KS", "QH", "2D"), 22, False),
        (("AS", "KH"), 21, True),
        (("5S", "AH", "AD", "4C"), 21, True),
    ],
    ids=[
        "BJ-V1-soft-17",
        "BJ-V1-ace-back-to-1",
        "BJ-V1-two-aces",
        "BJ-V5-bust",
        "BJ-V2-blackjack-21",
        "BJ-V1-soft-21",
    ],
)
def test_hand_values(codes: tuple[str, ...], total: int, soft: bool) -> None:
    value = hand_value(cs(*codes))
    assert (value.total, value.soft) == (total, soft)


def test_card_values_bj_v1() -> None:
    assert [card_value(c) for c in cs("AS", "7H", "TD", "JC", "QS", "KH")] == [1, 7, 10, 10, 10, 10]


@pytest.mark.parametrize(
    ("codes", "h17", "draws"),
    [
        (("TS", "6H"), False, True),
        (("TS", "7H"), False, False),
        (("AS", "6H"), False, False),
        (("AS", "6H"), True, True),
        (("AS", "6H", "TD"), True, False),
    ],
    ids=[
        "seed-000-BJ22-16-draws",
        "seed-000-BJ22-17-stands",
        "seed-004-BJ4.4-soft-17-stands",
        "hit_soft_17-config",
        "hard-17-stands-even-with-h17",
    ],
)
def test_dealer_rule(codes: tuple[str, ...], h17: bool, draws: bool) -> None:
    assert dealer_draws(cs(*codes), h17) is draws


def test_initial_deal_order_v_bj_1() -> None:
    assert initial_deal_order([1, 3], hole_card=False) == [1, 3, None, 1, 3]
    assert initial_deal_order([1, 3], hole_card=True) == [1, 3, None, 1, 3, None]


def test_blackjack_definition() -> None:
    assert is_blackjack(cs("AS", "KD"))
    assert not is_blackjack(cs("AS", "KD"), from_split=True)  # BJ-V3, seed-004 BJ 2.7
    assert not is_blackjack(cs("7S", "7D", "7H"))


@pytest.mark.parametrize(
    ("hand", "dealer", "split", "result"),
    [
        (("TS", "QH", "5D"), ("TS", "6H", "KD"), False, "lose"),
        (("TS", "9H"), ("TS", "6H", "KD"), False, "win"),
        (("AS", "KH"), ("AD", "QC"), False, "push"),
        (("AS", "KH"), ("TD", "9C"), False, "blackjack"),
        (("AS", "KH"), ("AD", "QC"), True, "lose"),
        (("TS", "8H"), ("9D", "TC"), False, "lose"),
        (("TS", "9H"), ("9D", "TC"), False, "push"),
    ],
    ids=[
        "BJ-V5-bust-loses-even-if-dealer-busts",
        "dealer-bust-pays",
        "BJ-V6-blackjack-pushes-dealer-blackjack",
        "BJ-V7-blackjack-pays",
        "BJ-V3-split-21-loses-to-dealer-blackjack",
        "lower-total-loses",
        "BJ-V8-tie-pushes",
    ],
)
def test_settle_hand(
    hand: tuple[str, ...], dealer: tuple[str, ...], split: bool, result: str
) -> None:
    assert settle_hand(cs(*hand), cs(*dealer), from_split=split) == result


def test_rules_defaults_are_seed_000() -> None:
    rules = BlackjackRules()
    assert (rules.decks, rules.hole_card, rules.hit_soft_17, rules.burn) == (
        6,
        "none",
        False,
        False,
    )
    assert (rules.max_splits, rules.surrender, rules.boxes) == (4, False, 7)


# -- decisions (table-driven, pure round model) ------------------------------------------------


def dealt(rules: BlackjackRules, *codes: str, boxes: Sequence[int] = (1,)) -> BlackjackRound:
    rnd = BlackjackRound(rules, boxes)
    for c in cs(*codes):
        rnd.place(c)
    return rnd


Step = tuple[Action, str | None]
SURRENDER = {"surrender": True}
# (id, rules, European deal: box 1 card 1, dealer up, box 1 card 2, [(action, expected code)])
DECISIONS: list[tuple[str, dict[str, Any], tuple[str, str, str], list[Step]]] = [
    ("BJ-O3-insurance-vs-ace", {}, ("9S", "AH", "7D"), [("insurance", None)]),
    (
        "BJ-O3-insurance-only-vs-ace",
        {},
        ("9S", "KH", "7D"),
        [("insurance", "insurance_not_allowed")],
    ),
    (
        "BJ-O3-blackjack-cannot-be-insured",
        {},
        ("AS", "AH", "KD"),
        [("insurance", "insurance_not_allowed"), ("even_money", None)],
    ),
    (
        "BJ12-even-money-needs-blackjack",
        {},
        ("9S", "AH", "7D"),
        [("even_money", "even_money_not_allowed")],
    ),
    (
        "V-BJ-8-insurance-once",
        {},
        ("9S", "AH", "7D"),
        [("insurance", None), ("insurance", "insurance_not_allowed")],
    ),
    (
        "V-BJ-8-insurance-before-acting",
        {},
        ("9S", "AH", "7D"),
        [("double", None), ("insurance", "insurance_not_allowed")],
    ),
    ("BJ-O2-double-two-cards", {}, ("5S", "6H", "6D"), [("double", None)]),
    # A blackjack is done (BJ-V4, seed-004 BJ 4.4): no decision is taken on it at all.
    ("BJ-O2-no-double-on-blackjack", {}, ("AS", "6H", "KD"), [("double", "decision_out_of_turn")]),
    ("BJ-O1-split-same-value", {}, ("KS", "6H", "QD"), [("split", None)]),
    ("BJ-O1-split-needs-a-pair", {}, ("KS", "6H", "9D"), [("split", "split_not_allowed")]),
    ("V-BJ-4-max-splits", {"max_splits": 0}, ("8S", "6H", "8D"), [("split", "split_not_allowed")]),
    ("BJ-O4-not-offered", {}, ("TS", "6H", "6D"), [("surrender", "surrender_not_allowed")]),
    ("BJ-O4-offered", SURRENDER, ("TS", "6H", "6D"), [("surrender", None)]),
    ("BJ33-not-vs-ace", SURRENDER, ("TS", "AH", "6D"), [("surrender", "surrender_not_allowed")]),
    (
        "seed-001-L219-surrender-vs-ace",
        {**SURRENDER, "surrender_vs_ace": True},
        ("TS", "AH", "6D"),
        [("surrender", None)],
    ),
]


@pytest.mark.parametrize(
    ("rules", "deal", "steps"), [d[1:] for d in DECISIONS], ids=[d[0] for d in DECISIONS]
)
def test_decisions(rules: dict[str, Any], deal: tuple[str, str, str], steps: list[Step]) -> None:
    # European deal for one box: box1, dealer up, box1.
    rnd = dealt(BlackjackRules(**rules), deal[0], deal[1], deal[2])
    for action, code in steps:
        finding = rnd.decide(1, action)
        assert (finding.code if finding else None) == code


def test_decision_out_of_turn_v_bj_3() -> None:
    rnd = dealt(BlackjackRules(), "9S", "TS", "7H", "7D", "8C", boxes=(1, 2))
    finding = rnd.decide(2, "stand")
    assert finding is not None
    assert finding.code == "decision_out_of_turn"
    unknown = rnd.decide(5, "stand")
    assert unknown is not None
    assert unknown.code == "unknown_box"


def test_double_gets_exactly_one_card_bj_o2() -> None:
    rnd = dealt(BlackjackRules(), "5S", "TH", "6D")
    assert rnd.decide(1, "double") is None
    rnd.place(parse_card("2C"))  # 13: the double stands on it
    assert rnd.decide(1, "hit") is not None  # the box is done: the dealer is in play
    result = _finish(rnd, "7S")  # dealer T+7 = 17 stands
    assert result["boxes"][0]["hands"][0]["doubled"] is True


def test_split_aces_one_card_each_bj_o1() -> None:
    rnd = dealt(BlackjackRules(), "AS", "9H", "AD")
    assert rnd.decide(1, "split") is None
    rnd.place(parse_card("KC"))  # first ace: 21, not blackjack
    rnd.place(parse_card("5C"))  # second ace: one card only
    split_again = rnd.decide(1, "split")
    assert split_again is not None  # both hands are done
    result = _finish(rnd, "8D")  # dealer 9+8 = 17
    hands = result["boxes"][0]["hands"]
    assert [h["cards"] for h in hands] == [["AS", "KC"], ["AD", "5C"]]
    assert [h["blackjack"] for h in hands] == [False, False]
    assert [h["result"] for h in hands] == ["win", "lose"]


def test_no_resplit_of_aces_bj_o1() -> None:
    rnd = dealt(BlackjackRules(split_aces_one_card=False), "AS", "9H", "AD")
    assert rnd.decide(1, "split") is None
    rnd.place(parse_card("AC"))
    finding = rnd.decide(1, "split")
    assert finding is not None
    assert finding.code == "split_not_allowed"


def _finish(rnd: BlackjackRound, *dealer_cards: str) -> dict[str, Any]:
    for c in cs(*dealer_cards):
        assert rnd.expects_card()
        rnd.place(c)
    assert rnd.complete()
    return rnd.result()


# -- the engine --------------------------------------------------------------------------------


def feed(engine: BlackjackEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def cards(*codes: str) -> list[Card]:
    return [Card(card=c) for c in codes]


def outcomes(outputs: Sequence[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def test_registry_builds_blackjack() -> None:
    engine = build_engine(TABLE, "blackjack", {"hole_card": "scanned"}, source="t.toml")
    assert engine.game == "blackjack"


def test_european_round_dealer_draws_to_17() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=2))
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "9H", "6D", "8C", "KD")])
    out += feed(engine, [Decision(box=1, action="stand"), Decision(box=2, action="stand")])
    assert outcomes(out) == []
    out = feed(engine, cards("5S", "4H"))  # dealer 6+5 = 11, +4 = 15: draws again
    assert outcomes(out) == []
    out = feed(engine, cards("3C"))  # 18: stands, the outcome comes right after this card
    (done,) = outcomes(out)
    assert done.result is not None
    assert done.result["dealer"]["cards"] == ["6D", "5S", "4H", "3C"]
    assert [b["hands"][0]["result"] for b in done.result["boxes"]] == ["push", "win"]


def test_all_boxes_bust_dealer_draws_nothing_seed_004_bj_4_4() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=1))
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "6D", "6H", "KC")])
    (done,) = outcomes(out)
    assert done.result is not None
    assert done.result["dealer"]["cards"] == ["6D"]
    # A dealer card after that was not called for: BJ-I1, it is the next round's first card.
    extra = engine.apply(Card(card="9S"))
    assert [(v.code, v.rule) for v in extra if isinstance(v, Verdict)] == [("extra_card", "BJ-I1")]
    assert engine.snapshot()["carried"] == 1


def test_scanned_hole_card_is_secret_until_the_outcome_seed_004_bj_3_7() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=1, hole_card="scanned"))
    hole = "7C"
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "KD", "9H", hole)])
    snapshots = [json.dumps(engine.snapshot())]
    out += feed(engine, [Decision(box=1, action="stand")])
    # Dealer K+7 = 17: stands; the round is over and only the outcome shows the hole card.
    assert all(hole not in s for s in snapshots)
    assert all(hole not in json.dumps(v.to_payload()) for v in out if isinstance(v, Verdict))
    (done,) = outcomes(out)
    assert done.result is not None
    assert done.result["dealer"]["cards"] == ["KD", hole]
    assert hole not in json.dumps(engine.snapshot())


def test_hole_card_not_in_a_void_result() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=1, hole_card="scanned"))
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "KD", "9H", "7C")])
    out += engine.apply(RoundOpen())  # abandons the round
    (void,) = outcomes(out)
    assert void.reason == "round_abandoned"
    assert "7C" not in json.dumps(void.to_payload())


def test_ace_up_scanned_hole_waits_for_the_insurance_window() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=1, hole_card="scanned"))
    out = feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "AD", "9H", "KC")])
    out += feed(engine, [Decision(box=1, action="insurance")])
    assert outcomes(out) == []  # no outcome reveals the dealer blackjack during insurance
    (done,) = outcomes(engine.apply(Confirm()))
    assert done.result is not None
    assert done.result["dealer"]["blackjack"] is True
    assert done.result["boxes"][0]["insurance"] == "win"
    assert done.result["boxes"][0]["hands"][0]["result"] == "lose"


def test_bets_closed_boxes_pick_the_playing_boxes() -> None:
    # A bets_closed carrying ``boxes``: only those are dealt (seed-000 BJ-B4).
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=7))
    feed(engine, [RoundOpen(), BetsClosed(boxes=(3,)), *cards("TS", "6D", "9H")])
    assert engine.snapshot()["coup"]["boxes"] == {"3": [["TS", "9H"]]}


def test_refused_decision_is_a_verdict_with_rule() -> None:
    engine = BlackjackEngine(TABLE, BlackjackRules(boxes=1))
    feed(engine, [RoundOpen(), BetsClosed(), *cards("TS", "6D", "9H")])
    (verdict,) = engine.apply(Decision(box=1, action="insurance"))
    assert isinstance(verdict, Verdict)
    assert (verdict.code, verdict.rule) == ("insurance_not_allowed", "BJ-O3")
