"""Blackjack Turbo through the real card engine (seed-001 §3.5, L3071–3095): blackjack shuffled
before every game, with Turbo's readings as defaults.

Cases are named after their seed lines (``L…`` = line of ``shared/seeds/001_*.txt``).
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
from tablectl.controller.games.cards.blackjack_rules import dealer_draws, hand_value
from tablectl.controller.games.cards.blackjack_turbo import BlackjackTurbo, BlackjackTurboRules
from tablectl.drivers.cards import RANKS, SUITS, parse_card

DECK52 = [r + s for s in SUITS for r in RANKS]
OPEN = ({"type": "round_open"}, {"type": "bets_closed"})
SHUFFLED = {"type": "shuffle_completed", "cards": 312}


def engine(game: str = "blackjack_turbo", **rules: Any) -> CardEngine:
    return build_engine("T1", game, rules, source="test.toml")


def feed(eng: CardEngine, *events: dict[str, Any]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out += eng.apply(parse_event(event))
    return out


def cards(*codes: str) -> list[dict[str, Any]]:
    return [{"type": "card", "card": c} for c in codes]


def codes(out: list[EngineOutput]) -> list[str]:
    return [o.code for o in out if isinstance(o, Verdict)]


def settled(out: list[EngineOutput]) -> dict[str, Any]:
    (outcome,) = [o for o in out if isinstance(o, Outcome)]
    assert outcome.status == "settled", outcome
    assert outcome.result is not None
    return outcome.result


def test_l3073_l3087_turbo_defaults() -> None:
    eng = engine()
    assert isinstance(eng.game_rules, BlackjackTurbo)
    rules = eng.rules
    assert isinstance(rules, BlackjackTurboRules)
    assert eng.shoe.decks == 6  # "6 deck of 52 cards with the Jokers removed" (L3073)
    assert eng.game_rules.script.reshuffle == "every_round"  # L3075
    assert (rules.boxes, rules.hole_card) == (1, "scanned")  # two to the player, two to himself
    assert (rules.insurance, rules.surrender) == (False, False)  # L3077: the four options only
    assert rules.max_splits == 1  # L3085
    assert rules.double_after_split is False  # L3083
    assert rules.hit_soft_17 is False  # L3087
    assert rules.on_fault == "void"  # seed-001 G1 L59


def test_l3075_shuffled_at_the_start_of_each_game() -> None:
    eng = engine()
    feed(eng, SHUFFLED)
    # Box TH 9C (19), dealer 6S + hole 7D (13): the box stands; the dealer draws to 17+.
    out = feed(eng, *OPEN, *cards("TH", "6S", "9C", "7D"))
    assert [o for o in out if isinstance(o, Outcome)] == []
    out = feed(eng, {"type": "decision", "box": 1, "action": "stand"}, *cards("5H"))
    result = settled(out)
    assert result["dealer"]["cards"] == ["6S", "7D", "5H"]  # 18 against 19
    assert result["boxes"][0]["hands"][0]["result"] == "win"
    assert eng.phase == "shoe_end"
    # No second game from the same cards: a card now is not played, a round needs a shuffle.
    assert codes(feed(eng, *cards("2C"))) == ["extra_card"]
    assert codes(feed(eng, {"type": "round_open"})) == ["shuffle_required"]
    assert codes(feed(eng, {"type": "shuffle_started"}, SHUFFLED, {"type": "round_open"})) == []


def test_l3075_reshuffle_is_a_rule_of_turbo_only() -> None:
    assert engine(reshuffle="shoe").game_rules.script.reshuffle == "shoe"
    with pytest.raises(ConfigError, match="reshuffle"):
        engine("blackjack", reshuffle="every_round")
    assert engine("blackjack").game_rules.script.reshuffle == "shoe"


def test_l3075_the_dealers_second_card_is_concealed_until_the_outcome() -> None:
    eng = engine()
    feed(eng, SHUFFLED, *OPEN, *cards("TH", "6S", "9C"))
    assert eng.conceals(parse_event({"type": "card", "card": "7D"}))
    feed(eng, *cards("7D"))
    assert eng.snapshot()["coup"]["dealer"] == {"cards": ["6S"], "hole_card": "down"}


@pytest.mark.parametrize("action", ["insurance", "even_money", "surrender"])
def test_l3077_options_other_than_hit_stand_double_split_are_refused(action: str) -> None:
    eng = engine()
    out = feed(eng, SHUFFLED, *OPEN, *cards("9H", "AS", "7C", "9D"))  # an ace up, no blackjack
    assert [o for o in out if isinstance(o, Outcome)] == []  # no insurance window to wait for
    out = feed(eng, {"type": "decision", "box": 1, "action": action})
    assert codes(out) == [f"{action}_not_allowed"]


def test_l3077_no_insurance_window_the_dealer_blackjack_ends_the_game_at_once() -> None:
    eng = engine()
    result = settled(feed(eng, SHUFFLED, *OPEN, *cards("9H", "AS", "7C", "KD")))
    assert result["dealer"]["blackjack"] is True
    assert result["boxes"][0]["hands"][0]["result"] == "lose"


def test_l3085_split_only_once_and_l3083_no_double_after_it() -> None:
    eng = engine()
    feed(eng, SHUFFLED, *OPEN, *cards("8H", "6S", "8C", "TD"))
    assert codes(feed(eng, {"type": "decision", "box": 1, "action": "split"})) == []
    feed(eng, *cards("8D"))  # the first split hand's second card: 8 8 again
    split = feed(eng, {"type": "decision", "box": 1, "action": "split"})
    assert codes(split) == ["split_not_allowed"]
    assert codes(feed(eng, {"type": "decision", "box": 1, "action": "double"})) == [
        "double_not_allowed"
    ]


def test_insurance_stays_offered_at_plain_blackjack() -> None:
    eng = engine("blackjack", hole_card="scanned")
    feed(eng, {"type": "round_open"}, {"type": "bets_closed", "boxes": [1]})
    feed(eng, *cards("9H", "AS", "7C", "KD"))
    assert codes(feed(eng, {"type": "decision", "box": 1, "action": "insurance"})) == []


@settings(max_examples=150, deadline=None)
@given(deck=st.lists(st.sampled_from(DECK52), min_size=12, max_size=12, unique=True))
def test_l3079_l3087_random_games_settle_as_blackjack_dealt_once_then_shuffled(
    deck: list[str],
) -> None:
    """The box takes cards while under 17, then stands; the dealer draws while L3087 says so.
    Every game settles with the cards an independent reading deals, and the shoe then ends."""
    eng = engine()
    out = feed(eng, SHUFFLED, *OPEN, *cards(*deck[:4]))
    box, dealer = [deck[0], deck[2]], [deck[1], deck[3]]
    rest = iter(deck[4:])

    def value(hand: list[str]) -> int:
        return hand_value([parse_card(c) for c in hand]).total

    dealer_bj = value(dealer) == 21
    # A blackjack ends the game on the deal: the box's, or the dealer's under an ace (no
    # insurance window, L3077: checked at once); under a ten it shows at the end (BJ 3.7).
    if value(box) != 21 and not (dealer_bj and dealer[0][0] == "A"):
        while value(box) < 17:
            box.append(next(rest))
            out += feed(eng, *cards(box[-1]))
        if value(box) < 21:
            out += feed(eng, {"type": "decision", "box": 1, "action": "stand"})
        if value(box) <= 21 and not dealer_bj:
            while dealer_draws([parse_card(c) for c in dealer]):
                dealer.append(next(rest))
                out += feed(eng, *cards(dealer[-1]))
    result = settled(out)
    assert result["boxes"][0]["hands"][0]["cards"] == box
    assert result["dealer"]["cards"] == dealer
    assert eng.phase == "shoe_end"  # L3075: the next game needs a shuffle
