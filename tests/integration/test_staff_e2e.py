"""Staff on duty end to end, with real parts only (issue 28, docs/station.md).

``tablectl simulate ss2`` on a pty → ``tablectl run`` with a staff roster and role keys → a real
Mosquitto → ``tablectl archive`` into a real PostgreSQL. Dealers sign on with ``tablectl cmd``
(signed, naming the person, as the station does); the test reads the events stream, the retained
``staff`` topic, the journal and the archive.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.journal import Journal
from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.archive import (
    ArchiverProcess,
    archived_outcomes,
    check_archived,
    replayed_outcomes,
    same_outcomes,
    wait_archived,
)
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Received, Subscriber
from tests.support.processes import start_controller, start_simulator, write_config
from tests.support.staff import write_roster

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]

TABLE = "ROU-STAFF"
PREFIX = f"it/{TABLE}"


def _key(path: Path, byte: bytes) -> Path:
    path.write_bytes(byte * 32)
    path.chmod(0o600)
    return path


def _cmd(config: Path, role: str, key: Path, person: str, event: dict[str, Any]) -> dict[str, Any]:
    payload = json.dumps({"person": person, "event": event})
    args = ["cmd", "event", payload, "--config", str(config), "--role", role]
    args += ["--key-file", str(key), "--by", person]
    command = [sys.executable, "-m", "tablectl", *args]
    done = subprocess.run(command, check=False, capture_output=True, text=True, timeout=30)
    reply: dict[str, Any] = json.loads(done.stdout)
    return reply


def _outcomes(messages: list[Received]) -> list[dict[str, Any]]:
    seen = {
        m.json()["seq"]: m.json()
        for m in messages
        if m.topic == f"{PREFIX}/events" and m.json().get("type") == "outcome"
    }
    return [seen[s] for s in sorted(seen)]


def _dealt_by(person: str) -> Any:
    return lambda messages: any(o.get("dealer") == person for o in _outcomes(messages))


async def test_dealers_on_duty_travel_from_the_command_to_the_archive(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    keys = tmp_path / "keys"
    keys.mkdir()
    dealer_key = _key(keys / "dealer.key", b"d")
    supervisor_key = _key(keys / "supervisor.key", b"s")
    archive_key = _key(keys / "archive.key", b"a")  # the archive asks for what it missed
    roster = write_roster(tmp_path / "roster.toml")
    link = tmp_path / "wheel"
    journal = tmp_path / "journal.sqlite"
    config = write_config(
        tmp_path / "table.toml",
        table=TABLE,
        port=str(link),
        mqtt_url=mosquitto.url,
        journal=journal,
        rules="min_revolutions = 4",
        device=f"operating_mode = {DEFAULT_MODE}",
        security=f'roles = {{ dealer = "{dealer_key}", supervisor = "{supervisor_key}", '
        f'archive = "{archive_key}" }}',
        sections=f'[staff]\nroster = "{roster}"\n',
    )
    archiver = ArchiverProcess(
        tmp_path, mosquitto.url, postgres_dsn, extra=["--resend-key", str(archive_key)]
    )
    sim_args = ["--pty", "--link", str(link), "--speed", "25", "--seed", "5", "--wait-for-host"]
    archiver.start()
    try:
        async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
            with start_simulator(sim_args, tmp_path), start_controller(config, tmp_path):
                # No dealer: the wheel spins, no round opens (no_dealer), nothing settles.
                await sub.wait_for(
                    lambda m: m.topic == f"{PREFIX}/events" and m.json().get("code") == "no_dealer",
                    timeout=30,
                )
                assert _outcomes(sub.messages) == []
                on = {"type": "staff_on", "person": "D-0142", "role": "dealer", "how": "badge"}
                reply = _cmd(config, "dealer", dealer_key, "D-0142", on)
                assert reply["ok"] is True, reply
                await sub.wait_until(_dealt_by("D-0142"), timeout=30)
                # A supervisor changes the dealer, whenever it comes (a round may be in play).
                change = {**on, "person": "D-0177", "supervisor": "S-0007"}
                reply = _cmd(config, "supervisor", supervisor_key, "S-0007", change)
                assert reply["ok"] is True, reply
                await sub.wait_until(_dealt_by("D-0177"), timeout=30)
        # The table has stopped (its power_off journaled): the archive takes all of it.
        await wait_archived(postgres_dsn, {TABLE: journal}, 30, archivers=[archiver])
    finally:
        archiver.kill()
    staff = sub.payloads(f"{PREFIX}/staff")
    assert staff[0]["dealer"]["person"] == "D-0142"
    assert staff[-1]["dealer"] == {
        "person": "D-0177",
        "name": "Ben Okafor",
        "since": staff[-1]["dealer"]["since"],
    }
    # The journal names who: the commands' persons and the events' names from the roster.
    with Journal(journal, TABLE) as read:
        records = [r.as_dict() for r in read.records()]
    commands = [r for r in records if r["type"] == "command"]
    assert [(c["person"], c["role"]) for c in commands] == [
        ("D-0142", "dealer"),
        ("S-0007", "supervisor"),
    ]
    ons = [r for r in records if r["type"] == "staff_on"]
    assert [(r["person"], r["name"], r.get("supervisor")) for r in ons] == [
        ("D-0142", "Ana Ruiz", None),
        ("D-0177", "Ben Okafor", "S-0007"),
    ]
    # Every outcome is the dealer of its round: D-0142's before the change, D-0177's after.
    dealers = [o["dealer"] for o in _outcomes(sub.messages)]
    assert dealers == sorted(dealers, key=lambda d: d == "D-0177")
    # The archive holds every record byte for byte, and a replay of its export agrees, dealers
    # included (the engine keeps who is on duty).
    check_archived(postgres_dsn, TABLE, journal)
    archived = archived_outcomes(postgres_dsn, TABLE)
    replayed = replayed_outcomes(postgres_dsn, TABLE, config, tmp_path)
    assert same_outcomes(archived, replayed)
    assert [o.get("dealer") for o in archived] == [o.get("dealer") for o in replayed]
