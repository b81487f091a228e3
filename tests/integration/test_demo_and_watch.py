"""The README's main command and the technician's ``watch``, run as a user would run them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tablectl.controller.tools.watch import format_message
from tests.support.mosquitto import MosquittoProcess

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)
DEMO = [sys.executable, "-m", "tablectl", "demo"]


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
    outcomes = [line for line in result.stdout.splitlines() if line.startswith("OUTCOME")]
    assert len(outcomes) == 4, result.stdout[-3000:]
    # The default scenario scripts a misspin on game 3: the view shows its void and reason.
    assert sum("VOID (same_direction)" in line for line in outcomes) == 1
    assert sum("revolutions" in line for line in outcomes) == 3
    assert "STATUS  ROU-DEMO online" in result.stdout


@pytest.mark.slow
def test_demo_runs_card_draw_and_wheel_tables_beside_roulette(tmp_path: Path) -> None:
    result = subprocess.run(
        [*DEMO, "--speed", "20", "--rounds", "30"],
        capture_output=True,
        text=True,
        timeout=90,
        env=_env(),
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    outcomes = [line for line in result.stdout.splitlines() if line.startswith("OUTCOME")]
    baccarat = [line for line in outcomes if "BAC-DEMO-" in line]
    roulette = [line for line in outcomes if "ROU-DEMO-" in line]
    assert baccarat, result.stdout[-3000:]
    assert roulette, result.stdout[-3000:]
    assert all(" v banker " in line for line in baccarat)
    assert any("L7-DEMO-" in line and " balls " in line for line in outcomes), outcomes
    assert any("DC-DEMO-" in line and " segment " in line for line in outcomes), outcomes


@pytest.mark.broker
async def test_watch_pretty_prints_a_tables_topics(mosquitto: MosquittoProcess) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl",
        "watch",
        "--url",
        mosquitto.url,
        "--prefix",
        "it",
        "--table",
        "ROU-W",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )
    try:
        import aiomqtt  # noqa: PLC0415 - only this test publishes by hand

        outcome = {
            "schema": 1,
            "type": "outcome",
            "seq": 5,
            "round": "ROU-W-000001",
            "status": "settled",
            "result": {"number": 17, "color": "black", "revolutions": 6},
        }
        line = b""
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            for _ in range(50):  # until watch has subscribed
                await client.publish("it/ROU-W/outcome", json.dumps(outcome), qos=1)
                try:
                    assert proc.stdout is not None
                    line = await asyncio.wait_for(proc.stdout.readline(), timeout=0.2)
                    break
                except TimeoutError:
                    continue
        assert line.decode().strip() == "OUTCOME #5 ROU-W-000001  17 black  revolutions 6"
    finally:
        proc.terminate()
        await proc.wait()


@pytest.mark.parametrize(
    ("topic", "payload", "expected"),
    [
        (
            "p/T/outcome",
            {"seq": 9, "round": "T-000002", "status": "void", "reason": "min_revolutions"},
            "OUTCOME #9 T-000002  VOID (min_revolutions)",
        ),
        (
            "p/T/alarms",
            {"type": "fault", "code": "ss2_fault_5", "device": "wheel", "detail": "motor fault"},
            "ALARM   RAISED  ss2_fault_5 on wheel  motor fault",
        ),
        ("p/T/status", {"table": "T", "state": "offline"}, "STATUS  T offline"),
        ("p/T/state", {"phase": "open"}, None),
    ],
)
def test_format_message(topic: str, payload: dict[str, object], expected: str | None) -> None:
    assert format_message(topic, json.dumps(payload).encode()) == expected


def test_format_message_survives_garbage() -> None:
    assert format_message("p/T/events", b"\xff\x00") == "p/T/events  <2 bytes, not JSON>"
    assert format_message("p/T/events", b"[1]") == "p/T/events  [1]"
