"""A card dealt face down never leaves the table before its reveal (seed-000 L79).

Blackjack with the hole card read by the scanner (seed-002-004 BJ 3.7): the journal keeps it in
full; the events topic carries it withheld; the outcome reveals it. Real journal, real Mosquitto.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.core.events import BetsClosed, Card, Decision, RoundOpen
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


async def test_the_hole_card_is_withheld_until_the_outcome(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    config = parse_config(
        {
            "table": {"id": "BJ-FD", "game": "blackjack"},
            "rules": {"boxes": 1, "hole_card": "scanned"},
            "mqtt": {"url": mosquitto.url, "topic_prefix": "it"},
            "journal": {"path": str(tmp_path / "bj.sqlite")},
        }
    )
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/BJ-FD/#") as sub,
        open_table(config) as app,
    ):
        task = asyncio.create_task(app.runner.run())
        try:
            # Box 1, dealer up card, box 1, dealer hole card (scanned), the player stands.
            for event in (RoundOpen(), BetsClosed(), *(Card(card=c) for c in ("TS", "6D", "9H"))):
                await app.runner.queue.submit(event)
            hole = await app.runner.queue.submit(Card(card="QC"))
            assert hole[0]["face_down"] is True
            assert hole[0]["card"] == "QC"  # the journal keeps it in full
            withheld = await sub.wait_for(
                lambda m: m.topic == "it/BJ-FD/events" and m.json()["seq"] == hole[0]["seq"]
            )
            assert withheld.json()["card"] is None
            assert withheld.json()["withheld"] is True
            assert b"QC" not in b"".join(m.payload for m in sub.messages)
            await app.runner.queue.submit(Decision(box=1, action="stand"))
            await app.runner.queue.submit(Card(card="2S"))  # the dealer's 16 draws (BJ §22): 18
            outcome = await sub.wait_for(lambda m: m.topic == "it/BJ-FD/outcome", timeout=5)
        finally:
            task.cancel()
    assert "QC" in outcome.payload.decode()  # revealed with the result
