"""The outbox at wire speed against a real Mosquitto: PUBLISHes straight through paho, PUBACKs
counted by mid (controller/mqtt/wire.py, controller/mqtt/drain.py).

The invariant is the publisher's (DESIGN §7): a record is marked only once every route's PUBACK
is in and every earlier record's is; a lost connection costs duplicates, never a gap. Here the
PUBACKs are reordered or withheld on purpose (:class:`HeldWire`), which a broker on loopback
never does by itself.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import aiomqtt
import pytest
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

from tablectl.controller.journal import Journal
from tablectl.controller.mqtt import drain
from tablectl.controller.mqtt.wire import Wire, paho_client
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber, TcpProxy
from tests.support.outbox import TABLE, TOPICS, AckLedger, publisher, rec, seqs
from tests.support.waiting import wait_until

pytestmark = pytest.mark.broker

_Token = tuple[int, str]


class HeldWire(Wire[_Token]):
    """A :class:`Wire` whose first instance (the first connection) hands PUBACKs on as the test
    says; later ones (after a reconnect) pass them straight on.

    ``reverse``: hold each batch's PUBACKs until all of them are in, then deliver them last
    first (the later record before the earlier, the second route before the first).
    ``deliver``: pass on only the PUBACKs of these tokens (batch index, topic); the rest are
    never delivered (a broker that dies before acknowledging them).
    """

    reverse: ClassVar[bool] = False
    deliver: ClassVar[set[_Token] | None] = None
    instances: ClassVar[list[HeldWire]] = []

    def __init__(self, client: aiomqtt.Client, on_puback: Callable[[_Token], None]) -> None:
        super().__init__(client, on_puback)
        self.first = not self.instances
        self.instances.append(self)
        self.held: list[tuple[Any, ...]] = []
        self.received = 0

    def _on_publish(
        self,
        client: Any,
        userdata: Any,
        mid: int,
        reason_code: ReasonCode,
        properties: Properties,
    ) -> None:
        pass_on = super()._on_publish
        token = self._pending.get(mid)
        if not self.first or token is None:
            pass_on(client, userdata, mid, reason_code, properties)
            return
        self.received += 1
        if self.deliver is not None:
            if token in self.deliver:
                pass_on(client, userdata, mid, reason_code, properties)
            return
        self.held.append((client, userdata, mid, reason_code, properties))
        if self.reverse and len(self.held) == len(self._pending):
            held, self.held = self.held, []
            for args in reversed(held):
                pass_on(*args)


@pytest.fixture
def held_wire(monkeypatch: pytest.MonkeyPatch) -> type[HeldWire]:
    class Held(HeldWire):
        instances: ClassVar[list[HeldWire]] = []

    monkeypatch.setattr(drain, "Wire", Held)
    return Held


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.sqlite", TABLE) as j:
        yield j


def marks(events: list[tuple[str, Mapping[str, Any]]]) -> list[int]:
    return [details["up_to"] for what, details in events if what == "marked"]


async def test_pubacks_out_of_order_across_routes_mark_only_whole_prefixes(
    mosquitto: MosquittoProcess, journal: Journal, held_wire: type[HeldWire]
) -> None:
    held_wire.reverse = True
    ledger = AckLedger(journal, TOPICS)
    events: list[tuple[str, Mapping[str, Any]]] = []

    def trace(what: str, details: Mapping[str, Any]) -> None:
        ledger(what, details)
        events.append((what, dict(details)))

    kinds = ["card", "outcome", "fault", "card", "fault_cleared"]  # 1, 2, 2, 1, 2 routes
    journal.append([rec(kinds[i % len(kinds)], i=i) for i in range(30)])
    async with (
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
        publisher(journal, mosquitto.port, trace=trace, batch_size=10),
    ):
        await wait_until(lambda: journal.unpublished() == [], what="everything marked")
        await sub.wait_until(lambda ms: 30 in seqs(ms))
    acked = [(d["seq"], d["topic"]) for what, d in events if what == "puback"]
    # Each batch's PUBACKs came last first: its last record's second route first.
    assert acked[0] == (10, TOPICS.alarms)
    assert acked[10 + 6 - 1] == (1, TOPICS.events)  # 10 records, 6 of them with 2 routes
    # Nothing was marked before the batch's first record was acknowledged on every route.
    assert marks(events) == [10, 20, 30]
    assert ledger.violations == []
    assert seqs(sub.messages) == list(range(1, 31))  # the wire order is still journal order


async def test_a_broker_that_dies_mid_batch_marks_the_acked_prefix_and_resends_the_rest(
    mosquitto: MosquittoProcess, journal: Journal, held_wire: type[HeldWire]
) -> None:
    # The 4th record, an outcome, is acknowledged on events but never on outcome; the 5th and
    # 6th are acknowledged in full.
    held_wire.deliver = {(i, TOPICS.events) for i in range(6)}
    events: list[tuple[str, Mapping[str, Any]]] = []
    ledger = AckLedger(journal, TOPICS)

    def trace(what: str, details: Mapping[str, Any]) -> None:
        ledger(what, details)
        events.append((what, dict(details)))

    async with (
        TcpProxy(mosquitto.host, mosquitto.port) as proxy,
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
        publisher(journal, proxy.port, trace=trace, batch_size=10) as pub,
    ):
        journal.append([rec("outcome" if i == 3 else "card", i=i) for i in range(10)])
        pub.notify()
        await wait_until(lambda: held_wire.instances, what="the outbox on its first connection")
        first = held_wire.instances[0]
        await wait_until(lambda: first.received == 11, what="all 11 PUBACKs at the client")
        await sub.wait_until(lambda ms: 10 in seqs(ms))
        proxy.cut()  # the connection dies with records 4..10 unmarked
        await wait_until(lambda: journal.unpublished() == [], what="the rest, resent")
        await sub.wait_until(lambda ms: seqs(ms).count(10) == 2)
    # Records 5 and 6 were acknowledged, but after the half-acknowledged 4: not marked, so
    # they are sent again.
    assert seqs(sub.messages) == [*range(1, 11), *range(4, 11)]
    assert marks(events) == [3, 10]
    assert ledger.violations == []


async def test_a_missing_puback_past_the_deadline_rebuilds_the_connection(
    mosquitto: MosquittoProcess, journal: Journal, held_wire: type[HeldWire]
) -> None:
    held_wire.deliver = {(0, TOPICS.events), (1, TOPICS.events)}
    errors: list[str] = []

    def trace(what: str, details: Mapping[str, Any]) -> None:
        if what == "disconnected":
            errors.append(details["error"])

    async with (
        Subscriber(mosquitto.host, mosquitto.port, TOPICS.events) as sub,
        publisher(journal, mosquitto.port, trace=trace, batch_size=5, timeout=0.5) as pub,
    ):
        journal.append([rec(i=i) for i in range(5)])
        pub.notify()
        await wait_until(lambda: journal.unpublished() == [], what="everything marked")
        await sub.wait_until(lambda ms: seqs(ms).count(5) == 2)
    assert errors == ["no PUBACK within 0.5 s"]
    assert seqs(sub.messages) == [*range(1, 6), *range(3, 6)]


async def test_aiomqtts_own_publishes_complete_while_the_wire_runs(
    mosquitto: MosquittoProcess,
) -> None:
    acked: list[int] = []
    threads: set[int] = set()

    def on_puback(token: int) -> None:
        acked.append(token)
        threads.add(threading.get_ident())

    topic = f"{TOPICS.base}/events"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{TOPICS.base}/#") as sub,
        aiomqtt.Client(mosquitto.host, mosquitto.port, max_inflight_messages=100) as client,
    ):
        paho = paho_client(client)
        aiomqtts = paho.on_publish
        wire: Wire[int] = Wire(client, on_puback)
        for n in range(500):
            wire.publish(topic, b"%d" % n, retain=False, token=n)
        async with asyncio.timeout(5):
            # aiomqtt's publishes, queued behind the wire's in paho, complete as usual.
            for n in range(20):
                await client.publish(TOPICS.state, b"%d" % n, qos=1, retain=True)
            await wait_until(lambda: len(acked) == 500, what="500 PUBACKs")
        assert sorted(acked) == list(range(500))
        assert wire.in_flight == 0
        assert threads == {threading.get_ident()}  # on the loop's thread: asyncio state is safe
        wire.close()
        assert paho.on_publish == aiomqtts
        await client.publish(TOPICS.state, b"after", qos=1, retain=True)
        await sub.wait_until(lambda ms: len(ms) == 521)
    assert [m.payload for m in sub.on(topic)] == [b"%d" % n for n in range(500)]


async def test_a_publish_without_a_connection_is_an_mqtt_error(
    mosquitto: MosquittoProcess,
) -> None:
    client = aiomqtt.Client(mosquitto.host, mosquitto.port)
    async with client:
        wire: Wire[int] = Wire(client, lambda token: None)
    with pytest.raises(aiomqtt.MqttCodeError):
        wire.publish(TOPICS.events, b"{}", retain=False, token=1)


class ThreadRecordingJournal(Journal):
    """A real journal that notes which thread the outbox reads and marks it on."""

    threads: ClassVar[set[str]] = set()

    def unpublished_payloads(self, limit: int = 100, after: int = 0) -> list[Any]:
        self.threads.add(threading.current_thread().name)
        return super().unpublished_payloads(limit, after)

    def mark_published(self, up_to_seq: int) -> None:
        self.threads.add(threading.current_thread().name)
        super().mark_published(up_to_seq)


async def test_the_drain_reads_and_marks_on_the_journals_own_thread(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    with ThreadRecordingJournal(tmp_path / "t.sqlite", TABLE) as journal:
        journal.append([rec(i=i) for i in range(5)])
        async with publisher(journal, mosquitto.port):
            await wait_until(lambda: journal.unpublished() == [], what="everything marked")
        assert {name.split("_")[0] for name in journal.threads} == {f"journal-{TABLE}"}


async def test_commands_and_slots_go_through_while_a_backlog_drains(
    mosquitto: MosquittoProcess, journal: Journal
) -> None:
    journal.append([rec(i=i) for i in range(3000)])
    disconnected: list[Any] = []

    def trace(what: str, details: Mapping[str, Any]) -> None:
        if what == "disconnected":
            disconnected.append(details)

    async def on_command(verb: str, payload: bytes) -> dict[str, Any]:
        return {"ok": True, "verb": verb}

    reply_topic = TOPICS.reply("ping")
    async with (
        Subscriber(mosquitto.host, mosquitto.port, [TOPICS.state, reply_topic]) as sub,
        publisher(journal, mosquitto.port, trace=trace, on_command=on_command) as pub,
        aiomqtt.Client(mosquitto.host, mosquitto.port) as commander,
    ):
        pub.set_retained(TOPICS.state, {"phase": "betting"})
        await commander.publish(TOPICS.command("ping"), b'{"id": 7}', qos=1)
        await sub.wait_until(lambda ms: bool(sub.on(reply_topic)) and bool(sub.on(TOPICS.state)))
        await wait_until(lambda: journal.unpublished() == [], what="the backlog marked")
    assert sub.payloads(reply_topic)[-1]["ok"] is True
    assert sub.payloads(TOPICS.state)[-1] == {"schema": 1, "phase": "betting"}
    assert disconnected == []


class GatedJournal(Journal):
    """A real journal whose next outbox read, once armed, returns only when released: what it
    read is then stale (a record committed meanwhile is not in it). It keeps nothing in memory
    for the outbox, so every read is one of the file, on the journal's thread."""

    def recent_payloads(self, limit: int = 100, after: int = 0) -> None:
        return None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.armed = False
        self.entered = threading.Event()
        self.release = threading.Event()

    def unpublished_payloads(self, limit: int = 100, after: int = 0) -> list[Any]:
        found = super().unpublished_payloads(limit, after)
        if self.armed:
            self.armed = False
            self.entered.set()
            self.release.wait(5)
        return found


async def test_the_final_flush_publishes_a_record_committed_during_the_last_drain(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    """Found by the fault suite: the power_off record, committed while a drain was reading and
    followed at once by the publisher's exit, was left for the next start."""
    with GatedJournal(tmp_path / "g.sqlite", TABLE) as journal:
        async with publisher(journal, mosquitto.port) as pub:
            journal.armed = True
            journal.append([rec(i=1)])
            pub.notify()
            await wait_until(journal.entered.is_set, what="the drain reading")
            journal.append([rec("power_off", reason="shutdown")])  # not in that read
            pub.notify()
            # Released once the exit has begun (stop set): the drain then finds stale rows only.
            asyncio.get_running_loop().call_soon(journal.release.set)
        assert journal.unpublished() == []
