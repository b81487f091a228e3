"""Golden Wealth and Lightning Baccarat through the real card engine (seed-001 §3.2 L4005–4101,
§3.3 L4103–4191): the RNG's multiplier cards as ``rng_draw``, their timing, their picks, and the
multipliers the dealt cards take.

Cases are named after their seed lines (``L…`` = line of ``shared/seeds/001_*.txt``).
"""

from __future__ import annotations

from math import prod
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import parse_event
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine
from tablectl.controller.engines.cards import CardEngine
from tablectl.controller.games.cards.baccarat import next_expected
from tablectl.controller.games.cards.baccarat_rng import GoldenWealthBaccarat, LightningBaccarat
from tablectl.drivers.cards import RANKS, SUITS, parse_card

DECK52 = [r + s for s in SUITS for r in RANKS]
OPEN = ({"type": "round_open"}, {"type": "bets_closed"})
GAMES = ("golden_wealth_baccarat", "lightning_baccarat")
KEY = {"golden_wealth_baccarat": "gold", "lightning_baccarat": "lightning"}


def engine(game: str, **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def feed(eng: CardEngine, *events: dict[str, Any]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out += eng.apply(parse_event(event))
    return out


def cards(*codes: str) -> list[dict[str, Any]]:
    return [{"type": "card", "card": c} for c in codes]


def draw(*picks: tuple[object, int | None]) -> dict[str, Any]:
    return {"type": "rng_draw", "numbers": [{"value": v, "multiplier": m} for v, m in picks]}


def codes(out: list[EngineOutput]) -> list[str]:
    return [o.code for o in out if isinstance(o, Verdict)]


def outcomes(out: list[EngineOutput]) -> list[Outcome]:
    return [o for o in out if isinstance(o, Outcome)]


def settled(out: list[EngineOutput]) -> dict[str, Any]:
    (outcome,) = outcomes(out)
    assert outcome.status == "settled", outcome
    assert outcome.result is not None
    return outcome.result


# A draw both games accept (2, 3, 5 and 8 are in both lists).
FIVE = (("KH", 2), ("9C", 8), ("2D", 3), ("AS", 5), ("QS", 3))
# A natural coup: P KH 9C (9), B 2C 5S (7).
COUP = ("KH", "2C", "9C", "5S")


def test_l4005_l4103_catalog_and_defaults() -> None:
    golden, lightning = engine("golden_wealth_baccarat"), engine("lightning_baccarat")
    assert isinstance(golden.game_rules, GoldenWealthBaccarat)
    assert isinstance(lightning.game_rules, LightningBaccarat)
    for eng in (golden, lightning):
        assert eng.shoe.decks == 8  # "8 decks with 52 cards" (L4007, L4105)
        assert eng.game_rules.procedure == "shoe"
        rules = eng.rules
        assert (rules.burn, rules.cut_card_min_behind, rules.on_fault) == (False, 7, "void")
    assert golden.game_rules.rules.multipliers == [2, 3, 5, 8]  # L4021
    assert lightning.game_rules.rules.multipliers == [2, 3, 4, 5, 8]  # L4119


@pytest.mark.parametrize("game", GAMES)
def test_l4025_l4123_the_draw_after_bets_close_and_before_the_deal(game: str) -> None:
    eng = engine(game)
    feed(eng, *OPEN)
    assert eng.snapshot()["rng"] == {"awaits": True, "picks": None}
    assert codes(feed(eng, draw(*FIVE))) == []
    assert eng.snapshot()["rng"]["awaits"] is False
    assert eng.snapshot()["rng"]["picks"][0] == {"card": "KH", "multiplier": 2}
    result = settled(feed(eng, *cards(*COUP)))
    key = KEY[game]
    assert result["winner"] == "player"
    assert result[key] == [{"card": c, "multiplier": m} for c, m in FIVE]
    assert result[f"{key}_cards"] == {"player": ["KH", "9C"], "banker": []}
    # "The multipliers of these cards will be multiplied" (L4023, L4121).
    assert result["multipliers"] == {"player": 16, "banker": 1, "tie": 16}
    assert result["multiplier"] == 16
    assert result["rng_missing"] is False


@pytest.mark.parametrize(
    ("events", "code"),
    [
        # "After accepting bets, a … Round is held" (L4021, L4119).
        ([{"type": "round_open"}, draw(*FIVE)], "rng_before_bets_closed"),
        # "After the end of the … Round, the dealer deals" (L4025, L4123).
        ([*OPEN, *cards("KH"), draw(*FIVE)], "rng_after_first_card"),
        # One Round a coup.
        ([*OPEN, draw(*FIVE), draw(*FIVE)], "rng_duplicate"),
        ([*OPEN, draw(*FIVE), *cards(*COUP), draw(*FIVE)], "rng_after_result"),
    ],
)
def test_l4025_a_draw_at_any_other_time_is_refused(events: list[dict[str, Any]], code: str) -> None:
    eng = engine("lightning_baccarat", on_rng_missing="hold")
    out = feed(eng, *events)
    assert code in codes(out)
    verdict = next(o for o in out if isinstance(o, Verdict) and o.code == code)
    assert verdict.rule == "seed-001 L4117-4123, §2.2 (d)"
    assert verdict.data["numbers"][0] == {"value": "KH", "multiplier": 2}


def test_a_draw_with_no_round_is_an_unexpected_event() -> None:
    assert codes(feed(engine("lightning_baccarat"), draw(*FIVE))) == ["unexpected_event"]


@pytest.mark.parametrize(
    ("picks", "code", "reason"),
    [
        # "five random cards are selected from a virtual deck of 52 cards" (L4021, L4119).
        ((("KH", 2), ("JK", 2), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_value_out_of_range", None),
        ((("KH", 2), (11, 2), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_value_out_of_range", None),
        ((("KH", 2), ("10H", 2), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_value_out_of_range", None),
        ((("KH", 2), ("KH", 3), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_pick_invalid", "repeated"),
        ((("KH", 2), ("9C", None), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_pick_invalid", None),
        ((("KH", 2), ("9C", 8), ("2D", 3), ("AS", 5)), "rng_pick_invalid", "count"),
        # Gold multipliers "2x, 3x, 5x or 8x": no 4x (L4021).
        ((("KH", 2), ("9C", 4), ("2D", 3), ("AS", 5), ("QS", 3)), "rng_pick_invalid", "multiplier"),
    ],
)
def test_l4021_picks_that_cannot_be_the_gold_cards(
    picks: tuple[tuple[object, int | None], ...], code: str, reason: str | None
) -> None:
    eng = engine("golden_wealth_baccarat")
    out = feed(eng, *OPEN, draw(*picks))
    assert codes(out) == [code]
    if reason is not None:
        assert next(o for o in out if isinstance(o, Verdict)).data["reason"] == reason
    # Refused: the round still waits for a good draw.
    assert codes(feed(eng, draw(*FIVE))) == []


def test_l4119_lightning_takes_4x() -> None:
    eng = engine("lightning_baccarat")
    picks = (("KH", 4), ("9C", 8), ("2D", 3), ("AS", 5), ("QS", 3))
    assert codes(feed(eng, *OPEN, draw(*picks))) == []


def test_l4025_first_card_without_a_draw_voids_the_round_by_default() -> None:
    eng = engine("golden_wealth_baccarat")
    out = feed(eng, *OPEN, *cards("KH"))
    assert codes(out) == ["rng_missing"]
    (outcome,) = outcomes(out)
    assert (outcome.status, outcome.reason) == ("void", "rng_missing")
    assert outcome.result == {"cards": {"player": [], "banker": []}, "card": "KH"}
    assert eng.phase == "idle"


def test_l4025_first_card_without_a_draw_held_then_settled_without_multipliers() -> None:
    eng = engine("golden_wealth_baccarat", on_rng_missing="hold")
    out = feed(eng, *OPEN, *cards("KH"))
    assert codes(out) == ["rng_missing"]
    assert eng.phase == "pending_decision"
    feed(eng, {"type": "confirm"})
    result = settled(feed(eng, *cards(*COUP[1:])))
    assert (result["gold"], result["multipliers"], result["rng_missing"]) == (
        [],
        {"player": 1, "banker": 1, "tie": 1},
        True,
    )


def test_l4025_the_draw_times_from_the_cards_read_in_the_round_not_a_carried_card() -> None:
    # BAC-I2: a card after a coup is the next coup's first card; the next Round still comes
    # after bets close, and the first card read in the round without it is rng_missing.
    eng = engine("lightning_baccarat")
    feed(eng, *OPEN, draw(*FIVE), *cards(*COUP))
    assert codes(feed(eng, *cards("3H"))) == ["extra_card"]
    assert codes(feed(eng, *OPEN, draw(*FIVE))) == []
    result = settled(feed(eng, *cards("4C", "2H", "5D")))
    assert result["player"]["cards"][0] == "3H"


def test_gap_a_drawn_card_dealt_twice_in_a_hand() -> None:
    picks = (("KH", 2), ("9C", 8), ("2D", 3), ("AS", 5), ("QS", 3))
    # P KH KH (0) B 2C 3S (5): the Player draws; P3 = 9C, B: 5 on P3 9 stands.
    coup = ("KH", "2C", "KH", "3S", "9C")
    each = settled(feed(engine("lightning_baccarat"), *OPEN, draw(*picks), *cards(*coup)))
    assert each["lightning_cards"]["player"] == ["KH", "KH", "9C"]
    assert each["multipliers"]["player"] == 2 * 2 * 8
    once = settled(
        feed(engine("lightning_baccarat", repeats="once"), *OPEN, draw(*picks), *cards(*coup))
    )
    assert once["lightning_cards"]["player"] == ["KH", "9C"]
    assert once["multipliers"]["player"] == 2 * 8


def test_gap_a_tie_takes_the_multipliers_of_both_hands() -> None:
    # P KH 9C (9) B 9D QS (9): a natural tie.
    result = settled(
        feed(engine("lightning_baccarat"), *OPEN, draw(*FIVE), *cards("KH", "9D", "9C", "QS"))
    )
    assert result["winner"] == "tie"
    assert result["multipliers"] == {"player": 16, "banker": 3, "tie": 48}
    assert result["multiplier"] == 48


def test_rules_are_checked() -> None:
    with pytest.raises(ConfigError):
        engine("lightning_baccarat", multipliers=[2, 2])
    with pytest.raises(ConfigError):
        engine("lightning_baccarat", multipliers=[1, 3])
    with pytest.raises(ConfigError):
        engine("baccarat", rng_cards=5)  # plain baccarat has no RNG keys


def _coup(deck: list[str]) -> tuple[list[str], list[str], int]:
    """P1 B1 P2 B2 and the tableau, from ``deck`` (the cards used)."""
    player: list[str] = []
    banker: list[str] = []
    used = 0
    while (
        hand := next_expected([parse_card(c) for c in player], [parse_card(c) for c in banker])
    ) is not None:
        (player if hand == "player" else banker).append(deck[used])
        used += 1
    return player, banker, used


@settings(max_examples=150, deadline=None)
@given(
    deck=st.lists(st.sampled_from(DECK52), min_size=6, max_size=6),
    drawn=st.lists(st.sampled_from(DECK52), min_size=5, max_size=5, unique=True),
    multipliers=st.lists(st.sampled_from([2, 3, 4, 5, 8]), min_size=5, max_size=5),
)
def test_l4021_l4023_random_coups_multiply_the_drawn_cards_of_each_hand(
    deck: list[str], drawn: list[str], multipliers: list[int]
) -> None:
    player, banker, used = _coup(deck)
    picks = dict(zip(drawn, multipliers, strict=True))
    eng = engine("lightning_baccarat")
    result = settled(feed(eng, *OPEN, draw(*picks.items()), *cards(*deck[:used])))
    assert result["player"]["cards"] == player
    assert result["banker"]["cards"] == banker
    for hand, dealt in (("player", player), ("banker", banker)):
        assert result["multipliers"][hand] == prod(picks.get(c, 1) for c in dealt)
    assert result["multipliers"]["tie"] == prod(picks.get(c, 1) for c in player + banker)
    assert result["multiplier"] == result["multipliers"][result["winner"]]
