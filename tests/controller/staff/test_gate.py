"""Signing on at a station: badge, id + PIN, badge + PIN; lockouts per person and per station."""

from __future__ import annotations

import pytest

from tablectl.controller.staff.gate import (
    BAD_INPUT,
    LOCKED_OUT,
    PIN_REQUIRED,
    UNKNOWN_BADGE,
    WRONG_PIN,
    Gate,
    Identity,
    LockoutPolicy,
    Lockouts,
    Refused,
)
from tablectl.controller.staff.roster import NOT_IN_ROLE, UNKNOWN_PERSON
from tests.support.staff import make_roster

ROSTER = make_roster()


def gate(station: str = "BAC-01", **policy: float) -> Gate:
    return Gate(ROSTER, station, Lockouts(LockoutPolicy(**policy)))  # type: ignore[arg-type]


def test_a_dealer_signs_on_by_badge_alone_or_by_id_and_pin() -> None:
    g = gate()
    by_badge = g.authenticate(role="dealer", now=0, badge="BADGE-0142")
    assert isinstance(by_badge, Identity)
    assert (by_badge.person.id, by_badge.how) == ("D-0142", "badge")
    by_pin = g.authenticate(role="dealer", now=0, person_id="D-0177", pin="7730")
    assert isinstance(by_pin, Identity)
    assert (by_pin.person.id, by_pin.how) == ("D-0177", "pin")


def test_a_supervisor_signs_an_action_with_badge_and_pin() -> None:
    g = gate()
    no_pin = g.authenticate(role="supervisor", now=0, badge="BADGE-0007", need_pin=True)
    assert no_pin == Refused(PIN_REQUIRED, "enter the PIN")
    ok = g.authenticate(role="supervisor", now=0, badge="BADGE-0007", pin="9051", need_pin=True)
    assert isinstance(ok, Identity)
    assert ok.how == "badge+pin"


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"role": "dealer", "badge": "BADGE-0000"}, UNKNOWN_BADGE),
        ({"role": "dealer", "person_id": "D-9999", "pin": "1111"}, UNKNOWN_PERSON),
        ({"role": "dealer", "person_id": "D-0142", "pin": "0000"}, WRONG_PIN),
        ({"role": "dealer", "person_id": "D-0142", "pin": "12ab"}, WRONG_PIN),
        ({"role": "supervisor", "badge": "BADGE-0142"}, NOT_IN_ROLE),
        ({"role": "dealer", "person_id": "D-0142"}, PIN_REQUIRED),
        ({"role": "dealer", "badge": "\x00\x01"}, BAD_INPUT),
        ({"role": "dealer", "person_id": "../etc"}, BAD_INPUT),
        ({"role": "dealer"}, BAD_INPUT),
    ],
)
def test_each_refusal_has_its_stable_code(kwargs: dict[str, str], code: str) -> None:
    result = gate().authenticate(now=0, **kwargs)  # type: ignore[arg-type]
    assert isinstance(result, Refused)
    assert result.code == code
    assert "\n" not in result.message


def test_wrong_pins_lock_the_person_then_time_unlocks() -> None:
    g = gate(max_failures=3, window=60, lock_seconds=600)
    codes = [
        g.authenticate(role="dealer", now=t, person_id="D-0142", pin="0000")
        for t in (1.0, 2.0, 3.0)
    ]
    assert [c.code for c in codes if isinstance(c, Refused)] == [WRONG_PIN, WRONG_PIN, LOCKED_OUT]
    # Locked: even the right PIN is refused, and the message says for how long.
    locked = g.authenticate(role="dealer", now=10, person_id="D-0142", pin="4821")
    assert isinstance(locked, Refused)
    assert locked.code == LOCKED_OUT
    assert "Ana Ruiz is locked out for 10 minutes" in locked.message
    assert g.lockouts.lockouts_total >= 1
    assert g.lockouts.failures_total == 3
    assert isinstance(
        g.authenticate(role="dealer", now=604, person_id="D-0142", pin="4821"), Identity
    )


def test_failures_outside_the_window_do_not_add_up() -> None:
    g = gate(max_failures=3, window=60, lock_seconds=600)
    for t in (0.0, 100.0, 200.0, 300.0):
        result = g.authenticate(role="dealer", now=t, person_id="D-0142", pin="0000")
        assert isinstance(result, Refused)
        assert result.code == WRONG_PIN


def test_a_right_pin_clears_the_count() -> None:
    g = gate(max_failures=3, window=60, lock_seconds=600)
    g.authenticate(role="dealer", now=1, person_id="D-0142", pin="0000")
    g.authenticate(role="dealer", now=2, person_id="D-0142", pin="0000")
    assert isinstance(
        g.authenticate(role="dealer", now=3, person_id="D-0142", pin="4821"), Identity
    )
    again = g.authenticate(role="dealer", now=4, person_id="D-0142", pin="0000")
    assert isinstance(again, Refused)
    assert again.code == WRONG_PIN


def test_guessing_across_people_locks_the_station() -> None:
    g = gate(max_failures=2, window=60, lock_seconds=600)
    g.authenticate(role="dealer", now=1, person_id="D-0142", pin="0000")
    g.authenticate(role="dealer", now=2, person_id="D-0177", pin="0000")
    g.authenticate(role="dealer", now=3, badge="BADGE-0000")
    fourth = g.authenticate(role="dealer", now=4, person_id="D-9999", pin="0000")
    assert isinstance(fourth, Refused)
    assert fourth.code == LOCKED_OUT
    assert "this station is locked" in fourth.message
    # Nobody signs on at this station now, not even with the right PIN...
    blocked = g.authenticate(role="dealer", now=4, person_id="D-0177", pin="7730")
    assert isinstance(blocked, Refused)
    assert blocked.code == LOCKED_OUT
    # ...while another station is not affected.
    other = Gate(ROSTER, "BAC-02", Lockouts(g.lockouts.policy))
    assert isinstance(
        other.authenticate(role="dealer", now=4, person_id="D-0177", pin="7730"), Identity
    )
