"""Staff through the table's command desk: a real runner, SQLite journal, roster and role keys.

What the station sends (docs/station.md "Commands name the person"): signed ``cmd/event``
staff_on/staff_off carrying ``person``; the table checks the person against the roster, journals
who, names the dealer on every outcome and publishes the retained ``staff``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.service.runner.views import NoOutputs
from tests.support.clocks import WallClock
from tests.support.events import roulette_spin
from tests.support.staff import make_roster

NOW = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
KEYS = {"dealer": b"d" * 32, "supervisor": b"s" * 32, "technician": b"t" * 32}
REQUIRED = {
    "void": frozenset({"supervisor"}),
    "event": frozenset({"dealer", "supervisor"}),
    "staff": frozenset({"dealer", "supervisor", "technician"}),
}
ROSTER = make_roster()


class Views(NoOutputs):
    def __init__(self) -> None:
        self.staff: list[dict[str, Any]] = []

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        if suffix == "staff":
            self.staff.append(dict(payload))


@pytest.fixture
async def table(tmp_path: Path) -> AsyncIterator[TableRunner]:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {"dealer_required": True}, source="test"),
            journal=journal,
            clock=WallClock(NOW.timestamp),
            authority=CommandAuthority(KEYS, REQUIRED, table="T1"),
            roster=ROSTER,
            outputs=Views(),
        )
        task = asyncio.create_task(runner.run())
        try:
            yield runner
        finally:
            task.cancel()


async def send(
    table: TableRunner, event: dict[str, Any], *, role: str, person: str | None
) -> dict[str, Any]:
    payload: dict[str, Any] = {"event": event}
    if person is not None:
        payload["person"] = person
    request = sign_command(
        payload,
        verb="event",
        table="T1",
        role=role,
        key=KEYS[role],
        by=person or "tech-laptop",
        ts=NOW,
    )
    return await table.commands.command("event", json.dumps(request).encode())


def staff_on(person: str, role: str = "dealer", **more: Any) -> dict[str, Any]:
    return {"type": "staff_on", "person": person, "role": role, "how": "badge", **more}


def records(table: TableRunner, kind: str) -> list[dict[str, Any]]:
    return [r.as_dict() for r in table.journal.records() if r["type"] == kind]


async def test_a_dealer_signs_on_and_the_journal_names_them_and_their_rounds(
    table: TableRunner,
) -> None:
    reply = await send(table, staff_on("D-0142"), role="dealer", person="D-0142")
    assert reply["ok"] is True, reply
    [command] = records(table, "command")
    assert (command["person"], command["role"], command["verified"]) == ("D-0142", "dealer", True)
    assert "by_unverified" not in command
    [on] = records(table, "staff_on")
    assert (on["person"], on["name"], on["how"]) == (
        "D-0142",
        "Ana Ruiz",
        "badge",
    )  # name: roster's
    for event in roulette_spin(17):
        table.committer.handle(event)
    [outcome] = records(table, "outcome")
    assert outcome["dealer"] == "D-0142"
    views = table.views._outputs
    assert isinstance(views, Views)
    assert views.staff[-1]["dealer"]["person"] == "D-0142"
    assert views.staff[-1]["table"] == "T1"


async def test_without_a_dealer_no_round_opens(table: TableRunner) -> None:
    for event in roulette_spin(17):
        table.committer.handle(event)
    assert records(table, "outcome") == []
    assert "no_dealer" in [v["code"] for v in records(table, "verdict")]


@pytest.mark.parametrize(
    ("event", "role", "person", "code"),
    [
        (staff_on("D-0177"), "dealer", "D-0142", "unauthorised"),  # someone else
        (staff_on("D-9999"), "dealer", "D-9999", "unknown_person"),
        (staff_on("T-0300", "technician"), "dealer", "T-0300", "not_in_role"),  # wrong key
        (staff_on("D-0142", "supervisor"), "dealer", "D-0142", "not_in_role"),  # not a supervisor
        (staff_on("D-0142", supervisor="S-0007"), "dealer", "D-0142", "unauthorised"),
    ],
)
async def test_a_person_signs_on_only_themself_in_a_role_they_hold(
    table: TableRunner, event: dict[str, Any], role: str, person: str, code: str
) -> None:
    reply = await send(table, event, role=role, person=person)
    assert (reply["ok"], reply["code"]) == (False, code), reply
    assert records(table, "staff_on") == []


async def test_a_supervisor_signs_a_dealer_change_in_a_round_and_is_named(
    table: TableRunner,
) -> None:
    await send(table, staff_on("D-0142"), role="dealer", person="D-0142")
    spin = roulette_spin(5)
    for event in spin[:2]:
        table.committer.handle(event)
    refused = await send(table, staff_on("D-0177"), role="dealer", person="D-0177")
    assert [o["code"] for o in refused["outputs"]] == ["dealer_change_mid_round"]
    reply = await send(table, staff_on("D-0177"), role="supervisor", person="S-0007")
    assert reply["ok"] is True, reply
    changed = records(table, "staff_on")[-1]
    assert (changed["person"], changed["supervisor"], changed["how"]) == (
        "D-0177",
        "S-0007",
        "supervisor",
    )
    for event in spin[2:]:
        table.committer.handle(event)
    assert records(table, "outcome")[-1]["dealer"] == "D-0142"  # who dealt when it opened


async def test_a_command_without_a_person_is_journaled_as_unverified(table: TableRunner) -> None:
    reply = await send(table, staff_on("T-0300", "technician"), role="technician", person=None)
    assert reply["ok"] is True, reply
    [command] = records(table, "command")
    assert command["by_unverified"] is True
    assert "person" not in command
