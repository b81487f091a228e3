"""Several tables in one process (``tablectl.controller.service.host``): isolation under a device
fault and a crash.

Two simulated wheels, two tables, one Mosquitto. One wheel is unplugged mid-run (a device
fault) and the other table's outcomes keep coming; a table whose task fails is restarted with
backoff while its neighbour goes on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.service.host import check_host, run_tables
from tablectl.controller.service.systemd import Notifier
from tests.controller.service.test_systemd import NotifyListener
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Subscriber
from tests.support.tables import roulette_config, sample, scrape, sim_wheel
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(30)]


def outcomes(sub: Subscriber, table: str) -> list[dict[str, Any]]:
    seen = {p["seq"]: p for p in sub.payloads(f"it/{table}/events") if p["type"] == "outcome"}
    return [seen[seq] for seq in sorted(seen)]


def settled(sub: Subscriber, table: str) -> int:
    return sum(1 for o in outcomes(sub, table) if o["status"] == "settled")


async def test_unplugged_wheel_on_one_table_never_stalls_the_other(
    tmp_path: Path, mosquitto: MosquittoProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    notify = NotifyListener(str(tmp_path / "notify.sock"))
    monkeypatch.setenv("NOTIFY_SOCKET", str(tmp_path / "notify.sock"))
    try:
        async with (
            Subscriber(mosquitto.host, mosquitto.port, "it/#") as sub,
            sim_wheel(tmp_path / "wheel-a", seed=1) as wheel_a,
            sim_wheel(tmp_path / "wheel-b", seed=2) as wheel_b,
        ):
            configs = [
                roulette_config("ROU-A", wheel_a.link, tmp_path / "a.sqlite", mosquitto.url),
                roulette_config("ROU-B", wheel_b.link, tmp_path / "b.sqlite", mosquitto.url),
            ]
            host = asyncio.create_task(run_tables(configs))
            try:
                await wait_until(
                    lambda: notify.times("READY=1"), timeout=8.0, what="READY=1 for the host"
                )
                ready = next(m for m in notify.messages() if "READY=1" in m)
                assert "ROU-A devices 1/1 broker up" in ready
                assert "ROU-B devices 1/1 broker up" in ready
                await wait_until(
                    lambda: settled(sub, "ROU-A") >= 1 and settled(sub, "ROU-B") >= 1,
                    timeout=8.0,
                    what="both tables settle",
                )
                # Table B's wheel dies mid-run (cable pulled, simulator gone).
                await wheel_b.unplug()
                await wait_until(
                    lambda: any(
                        a["code"] == "device_unavailable" for a in sub.payloads("it/ROU-B/alarms")
                    ),
                    timeout=8.0,
                    what="ROU-B alarm",
                )
                a_before = settled(sub, "ROU-A")
                b_before = len(outcomes(sub, "ROU-B"))
                await wait_until(
                    lambda: settled(sub, "ROU-A") >= a_before + 3,
                    timeout=8.0,
                    what="ROU-A keeps settling",
                )
                assert not host.done()
            finally:
                host.cancel()
                await asyncio.wait({host})
            # B made no progress past its fault (at most the void of the round in flight).
            assert len(outcomes(sub, "ROU-B")) <= b_before + 1
            # Same topics as single-table mode, per table; each table's seq is its own and gapless.
            for table in ("ROU-A", "ROU-B"):
                seqs = sorted({p["seq"] for p in sub.payloads(f"it/{table}/events")})
                assert seqs == list(range(1, seqs[-1] + 1))
                assert sub.payloads(f"it/{table}/status")[-1]["state"] == "offline"
                assert sub.payloads(f"it/{table}/state")
            devices_b = sub.payloads("it/ROU-B/devices/wheel")
            assert devices_b[-1]["available"] is False
    finally:
        notify.close()


async def test_a_failing_table_is_restarted_with_backoff_while_the_other_plays(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # Table B cannot open its journal (its folder is a file): its task fails at every start
    # until the obstacle is gone; then it comes up on the next restart.
    blocker = tmp_path / "blocked"
    blocker.write_text("not a folder", encoding="utf-8")
    port = free_port()
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/#") as sub,
        sim_wheel(tmp_path / "wheel-a", seed=3) as wheel_a,
        sim_wheel(tmp_path / "wheel-b", seed=4) as wheel_b,
    ):
        configs = [
            roulette_config("ROU-A", wheel_a.link, tmp_path / "a.sqlite", mosquitto.url),
            roulette_config("ROU-B", wheel_b.link, blocker / "b.sqlite", mosquitto.url),
        ]
        host = asyncio.create_task(
            run_tables(
                configs,
                metrics_listen=f"127.0.0.1:{port}",
                min_delay=0.2,
                max_delay=0.4,
                notifier=Notifier(None),
            )
        )
        try:
            await wait_until(lambda: settled(sub, "ROU-A") >= 2, timeout=8.0, what="ROU-A settles")
            body = (await scrape(port))[1]
            restarts = sample(body, "tablectl_table_restarts_total", table="ROU-B") or 0
            assert restarts >= 2, body
            assert sample(body, "tablectl_table_up", table="ROU-B") == 0
            assert sample(body, "tablectl_table_up", table="ROU-A") == 1
            assert not host.done()
            blocker.unlink()  # the disk is back
            await wait_until(
                lambda: settled(sub, "ROU-B") >= 1, timeout=8.0, what="ROU-B up after a restart"
            )
            body = (await scrape(port))[1]
            assert sample(body, "tablectl_table_up", table="ROU-B") == 1
        finally:
            host.cancel()
            await asyncio.wait({host})


def test_host_configs_must_not_share_a_table_journal_or_client_id(tmp_path: Path) -> None:
    url = "mqtt://127.0.0.1:1"
    a = roulette_config("ROU-A", "socket://127.0.0.1:1", tmp_path / "a.sqlite", url)
    with pytest.raises(ConfigError, match="same table id"):
        check_host([a, roulette_config("ROU-A", "x", tmp_path / "b.sqlite", url)])
    with pytest.raises(ConfigError, match="same journal path"):
        check_host([a, roulette_config("ROU-B", "x", tmp_path / "a.sqlite", url)])
    with pytest.raises(ConfigError, match="same mqtt client_id"):
        check_host(
            [
                a,
                roulette_config(
                    "ROU-B",
                    "x",
                    tmp_path / "b.sqlite",
                    url,
                    mqtt={"url": url, "client_id": "tablectl-ROU-A"},
                ),
            ]
        )
    with pytest.raises(ConfigError, match="no table config"):
        check_host([])
