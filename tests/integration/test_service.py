"""The table as a service, in process: READY and the watchdog over a real notify socket, and the
Prometheus endpoint scraped over HTTP while a simulated wheel plays and Mosquitto is up and down.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiomqtt
import pytest

from tablectl.controller.engines.base import NOT_FOR_THIS_GAME
from tablectl.controller.service.app import TableApp
from tablectl.controller.service.process import run_table
from tablectl.controller.service.systemd import Notifier
from tests.controller.service.test_systemd import NotifyListener
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.tables import SimWheel, roulette_config, sample, scrape, sim_wheel
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(30)]

TABLE = "ROU-SVC"


@pytest.fixture
def notify(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[NotifyListener]:
    path = str(tmp_path / "notify.sock")
    listener = NotifyListener(path)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    monkeypatch.setenv("WATCHDOG_USEC", "200000")  # WatchdogSec=0.2 → a ping every 0.1 s
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    try:
        yield listener
    finally:
        listener.close()


async def test_ready_waits_for_devices_and_broker_then_watchdog_catches_a_stall(
    tmp_path: Path, mosquitto: MosquittoProcess, notify: NotifyListener
) -> None:
    mosquitto.stop()  # the broker is down when the service starts
    apps: list[TableApp] = []
    attempted: list[bool] = []

    def on_ready(app: TableApp) -> None:
        apps.append(app)
        wheel = app.runner.drivers[0]
        attempted.append(wheel.available or bool(wheel.counters))

    async with sim_wheel(tmp_path / "wheel") as wheel:
        config = roulette_config(TABLE, wheel.link, tmp_path / "j.sqlite", mosquitto.url)
        service = asyncio.create_task(run_table(config, on_ready=on_ready))
        try:
            # The watchdog is fed during startup (5 pings, WATCHDOG_USEC/2 apart) ...
            await wait_until(
                lambda: len(notify.times("WATCHDOG=1")) >= 5, timeout=8.0, what="5 startup pings"
            )
            # ... and READY waits for the broker session (down all this time).
            assert notify.times("READY=1") == [], "READY before the broker session is up"
            mosquitto.start()
            await wait_until(lambda: notify.times("READY=1"), timeout=8.0, what="READY=1")
            ready_at = notify.times("READY=1")[0]
            assert apps, "on_ready runs with READY"
            assert apps[0].publisher.connected
            assert attempted == [True], "the wheel had its first connect attempt"
            ready_message = next(m for m in notify.messages() if "READY=1" in m)
            assert f"STATUS={TABLE} devices 1/1 broker up" in ready_message

            # Pings every WATCHDOG_USEC/2 from the loop ...
            await wait_until(
                lambda: len([t for t in notify.times("WATCHDOG=1") if t > ready_at]) >= 7,
                timeout=8.0,
                what="7 pings after READY",
            )
            recent = [t for t in notify.times("WATCHDOG=1") if t > ready_at]
            gaps = [b - a for a, b in itertools.pairwise(recent)]
            assert len(recent) >= 7
            assert max(gaps) < 0.2, gaps  # never late enough for systemd to act
            # ... and none while the loop is wedged: systemd would kill and restart us.
            stalled_at = time.monotonic()
            # Stays: the stall is what is under test (a blocking call wedges the loop for 0.6 s).
            time.sleep(0.6)  # noqa: ASYNC251 - the wedge under test
            resumed_at = time.monotonic()
            await wait_until(
                lambda: [t for t in notify.times("WATCHDOG=1") if t > resumed_at],
                timeout=8.0,
                what="a ping after the stall",
            )
            pings = notify.times("WATCHDOG=1")
            assert not [t for t in pings if stalled_at + 0.01 < t < resumed_at - 0.01]
            assert [t for t in pings if t > resumed_at], "pings resume after the stall"
        finally:
            service.cancel()
            await asyncio.wait({service})
    await wait_until(lambda: notify.times("STOPPING=1"), timeout=8.0, what="STOPPING=1")
    assert not [t for t in notify.times("WATCHDOG=1") if t > notify.times("STOPPING=1")[0]]


async def test_ready_comes_anyway_when_the_broker_stays_down(
    tmp_path: Path, mosquitto: MosquittoProcess, notify: NotifyListener
) -> None:
    # A table must journal with its broker down (contracts §7): READY is bounded, with a status.
    mosquitto.stop()
    async with sim_wheel(tmp_path / "wheel") as wheel:
        config = roulette_config(TABLE, wheel.link, tmp_path / "j.sqlite", mosquitto.url)
        service = asyncio.create_task(run_table(config, ready_timeout=0.5))
        try:
            await wait_until(lambda: notify.times("READY=1"), timeout=8.0, what="READY=1")
            message = next(m for m in notify.messages() if "READY=1" in m)
            assert "broker DOWN" in message
        finally:
            service.cancel()
            await asyncio.wait({service})


@contextlib.asynccontextmanager
async def metered_table(
    tmp_path: Path, broker: MosquittoProcess, faults: list[str]
) -> AsyncIterator[tuple[Metrics, TableApp, SimWheel]]:
    """A running table with a metrics endpoint on a free port, once it is ready."""
    port = free_port()
    apps: list[TableApp] = []
    async with sim_wheel(tmp_path / "wheel", faults=faults) as wheel:
        config = roulette_config(TABLE, wheel.link, tmp_path / "j.sqlite", broker.url)
        service = asyncio.create_task(
            run_table(
                config,
                on_ready=apps.append,
                metrics_listen=f"127.0.0.1:{port}",
                notifier=Notifier(None),
            )
        )
        try:
            await wait_until(lambda: apps, timeout=8.0, what="ready")
            metrics = Metrics(port)
            await metrics.refresh()
            yield metrics, apps[0], wheel
        finally:
            service.cancel()
            await asyncio.wait({service})


class Metrics:
    """The last scrape of an endpoint, and lookups in it."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.body = ""

    async def refresh(self) -> str:
        status, self.body = await scrape(self.port)
        assert status == 200
        return self.body

    def __call__(self, name: str, **labels: str) -> float:
        value = sample(self.body, name, **labels)
        return 0.0 if value is None else value


TABLE_LABELS = {"table": TABLE}
WHEEL = {**TABLE_LABELS, "device": "wheel"}


async def test_metrics_count_rounds_voids_verdicts_decode_errors_and_publish_latency(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    async with metered_table(tmp_path, mosquitto, ["garbage@1", "misspin@2"]) as (m, app, _):
        assert m("tablectl_table_up", **TABLE_LABELS) == 1
        assert m("tablectl_mqtt_connected", **TABLE_LABELS) == 1
        assert m("tablectl_device_available", **WHEEL) == 1
        assert m("tablectl_journal_size_bytes", **TABLE_LABELS) > 0
        first_events = m("tablectl_device_events_total", **WHEEL)

        # Rounds play: garbage in game 1 is counted, a misspin voids game 2, game 3 settles.
        deadline = time.monotonic() + 8
        while not (
            m("tablectl_outcomes_total", status="void")
            and m("tablectl_outcomes_total", status="settled") >= 2
        ):
            assert time.monotonic() < deadline, m.body
            await asyncio.sleep(0.1)
            await m.refresh()
        void = {**TABLE_LABELS, "status": "void", "reason": "same_direction"}
        assert m("tablectl_outcomes_total", **void) == 1
        assert m("tablectl_device_decode_errors_total", **WHEEL) > 0
        assert m("tablectl_device_events_total", **WHEEL) > first_events
        # Every record journaled here is timed once its PUBACK arrives.
        assert m("tablectl_publish_latency_seconds_count", **TABLE_LABELS) > 0
        assert m("tablectl_publish_latency_seconds_sum", **TABLE_LABELS) > 0
        assert m("tablectl_journal_last_seq", **TABLE_LABELS) <= app.journal.last_seq

        # A command that breaks the rules: counted as a command and as a verdict.
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            await client.subscribe(f"it/{TABLE}/cmd/event/reply", qos=1)
            request = {"id": 7, "event": {"type": "card", "card": "KH"}}
            await client.publish(f"it/{TABLE}/cmd/event", json.dumps(request), qos=1)
            async with asyncio.timeout(5):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    assert json.loads(message.payload)["id"] == 7
                    break
        await m.refresh()
        assert m("tablectl_verdicts_total", **TABLE_LABELS, code=NOT_FOR_THIS_GAME) == 1
        assert m("tablectl_commands_total", **TABLE_LABELS, verb="event") == 1
        assert (await scrape(m.port, "/nope"))[0] == 404


async def test_metrics_show_the_outbox_filling_while_the_broker_is_down_and_an_unplugged_wheel(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    async with metered_table(tmp_path, mosquitto, []) as (m, app, wheel):
        # Ready does not wait for the power-on record's PUBACK: the outbox empties right after.
        async def drained() -> bool:
            await m.refresh()
            return m("tablectl_outbox_depth", **TABLE_LABELS) == 0

        await wait_until(drained, timeout=8.0, what="the outbox's depth at 0 at start")
        # Broker down: what is journaled now waits in the outbox ...
        mosquitto.stop()
        await wait_until(lambda: not app.publisher.connected, timeout=8.0, what="disconnect")
        seq = app.journal.last_seq
        await wait_until(lambda: app.journal.last_seq > seq + 2, timeout=8.0, what="new records")
        await m.refresh()
        assert m("tablectl_mqtt_connected", **TABLE_LABELS) == 0
        assert m("tablectl_outbox_depth", **TABLE_LABELS) > 0
        assert m("tablectl_mqtt_disconnects_total", **TABLE_LABELS) >= 1
        # ... and drains once it is back.
        mosquitto.start()
        await wait_until(lambda: app.publisher.connected, timeout=8.0, what="reconnect")
        await wait_until(lambda: _outbox(app) == 0, timeout=8.0, what="outbox drained")
        # The wheel plays on, so a record may be in flight at any instant: poll the scrape.
        deadline = time.monotonic() + 5
        while (await m.refresh()) and m("tablectl_outbox_depth", **TABLE_LABELS) != 0:
            assert time.monotonic() < deadline, m.body
            await asyncio.sleep(0.02)

        # The wheel is unplugged: availability drops, the disconnect is counted.
        await wheel.unplug()
        await wait_until(
            lambda: not app.runner.drivers[0].available, timeout=8.0, what="wheel down"
        )
        await m.refresh()
        assert m("tablectl_device_available", **WHEEL) == 0
        assert m("tablectl_device_disconnects_total", **WHEEL) >= 1


def _outbox(app: TableApp) -> int:
    pending = app.journal.unpublished(1)
    return 0 if not pending else app.journal.last_seq - int(pending[0]["seq"]) + 1
