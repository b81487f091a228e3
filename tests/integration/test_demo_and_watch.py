"""The README's main command and the technician's ``watch``, run as a user would run them."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.lab.crew import CREW
from tablectl.controller.staff.roster import Roster
from tablectl.controller.tools.watch import Line, format_message
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess, free_port

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)
DEMO = [sys.executable, "-m", "tablectl", "demo"]
WATCH = [sys.executable, "-m", "tablectl", "watch", "--plain"]
OUTCOME = re.compile(r"^\d\d:\d\d:\d\d \S+ #\d+ ")
"""An outcome line: local time, table, round number (tablectl.controller.tools.summary)."""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}


@pytest.mark.slow
def test_demo_shows_settled_spins_and_a_void(tmp_path: Path) -> None:
    result = subprocess.run(
        [*DEMO, "--speed", "20", "--rounds", "4", "--tables", "roulette"],
        capture_output=True,
        text=True,
        timeout=90,
        env=_env(),
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = [line for line in result.stdout.splitlines() if OUTCOME.match(line)]
    assert len(outcomes) == 4, result.stdout[-3000:]
    # The default scenario scripts a misspin on game 3: the view shows its void and reason.
    # Ana Ruiz signed on before the wheel's first game: every outcome names her.
    misspin = " ROU-DEMO #000003 VOID same_direction · dealt by D-0142"
    assert sum(misspin in o for o in outcomes) == 1
    assert sum(line.endswith(" turns) · dealt by D-0142") for line in outcomes) == 3
    assert " ROU-DEMO status online" in result.stdout
    assert " ROU-DEMO dealer Ana Ruiz (D-0142) on duty" in result.stdout
    assert "no_dealer" not in result.stdout + result.stderr
    journal = next((tmp_path / "demo-journals").glob("*/ROU-DEMO.sqlite"))
    records = _records(journal)
    assert [r["type"] for r in records[:3]] == ["power_on", "command", "staff_on"]
    assert (records[1]["person"], records[2]["person"], records[2]["how"]) == ("D-0142",) * 2 + (
        "badge",
    )
    assert {r.get("dealer") for r in records if r["type"] == "outcome"} == {"D-0142"}


@pytest.mark.slow
def test_demo_runs_card_draw_and_wheel_tables_beside_roulette(tmp_path: Path) -> None:
    # --rounds counts per table: the demo ends once every table has shown two outcomes.
    result = subprocess.run(
        [*DEMO, "--speed", "20", "--rounds", "2"],
        capture_output=True,
        text=True,
        timeout=90,
        env=_env(),
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = [line for line in result.stdout.splitlines() if OUTCOME.match(line)]
    baccarat = [line for line in outcomes if " BAC-DEMO #" in line]
    roulette = [line for line in outcomes if " ROU-DEMO #" in line]
    assert baccarat, result.stdout[-3000:]
    assert roulette, result.stdout[-3000:]
    assert all(" P " in line and " / B " in line for line in baccarat if "VOID" not in line)
    assert any(" L7-DEMO #" in line and "(sum " in line for line in outcomes), outcomes
    assert any(" DC-DEMO #" in line for line in outcomes), outcomes
    assert all(len(line) <= 110 and "{" not in line for line in outcomes)
    for table in ("ROU-DEMO", "BAC-DEMO", "L7-DEMO", "DC-DEMO", "ULTIMATE-TEX-DEMO"):
        assert sum(f" {table} #" in line for line in outcomes) >= 2, table
    summary = result.stdout[result.stdout.index("tablectl demo: 5 tables") :].splitlines()
    journals = [line.rsplit("; journal ", 1)[-1] for line in summary[1:6]]
    assert all((tmp_path / journal).is_file() for journal in journals), summary
    # A dealer on duty at every table before its first round, named by every outcome.
    (roster,) = (tmp_path / "demo-journals").glob("*/roster.toml")
    assert roster.stat().st_mode & 0o777 == 0o600
    ana = Roster.load(roster).person("D-0142")  # real scrypt hashes of the documented PINs
    assert ana is not None
    assert ana.pin_matches("4821")
    dealers = {"ROU-DEMO": "D-0142", "BAC-DEMO": "D-0177", "L7-DEMO": "D-0203"}
    dealers |= {"DC-DEMO": "D-0218", "ULTIMATE-TEX-DEMO": "D-0251"}
    for table, dealer in dealers.items():
        lines = [line for line in outcomes if f" {table} #" in line]
        assert all(line.endswith(f" · dealt by {dealer}") for line in lines[:3]), lines
        assert f" {table} dealer " in result.stdout, table
        first = [r for r in _records(roster.parent / f"{table}.sqlite") if r["type"] == "outcome"]
        assert first[0]["dealer"] == dealer, table
    # After three rounds Femi Adeyemi relieves Ben Okafor at the baccarat table, between rounds;
    # R7 (burn_after_dealer_change = 1): the simulated dealer burns a card before the next coup.
    assert " BAC-DEMO dealer Femi Adeyemi (D-0260) on duty" in result.stdout
    assert all(line.endswith(" · dealt by D-0177") for line in baccarat[:3]), baccarat
    assert all(line.endswith(" · dealt by D-0260") for line in baccarat[3:]), baccarat
    assert "burn_missed" not in result.stdout + result.stderr
    records = _records(roster.parent / "BAC-DEMO.sqlite")
    change = next(i for i, r in enumerate(records) if r.get("person") == "D-0260")
    after = [r["type"] for r in records[change : change + 4]]
    assert after == ["command", "staff_on", "card", "round_open"], after
    assert records[change + 2]["face_down"] is True  # the burn, never shown


def test_the_example_roster_holds_real_hashes_of_the_demo_crews_documented_pins(
    tmp_path: Path,
) -> None:
    example = (REPO / "config" / "roster.example").read_text(encoding="utf-8")
    copy = tmp_path / "roster.toml"
    copy.write_text(example, encoding="utf-8")
    copy.chmod(0o644)
    with pytest.raises(ConfigError, match=r"mode 0644"):  # as git checks it out: refused
        Roster.load(copy)
    copy.chmod(0o600)
    roster = Roster.load(copy)
    assert len(roster.people) == 4
    for person in roster.people.values():
        member = next(m for m in CREW if m.id == person.id)  # the demo's crew, PINs in its header
        assert f"{member.id:<7} {member.name:<11} " in example
        assert f"PIN {member.pin} " in example
        assert (person.name, person.roles) == (member.name, frozenset(member.roles))
        assert person.pin_matches(member.pin)
        assert member.pin not in str(person.pin)
        if member.badge is not None:
            assert roster.by_badge(member.badge) == person
        else:
            assert person.badge is None


def _records(journal: Path) -> list[dict[str, Any]]:
    return [
        json.loads(body) for (body,) in read_rows(journal, "SELECT body FROM records ORDER BY seq")
    ]


async def _start_watch(url: str, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        *WATCH,
        "--url",
        url,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )


async def _line(proc: asyncio.subprocess.Process, wait: float = 10.0) -> str:
    assert proc.stdout is not None
    return (await asyncio.wait_for(proc.stdout.readline(), timeout=wait)).decode().rstrip("\n")


async def _no_line(proc: asyncio.subprocess.Process, wait: float = 0.5) -> None:
    assert proc.stdout is not None
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(proc.stdout.readline(), timeout=wait)


STAMP = r"\d\d:\d\d:\d\d"
ROULETTE = {
    "schema": 1,
    "table": "ROU-W",
    "game": "roulette",
    "type": "outcome",
    "seq": 5,
    "round": "ROU-W-000001",
    "status": "settled",
    "result": {"number": 17, "color": "black", "revolutions": 6},
}


@pytest.mark.broker
async def test_watch_says_it_is_connected_and_prints_one_line_per_outcome(
    mosquitto: MosquittoProcess,
) -> None:
    import aiomqtt  # noqa: PLC0415 - only these tests publish by hand

    proc = await _start_watch(mosquitto.url, "--prefix", "it", "--table", "ROU-W")
    try:
        connected = await _line(proc)
        assert re.fullmatch(
            rf"{STAMP} connected to mqtt://127\.0\.0\.1:{mosquitto.port}, waiting for it/ROU-W/#",
            connected,
        ), connected
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            await client.publish("it/ROU-W/outcome", json.dumps(ROULETTE), qos=1)
            line = await _line(proc)
            assert re.fullmatch(rf"{STAMP} ROU-W #000001 17 black \(6 turns\)", line), line
            event = {"schema": 1, "table": "ROU-W", "seq": 6, "type": "round_open", "spin": 3}
            await client.publish("it/ROU-W/events", json.dumps(event), qos=1)
            assert re.fullmatch(rf"{STAMP} ROU-W event #6 round_open spin=3", await _line(proc))
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.broker
async def test_watch_shows_a_retained_message_and_a_redelivered_event_once(
    mosquitto: MosquittoProcess,
) -> None:
    import aiomqtt  # noqa: PLC0415 - only these tests publish by hand

    async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
        await client.publish("it/ROU-W/outcome", json.dumps(ROULETTE), qos=1, retain=True)
        await client.publish(
            "it/ROU-W/status", json.dumps({"table": "ROU-W", "state": "online"}), qos=1, retain=True
        )
    proc = await _start_watch(mosquitto.url, "--prefix", "it")
    try:
        assert " connected to " in await _line(proc)
        first = {await _line(proc), await _line(proc)}
        assert {line[9:] for line in first} == {
            "ROU-W #000001 17 black (6 turns)",
            "ROU-W status online",
        }, first
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            # The publisher re-publishes its retained slots after a reconnect, and the outbox may
            # deliver an event twice (docs/mqtt.md): each is shown once.
            await client.publish("it/ROU-W/outcome", json.dumps(ROULETTE), qos=1, retain=True)
            event = {"schema": 1, "table": "ROU-W", "seq": 6, "type": "bets_closed"}
            await client.publish("it/ROU-W/events", json.dumps(event), qos=1)
            await client.publish("it/ROU-W/events", json.dumps(event), qos=1)
            marker = {"schema": 1, "table": "ROU-W", "seq": 7, "type": "ball_launched"}
            await client.publish("it/ROU-W/events", json.dumps(marker), qos=1)
            assert (await _line(proc))[9:] == "ROU-W event #6 bets_closed"
            assert (await _line(proc))[9:] == "ROU-W event #7 ball_launched"
            await _no_line(proc)
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.broker
async def test_watch_json_keeps_the_payload(mosquitto: MosquittoProcess) -> None:
    import aiomqtt  # noqa: PLC0415 - only these tests publish by hand

    async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
        await client.publish("it/ROU-W/outcome", json.dumps(ROULETTE), qos=1, retain=True)
    proc = await _start_watch(mosquitto.url, "--prefix", "it", "--json")
    try:
        line = json.loads(await _line(proc))
        assert line == {"topic": "it/ROU-W/outcome", "retained": True, "payload": ROULETTE}
    finally:
        proc.terminate()
        await proc.wait()


def test_watch_of_a_closed_port_is_one_line_and_fails() -> None:
    port = free_port()
    result = subprocess.run(
        [*WATCH, "--url", f"mqtt://127.0.0.1:{port}"],
        capture_output=True,
        text=True,
        timeout=30,
        env=_env(),
        check=False,
    )
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"tablectl watch: cannot reach mqtt://127.0.0.1:{port}: ")


@pytest.mark.parametrize(
    ("topic", "payload", "expected"),
    [
        (
            "p/T/outcome",
            {"seq": 9, "round": "T-000002", "status": "void", "reason": "min_revolutions"},
            Line("outcome", "T", "T #000002 VOID min_revolutions"),
        ),
        (
            "p/T/alarms",
            {"type": "fault", "code": "ss2_fault_5", "device": "wheel", "detail": "motor fault"},
            Line("alarm", "T", "T ALARM raised ss2_fault_5 on wheel: motor fault"),
        ),
        ("p/T/status", {"table": "T", "state": "offline"}, Line("status", "T", "T status offline")),
        ("p/T/state", {"phase": "open"}, None),
        (
            "p/T/events",
            {"seq": 3, "type": "card", "card": None, "withheld": True, "device": "shoe"},
            Line("event", "T", "T event #3 card card=withheld"),
        ),
        ("p/T/events", {"seq": 4, "type": "outcome", "status": "settled"}, None),
    ],
)
def test_format_message(topic: str, payload: dict[str, object], expected: Line | None) -> None:
    assert format_message(topic, json.dumps(payload).encode()) == expected


def test_format_message_survives_garbage() -> None:
    assert format_message("p/T/events", b"\xff\x00") == Line(
        "other", "T", "T p/T/events: <2 bytes, not JSON>"
    )
    assert format_message("p/T/events", b"[1]") == Line("other", "T", "T p/T/events: not an object")
