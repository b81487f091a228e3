"""A journal outage locks the table and never settles a wrong round (issue 11, defect 1).

Reproduced on the old code: journal on a 4 MB tmpfs, a simulated SS2 wheel (``--speed 10
--seed 2``, ``sensor_stream = true``), the disk filled while a round was open and freed later:
that round settled with the number of a spin seconds later, the spins between vanished, and
nothing said so (status online, state open, no alarm, no metric).

Real parts only: a tmpfs (root and ``mount`` needed; skipped otherwise), ``tablectl simulate
ss2`` on a pty, ``tablectl run`` as a subprocess, a Mosquitto of the fixture, the metrics
endpoint scraped over HTTP.
"""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.journal import Journal
from tablectl.simulators.ss2 import DEFAULT_MODE
from tests.support.disk import fill, small_disk
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Received, Subscriber
from tests.support.processes import start_controller, start_simulator, write_config

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(150)]

TABLE = "ROU-OUT"
PREFIX = f"it/{TABLE}"


def events(sub: Subscriber) -> list[dict[str, Any]]:
    seen = {p["seq"]: p for p in sub.payloads(f"{PREFIX}/events")}
    return [seen[seq] for seq in sorted(seen)]


def outcomes(sub: Subscriber) -> list[dict[str, Any]]:
    return [e for e in events(sub) if e["type"] == "outcome"]


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2) as response:
        return str(response.read().decode())


def _is_status(locked: bool) -> Any:
    def check(m: Received) -> bool:
        return m.topic == f"{PREFIX}/status" and m.json().get("locked") is locked

    return check


async def test_a_journal_outage_locks_the_table_and_voids_the_open_round(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    metrics_port = free_port()
    with small_disk(tmp_path / "disk", "4m") as disk:
        config = write_config(
            tmp_path / "table.toml",
            table=TABLE,
            port=str(tmp_path / "wheel"),
            mqtt_url=mosquitto.url,
            journal=disk / "journal.sqlite",
            rules="min_revolutions = 4",
            device=f"operating_mode = {DEFAULT_MODE}\nsensor_stream = true",
            sections=f'[metrics]\nlisten = "127.0.0.1:{metrics_port}"\n',
        )
        sim_args = ["--pty", "--link", str(tmp_path / "wheel"), "--speed", "10", "--seed", "2"]
        async with Subscriber(mosquitto.host, mosquitto.port, f"{PREFIX}/#") as sub:
            with (
                start_simulator([*sim_args, "--wait-for-host"], tmp_path) as sim,
                start_controller(config, tmp_path) as ctl,
            ):
                why = f"\n--- controller:\n{ctl.log_tail()}\n--- wheel:\n{sim.log_tail()}"
                await sub.wait_until(
                    lambda _m: sum(o["status"] == "settled" for o in outcomes(sub)) >= 2,
                    timeout=40,
                )
                # Fill the disk while a round is open (betting open, the next spin to come).
                await sub.wait_for(
                    lambda m: (
                        m.topic == f"{PREFIX}/events"
                        and m.json()["type"] == "round_open"
                        and m.json()["seq"] > outcomes(sub)[-1]["seq"]
                    ),
                    timeout=20,
                )
                last_round = outcomes(sub)[-1]["round"]
                settled_before = len(outcomes(sub))
                filler = fill(disk)
                alarm = await sub.wait_for(
                    lambda m: m.topic == f"{PREFIX}/alarms" and m.json().get("journaled") is False,
                    timeout=15,
                )
                assert alarm.json()["code"] == "journal_unavailable", why
                locked = await sub.wait_for(_is_status(True), timeout=5)
                assert locked.json()["faults"] == ["journal_unavailable"]
                assert locked.json()["state"] == "online"
                state = await sub.wait_for(
                    lambda m: m.topic == f"{PREFIX}/state" and m.json().get("locked") is True,
                    timeout=5,
                )
                assert state.json()["journal"]["available"] is False
                text = await asyncio.to_thread(scrape, metrics_port)
                assert f'tablectl_journal_available{{table="{TABLE}"}} 0' in text
                # Hold the outage for several spins (a game takes ~2.5 s at --speed 10).
                # Stays: time must pass for the wheel (its own process, real time) to play on
                # while locked, and what follows is an absence check: a slow machine can only
                # make it check less, never fail.
                await asyncio.sleep(9)
                assert len(outcomes(sub)) == settled_before  # nothing settled while locked
                filler.unlink()
                await sub.wait_until(
                    lambda _m: any(o["reason"] == "journal_outage" for o in outcomes(sub)),
                    timeout=15,
                )
                await sub.wait_for(_is_status(False), timeout=10)
                voided = next(o for o in outcomes(sub) if o["reason"] == "journal_outage")
                # The next rounds play normally.
                await sub.wait_until(
                    lambda _m: (
                        sum(
                            o["status"] == "settled" and o["seq"] > voided["seq"]
                            for o in outcomes(sub)
                        )
                        >= 2
                    ),
                    timeout=30,
                )
                text = await asyncio.to_thread(scrape, metrics_port)
                assert f'tablectl_journal_available{{table="{TABLE}"}} 1' in text
                assert f'tablectl_journal_outages_total{{table="{TABLE}"}} 1' in text
        # The round that was open when the disk filled is the one voided (round ids count up).
        number = int(last_round.rsplit("-", 1)[1])
        assert voided["round"] == f"{TABLE}-{number + 1:06d}", why
        with Journal(disk / "journal.sqlite", TABLE) as journal:
            records = list(journal.records())
            assert journal.verify() == journal.last_seq
    fault = next(r for r in records if r["type"] == "fault" and r["code"] == "journal_unavailable")
    clear = next(
        r for r in records if r["type"] == "fault_cleared" and r["code"] == "journal_unavailable"
    )
    assert fault["since"] == clear["since"] < clear["ts"]
    assert fault["device"] == clear["device"] == "journal"
    assert "event(s) not journaled" in fault["detail"]
    void_record = next(
        r for r in records if r["type"] == "void" and r["reason"] == "journal_outage"
    )
    assert void_record["seq"] < fault["seq"] < clear["seq"]
    # No settled round took a result from a spin whose own records are not in the journal:
    # the winning number's spin is the spin its round opened at (SS2 spin counter).
    settled = [r for r in records if r["type"] == "outcome" and r["status"] == "settled"]
    assert len(settled) >= 4
    for outcome in settled:
        opens = [r for r in records if r["type"] == "round_open" and r["seq"] < outcome["seq"]]
        spin, round_spin = outcome["result"].get("spin"), opens[-1].get("spin")
        if spin is not None and round_spin is not None:
            assert spin == round_spin, (outcome, opens[-1])
