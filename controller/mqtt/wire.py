"""The outbox's own MQTT connection: QoS 1 PUBLISHes out, PUBACKs counted by packet id.

Beside aiomqtt's because paho cost half the CPU per event (docs/performance.md). It only publishes;
MQTT orders one connection only, so everything whose order matters goes here. Clean session: the
journal is the queue.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar

import aiomqtt

from tablectl.controller.core.closing import AsyncClosing
from tablectl.controller.mqtt import packets
from tablectl.controller.mqtt.packets import Packet, PacketError, PacketReader

Token = TypeVar("Token")

_MAX_PACKET_ID = 0xFFFF


@dataclass(frozen=True, slots=True)
class Link:
    """Where the wire connects and as whom. ``keepalive``: a PINGREQ after half of it without a
    write, given up when the PINGRESP is not back within a whole one."""

    host: str
    port: int
    client_id: str
    keepalive: int
    timeout: float
    tls_context: ssl.SSLContext | None = None
    username: str | None = None
    password: str | None = None


class _Protocol(asyncio.Protocol):
    """asyncio's side of the socket: hands everything to its :class:`Wire`."""

    def __init__(self, wire: Wire[Any]) -> None:
        self.wire = wire

    def data_received(self, data: bytes) -> None:
        self.wire._received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.wire._lost(exc)


class Wire(AsyncClosing, Generic[Token]):
    """One connected MQTT 3.1.1 client that only publishes, QoS 1; use from the event loop only.

    ``on_puback(token)`` once per PUBLISH; ``on_lost(error)`` once when the connection ends other
    than by :meth:`close`. Neither may raise: they run inside asyncio's read callback.
    """

    def __init__(
        self,
        link: Link,
        on_puback: Callable[[Token], None],
        on_lost: Callable[[aiomqtt.MqttError], None] | None = None,
    ) -> None:
        self._link = link
        self._on_puback = on_puback
        self._on_lost = on_lost
        self._transport: asyncio.Transport | None = None
        self._reader = PacketReader()
        self._pending: dict[int, Token] = {}
        self._next_id = 1
        self._topics: dict[str, bytes] = {}  # topic → its encoded name (packets.publish_header)
        self._queued: list[bytes] = []
        self._connack: asyncio.Future[int] | None = None
        self._error: aiomqtt.MqttError | None = None
        self._lost_future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._closing = False
        self._opened = False  # open() succeeded: only such a wire reports a loss (on_lost)
        self._last_write = 0.0
        self._ping_sent: float | None = None
        self._ping_timer: asyncio.TimerHandle | None = None

    # -- life ----------------------------------------------------------------------------------

    @classmethod
    async def open(
        cls,
        link: Link,
        on_puback: Callable[[Token], None],
        on_lost: Callable[[aiomqtt.MqttError], None] | None = None,
    ) -> Self:
        """Connect, send CONNECT and wait for a CONNACK that accepts it, within ``link.timeout`` (a
        refusal's text is paho's, so :func:`~.security.connect_failure_hint` reads it)."""
        wire = cls(link, on_puback, on_lost)
        try:
            async with asyncio.timeout(link.timeout):
                await wire._connect()
        except TimeoutError:
            wire._abort()
            raise aiomqtt.MqttError(
                f"outbox connection to {link.host}:{link.port}: no CONNACK within {link.timeout} s"
            ) from None
        except BaseException:
            wire._abort()
            raise
        return wire

    async def _connect(self) -> None:
        link = self._link
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await loop.create_connection(
                lambda: _Protocol(self),
                link.host,
                link.port,
                ssl=link.tls_context,
                server_hostname=link.host if link.tls_context is not None else None,
            )
        except ssl.SSLError as exc:
            raise aiomqtt.MqttError(f"outbox connection: TLS handshake failed: {exc}") from exc
        except OSError as exc:
            raise aiomqtt.MqttError(f"outbox connection: {exc}") from exc
        self._transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:  # small packets must not wait for Nagle's algorithm
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._connack = loop.create_future()
        try:
            connect = packets.connect_packet(
                link.client_id,
                keepalive=link.keepalive,
                username=link.username,
                password=link.password,
            )
        except ValueError as exc:
            raise aiomqtt.MqttError(f"outbox connection: {exc}") from exc
        self._write(connect)
        code = await self._connack
        if code != 0:
            refusal = packets.CONNACK_REFUSALS.get(code, f"Connection refused: code {code}")
            raise aiomqtt.MqttError(f"outbox connection: {refusal}")
        if self._lost_future.done():  # lost between the accepting CONNACK and here
            raise self._error or aiomqtt.MqttError("outbox connection lost")
        self._opened = True
        if link.keepalive > 0:
            self._ping_timer = loop.call_later(link.keepalive / 2, self._keepalive)

    async def close(self) -> None:
        """DISCONNECT and close (idempotent): the broker drops nothing we sent before it."""
        if self._closing:
            return
        self._closing = True
        self._pending.clear()
        if self._ping_timer is not None:
            self._ping_timer.cancel()
        transport = self._transport
        if transport is None or transport.is_closing():
            return
        self.flush()
        transport.write(packets.DISCONNECT)
        transport.close()
        # Let asyncio's connection_lost run, so the socket is closed before we return.
        await asyncio.wait({self._lost_future}, timeout=1.0)

    async def wait_lost(self) -> None:
        """Wait until the connection ends; raises its error unless :meth:`close` ended it."""
        await asyncio.shield(self._lost_future)
        if self._error is not None:
            raise self._error

    # -- publishing ----------------------------------------------------------------------------

    def publish(self, topic: str, payload: bytes, *, retain: bool, token: Token) -> None:
        """Queue a QoS 1 PUBLISH for the next :meth:`flush`; ``on_puback(token)`` follows its
        PUBACK."""
        if self._error is not None or self._closing:
            raise aiomqtt.MqttError(f"outbox connection is closed: {self._error}")
        encoded = self._topics.get(topic)
        if encoded is None:
            encoded = self._topics[topic] = packets.publish_header(topic)
        packet_id = self._take_id()
        self._queued.append(packets.publish_packet(encoded, packet_id, payload, retain=retain))
        self._pending[packet_id] = token

    def flush(self) -> None:
        """Write every queued PUBLISH in one go (one ``send`` for a whole batch)."""
        if self._queued and self._transport is not None and not self._transport.is_closing():
            queued, self._queued = self._queued, []
            self._write(b"".join(queued))

    @property
    def in_flight(self) -> int:
        """PUBLISHes queued or sent and not acknowledged yet."""
        return len(self._pending)

    def forget(self) -> None:
        """Stop waiting for what is in flight: a late PUBACK for it is ignored."""
        self._pending.clear()

    def _take_id(self) -> int:
        packet_id = self._next_id
        pending = self._pending
        if len(pending) >= _MAX_PACKET_ID:
            raise aiomqtt.MqttError("outbox connection: 65535 PUBLISHes unacknowledged")
        while packet_id in pending:  # wrapped around onto one still in flight: skip it
            packet_id = packet_id % _MAX_PACKET_ID + 1
        self._next_id = packet_id % _MAX_PACKET_ID + 1
        return packet_id

    def _write(self, data: bytes) -> None:
        assert self._transport is not None
        self._transport.write(data)
        self._last_write = asyncio.get_running_loop().time()

    # -- reading -------------------------------------------------------------------------------

    def _received(self, data: bytes) -> None:
        try:
            for packet in self._reader.feed(data):
                if packet.first == packets.PUBACK and len(packet.body) == 2:
                    self._acknowledge(int.from_bytes(packet.body, "big"))
                else:
                    self._control(packet)
        except PacketError as exc:
            self._fail(aiomqtt.MqttError(f"outbox connection: {exc}"))

    def _acknowledge(self, packet_id: int) -> None:
        """A PUBACK: its PUBLISH's token to ``on_puback`` (one not waited for is ignored)."""
        pending = self._pending
        if packet_id in pending:
            self._on_puback(pending.pop(packet_id))

    def _control(self, packet: Packet) -> None:
        if packet.first == packets.CONNACK and len(packet.body) == 2:
            if self._connack is not None and not self._connack.done():
                self._connack.set_result(packet.body[1])
                return
            raise PacketError("a second CONNACK")
        if packet.first == packets.PINGRESP and not packet.body:
            self._ping_sent = None
            return
        raise PacketError(f"unexpected packet 0x{packet.first:02x} of {len(packet.body)} bytes")

    # -- keepalive and loss --------------------------------------------------------------------

    def _keepalive(self) -> None:
        loop = asyncio.get_running_loop()
        keepalive = self._link.keepalive
        now = loop.time()
        if self._ping_sent is not None and now - self._ping_sent >= keepalive:
            self._fail(aiomqtt.MqttError(f"outbox connection: no PINGRESP within {keepalive} s"))
            return
        if self._ping_sent is None and now - self._last_write >= keepalive / 2:
            self._ping_sent = now
            self._write(packets.PINGREQ)
        self._ping_timer = loop.call_later(keepalive / 2, self._keepalive)

    def _fail(self, error: aiomqtt.MqttError) -> None:
        """End the connection with ``error`` (reported by :meth:`_lost`)."""
        if self._error is None:
            self._error = error
        self._abort()

    def _abort(self) -> None:
        if self._transport is not None:
            self._transport.abort()
        elif not self._lost_future.done():
            self._lost(None)

    def _lost(self, exc: Exception | None) -> None:
        if self._ping_timer is not None:
            self._ping_timer.cancel()
        if not self._closing and self._error is None:
            self._error = aiomqtt.MqttError(f"outbox connection lost: {exc or 'closed by broker'}")
        if self._connack is not None and not self._connack.done():
            self._connack.set_exception(self._error or aiomqtt.MqttError("connection closed"))
            self._connack.exception()  # retrieved: _connect raises it
        if not self._lost_future.done():
            self._lost_future.set_result(None)
            on_lost = self._on_lost
            error = self._error
            if on_lost is not None and error is not None and self._opened and not self._closing:
                on_lost(error)
