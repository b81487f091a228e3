"""Who may change a round or a fault: the verb × event type × role matrix, the safe default,
and refusals that cannot bloat the journal (issue 11, defects 2, 4 and 5).

In-process with a real SQLite journal, a roulette engine and the publisher's command path (no
broker: the wire is tests/integration/test_tls_acl.py). The clock is injected.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import MqttConfig, SecurityConfig, parse_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import EVENT_TYPES, BallLaunched, RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import EVENT_ACTIONS, CommandAuthority
from tablectl.controller.mqtt.publisher import Publisher
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.service.metrics import MetricsRegistry
from tablectl.controller.service.runner import TableRunner
from tests.support.clocks import WallClock

NOW = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
TS = "2026-11-30T10:00:00.000000Z"
KEYS = {"dealer": b"d" * 32, "supervisor": b"s" * 32, "technician": b"t" * 32}

# The policy, written out by hand (not read from the code under test): the action each event
# type entered through cmd/event needs, and the roles allowed each action by default.
ACTION_OF = {
    **dict.fromkeys(
        [
            "round_open",
            "bets_closed",
            "ball_launched",
            "winning_number",
            "card",
            "cut_card",
            "shuffle_started",
            "shuffle_completed",
            "ball_drawn",
            "segment",
            "wheel_spin",
            "mixing",
            "read_error",
            "shoe_empty",
            "decision",
            "roll_started",
            "dice",
            "roll_invalid",
            "beads",
        ],
        "event",
    ),
    "void": "void",
    "no_spin": "void",
    "deal_error": "void",
    "fault": "fault",
    "shoe_removed": "fault",
    "tube_full": "fault",
    "fault_cleared": "clear_fault",
    "confirm": "confirm",
    "rng_draw": "rng",
    "staff_on": "staff",
    "staff_off": "staff",
}
ALLOWED = {
    "event": {"dealer", "supervisor"},
    "void": {"supervisor"},
    "fault": {"supervisor", "technician"},  # never the dealer (regulatory R14: it locks)
    "clear_fault": {"supervisor", "technician"},
    "confirm": {"supervisor"},
    "rng": {"supervisor"},  # and the RNG service's own role "rng", not among these keys
    "staff": {"dealer", "supervisor", "technician"},  # each signs on at the station
}
ROLES = ("dealer", "supervisor", "technician", None)  # None: unsigned


def _security() -> SecurityConfig:
    return SecurityConfig.model_validate({"roles": {r: f"/k/{r}.key" for r in KEYS}})


def _authority() -> CommandAuthority:
    return CommandAuthority(KEYS, _security().required, table="T1", max_nonces=100_000)


def _request(verb: str, body: dict[str, Any], role: str | None) -> dict[str, Any]:
    if role is None:
        return {**body, "by": "anonymous"}
    return sign_command(body, verb=verb, table="T1", role=role, key=KEYS[role], by="X-1", ts=NOW)


def test_every_event_type_maps_to_an_explicit_action() -> None:
    assert set(EVENT_ACTIONS) == set(EVENT_TYPES)
    assert dict(EVENT_ACTIONS) == ACTION_OF


def _matrix() -> list[tuple[str, dict[str, Any], str, str | None]]:
    cases: list[tuple[str, dict[str, Any], str, str | None]] = []
    for role in ROLES:
        cases.append(("void", {"reason": "foreign_object"}, "void", role))
        cases.append(("clear_fault", {"device": "wheel", "code": "c"}, "clear_fault", role))
        for kind, action in ACTION_OF.items():
            cases.append(("event", {"event": {"type": kind}}, action, role))
    return cases


@pytest.mark.parametrize(
    ("verb", "body", "action", "role"),
    _matrix(),
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_verb_event_type_role_matrix(
    verb: str, body: dict[str, Any], action: str, role: str | None
) -> None:
    verdict = _authority().check(verb, _request(verb, body, role), NOW.timestamp())
    expected = role is not None and role in ALLOWED[action]
    assert verdict.accepted is expected, (verb, body, role, verdict.reason)
    if not expected:
        assert verdict.reason
        if role is not None:
            assert f"may not {action}" in verdict.reason  # says which action was refused


def test_require_may_not_give_faults_to_the_dealer() -> None:
    roles = {r: f"/k/{r}.key" for r in KEYS}
    for action in ("fault", "clear_fault"):
        with pytest.raises(ValueError, match=f"require.{action}: the dealer role may not"):
            SecurityConfig.model_validate({"roles": roles, "require": {action: "dealer"}})


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({}, "roles: name at least one role key file"),
        (
            {"insecure_commands": True, "roles": {"supervisor": "/k"}},
            "insecure_commands = true accepts unsigned commands",
        ),
    ],
)
def test_security_section_is_roles_or_insecure(section: dict[str, Any], message: str) -> None:
    data = {"table": {"id": "T1", "game": "roulette"}, "journal": {"path": "/j"}}
    with pytest.raises(ConfigError, match=message):
        parse_config({**data, "security": section}, "t.toml")


# --- the runner: defect 2 (a dealer locks the table), defect 4 (anyone voids by default) ------


@pytest.fixture
async def secured(tmp_path: Path) -> AsyncIterator[TableRunner]:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(NOW.timestamp),
            authority=_authority(),
        )
        task = asyncio.create_task(runner.run())
        try:
            yield runner
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def _send(runner: TableRunner, verb: str, body: dict[str, Any], role: str | None) -> Any:
    return await runner.commands.command(verb, json.dumps(_request(verb, body, role)).encode())


async def test_a_dealer_cannot_raise_a_fault_to_void_the_round(secured: TableRunner) -> None:
    secured.committer.handle(RoundOpen(ts=TS, device="wheel"))
    secured.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
    fault = {"event": {"type": "fault", "device": "wheel", "code": "foreign_object"}}
    reply = await _send(secured, "event", fault, "dealer")
    assert (reply["ok"], reply["code"]) == (False, "unauthorised")
    assert "role 'dealer' may not fault" in reply["error"]
    assert secured.engine.current_round is not None  # still in play
    assert secured.latches.journaled.get("wheel", set()) == set()
    assert not [r for r in secured.journal.records() if r["type"] in ("fault", "outcome")]

    reply = await _send(secured, "event", fault, "technician")
    assert reply["ok"] is True, reply
    assert [(o["status"], o["reason"]) for o in reply["outputs"]] == [("void", "device_fault")]
    assert secured.latches.journaled["wheel"] == {"foreign_object"}

    clear = {"event": {"type": "fault_cleared", "device": "wheel", "code": "foreign_object"}}
    reply = await _send(secured, "event", clear, "dealer")
    assert (reply["ok"], reply["code"]) == (False, "unauthorised")
    assert secured.latches.journaled["wheel"] == {"foreign_object"}
    direct = {"device": "wheel", "code": "foreign_object"}
    assert (await _send(secured, "clear_fault", direct, "dealer"))["ok"] is False
    assert (await _send(secured, "clear_fault", direct, "technician"))["ok"] is True
    assert secured.latches.journaled["wheel"] == set()


async def _bare(tmp_path: Path, *, insecure: bool) -> tuple[Journal, TableRunner]:
    journal = Journal(tmp_path / f"j-{insecure}.sqlite", "T1")
    runner = TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=WallClock(NOW.timestamp),
        insecure_commands=insecure,
    )
    return journal, runner


async def test_by_default_an_anonymous_winning_number_changes_nothing(tmp_path: Path) -> None:
    """Reproduced: without [security] an anonymous cmd/event winning_number voided 4 of 4."""
    journal, runner = await _bare(tmp_path, insecure=False)
    task = asyncio.create_task(runner.run())
    try:
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        runner.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
        before = journal.last_seq
        attempts = [
            ("event", {"event": {"type": "winning_number", "number": 17}}),
            ("event", {"event": {"type": "fault", "device": "wheel", "code": "x"}}),
            ("void", {"reason": "foreign_object"}),
            ("clear_fault", {"device": "wheel", "code": "x"}),
        ]
        for _ in range(4):
            for verb, body in attempts:
                reply = await runner.commands.command(verb, json.dumps(body).encode())
                assert (reply["ok"], reply["code"]) == (False, "commands_disabled"), reply
        assert journal.last_seq == before
        assert runner.engine.current_round is not None
        assert runner.latches.journaled.get("wheel", set()) == set()
        assert (await runner.commands.command("status", b"{}"))["ok"] is True
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        journal.close()


async def test_insecure_commands_is_the_explicit_lab_switch(tmp_path: Path) -> None:
    journal, runner = await _bare(tmp_path, insecure=True)
    task = asyncio.create_task(runner.run())
    try:
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        void = b'{"reason": "foreign_object", "by": "lab", "round": "T1-000001"}'
        reply = await runner.commands.command("void", void)
        assert reply["ok"] is True
        [command] = [r for r in journal.records() if r["type"] == "command"]
        assert (command["verified"], command["by"]) == (False, "lab")
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        journal.close()


# --- defect 5: refusals are counted, not journaled one by one; caps before parsing ----------


async def test_a_flood_of_refusals_is_one_record_per_window_and_counted(tmp_path: Path) -> None:
    """Reproduced: 300 unsigned voids made 302 fsync'd records in 4 s, each also published."""
    clock = [NOW.timestamp()]
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(lambda: clock[0]),
        )
        registry = MetricsRegistry()
        metrics = registry.table("T1")
        publisher = Publisher(
            MqttConfig(),
            Topics("t", "T1"),
            journal,
            host="127.0.0.1",
            port=1,
            on_command=runner.commands.command,
            trace=metrics.on_publisher,
        )
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        before = journal.last_seq
        for i in range(300):
            body = {"id": f"c{i}", "reason": "foreign_object", "by": "intruder"}
            reply = json.loads(await publisher._run_command("void", json.dumps(body).encode()))
            assert reply["code"] == "commands_disabled"
            clock[0] += 0.01  # 300 in 3 s: one window
        assert journal.last_seq == before  # not one record yet
        assert runner.engine.current_round is not None
        clock[0] += 10
        runner.refusals.flush()
        [record] = list(journal.records(before))
        assert record["type"] == "commands_refused"
        assert record["count"] == 300
        entry = record["codes"]["commands_disabled"]
        assert entry["count"] == 300
        assert (entry["first"]["id"], entry["first"]["by"]) == ("c0", "intruder")
        assert record["since"] < record["ts"]
        text = registry.render()
        assert 'tablectl_commands_refused_total{table="T1",code="commands_disabled"} 300' in text


@pytest.mark.parametrize(
    ("verb", "body", "code", "message"),
    [
        ("void", {"reason": "r" * 2000}, "field_too_long", "'reason' has 2000 characters"),
        ("void", {"reason": "x", "by": "b" * 65}, "field_too_long", "'by' has 65 characters"),
        (
            "event",
            {"event": {"type": "card", "card": "K" * 300}},
            "field_too_long",
            "'event.card' has 300 characters",
        ),
        ("void", {"reason": "\ud800"}, "bad_request", "a lone UTF-16 surrogate"),
    ],
)
async def test_string_fields_over_their_caps_are_refused_before_parsing(
    tmp_path: Path, verb: str, body: dict[str, Any], code: str, message: str
) -> None:
    journal, runner = await _bare(tmp_path, insecure=True)
    with journal:
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        before = journal.last_seq
        payload = json.dumps(body, ensure_ascii=True).encode()
        reply = await runner.commands.command(verb, payload)
        assert (reply["ok"], reply["code"]) == (False, code)
        assert message in reply["error"]
        assert journal.last_seq == before
        assert runner.engine.current_round is not None


async def test_a_payload_over_the_cap_is_refused_unread(tmp_path: Path) -> None:
    journal, runner = await _bare(tmp_path, insecure=True)
    with journal:
        reply = await runner.commands.command("void", b'{"reason": "' + b"x" * 70_000 + b'"}')
        assert (reply["ok"], reply["code"]) == (False, "payload_too_large")
        assert reply["error"].startswith("payload too large: 70014 bytes (at most 65536)")
        runner.refusals.flush(force=True)
        [record] = journal.records()
        assert record["codes"]["payload_too_large"]["first"]["bytes"] == 70_014


@pytest.mark.parametrize(
    ("ts", "accepted"),
    [
        ("2026-11-30T10:00:05", False),  # naive: which zone? refused at this edge (core.time)
        ("30/11/2026 10:00", False),
        ("2026-11-30T10:00:05Z", True),
        ("2026-11-30T11:00:05+01:00", True),
    ],
)
async def test_a_manual_events_time_needs_a_zone(
    secured: TableRunner, ts: str, accepted: bool
) -> None:
    secured.committer.handle(RoundOpen(ts=TS, device="wheel"))
    fault = {"event": {"type": "fault", "device": "wheel", "code": "foreign_object", "ts": ts}}
    reply = await _send(secured, "event", fault, "technician")
    assert reply["ok"] is accepted, reply
    if not accepted:
        assert reply["code"] == "bad_request"
        assert "with a zone" in reply["error"]
        assert secured.latches.journaled.get("wheel", set()) == set()
    else:
        faults = [r for r in secured.journal.records() if r.type == "fault"]
        assert [(f["ts"], f["manual"]) for f in faults] == [(ts, True)]


# --- resend (the floor's archive, docs/fleet.md) ----------------------------------------------


@pytest.mark.parametrize("role", ROLES)
def test_with_security_resend_is_the_archive_roles_and_nobody_elses(role: str | None) -> None:
    # Issue 26: an unsigned flood of resends spent the archive's budget and delayed live play.
    body = {"from_seq": 1, "to_seq": 10}
    verdict = _authority().check("resend", _request("resend", body, role), NOW.timestamp())
    assert verdict.accepted is False
    assert "resend" in str(verdict.reason)


def test_an_archive_signed_resend_is_accepted_once() -> None:
    keys = {**KEYS, "archive": b"a" * 32}
    roles = {r: f"/k/{r}.key" for r in keys}
    required = SecurityConfig.model_validate({"roles": roles}).required
    assert required["resend"] == frozenset({"archive"})
    authority = CommandAuthority(keys, required, table="T1")
    request = sign_command(
        {"from_seq": 1, "to_seq": 10},
        verb="resend",
        table="T1",
        role="archive",
        key=keys["archive"],
        by="archive-1",
        ts=NOW,
    )
    assert authority.check("resend", request, NOW.timestamp()).accepted
    assert not authority.check("resend", request, NOW.timestamp()).accepted  # replayed


@pytest.mark.parametrize("insecure", [False, True])
async def test_resend_is_answered_with_and_without_security(tmp_path: Path, insecure: bool) -> None:
    """Also on a table whose commands are disabled: the archive must fill gaps from every table;
    nothing is journaled for it (a flood of resends cannot fill the disk)."""
    journal, runner = await _bare(tmp_path, insecure=insecure)
    with journal:
        runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        before = journal.last_seq
        reply = await runner.commands.command("resend", b'{"id": "r0", "from_seq": 1, "to_seq": 5}')
        # Nothing published yet: nothing to publish again (the outbox sends those first).
        assert (reply["ok"], reply["count"], reply["published_seq"]) == (True, 0, 0), reply
        journal.mark_published(journal.last_seq)
        reply = await runner.commands.command("resend", b'{"id": "r1", "from_seq": 1, "to_seq": 5}')
        # No publisher here (NoOutputs): the read is allowed, and says that nothing can be sent.
        assert (reply["ok"], reply["code"], reply["id"]) == (False, "offline", "r1"), reply
        assert journal.last_seq == before
        bad = await runner.commands.command("resend", b'{"from_seq": 5, "to_seq": 1}')
        assert (bad["ok"], bad["code"]) == (False, "bad_request")
