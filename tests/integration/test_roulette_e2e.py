"""A roulette table end to end, with real parts only.

``tablectl simulate ss2`` serves a wheel on a pty (the SS2 wire protocol, byte for byte) →
``tablectl run`` reads it through pyserial → a real Mosquitto started by the fixture → a
subscriber asserts the payloads. Nothing is mocked; the simulator runs 20× real time.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import tty
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.journal import Journal
from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Received, Subscriber, TcpProxy
from tests.support.processes import Process, start_controller, start_simulator, write_config
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(90)]

TABLE = "ROU-E2E"
PREFIX = f"it/{TABLE}"
SPEED = "20"
RED = {1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36}


def outcomes(sub: Subscriber) -> list[dict[str, Any]]:
    """Outcomes seen on the events stream (each once, by seq)."""
    seen: dict[int, dict[str, Any]] = {}
    for payload in sub.payloads(f"{PREFIX}/events"):
        if payload.get("type") == "outcome":
            seen[payload["seq"]] = payload
    return [seen[seq] for seq in sorted(seen)]


def event_seqs(messages: list[Received]) -> list[int]:
    return sorted({m.json()["seq"] for m in messages if m.topic == f"{PREFIX}/events"})


def _outcomes_in(messages: list[Received]) -> list[dict[str, Any]]:
    return [
        m.json()
        for m in messages
        if m.topic == f"{PREFIX}/events" and m.json().get("type") == "outcome"
    ]


def _settled_after_void(reason: str) -> Any:
    def check(messages: list[Received]) -> bool:
        found = _outcomes_in(messages)
        voids = [i for i, o in enumerate(found) if o["status"] == "void" and o["reason"] == reason]
        return bool(voids) and any(o["status"] == "settled" for o in found[voids[0] + 1 :])

    return check


def _count_settled(n: int) -> Any:
    def check(messages: list[Received]) -> bool:
        settled = {o["seq"] for o in _outcomes_in(messages) if o["status"] == "settled"}
        return len(settled) >= n

    return check


def _journaled_after(journal: Path, kind: str, seq: int) -> bool:
    """Whether the live journal (read-only, beside its writer) has a ``kind`` record after
    ``seq``."""
    sql = "SELECT 1 FROM records WHERE type = ? AND seq > ? LIMIT 1"
    return bool(read_rows(journal, sql, (kind, seq)))


def _void_after_settled(messages: list[Received]) -> bool:
    found = _outcomes_in(messages)
    last = max((o["seq"] for o in found if o["status"] == "settled"), default=0)
    return any(o["status"] == "void" and o["seq"] > last for o in found)


def _why(*processes: Process) -> str:
    return "\n".join(f"--- {p.log.name}:\n{p.log_tail()}" for p in processes)


def _wheel(link: Path, seed: str, *, speed: str = SPEED) -> list[str]:
    """``simulate ss2`` arguments: a pty at ``link`` whose game 1 waits for the controller.

    Without ``--wait-for-host`` the wheel may be mid-spin when the controller opens the port,
    and that spin (joined late, no sensor stream yet) is not the one the test scripted.
    """
    return ["--pty", "--link", str(link), "--speed", speed, "--seed", seed, "--wait-for-host"]


@pytest.fixture
def wheel_link(tmp_path: Path) -> Path:
    return tmp_path / "wheel"


def _config(tmp_path: Path, port: str, broker_url: str, device: str = "", rules: str = "") -> Path:
    """A table on ``port``; the controller writes the wheel's mode on connect (``*o``), which
    is also the command that releases a ``--wait-for-host`` simulator."""
    device = f"operating_mode = {DEFAULT_MODE}\n{device}"
    return write_config(
        tmp_path / "table.toml",
        table=TABLE,
        port=port,
        mqtt_url=broker_url,
        journal=tmp_path / "journal.sqlite",
        rules=rules or "min_revolutions = 4",
        device=device,
    )


async def test_spins_settle_and_publish_the_contract(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    sim_args = _wheel(wheel_link, "3")
    sim_args += ["--numbers", "17,0,32,5"]
    config = _config(tmp_path, str(wheel_link), mosquitto.url, device="sensor_stream = true")
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(_count_settled(3), timeout=30)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        # A graceful stop (SIGTERM) says goodbye on the retained status topic.
        await sub.wait_for(
            lambda m: m.topic == f"{PREFIX}/status" and m.json()["state"] == "offline", timeout=5
        )
        found = outcomes(sub)
        settled = [o for o in found if o["status"] == "settled"]
        assert [o["result"]["number"] for o in settled[:3]] == [17, 0, 32]
        for outcome in settled[:3]:
            result = outcome["result"]
            number = result["number"]
            expected = "green" if number == 0 else ("red" if number in RED else "black")
            assert result["color"] == expected
            assert result["revolutions"] >= 4  # seed-000 RL-I2, counted from the `bs` stream
            assert result["ball_direction"] != result["rotor_direction"]  # R1
            assert (outcome["schema"], outcome["table"]) == (1, TABLE)
            assert (outcome["game"], outcome["reason"]) == ("roulette", None)
            assert (len(outcome["hash"]), len(outcome["prev_hash"])) == (64, 64)
        assert [o["round"] for o in settled[:3]] == [
            f"{TABLE}-000001",
            f"{TABLE}-000002",
            f"{TABLE}-000003",
        ]
        # The events stream is the journal in order: a gapless seq from 1.
        seqs = event_seqs(sub.messages)
        assert seqs == list(range(1, seqs[-1] + 1))
        # The retained outcome topic carries the same records.
        retained = sub.payloads(f"{PREFIX}/outcome")
        assert {o["seq"] for o in retained} <= {o["seq"] for o in found}
        statuses = sub.payloads(f"{PREFIX}/status")
        assert statuses[0]["state"] == "online"
        assert statuses[-1]["state"] == "offline"
        devices = sub.payloads(f"{PREFIX}/devices/wheel")
        assert any(d["available"] for d in devices), devices
    # Every outcome published is in the journal, with the same hash.
    with Journal(tmp_path / "journal.sqlite", TABLE) as journal:
        journal.verify()
        stored = {r["seq"]: r["hash"] for r in journal.records() if r["type"] == "outcome"}
    assert {o["seq"]: o["hash"] for o in found}.items() <= stored.items()


FAULTS = [
    # (simulator fault, device keys, expected void reason)  — rule ids in docs/verdicts.md
    pytest.param("misspin@2", "", "same_direction", id="misspin-vendor-warn2-R2"),
    pytest.param(
        "same_direction_sensor@2", "sensor_stream = true", "same_direction", id="sensors-R1"
    ),
    pytest.param("short_spin@2=2", "sensor_stream = true", "min_revolutions", id="RL-I2"),
    pytest.param("no_ball@2", "no_ball_timeout = 1.0", "no_ball", id="no-ball"),
    pytest.param("misfire_stuck@2=60", "misfire_grace = 0.2", "misfire", id="misfire"),
    pytest.param("silence@2=60", "", "device_fault", id="silence"),
    pytest.param("disconnect@2=40", "", "device_fault", id="unplugged-pty"),
    # issue 11: the bare number line and the status line disagree (R22), the rotor reverses
    # between the launch and the result (seed-001 §4.1 L95).
    pytest.param("result_mismatch@2", "", "result_mismatch", id="R22-result-mismatch"),
    pytest.param("rotor_reversal@2", "", "rotor_direction_changed", id="L95-rotor-reversal"),
]


@pytest.mark.parametrize(("fault", "device", "reason"), FAULTS)
async def test_fault_voids_with_its_reason_and_next_spin_settles(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    wheel_link: Path,
    fault: str,
    device: str,
    reason: str,
) -> None:
    sim_args = _wheel(wheel_link, "5")
    sim_args += ["--fault", fault]
    config = _config(tmp_path, str(wheel_link), mosquitto.url, device=device)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(_settled_after_void(reason), timeout=45)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
            assert ctl.proc.poll() is None, "the service must keep running"
        found = outcomes(sub)
        # The spin the controller joins may already be under way (its count then starts late):
        # the scripted fault's void is the one with this reason.
        voids = [o for o in found if o["status"] == "void" and o["reason"] == reason]
        assert voids, [o["reason"] for o in found]
        assert voids[0]["result"] is None or "number" in voids[0]["result"]
        seqs = event_seqs(sub.messages)
        assert seqs == list(range(1, seqs[-1] + 1))


async def test_result_mismatch_voids_with_both_readings_on_outcome(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    """R22 end to end: the wheel's bare line says 8, its status line 5; nothing is paid."""
    sim_args = _wheel(wheel_link, "5")
    sim_args += ["--fault", "result_mismatch@2=5", "--numbers", "7,8,9,10"]
    config = _config(tmp_path, str(wheel_link), mosquitto.url)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(_settled_after_void("result_mismatch"), timeout=30)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        found = outcomes(sub)
    (void,) = [o for o in found if o["status"] == "void"]
    assert (void["reason"], void["result"]["number"], void["result"]["status_number"]) == (
        "result_mismatch",
        8,
        5,
    )
    assert "status line" in void["result"]["detail"]
    assert [o["result"]["number"] for o in found if o["status"] == "settled"][:2] == [7, 9]
    results = [p for p in sub.payloads(f"{PREFIX}/events") if p["type"] == "winning_number"]
    assert (results[1]["number"], results[1]["status_number"], results[1]["spin"]) == (8, 5, 2)


async def test_result_mismatch_held_for_a_supervisor_settles_the_number_entered_by_hand(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    """``on_result_mismatch = "hold"``: the round waits; the wheel's next games are refused
    (``decision_pending``) until the supervisor enters the number; then play goes on."""
    sim_args = _wheel(wheel_link, "5")
    sim_args += ["--fault", "result_mismatch@2=5", "--numbers", "7,8,9,10,11,12"]
    rules = 'min_revolutions = 4\non_result_mismatch = "hold"'
    config = _config(tmp_path, str(wheel_link), mosquitto.url, rules=rules)

    def verdicts(messages: list[Received], code: str) -> list[dict[str, Any]]:
        return [
            m.json()
            for m in messages
            if m.topic == f"{PREFIX}/events"
            and m.json().get("type") == "verdict"
            and m.json().get("code") == code
        ]

    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(lambda ms: bool(verdicts(ms, "result_mismatch")), timeout=30)
                # The wheel plays on; its next game is refused while the round is held.
                await sub.wait_until(lambda ms: bool(verdicts(ms, "decision_pending")), timeout=30)
                state = await sub.wait_for(
                    lambda m: m.topic == f"{PREFIX}/state" and m.json().get("phase") == "held",
                    timeout=10,
                )
                held_round = state.json()["round"]
                request = {"id": 11, "event": {"type": "winning_number", "number": 8}}
                async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
                    await client.publish(f"{PREFIX}/cmd/event", json.dumps(request), qos=1)
                await sub.wait_until(
                    lambda ms: any(o["round"] == held_round for o in _outcomes_in(ms)),
                    timeout=10,
                )
                # Play goes on after the decision: a later round settles from the wheel.
                await sub.wait_until(_count_settled(3), timeout=30)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        found = outcomes(sub)
    (held,) = verdicts(sub.messages, "result_mismatch")
    assert (held["rule"], held["data"]["number"], held["data"]["status_number"]) == ("R22", 8, 5)
    decided = next(o for o in found if o["round"] == held_round)
    assert (decided["status"], decided["result"]["number"]) == ("settled", 8)
    assert decided["result"]["wheel_spin"] == 2  # the spin the wheel measured
    manual = [
        p
        for p in sub.payloads(f"{PREFIX}/events")
        if p["type"] == "winning_number" and p.get("manual")
    ]
    assert [p["number"] for p in manual] == [8]
    assert any(o["status"] == "settled" and o["seq"] > decided["seq"] for o in found)


async def test_sensor_fault_between_spins_locks_the_table_until_cleared(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    # The wheel reports *F 21 and warn bit 4 as game 2 opens: no round may open while the fault
    # is latched (regulatory R14/R18), and play resumes once the wheel reports it cleared.
    sim_args = _wheel(wheel_link, "5")
    sim_args += ["--fault", "sensor_fault@2", "--numbers", "7,8,9,10"]
    config = _config(tmp_path, str(wheel_link), mosquitto.url)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(_count_settled(2), timeout=30)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        alarms = [(a["type"], a["code"]) for a in sub.payloads(f"{PREFIX}/alarms")]
        assert ("fault", "ss2_sensor_fault") in alarms
        assert ("fault_cleared", "ss2_sensor_fault") in alarms
        assert alarms.index(("fault", "ss2_sensor_fault")) < alarms.index(
            ("fault_cleared", "ss2_sensor_fault")
        )
        verdicts = [p["code"] for p in sub.payloads(f"{PREFIX}/events") if p["type"] == "verdict"]
        assert "fault_latched" in verdicts
        settled = [o for o in outcomes(sub) if o["status"] == "settled"]
        # Game 2 (number 8) was played while the table was locked: never settled.
        assert [o["result"]["number"] for o in settled[:2]] == [7, 9]


@pytest.mark.parametrize("fault", ["garbage@2", "split@2"])
async def test_garbage_and_split_frames_never_stop_the_table(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path, fault: str
) -> None:
    sim_args = _wheel(wheel_link, "9")
    sim_args += ["--fault", fault, "--numbers", "1,2,3,4"]
    config = _config(tmp_path, str(wheel_link), mosquitto.url)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            try:
                await sub.wait_until(_count_settled(3), timeout=30)
                if fault.startswith("garbage"):
                    await sub.wait_for(
                        lambda m: (
                            m.topic == f"{PREFIX}/devices/wheel"
                            and m.json()["counters"].get("decode_errors", 0) > 0
                        ),
                        timeout=10,
                    )
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        settled = [o for o in outcomes(sub) if o["status"] == "settled"]
        assert [o["result"]["number"] for o in settled[:3]] == [1, 2, 3]


async def test_broker_down_mid_spin_outcome_arrives_after_reconnect(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    sim_args = _wheel(wheel_link, "11", speed="10")
    async with TcpProxy(mosquitto.host, mosquitto.port) as proxy:
        config = _config(tmp_path, str(wheel_link), f"mqtt://127.0.0.1:{proxy.port}")
        with (
            start_simulator(sim_args, tmp_path) as sim,
            start_controller(config, tmp_path) as ctl,
        ):
            async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as before:
                try:
                    await before.wait_until(_count_settled(1), timeout=30)
                    await before.wait_for(
                        lambda m: (
                            m.topic == f"{PREFIX}/events"
                            and m.json()["type"] == "ball_launched"
                            and m.json()["seq"] > outcomes(before)[0]["seq"]
                        ),
                        timeout=20,
                    )
                except AssertionError as exc:
                    raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
                first_session = list(before.messages)
            # Mid-spin: the broker goes away; the wheel keeps spinning, the journal keeps writing.
            proxy.pause()
            mosquitto.stop()
            last_seen = max(event_seqs(first_session))
            # The spin's outcome is journaled while the broker is down (not merely later).
            try:
                await wait_until(
                    lambda: asyncio.to_thread(
                        _journaled_after, tmp_path / "journal.sqlite", "outcome", last_seen
                    ),
                    timeout=30,
                    what="an outcome journaled during the outage",
                )
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
            mosquitto.start()
            async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as after:
                await proxy.resume()  # the controller may reconnect only now: nothing is missed
                try:
                    await after.wait_until(
                        lambda ms: any(
                            m.topic == f"{PREFIX}/events"
                            and m.json()["type"] == "outcome"
                            and m.json()["seq"] > last_seen
                            for m in ms
                        ),
                        timeout=30,
                    )
                except AssertionError as exc:
                    raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
                second_session = list(after.messages)
    seqs = sorted(set(event_seqs(first_session)) | set(event_seqs(second_session)))
    assert seqs == list(range(1, seqs[-1] + 1)), "no gap across the outage"
    assert max(event_seqs(second_session)) > last_seen


async def test_unplugged_port_at_start_then_plugged(
    tmp_path: Path, mosquitto: MosquittoProcess, wheel_link: Path
) -> None:
    config = _config(tmp_path, str(wheel_link), mosquitto.url)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with start_controller(config, tmp_path) as ctl:
            alarm = await sub.wait_for(lambda m: m.topic == f"{PREFIX}/alarms", timeout=15)
            assert alarm.json()["code"] == "device_unavailable"
            assert alarm.json()["type"] == "fault"
            # Stays: an absence check (the service must not exit with its port missing); a slow
            # machine only makes it check less, never fail.
            await asyncio.sleep(1)
            assert ctl.proc.poll() is None
            sim_args = _wheel(wheel_link, "1")
            with start_simulator(sim_args, tmp_path) as sim:
                try:
                    await sub.wait_until(_count_settled(1), timeout=30)
                except AssertionError as exc:
                    raise AssertionError(f"{exc}\n{_why(sim, ctl)}") from None
        cleared = [p for p in sub.payloads(f"{PREFIX}/alarms") if p["type"] == "fault_cleared"]
        assert [c["code"] for c in cleared][:1] == ["device_unavailable"]


# --- recorded traces played onto a pty ----------------------------------------------------------

SHARED_TRACE = Path(__file__).resolve().parents[3] / "shared" / "captures" / "ss2-status-trace.log"
OWN_TRACE = Path(__file__).resolve().parents[1] / "data" / "captures" / "ss2-six-spins.trace"


@pytest.fixture
def pty_pair() -> Iterator[tuple[int, str]]:
    master, slave = os.openpty()
    tty.setraw(master)
    tty.setraw(slave)
    try:
        yield master, os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


async def _play(master: int, trace: Path, line_interval: float) -> None:
    """Write the trace line by line: the status stream's own 500 ms, compressed 50×."""
    for line in trace.read_bytes().splitlines(keepends=True):
        os.write(master, line)
        await asyncio.sleep(line_interval)


@pytest.mark.parametrize(
    ("trace", "numbers"),
    [
        pytest.param(SHARED_TRACE, [27, 16, 6, 3, 10, 0], id="real-ss2-capture"),
        pytest.param(OWN_TRACE, [32, 15, 0, 26, 3, 35], id="own-fixture"),
    ],
)
async def test_recorded_trace_yields_its_six_spins(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    pty_pair: tuple[int, str],
    trace: Path,
    numbers: list[int],
) -> None:
    if not trace.exists():
        pytest.skip(f"{trace} not present (../shared is only beside the project's own clone)")
    master, port = pty_pair
    config = _config(tmp_path, port, mosquitto.url)
    async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
        with start_controller(config, tmp_path) as ctl:
            await sub.wait_for(lambda m: m.topic == f"{PREFIX}/status", timeout=15)
            # The controller writes the wheel's mode (*o) once it has opened the port (and
            # pyserial's open has flushed it): from then on nothing of the trace is lost.
            await wait_until(
                lambda: select.select([master], [], [], 0)[0], timeout=15, what="the *o on the pty"
            )
            await _play(master, trace, 0.01)
            try:
                await sub.wait_until(_count_settled(len(numbers)), timeout=15)
                # The trace's last round ends with the wheel powered down: its void is the
                # last outcome there is (nothing can settle after it).
                await sub.wait_until(_void_after_settled, timeout=15)
            except AssertionError as exc:
                raise AssertionError(f"{exc}\n{_why(ctl)}") from None
        found = outcomes(sub)
    settled = [o for o in found if o["status"] == "settled"]
    assert [o["result"]["number"] for o in settled] == numbers
    # Status-only wiring: no revolution count, the wheel's own validation is trusted.
    assert all(o["result"]["revolutions"] is None for o in settled)
    # The trace ends with the host powering the wheel down during the next game's betting:
    # that open round is voided as a device fault, never settled.
    assert all(o["reason"] == "device_fault" for o in found if o["status"] == "void")
