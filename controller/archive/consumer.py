"""The archiver: every table's records from the broker into PostgreSQL, verified, gaps re-asked.

Why shaped this way:

* **Acknowledged after commit.** The MQTT session is persistent (v5 ``clean_start`` false with a
  session expiry; v3.1.1 ``clean_session`` false) and QoS 1 messages are acknowledged by hand
  (paho's manual ack) only once the batch holding them is committed. A kill -9 between receipt
  and commit costs nothing: the broker redelivers what was not acknowledged, storage is
  idempotent. What the broker itself loses (it restarts without persistence, its queue for the
  archiver overflows, a bridge drops messages) shows as a gap in a table's ``seq``, which the
  table resends (``cmd/resend``); a lost *tail* (nothing after it yet) is asked for when the
  table has been quiet for ``probe_after`` seconds.
* **Backpressure, not memory.** The client's Receive Maximum bounds the unacknowledged messages
  the broker sends; while PostgreSQL is down nothing is acknowledged, so the broker keeps the
  rest (up to its queue limits) instead of this process.
* **Shared work.** With ``share`` the subscriptions are ``$share/{group}/…``: the broker gives
  each message to one archiver of the group. Verification reads back the stored rows per table
  (:mod:`tablectl.controller.archive.verifier`), so it does not matter who stored what.
* **Three loops per connection** in a TaskGroup (receive, store, send) and one verifier loop
  across connections; any failure of the connection rebuilds it, as the table's publisher does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import aiomqtt
import structlog
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from tablectl.controller.archive.db import ArchiveUnavailableError, connect, connect_async
from tablectl.controller.archive.ingest import (
    Incoming,
    Ingest,
    MalformedRecordError,
    StoreResult,
    parse_published,
)
from tablectl.controller.archive.schema import migrate
from tablectl.controller.archive.status import ArchiveStatus
from tablectl.controller.archive.verifier import KeyRing, TablePass, Verifier
from tablectl.controller.journal import canonical_json
from tablectl.controller.mqtt.security import ClientSecurity
from tablectl.controller.mqtt.topics import Topics

if TYPE_CHECKING:
    import psycopg

__all__ = ["Archiver", "ArchiverConfig"]

log = structlog.get_logger("tablectl.archive")

MAX_RESEND: Final = 10_000
"""Records asked per ``cmd/resend`` (the table's cap: it answers at most this many)."""

_MAX_DELAY: Final = 10.0
_OUTGOING_LIMIT: Final = 10_000


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
    gap_timeout: float = 5.0
    keys: KeyRing = field(default_factory=KeyRing)
    batch_size: int = 500
    batch_seconds: float = 0.05
    session_expiry: int = 86_400
    probe_after: float = 30.0
    status_every: float = 5.0
    sweep_every: float = 60.0
    mqtt_v5: bool = True


@dataclass
class _Received:
    """A message waiting for its batch's commit (and then its PUBACK)."""

    generation: int
    mid: int
    qos: int
    topic: str
    payload: bytes


@dataclass
class _Quiet:
    """What the probe of a quiet table knows: when its last record came, when it was asked."""

    arrived: float
    probed: float | None = None
    probes: int = 0


def _now() -> datetime:
    return datetime.now(UTC)


def _lost_errors() -> tuple[type[Exception], ...]:
    """What psycopg raises when the connection, not the statement, failed."""
    try:
        import psycopg  # noqa: PLC0415 - optional extra
    except ImportError:  # pragma: no cover - the CLI says how to install it first
        return ()
    return (psycopg.OperationalError, psycopg.InterfaceError)


_LOST: Final = _lost_errors()


class Archiver:
    """``tablectl archive`` (see the module doc). ``run`` until ``stop`` is set.

    Args:
        config: the settings.
        clock: wall clock for gap ages and alarm times (injected for tests).
    """

    def __init__(self, config: ArchiverConfig, *, clock: Callable[[], datetime] = _now) -> None:
        self.config = config
        self._clock = clock
        self.status = ArchiveStatus(config.prefix, config.name, config.share)
        self._ingest = Ingest()
        self._verifier = Verifier(config.keys, config.gap_timeout)
        self._pending: list[_Received] = []
        self._arrived = asyncio.Event()
        self._drained = asyncio.Event()
        self._outgoing: asyncio.Queue[tuple[str, bytes, bool]] = asyncio.Queue()
        self._dirty: set[str] = set()
        self._retry: set[str] = set()
        self._dirty_event = asyncio.Event()
        self._quiet: dict[str, _Quiet] = {}
        self._last_seq: dict[str, int] = {}
        self._generation = 0
        self._db: dict[str, psycopg.AsyncConnection[tuple[Any, ...]] | None] = {
            "ingest": None,
            "verify": None,
        }
        self._requests = 0
        self._current: aiomqtt.Client | None = None
        self._connected_once = False

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
        """Connect once and migrate the schema (a sync connection, before the loop starts).

        Raises:
            ArchiveError: the DSN is wrong or the server unreachable (one line).
        """
        with connect(self.config.dsn, autocommit=True) as conn:
            return migrate(conn)

    async def run(self, stop: asyncio.Event) -> None:
        """Archive until ``stop`` is set; reconnects to the broker and the database as needed.

        Raises:
            ArchiveUnavailableError: the first connection to the broker or the database fails.
        """
        await self._database("ingest", at_start=True)
        await self._load_breaks()
        try:
            await self._run(stop)
        except* ArchiveUnavailableError as group:
            raise group.exceptions[0] from None  # one line for the CLI, not a group
        for conn in self._db.values():
            if conn is not None:
                with contextlib.suppress(Exception):
                    await conn.close()

    async def _run(self, stop: asyncio.Event) -> None:
        delay = 0.1
        async with asyncio.TaskGroup() as tasks:
            loops = [
                tasks.create_task(self._verify_loop(stop), name="archive-verify"),
                tasks.create_task(self._store_loop(), name="archive-store"),
            ]
            try:
                while not stop.is_set():
                    try:
                        await self._connection(stop)
                        delay = 0.1
                    except* aiomqtt.MqttError as group:
                        error = "; ".join(dict.fromkeys(str(e) for e in group.exceptions))
                        if not self._connected_once:
                            where = f"{self.config.host}:{self.config.port}"
                            raise ArchiveUnavailableError(f"MQTT broker {where}: {error}") from None
                        log.warning("archive_mqtt_lost", error=error)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(random.uniform(delay / 2, delay)):
                            await stop.wait()
                    delay = min(delay * 2, _MAX_DELAY)
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
        if config.mqtt_v5:
            props = Properties(PacketTypes.CONNECT)  # type: ignore[no-untyped-call]
            props.SessionExpiryInterval = config.session_expiry
            props.ReceiveMaximum = min(65_535, 2 * config.batch_size)
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
        client._client.manual_ack_set(True)
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
            self._send(self.status.status_topic, self.status.status(self._clock()), retain=True)
            log.info("archive_connected", host=self.config.host, share=self.config.share)
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
            offline = canonical_json(self.status.offline(self._clock())).encode("utf-8")
            with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
                async with asyncio.timeout(1):
                    await client.publish(self.status.status_topic, offline, qos=1, retain=True)

    # -- receiving and storing -------------------------------------------------------------

    async def _receive(self, client: aiomqtt.Client, generation: int) -> None:
        async for message in client.messages:
            payload = message.payload
            data = payload if isinstance(payload, bytes) else str(payload).encode("utf-8")
            self._pending.append(
                _Received(generation, message.mid, message.qos, message.topic.value, data)
            )
            self.status.counters.received += 1
            self._arrived.set()
            self._drained.clear()

    async def _store_loop(self) -> None:
        """Store batches as they fill; acknowledge each after its commit.

        Outlives a broker connection on purpose: cancelling a batch half-way through its
        transaction could leave the database connection unusable. A message of a connection
        that is gone is stored but not acknowledged (the broker sends it again: a duplicate).
        """
        config = self.config
        while True:
            await self._arrived.wait()
            if len(self._pending) < config.batch_size:
                # Let a batch fill for a moment: one commit for many records.
                await asyncio.sleep(config.batch_seconds)
            batch = self._pending[: config.batch_size]
            if len(self._pending) <= len(batch):
                self._arrived.clear()
            if not batch:
                continue
            await self._handle(batch)
            client = self._current
            for item in batch:
                if client is not None and item.generation == self._generation and item.qos:
                    client._client.ack(item.mid, item.qos)  # see _client
            del self._pending[: len(batch)]
            if not self._pending:
                self._drained.set()

    async def _handle(self, batch: list[_Received]) -> None:
        """Store a batch's records (retrying until the database takes them), count replies."""
        now = self._clock()
        records: list[Incoming] = []
        for item in batch:
            found = self._table_of(item.topic)
            if found is None:
                continue
            table, kind = found
            if kind == "reply":
                self._reply(table, item.payload)
                continue
            try:
                records.append(parse_published(table, item.payload))
            except MalformedRecordError as exc:
                log.warning("archive_malformed", table=table, error=str(exc))
                self._alarm(self.status.malformed(table, str(exc), now))
        if not records:
            return
        result = await self._store(records)
        counters = self.status.counters
        counters.batches += 1
        counters.stored += result.inserted
        counters.duplicates += result.duplicates
        counters.late += result.late
        for table, seq in result.conflicts:
            self._alarm(self.status.conflict(table, seq, now))
        loop_time = asyncio.get_running_loop().time()
        for record in records:
            quiet = self._quiet.setdefault(record.table_id, _Quiet(loop_time))
            quiet.arrived, quiet.probed, quiet.probes = loop_time, None, 0
            self._last_seq[record.table_id] = max(
                self._last_seq.get(record.table_id, 0), record.seq
            )
        self._dirty |= result.tables
        self._dirty_event.set()

    async def _store(self, records: list[Incoming]) -> StoreResult:
        import psycopg  # noqa: PLC0415 - optional extra

        while True:
            conn = await self._database("ingest")
            try:
                try:
                    return await self._ingest.store(conn, records)
                except _LOST:
                    raise
                except psycopg.Error as exc:
                    # Not the connection: a record the database refuses must not stop the floor.
                    log.exception("archive_batch_refused", error=str(exc).splitlines()[0])
                    return await self._store_one_by_one(conn, records)
            except _LOST as exc:
                await self._lost("ingest", exc)

    async def _store_one_by_one(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], records: list[Incoming]
    ) -> StoreResult:
        import psycopg  # noqa: PLC0415 - optional extra

        total = StoreResult()
        for record in records:
            try:
                one = await self._ingest.store(conn, [record])
            except _LOST:
                raise
            except psycopg.Error as exc:
                detail = f"record {record.seq} refused by the database: {str(exc).splitlines()[0]}"
                self._alarm(self.status.malformed(record.table_id, detail, self._clock()))
                continue
            total = StoreResult(
                total.inserted + one.inserted,
                total.duplicates + one.duplicates,
                total.conflicts + one.conflicts,
                total.late + one.late,
                total.tables | one.tables,
            )
        return total

    def _reply(self, table: str, payload: bytes) -> None:
        try:
            reply = json.loads(payload)
        except ValueError:
            return
        if not isinstance(reply, dict) or not str(reply.get("id", "")).startswith(self._id_head()):
            return
        self.status.counters.resend_replies += 1
        if reply.get("ok") is not True:
            self.status.counters.resend_refused += 1
            log.warning("archive_resend_refused", table=table, code=reply.get("code"))

    # -- the database ----------------------------------------------------------------------

    async def _database(
        self, which: str, *, at_start: bool = False
    ) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        """The named connection, (re)connected with backoff while the server is away.

        Raises:
            ArchiveUnavailableError: only ``at_start``: the server is not there.
        """
        conn = self._db[which]
        if conn is not None and not conn.closed:
            return conn
        delay = 0.2
        while True:
            try:
                conn = await connect_async(self.config.dsn)
            except ArchiveUnavailableError as exc:
                if at_start:
                    raise
                self._alarm(self.status.database(False, str(exc), self._clock()))
                await asyncio.sleep(random.uniform(delay / 2, delay))
                delay = min(delay * 2, _MAX_DELAY)
                continue
            self._db[which] = conn
            if which == "ingest":
                self._ingest.reset()
            self._alarm(self.status.database(True, "connected", self._clock()))
            return conn

    async def _lost(self, which: str, exc: BaseException) -> None:
        log.warning("archive_db_lost", connection=which, error=str(exc).splitlines()[0])
        self._alarm(self.status.database(False, str(exc).splitlines()[0], self._clock()))
        conn, self._db[which] = self._db[which], None
        if conn is not None:
            with contextlib.suppress(Exception):
                await conn.close()
        await asyncio.sleep(0.2)

    async def _load_breaks(self) -> None:
        conn = await self._database("verify")
        async with conn.transaction():
            rows = await (
                await conn.execute(
                    "SELECT table_id, chain_broken_at, broken_reason FROM archive_tables"
                    " WHERE chain_broken_at IS NOT NULL"
                )
            ).fetchall()
        for table, seq, reason in rows:
            self.status.known_break(str(table), int(seq), str(reason or ""))

    # -- verification, resends, status ---------------------------------------------------------

    async def _verify_loop(self, stop: asyncio.Event) -> None:
        """Verify what was stored, when it was stored; revisit what is open; sweep now and then.

        Three cadences, so that a floor of 2,000 mostly healthy tables costs little: a table is
        walked right after a batch of it was committed; a table with an open gap, or one another
        archiver held locked, again every half gap timeout; and every table once a
        ``sweep_every`` (rows another archiver stored and could not verify before it died).
        """
        import psycopg  # noqa: PLC0415 - optional extra

        loop = asyncio.get_running_loop()
        last_sweep = last_retry = last_status = -1e9
        retry_every = max(0.5, self.config.gap_timeout / 2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(retry_every, self.config.status_every)):
                    await self._dirty_event.wait()
            self._dirty_event.clear()
            now = loop.time()
            try:
                conn = await self._database("verify")
                tables = set(self._dirty)
                if now - last_retry >= retry_every:
                    tables |= self._retry
                    tables |= {gap.table for gap in self.status.open_gaps()}
                    last_retry = now
                if now - last_sweep >= self.config.sweep_every:
                    tables |= set(await self._verifier.tables(conn))
                    last_sweep = now
                for table in sorted(tables):
                    try:
                        result = await self._verifier.verify(conn, table, self._clock())
                    except _LOST:
                        raise
                    except psycopg.Error as exc:  # a bug or bad data: this table, not the floor
                        log.exception("archive_verify_failed", table=table, error=str(exc))
                        self._retry.add(table)
                        continue
                    self._dirty.discard(table)
                    if result is None:
                        self._retry.add(table)  # another archiver holds it: later
                        continue
                    self._retry.discard(table)
                    self._passed(result)
            except _LOST as exc:
                await self._lost("verify", exc)
                continue
            self._probe(now)
            if now - last_status >= self.config.status_every:
                self._send(self.status.status_topic, self.status.status(self._clock()), True)
                last_status = now

    def _passed(self, result: TablePass) -> None:
        self._last_seq[result.table] = max(self._last_seq.get(result.table, 0), result.last_seq)
        for alarm in self.status.passed(result, self._clock()):
            log.warning("archive_alarm", **{k: v for k, v in alarm.items() if k != "schema"})
            self._alarm(alarm)
        for gap in result.resends:
            for first in range(gap.from_seq, gap.to_seq + 1, MAX_RESEND):
                self._ask(gap.table, first, min(gap.to_seq, first + MAX_RESEND - 1))

    def _probe(self, now: float) -> None:
        """Ask a quiet table for anything after the newest record stored (a lost tail)."""
        after = self.config.probe_after
        for table, quiet in self._quiet.items():
            since = quiet.probed if quiet.probed is not None else quiet.arrived
            if now - since < after * (2 ** min(quiet.probes, 6)):
                continue
            last = self._last_seq.get(table, 0)
            self._ask(table, last + 1, last + MAX_RESEND)
            quiet.probed, quiet.probes = now, quiet.probes + 1

    def _id_head(self) -> str:
        return f"archive-{self.config.name}-"

    def _ask(self, table: str, first: int, last: int) -> None:
        self._requests += 1
        self.status.counters.resend_requests += 1
        request = {"id": f"{self._id_head()}{self._requests}", "from_seq": first, "to_seq": last}
        topic = Topics(self.config.prefix, table).command("resend")
        self._send(topic, request, retain=False)
        log.info("archive_resend", table=table, from_seq=first, to_seq=last)

    # -- sending ---------------------------------------------------------------------------

    def _alarm(self, alarm: dict[str, Any] | None) -> None:
        if alarm is not None:
            self._send(self.status.alarms_topic, alarm, retain=False)

    def _send(self, topic: str, payload: dict[str, Any], retain: bool) -> None:
        """Queue a message for the current (or next) connection; the oldest go when too many."""
        if self._outgoing.qsize() >= _OUTGOING_LIMIT:
            self._outgoing.get_nowait()
        self._outgoing.put_nowait((topic, canonical_json(payload).encode("utf-8"), retain))

    async def _send_loop(self, client: aiomqtt.Client) -> None:
        while True:
            topic, data, retain = await self._outgoing.get()
            try:
                await client.publish(topic, data, qos=1, retain=retain)
            except BaseException:
                self._outgoing.put_nowait((topic, data, retain))  # on the next connection
                raise
