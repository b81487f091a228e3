"""A Dream Catcher table end to end: simulated wheel sensor on a TCP port (pyserial
``socket://``) → the real driver, engine, journal and publisher → a real Mosquitto."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tablectl.controller.engines import load_rules as preset_rules
from tablectl.controller.lab.dealer import SimulatedPresenter
from tablectl.controller.lab.tables import start_wheel_table
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_spins_become_outcomes_with_the_segment_under_the_pointer(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    layout = preset_rules("dream_catcher").segments
    stops = [3, 17, 40, 8]
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/DC-E2E/#") as sub,
        asyncio.TaskGroup() as group,
    ):
        config = await start_wheel_table(
            group,
            tmp_path / "dc.sqlite",
            table_id="DC-E2E",
            speed=40,
            every=20,
            stops=stops,
            prefix="it",
            mqtt_url=mosquitto.url,
        )
        async with open_table(config, broker=(mosquitto.host, mosquitto.port)) as app:
            table = group.create_task(app.runner.run())
            host = SimulatedPresenter(app.runner, betting=0.1, rounds=0)
            presenter = group.create_task(host.run())
            try:
                await sub.wait_until(
                    lambda ms: sum(m.topic == "it/DC-E2E/outcome" for m in ms) >= 2, timeout=60
                )
            finally:
                for task in (presenter, table, *group._tasks):
                    task.cancel()
    outcomes = sub.payloads("it/DC-E2E/outcome")
    spins = [s for o in outcomes for s in o["result"]["spins"]]
    # Each spin's segment is the layout's label at the index the sensor reported.
    assert all(layout[s["index"]] == s["segment"] for s in spins)
    assert [s["index"] for s in spins][: len(spins)] == stops[: len(spins)]
    assert all(o["status"] == "settled" for o in outcomes)
