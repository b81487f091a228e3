"""``cmd/resend``: a table publishes again, on ``events``, what a consumer (the archive) missed.

Real journal, real Mosquitto, a blackjack table with its hole card scanned face down: the resent
records are byte for byte what the outbox published (the hole card still withheld), only on
``events`` (the retained outcome keeps the newest), and bounded by the per-table budget.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import aiomqtt
import pytest

from tablectl.controller.config import parse_config
from tablectl.controller.core.events import BetsClosed, Card, Decision, RoundOpen
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.publisher import RESEND_CHUNK, RESEND_PAUSE
from tablectl.controller.service.app import TableApp, open_table
from tablectl.controller.service.runner.resend import (
    MAX_RESEND,
    RATE_LIMITED,
    RESEND_RATE,
    ResendBudget,
    Resender,
    ResendRefusedError,
)
from tablectl.drivers.clock import ManualClock
from tests.support.events import roulette_spin
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Received, Subscriber
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
                await app.runner.queue.submit(event)
            hole = (await app.runner.queue.submit(Card(card="QC")))[0]
            await app.runner.queue.submit(Decision(box=1, action="stand"))
            await app.runner.queue.submit(Card(card="2S"))
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
            budget = app.runner.commands.resender.budget
            budget.rate = 1e-6
            budget.take(MAX_RESEND, now=time.time())
            limited = await _ask(mosquitto, "BJ-RS", {"id": "a4", "from_seq": 1, "to_seq": 2})
            assert (limited["ok"], limited["code"]) == (False, "rate_limited")
            assert "retry in" in str(limited["error"])
        finally:
            task.cancel()


def test_a_request_the_budget_cannot_cover_whole_is_refused_not_cut() -> None:
    """Issue 26: partial grants meant a request was never ``rate_limited``."""
    budget = ResendBudget(rate=100.0, burst=1000)
    assert budget.take_all(900, now=0.0)
    assert not budget.take_all(200, now=0.0)  # 100 left: nothing taken
    assert budget.retry_after(200) == pytest.approx(1.0)
    assert budget.take_all(100, now=0.0)


async def test_each_requester_has_its_own_budget(tmp_path: Path) -> None:
    """An anonymous flood spends the anonymous budget, never a signed archive's."""
    journal = Journal(tmp_path / "j.sqlite", "T1")
    with journal:
        journal.append([{"type": "round_open", "ts": "2026-11-30T10:00:00Z"}] * 50)
        journal.mark_published(journal.last_seq)
        resender = Resender(
            journal, _Recorder(), ManualClock(0.0), ResendBudget(rate=1.0, burst=60)
        )
        body = {"from_seq": 1, "to_seq": 50}
        assert (await resender.resend(body))["count"] == 50
        with pytest.raises(ResendRefusedError) as refused:
            await resender.resend(body)
        assert refused.value.code == RATE_LIMITED
        assert "retry in" in str(refused.value)
        assert (await resender.resend(body, "archive:archive-1"))["count"] == 50


class _Recorder:
    """The runner's outputs for a resender: what it queued."""

    key: bytes | None = None

    def __init__(self) -> None:
        self.queued: list[bytes] = []

    def republish(self, payloads: Sequence[bytes]) -> bool:
        self.queued.extend(payloads)
        return True


SPINS = 16


def test_the_publisher_paces_resends_at_the_budgets_rate() -> None:
    assert pytest.approx(RESEND_RATE) == RESEND_CHUNK / RESEND_PAUSE


async def test_a_resend_burst_goes_out_behind_live_play(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """Issue 26: a 10,000-record resend delayed an outcome by 2.1 s. Resent records now wait
    while the outbox has records of its own: a live outcome finds a few chunks of them ahead of
    it at most (those sent while its commit was being fsync'd), never the burst, and its
    latency stays within 1.25x of the same table's without a resend.

    Latency on a shared 2-core machine is noisy: a pair of measurements (quiet, then during a
    burst) is taken up to :data:`ATTEMPTS` times and one pair within the bound passes — the
    defect this guards against multiplied the latency by 20."""
    path = tmp_path / "rou.sqlite"
    with Journal(path, "ROU-RS") as journal:  # a day of play, published
        for _ in range(20):
            journal.append([_spin_record(n) for n in range(100)])
        journal.mark_published(journal.last_seq)
    config = parse_config(
        {
            "table": {"id": "ROU-RS", "game": "roulette"},
            "mqtt": {"url": mosquitto.url, "topic_prefix": "it"},
            "journal": {"path": str(path)},
        }
    )
    pairs: list[tuple[list[float], list[float]]] = []
    async with (
        Subscriber(mosquitto.host, mosquitto.port, "it/ROU-RS/outcome") as outcomes,
        Subscriber(mosquitto.host, mosquitto.port, "it/ROU-RS/events") as events,
        open_table(config) as app,
    ):
        task = asyncio.create_task(app.runner.run())
        try:
            async with asyncio.timeout(5):
                await app.publisher.wait_connected()
            for attempt in range(ATTEMPTS):
                await wait_until(lambda: not app.publisher.resending, what="no resend left")
                quiet = [await _outcome_latency(app, outcomes) for _ in range(SPINS)]
                body = {"id": f"burst-{attempt}", "from_seq": 1, "to_seq": 2000}
                reply = await _ask(mosquitto, "ROU-RS", body)
                assert (reply["ok"], reply["count"]) == (True, 2000), reply
                live_from = app.journal.last_seq + 1
                mark = len(events.messages)
                busy = [await _outcome_latency(app, outcomes) for _ in range(SPINS)]
                ahead = _resent_before_first_live(events.messages[mark:], live_from)
                # Behind live play: a few chunks at most, never the burst.
                assert ahead <= 8 * RESEND_CHUNK, ahead
                pairs.append((quiet, busy))
                if _within(quiet, busy):
                    break
        finally:
            task.cancel()
    assert _within(*pairs[-1]), pairs


ATTEMPTS = 3


def _within(quiet: list[float], busy: list[float]) -> bool:
    """Median latency during a burst within 1.25x of the quiet one (2 ms of slack for noise;
    before: p50 4 ms -> 78 ms with one resend per round)."""
    base, during = statistics.median(quiet), statistics.median(busy)
    return during <= max(1.25 * base, base + 0.002)


def _spin_record(number: int) -> dict[str, object]:
    """A record of the past (not an event: recovery has nothing to replay for it)."""
    return {"type": "history", "ts": "2026-11-30T10:00:00Z", "n": number}


async def _outcome_latency(app: TableApp, outcomes: Subscriber) -> float:
    """Seconds from a spin's last event handed to the runner to its ``outcome``."""
    for event in roulette_spin(17)[:-1]:
        await app.runner.queue.submit(replace(event, ts=None))
    started = time.perf_counter()
    records = await app.runner.queue.submit(replace(roulette_spin(17)[-1], ts=None))
    outcome = next(r.seq for r in records if r.type == "outcome")
    await outcomes.wait_for(lambda m: m.json().get("seq") == outcome, timeout=10)
    return time.perf_counter() - started


def _resent_before_first_live(messages: Sequence[Received], live_from: int) -> int:
    """How many resent records arrived before the first live record after the resend."""
    count = 0
    for message in messages:
        if message.json()["seq"] >= live_from:
            return count
        count += 1
    return count
