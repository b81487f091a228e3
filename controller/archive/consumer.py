"""The archiver: every table's records from the broker into PostgreSQL (verification, resends and
status: :mod:`.upkeep`).

Acknowledged by hand after commit (a kill -9 costs a redelivery; a broker's loss is a gap the table
resends), bounded by Receive Maximum, every message through :func:`.gate.admission.admit`: nothing
on the broker is trusted (docs/fleet.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

import aiomqtt
import paho.mqtt.client as paho
import structlog
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from tablectl.controller.archive.db import (
    ArchiveUnavailableError,
    Connections,
    connect,
    lost_errors,
    one_line,
)
from tablectl.controller.archive.gate.admission import (
    Admitted,
    Context,
    Limits,
    Quarantined,
    admit,
)
from tablectl.controller.archive.gate.quarantine import QuarantineWriter
from tablectl.controller.archive.ingest import Incoming, Ingest, StoreResult
from tablectl.controller.archive.schema import migrate
from tablectl.controller.archive.status import ArchiveStatus
from tablectl.controller.archive.upkeep import Cadence, ResendSigner, Upkeep
from tablectl.controller.archive.verifier import KeyRing, Verifier
from tablectl.controller.journal import canonical_json
from tablectl.controller.mqtt.security import ClientSecurity
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.connection import Backoff

log = structlog.get_logger("tablectl.archive")


def paho_client(client: aiomqtt.Client) -> paho.Client:
    """The paho client inside an aiomqtt one: the one place that reaches past aiomqtt's API.

    Acknowledging after commit needs paho's ``manual_ack_set``/``ack``; aiomqtt 2 has no public way
    (empicano/aiomqtt#345, draft PR #346). Should a release within the pin move ``_client``, this
    says so at connect, not with an ``AttributeError`` in the store loop.
    """
    inner = getattr(client, "_client", None)
    if not isinstance(inner, paho.Client):
        raise RuntimeError(
            "aiomqtt no longer keeps paho's client as Client._client: the archive's manual "
            "acknowledgement needs it (controller/archive/consumer.py, paho_client)"
        )
    return inner


_MAX_DELAY: Final = 10.0
_OUTGOING_LIMIT: Final = 10_000
PACKET_SLACK: Final = 65_536
"""Bytes over the message size cap the broker may still send (MQTT v5 Maximum Packet Size): a
message a little too large reaches the archiver and is quarantined (the forensics see it); a
much larger one the broker drops (Mosquitto logs it) and never fills the archiver's memory."""


@dataclass(frozen=True)
class ArchiverConfig:
    """What ``tablectl archive`` runs with (docs/fleet.md, "Running the archive")."""

    dsn: str
    host: str
    port: int
    security: ClientSecurity = field(default_factory=ClientSecurity)
    prefix: str = "tablectl"
    name: str = "archive"
    share: str | None = None
    keys: KeyRing = field(default_factory=KeyRing)
    resend_signer: ResendSigner | None = None
    """Signs ``cmd/resend`` (a table with ``[security]`` answers only its ``archive`` role)."""
    cadence: Cadence = field(default_factory=Cadence)
    """Gap timeout, probes, status, sweeps, walks and resend caps (:class:`~.upkeep.Cadence`)."""
    limits: Limits = field(default_factory=Limits)
    """What a message may be (:class:`~.gate.admission.Limits`)."""
    batch_size: int = 500
    batch_seconds: float = 0.05
    session_expiry: int = 86_400
    mqtt_v5: bool = True


@dataclass
class _Received:
    """A message waiting for its batch's commit (and then its PUBACK)."""

    generation: int
    mid: int
    qos: int
    topic: str
    payload: bytes


class _Inbox(asyncio.Queue[aiomqtt.Message]):
    """aiomqtt's queue of received messages, also emptied in one go: its iterator's task and
    ``asyncio.wait`` per message cost more than storing the records of a backlog."""

    def _init(self, maxsize: int) -> None:
        self._queue: deque[aiomqtt.Message] = deque()

    def take(self) -> list[aiomqtt.Message]:
        """Every message queued now (none waits for room: the queue is unbounded)."""
        taken = list(self._queue)
        self._queue.clear()
        return taken


_LOST: Final = lost_errors()


class Archiver:
    """``tablectl archive``: ``run`` until ``stop`` is set."""

    def __init__(self, config: ArchiverConfig, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.config = config
        self._clock = clock
        self.status = ArchiveStatus(config.prefix, config.name, config.share, config.keys)
        self._ingest = Ingest()
        self._quarantine = QuarantineWriter(config.limits.max_bytes)
        verifier = Verifier(config.keys, config.cadence.gap_timeout, config.limits)
        self._db = Connections(config.dsn, self._db_changed)
        self._upkeep = Upkeep(
            self.status,
            verifier,
            config.cadence,
            self._db,
            send=self.send,
            clock=clock,
            limits=config.limits,
            signer=config.resend_signer,
        )
        self._pending: list[_Received] = []
        self._arrived = asyncio.Event()
        self._drained = asyncio.Event()
        self._outgoing: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue()
        self._generation = 0
        self._current: aiomqtt.Client | None = None
        self._inbox: _Inbox | None = None
        self._connected_once = False

    @property
    def connected(self) -> bool:
        """Whether the broker connection is up and subscribed (its metrics)."""
        return self._current is not None

    # -- topics ----------------------------------------------------------------------------

    def _filters(self) -> list[str]:
        prefix, share = self.config.prefix, self.config.share
        head = f"$share/{share}/" if share else ""
        return [f"{head}{prefix}/+/events", f"{head}{prefix}/+/anchor"]

    def _table_of(self, topic: str) -> tuple[str, str] | None:
        """``(table, kind)`` of a subscribed topic; ``kind``: record or reply."""
        head = f"{self.config.prefix}/"
        if not topic.startswith(head):
            return None
        parts = topic[len(head) :].split("/")
        if len(parts) == 2 and parts[1] in ("events", "anchor"):
            return parts[0], "record"
        if parts[1:] == ["cmd", "resend", "reply"]:
            return parts[0], "reply"
        return None

    # -- lifecycle -------------------------------------------------------------------------

    def prepare(self) -> list[int]:
        """Connect once and migrate the schema (a sync connection, before the loop starts)."""
        with connect(self.config.dsn, autocommit=True) as conn:
            return migrate(conn)

    async def run(self, stop: asyncio.Event) -> None:
        """Archive until ``stop`` is set; reconnects to the broker and the database as needed."""
        await self._db.get("ingest", at_start=True)
        await self._upkeep.load()
        try:
            await self._run(stop)
        except* ArchiveUnavailableError as group:
            raise group.exceptions[0] from None  # one line for the CLI, not a group
        await self._db.close()

    async def _run(self, stop: asyncio.Event) -> None:
        backoff = Backoff(0.1, _MAX_DELAY)
        async with asyncio.TaskGroup() as tasks:
            loops = [
                tasks.create_task(self._upkeep.run(stop), name="archive-verify"),
                tasks.create_task(self._store_loop(), name="archive-store"),
            ]
            try:
                while not stop.is_set():
                    try:
                        await self._connection(stop)
                        backoff.reset()
                    except* aiomqtt.MqttError as group:
                        error = "; ".join(dict.fromkeys(str(e) for e in group.exceptions))
                        if not self._connected_once:
                            where = f"{self.config.host}:{self.config.port}"
                            raise ArchiveUnavailableError(f"MQTT broker {where}: {error}") from None
                        log.warning("archive_mqtt_lost", error=error)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(backoff.next()):
                            await stop.wait()
            finally:
                for task in loops:
                    task.cancel()

    def _client(self) -> aiomqtt.Client:
        config, security = self.config, self.config.security
        offline = canonical_json(self.status.offline()).encode("utf-8")
        will = aiomqtt.Will(self.status.status_topic, offline, qos=1, retain=True)
        common: dict[str, Any] = {
            "identifier": f"tablectl-archive-{config.name}",
            "username": security.username,
            "password": security.password,
            "tls_context": security.tls_context,
            "will": will,
            "timeout": 10,
            "max_inflight_messages": 100,
        }
        archiver = self

        class Inbox(_Inbox):  # aiomqtt makes its queue: this one tells the receive loop
            def __init__(self, maxsize: int = 0) -> None:
                super().__init__(maxsize)
                archiver._inbox = self

        common["queue_type"] = Inbox
        if config.mqtt_v5:
            props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            props.SessionExpiryInterval = config.session_expiry
            props.ReceiveMaximum = min(65_535, 2 * config.batch_size)
            props.MaximumPacketSize = config.limits.max_bytes + PACKET_SLACK
            client = aiomqtt.Client(
                config.host,
                config.port,
                protocol=aiomqtt.ProtocolVersion.V5,
                clean_start=False,
                properties=props,
                **common,
            )
        else:
            client = aiomqtt.Client(config.host, config.port, clean_session=False, **common)
        # Acknowledge only after commit: paho's manual ack (aiomqtt 2 does not expose it).
        paho_client(client).manual_ack_set(True)
        client.pending_calls_threshold = 1_000
        return client

    async def _connection(self, stop: asyncio.Event) -> None:
        client = self._client()
        async with client:
            self._generation += 1
            generation = self._generation
            for topic_filter in self._filters():
                await client.subscribe(topic_filter, qos=1)
            await client.subscribe(f"{self.config.prefix}/+/cmd/resend/reply", qos=1)
            self.send(self.status.status_topic, self.status.status(self._clock.wall()), retain=True)
            log.info(
                "archive_connected",
                host=self.config.host,
                share=self.config.share,
                authorship=self.status.authorship()["state"],  # "unverified" without --key
            )
            self._current = client
            self._connected_once = True  # from now on a lost broker is waited for
            try:
                async with asyncio.TaskGroup() as tasks:
                    loops = [
                        tasks.create_task(self._receive(client, generation), name="archive-rx"),
                        tasks.create_task(self._send_loop(client), name="archive-tx"),
                    ]
                    await stop.wait()
                    # A last batch, then goodbye: what is committed is acknowledged.
                    if self._pending and self.status.db_available:
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(2):
                                await self._drained.wait()
                    for task in loops:
                        task.cancel()
            finally:
                self._current = None
            offline = canonical_json(self.status.offline(self._clock.wall())).encode("utf-8")
            with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                async with asyncio.timeout(1):
                    await client.publish(self.status.status_topic, offline, qos=1, retain=True)

    # -- receiving and storing -------------------------------------------------------------

    async def _receive(self, client: aiomqtt.Client, generation: int) -> None:
        inbox = self._inbox
        assert inbox is not None  # made with the client (_client)
        async for first in client.messages:  # waits for one (or ends at a lost connection)
            messages = [first, *inbox.take()]
            for message in messages:
                payload = message.payload
                data = payload if isinstance(payload, bytes) else str(payload).encode("utf-8")
                self._pending.append(
                    _Received(generation, message.mid, message.qos, message.topic.value, data)
                )
            self.status.counters.received += len(messages)
            self._arrived.set()
            self._drained.clear()

    async def _store_loop(self) -> None:
        """Store batches as they fill (a group commit); acknowledge each after its commit.

        Outlives a broker connection on purpose: cancelling a batch mid-transaction could leave the
        database connection unusable. A message of a connection that is gone is stored, not
        acknowledged.
        """
        config = self.config
        idle = True
        while True:
            await self._arrived.wait()
            if idle and len(self._pending) < config.batch_size:
                await asyncio.sleep(config.batch_seconds)
            batch = self._pending[: config.batch_size]
            if len(self._pending) <= len(batch):
                self._arrived.clear()
            if not batch:
                continue
            await self._handle(batch)
            client = self._current
            paho = paho_client(client) if client is not None else None
            for item in batch:
                if paho is not None and item.generation == self._generation and item.qos:
                    paho.ack(item.mid, item.qos)  # manual ack: see _client
            del self._pending[: len(batch)]
            idle = not self._pending
            if idle:
                self._drained.set()

    async def _handle(self, batch: list[_Received]) -> None:
        """Store a batch's admitted records (retrying until the database takes them), quarantine
        the rest, count replies. Each message is judged in its own ``try``: none is fatal."""
        now = self._clock.wall()
        records: list[Incoming] = []
        refused: list[Quarantined] = []
        for item in batch:
            try:
                verdict = self._judge(item, now)
            except Exception as exc:  # a defect of ours: this message, not the floor
                log.exception("archive_judge_failed", topic=item.topic[:200])
                table = (self._table_of(item.topic) or ("", ""))[0]
                detail = f"{type(exc).__name__}: {one_line(exc)[:120]}"
                verdict = Quarantined("error", detail, item.topic, table, item.payload)
            if isinstance(verdict, Admitted):
                records.append(verdict.record)
            elif verdict is not None:
                refused.append(verdict)
        result = StoreResult()
        if records:
            result, failed = await self._store(records)
            refused.extend(failed)
        if refused:
            await self._keep(refused)
        if not records:
            return
        counters = self.status.counters
        counters.batches += 1
        counters.stored += result.inserted
        counters.duplicates += result.duplicates
        counters.late += result.late
        for table, seq in result.conflicts:
            self._alarm(self.status.conflict(table, seq, now))
        newest: dict[str, int] = {}
        for record in records:
            if record.seq > newest.get(record.table_id, 0):
                newest[record.table_id] = record.seq
        self._upkeep.stored(newest, result.tables)
        self.status.received(newest, self._clock.wall())

    def _judge(self, item: _Received, now: datetime) -> Admitted | Quarantined | None:
        """A record admitted or quarantined; ``None`` for a reply (or a topic not ours)."""
        found = self._table_of(item.topic)
        if found is None:
            return None
        table, kind = found
        if kind == "reply":
            bad = self._upkeep.reply(table, item.payload)
            if bad is not None:
                reason, detail = bad
                alarm = self.status.malformed(
                    item.topic, reason, detail, now, monotonic=self._clock.monotonic()
                )
                if alarm is not None:  # logged as alarmed: a flood is not a flood of lines
                    log.warning("archive_malformed", topic=item.topic[:200], reason=reason)
                self._alarm(alarm)
            return None
        context = Context(
            topic=item.topic,
            table=table,
            now=now,
            head=self._upkeep.head(table),
            limits=self.config.limits,
            key=self.config.keys.key(table),
        )
        return admit(item.payload, context)

    async def _store(self, records: list[Incoming]) -> tuple[StoreResult, list[Quarantined]]:
        """The batch stored, retrying while the database is away; the records it refuses,
        to quarantine (``db_refused``)."""
        while True:
            conn = await self._db.get("ingest")
            try:
                result, refused = await self._ingest.store_each(conn, records)
            except _LOST as exc:
                await self._db.lost("ingest", exc)
                continue
            topics = {"anchor": "anchor"}
            return result, [
                Quarantined(
                    "db_refused",
                    detail,
                    f"{self.config.prefix}/{record.table_id}/{topics.get(record.type, 'events')}",
                    record.table_id,
                    record.raw,
                    record.seq,
                    record.ts,
                )
                for record, detail in refused
            ]

    async def _keep(self, refused: list[Quarantined]) -> None:
        """Count and alarm the refused messages; write what the quarantine's rate allows
        (retrying while the database is away, like the records: then acknowledged)."""
        now, monotonic = self._clock.wall(), self._clock.monotonic()
        for item in refused:
            alarm = self.status.quarantine(item, now, monotonic=monotonic)
            if alarm is not None:
                log.warning(
                    "archive_quarantined",
                    topic=item.topic[:200],
                    table=item.table[:64],
                    seq=item.seq,
                    reason=item.reason,
                    detail=item.detail[:200],
                )
            self._alarm(alarm)
        allowed = self._quarantine.take(len(refused), monotonic)
        self.status.counters.quarantine_skipped += len(refused) - allowed
        kept = refused[:allowed]
        while kept:
            conn = await self._db.get("ingest")
            try:
                await self._quarantine.write(conn, kept, now)
            except _LOST as exc:
                await self._db.lost("ingest", exc)
                continue
            except Exception as exc:  # a statement's error: the forensics lose these, no more
                log.exception("archive_quarantine_failed", error=one_line(exc))
                self.status.counters.quarantine_skipped += len(kept)
            return

    # -- the database and sending -----------------------------------------------------------

    def _db_changed(self, available: bool, detail: str) -> None:
        self._alarm(self.status.database(available, detail, self._clock.wall()))

    def _alarm(self, alarm: dict[str, Any] | None) -> None:
        if alarm is not None:
            self.send(self.status.alarms_topic, alarm, retain=False)

    def send(self, topic: str, payload: dict[str, Any], retain: bool) -> None:
        """Queue a message for the current (or next) connection; the oldest go when too many."""
        if self._outgoing.qsize() >= _OUTGOING_LIMIT:
            self._outgoing.get_nowait()
        self._outgoing.put_nowait((topic, canonical_json(payload).encode("utf-8"), retain))

    async def _send_loop(self, client: aiomqtt.Client) -> None:
        while True:
            topic, data, retain = await self._outgoing.get()
            try:
                # No timeout: the broker's PUBACK queues behind what it sends us, and a backlog
                # of tens of thousands of records takes longer to read than aiomqtt's default
                # 10 s. A dead connection ends the receive loop (keepalive), and with it this.
                await client.publish(topic, data, qos=1, retain=retain, timeout=math.inf)
            except BaseException:
                self._outgoing.put_nowait((topic, data, retain))  # on the next connection
                raise
