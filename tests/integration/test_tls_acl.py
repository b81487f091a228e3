"""The table against a Mosquitto with TLS, passwords, client certificates and the example ACL.

The broker runs the shipped ``config/mosquitto-tls.example.conf`` and
``config/mosquitto-acl.example`` (paths and ports substituted; see tests/support/tls.py), with
certificates the fixture makes with ``openssl``. Checked: the table connects and publishes with
a password or a client certificate; a wrong CA or password is logged clearly and retried without
crashing; the ACL keeps displays read-only and dealers on their own table; and a ``void`` needs
a supervisor's signature end to end (issue 5 "Done when").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import ssl
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

import tablectl.controller.mqtt.publisher as publisher_module
from tablectl.controller.config import MqttConfig
from tablectl.controller.core.events import RoundOpen
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.publisher import Publisher
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools import commander
from tablectl.drivers.clock import SYSTEM_CLOCK
from tests.support.mqtt import Subscriber
from tests.support.tls import Pki, TlsMosquitto, pki_or_skip, tls_mosquitto

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

TABLE = "BAC-01"
TOPICS = Topics("tablectl", TABLE)
TS = "2026-11-30T10:00:00.000000Z"
USERS = {
    TABLE: "table-pw",
    "dealer-BAC-01": "dealer-pw",
    "dealer-RL-01": "other-dealer-pw",
    "display": "display-pw",
    "pit-1": "pit-pw",
}
SUPERVISOR_KEY = b"supervisor-key-" + b"0" * 17
DISPLAY_FILTERS = [f"tablectl/+/{leaf}" for leaf in ("status", "events", "outcome", "alarms")]


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return pki_or_skip(tmp_path_factory.mktemp("pki"), TABLE)


@pytest.fixture
def broker(tmp_path: Path, pki: Pki) -> Iterator[TlsMosquitto]:
    with tls_mosquitto(tmp_path / "broker", pki, USERS) as process:
        yield process


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "j.sqlite", TABLE) as opened:
        yield opened


def _login(pki: Pki, user: str) -> dict[str, Any]:
    """``aiomqtt.Client`` keywords for a password user of the test broker."""
    return {
        "tls_context": ssl.create_default_context(cafile=str(pki.ca)),
        "username": user,
        "password": USERS[user],
    }


def _password_file(tmp_path: Path, user: str, password: str | None = None) -> Path:
    path = tmp_path / f"{user}.password"
    path.write_text((password or USERS[user]) + "\n", encoding="utf-8")
    path.chmod(0o400)
    return path


def _table_config(broker: TlsMosquitto, pki: Pki, tmp_path: Path, **extra: Any) -> MqttConfig:
    fields: dict[str, Any] = {
        "url": broker.url,
        "topic_prefix": "tablectl",
        "ca_file": pki.ca,
        "username": TABLE,
        "password_file": _password_file(tmp_path, TABLE),
        "reconnect_max_delay": 0.2,
        **extra,
    }
    return MqttConfig.model_validate({k: v for k, v in fields.items() if v is not None})


async def test_a_table_publishes_over_tls_with_a_password(
    broker: TlsMosquitto, pki: Pki, journal: Journal, tmp_path: Path
) -> None:
    journal.append([{"type": "round_open", "ts": TS}])
    config = _table_config(broker, pki, tmp_path)
    async with (
        Subscriber(broker.host, broker.port, DISPLAY_FILTERS, options=_login(pki, "display")) as d,
        Publisher(config, TOPICS, journal, host=broker.host, port=broker.port),
    ):
        event = await d.wait_for(lambda m: m.topic == TOPICS.events, timeout=5)
        assert event.json()["type"] == "round_open"
        status = await d.wait_for(lambda m: m.topic == TOPICS.status, timeout=5)
        assert status.json()["state"] == "online"


async def test_a_table_publishes_with_a_client_certificate(
    broker: TlsMosquitto, pki: Pki, journal: Journal
) -> None:
    journal.append([{"type": "round_open", "ts": TS}])
    cert, key = pki.clients[TABLE]
    config = MqttConfig(url=broker.cert_url, ca_file=pki.ca, cert_file=cert, key_file=key)
    async with (
        Subscriber(broker.host, broker.port, DISPLAY_FILTERS, options=_login(pki, "display")) as d,
        Publisher(config, TOPICS, journal, host=broker.host, port=broker.cert_port),
    ):
        event = await d.wait_for(lambda m: m.topic == TOPICS.events, timeout=5)
        assert event.json()["type"] == "round_open"


class _RecordingLog:
    """Stands in for the publisher's structlog logger: keeps ``(level, event, fields)``."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def __getattr__(self, level: str) -> Any:
        def emit(event: str, **fields: Any) -> None:
            self.lines.append((level, event, fields))

        return emit


@pytest.mark.parametrize(
    ("fault", "hint"),
    [("wrong_ca", "TLS handshake failed"), ("wrong_password", "refused our credentials")],
)
async def test_a_wrong_ca_or_password_is_logged_clearly_and_retried(
    broker: TlsMosquitto,
    pki: Pki,
    journal: Journal,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fault: str,
    hint: str,
) -> None:
    recording = _RecordingLog()
    monkeypatch.setattr(publisher_module, "log", recording)
    if fault == "wrong_ca":
        config = _table_config(broker, pki, tmp_path, ca_file=pki.other_ca)
    else:
        wrong = _password_file(tmp_path, "wrong", "not-the-password")
        config = _table_config(broker, pki, tmp_path, password_file=wrong)
    failures: list[str] = []
    retried = asyncio.Event()

    def trace(what: str, details: Any) -> None:
        if what == "disconnected":
            failures.append(details["error"])
            if len(failures) >= 3:
                retried.set()

    publisher = Publisher(config, TOPICS, journal, host=broker.host, port=broker.port, trace=trace)
    async with publisher:
        await asyncio.wait_for(retried.wait(), 5)
        assert not publisher.connected
    refused = [line for line in recording.lines if line[1] == "mqtt connect refused"]
    # One clear line (not one per retry), naming what to check; the retries went on.
    assert len(refused) == 1, recording.lines
    level, _, fields = refused[0]
    assert level == "warning"
    assert hint in fields["hint"]
    assert fields["table"] == TABLE


async def test_the_acl_keeps_displays_read_only_and_dealers_on_their_own_table(
    broker: TlsMosquitto, pki: Pki, journal: Journal, tmp_path: Path
) -> None:
    seen: list[Any] = []

    async def on_command(verb: str, payload: bytes) -> dict[str, Any]:
        request = json.loads(payload)
        seen.append(request.get("id"))
        return {"id": request.get("id"), "ok": True}

    config = _table_config(broker, pki, tmp_path)
    async with (
        Publisher(
            config, TOPICS, journal, host=broker.host, port=broker.port, on_command=on_command
        ) as table,
        Subscriber(broker.host, broker.port, DISPLAY_FILTERS, options=_login(pki, "display")) as d,
        Subscriber(
            broker.host, broker.port, TOPICS.reply("void"), options=_login(pki, "dealer-BAC-01")
        ) as dealer,
    ):
        await asyncio.wait_for(table.wait_connected(), 5)
        for user in ("display", "dealer-RL-01"):
            async with aiomqtt.Client(broker.host, broker.port, **_login(pki, user)) as intruder:
                await intruder.publish(TOPICS.command("void"), json.dumps({"id": user}), qos=1)
        # A dealer may not forge a reply (cmd/+ is writable, cmd/+/reply is not) ...
        await dealer._client.publish(TOPICS.reply("void"), b'{"id": "forged"}', qos=1)
        # ... and may command its own table, which answers.
        await dealer._client.publish(TOPICS.command("void"), b'{"id": "dealer"}', qos=1)
        reply = await dealer.wait_for(lambda m: True, timeout=5)
        assert reply.json()["id"] == "dealer"
        # A table may publish only under its own prefix.
        async with aiomqtt.Client(broker.host, broker.port, **_login(pki, TABLE)) as rogue:
            await rogue.publish("tablectl/RL-01/outcome", b'{"forged": true}', qos=1)
            await rogue.publish(TOPICS.events, b'{"marker": true}', qos=1)
        await d.wait_for(lambda m: m.topic == TOPICS.events and b"marker" in m.payload)
    assert seen == ["dealer"]
    assert [m.json()["id"] for m in dealer.messages] == ["dealer"]
    assert not [m for m in d.messages if m.topic.startswith("tablectl/RL-01/")]


@pytest.fixture
async def secured_table(
    broker: TlsMosquitto, pki: Pki, journal: Journal, tmp_path: Path
) -> AsyncIterator[TableRunner]:
    runner = TableRunner(
        table_id=TABLE,
        engine=build_engine(TABLE, "roulette", {}, source="test"),
        journal=journal,
        clock=SYSTEM_CLOCK,
        authority=CommandAuthority(
            {"supervisor": SUPERVISOR_KEY},
            {
                "void": frozenset({"supervisor"}),
                "event": frozenset({"supervisor"}),
                "clear_fault": frozenset({"supervisor"}),
                "confirm": frozenset({"supervisor"}),
            },
            table=TABLE,
        ),
    )
    config = _table_config(broker, pki, tmp_path)
    publisher = Publisher(
        config,
        TOPICS,
        journal,
        host=broker.host,
        port=broker.port,
        on_command=runner.commands.command,
    )
    async with publisher:
        task = asyncio.create_task(runner.run())
        try:
            await asyncio.wait_for(publisher.wait_connected(), 5)
            yield runner
        finally:
            task.cancel()


async def test_a_void_needs_a_supervisor_signature_end_to_end(
    secured_table: TableRunner, broker: TlsMosquitto, pki: Pki, tmp_path: Path
) -> None:
    secured_table.committer.handle(RoundOpen(device="wheel"))
    pit = MqttConfig(
        url=broker.url,
        ca_file=pki.ca,
        username="pit-1",
        password_file=_password_file(tmp_path, "pit-1"),
    )
    unsigned = {"id": "u1", "reason": "foreign_object", "by": "FM-0042"}
    reply = await commander.send_command(pit, TOPICS, "void", unsigned, wait=5)
    assert reply is not None
    assert reply["ok"] is False
    assert reply["error"] == "refused: void needs a command signed by role supervisor"
    assert secured_table.engine.current_round is not None

    signed = sign_command(
        {"id": "s1", "reason": "foreign_object", "round": secured_table.engine.current_round},
        verb="void",
        table=TABLE,
        role="supervisor",
        key=SUPERVISOR_KEY,
        by="FM-0042",
    )
    reply = await commander.send_command(pit, TOPICS, "void", signed, wait=5)
    assert reply is not None
    assert reply["ok"] is True, reply
    assert [(o["status"], o["reason"]) for o in reply["outputs"]] == [("void", "foreign_object")]
    verdicts = [
        (r["id"], r["accepted"], r["by"])
        for r in secured_table.journal.records()
        if r["type"] == "command"
    ]
    assert verdicts == [("s1", True, "FM-0042")]
    # The refusal is counted and journaled with its window (one record however many came).
    secured_table.refusals.flush(force=True)
    [refused] = [r for r in secured_table.journal.records() if r["type"] == "commands_refused"]
    first = refused["codes"]["unauthorised"]["first"]
    assert (first["id"], first["verified"], first["by"]) == ("u1", False, "FM-0042")


async def test_tablectl_cmd_signs_publishes_and_prints_the_reply(
    secured_table: TableRunner,
    broker: TlsMosquitto,
    pki: Pki,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    secured_table.committer.handle(RoundOpen(device="wheel"))
    key_file = tmp_path / "supervisor.key"
    key_file.write_bytes(SUPERVISOR_KEY + b"\n")
    key_file.chmod(0o400)
    parser = argparse.ArgumentParser()
    commander.add_arguments(parser)
    void = json.dumps({"reason": "ball_out", "round": secured_table.engine.current_round})
    argv = ["void", void, "--url", broker.url, "--table", TABLE]
    argv += ["--ca-file", str(pki.ca), "--username", "pit-1"]
    argv += ["--password-file", str(_password_file(tmp_path, "pit-1"))]
    argv += ["--role", "supervisor", "--key-file", str(key_file), "--by", "FM-0042"]
    args = parser.parse_args(argv)
    # run() owns its event loop (asyncio.run), as under the real CLI: give it a thread.
    assert await asyncio.to_thread(commander.run, args) == 0
    out = capsys.readouterr().out
    reply = json.loads(out[out.index("{\n") :])  # unconfigured structlog also prints to stdout
    assert reply["ok"] is True
    assert reply["outputs"][0]["reason"] == "ball_out"
