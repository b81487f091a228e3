"""Signed, role-checked commands (tablectl.controller.mqtt.security) and their verdicts in the
journal.

In-process with a real SQLite journal and a roulette engine; no broker (the TLS + ACL path is
tests/integration/test_tls_acl.py). The clock is injected, so freshness is exact.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import MqttConfig, parse_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import BallLaunched, Fault, RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import (
    CommandAuthority,
    action_for,
    authority_for,
    describe_security,
)
from tablectl.controller.mqtt.security import client_security, connect_failure_hint, sign_command
from tablectl.controller.secrets import read_key_file, read_password_file
from tablectl.controller.service.runner import TableRunner
from tests.support.clocks import WallClock
from tests.support.records import journaled
from tests.support.tls import Pki, find_openssl, make_pki

NOW = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
SUPERVISOR_KEY = b"s" * 32
DEALER_KEY = b"d" * 32
REQUIRED = {
    "void": frozenset({"supervisor"}),
    "event": frozenset({"dealer", "supervisor"}),
    "clear_fault": frozenset({"supervisor"}),
    "confirm": frozenset({"supervisor"}),
}
TS = "2026-11-30T10:00:00.000000Z"


def _authority(**kwargs: Any) -> CommandAuthority:
    return CommandAuthority(
        {"supervisor": SUPERVISOR_KEY, "dealer": DEALER_KEY}, REQUIRED, table="T1", **kwargs
    )


def _signed(
    verb: str,
    payload: dict[str, Any] | None = None,
    *,
    role: str = "supervisor",
    key: bytes = SUPERVISOR_KEY,
    at: datetime = NOW,
    table: str = "T1",
    nonce: str | None = None,
) -> dict[str, Any]:
    return sign_command(
        payload or {}, verb=verb, table=table, role=role, key=key, by="FM-0042", ts=at, nonce=nonce
    )


# --- the authority ---------------------------------------------------------------------------


def test_a_supervisor_signed_void_is_accepted_once() -> None:
    authority = _authority()
    request = _signed("void", {"id": "c1", "reason": "foreign_object"})
    verdict = authority.check("void", request, NOW.timestamp())
    assert verdict.accepted
    assert (verdict.role, verdict.by, verdict.verified) == ("supervisor", "FM-0042", True)
    again = authority.check("void", request, NOW.timestamp() + 1)
    assert not again.accepted
    assert again.reason is not None
    assert "replayed" in again.reason


@pytest.mark.parametrize(
    ("mutate", "reason"),
    [
        (lambda r: r.pop("sig"), "void needs a command signed by role supervisor"),
        (lambda r: r.update(reason="other"), "bad signature for role 'supervisor'"),
        (lambda r: r.update(by="CM-1"), "bad signature"),
        (lambda r: r.update(sig="0" * 64), "bad signature"),
        (lambda r: r.update(sig="xyz"), "sig must be 64 hex digits"),
        (lambda r: r.update(role="boss"), "unknown role 'boss'"),
        (lambda r: r.update(role=3), "role must be a string"),
        (lambda r: r.update(table="T2"), "signed for table 'T2', not 'T1'"),
        (lambda r: r.update(verb="event"), "signed for command 'event', not 'void'"),
        (lambda r: r.update(ts="yesterday"), "ts must be an ISO 8601 time"),
        (lambda r: r.update(ts="2026-11-30T10:00:00"), "ts must be an ISO 8601 time with a zone"),
        (lambda r: r.update(nonce="short"), "nonce must be 8-64 characters"),
        (lambda r: r.update(by=""), "by must be 1-64 printable characters"),
        (lambda r: r.update(by="x\n"), "by must be 1-64 printable characters"),
    ],
)
def test_a_tampered_or_malformed_request_is_refused_with_the_reason(
    mutate: Any, reason: str
) -> None:
    request = _signed("void", {"reason": "foreign_object"})
    mutate(request)
    verdict = _authority().check("void", request, NOW.timestamp())
    assert not verdict.accepted
    assert verdict.reason is not None
    assert reason in verdict.reason


def test_a_dealer_may_key_in_a_card_but_not_void_even_through_cmd_event() -> None:
    authority = _authority()
    card = _signed(
        "event", {"event": {"type": "card", "card": "KH"}}, role="dealer", key=DEALER_KEY
    )
    assert authority.check("event", card, NOW.timestamp()).accepted
    void = _signed("void", {"reason": "x"}, role="dealer", key=DEALER_KEY)
    verdict = authority.check("void", void, NOW.timestamp())
    assert not verdict.accepted
    assert verdict.reason == "role 'dealer' may not void (needs supervisor)"
    assert verdict.verified  # who tried is known for sure: journaled as such
    # The same decision entered as a normalized event needs the same role.
    for kind, action in (
        ("void", "void"),
        ("fault_cleared", "clear_fault"),
        ("confirm", "confirm"),
    ):
        sneaky = _signed("event", {"event": {"type": kind}}, role="dealer", key=DEALER_KEY)
        refused = authority.check("event", sneaky, NOW.timestamp())
        assert refused.reason == f"role 'dealer' may not {action} (needs supervisor)"


def test_status_needs_no_role_and_unknown_actions_are_refused() -> None:
    authority = _authority()
    assert authority.check("status", {}, NOW.timestamp()).accepted
    verdict = authority.check("open_table", _signed("open_table"), NOW.timestamp())
    assert verdict.reason == "no role may send 'open_table' ([security] require)"


@pytest.mark.parametrize("skew", [-31.0, 31.0, 3600.0])
def test_a_stale_or_future_command_is_refused(skew: float) -> None:
    request = _signed("void", {"reason": "x"})
    verdict = _authority(max_age=30).check("void", request, NOW.timestamp() + skew)
    assert not verdict.accepted
    assert verdict.reason is not None
    assert verdict.reason.startswith("stale command")


def test_nonces_are_bounded_and_expire() -> None:
    authority = _authority(max_age=10, max_nonces=3)
    start = NOW.timestamp()
    for i in range(3):
        request = _signed("void", {"reason": "x"}, nonce=f"nonce-{i:04d}")
        assert authority.check("void", request, start).accepted
    full = authority.check("void", _signed("void", {"reason": "x"}), start)
    assert full.reason == "too many signed commands in the window: retry later"
    # Once the window has passed, the old nonces are forgotten (their ts is stale anyway).
    later = NOW + timedelta(seconds=11)
    assert authority.check("void", _signed("void", {"reason": "x"}, at=later), start + 11).accepted
    assert len(authority._nonces) == 1


def test_seeding_from_the_journal_keeps_recent_nonces_spent() -> None:
    authority = _authority(max_age=30)
    request = _signed("void", {"reason": "x"}, nonce="n-before-crash")
    record = {"type": "command", "ts": TS, "accepted": True, "nonce": "n-before-crash"}
    old = {"type": "command", "ts": "2026-11-30T09:00:00Z", "accepted": True, "nonce": "old-one"}
    card = {"type": "card", "ts": TS, "card": "KH"}
    authority.seed(
        [journaled(r, seq=n) for n, r in enumerate([record, old, card], 1)], NOW.timestamp() + 1
    )
    assert authority.seeded
    verdict = authority.check("void", request, NOW.timestamp() + 1)
    assert verdict.reason == "replayed command: nonce already used"
    assert "old-one" not in authority._nonces


def test_sign_command_refuses_to_overwrite_signed_fields() -> None:
    with pytest.raises(ValueError, match="must not set role, sig"):
        sign_command({"role": "x", "sig": "y"}, verb="void", table="T", role="r", key=b"k", by="b")


def test_action_for() -> None:
    assert action_for("status", {}) is None
    assert action_for("void", {}) == "void"
    assert action_for("event", {"event": {"type": "card"}}) == "event"
    assert action_for("event", {"event": {"type": "fault_cleared"}}) == "clear_fault"
    assert action_for("event", {"event": "nope"}) == "event"
    assert action_for("event", {"event": {"type": ["void"]}}) == "event"


# --- secret files and config ----------------------------------------------------------------


def test_key_and_password_files_are_read_and_errors_name_them(tmp_path: Path) -> None:
    key = tmp_path / "supervisor.key"
    key.write_text("  " + "a" * 64 + "\n")
    key.chmod(0o600)  # others may not read a secret file (tests/controller/test_config_errors)
    assert read_key_file(key, "supervisor") == b"a" * 64
    key.write_text("short\n")
    with pytest.raises(ConfigError, match=r"security.roles.supervisor .*supervisor.key.*5 bytes"):
        read_key_file(key, "supervisor")
    with pytest.raises(ConfigError, match=r"security.roles.dealer .*missing.key: cannot read"):
        read_key_file(tmp_path / "missing.key", "dealer")
    password = tmp_path / "mqtt.password"
    password.write_text("s3cret pass\nignored\n")
    password.chmod(0o400)
    assert read_password_file(password) == "s3cret pass"
    password.chmod(0o600)
    password.write_text("\n")
    with pytest.raises(ConfigError, match=r"mqtt.password_file .*: empty first line"):
        read_password_file(password)
    with pytest.raises(ConfigError, match=r"mqtt.password_file .*nope: cannot read"):
        client_security(MqttConfig(url="mqtt://h:1", username="u", password_file=tmp_path / "nope"))


def test_authority_from_config_reads_every_role_key(tmp_path: Path) -> None:
    (tmp_path / "sup.key").write_text("k" * 32)
    (tmp_path / "sup.key").chmod(0o600)
    section = {"roles": {"supervisor": str(tmp_path / "sup.key")}, "max_age": 5}
    config = _config(security=section)
    assert config.security is not None
    authority = CommandAuthority.from_config(config.security, "T1")
    assert authority.describe()[0] == "command clear_fault: signed by supervisor"
    broken = _config(security={"roles": {"supervisor": str(tmp_path / "gone.key")}})
    assert broken.security is not None
    with pytest.raises(ConfigError, match=r"gone\.key"):
        CommandAuthority.from_config(broken.security, "T1")


def _config(**sections: Any) -> Any:
    base: dict[str, Any] = {"table": {"id": "T1", "game": "roulette"}, "journal": {"path": "j"}}
    return parse_config({**base, **sections}, "t.toml")


@pytest.mark.parametrize(
    ("section", "error"),
    [
        ({"roles": {"dealer": "/k"}}, "require.void defaults to role 'supervisor'"),
        ({"roles": {"supervisor": "/k"}, "require": {"viod": "x"}}, "unknown action(s) 'viod'"),
        ({"roles": {"supervisor": "/k"}, "require": {"void": "boss"}}, "names role(s) 'boss'"),
        ({"roles": {"supervisor": "/k"}, "require": {"void": []}}, "name at least one role"),
        ({"roles": {"Super": "/k"}}, "role name 'Super'"),
        ({"roles": {"supervisor": "/k"}, "secret": "x"}, "unknown key 'security.secret'"),
    ],
)
def test_security_section_errors_name_the_key(section: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError, match=r"t\.toml") as info:
        _config(security=section)
    assert error in str(info.value)


@pytest.mark.parametrize(
    ("mqtt", "error"),
    [
        ({"url": "mqtt://h", "ca_file": "/ca.pem"}, "ca_file needs an mqtts:// url"),
        ({"url": "mqtts://h", "key_file": "/k"}, "key_file needs cert_file"),
        ({"password_file": "/p"}, "password_file needs username"),
        ({"password": "hunter2"}, "unknown key 'mqtt.password'"),
    ],
)
def test_mqtt_security_keys_are_checked(mqtt: dict[str, Any], error: str) -> None:
    with pytest.raises(ConfigError) as info:
        _config(mqtt=mqtt)
    assert error in str(info.value)


def test_roles_default_to_what_is_configured() -> None:
    config = _config(security={"roles": {"supervisor": "/s"}})
    assert config.security.required["event"] == frozenset({"supervisor"})
    config = _config(security={"roles": {"supervisor": "/s", "dealer": "/d"}})
    assert config.security.required["event"] == frozenset({"supervisor", "dealer"})
    assert config.security.required["void"] == frozenset({"supervisor"})


# --- TLS settings -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if find_openssl() is None:
        pytest.skip("openssl CLI not found")
    return make_pki(tmp_path_factory.mktemp("pki"), clients=("T1",))


def test_tls_context_verifies_the_broker_with_the_given_ca(pki: Pki) -> None:
    cert, key = pki.clients["T1"]
    security = client_security(
        MqttConfig(url="mqtts://127.0.0.1", ca_file=pki.ca, cert_file=cert, key_file=key)
    )
    context = security.tls_context
    assert context is not None
    assert context.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.minimum_version >= ssl.TLSVersion.TLSv1_2
    assert client_security(MqttConfig(url="mqtt://127.0.0.1")).tls_context is None


def test_unusable_tls_files_are_config_errors_naming_them(pki: Pki, tmp_path: Path) -> None:
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    with pytest.raises(ConfigError, match=r"mqtt.ca_file .*junk.pem: not a PEM CA"):
        client_security(MqttConfig(url="mqtts://h", ca_file=junk))
    with pytest.raises(ConfigError, match=r"mqtt.ca_file .*absent.pem: cannot read"):
        client_security(MqttConfig(url="mqtts://h", ca_file=tmp_path / "absent.pem"))
    cert, _key = pki.clients["T1"]
    with pytest.raises(ConfigError, match=r"mqtt.cert_file .*T1.pem / key_file .*broker.key"):
        client_security(
            MqttConfig(url="mqtts://h", ca_file=pki.ca, cert_file=cert, key_file=pki.server_key)
        )


def test_connect_failure_hints() -> None:
    assert "credentials" in (connect_failure_hint("[code:135] Not authorized") or "")
    assert "credentials" in (connect_failure_hint("[code:134] Bad user name or password") or "")
    tls = "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: self-signed certificate"
    assert "ca_file" in (connect_failure_hint(tls) or "")
    assert connect_failure_hint("[Errno 111] Connection refused") is None


# --- the runner: every command and its verdict is journaled ------------------------------------


@pytest.fixture
async def table(tmp_path: Path) -> AsyncIterator[TableRunner]:
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


def _commands(runner: TableRunner) -> list[dict[str, Any]]:
    return [r for r in runner.journal.records() if r["type"] == "command"]


async def test_void_without_the_role_is_refused_and_journaled_with_it_the_round_is_voided(
    table: TableRunner,
) -> None:
    table.committer.handle(RoundOpen(ts=TS, device="wheel"))
    unsigned = {"id": "c1", "reason": "foreign_object", "by": "someone"}
    reply = await table.commands.command("void", json.dumps(unsigned).encode())
    assert reply == {
        "schema": 1,
        "id": "c1",
        "ok": False,
        "error": "refused: void needs a command signed by role supervisor",
        "code": "unauthorised",
    }
    dealer = _signed(
        "void", {"id": "c2", "reason": "x", "round": "T1-000001"}, role="dealer", key=DEALER_KEY
    )
    reply = await table.commands.command("void", json.dumps(dealer).encode())
    assert reply["error"] == "refused: role 'dealer' may not void (needs supervisor)"
    assert table.engine.current_round is not None  # still in play

    signed = _signed("void", {"id": "c3", "reason": "foreign_object", "round": "T1-000001"})
    reply = await table.commands.command("void", json.dumps(signed).encode())
    assert reply["ok"] is True, reply
    assert [(o["status"], o["reason"]) for o in reply["outputs"]] == [("void", "foreign_object")]

    # Only the accepted command has a record of its own; the refusals are counted and journaled once
    # per window, with the first offender (tablectl.controller.mqtt.refusals).
    table.refusals.flush(force=True)
    records = list(table.journal.records())
    commands = _commands(table)
    assert [(c["id"], c["accepted"], c["role"], c["by"], c["verified"]) for c in commands] == [
        ("c3", True, "supervisor", "FM-0042", True),
    ]
    assert commands[0]["reason"] is None
    [refused] = [r for r in records if r["type"] == "commands_refused"]
    assert refused["count"] == 2
    first = refused["codes"]["unauthorised"]
    assert first["count"] == 2
    assert (first["first"]["id"], first["first"]["by"], first["first"]["verified"]) == (
        "c1",
        "someone",
        False,
    )
    assert first["first"]["reason"] == "void needs a command signed by role supervisor"
    # The accepted verdict precedes the void it allowed; the void names the verified sender.
    void = next(r for r in records if r["type"] == "void")
    assert commands[0]["seq"] == reply["command_seq"] < void["seq"] == reply["seq"]
    assert (void["by"], void["manual"]) == ("FM-0042", True)
    # Never the secret or the signature.
    journal_text = json.dumps([r.as_dict() for r in records])
    assert signed["sig"] not in journal_text
    assert SUPERVISOR_KEY.decode() not in journal_text
    # Replaying the accepted command does nothing but count a refusal.
    reply = await table.commands.command("void", json.dumps(signed).encode())
    assert reply["error"] == "refused: replayed command: nonce already used"
    assert table.journal.verify() == len(records)
    assert table.refusals.log.pending == 1


async def test_clear_fault_and_manual_events_need_their_roles(table: TableRunner) -> None:
    table.committer.handle(Fault(ts=TS, device="wheel", code="ss2_fault_5"))
    request = _signed(
        "clear_fault", {"device": "wheel", "code": "ss2_fault_5"}, role="dealer", key=DEALER_KEY
    )
    reply = await table.commands.command("clear_fault", json.dumps(request).encode())
    assert reply["error"] == "refused: role 'dealer' may not clear_fault (needs supervisor)"
    assert table.latches.journaled["wheel"] == {"ss2_fault_5"}
    request = _signed("clear_fault", {"device": "wheel", "code": "ss2_fault_5"})
    assert (await table.commands.command("clear_fault", json.dumps(request).encode()))["ok"] is True
    assert table.latches.journaled["wheel"] == set()

    table.committer.handle(RoundOpen(ts=TS, device="wheel"))
    table.committer.handle(BallLaunched(ts=TS, device="wheel", rotor_direction="cw"))
    body = {"event": {"type": "bets_closed"}}
    request = _signed("event", body, role="dealer", key=DEALER_KEY)
    reply = await table.commands.command("event", json.dumps(request).encode())
    assert reply["ok"] is True, reply
    assert _commands(table)[-1]["event_type"] == "bets_closed"


async def test_a_refused_valid_signature_with_a_bad_body_spends_its_nonce_and_says_why(
    table: TableRunner,
) -> None:
    request = _signed("clear_fault", {"device": "wheel", "code": "not_latched"})
    reply = await table.commands.command("clear_fault", json.dumps(request).encode())
    assert "fault 'not_latched' is not latched" in reply["error"]
    assert _commands(table) == []
    table.refusals.flush(force=True)
    [refused] = [r for r in table.journal.records() if r["type"] == "commands_refused"]
    first = refused["codes"]["bad_request"]["first"]
    assert (first["role"], first["verified"], first["nonce"]) == (
        "supervisor",
        True,
        request["nonce"],
    )
    again = await table.commands.command("clear_fault", json.dumps(request).encode())
    assert again["error"] == "refused: replayed command: nonce already used"


async def test_after_a_restart_a_command_accepted_before_it_cannot_be_replayed(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    signed = _signed("void", {"id": "c1", "reason": "x", "round": "T1-000001"})
    for attempt in range(2):
        with Journal(path, "T1") as journal:
            runner = TableRunner(
                table_id="T1",
                engine=build_engine("T1", "roulette", {}, source="test"),
                journal=journal,
                clock=WallClock(lambda: NOW.timestamp() + 5),
                authority=_authority(),
            )
            runner.restart.recover()
            if attempt == 0:
                runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
            task = asyncio.create_task(runner.run())
            try:
                reply = await runner.commands.command("void", json.dumps(signed).encode())
            finally:
                task.cancel()
        if attempt == 0:
            assert reply["ok"] is True, reply
        else:
            assert reply["error"] == "refused: replayed command: nonce already used"


async def test_without_security_round_and_fault_commands_are_refused(tmp_path: Path) -> None:
    """Safe by default (contracts §7): no [security] roles, no insecure_commands → refused."""
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(NOW.timestamp),
        )
        task = asyncio.create_task(runner.run())
        try:
            runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
            runner.committer.handle(Fault(ts=TS, device="wheel", code="ss2_fault_5"))
            requests = [
                ("void", {"id": 1, "reason": "foreign_object"}),
                ("event", {"id": 2, "event": {"type": "winning_number", "number": 17}}),
                ("event", {"id": 3, "event": {"type": "fault", "code": "x", "device": "wheel"}}),
                ("clear_fault", {"id": 4, "device": "wheel", "code": "ss2_fault_5"}),
                ("event", {"id": 5, "event": {"type": "fault_cleared", "code": "ss2_fault_5"}}),
            ]
            before = journal.last_seq
            replies = [
                await runner.commands.command(v, json.dumps(p).encode()) for v, p in requests
            ]
            status = await runner.commands.command("status", b"")
        finally:
            task.cancel()
        assert [(r["ok"], r["code"]) for r in replies] == [(False, "commands_disabled")] * 5
        assert status["ok"] is True  # a read stays open
        assert journal.last_seq == before  # nothing journaled, nothing changed
        assert runner.latches.journaled["wheel"] == {"ss2_fault_5"}


async def test_insecure_commands_run_unverified_and_are_still_journaled(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(NOW.timestamp),
            insecure_commands=True,
        )
        task = asyncio.create_task(runner.run())
        try:
            runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
            payload = {"id": 9, "reason": "foreign_object", "by": "pit", "round": "T1-000001"}
            reply = await runner.commands.command("void", json.dumps(payload).encode())
            status = await runner.commands.command("status", b"")
        finally:
            task.cancel()
        assert reply["ok"] is True
        assert status["ok"] is True
        [command] = [r for r in journal.records() if r["type"] == "command"]
        assert (command["verb"], command["by"], command["verified"]) == ("void", "pit", False)


# --- composition helpers -----------------------------------------------------------------------


def test_authority_for_and_describe_security(tmp_path: Path, pki: Pki) -> None:
    open_table = _config(mqtt={"url": "mqtt://127.0.0.1:1883"})
    assert authority_for(open_table) is None
    assert describe_security(open_table) == [
        "mqtt: no TLS (mqtt://): use mqtts:// beyond the loopback interface",
        "commands: disabled (no [security]): void, event, clear_fault are refused "
        "(commands_disabled); configure roles to allow them",
    ]
    lab = _config(mqtt={"url": "mqtt://127.0.0.1:1883"}, security={"insecure_commands": True})
    assert authority_for(lab) is None
    assert describe_security(lab)[-1] == (
        "commands: INSECURE (insecure_commands = true): accepted unauthenticated, "
        "labs and demos only"
    )
    (tmp_path / "sup.key").write_text("k" * 32)
    (tmp_path / "mqtt.password").write_text("pw\n")
    (tmp_path / "sup.key").chmod(0o600)
    (tmp_path / "mqtt.password").chmod(0o600)
    secured = _config(
        mqtt={
            "url": "mqtts://127.0.0.1:8883",
            "ca_file": str(pki.ca),
            "username": "T1",
            "password_file": str(tmp_path / "mqtt.password"),
        },
        security={"roles": {"supervisor": str(tmp_path / "sup.key")}},
    )
    assert isinstance(authority_for(secured), CommandAuthority)
    lines = describe_security(secured)
    assert lines[0] == f"mqtt: TLS, broker verified against {pki.ca}"
    assert lines[1] == "mqtt: user 'T1' with a password"
    assert "command void: signed by supervisor" in lines
