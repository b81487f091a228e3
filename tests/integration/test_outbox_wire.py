"""The outbox's own MQTT connection (controller/mqtt/wire.py) and the drain on it
(controller/mqtt/drain.py), against a real Mosquitto and, for what a real broker never sends, a
fake one.

The invariant is the publisher's (contracts §7): a record is marked only once every route's PUBACK
is in and every earlier record's is; a lost connection costs duplicates, never a gap. Here the
PUBACKs are reordered or withheld on purpose (:class:`HeldWire`, through the wire's one seam,
``_acknowledge``), which a broker on loopback never does by itself. The wire's own promises are
checked on the bytes: order, payloads and retain flags at a subscriber, packet ids, keepalive,
loss, refusals (CONNACK, TLS), a broker that speaks garbage, and the DISCONNECT at close.
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, ClassVar

import aiomqtt
import pytest

from tablectl.controller.journal import Journal
from tablectl.controller.mqtt import drain
from tablectl.controller.mqtt.drain import OutboxDrain
from tablectl.controller.mqtt.outbound import Outbound
from tablectl.controller.mqtt.packets import PINGRESP, Packet, connect_packet
from tablectl.controller.mqtt.publisher import OUTBOX_CLIENT_SUFFIX
from tablectl.controller.mqtt.security import connect_failure_hint
from tablectl.controller.mqtt.wire import Link, Wire
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber, TcpProxy
from tests.support.outbox import TABLE, TOPICS, AckLedger, publisher, rec, seqs
from tests.support.tls import Pki, TlsMosquitto, pki_or_skip, tls_mosquitto
from tests.support.waiting import wait_until

_Token = tuple[int, str] | None

CLIENT_ID = f"{TABLE}{OUTBOX_CLIENT_SUFFIX}"
CONNACK_OK = b"\x20\x02\x00\x00"
DISCONNECT = b"\xe0\x00"
PINGREQ = b"\xc0\x00"


def link(port: int, *, keepalive: int = 0, timeout: float = 5.0, **security: Any) -> Link:
    """The outbox's link to a local broker, as the publisher builds it."""
    return Link("127.0.0.1", port, CLIENT_ID, keepalive=keepalive, timeout=timeout, **security)


def ignore(token: object) -> None:
    """An ``on_puback`` for tests that do not count PUBACKs."""


class HeldWire(Wire[_Token]):
    """A :class:`Wire` whose first instance (the first connection) hands PUBACKs on as the test
    says; later ones (after a reconnect) pass them straight on.

    ``reverse``: hold each batch's PUBACKs until all of them are in, then deliver them last
    first (the later record before the earlier, the second route before the first).
    ``deliver``: pass on only the PUBACKs of these tokens (batch index, topic); the rest are
    never delivered (a broker that dies before acknowledging them).
    A republished retained record (token ``None``) is never held: it is not the batch's.
    """

    reverse: ClassVar[bool] = False
    deliver: ClassVar[set[tuple[int, str]] | None] = None
    instances: ClassVar[list[HeldWire]] = []

    def __init__(
        self,
        link: Link,
        on_puback: Callable[[_Token], None],
        on_lost: Callable[[aiomqtt.MqttError], None] | None = None,
    ) -> None:
        super().__init__(link, on_puback, on_lost)
        self.first = not self.instances
        self.instances.append(self)
        self.held: list[int] = []
        self.received = 0

    def _acknowledge(self, packet_id: int) -> None:
        pass_on = super()._acknowledge
        token = self._pending.get(packet_id)
        if not self.first or token is None:
            pass_on(packet_id)
            return
        self.received += 1
        if self.deliver is not None:
            if token in self.deliver:
                pass_on(packet_id)
            return
        self.held.append(packet_id)
        batch = sum(token is not None for token in self._pending.values())
        if self.reverse and len(self.held) == batch:
            held, self.held = self.held, []
            for held_id in reversed(held):
                pass_on(held_id)


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


# -- the drain on the wire ---------------------------------------------------------------------


@pytest.mark.broker
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


@pytest.mark.broker
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


@pytest.mark.broker
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


@pytest.mark.broker
async def test_a_lost_connection_fails_the_drains_batch_at_once_not_at_its_deadline(
    mosquitto: MosquittoProcess, journal: Journal, held_wire: type[HeldWire]
) -> None:
    """Without ``on_lost`` the batch would wait out its deadline (a minute here) on a dead
    connection, and the table would stay offline for the broker that long."""
    held_wire.deliver = set()  # the broker's PUBACKs reach the wire, never the drain
    outbox = OutboxDrain(journal, TOPICS, Outbound(TOPICS), trace=None, batch_size=10, timeout=60)
    journal.append([rec(i=i) for i in range(5)])
    async with TcpProxy(mosquitto.host, mosquitto.port) as proxy:
        wire = await outbox.connect(link(proxy.port))
        first = held_wire.instances[0]
        draining = asyncio.create_task(outbox.drain(wire))
        await wait_until(lambda: first.received == 5, what="the batch sent and acknowledged")
        proxy.cut()
        with pytest.raises(aiomqtt.MqttError, match="outbox connection lost"):
            async with asyncio.timeout(10):  # far below the 60 s deadline
                await draining
        await wire.close()
    assert [record["seq"] for record in journal.unpublished()] == [1, 2, 3, 4, 5]


class ThreadRecordingJournal(Journal):
    """A real journal that notes which thread the outbox reads and marks it on."""

    threads: ClassVar[set[str]] = set()

    def unpublished_payloads(self, limit: int = 100, after: int = 0) -> list[Any]:
        self.threads.add(threading.current_thread().name)
        return super().unpublished_payloads(limit, after)

    def mark_published(self, up_to_seq: int) -> None:
        self.threads.add(threading.current_thread().name)
        super().mark_published(up_to_seq)


@pytest.mark.broker
async def test_the_drain_reads_and_marks_on_the_journals_own_thread(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    with ThreadRecordingJournal(tmp_path / "t.sqlite", TABLE) as journal:
        journal.append([rec(i=i) for i in range(5)])
        async with publisher(journal, mosquitto.port):
            await wait_until(lambda: journal.unpublished() == [], what="everything marked")
        assert {name.split("_")[0] for name in journal.threads} == {f"journal-{TABLE}"}


@pytest.mark.broker
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
    read is then stale (a record committed meanwhile is not in it). Its records are appended
    here, not handed by a runner, so every read is one of the file, on the journal's thread."""

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


@pytest.mark.broker
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
        # The marks run on the journal's thread, not awaited by the exit (a closing journal
        # runs them first): acknowledged, so marked soon after.
        await wait_until(lambda: journal.unpublished() == [], 3, what="the last marks")


# -- the wire against Mosquitto ----------------------------------------------------------------


@pytest.mark.broker
async def test_a_batch_arrives_in_order_with_its_payloads_and_retain_flags_each_puback_once(
    mosquitto: MosquittoProcess,
) -> None:
    acked: list[int] = []
    threads: set[int] = set()

    def on_puback(token: int) -> None:
        acked.append(token)
        threads.add(threading.get_ident())

    def message(i: int) -> tuple[str, bytes, bool]:
        if i % 5 == 0:  # retained, each on a topic of its own, so a late subscriber sees all
            return f"{TOPICS.base}/r/{i}", b"retained %d" % i, True
        if i == 7:  # three bytes of Remaining Length
            return TOPICS.events, bytes(range(256)) * 400, False
        if i == 8:
            return TOPICS.events, b"", False
        if i == 9:  # a topic counted in UTF-8 bytes, not characters
            return f"{TOPICS.base}/évents", "é".encode() * 3, False
        return TOPICS.events, b"%d" % i, False

    sent = [message(i) for i in range(300)]
    async with (
        Subscriber(mosquitto.host, mosquitto.port, f"{TOPICS.base}/#") as sub,
        await Wire.open(link(mosquitto.port), on_puback) as wire,
    ):
        for i, (topic, payload, retain) in enumerate(sent):
            wire.publish(topic, payload, retain=retain, token=i)
        assert wire.in_flight == 300
        wire.flush()  # one write for the whole batch
        await wait_until(lambda: len(acked) == 300, what="300 PUBACKs")
        # One more round trip: a duplicate PUBACK for the batch would have come before it.
        wire.publish(TOPICS.events, b"last", retain=False, token=300)
        wire.flush()
        await wait_until(lambda: len(acked) == 301, what="the last PUBACK")
        assert wire.in_flight == 0
        await sub.wait_until(lambda ms: len(ms) == 301)
    # PUBACKs come in the PUBLISHes' order (§4.6), once each, on the loop's thread.
    assert acked == list(range(301))
    assert threads == {threading.get_ident()}
    assert [(m.topic, m.payload) for m in sub.messages] == [
        *((topic, payload) for topic, payload, _ in sent),
        (TOPICS.events, b"last"),
    ]
    assert {m.qos for m in sub.messages} == {1}
    async with Subscriber(mosquitto.host, mosquitto.port, f"{TOPICS.base}/r/#") as late:
        # A live subscriber sees retain 0 (§3.3.1.3); the broker's retained copies say it all.
        await late.wait_until(lambda ms: len(ms) == 60)
    assert {(m.topic, m.payload, m.retain) for m in late.messages} == {
        message for message in sent if message[2]
    }


class IdRecordingWire(Wire[str]):
    """A :class:`Wire` that notes the packet id of every PUBACK the broker sends."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.ids: list[int] = []

    def _acknowledge(self, packet_id: int) -> None:
        self.ids.append(packet_id)
        super()._acknowledge(packet_id)


@pytest.mark.broker
async def test_packet_ids_wrap_after_65535_and_skip_ids_still_in_flight(
    mosquitto: MosquittoProcess,
) -> None:
    acked: list[str] = []
    async with await IdRecordingWire.open(link(mosquitto.port), acked.append) as wire:
        wire._next_id = 65_533  # as after 65 532 PUBLISHes, without sending them
        wire._pending[2] = "stuck"  # id 2 is still waiting for its PUBACK: not reused
        for name in "abcde":
            wire.publish(TOPICS.events, name.encode(), retain=False, token=name)
        wire.flush()
        await wait_until(lambda: len(acked) == 5, what="5 PUBACKs")
        assert wire.ids == [65_533, 65_534, 65_535, 1, 3]  # never 0 (§2.3.1), never 2
        assert acked == list("abcde")
        assert wire.in_flight == 1  # "stuck"


async def test_a_wire_with_every_packet_id_in_flight_refuses_another_publish() -> None:
    async with FakeBroker() as broker, await Wire.open(link(broker.port), ignore) as wire:
        wire._pending = dict.fromkeys(range(1, 65_536))
        with pytest.raises(aiomqtt.MqttError, match="65535 PUBLISHes unacknowledged"):
            wire.publish(TOPICS.events, b"x", retain=False, token=None)
        assert wire.in_flight == 65_535


class PingCountingWire(Wire[None]):
    """A :class:`Wire` that counts the PINGRESPs it reads."""

    pingresps = 0

    def _control(self, packet: Packet) -> None:
        if packet.first == PINGRESP:
            self.pingresps += 1
        super()._control(packet)


@pytest.mark.broker
async def test_an_idle_wire_stays_connected_on_keepalive_pings(
    mosquitto: MosquittoProcess,
) -> None:
    """Mosquitto drops a client that says nothing for 1.5 keepalives (1.5 s here): six
    PINGRESPs take about 3 s, so the connection outlived that twice over on pings alone."""
    lost: list[aiomqtt.MqttError] = []
    acked: list[None] = []
    opened = await PingCountingWire.open(
        link(mosquitto.port, keepalive=1), acked.append, lost.append
    )
    async with opened as wire:
        await wait_until(lambda: wire.pingresps >= 6 or lost, timeout=10, what="6 PINGRESPs")
        assert lost == []
        wire.publish(TOPICS.events, b"still here", retain=False, token=None)
        wire.flush()
        await wait_until(lambda: acked == [None], what="a PUBACK after the idle time")


@pytest.mark.broker
async def test_the_broker_going_away_ends_the_wire_once_and_a_publish_then_raises(
    mosquitto: MosquittoProcess,
) -> None:
    lost: list[aiomqtt.MqttError] = []
    wire = await Wire.open(link(mosquitto.port, keepalive=60), ignore, lost.append)
    watching = asyncio.create_task(wire.wait_lost())
    mosquitto.stop()
    with pytest.raises(aiomqtt.MqttError, match="outbox connection lost") as raised:
        async with asyncio.timeout(10):
            await watching
    assert lost == [raised.value]  # once, with the error wait_lost raises
    with pytest.raises(aiomqtt.MqttError, match="outbox connection is closed"):
        wire.publish(TOPICS.events, b"{}", retain=False, token=None)
    await wire.close()  # closing a lost wire is harmless and reports nothing more
    assert len(lost) == 1


# -- refusals: credentials and TLS --------------------------------------------------------------

USERS = {TABLE: "table-pw", "display": "display-pw"}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return pki_or_skip(tmp_path_factory.mktemp("pki"), TABLE)


@pytest.fixture
def secure_broker(tmp_path: Path, pki: Pki) -> Iterator[TlsMosquitto]:
    """The shipped TLS + password + ACL config (tests/support/tls.py)."""
    with tls_mosquitto(tmp_path / "broker", pki, USERS) as process:
        yield process


def trusting(ca: Path) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(ca))


def secure_link(broker: TlsMosquitto, ca: Path, password: str) -> Link:
    """The outbox's link over TLS, trusting ``ca``, logged in as the table."""
    return link(broker.port, tls_context=trusting(ca), username=TABLE, password=password)


@pytest.mark.broker
async def test_a_wire_over_tls_with_a_password_connects_and_publishes(
    secure_broker: TlsMosquitto, pki: Pki
) -> None:
    acked: list[int] = []
    login = {"tls_context": trusting(pki.ca), "username": "display", "password": "display-pw"}
    async with (
        Subscriber(secure_broker.host, secure_broker.port, TOPICS.events, options=login) as sub,
        await Wire.open(secure_link(secure_broker, pki.ca, USERS[TABLE]), acked.append) as wire,
    ):
        wire.publish(TOPICS.events, b'{"seq": 1}', retain=False, token=1)
        wire.flush()
        received = await sub.wait_for(lambda m: m.topic == TOPICS.events, timeout=5)
        await wait_until(lambda: acked == [1], what="the PUBACK")
    assert received.payload == b'{"seq": 1}'


@pytest.mark.broker
async def test_a_wrong_password_is_refused_with_the_credentials_hint(
    secure_broker: TlsMosquitto, pki: Pki
) -> None:
    wrong = secure_link(secure_broker, pki.ca, "not-the-password")
    with pytest.raises(aiomqtt.MqttError, match="Connection refused") as refused:
        await Wire.open(wrong, ignore)
    hint = connect_failure_hint(str(refused.value))
    assert hint is not None
    assert "refused our credentials" in hint


@pytest.mark.broker
async def test_a_wrong_ca_fails_the_handshake_with_the_tls_hint(
    secure_broker: TlsMosquitto, pki: Pki
) -> None:
    wrong = secure_link(secure_broker, pki.other_ca, USERS[TABLE])
    with pytest.raises(aiomqtt.MqttError, match="TLS handshake failed") as failed:
        await Wire.open(wrong, ignore)
    hint = connect_failure_hint(str(failed.value))
    assert hint is not None
    assert hint.startswith("TLS handshake failed")


# -- a fake broker: what a real one never sends ------------------------------------------------


async def read_packet(reader: asyncio.StreamReader) -> bytes:
    """One whole MQTT packet (its header included) from ``reader``."""
    packet = bytearray(await reader.readexactly(1))
    while True:
        packet += await reader.readexactly(1)
        if not packet[-1] & 0x80:
            break
    length, shift = 0, 0
    for byte in packet[1:]:
        length |= (byte & 0x7F) << shift
        shift += 7
    return bytes(packet + await reader.readexactly(length))


class FakeBroker:
    """A plain TCP server in a broker's place: reads the client's CONNECT, writes ``answer``
    (``end``: then closes its sending side, as a broker that hangs up), and keeps every byte the
    client sends after the CONNECT in :attr:`received` until the client closes (:attr:`ended`).

    Why not Mosquitto: a real broker never answers garbage, never withholds a PINGRESP and
    never shows the test the bytes a client sent it.
    """

    def __init__(self, answer: bytes = CONNACK_OK, *, end: bool = False) -> None:
        self.answer = answer
        self.end = end
        self.port = 0
        self.connect = b""
        self.received = bytearray()
        self.ended = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._writer: asyncio.StreamWriter | None = None

    def send(self, data: bytes) -> None:
        assert self._writer is not None
        self._writer.write(data)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        try:
            self.connect = await read_packet(reader)
            writer.write(self.answer)
            if self.end:
                writer.write_eof()
            while data := await reader.read(65_536):
                self.received += data
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self.ended.set()
            writer.close()

    async def __aenter__(self) -> FakeBroker:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._writer is not None:
            self._writer.transport.abort()
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@asynccontextmanager
async def deadline(seconds: float = 10) -> AsyncIterator[None]:
    """A generous bound: what is tested must fail (or succeed) by itself, never hang."""
    async with asyncio.timeout(seconds):
        yield


@pytest.mark.parametrize(
    ("answer", "end", "error"),
    [
        (b"\xff\xff\xff\xff\xff", False, "Remaining Length longer than four bytes"),
        (b"\x30\xff\xff\xff\x7f", False, "a 268435455-byte packet"),
        (b"\x90\x03\x00\x01\x01", False, r"unexpected packet 0x90 of 3 bytes"),  # a SUBACK
        (b"\x20\x03\x00\x00\x00", False, r"unexpected packet 0x20 of 3 bytes"),  # long CONNACK
        (b"\x21\x02\x00\x00", False, r"unexpected packet 0x21 of 2 bytes"),  # CONNACK, flags
        (b"\x20\x02\x00\x09", False, "Connection refused: code 9"),
        (b"\x20\x02\x00\x02", False, "Connection refused: identifier rejected"),
        (b"", True, "outbox connection lost: closed by broker"),
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", True, "closed by broker"),  # not an MQTT port
    ],
)
async def test_a_broker_answering_connect_with_garbage_fails_the_open_naming_it(
    answer: bytes, end: bool, error: str
) -> None:
    lost: list[aiomqtt.MqttError] = []
    async with FakeBroker(answer, end=end) as broker, deadline():
        with pytest.raises(aiomqtt.MqttError, match=error):
            await Wire.open(link(broker.port, keepalive=30), ignore, lost.append)
        await broker.ended.wait()  # the wire closed its socket: its connection_lost has run
    assert broker.connect == connect_packet(CLIENT_ID, keepalive=30)
    assert lost == []  # open raised: no connection to report lost


async def test_a_broker_that_never_answers_connect_fails_the_open_at_its_timeout() -> None:
    async with FakeBroker(b"") as broker, deadline():
        with pytest.raises(aiomqtt.MqttError, match=r"no CONNACK within 0\.3 s"):
            await Wire.open(link(broker.port, timeout=0.3), ignore)
        await broker.ended.wait()


async def test_nothing_listening_fails_the_open_at_once_with_no_hint() -> None:
    async with FakeBroker() as broker:
        port = broker.port  # free once the fake broker is gone
    lost: list[aiomqtt.MqttError] = []
    async with deadline():
        with pytest.raises(aiomqtt.MqttError, match="outbox connection: ") as failed:
            await Wire.open(link(port), ignore, lost.append)
    # A broker that is down is the reconnect loop's ordinary case: nothing for the operator.
    assert connect_failure_hint(str(failed.value)) is None
    assert lost == []


@pytest.mark.parametrize(
    ("garbage", "error"),
    [
        (CONNACK_OK, "a second CONNACK"),
        (b"\x30\x06\x00\x01t\x00\x01x", r"unexpected packet 0x30 of 6 bytes"),  # a PUBLISH
        (b"\x40\x03\x00\x01\x00", r"unexpected packet 0x40 of 3 bytes"),  # a long PUBACK
        (b"\x40\x01\x00", r"unexpected packet 0x40 of 1 bytes"),  # a short PUBACK
        (b"\x40\x80\x80\x80\x80\x01", "longer than four bytes"),
    ],
)
async def test_a_protocol_error_on_an_open_wire_fails_it_once_naming_the_problem(
    garbage: bytes, error: str
) -> None:
    lost: list[aiomqtt.MqttError] = []
    async with FakeBroker() as broker, deadline():
        wire = await Wire.open(link(broker.port), ignore, lost.append)
        wire.publish(TOPICS.events, b"x", retain=False, token=None)
        wire.flush()
        broker.send(garbage)
        with pytest.raises(aiomqtt.MqttError, match=error) as raised:
            await wire.wait_lost()
        await broker.ended.wait()  # the wire hung up on its own
    assert lost == [raised.value]


async def test_no_pingresp_within_the_keepalive_fails_the_wire() -> None:
    """A broker (or a path to it) that swallows everything: only the keepalive notices, since
    nothing is being published."""
    lost: list[aiomqtt.MqttError] = []
    async with FakeBroker() as broker, deadline():
        wire = await Wire.open(link(broker.port, keepalive=1), ignore, lost.append)
        with pytest.raises(aiomqtt.MqttError, match="no PINGRESP within 1 s") as raised:
            await wire.wait_lost()
        await broker.ended.wait()
    assert PINGREQ in broker.received
    assert lost == [raised.value]


async def test_close_sends_disconnect_last_and_is_idempotent() -> None:
    lost: list[aiomqtt.MqttError] = []
    async with FakeBroker() as broker, deadline():
        wire = await Wire.open(link(broker.port), ignore, lost.append)
        wire.publish(TOPICS.events, b"queued", retain=False, token=None)  # flushed by close
        await wire.close()
        await broker.ended.wait()  # closed the socket, too
        await wire.close()
        await wire.wait_lost()  # returns: a close is not a loss
        with pytest.raises(aiomqtt.MqttError, match="closed"):
            wire.publish(TOPICS.events, b"late", retain=False, token=None)
    assert broker.received.endswith(DISCONNECT)
    assert broker.received.startswith(b"\x32")  # the queued PUBLISH went out before it
    assert b"queued" in broker.received
    assert lost == []
