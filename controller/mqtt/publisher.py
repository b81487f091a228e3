"""The MQTT side of a table: outbox drain, retained snapshots, status and commands (contracts §4.3).

Design: docs/mqtt.md. Two connections, rebuilt together: aiomqtt's (status, commands, replies) and
the outbox's own (:mod:`.wire`: records and retained views, so a view follows its records).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import Any, Self

import aiomqtt
import structlog

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.bounded_json import read_object
from tablectl.controller.core.errors import ConfigError, JournalError, MalformedError
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import SCHEMA, Journal, canonical_json
from tablectl.controller.mqtt.drain import OutboxDrain
from tablectl.controller.mqtt.outbound import Outbound
from tablectl.controller.mqtt.security import ClientSecurity, client_security, connect_failure_hint
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.mqtt.wire import Link, Wire
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.connection import Backoff
from tablectl.drivers.transports.pubsub import broker_url_problem, split_broker_url

CommandHandler = Callable[[str, bytes], Awaitable[Mapping[str, Any]]]
"""``on_command(verb, payload) -> reply``: called for each message on ``cmd/{verb}``."""

TraceHook = Callable[[str, Mapping[str, Any]], None]
"""``trace(what, details)``: an observation seam for tests and diagnostics (see Publisher)."""

_INITIAL_DELAY = 0.1
OUTBOX_CLIENT_SUFFIX = "-outbox"
"""The outbox's own connection (:mod:`.wire`) connects as the table's client id + this."""
_OFFLINE_TIMEOUT = 1.0

RESEND_CHUNK = 32
"""``cmd/resend`` records sent in one go, between two looks at the outbox (an outcome finds at
most this many resent records ahead of it on the wire)."""
RESEND_PAUSE = 0.032
"""Seconds between two chunks of resent records: :data:`RESEND_CHUNK` at 1,000 records a
second, the resend budget's rate (``service.runner.resend.RESEND_RATE``, which a test holds
equal), so a table resends no faster however many requesters were granted a burst."""
"""Bound on the goodbye publish: a dead broker must not hold up shutdown."""
_REFUSAL_LOG_INTERVAL = 60.0
"""Seconds between repeated warnings for the same TLS/credential refusal (retries go on)."""

log = structlog.get_logger(__name__)


def broker_address(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of an ``mqtt://`` or ``mqtts://`` URL, by the drivers' rules, so a
    table's ``[mqtt] url`` and a studio device's read alike."""
    if url == "embedded":
        raise ConfigError('mqtt.url "embedded" has no address: start an EmbeddedBroker and use it')
    problem = broker_url_problem(url)
    if problem is not None:
        raise ConfigError(f"mqtt.url {url!r}: {problem}")
    return split_broker_url(url)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def _as_bytes(payload: object) -> bytes:
    if isinstance(payload, bytes | bytearray):
        return bytes(payload)
    if payload is None:
        return b""
    return str(payload).encode("utf-8")


def _request_id(payload: bytes) -> Any:
    # Echo a correlation id on error replies even when the handler never saw the request.
    try:
        obj = read_object(payload)
    except MalformedError:
        return None
    request_id = obj.get("id")
    # Only plain ids are echoed: NaN or a lone surrogate would make the reply itself unencodable.
    if isinstance(request_id, int) and not isinstance(request_id, bool):
        return request_id
    if isinstance(request_id, str) and request_id.isprintable() and len(request_id) <= 200:
        try:
            request_id.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return request_id
    return None


class Publisher:
    """Publishes one table's journal and snapshots to an MQTT broker and serves its commands.

    Reusable, not reentrant. Leaving flushes the outbox for up to ``flush_timeout`` seconds,
    publishes ``status`` offline and disconnects. ``trace`` must be cheap and must not raise.
    """

    def __init__(
        self,
        config: MqttConfig,
        topics: Topics,
        journal: Journal,
        *,
        host: str,
        port: int,
        on_command: CommandHandler | None = None,
        outbound: Outbound | None = None,
        trace: TraceHook | None = None,
        batch_size: int = 100,
        timeout: float = 10.0,
        flush_timeout: float = 2.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._config = config
        self._clock = clock
        self._topics = topics
        self._journal = journal
        self._host = host
        self._port = port
        self._on_command = on_command
        if outbound is not None and outbound.topics != topics:
            raise ValueError(f"outbound topics {outbound.topics} are not {topics}")
        self._out = outbound if outbound is not None else Outbound(topics, now=clock.wall)
        self._trace = trace
        self._batch_size = batch_size
        self._timeout = timeout
        self._flush_timeout = flush_timeout
        # Secrets and certificates are read now, so a bad path fails the start with a
        # ConfigError naming it instead of every reconnect failing in the background.
        self._security = ClientSecurity()
        if config.url != "embedded":
            broker_address(config.url)  # a bad URL is a ConfigError now, not in the background
            self._security = client_security(config)
        self._refusal: tuple[str, float] | None = None
        self._connected_at: float | None = None
        self._client_id = config.client_id or f"tablectl-{topics.table_id}"
        self._offline = canonical_json(
            {"schema": SCHEMA, "state": "offline", "table": topics.table_id}
        ).encode("utf-8")
        self._drain = OutboxDrain(
            journal, topics, self._out, trace=trace, batch_size=batch_size, timeout=timeout
        )
        security = self._security
        self._link = Link(
            host,
            port,
            client_id=f"{self._client_id}{OUTBOX_CLIENT_SUFFIX}",
            keepalive=config.keepalive,
            timeout=timeout,
            tls_context=security.tls_context,
            username=security.username,
            password=security.password,
        )
        self._task_group: asyncio.TaskGroup | None = None
        self._main: asyncio.Task[None] | None = None
        self._new_events()

    def _new_events(self) -> None:
        # Fresh per use: asyncio primitives bind to the loop they are first used in.
        self._stop = asyncio.Event()
        self._out.renew()

    # -- public API ------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether a broker connection is up (birth published, commands subscribed)."""
        return self._out.connected.is_set()

    async def wait_connected(self) -> None:
        """Wait until connected (bound it with ``asyncio.timeout``)."""
        await self._out.connected.wait()

    def notify(self) -> None:
        """Tell the outbox that the journal has records it was not handed (an append outside the
        runner: a time-based anchor, a tool); it reads them from the file. Cheap; from the event
        loop's thread (the runner hands its commits: :meth:`Outbound.committed`).
        """
        self._out.notify()

    def set_retained(self, topic: str, payload: Mapping[str, Any]) -> None:
        """Set a latest-value slot, published retained after every reconnect; rapid updates
        coalesce."""
        self._out.set_retained(topic, payload)

    def set_status(self, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` into the retained ``status`` (birth and every update after it).

        The Last Will still says offline: only a live controller can say it is locked.
        """
        self._out.set_status(extra)

    def publish_once(self, topic: str, payload: Mapping[str, Any]) -> None:
        """Publish a non-record message soon (a journal outage's alarm); dropped with no connection
        up (the retained ``status`` and ``state`` carry the same fact)."""
        self._out.publish_once(topic, payload)

    async def __aenter__(self) -> Self:
        if self._task_group is not None:
            raise RuntimeError("Publisher is reusable but not reentrant")
        self._new_events()
        self._out.dirty = dict.fromkeys(self._out.slots)
        task_group = asyncio.TaskGroup()
        await task_group.__aenter__()
        self._task_group = task_group
        self._main = task_group.create_task(
            self._reconnect_loop(), name=f"mqtt-{self._topics.table_id}-reconnect"
        )
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        task_group, main = self._task_group, self._main
        if task_group is None or main is None:
            return
        self._stop.set()
        self._out.wakeup.set()
        try:
            # Let the loop flush and say goodbye (it bounds that itself); a connect attempt to a
            # black-holed broker is not worth waiting for, so cancel after a grace period.
            done, _ = await asyncio.wait({main}, timeout=self._flush_timeout + 3 * _OFFLINE_TIMEOUT)
            if not done:
                main.cancel()
                await asyncio.wait({main})
        except BaseException as err:
            # Cancelled while leaving: abort the loop (it still tries the offline status).
            await task_group.__aexit__(type(err), err, err.__traceback__)
            raise
        finally:
            self._task_group = self._main = None
        await task_group.__aexit__(exc_type, exc, tb)

    # -- connection ------------------------------------------------------------------------

    def _make_client(self) -> aiomqtt.Client:
        client = aiomqtt.Client(
            self._host,
            self._port,
            identifier=self._client_id,
            keepalive=self._config.keepalive,
            clean_session=True,
            timeout=self._timeout,
            will=aiomqtt.Will(self._topics.status, self._offline, qos=1, retain=True),
            username=self._security.username,
            password=self._security.password,
            tls_context=self._security.tls_context,
            # Small MQTT packets must not wait for Nagle's algorithm (up to 40 ms per batch).
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        return client

    async def _reconnect_loop(self) -> None:
        # Jittered, so a fleet of tables does not reconnect in lockstep after a broker restart.
        backoff = Backoff(_INITIAL_DELAY, self._config.reconnect_max_delay)
        while not self._stop.is_set():
            client = self._make_client()
            self._connected_at = None  # set by _serve once both connections are up
            try:
                async with client:
                    try:
                        await self._serve(client)
                    except asyncio.CancelledError:
                        await self._say_offline(client)
                        raise
            except* (aiomqtt.MqttError, JournalError) as group:
                # A refusal of either connection (credentials, TLS, a client-id rule on the
                # broker) is a connect failure, with its hint, not a lost connection.
                self._on_connection_error(group, was_connected=self._connected_at is not None)
            finally:
                self._out.connected.clear()
            if self._stop.is_set():
                return
            # Back off from the start again only after a connection that lasted: a broker that
            # accepts and then drops us (say, a second process with our client id) must not
            # see a reconnect every 0.1 s.
            connected_at = self._connected_at
            if (
                connected_at is not None
                and self._clock.monotonic() - connected_at >= self._config.reconnect_max_delay
            ):
                backoff.reset()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(backoff.next()):
                    await self._stop.wait()

    def _on_connection_error(self, group: BaseExceptionGroup[Any], *, was_connected: bool) -> None:
        # Nested groups (a pipelined batch fails 100 times over) collapse to distinct messages.
        error = "; ".join(dict.fromkeys(str(e) or type(e).__name__ for e in _leaves(group)))
        if self._trace is not None:
            self._trace("disconnected", {"error": error})
        hint = None if was_connected else connect_failure_hint(error)
        if was_connected:
            log.warning("mqtt connection lost", table=self._topics.table_id, error=error)
        elif hint is not None and self._should_warn(error):
            # A wrong CA or password does not heal by retrying: say so (we still retry, since
            # the broker's side may be what gets fixed), at most once a minute per error.
            log.warning("mqtt connect refused", table=self._topics.table_id, error=error, hint=hint)
        else:
            log.debug("mqtt connect failed", table=self._topics.table_id, error=error)

    def _should_warn(self, error: str) -> bool:
        now = self._clock.monotonic()
        last = self._refusal
        if last is not None and last[0] == error and now - last[1] < _REFUSAL_LOG_INTERVAL:
            return False
        self._refusal = (error, now)
        return True

    async def _serve(self, client: aiomqtt.Client) -> None:
        """One connection's life: birth, snapshots, subscribe, then the loops until stop; if either
        connection fails, both are rebuilt."""
        out = self._out
        async with await self._drain.connect(self._link) as wire:
            self._connected_at = self._clock.monotonic()
            birth = canonical_json(out.birth()).encode("utf-8")
            out.slots.pop(self._topics.status, None)  # the birth is the newest status
            await client.publish(self._topics.status, birth, qos=1, retain=True)
            out.transient.clear()  # said for a connection that is gone; status says it now
            out.resends.clear()  # likewise: the requester asks again
            out.dirty = dict.fromkeys(out.slots)
            await self._publish_slots(client, wire)
            self._drain.republish_retained(wire)
            await client.subscribe(self._topics.command_filter, qos=1)
            out.connected.set()
            log.info(
                "mqtt connected", table=self._topics.table_id, host=self._host, port=self._port
            )
            if self._trace is not None:
                self._trace("connected", {"host": self._host, "port": self._port})
            name = f"mqtt-{self._topics.table_id}"
            async with asyncio.TaskGroup() as tg:
                outbox = tg.create_task(self._drain.run(wire, self._stop), name=f"{name}-outbox")
                others = [
                    tg.create_task(self._retained_loop(client, wire), name=f"{name}-retained"),
                    tg.create_task(self._command_loop(client), name=f"{name}-commands"),
                    tg.create_task(self._resend_loop(wire), name=f"{name}-resends"),
                    tg.create_task(wire.wait_lost(), name=f"{name}-outbox-link"),
                ]
                await self._stop.wait()
                await asyncio.wait({outbox}, timeout=self._flush_timeout)
                for task in (outbox, *others):
                    task.cancel()
        out.connected.clear()
        await self._say_offline(client)

    async def _say_offline(self, client: aiomqtt.Client) -> None:
        self._out.connected.clear()
        payload = {
            "schema": SCHEMA,
            "state": "offline",
            "table": self._topics.table_id,
            "ts": format_moment(self._out.now()),
        }
        with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
            async with asyncio.timeout(_OFFLINE_TIMEOUT):
                await client.publish(
                    self._topics.status, canonical_json(payload), qos=1, retain=True
                )

    # -- retained slots --------------------------------------------------------------------

    async def _retained_loop(self, client: aiomqtt.Client, wire: Wire[Any]) -> None:
        while True:
            await self._out.slots_changed.wait()
            # One turn of the loop first: the records journaled with this state change are
            # being handed to the outbox in this same turn, and an outcome on the wire matters
            # more than the snapshot that follows it (measured: ~0.1 ms earlier outcomes).
            await asyncio.sleep(0)
            self._out.slots_changed.clear()
            await self._publish_slots(client, wire)

    async def _publish_slots(self, client: aiomqtt.Client, wire: Wire[Any]) -> None:
        """Send the one-off messages, then every slot changed since the last call, on the outbox's
        connection (the views follow their records). ``status`` alone goes on the table's own
        connection, beside its Will, so an "online" never arrives after the Will's "offline"."""
        out = self._out
        status = self._topics.status
        while out.transient:
            topic, data = out.transient.pop(0)
            wire.publish(topic, data, retain=False, token=None)
        status_changed = False
        while out.dirty:
            topic = next(iter(out.dirty))
            del out.dirty[topic]
            if topic == status:
                status_changed = True
            else:
                wire.publish(topic, out.slots[topic], retain=True, token=None)
        wire.flush()
        if status_changed:
            try:
                await client.publish(status, out.slots[status], qos=1, retain=True)
            except BaseException:
                # Not acknowledged: publish again (the then-latest value) after reconnect.
                out.dirty.setdefault(status, None)
                raise

    # -- resends ---------------------------------------------------------------------------

    @property
    def resending(self) -> bool:
        """Whether ``cmd/resend`` records are still queued to go out."""
        return bool(self._out.resends)

    async def _resend_loop(self, wire: Wire[Any]) -> None:
        """Send ``cmd/resend``'s records behind live play: a chunk of :data:`RESEND_CHUNK` at a
        time, only while the outbox has nothing of its own to send, a pause after each (the
        requester's budget already bounds the rate; this bounds what an outcome can find ahead
        of it on the wire: one chunk)."""
        out = self._out
        while True:
            await out.resend_waiting.wait()
            while out.resends:
                if not self._drain.idle:
                    await asyncio.sleep(RESEND_PAUSE)
                    continue
                for _ in range(min(RESEND_CHUNK, len(out.resends))):
                    topic, data = out.resends.popleft()
                    wire.publish(topic, data, retain=False, token=None)
                wire.flush()
                await asyncio.sleep(RESEND_PAUSE)
            out.resend_waiting.clear()

    # -- commands --------------------------------------------------------------------------

    async def _command_loop(self, client: aiomqtt.Client) -> None:
        # Sequential on purpose: commands such as manual card entry must apply in order.
        async for message in client.messages:
            verb = self._topics.command_verb(message.topic.value)
            if verb is None:
                continue
            if self._trace is not None:
                self._trace("command", {"verb": verb})
            reply = await self._run_command(verb, _as_bytes(message.payload))
            await client.publish(self._topics.reply(verb), reply, qos=1)

    async def _run_command(self, verb: str, payload: bytes) -> bytes:
        reply = await self._command_reply(verb, payload)
        if self._trace is not None and not reply.get("ok"):
            code = reply.get("code")
            self._trace("command_refused", {"verb": verb, "code": code or "error"})
        return self._encode_reply(payload, verb, reply)

    async def _command_reply(self, verb: str, payload: bytes) -> Mapping[str, Any]:
        if self._on_command is None:
            reply: Mapping[str, Any] = self._error_reply(
                payload, "commands are not accepted by this table"
            )
        else:
            try:
                reply = await self._on_command(verb, payload)
            except Exception as exc:  # a handler bug must not take the table offline
                log.exception("command handler failed", table=self._topics.table_id, verb=verb)
                reply = self._error_reply(payload, f"{type(exc).__name__}: {exc}")
        return reply

    def _encode_reply(self, payload: bytes, verb: str, reply: Mapping[str, Any]) -> bytes:
        try:
            return canonical_json({"schema": SCHEMA, **reply}).encode("utf-8")
        except (TypeError, ValueError) as exc:
            log.error("command reply is not JSON", table=self._topics.table_id, verb=verb)
            return canonical_json(
                self._error_reply(payload, f"reply is not JSON-serializable: {exc}")
            ).encode("utf-8")

    @staticmethod
    def _error_reply(payload: bytes, error: str) -> dict[str, Any]:
        reply: dict[str, Any] = {"schema": SCHEMA, "ok": False, "error": error}
        request_id = _request_id(payload)
        if request_id is not None:
            reply["id"] = request_id
        return reply
