"""Shared shoe rules: composition, burn, cut card, shuffler reconciliation (pure)."""

from __future__ import annotations

import pytest

from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.games.cards.shoe import (
    COMPOSITION_EXCEEDED,
    CUT_CARD_TOO_DEEP,
    JOKER_NOT_ALLOWED,
    NOT_A_CARD,
    SHOE_COUNT_MISMATCH,
    SHUFFLER_COUNT_MISMATCH,
    SHUFFLER_DECK_CHECK,
    Burn,
    Finding,
    Shoe,
    burn_count,
    check_cut_card,
    check_shuffle,
    full_shoe_codes,
    read_card,
    shoe_size,
)
from tablectl.drivers.cards import parse_card


@pytest.mark.parametrize(
    ("code", "count"),
    [("AS", 1), ("2H", 2), ("5D", 5), ("9C", 9), ("TS", 10), ("JH", 10), ("QD", 10), ("KC", 10)],
    ids=lambda v: f"seed-000-BAC-E6-{v}",
)
def test_burn_count(code: str, count: int) -> None:
    assert burn_count(parse_card(code)) == count


def test_burn_procedure_v_bac_1() -> None:
    burn = Burn()
    assert not burn.take(parse_card("3H"))
    assert (burn.shown, burn.expected) == (parse_card("3H"), 3)
    assert not burn.take(parse_card("KS"))
    assert not burn.take(parse_card("KS"))
    assert burn.take(parse_card("KS"))
    # Burned cards are never named.
    assert burn.summary() == {"shown": "3H", "expected": 3, "burned": 3}


def test_composition_v_bac_6_at_most_decks_of_each() -> None:
    shoe = Shoe(8)
    card = parse_card("AS")
    assert [shoe.deal(card) for _ in range(8)] == [None] * 8
    finding = shoe.deal(card)
    assert finding is not None
    assert (finding.code, finding.severity) == (COMPOSITION_EXCEEDED, "hold")
    assert shoe.count(card) == 9


def test_a_full_shoe_deals_cleanly() -> None:
    shoe = Shoe(2, counted=104)
    assert all(shoe.deal(parse_card(c)) is None for c in full_shoe_codes(2))
    assert (shoe.dealt, shoe.remaining) == (104, 0)
    assert shoe.empty() is None


def test_jokers_refused_unless_configured_seed_001_3_0() -> None:
    finding = Shoe(8).deal(parse_card("JK"))
    assert finding is not None
    assert finding.code == JOKER_NOT_ALLOWED
    assert Shoe(1, jokers_per_deck=2).deal(parse_card("JK1")) is None
    assert shoe_size(1, 2) == 54


def test_shuffler_reconciliation_r6() -> None:
    assert check_shuffle(8, 416) is None
    wrong = check_shuffle(8, 415)
    assert wrong is not None
    assert (wrong.code, wrong.rule) == (SHUFFLER_COUNT_MISMATCH, "R6")
    deck_check = check_shuffle(8, 416, missing=["AS"])
    assert deck_check is not None
    assert deck_check.code == SHUFFLER_DECK_CHECK


def test_shuffler_count_never_trusted_alone_r6() -> None:
    # More cards read than the shuffler counted.
    shoe = Shoe(1, counted=2)
    assert shoe.deal(parse_card("AS")) is None
    assert shoe.deal(parse_card("2S")) is None
    found = shoe.deal(parse_card("3S"))
    assert found is not None
    assert found.code == SHOE_COUNT_MISMATCH
    # Shoe empty with fewer cards read than counted.
    short = Shoe(1, counted=52)
    short.deal(parse_card("AS"))
    empty = short.empty()
    assert empty is not None
    assert empty.code == SHOE_COUNT_MISMATCH


def test_mid_shoe_skips_depth_checks_design_4_4() -> None:
    shoe = Shoe(8, known=False)
    shoe.deal(parse_card("AS"))
    assert shoe.empty() is None
    assert check_cut_card(shoe, 13) is None


@pytest.mark.parametrize(
    ("dealt", "min_behind", "code"),
    [(39, 13, None), (40, 13, CUT_CARD_TOO_DEEP), (45, 7, None), (46, 7, CUT_CARD_TOO_DEEP)],
    ids=["seed-000-BAC-E3-13-ok", "seed-000-BAC-E3-12", "seed-004-BAC-3.3.4-7", "seed-004-6"],
)
def test_cut_card_depth(dealt: int, min_behind: int, code: str | None) -> None:
    shoe = Shoe(1)
    for c in full_shoe_codes(1)[:dealt]:
        shoe.deal(parse_card(c))
    finding = check_cut_card(shoe, min_behind)
    assert (finding.code if finding else None) == code


def test_read_card() -> None:
    assert read_card("10h") == parse_card("TH")
    bad = read_card("ZZ")
    assert isinstance(bad, Finding)
    assert bad.code == NOT_A_CARD


# -- composition_exceeded cites the game's own rule (issue 14) ------------------------------------

_LIGHTNING = {
    "type": "rng_draw",
    "numbers": [{"value": c, "multiplier": 2} for c in ("2C", "3C", "4C", "5C", "6C")],
}


@pytest.mark.parametrize(
    ("game", "rules", "rule"),
    [
        ("baccarat", {"decks": 1, "burn": False}, "V-BAC-6"),  # seed-000 BAC-E1
        ("blackjack", {"decks": 1}, "V-BJ-2"),  # seed-000 §2.8
        ("three_card_poker", {}, "PKH-01"),  # seed-000 §5: "a standard deck of 52 cards"
        ("ultimate_texas_holdem", {}, "PKH-01"),
        ("bombay_poker", {}, "PKH-01"),
        ("teen_patti", {}, "seed-001 §3.0(1)"),  # seed-001's game under 3 Card Poker's rules
        ("dragon_tiger", {"decks": 1}, "seed-001 §3.0(1)"),
        ("blackjack_turbo", {"decks": 1}, "seed-001 §3.0(1)"),
        ("lightning_baccarat", {"decks": 1}, "seed-001 §3.0(1)"),
        ("top_card", {"decks": 1}, "seed-001 §3.0(1)"),
    ],
)
def test_composition_exceeded_cites_the_rule_of_the_game_at_the_table(
    game: str, rules: dict[str, object], rule: str
) -> None:
    engine = build_engine("T1", game, rules, source="t.toml")
    events = [{"type": "round_open"}, {"type": "bets_closed"}]
    events += [_LIGHTNING] if game == "lightning_baccarat" else []
    events += [{"type": "card", "card": "AS"}] * 2
    found = [o for e in events for o in engine.apply(parse_event(e)) if isinstance(o, Verdict)]
    assert [(v.code, v.rule) for v in found] == [(COMPOSITION_EXCEEDED, rule)]


def test_l2871_a_symbol_deck_shoe() -> None:
    assert shoe_size(2, symbols=18) == 108
    assert check_shuffle(1, 54, symbols=18) is None
    assert check_shuffle(1, 52, symbols=18) is not None
    shoe = Shoe(1, symbols=2, composition_rule="seed-001 §3.0(1)")
    rock = read_card("RK", symbols=True)
    assert isinstance(rock, type(parse_card("KH")))
    assert [shoe.deal(rock), shoe.deal(rock)] == [None, None]
    third = shoe.deal(rock)
    assert third is not None
    assert (third.code, third.rule, third.severity) == (
        COMPOSITION_EXCEEDED,
        "seed-001 §3.0(1)",
        "hold",
    )
    ranked = shoe.deal(parse_card("KH"))
    assert ranked is not None
    assert ranked.code == "rank_not_in_deck"
    assert isinstance(read_card("RK"), Finding)  # not a card at a standard table
    assert shoe.size == 6
