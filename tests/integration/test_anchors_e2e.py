"""Keyed anchors end to end: the service journals them on its timer, the broker retains the newest
one (again after a restart that lost it), and ``verify --key --anchor`` checks the stopped journal
against that off-machine copy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.config import JournalConfig
from tablectl.controller.journal import ANCHOR, canonical_json
from tablectl.controller.service.app import TableApp
from tablectl.controller.service.process import run_table
from tablectl.controller.tools.cli import main
from tests.support.mosquitto import MosquittoProcess
from tests.support.tables import roulette_config, sim_wheel
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

TABLE = "ROU-ANC"
TOPIC = f"it/{TABLE}/anchor"


async def _retained_anchor(mosquitto: MosquittoProcess) -> dict[str, Any]:
    """The retained anchor a late subscriber gets (waits for it, bounded)."""
    async with asyncio.timeout(15), aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
        await client.subscribe(TOPIC, qos=1)
        async for message in client.messages:
            assert isinstance(message.payload, bytes)
            record: dict[str, Any] = json.loads(message.payload)
            return record
    raise AssertionError("no retained anchor")  # pragma: no cover - the loop returns or times out


async def test_anchors_are_journaled_retained_and_checked_against_the_journal(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    key = tmp_path / "etc" / "journal.key"
    key.parent.mkdir()
    key.write_text("0b9f3e1c7a5d2f4e6a8c0e2f4a6c8e0f\n", encoding="utf-8")
    key.chmod(0o600)
    journal = tmp_path / "var" / "j.sqlite"
    journal.parent.mkdir()
    apps: list[TableApp] = []
    async with sim_wheel(tmp_path / "wheel") as wheel:
        keyed = JournalConfig(path=journal, key_file=key, anchor_seconds=1)
        config = roulette_config(TABLE, wheel.link, journal, mosquitto.url)
        config = config.model_copy(update={"journal": keyed})
        service = asyncio.create_task(run_table(config, on_ready=apps.append))
        try:
            await wait_until(lambda: apps, 15.0, what="the table to be ready")
            app = apps[0]
            await wait_until(
                lambda: app.journal.last_record_of_type(ANCHOR), 15.0, what="a timed anchor"
            )
            first = await _retained_anchor(mosquitto)
            assert first["type"] == ANCHOR
            assert first["head_seq"] == first["seq"] - 1
            # A broker restarted without persistence has lost it: the publisher brings the
            # journal's newest anchor back on reconnect.
            mosquitto.stop()
            mosquitto.start()
            await wait_until(lambda: app.publisher.connected, 15.0, what="the reconnect")
            again = await _retained_anchor(mosquitto)
            assert again["seq"] >= first["seq"]
        finally:
            service.cancel()
            await asyncio.wait({service})
    published = tmp_path / "anchor.json"
    published.write_text(canonical_json(again), encoding="utf-8")
    assert main(["verify", "--key", str(key), "--anchor", str(published), str(journal)]) == 0
