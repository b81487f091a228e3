"""Who is on duty: one dealer at a time, changes between rounds, a supervisor's signature in one."""

from __future__ import annotations

from tablectl.controller.core.crew import DEALER_CHANGE_MID_ROUND, NOT_ON_DUTY, Crew
from tablectl.controller.core.events import StaffOff, StaffOn

TS = "2026-12-07T20:00:00.000000Z"


def on(person: str, role: str = "dealer", supervisor: str | None = None) -> StaffOn:
    return StaffOn(ts=TS, person=person, role=role, how="badge", name=person, supervisor=supervisor)  # type: ignore[arg-type]


def off(person: str, role: str = "dealer", supervisor: str | None = None) -> StaffOff:
    return StaffOff(ts=TS, person=person, role=role, how="badge", supervisor=supervisor)  # type: ignore[arg-type]


def test_a_second_dealer_replaces_the_first_between_rounds_and_that_is_a_change() -> None:
    crew = Crew()
    assert crew.sign_on(on("D-1"), in_round=False) is None
    assert crew.sign_on(on("S-1", "supervisor"), in_round=False) is None
    assert crew.sign_on(on("D-2"), in_round=False) is None
    assert crew.last_dealer == "D-2"
    assert crew.dealer is not None
    assert crew.dealer.person == "D-2"
    assert crew.view() == {
        "dealer": {"person": "D-2", "name": "D-2", "since": TS},
        "supervisors": [{"person": "S-1", "name": "S-1", "since": TS}],
        "technicians": [],
    }


def test_the_same_dealer_signing_on_again_is_no_change_and_allowed_in_a_round() -> None:
    crew = Crew()
    crew.sign_on(on("D-1"), in_round=False)
    assert crew.sign_on(on("D-1"), in_round=True) is None  # no change: allowed in a round
    assert crew.last_dealer == "D-1"


def test_a_change_in_a_round_needs_a_supervisor() -> None:
    crew = Crew()
    crew.sign_on(on("D-1"), in_round=False)
    refused = crew.sign_on(on("D-2"), in_round=True)
    assert refused is not None
    assert refused.code == DEALER_CHANGE_MID_ROUND
    assert crew.dealer is not None
    assert crew.dealer.person == "D-1"
    assert crew.sign_on(on("D-2", supervisor="S-1"), in_round=True) is None
    assert crew.dealer.person == "D-2"  # type: ignore[union-attr]


def test_only_who_is_on_duty_signs_off_and_a_dealer_only_between_rounds() -> None:
    crew = Crew()
    assert crew.sign_off(off("D-1"), in_round=False).code == NOT_ON_DUTY  # type: ignore[union-attr]
    crew.sign_on(on("D-1"), in_round=False)
    assert crew.sign_off(off("D-1", "supervisor"), in_round=False).code == NOT_ON_DUTY  # type: ignore[union-attr]
    assert crew.sign_off(off("D-1"), in_round=True).code == DEALER_CHANGE_MID_ROUND  # type: ignore[union-attr]
    assert crew.sign_off(off("D-1"), in_round=False) is None
    assert crew.dealer is None
    # The dealer who dealt last is remembered: the next one is a change (R7: the engine burns).
    assert crew.last_dealer == "D-1"
