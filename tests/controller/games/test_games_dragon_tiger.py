"""Dragon tiger, football studio, war of bets: rank orders, deal order, results (table-driven), and
war of bets' second betting round through the card engine (seed-001 L2625)."""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.controller.core.events import parse_event
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.dragon_tiger import (
    DragonTigerRules,
    Variant,
    next_expected,
    outcome,
    rank_value,
)
from tablectl.drivers.cards import parse_card

CASES: list[tuple[str, Variant, str, str, dict[str, Any]]] = [
    (
        "seed-001-3.6-L1807-king-beats-two",
        "dragon_tiger",
        "KH",
        "2C",
        {"winner": "dragon", "dragon": "KH", "tiger": "2C", "suited_tie": False},
    ),
    (
        "seed-001-3.6-L1807-ace-is-lowest",
        "dragon_tiger",
        "AS",
        "2D",
        {"winner": "tiger", "dragon": "AS", "tiger": "2D", "suited_tie": False},
    ),
    (
        "seed-001-3.6-L1809-tie-suits-differ",
        "dragon_tiger",
        "7S",
        "7H",
        {"winner": "tie", "dragon": "7S", "tiger": "7H", "suited_tie": False},
    ),
    (
        "seed-001-3.6-L1821-suited-tie",
        "dragon_tiger",
        "QD",
        "QD",
        {"winner": "tie", "dragon": "QD", "tiger": "QD", "suited_tie": True},
    ),
    (
        "seed-001-3.6-ten-below-jack",
        "dragon_tiger",
        "TS",
        "JS",
        {"winner": "tiger", "dragon": "TS", "tiger": "JS", "suited_tie": False},
    ),
    (
        "seed-001-3.7-L1780-ace-is-highest",
        "football_studio",
        "AS",
        "KD",
        {"winner": "home", "home": "AS", "away": "KD"},
    ),
    (
        "seed-001-3.7-L1791-draw-no-suited",
        "football_studio",
        "5C",
        "5C",
        {"winner": "draw", "home": "5C", "away": "5C"},
    ),
    (
        "seed-001-3.8-L2619-two-lowest",
        "war_of_bets",
        "2H",
        "3S",
        {"winner": "dealer", "player": "2H", "dealer": "3S"},
    ),
    (
        "seed-001-3.8-L2623-war",
        "war_of_bets",
        "AH",
        "AC",
        {"winner": "war", "player": "AH", "dealer": "AC"},
    ),
]


@pytest.mark.parametrize(
    ("variant", "first", "second", "expected"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_outcome(variant: Variant, first: str, second: str, expected: dict[str, Any]) -> None:
    assert outcome(parse_card(first), parse_card(second), variant) == expected


@pytest.mark.parametrize(
    ("variant", "order"),
    [("dragon_tiger", ("dragon", "tiger")), ("football_studio", ("home", "away"))],
    ids=["DESIGN-6-dragon-then-tiger", "seed-001-3.7-home-then-away"],
)
def test_deal_order(variant: Variant, order: tuple[str, str]) -> None:
    assert next_expected([], variant) == order[0]
    assert next_expected([parse_card("2C")], variant) == order[1]
    assert next_expected([parse_card("2C"), parse_card("3C")], variant) is None


def test_war_of_bets_player_card_first_seed_001_l2621() -> None:
    assert next_expected([], "war_of_bets") == "player"


def test_rank_orders() -> None:
    assert [rank_value(parse_card(r + "S")) for r in "A23456789TJQK"] == list(range(1, 14))
    assert rank_value(parse_card("AS"), "football_studio") == 13


@pytest.mark.parametrize(
    ("variant", "decks"),
    [("dragon_tiger", 8), ("football_studio", 8), ("war_of_bets", 6)],
    ids=["seed-001-L1803", "seed-001-L1778", "seed-001-L2619"],
)
def test_variant_deck_defaults(variant: Variant, decks: int) -> None:
    assert DragonTigerRules(variant=variant).decks == decks
    assert DragonTigerRules(variant=variant, decks=4).decks == 4


def test_defaults_void_on_malfunction_seed_001_l1823() -> None:
    rules = DragonTigerRules()
    assert (rules.on_fault, rules.burn) == ("void", False)


# -- War of Bets' second betting round (seed-001 L2625) -------------------------------------------


def _war_engine(**rules: Any) -> CardEngine:
    return build_engine("WB-1", "dragon_tiger", {"variant": "war_of_bets", **rules}, source="t")


def _feed(engine: CardEngine, *events: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for event in events:
        out += engine.apply(parse_event(event))
    return out


_OPEN = ({"type": "round_open"}, {"type": "bets_closed"})


def _card(code: str, barcode: str | None = None) -> dict[str, Any]:
    return {"type": "card", "card": code, "barcode": barcode}


@pytest.mark.parametrize(
    ("variant", "second_bets"),
    [("dragon_tiger", False), ("football_studio", False), ("war_of_bets", True)],
    ids=["seed-001-L1809", "seed-001-L1782", "seed-001-L2625"],
)
def test_l2625_only_war_of_bets_reopens_betting_after_the_first_card(
    variant: Variant, second_bets: bool
) -> None:
    assert DragonTigerRules(variant=variant).second_bets is second_bets
    assert DragonTigerRules(variant=variant, second_bets=not second_bets).second_bets is (
        not second_bets
    )


def test_l2625_the_dealer_card_waits_for_the_second_betting_round_to_close() -> None:
    engine = _war_engine()
    out = _feed(engine, *_OPEN, _card("9S", "B1-9S"))
    assert out == []
    # The dealer screen (and the betting system) see the window: close it before the card.
    assert engine.snapshot()["deal"] == {
        "boxes": [],
        "next": "dealer",
        "windows_closed": 0,
        "awaits_confirm": True,
    }
    out = _feed(engine, {"type": "confirm"}, _card("3H", "B1-3H"))
    (result,) = [o.result for o in out if getattr(o, "status", None) == "settled"]
    assert result == {"winner": "player", "player": "9S", "dealer": "3H"}


def test_l2625_a_dealer_card_before_the_close_holds_the_round() -> None:
    engine = _war_engine()
    out = _feed(engine, *_OPEN, _card("9S"), _card("3H"))
    assert [getattr(o, "code", None) for o in out] == ["card_before_decisions"]
    assert engine.phase == "pending_decision"
    out = _feed(engine, {"type": "confirm"})
    assert [o.status for o in out] == ["settled"]


def test_l2625_confirm_before_the_player_card_is_refused() -> None:
    engine = _war_engine()
    out = _feed(engine, *_OPEN, {"type": "confirm"})
    assert [getattr(o, "code", None) for o in out] == ["unexpected_event"]


def test_l2625_second_bets_off_deals_both_cards_at_once() -> None:
    engine = _war_engine(second_bets=False)
    out = _feed(engine, *_OPEN, _card("9S"), _card("9H"))
    assert [o.result for o in out if getattr(o, "status", None) == "settled"] == [
        {"winner": "war", "player": "9S", "dealer": "9H"}
    ]
    assert "deal" not in engine.snapshot()
