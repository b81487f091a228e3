"""Staff on duty in every engine: the dealer of each round, dealer changes, the burn they owe (R7).

Real engines from the catalog, fed events as the runner feeds them (docs/station.md).
"""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.controller.core.crew import DEALER_CHANGE_MID_ROUND, NO_DEALER, NOT_ON_DUTY
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    RoundOpen,
    ShuffleCompleted,
    ShuffleStarted,
    StaffOff,
    StaffOn,
    TableEvent,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import Engine, build_engine
from tablectl.controller.engines.cards.engine import BURN_MISSED
from tablectl.controller.games import catalog
from tests.support.events import TS, roulette_spin


def on(person: str, role: str = "dealer", **more: Any) -> StaffOn:
    return StaffOn(ts=TS, person=person, role=role, how="badge", **more)  # type: ignore[arg-type]


def feed(engine: Engine, events: list[TableEvent]) -> list[EngineOutput]:
    return [out for event in events for out in engine.apply(event)]


def outcomes(outputs: list[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def codes(outputs: list[EngineOutput]) -> list[str]:
    return [o.code for o in outputs if isinstance(o, Verdict)]


@pytest.mark.parametrize("game", sorted(catalog.CATALOG))
def test_every_game_takes_staff_events_and_shows_who_is_on_duty(game: str) -> None:
    engine = build_engine("T1", game, {}, source="test")
    assert "staff" not in engine.snapshot()  # nobody yet: the state stays as it was
    assert engine.apply(on("D-1", name="Ana")) == []
    assert engine.apply(on("S-1", "supervisor")) == []
    staff = engine.snapshot()["staff"]
    assert staff["dealer"] == {"person": "D-1", "name": "Ana", "since": TS}
    assert [s["person"] for s in staff["supervisors"]] == ["S-1"]
    off = StaffOff(ts=TS, person="D-9", role="dealer", how="badge")
    assert codes(engine.apply(off)) == [NOT_ON_DUTY]


def test_outcomes_name_the_dealer_of_the_round_and_no_dealer_no_field() -> None:
    engine = build_engine("T1", "roulette", {}, source="test")
    [plain] = outcomes(feed(engine, roulette_spin(17)))
    assert plain.dealer is None
    assert "dealer" not in plain.to_payload()  # byte-identical without staff
    engine.apply(on("D-1"))
    [dealt] = outcomes(feed(engine, roulette_spin(5)))
    assert dealt.to_payload()["dealer"] == "D-1"


def test_with_dealer_required_no_round_opens_without_a_dealer() -> None:
    engine = build_engine("T1", "roulette", {"dealer_required": True}, source="test")
    refused = engine.apply(RoundOpen(ts=TS, device="wheel"))
    assert codes(refused) == [NO_DEALER]
    assert isinstance(refused[0], Verdict)
    assert refused[0].rule == "R17"
    assert engine.current_round is None
    engine.apply(on("D-1"))
    assert outcomes(feed(engine, roulette_spin(9)))[0].status == "settled"
    engine.apply(StaffOff(ts=TS, person="D-1", role="dealer", how="badge", reason="break"))
    assert codes(engine.apply(RoundOpen(ts=TS, device="wheel"))) == [NO_DEALER]


def test_a_dealer_change_mid_round_needs_a_supervisor_and_the_round_keeps_its_dealer() -> None:
    engine = build_engine("T1", "roulette", {}, source="test")
    engine.apply(on("D-1"))
    spin = roulette_spin(22)
    feed(engine, spin[:2])  # open, ball launched
    assert codes(engine.apply(on("D-2"))) == [DEALER_CHANGE_MID_ROUND]
    assert engine.apply(on("D-2", supervisor="S-1")) == []
    [outcome] = outcomes(feed(engine, spin[2:]))
    assert outcome.dealer == "D-1"  # who dealt when the round opened
    [next_one] = outcomes(feed(engine, roulette_spin(3)))
    assert next_one.dealer == "D-2"


def _baccarat(burn: int) -> Engine:
    engine = build_engine("T1", "baccarat", {"burn_after_dealer_change": burn}, source="test")
    feed(engine, [ShuffleStarted(ts=TS), ShuffleCompleted(ts=TS, cards=416)])
    # The new shoe's own burn (BAC-E6): a 3 shown, three burned.
    feed(engine, [Card(ts=TS, card=c, device="shoe") for c in ("3D", "KS", "7H", "2C")])
    assert engine.phase == "idle"
    return engine


COUP = ["9H", "2C", "KD", "3S"]  # player 9+K, banker 2+3: natural 9, two cards each


def coup(cards: list[str] = COUP) -> list[TableEvent]:
    return [
        RoundOpen(ts=TS),
        BetsClosed(ts=TS),
        *(Card(ts=TS, card=c, device="shoe") for c in cards),
    ]


def test_the_first_card_after_a_dealer_change_is_burned_unseen_where_the_rules_say_so() -> None:
    engine = _baccarat(burn=1)
    engine.apply(on("D-1"))
    [first] = outcomes(feed(engine, coup()))
    assert (first.status, first.dealer) == ("settled", "D-1")
    engine.apply(on("D-2"))
    assert engine.snapshot()["dealer_burn"] == 1
    burn = Card(ts=TS, card="5D", device="shoe")
    assert engine.conceals(burn)  # published withheld, like any burned card
    assert feed(engine, [burn]) == []
    assert "dealer_burn" not in engine.snapshot()
    [second] = outcomes(feed(engine, coup()))
    assert (second.status, second.dealer) == ("settled", "D-2")


def test_a_card_dealt_in_place_of_the_burn_is_a_verdict_and_voids_the_round() -> None:
    engine = _baccarat(burn=1)
    engine.apply(on("D-1"))
    feed(engine, coup())
    engine.apply(on("D-2"))
    outputs = feed(engine, coup())
    assert BURN_MISSED in codes(outputs)
    verdict = next(o for o in outputs if isinstance(o, Verdict) and o.code == BURN_MISSED)
    assert verdict.rule == "R7"
    [void] = outcomes(outputs)
    assert (void.status, void.reason, void.dealer) == ("void", BURN_MISSED, "D-2")
    # Nothing more is owed: the next coup is played.
    assert outcomes(feed(engine, coup()))[0].status == "settled"


def test_no_burn_rule_no_burn() -> None:
    engine = _baccarat(burn=0)
    engine.apply(on("D-1"))
    feed(engine, coup())
    engine.apply(on("D-2"))
    assert "dealer_burn" not in engine.snapshot()
    assert outcomes(feed(engine, coup()))[0].status == "settled"
