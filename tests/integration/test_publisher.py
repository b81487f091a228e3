"""The publisher against a real Mosquitto: order, retained topics, Last Will, outages, commands.

The invariant under test (contracts §7): every journaled record reaches the broker, in seq order,
and is marked published only after its PUBACKs; outages cost duplicates, never gaps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.errors import ConfigError, JournalError
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.publisher import Publisher, broker_address
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber, TcpProxy
from tests.support.outbox import TABLE, TOPICS, AckLedger, has_seqs, publisher, rec, seqs
from tests.support.waiting import wait_until

ALL = f"{TOPICS.base}/#"


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite", TABLE) as j:
        yield j


# -- broker_address (pure) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mqtt://broker", ("broker", 1883, False)),
        ("mqtts://broker", ("broker", 8883, True)),
        ("mqtt://127.0.0.1:1884", ("127.0.0.1", 1884, False)),
        ("mqtts://[::1]:9999/", ("::1", 9999, True)),
    ],
)
def test_broker_address(url: str, expected: tuple[str, int, bool]) -> None:
    assert broker_address(url) == expected


@pytest.mark.parametrize(
    "url", ["embedded", "http://x", "mqtt://", "mqtt://h:99999", "mqtt://h:1/path"]
)
def test_broker_address_refuses(url: str) -> None:
    with pytest.raises(ConfigError, match=r"mqtt\.url"):
        broker_address(url)


# -- against Mosquitto ---------------------------------------------------------------------


@pytest.mark.broker
async def test_records_arrive_in_order_on_their_topics(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    ledger = AckLedger(journal, TOPICS)
    async with (
        Subscriber(mosquitto.host, mosquitto.port, ALL) as sub,
        publisher(journal, mosquitto.port, trace=ledger) as pub,
    ):
        online = await sub.wait_for(lambda m: m.topic == TOPICS.status)
        assert online.json() == {
            "schema": 1,
            "state": "online",
            "table": TABLE,
            "ts": online.json()["ts"],
        }
        batch = [rec(i=i) for i in range(40)]
        batch[10] = rec("outcome", round="R-1", status="settled")
        batch[20] = rec("fault", code="shoe_removed")
        batch[30] = rec("fault_cleared", code="shoe_removed")
        for start in range(0, 40, 7):  # several appends while the drain is running
            journal.append(batch[start : start + 7])
            pub.notify()
        await sub.wait_until(has_seqs(40))
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )

    assert seqs(sub.messages) == list(range(1, 41))
    assert seqs(sub.messages, TOPICS.outcome) == [11]
    assert seqs(sub.messages, TOPICS.alarms) == [21, 31]
    assert sub.on(TOPICS.events)[0].json() == next(journal.records())
    assert ledger.violations == []
    assert ledger.marked == 40
    # Graceful exit said goodbye itself (with a ts, unlike the Last Will).
    goodbye = sub.on(TOPICS.status)[-1].json()
    assert goodbye["state"] == "offline"
    assert "ts" in goodbye


@pytest.mark.broker
async def test_backlog_from_before_start_is_published(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    journal.append([rec(i=i) for i in range(250)])  # as after a restart with a broker outage
    async with (
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
        publisher(journal, mosquitto.port),
    ):
        await sub.wait_until(has_seqs(250))
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )
    assert seqs(sub.messages) == list(range(1, 251))


@pytest.mark.broker
async def test_retained_outcome_and_state_for_late_subscriber(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    async with publisher(journal, mosquitto.port) as pub:
        pub.set_retained(TOPICS.state, {"phase": "betting", "round": "R-1"})
        pub.set_retained(TOPICS.state, {"phase": "dealing", "round": "R-1"})  # coalesces
        pub.set_retained(TOPICS.device("shoe"), {"available": True, "faults": []})
        journal.append([rec("outcome", round="R-1"), rec(), rec("outcome", round="R-2"), rec()])
        pub.notify()
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )
        topics = [TOPICS.outcome, TOPICS.state, TOPICS.device("shoe"), TOPICS.status]
        async with Subscriber(mosquitto.host, mosquitto.port, topics) as late:
            await late.wait_until(lambda ms: len({m.topic for m in ms}) == 4)
    outcome = late.on(TOPICS.outcome)
    assert [(m.retain, m.json()["round"]) for m in outcome] == [(True, "R-2")]
    state = late.on(TOPICS.state)[-1]
    assert state.retain
    assert state.json() == {"schema": 1, "phase": "dealing", "round": "R-1"}
    assert late.on(TOPICS.status)[0].json()["state"] == "online"


@pytest.mark.broker
async def test_last_will_when_connection_is_cut_then_reconnects(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    async with (
        TcpProxy(mosquitto.host, mosquitto.port) as proxy,
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.status) as sub,
        publisher(journal, proxy.port) as pub,
    ):
        await sub.wait_for(lambda m: m.json()["state"] == "online")
        proxy.cut()  # the table's network goes away without a DISCONNECT
        will = await sub.wait_for(lambda m: m.json()["state"] == "offline")
        assert will.json() == {"schema": 1, "state": "offline", "table": TABLE}
        # ...and it comes back by itself, with a fresh birth message.
        await sub.wait_until(lambda ms: [m.json()["state"] for m in ms][-1:] == ["online"])
        # Two connects, each of two TCP connections: the table's (aiomqtt: status, Will,
        # commands) and its outbox's own (controller/mqtt/wire.py).
        assert proxy.connections == 2 * 2
        journal.append([rec()])
        pub.notify()
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )


@pytest.mark.broker
async def test_broker_restart_loses_nothing(mosquitto: MosquittoProcess, journal: Journal) -> None:
    ledger = AckLedger(journal, TOPICS)
    burst_under_way = asyncio.Event()

    def trace(what: str, details: Mapping[str, Any]) -> None:
        ledger(what, details)
        if what == "marked" and details["up_to"] > 10:  # the burst's first batch is in
            burst_under_way.set()

    async with (
        TcpProxy(mosquitto.host, mosquitto.port) as proxy,
        publisher(journal, proxy.port, trace=trace, batch_size=20) as pub,
    ):
        pub.set_retained(TOPICS.state, {"phase": "idle"})
        async with Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as before:
            journal.append([rec(i=i) for i in range(10)])
            pub.notify()
            await before.wait_until(has_seqs(10))
            # A burst, and the broker dies while it is in flight (stop() blocks the loop, so
            # the publisher cannot finish the burst before the broker is gone).
            journal.append([rec(i=i) for i in range(300)])
            pub.notify()
            async with asyncio.timeout(3):
                await burst_under_way.wait()
            mosquitto.stop()
            proxy.pause()  # refuse reconnects until our subscriber is back (no race)
            await wait_until(lambda: not pub.connected, 3, what="the publisher to disconnect")
        marked_at_outage = ledger.marked
        assert marked_at_outage < 310, "the outage must interrupt the burst to test anything"

        journal.append([rec(i=i) for i in range(20)])  # journaled while the broker is down
        pub.notify()
        mosquitto.start()  # same port, no persistence: retained state is gone
        async with Subscriber(mosquitto.host, mosquitto.port, ALL) as after:
            await proxy.resume()
            await after.wait_until(has_seqs(330), timeout=4)
            await wait_until(
                lambda: journal.unpublished() == [], 3, what="the journal to be all published"
            )

    seen_before = seqs(before.messages)
    seen_after = seqs(after.messages)
    assert seen_before == list(range(1, len(seen_before) + 1))
    # Resumes exactly from the first unmarked record, in order, without gaps. (Records the
    # broker acknowledged but had not delivered when it died are the broker's to lose:
    # `persistence false` here; end-to-end delivery across a broker crash needs a persistent
    # broker and subscriber sessions. The network-cut test below checks the union.)
    assert seen_after == list(range(marked_at_outage + 1, 331))
    assert ledger.violations == []
    # Retained slots were re-published to the fresh broker.
    assert after.payloads(TOPICS.state)[-1] == {"schema": 1, "phase": "idle"}
    assert "disconnected" in ledger.events


@pytest.mark.broker
async def test_a_fresh_broker_gets_the_journals_last_outcome_retained(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    """Reproduced: after a broker restart without persistence (or a fail-over to a fresh
    broker) ``status``, ``state`` and ``devices/*`` came back, the retained ``outcome`` not."""
    journal.append([rec("outcome", round="R-1", status="settled", result={"number": 17})])
    journal.append([rec("outcome", round="R-2", status="void", reason="no_spin"), rec(i=1)])
    last = journal.last_record_of_type("outcome")
    async with publisher(journal, mosquitto.port) as pub:
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )
        mosquitto.stop()
        await wait_until(lambda: not pub.connected, 3, what="the publisher to disconnect")
        mosquitto.start()  # same port, nothing retained: the journal is the only copy now
        await wait_until(lambda: pub.connected, 3, what="the publisher to reconnect")
        # A subscriber that arrives after the reconnect gets the outcome from the broker alone.
        async with Subscriber(mosquitto.host, mosquitto.port, TOPICS.outcome) as late:
            got = await late.wait_for(lambda m: m.topic == TOPICS.outcome, timeout=3)
    assert got.retain is True
    assert got.json() == last
    assert (got.json()["round"], got.json()["seq"]) == ("R-2", 2)


class MarkRefusingJournal(Journal):
    """A real journal whose ``mark_published`` fails like a full disk while ``full`` is set (a
    real disk cannot be made to refuse exactly that UPDATE)."""

    full = False
    refused = 0

    def mark_published(self, up_to_seq: int) -> None:
        if self.full:
            self.refused += 1
            raise JournalError(f"{self.path}: cannot mark records up to seq {up_to_seq}: full")
        super().mark_published(up_to_seq)


@pytest.mark.broker
async def test_a_mark_the_disk_refuses_keeps_the_connection_and_sends_nothing_twice(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    """Found by the fault suite: a failed mark ended the broker session, so every reconnect
    re-sent the unmarked records and the journal outage's alarm (sent while not connected)
    was lost. Now the mark waits; the connection and the commands stay."""
    ledger = AckLedger(MarkRefusingJournal(tmp_path / "m.sqlite", TABLE), TOPICS)
    journal = ledger.journal
    assert isinstance(journal, MarkRefusingJournal)
    with journal:
        async with (
            Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
            publisher(journal, mosquitto.port, trace=ledger) as pub,
        ):
            journal.full = True
            for i in range(3):
                journal.append([rec(i=i)])
                pub.notify()
                await sub.wait_until(has_seqs(i + 1))
            # Three drains, each with its mark refused (a PUBACK comes after the delivery).
            await wait_until(lambda: journal.refused >= 3, what="3 refused marks")
            assert pub.connected
            assert len(journal.unpublished()) == 3
            journal.full = False
            journal.append([rec(i=3)])
            pub.notify()
            await sub.wait_until(has_seqs(4))
            await wait_until(
                lambda: journal.unpublished() == [], 3, what="the journal to be all published"
            )
        assert seqs(sub.messages) == [1, 2, 3, 4]  # each once: nothing re-sent
        assert "disconnected" not in ledger.events
        assert ledger.violations == []


@pytest.mark.broker
async def test_network_cut_mid_burst_duplicates_but_no_gaps(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    ledger = AckLedger(journal, TOPICS)
    burst_from = [0]
    burst_under_way = asyncio.Event()

    def trace(what: str, details: Mapping[str, Any]) -> None:
        ledger(what, details)
        if what == "puback" and details["seq"] > burst_from[0]:
            burst_under_way.set()

    async with (
        TcpProxy(mosquitto.host, mosquitto.port) as proxy,
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
        publisher(journal, proxy.port, trace=trace, batch_size=25) as pub,
    ):
        for cut in range(3):
            burst_from[0] = journal.last_seq
            burst_under_way.clear()
            journal.append([rec(cut=cut, i=i) for i in range(200)])
            pub.notify()
            # The burst's first PUBACK is in: the cut comes (synchronously) with the rest of
            # its batch and 7 more batches still to go.
            async with asyncio.timeout(15):
                await burst_under_way.wait()
            proxy.cut()  # PUBLISHes and PUBACKs in flight are lost both ways
        await sub.wait_until(has_seqs(600), timeout=30)
        await wait_until(
            lambda: journal.unpublished() == [], 3, what="the journal to be all published"
        )
    seen = seqs(sub.messages)
    first_seen = list(dict.fromkeys(seen))
    assert first_seen == list(range(1, 601))  # every seq, first deliveries in order
    assert ledger.violations == []
    # Each cut came while both of the table's connections were up (a PUBACK had just come on
    # the outbox's, which opens after the main one) and was followed by a reconnect of both:
    # the first connect and three reconnects, two TCP connections each.
    assert proxy.connections >= 4 * 2


@pytest.mark.broker
async def test_commands_round_trip(mosquitto: MosquittoProcess, journal: Journal) -> None:
    calls: list[tuple[str, bytes]] = []

    async def on_command(verb: str, payload: bytes) -> Mapping[str, Any]:
        calls.append((verb, payload))
        if verb == "boom":
            raise RuntimeError("handler bug")
        return {"ok": True, "id": "c-1", "verb": verb}

    async with (
        publisher(journal, mosquitto.port, on_command=on_command),
        Subscriber(mosquitto.host, mosquitto.port, f"{TOPICS.base}/cmd/+/reply") as sub,
        Subscriber(mosquitto.host, mosquitto.port, "unused/#") as commander,
    ):
        client = commander._client
        await client.publish(TOPICS.command("boom"), b'{"id":"c-0"}', qos=1)
        failed = await sub.wait_for(lambda m: m.topic == TOPICS.reply("boom"))
        assert failed.json() == {
            "schema": 1,
            "ok": False,
            "id": "c-0",
            "error": "RuntimeError: handler bug",
        }
        assert not failed.retain
        await client.publish(TOPICS.command("void"), b'{"id":"c-1"}', qos=1)
        ok = await sub.wait_for(lambda m: m.topic == TOPICS.reply("void"))
        assert ok.json() == {"schema": 1, "ok": True, "id": "c-1", "verb": "void"}
    assert calls == [("boom", b'{"id":"c-0"}'), ("void", b'{"id":"c-1"}')]


@pytest.mark.broker
async def test_commands_without_handler_get_an_error_reply(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    async with (
        publisher(journal, mosquitto.port),
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.reply("void")) as sub,
    ):
        await sub._client.publish(TOPICS.command("void"), b'{"id":7}', qos=1)
        reply = await sub.wait_for(lambda m: True)
    assert reply.json()["ok"] is False
    assert reply.json()["id"] == 7


@pytest.mark.broker
async def test_reusable_not_reentrant(mosquitto: MosquittoProcess, journal: Journal) -> None:
    config = MqttConfig(url=mosquitto.url)
    pub = Publisher(config, TOPICS, journal, host=mosquitto.host, port=mosquitto.port)
    async with Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub:
        for round_no in (1, 2):
            async with pub:
                with pytest.raises(RuntimeError, match="not reentrant"):
                    await pub.__aenter__()
                journal.append([rec(round_no=round_no)])
                pub.notify()
                await sub.wait_until(has_seqs(round_no))
            assert not pub.connected


async def test_gives_up_quietly_when_no_broker(journal: Journal) -> None:
    # Nothing listens on this port: the loop keeps retrying with backoff and exits promptly.
    from tests.support.mosquitto import free_port  # noqa: PLC0415

    port = free_port()
    events: list[str] = []
    config = MqttConfig(url=f"mqtt://127.0.0.1:{port}", reconnect_max_delay=0.2)
    pub = Publisher(
        config, TOPICS, journal, host="127.0.0.1", port=port, trace=lambda w, d: events.append(w)
    )
    loop = asyncio.get_running_loop()
    began = loop.time()
    async with pub:
        await wait_until(lambda: events.count("disconnected") >= 3, what="3 refused connects")
        assert not pub.connected
        started = loop.time()
    assert loop.time() - started < 0.5
    # Backoff, not a busy loop: 0.05..0.1, then 0.1..0.2 s apart, so at most 2 tries in the
    # first 0.05 s and one more per 0.1 s after that (a slow machine only makes fewer).
    tried_for = loop.time() - began
    assert events.count("disconnected") <= 3 + tried_for / 0.1, (events, tried_for)
