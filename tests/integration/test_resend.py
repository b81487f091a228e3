"""``cmd/resend``: a table publishes again, on ``events``, what a consumer (the archive) missed.

Real journal, real Mosquitto, a blackjack table with its hole card scanned face down: the resent
records are byte for byte what the outbox published (the hole card still withheld), only on
``events`` (the retained outcome keeps the newest), and bounded by the per-table budget.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import aiomqtt
import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.core.events import BetsClosed, Card, Decision, RoundOpen
from tablectl.controller.service.app import open_table
from tablectl.controller.service.runner.resend import MAX_RESEND, ResendBudget
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]


def test_the_budget_grants_a_burst_then_the_rate() -> None:
    budget = ResendBudget(rate=100.0, burst=1000)
    assert budget.take(5000, now=0.0) == 1000  # the burst, not more
    assert budget.take(1, now=0.0) == 0
    assert budget.retry_after() == pytest.approx(0.01)
    assert budget.take(1000, now=2.0) == 200  # two seconds at 100/s
    budget.give_back(50)  # records the journal no longer held
    assert budget.take(1000, now=2.0) == 50
    assert budget.take(10_000, now=1e6) == 1000  # saved up to the burst only


async def _ask(
    mosquitto: MosquittoProcess, table: str, body: dict[str, object]
) -> dict[str, object]:
    """Publish ``cmd/resend`` and return the reply with its id."""
    async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=5) as client:
        await client.subscribe(f"it/{table}/cmd/resend/reply", qos=1)
        await client.publish(f"it/{table}/cmd/resend", json.dumps(body), qos=1)
        async with asyncio.timeout(5):
            async for message in client.messages:
                reply = json.loads(bytes(message.payload))  # type: ignore[arg-type]
                if reply.get("id") == body["id"]:
                    return dict(reply)
    raise AssertionError("no reply")


async def test_resent_records_are_what_the_outbox_published(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    config = parse_config(
        {
            "table": {"id": "BJ-RS", "game": "blackjack"},
            "rules": {"boxes": 1, "hole_card": "scanned"},
            "mqtt": {"url": mosquitto.url, "topic_prefix": "it"},
            "journal": {"path": str(tmp_path / "bj.sqlite")},
        }
    )
    events = "it/BJ-RS/events"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/BJ-RS/#") as sub,
        open_table(config) as app,
    ):
        task = asyncio.create_task(app.runner.run())
        try:
            # Connected first: a record journaled before the connection goes out twice (the
            # journal's last outcome is re-published on connect), which is not what is tested.
            async with asyncio.timeout(5):
                await app.publisher.wait_connected()
            for event in (RoundOpen(), BetsClosed(), *(Card(card=c) for c in ("TS", "6D", "9H"))):
                await app.runner.submit(event)
            hole = (await app.runner.submit(Card(card="QC")))[0]
            await app.runner.submit(Decision(box=1, action="stand"))
            await app.runner.submit(Card(card="2S"))
            last = app.journal.last_seq
            await sub.wait_for(lambda m: m.topic == events and m.json()["seq"] == last, timeout=5)
            await sub.wait_for(lambda m: m.topic == "it/BJ-RS/outcome", timeout=5)
            await wait_until(lambda: app.journal.unpublished_payloads(1) == [], what="all marked")
            first_pass = {m.json()["seq"]: m.payload for m in sub.on(events)}
            outcomes_before = len(sub.on("it/BJ-RS/outcome"))
            mark = len(sub.messages)

            reply = await _ask(mosquitto, "BJ-RS", {"id": "a1", "from_seq": 2, "to_seq": 10**9})
            assert reply["ok"] is True, reply
            assert (reply["count"], reply["from_seq"], reply["first_seq"]) == (last - 1, 2, 2)
            assert (reply["to_seq"], reply["published_seq"]) == (last, last)
            await sub.wait_until(
                lambda ms: len([m for m in ms[mark:] if m.topic == events]) >= last - 1
            )
            again = [m for m in sub.messages[mark:] if m.topic == events]
            assert [m.json()["seq"] for m in again] == list(range(2, last + 1))
            assert all(m.payload == first_pass[m.json()["seq"]] for m in again)  # byte for byte
            resent_hole = next(m.json() for m in again if m.json()["seq"] == hole.seq)
            assert (resent_hole["card"], resent_hole["withheld"]) == (None, True)
            assert b"QC" not in b"".join(m.payload for m in again if m.json()["type"] == "card")
            # Only on events: no second outcome, no anchor, nothing retained overwritten.
            assert len(sub.on("it/BJ-RS/outcome")) == outcomes_before

            beyond = await _ask(
                mosquitto, "BJ-RS", {"id": "a2", "from_seq": last + 1, "to_seq": last + 5}
            )
            assert (beyond["ok"], beyond["count"], beyond["to_seq"]) == (True, 0, last)
            bad = await _ask(mosquitto, "BJ-RS", {"id": "a3", "from_seq": 0, "to_seq": 1})
            assert (bad["ok"], bad["code"]) == (False, "bad_request")

            # The budget: the burst spent, the next request is refused until it refills.
            budget = app.runner._commands.resender.budget
            budget.rate = 1e-6
            budget.take(MAX_RESEND, now=time.time())
            limited = await _ask(mosquitto, "BJ-RS", {"id": "a4", "from_seq": 1, "to_seq": 2})
            assert (limited["ok"], limited["code"]) == (False, "rate_limited")
            assert "retry in" in str(limited["error"])
        finally:
            task.cancel()
