"""The station's desk: who signs what, the signed request, the reply in words, the lockout.

A real roster (scrypt at the smallest cost a roster accepts), the real gate and the table's real
signature check (:class:`~tablectl.controller.mqtt.authority.CommandAuthority`) on the other end
of a fake send: what the station signs, the table verifies.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.mqtt.authority import authority_for
from tablectl.controller.staff.gate import Gate, LockoutPolicy, Lockouts
from tablectl.controller.station.actions import ActionError, Command, build, signers, words
from tablectl.controller.station.desk import NEED_SIGNER, Credentials, Desk
from tablectl.drivers.clock import ManualClock
from tests.support.staff import make_roster

KEY = b"k" * 32


class _Table:
    """The other end: records requests, answers with the table's own signature verdict."""

    def __init__(self, tmp_path: Path) -> None:
        roles = {}
        for role in ("dealer", "supervisor", "technician"):
            path = tmp_path / f"{role}.key"
            path.write_bytes(KEY + role.encode())
            path.chmod(0o600)
            roles[role] = str(path)
        self.config = parse_config(
            {
                "table": {"id": "FT-1", "game": "fan_tan"},
                "journal": {"path": str(tmp_path / "j.sqlite")},
                "security": {"roles": roles},
            },
            "<t>",
        )
        self.keys = {role: KEY + role.encode() for role in roles}
        self.authority = authority_for(self.config)
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.reply: dict[str, Any] | None = None

    async def send(self, verb: str, request: dict[str, Any]) -> dict[str, Any] | None:
        self.sent.append((verb, request))
        assert self.authority is not None
        verdict = self.authority.check(verb, request, time.time())
        if self.reply is not None:
            return {"id": request["id"], **self.reply}
        if not verdict.accepted:
            return {"id": request["id"], "ok": False, "code": "unauthorised", "error": "x"}
        return {"id": request["id"], "ok": True, "outputs": []}


@pytest.fixture
def table(tmp_path: Path) -> _Table:
    return _Table(tmp_path)


def _desk(table: _Table, **policy: Any) -> Desk:
    gate = Gate(make_roster(), "st-1", Lockouts(LockoutPolicy(**policy)))
    state = {"phase": "closed", "round": "FT-1-000001", "faults": []}
    return Desk("FT-1", gate, table.config.security, table.keys, table.send, state=lambda: state)


async def test_a_dealer_signs_on_by_badge_and_the_station_signs_for_the_dealer(
    table: _Table,
) -> None:
    desk = _desk(table)
    said = await desk.act("key_in", {"kind": "beads", "value": "27", "again": "27"})
    assert (said.ok, said.code, said.message) == (False, NEED_SIGNER, "Sign on first")
    said = await desk.sign_on(Credentials("dealer", badge="BADGE-0142"))
    assert said.ok, said
    assert said.message == "Ana Ruiz is on duty as dealer"
    verb, request = table.sent[-1]
    assert verb == "event"
    assert request["event"] == {
        "type": "staff_on",
        "person": "D-0142",
        "role": "dealer",
        "how": "badge",
        "name": "Ana Ruiz",
    }
    assert (request["person"], request["by"], request["role"]) == ("D-0142", "D-0142", "dealer")
    said = await desk.act("key_in", {"kind": "beads", "value": "27", "again": "27"})
    assert (said.ok, said.message) == (True, "Bead count 27 keyed in")
    assert table.sent[-1][1]["event"] == {"type": "beads", "count": 27}


async def test_a_void_needs_a_supervisor_with_badge_and_pin(table: _Table) -> None:
    desk = _desk(table)
    await desk.sign_on(Credentials("dealer", person="D-0142", pin="4821"))
    said = await desk.act("void", {"reason": "misdeal"})
    assert (said.code, said.detail) == (NEED_SIGNER, "supervisor")
    said = await desk.act("void", {"reason": "misdeal"}, Credentials("supervisor", "BADGE-0007"))
    assert (said.ok, said.code) == (False, "pin_required")
    boss = Credentials("supervisor", badge="BADGE-0007", pin="9051")
    said = await desk.act("void", {"reason": "misdeal"}, boss)
    assert (said.ok, said.message) == (True, "Round FT-1-000001 void: misdeal")
    verb, request = table.sent[-1]
    assert (verb, request["round"], request["role"], request["person"]) == (
        "void",
        "FT-1-000001",
        "supervisor",
        "S-0007",
    )
    said = await desk.act("clear_fault", {"device": "w", "code": "f"}, Credentials("dealer"))
    assert (said.ok, said.code) == (False, "not_in_role")


async def test_wrong_pins_lock_the_person_and_are_counted(table: _Table) -> None:
    desk = _desk(table, max_failures=3, window=60.0, lock_seconds=600.0)
    wrong = Credentials("dealer", person="D-0177", pin="0000")
    codes = [(await desk.sign_on(wrong)).code for _ in range(3)]
    assert codes == ["wrong_pin", "wrong_pin", "locked_out"]
    said = await desk.sign_on(Credentials("dealer", person="D-0177", pin="7730"))
    assert (said.ok, said.code) == (False, "locked_out")
    assert "locked out" in said.message
    assert desk.gate.lockouts.failures_total == 3
    assert desk.gate.lockouts.lockouts_total >= 1
    assert not table.sent  # nothing reached the table


async def test_a_lockout_runs_on_monotonic_time_through_wall_clock_steps(table: _Table) -> None:
    clock = ManualClock(start=1_000_000.0)
    desk = _desk(table, max_failures=2, window=60.0, lock_seconds=600.0)
    desk.clock = clock
    wrong = Credentials("dealer", person="D-0177", pin="0000")
    right = Credentials("dealer", person="D-0177", pin="7730")
    assert [(await desk.sign_on(wrong)).code for _ in range(2)] == ["wrong_pin", "locked_out"]
    clock.step_wall(3600.0)  # NTP (or an operator) steps the wall clock an hour ahead
    assert (await desk.sign_on(right)).code == "locked_out"
    clock.step_wall(-7200.0)  # and back: the lockout is not made longer either
    clock.advance(601.0)
    said = await desk.sign_on(right)
    assert said.ok, said


async def test_refusals_and_silence_in_words(table: _Table) -> None:
    desk = _desk(table)
    await desk.sign_on(Credentials("dealer", badge="BADGE-0142"))
    table.reply = {"ok": False, "code": "dealer_change_mid_round", "error": "refused: mid-round"}
    said = await desk.sign_on(Credentials("dealer", badge="BADGE-0177"))
    assert said.message == "A dealer change during a round needs a supervisor"
    assert said.code == "dealer_change_mid_round"
    assert desk.on_duty is not None
    assert desk.on_duty.person.id == "D-0142"
    command = Command("event", {"event": {"type": "confirm"}}, "Done")
    assert words(command, None).message == "The table did not answer: is it running?"
    verdict = {"type": "verdict", "message": "card not in the deck"}
    said = words(command, {"ok": True, "outputs": [verdict]})
    assert (said.ok, said.detail) == (True, "card not in the deck")
    assert words(command, {"ok": False, "code": "new_code", "error": "e"}).message == (
        "The table refused it"
    )


async def test_a_supervisor_signs_a_dealer_change_mid_round(table: _Table) -> None:
    desk = _desk(table)
    boss = Credentials("supervisor", badge="BADGE-0007", pin="9051")
    said = await desk.sign_on(Credentials("dealer", badge="BADGE-0177"), boss)
    assert said.ok
    request = table.sent[-1][1]
    assert request["event"]["supervisor"] == "S-0007"
    assert request["event"]["person"] == "D-0177"
    assert (request["role"], request["person"]) == ("supervisor", "S-0007")
    said = await desk.sign_off(None, "end_of_shift")
    assert said.ok
    assert desk.on_duty is None
    assert table.sent[-1][1]["event"]["type"] == "staff_off"


@pytest.mark.parametrize(
    ("fields", "event"),
    [
        ({"kind": "card", "value": "kh", "again": "KH"}, {"type": "card", "card": "KH"}),
        ({"kind": "number", "value": "0", "again": "0"}, {"type": "winning_number", "number": 0}),
        (
            {"kind": "number", "value": "00", "again": "00"},
            {"type": "winning_number", "number": "00"},
        ),
        ({"kind": "dice", "value": "3 5 6", "again": "356"}, {"type": "dice", "dice": [3, 5, 6]}),
        ({"kind": "segment", "value": "12", "again": "12"}, {"type": "segment", "index": 12}),
    ],
)
def test_key_ins_become_normalized_events(fields: dict[str, str], event: dict[str, Any]) -> None:
    assert build("key_in", fields, None).payload == {"event": event}


@pytest.mark.parametrize(
    ("action", "fields", "why"),
    [
        ("key_in", {"kind": "card", "value": "KH", "again": "KD"}, "differ"),
        ("key_in", {"kind": "card", "value": "ZZ", "again": "ZZ"}, "not a card"),
        ("key_in", {"kind": "number", "value": "37", "again": "37"}, "0 to 36"),
        ("key_in", {"kind": "beads", "value": "0", "again": "0"}, "1 to 9999"),
        ("void", {"reason": "misdeal"}, "no round in play"),
        ("deal_error", {"kind": "spilled"}, "what went wrong"),
        ("launch", {}, "unknown action"),
    ],
)
def test_bad_entries_are_refused_before_sending(
    action: str, fields: dict[str, str], why: str
) -> None:
    with pytest.raises(ActionError, match=why):
        build(action, fields, {"round": None})


def test_a_deal_error_is_reported_for_a_supervisor_to_sign(table: _Table) -> None:
    command = build("deal_error", {"kind": "card_exposed", "position": "box1"}, {})
    assert command.payload == {
        "event": {"type": "deal_error", "kind": "card_exposed", "position": "box1"}
    }
    assert signers(command, table.config.security) == {"supervisor"}
    # The page sends the optional position empty when the dealer leaves it: not given.
    for empty in ("", "  ", None):
        bare = build("deal_error", {"kind": "wrong_count", "position": empty}, {})
        assert bare.payload == {"event": {"type": "deal_error", "kind": "wrong_count"}}


def test_who_may_sign_follows_the_tables_require(table: _Table) -> None:
    security = table.config.security
    assert signers(
        build("key_in", {"kind": "beads", "value": "4", "again": "4"}, {}), security
    ) >= {"dealer"}
    assert signers(build("void", {"reason": "x"}, {"round": "R"}), security) == {"supervisor"}
    clear = build("clear_fault", {"device": "w", "code": "f"}, {})
    assert signers(clear, security) == {"supervisor", "technician"}
    assert signers(clear, None) == {"supervisor", "technician"}  # a lab: the defaults


async def test_a_lab_desk_sends_unsigned_requests_naming_the_person(table: _Table) -> None:
    table.reply = {"ok": True}
    desk = Desk("FT-1", Gate(make_roster(), "st"), None, {}, table.send)
    assert desk.lab
    assert (await desk.sign_on(Credentials("dealer", badge="BADGE-0142"))).ok
    request = table.sent[-1][1]
    assert (request["person"], request["by"]) == ("D-0142", "D-0142")
    assert "sig" not in request
    assert "role" not in request


def test_an_event_the_rules_refuse_is_a_refusal_on_the_screen() -> None:
    command = Command("event", {"event": {"type": "staff_on"}}, "Ben Okafor is on duty")
    verdict = {"type": "verdict", "code": "dealer_change_mid_round", "message": "refused: x"}
    said = words(command, {"ok": True, "outputs": [verdict]})
    assert (said.ok, said.code, said.detail) == (False, "dealer_change_mid_round", "refused: x")
    assert said.message == "A dealer change during a round needs a supervisor"
