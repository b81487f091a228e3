"""Red Dog, Draw Hi-Lo and Rock, Paper, Scissors through the real card engine (seed-001 §3.24,
§3.25, §3.22).

Every case is named after its seed line (``L…`` = line of ``shared/seeds/001_*.txt``; the digest
``shared/rules/seed-001-live-casino-regulations.md`` cites the same lines). Events go through
``parse_event`` and ``CardEngine.apply``, as the service feeds them.
"""

from __future__ import annotations

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
    DrawHiLo,
    RedDog,
    RockPaperScissors,
    hi_lo_direction,
    red_dog_kind,
    rps_zone,
)
from tablectl.drivers.cards import RANKS, SUITS, parse_card

DECK52 = [r + s for s in SUITS for r in RANKS]
OPEN = ({"type": "round_open"}, {"type": "bets_closed"})
CONFIRM = {"type": "confirm"}


def engine(game: str, **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def feed(eng: CardEngine, *events: dict[str, Any]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out += eng.apply(parse_event(event))
    return out


def cards(*codes: str) -> list[dict[str, Any]]:
    return [{"type": "card", "card": c} for c in codes]


def decision(action: str, box: int = 1) -> dict[str, Any]:
    return {"type": "decision", "box": box, "action": action}


def codes(out: list[EngineOutput]) -> list[str]:
    return [o.code for o in out if isinstance(o, Verdict)]


def settled(out: list[EngineOutput]) -> dict[str, Any]:
    (outcome,) = [o for o in out if isinstance(o, Outcome)]
    assert outcome.status == "settled", outcome
    assert outcome.result is not None
    return outcome.result


# -- Red Dog (seed-001 §3.24, L1589–1591) ---------------------------------------------------------


def test_l1591_red_dog_catalog_shoe_and_rank_order() -> None:
    eng = engine("red_dog")
    assert isinstance(eng.game_rules, RedDog)
    assert eng.shoe.decks == 8  # "8 decks of playing cards are used in the game"
    assert eng.game_rules.script.reshuffle == "shoe"
    assert eng.game_rules.procedure == "dealer_screen"
    # "The highest card is A, the lowest – 2"
    assert red_dog_kind(parse_card("AS"), parse_card("KD")) == ("consecutive", 0)
    assert red_dog_kind(parse_card("2S"), parse_card("AD")) == ("spread", 11)


@pytest.mark.parametrize(
    ("first", "second", "window", "third", "result", "spread"),
    [
        # "If the first 2 cards are consecutive …, the bet is refunded": no third card.
        ("7H", "8C", False, None, "push", 0),
        ("KH", "AC", False, None, "push", 0),
        # "a pair and make up a 3 of a kind … 11:1"; a pair without it is refunded (C24).
        ("9H", "9C", False, "9D", "three_of_a_kind", None),
        ("9H", "9C", False, "2D", "push", None),
        # A spread: Ride / Stand, then the third card "between the other 2" wins.
        ("5H", "9C", True, "7D", "win", 3),
        ("9C", "5H", True, "7D", "win", 3),  # the order of the open cards does not matter
        ("5H", "9C", True, "9D", "lose", 3),  # equal to an open card is not between
        ("5H", "9C", True, "KD", "lose", 3),
        ("2H", "AC", True, "KD", "win", 11),
    ],
)
def test_l1591_red_dog_rounds(
    first: str, second: str, window: bool, third: str | None, result: str, spread: int | None
) -> None:
    eng = engine("red_dog")
    out = feed(eng, *OPEN, *cards(first, second))
    if third is None:
        got = settled(out)
    else:
        assert [o for o in out if isinstance(o, Outcome)] == []
        assert eng.snapshot()["deal"]["awaits_confirm"] is window
        out = feed(eng, *([CONFIRM] if window else []), *cards(third))
        got = settled(out)
    assert codes(out) == []
    assert got == {
        "first": first,
        "second": second,
        "third": third,
        "kind": "pair" if first[0] == second[0] else "spread" if window else "consecutive",
        "spread": spread,
        "result": result,
        "rides": [],
    }


def test_l1591_red_dog_ride_and_stand_are_taken_per_box_while_the_window_is_open() -> None:
    eng = engine("red_dog", boxes=3)
    feed(eng, {"type": "round_open"}, {"type": "bets_closed", "boxes": [1, 3]})
    assert codes(feed(eng, decision("ride"))) == ["decision_refused"]  # no cards yet
    feed(eng, *cards("4H", "JC"))
    assert codes(feed(eng, decision("ride", 1), decision("stand", 3))) == []
    # Once per box; a box not playing; an action Red Dog does not have.
    assert codes(feed(eng, decision("stand", 1))) == ["decision_refused"]
    assert codes(feed(eng, decision("ride", 2))) == ["decision_refused"]
    assert codes(feed(eng, decision("war", 1))) == ["decision_refused"]
    out = feed(eng, CONFIRM, *cards("8S"))
    assert settled(out)["rides"] == [1]
    assert settled(out)["result"] == "win"


def test_l1591_red_dog_no_decision_on_a_pair_or_after_the_window() -> None:
    eng = engine("red_dog")
    feed(eng, *OPEN, *cards("QH", "QC"))
    assert codes(feed(eng, decision("ride"))) == ["decision_refused"]
    eng = engine("red_dog")
    feed(eng, *OPEN, *cards("3H", "QC"), CONFIRM)
    assert codes(feed(eng, decision("ride"))) == ["decision_refused"]


def test_l1591_red_dog_third_card_before_the_window_closed_holds() -> None:
    eng = engine("red_dog")
    out = feed(eng, *OPEN, *cards("3H", "QC", "7D"))
    assert codes(out) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"
    assert settled(feed(eng, CONFIRM))["result"] == "win"


def test_c24_red_dog_pair_third_card_can_be_turned_off() -> None:
    eng = engine("red_dog", pair_third_card=False)
    result = settled(feed(eng, *OPEN, *cards("9H", "9C")))
    assert (result["kind"], result["third"], result["result"]) == ("pair", None, "push")


def test_l1591_red_dog_rules_are_pinned() -> None:
    with pytest.raises(ConfigError):
        engine("red_dog", jokers_per_deck=1)
    with pytest.raises(ConfigError):
        engine("red_dog", ranks="6789TJQKA")


@settings(max_examples=150, deadline=None)
@given(dealt=st.lists(st.sampled_from(DECK52), min_size=3, max_size=3), ride=st.booleans())
def test_l1591_red_dog_random_rounds_match_an_independent_reading(
    dealt: list[str], ride: bool
) -> None:
    order = "23456789TJQKA"
    a, b, c = (order.index(code[0]) for code in dealt)
    eng = engine("red_dog", decks=8)
    out = feed(eng, *OPEN, *cards(*dealt[:2]))
    if abs(a - b) == 1:  # consecutive: refunded at once
        assert settled(out)["result"] == "push"
        return
    if a != b:  # a spread: the window first
        assert codes(feed(eng, decision("ride" if ride else "stand"))) == []
        out = feed(eng, CONFIRM)
        assert [o for o in out if isinstance(o, Outcome)] == []
    result = settled(feed(eng, *cards(dealt[2])))
    if a == b:
        assert result["result"] == ("three_of_a_kind" if c == a else "push")
    else:
        assert result["result"] == ("win" if min(a, b) < c < max(a, b) else "lose")
        assert result["spread"] == abs(a - b) - 1
        assert result["rides"] == ([1] if ride else [])


# -- Draw Hi-Lo (seed-001 §3.25, L1593–1595) -----------------------------------------------------


def test_l1595_draw_hi_lo_catalog_deck_and_rank_order() -> None:
    eng = engine("draw_hi_lo")
    assert isinstance(eng.game_rules, DrawHiLo)
    assert eng.shoe.decks == 1  # "1 deck of playing cards is used in the game"
    # "The highest card is K, the lowest – A"
    assert hi_lo_direction(parse_card("AS"), parse_card("KD")) == "higher"
    assert hi_lo_direction(parse_card("KS"), parse_card("AD")) == "lower"
    assert hi_lo_direction(parse_card("7S"), parse_card("7D")) == "tie"


@pytest.mark.parametrize(
    ("base", "following", "guess", "direction", "right"),
    [
        ("5H", "KD", "higher", "higher", True),
        ("5H", "KD", "lower", "higher", False),
        ("QH", "AD", "lower", "lower", True),
        # "If the Tie Bet wins, the winning is paid with 10:1 odds": a tie; no guess is right.
        ("7H", "7S", "higher", "tie", False),
    ],
)
def test_l1595_draw_hi_lo_rounds(
    base: str, following: str, guess: str, direction: str, right: bool
) -> None:
    eng = engine("draw_hi_lo")
    out = feed(eng, *OPEN, *cards(base))
    assert [o for o in out if isinstance(o, Outcome)] == []
    assert eng.snapshot()["deal"] == {
        "boxes": [1],
        "next": "next",
        "windows_closed": 0,
        "awaits_confirm": True,
    }
    out = feed(eng, decision(guess), CONFIRM, *cards(following))
    assert codes(out) == []
    assert settled(out) == {
        "base": base,
        "next": following,
        "direction": direction,
        "tie": direction == "tie",
        "guesses": {"1": {"guess": guess, "right": right}},
    }


def test_l1595_draw_hi_lo_guesses_once_per_box_on_the_base_card() -> None:
    eng = engine("draw_hi_lo", boxes=2)
    feed(eng, *OPEN)
    assert codes(feed(eng, decision("higher"))) == ["decision_refused"]  # no base card yet
    feed(eng, *cards("8D"))
    assert codes(feed(eng, decision("higher", 1), decision("lower", 2))) == []
    assert codes(feed(eng, decision("lower", 1))) == ["decision_refused"]
    assert codes(feed(eng, decision("ride", 2))) == ["decision_refused"]
    result = settled(feed(eng, CONFIRM, *cards("2C")))
    assert result["guesses"] == {
        "1": {"guess": "higher", "right": False},
        "2": {"guess": "lower", "right": True},
    }


def test_l1595_draw_hi_lo_next_card_before_the_guess_is_closed_holds() -> None:
    eng = engine("draw_hi_lo")
    assert codes(feed(eng, *OPEN, *cards("8D", "9C"))) == ["card_before_decisions"]
    assert eng.phase == "pending_decision"


def test_l1595_draw_hi_lo_one_deck_is_dealt_through_and_reconciled() -> None:
    eng = engine("draw_hi_lo")
    feed(eng, {"type": "shuffle_completed", "cards": 52})
    for base, following in zip(DECK52[::2], DECK52[1::2], strict=True):
        settled(feed(eng, *OPEN, *cards(base), CONFIRM, *cards(following)))
    out = feed(eng, {"type": "shoe_empty"})
    assert codes(out) == []
    assert eng.phase == "shoe_end"


# -- Rock, Paper, Scissors (seed-001 §3.22, L2869–2903) ------------------------------------------


def test_l2871_rock_paper_scissors_catalog_and_symbol_deck() -> None:
    eng = engine("rock_paper_scissors")
    assert isinstance(eng.game_rules, RockPaperScissors)
    assert eng.game_rules.symbols_per_deck == 18
    assert eng.shoe.size == 54
    assert codes(feed(eng, {"type": "shuffle_completed", "cards": 54})) == []
    eng = engine("rock_paper_scissors", cards_per_symbol=10, decks=2)
    assert eng.shoe.size == 60
    assert codes(feed(eng, {"type": "shuffle_completed", "cards": 54})) == [
        "shuffler_count_mismatch"
    ]


@pytest.mark.parametrize(
    ("card", "symbol", "wins", "loses"),
    [
        # L2879-2883: stone draws stone, loses to paper, beats scissors …
        ("RK", "rock", "paper", "scissors"),
        # L2887-2893: paper draws paper, loses to scissors, beats stone …
        ("PA", "paper", "scissors", "rock"),
        # L2895-2901: scissors draw scissors, lose to stone, beat paper.
        ("SC", "scissors", "rock", "paper"),
    ],
)
def test_l2879_l2903_what_each_pick_does_against_a_zone_card(
    card: str, symbol: str, wins: str, loses: str
) -> None:
    zone = rps_zone(parse_card(card, symbols=True))
    assert zone == {"card": card, "symbol": symbol, "wins": wins, "draws": symbol, "loses": loses}


def test_a_burn_on_a_symbol_deck_burns_nothing_and_never_raises() -> None:
    """A symbol card has no nominal value to burn by (seed-000 BAC-E6 counts pips): shown first
    of a shoe it burns nothing, as a joker does; the engine once raised ValueError here."""
    eng = engine("rock_paper_scissors", burn=True)
    assert codes(feed(eng, {"type": "shuffle_completed", "cards": 54}, *cards("RK"))) == []
    result = settled(feed(eng, *OPEN, *cards("PA", "SC")))
    assert (result["silver"]["card"], result["gold"]["card"]) == ("PA", "SC")


def test_l2871_silver_then_gold() -> None:
    eng = engine("rock_paper_scissors")
    result = settled(feed(eng, *OPEN, *cards("PA", "rk")))  # any case on the wire
    assert (result["silver"]["card"], result["gold"]["card"]) == ("PA", "RK")
    assert eng.snapshot()["coup"] is None


def test_l2871_a_ranked_card_is_not_a_card_of_the_symbol_deck() -> None:
    eng = engine("rock_paper_scissors")
    out = feed(eng, *OPEN, *cards("KH"))
    assert codes(out) == ["rank_not_in_deck"]
    assert eng.phase == "pending_decision"
    result = settled(feed(eng, *cards("SC"), CONFIRM))
    assert "unsettled" in result  # a supervisor let it go on: no facts on a foreign card


def test_l2871_a_symbol_seen_more_often_than_the_deck_holds() -> None:
    eng = engine("rock_paper_scissors", cards_per_symbol=1)
    feed(eng, {"type": "shuffle_completed", "cards": 3})
    settled(feed(eng, *OPEN, *cards("RK", "PA")))
    out = feed(eng, *OPEN, *cards("RK"))
    assert codes(out) == ["composition_exceeded"]
    (verdict,) = [o for o in out if isinstance(o, Verdict)]
    assert verdict.rule == "seed-001 §3.0(1)"


def test_symbol_cards_are_not_cards_at_a_standard_table() -> None:
    eng = engine("top_card")
    assert codes(feed(eng, *OPEN, *cards("RK"))) == ["not_a_card"]


@settings(max_examples=100, deadline=None)
@given(dealt=st.lists(st.sampled_from(["RK", "PA", "SC"]), min_size=2, max_size=2))
def test_l2877_l2903_random_rounds_match_the_circle(dealt: list[str]) -> None:
    beats = {"RK": "SC", "PA": "RK", "SC": "PA"}
    names = {"RK": "rock", "PA": "paper", "SC": "scissors"}
    result = settled(feed(engine("rock_paper_scissors"), *OPEN, *cards(*dealt)))
    for zone, card in zip(("silver", "gold"), dealt, strict=True):
        # The pick that wins beats the card, the card beats the pick that loses.
        assert beats[next(k for k, v in names.items() if v == result[zone]["wins"])] == card
        assert names[beats[card]] == result[zone]["loses"]
