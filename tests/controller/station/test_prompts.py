"""The station's prompts: every game of the catalog gets words, from real engines' snapshots."""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.controller.core.events import parse_event
from tablectl.controller.engines import build_engine
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.station.prompts import Table, expects, position_name


def _engine(game: str) -> Any:
    return build_engine("T-1", game, {}, source="<test>")


@pytest.mark.parametrize("game", sorted(CATALOG))
def test_every_game_has_a_prompt_when_idle_and_when_betting_is_open(game: str) -> None:
    engine = _engine(game)
    idle = expects(Table(game, "dealer"), engine.snapshot())
    assert idle.text
    assert idle.tone in ("go", "wait", "stop")
    if CATALOG[game].family == "cards":
        assert idle.text == "Waiting for the shuffler"
        size = engine.snapshot()["shoe"]["size"]
        shuffled = _feed(engine, {"type": "shuffle_completed", "cards": size})
        idle = expects(Table(game, "dealer"), shuffled)
        assert idle.text in ("Open betting", "Draw and show the first card"), idle
        if engine.phase != "idle":
            return  # a burn first (baccarat's is below)
    if engine.phase == "idle":
        assert idle.text == "Open betting"
        engine.apply(parse_event({"type": "round_open"}))
        if engine.phase == "open":
            assert expects(Table(game, "dealer"), engine.snapshot()).text == "Close betting"
            assert expects(Table(game), engine.snapshot()).text == "Betting is open"


def _feed(engine: Any, *events: dict[str, Any]) -> dict[str, Any]:
    for event in events:
        engine.apply(parse_event(event))
    snapshot: dict[str, Any] = engine.snapshot()
    return snapshot


def test_baccarat_prompts_follow_the_coup_and_the_tableau() -> None:
    engine = _engine("baccarat")
    table = Table("baccarat", "dealer")
    assert expects(table, engine.snapshot()).text == "Waiting for the shuffler"
    state = _feed(engine, {"type": "shuffle_completed", "cards": 416})
    assert expects(table, state).text == "Draw and show the first card"
    state = _feed(engine, {"type": "card", "card": "3H"})
    assert expects(table, state).text == "Burn 3 more cards face down"
    state = _feed(engine, *[{"type": "card", "card": "2C"}] * 3)
    assert expects(table, state).text == "Open betting"
    state = _feed(engine, {"type": "round_open"}, {"type": "bets_closed"})
    assert expects(table, state).text == "Deal Player's first card"
    state = _feed(engine, {"type": "card", "card": "2H"})
    assert expects(table, state).text == "Deal Banker's first card"
    state = _feed(engine, {"type": "card", "card": "3D"}, {"type": "card", "card": "TH"})
    prompt = expects(table, state)
    assert (prompt.text, prompt.tone, prompt.key_in) == ("Deal Banker's second card", "go", "card")
    # Player 2, Banker 3: the Player draws a third card (seed-000 §4.3).
    state = _feed(engine, {"type": "card", "card": "KD"})
    assert expects(table, state).text == "Deal Player's third card"


def test_a_dealer_screen_game_prompts_its_positions_and_its_windows() -> None:
    engine = _engine("three_card_poker")
    table = Table("three_card_poker", "dealer")
    state = _feed(
        engine,
        {"type": "shuffle_completed", "cards": 52},
        {"type": "round_open"},
        {"type": "bets_closed", "boxes": [1, 2]},
    )
    deal = state["deal"]
    prompt = expects(table, state)
    assert prompt.text == f"Deal {position_name(deal['next'])}'s first card"


def test_faults_offline_locked_and_a_read_error_come_first() -> None:
    table = Table("roulette")
    state = {"phase": "closed", "round": "R-1", "faults": [], "ball_in_play": False}
    assert expects(table, state).text == "Spin"
    assert expects(table, {**state, "ball_in_play": True}).key_in == "number"
    fault = expects(table, {**state, "faults": ["ss2_fault_5"]})
    assert (fault.tone, fault.detail) == ("stop", "Stop the game and call a supervisor")
    assert "ss2_fault_5" in fault.text
    assert expects(table, state, {"state": "offline"}).text == "The table controller is offline"
    assert expects(table, state, {"locked": True}).text == "The table is locked"
    asking = {"code": "read_error", "round": "R-1"}
    assert expects(Table("baccarat"), state, None, asking).key_in == "card"
    assert expects(table, None).text == "Waiting for the table"
    assert expects(table, {**state, "phase": "held"}).tone == "stop"


def test_fan_tan_asks_for_the_bead_count_once_bets_are_closed() -> None:
    engine = _engine("fan_tan")
    table = Table("fan_tan", "dealer")
    state = _feed(engine, {"type": "round_open"}, {"type": "bets_closed"})
    prompt = expects(table, state)
    assert (prompt.text, prompt.key_in) == ("Key in the bead count", "beads")


@pytest.mark.parametrize(
    ("position", "words"), [("box3", "Box 3"), ("banker", "Banker"), ("andar", "Andar")]
)
def test_positions_in_dealer_words(position: str, words: str) -> None:
    assert position_name(position) == words


def test_a_dealer_change_asks_for_its_burn_before_betting_opens() -> None:
    engine = build_engine("T-1", "baccarat", {"burn_after_dealer_change": 1}, source="<test>")
    table = Table("baccarat", "dealer")
    dealer = {"type": "staff_on", "role": "dealer", "how": "badge"}
    state = _feed(
        engine,
        {"type": "shuffle_completed", "cards": 416},
        {"type": "card", "card": "AH"},
        {"type": "card", "card": "2C"},
        {**dealer, "person": "D-1"},
        {**dealer, "person": "D-2"},
    )
    assert expects(table, state).text == "Dealer change: burn 1 card face down"
    state = _feed(engine, {"type": "card", "card": "3C"})
    assert expects(table, state).text == "Open betting"


def test_a_table_that_needs_a_dealer_asks_for_one_between_rounds() -> None:
    table = Table("fan_tan", "dealer", dealer_required=True)
    idle = {"phase": "idle", "round": None, "faults": []}
    assert expects(table, idle, dealer=False).text == "Sign on: no dealer on duty"
    assert expects(table, idle, dealer=True).text == "Open betting"
    assert expects(Table("fan_tan", "dealer"), idle, dealer=False).text == "Open betting"
