"""A floor's topology with real brokers (issue 17, item 3): archivers sharing the work, and a
table host's Mosquitto bridged to the floor's central one, the bridge cut and restored.

Roulette tables (``tablectl simulate ss2`` + ``tablectl run``) and ``tablectl archive`` are real
processes; PostgreSQL is the session's private server (a fresh database per test).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from pathlib import Path

import pytest

from tests.fault.harness import Lane
from tests.support.archive import (
    ArchiverProcess,
    check_archived,
    wait_archived,
    wait_played,
    wait_subscribed,
)
from tests.support.mosquitto import Bridge, MosquittoProcess
from tests.support.mqtt import Received, Subscriber
from tests.support.rabbitmq import RabbitMQNode, rabbitmq_unavailable

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(110)]

BRIDGED = (
    "it/+/events out 1",
    "it/+/anchor out 1",
    "it/+/cmd/resend/reply out 1",
    "it/+/cmd/resend in 1",
)
"""What a table host's broker forwards to the floor's: the records, and the resend dialogue."""

RESEND_REPLIES = "it/+/cmd/resend/reply"


def resent_by_archiver(message: Received) -> bool:
    """A table's reply to one of the archiver's ``cmd/resend`` requests that sent records."""
    if not message.topic.endswith("/cmd/resend/reply"):
        return False
    reply = message.json()
    return (
        str(reply.get("id", "")).startswith("archive-")
        and reply.get("ok") is True
        and int(reply.get("count", 0)) > 0
    )


async def test_two_archivers_share_the_work_and_store_each_record_once(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    lanes = [Lane(n, tmp_path / n, mosquitto.url) for n in "AB"]
    archivers = [
        ArchiverProcess(tmp_path, mosquitto.url, postgres_dsn, name, extra=["--share", "floor"])
        for name in ("arch-1", "arch-2")
    ]
    journals = {lane.table: lane.journal for lane in lanes}
    async with Subscriber(mosquitto.host, mosquitto.port, "it/_archive/+/status") as status:
        try:
            for archiver in archivers:
                archiver.start()
            await wait_subscribed(mosquitto, archivers)  # each must get a share of the work
            for seed, lane in enumerate(lanes, 1):
                await asyncio.to_thread(lane.start_sim, ["--seed", str(seed)])
                lane.start_ctl()
            await wait_played(lanes, 1)
            await wait_archived(postgres_dsn, journals, 30, archivers=archivers)
            for lane in lanes:
                lane.kill_ctl(signal.SIGTERM)
            await wait_archived(postgres_dsn, journals, 20, archivers=archivers)
            for archiver in archivers:
                assert archiver.kill(signal.SIGTERM) == 0, archiver.log_tail()
            goodbye = await status.wait_until(
                lambda ms: len({m.topic for m in ms if m.json()["state"] == "offline"}) == 2,
                timeout=10,
            )
        finally:
            for archiver in archivers:
                archiver.kill()
            for lane in lanes:
                lane.stop()
    total = sum(check_archived(postgres_dsn, lane.table, lane.journal) for lane in lanes)
    final = {
        m.json()["archive"]: m.json()["counters"]
        for m in goodbye
        if m.json()["state"] == "offline" and "counters" in m.json()
    }
    assert set(final) == {"arch-1", "arch-2"}
    assert all(counters["stored"] > 0 for counters in final.values()), final
    assert sum(counters["stored"] for counters in final.values()) == total  # each row once


async def test_a_bridged_host_is_archived_completely_through_bridge_cuts(
    tmp_path: Path, postgres_dsn: str
) -> None:
    central = MosquittoProcess(tmp_path / "central")
    host = MosquittoProcess(tmp_path / "host", bridge=Bridge(f"127.0.0.1:{central.port}", BRIDGED))
    lanes = [Lane(n, tmp_path / n, host.url) for n in "AB"]
    archiver = ArchiverProcess(tmp_path, central.url, postgres_dsn)
    journals = {lane.table: lane.journal for lane in lanes}
    replies = contextlib.AsyncExitStack()
    try:
        central.start()
        host.start()
        archiver.start()
        for seed, lane in enumerate(lanes, 1):
            await asyncio.to_thread(lane.start_sim, ["--seed", str(seed)])
            lane.start_ctl()
        await wait_played(lanes)
        await wait_archived(postgres_dsn, journals, 30, archivers=[archiver])
        # The floor's broker dies (no persistence: what it held for the archiver is gone) while
        # the tables play on into their host's broker; it comes back on the same port, and the
        # bridge delivers what the host queued before the archiver is back (it is held stopped
        # until then): those records reach no archiver — gaps, filled by the tables' resends.
        assert archiver.proc is not None
        archiver.proc.send_signal(signal.SIGSTOP)
        try:
            central.kill()
            await asyncio.sleep(1.0)
            central.start()
            floor = await replies.enter_async_context(
                Subscriber(central.host, central.port, ["it/+/events", RESEND_REPLIES])
            )
            await floor.wait_for(lambda m: m.topic.endswith("/events"), timeout=20)
        finally:
            archiver.proc.send_signal(signal.SIGCONT)
        await wait_played(lanes, 1)
        await wait_archived(postgres_dsn, journals, 30, archivers=[archiver])
        # The lost records came back by the archiver's resend requests: a gap it saw once the
        # tables' next records came, or its probe of a quiet table's lost tail, whichever came
        # first (timing decides which; both are the resend path).
        await floor.wait_for(resent_by_archiver, timeout=10)
        await replies.aclose()
        # The host's broker restarts: the tables and the bridge reconnect to it.
        host.kill()
        await asyncio.sleep(1.0)
        host.start()
        await wait_played(lanes, 1)
        await wait_archived(postgres_dsn, journals, 30, archivers=[archiver])
        for lane in lanes:
            lane.kill_ctl(signal.SIGTERM)
        await wait_archived(postgres_dsn, journals, 20, archivers=[archiver])
        assert archiver.kill(signal.SIGTERM) == 0
        async with Subscriber(central.host, central.port, "it/_archive/archive/status") as status:
            final = (await status.wait_for(lambda m: True)).json()
    finally:
        await replies.aclose()
        archiver.kill(signal.SIGTERM)
        for lane in lanes:
            lane.stop()
        host.stop()
        central.stop()
    for lane in lanes:
        assert check_archived(postgres_dsn, lane.table, lane.journal) > 10
    assert final["state"] == "offline"
    assert final["counters"]["resend_replies"] > 0, final
    assert (final["gaps_open"], final["broken"]) == (0, [])


async def test_a_rabbitmq_broker_with_its_mqtt_plugin(tmp_path: Path, postgres_dsn: str) -> None:
    """RabbitMQ's MQTT plugin as the floor's broker (Debian's 3.10: MQTT 3.1.1, so one archiver
    per broker or table group, without ``--share``): the archiver killed and restarted, its
    persistent session keeps what arrived meanwhile."""
    reason = rabbitmq_unavailable()
    if reason is not None:
        pytest.skip(reason)
    node = RabbitMQNode()
    try:
        await asyncio.to_thread(node.start)
        lane = Lane("RMQ", tmp_path / "rmq", node.url)
        archiver = ArchiverProcess(
            tmp_path, node.url, postgres_dsn, extra=["--mqtt-version", "3.1.1"]
        )
        journals = {lane.table: lane.journal}
        try:
            await asyncio.to_thread(lane.start_sim, ["--seed", "9"])
            lane.start_ctl()
            archiver.start()
            await wait_played([lane], 2)
            archiver.kill()
            await wait_played([lane], 1)
            archiver.start()
            await wait_archived(postgres_dsn, journals, 30, archivers=[archiver])
            lane.kill_ctl(signal.SIGTERM)
            await wait_archived(postgres_dsn, journals, 20, archivers=[archiver])
        finally:
            archiver.kill(signal.SIGTERM)
            lane.stop()
    finally:
        await asyncio.to_thread(node.close)
    assert check_archived(postgres_dsn, lane.table, lane.journal) > 10
