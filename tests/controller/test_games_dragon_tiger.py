"""Dragon tiger, football studio, war of bets: rank orders, deal order, results (table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

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
