"""The command handler on anything ``cmd/+`` can carry: an error reply, journaled, never a raise.

Driven through :meth:`Publisher._run_command`, the exact path from MQTT payload bytes to reply
bytes, with the runner as its handler (no broker needed), for a table without ``[security]``
and one with it. Each reply must be one canonical JSON object with ``ok`` and, when refused, a
one-line ``error`` that is not the handler's last-resort "internal error"; each command but
``status`` leaves one ``command`` record (its verdict) in a journal whose chain still verifies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.config import MqttConfig
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.publisher import Publisher
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.service.runner import MAX_COMMAND_BYTES, TableRunner
from tests.fuzz.common import fuzz, json_values
from tests.support.clocks import WallClock

NOW = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
KEY = b"k" * 32
VERBS = ["void", "event", "clear_fault", "status"]


class LiveTable:
    """A runner (engine, journal, run loop) and a publisher's command path on a private loop."""

    def __init__(self, directory: Path, *, secured: bool) -> None:
        self.loop = asyncio.new_event_loop()
        self.journal = Journal(directory / f"fuzz-{secured}.sqlite", "T1")
        roles = frozenset({"supervisor"})
        authority = (
            CommandAuthority(
                {"supervisor": KEY},
                dict.fromkeys(("void", "event", "clear_fault", "confirm"), roles),
                table="T1",
                max_nonces=1_000_000,
            )
            if secured
            else None
        )
        self.runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="fuzz"),
            journal=self.journal,
            clock=WallClock(NOW.timestamp),
            authority=authority,
            insecure_commands=not secured,
        )
        self.publisher = Publisher(
            MqttConfig(),
            Topics("fuzz", "T1"),
            self.journal,
            host="127.0.0.1",
            port=1,
            on_command=self.runner.commands.command,
        )
        self.task = self.loop.create_task(self.runner.run())

    def send(self, verb: str, payload: bytes) -> bytes:
        return self.loop.run_until_complete(self.publisher._run_command(verb, payload))

    def close(self) -> None:
        self.task.cancel()
        self.loop.run_until_complete(asyncio.gather(self.task, return_exceptions=True))
        self.loop.close()
        self.journal.close()


@pytest.fixture(scope="module", params=[False, True], ids=["open", "secured"])
def table(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[LiveTable]:
    live = LiveTable(tmp_path_factory.mktemp("fuzz-commands"), secured=request.param)
    try:
        yield live
    finally:
        live.close()


def _check(table: LiveTable, verb: str, payload: bytes) -> dict[str, Any]:
    before = table.journal.last_seq
    raw = table.send(verb, payload)
    reply = json.loads(raw.decode("utf-8"))
    assert isinstance(reply, dict)
    assert reply["schema"] == 1
    assert isinstance(reply["ok"], bool)
    if not reply["ok"]:
        assert isinstance(reply["error"], str)
        assert reply["error"]
        assert "\n" not in reply["error"]
        assert not reply["error"].startswith("internal error"), reply
        assert isinstance(reply.get("code"), str), reply  # a stable code for every refusal
    new = list(table.journal.records(before))
    commands = [r for r in new if r["type"] == "command"]
    # Accepted commands are journaled one by one before they act; refusals are counted and journaled
    # once per window (tablectl.controller.mqtt.refusals), never one record each.
    accepted = reply["ok"] and verb != "status"
    assert len(commands) == (1 if accepted else 0), new
    assert all(c["accepted"] for c in commands)
    assert all("sig" not in r for r in new)
    return reply


@st.composite
def request_like(draw: Any) -> dict[str, Any]:
    """A request with the keys commands use and arbitrary values (wrong types included)."""
    keys = ["id", "reason", "by", "code", "device", "event", "role", "ts", "nonce", "sig"]
    chosen = draw(st.lists(st.sampled_from(keys) | st.text(max_size=5), max_size=6))
    request = {key: draw(json_values) for key in chosen}
    if draw(st.booleans()):
        event = draw(
            st.fixed_dictionaries(
                {
                    "type": st.sampled_from(
                        [
                            "card",
                            "void",
                            "confirm",
                            "fault_cleared",
                            "winning_number",
                            "bets_closed",
                            "round_open",
                        ]
                    )
                },
                optional={"card": json_values, "number": json_values},
            )
        )
        request["event"] = event
    return request


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=True).encode()  # NaN, surrogates: still "JSON" on the wire


@fuzz(150)
@given(
    verb=st.sampled_from(VERBS) | st.text(min_size=1, max_size=70),
    payload=st.one_of(
        st.binary(max_size=200),
        json_values.map(_encode),
        request_like().map(_encode),
    ),
)
def test_any_payload_on_any_verb_gets_a_clear_reply(
    table: LiveTable, verb: str, payload: bytes
) -> None:
    _check(table, verb, payload)


@fuzz(60)
@given(
    verb=st.sampled_from(["void", "event", "clear_fault"]),
    field=st.sampled_from(["role", "by", "table", "verb", "ts", "nonce", "sig", "reason", "id"]),
    value=json_values,
)
def test_a_signed_request_with_any_field_replaced_is_answered(
    table: LiveTable, verb: str, field: str, value: Any
) -> None:
    bodies: dict[str, dict[str, Any]] = {
        "void": {"reason": "x"},
        "event": {"event": {"type": "cut_card"}},
        "clear_fault": {"device": "wheel", "code": "c"},
    }
    body = bodies[verb]
    request = sign_command(
        body, verb=verb, table="T1", role="supervisor", key=KEY, by="FM-1", ts=NOW
    )
    request[field] = value
    _check(table, verb, _encode(request))


@pytest.mark.parametrize(
    "payload",
    [
        b"x" * (1024 * 1024),
        json.dumps({"reason": "r" * (1024 * 1024)}).encode(),
        b"[" * (MAX_COMMAND_BYTES - 1),
        b'{"id": ' + b"[" * 30_000 + b"]" * 30_000 + b"}",
        b'{"id": NaN, "reason": Infinity}',
        b'{"id": "\\ud800", "reason": "\\udfff", "by": "\\ud800"}',
        b'{"id": 1e999}',
        b"\xff\xfe\x00",
        b"",
        b"null",
    ],
    ids=[
        "1MB-garbage",
        "1MB-json",
        "64KB-nesting",
        "deep-id",
        "nan",
        "surrogates",
        "inf",
        "utf16",
        "empty",
        "null",
    ],
)
def test_hostile_payloads(table: LiveTable, payload: bytes) -> None:
    reply = _check(table, "void", payload)
    if len(payload) > MAX_COMMAND_BYTES:
        assert reply["error"].startswith("payload too large")


def test_the_journal_still_verifies_after_the_fuzzing(table: LiveTable) -> None:
    _check(table, "nope", b"{}")
    assert table.journal.verify() == table.journal.last_seq
