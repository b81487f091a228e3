"""Driver base classes (STYLE practice 4): a context manager, idempotent close, small hooks.

:class:`StreamDriver` owns the whole connection lifecycle of a byte-stream device so that a
device family only writes three synchronous hooks that take the time as an argument:
``_on_bytes`` (decode and interpret), ``_on_tick`` (timers: silence, hold times) and
``_on_connection_lost``. The loop opens the port, reconnects with jittered exponential backoff when
it vanishes (never busy-looping), reports availability changes, and flushes the writes the hooks
queued. A device family's logic can therefore be tested without any I/O.

:class:`FrameDriver` is its frame-based sibling (a CAN bus: whole :class:`CanFrame` values instead
of bytes, ``_on_frame`` instead of ``_on_bytes``). Both run the one loop of
:class:`~tablectl.drivers.connection.ConnectionLoop`; they differ only in the transport they build,
read and write. :class:`MessageDriver` is the third binding, for devices that are services on an
MQTT broker (whole :class:`TopicMessage` values, ``_on_message``). :class:`Driver`,
:class:`DriverSettings` and :class:`Backoff` live in
:mod:`tablectl.drivers.connection` and are re-exported here: this module is the plugins' surface.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import Awaitable
from typing import Any, ClassVar

from tablectl.drivers.connection import (
    Backoff,
    ConnectionLoop,
    Driver,
    DriverSettings,
    SettingsT,
)
from tablectl.drivers.errors import (
    DriverConfigError,
    TransportClosedError,
)
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.transports.base import ByteStream
from tablectl.drivers.transports.frames import CanFrame, FrameLink, FrameTraceHook
from tablectl.drivers.transports.pubsub import (
    BrokerEndpoint,
    MessageLink,
    MessageTraceHook,
    TopicMessage,
)
from tablectl.drivers.transports.serial import serial_url_problem

__all__ = [
    "Backoff",
    "Driver",
    "DriverSettings",
    "FrameDriver",
    "MessageDriver",
    "SettingsT",
    "StreamDriver",
]


class StreamDriver(ConnectionLoop[ByteStream, bytes, SettingsT]):
    """A driver over a :class:`ByteStream`, with reconnect, availability and timers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stream: ByteStream | None = None
        self._writes: list[bytes] = []

    # --- hooks --------------------------------------------------------------------------------

    @abstractmethod
    def _open_stream(self) -> ByteStream:
        """Build (not open) the transport for ``self.port``."""

    async def _handshake(self) -> None:
        """Runs after each (re)connect, before reading; may ``queue_write`` commands."""

    @abstractmethod
    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        """Decode what arrived and turn it into events."""

    # --- services for subclasses ---------------------------------------------------------------

    def _require_serial_port(self, needs: str) -> str:
        """``port`` checked as a serial port now, when the driver is built (``check-config``).

        A missing or malformed port is a config error then, not a reconnect loop of
        ``port_error`` later; an absent device path is fine (the device may be unplugged).
        ``needs`` says why a port is wanted ("an SS2 wheel needs a serial port").

        Raises:
            DriverConfigError: no port, or one pyserial cannot take (see ``serial_url_problem``).
        """
        if self.port is None:
            raise DriverConfigError(self.device_id, f"missing key 'port' ({needs})")
        problem = serial_url_problem(self.port)
        if problem is not None:
            raise DriverConfigError(self.device_id, f"port {self.port!r}: {problem}")
        return self.port

    def queue_write(self, data: bytes) -> None:
        """Send ``data`` as soon as the loop gets control (hooks are synchronous)."""
        self._writes.append(data)
        self._wake.set()

    async def send_raw(self, data: bytes) -> None:
        if self._stream is None:
            raise TransportClosedError(f"device {self.device_id!r} is not connected")
        if self.trace:
            self.trace("tx", data)
        await self._stream.write(data)

    # --- the loop's transport hooks -------------------------------------------------------------

    def _new_link(self) -> ByteStream:
        return self._open_stream()

    def _attach(self, link: ByteStream) -> None:
        self._stream = link

    def _detach(self) -> None:
        self._stream = None
        self._writes.clear()

    async def _flush(self, link: ByteStream) -> None:
        while self._writes:
            data = self._writes.pop(0)
            if self.trace:
                self.trace("tx", data)
            await link.write(data)

    def _read_once(self, link: ByteStream) -> Awaitable[bytes]:
        return link.read()

    def _deliver(self, item: bytes, now: float) -> list[DeviceEvent]:
        if self.trace:
            self.trace("rx", item)
        return self._on_bytes(item, now)


class FrameDriver(ConnectionLoop[FrameLink, CanFrame, SettingsT]):
    """A driver over a :class:`FrameLink`, with reconnect, availability and timers.

    Hooks (synchronous, time passed in, so device logic is testable without I/O):
    ``_open_link`` (build, not open), ``_handshake`` (after each connect; may ``queue_frame``),
    ``_on_frame``, ``_on_tick`` and ``_on_connection_lost``. ``_on_tick`` may raise
    :class:`TransportClosedError` to make the loop drop and reopen the link.
    """

    tick_interval: float = 0.1
    """How often ``_on_tick`` runs while connected (seconds; instances may lower it)."""

    _hook_unavailable_is_down: ClassVar[bool] = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._link: FrameLink | None = None
        self._out: list[CanFrame] = []
        self.frame_trace: FrameTraceHook | None = None

    @abstractmethod
    def _open_link(self) -> FrameLink:
        """Build (not open) the link."""

    async def _handshake(self) -> None:
        """Runs after each (re)connect, before reading."""

    @abstractmethod
    def _on_frame(self, frame: CanFrame, now: float) -> list[DeviceEvent]:
        """Decode one frame and turn it into events."""

    # --- services for subclasses ---------------------------------------------------------------

    def queue_frame(self, frame: CanFrame) -> None:
        """Send ``frame`` as soon as the loop gets control (hooks are synchronous)."""
        self._out.append(frame)
        self._wake.set()

    async def send_frame(self, frame: CanFrame) -> None:
        """Send ``frame`` now.

        Raises:
            TransportClosedError: not connected, or the link failed.
        """
        link = self._link
        if link is None:
            raise TransportClosedError(f"device {self.device_id!r} is not connected")
        if self.frame_trace:
            self.frame_trace("tx", frame)
        await link.send(frame)

    async def send_raw(self, data: bytes) -> None:
        """Technician tools: ``data`` is a 2-byte big-endian 11-bit id and 0–8 data bytes
        (``bytes.fromhex("0310" "01010000")`` = start mixing on node 0x10).

        Raises:
            ValueError: not an id and at most 8 bytes.
            TransportClosedError: not connected.
        """
        if not 2 <= len(data) <= 10:
            raise ValueError("raw CAN frame: 2-byte id and 0-8 data bytes")
        await self.send_frame(CanFrame(int.from_bytes(data[:2], "big"), bytes(data[2:])))

    # --- the loop's transport hooks -------------------------------------------------------------

    def _new_link(self) -> FrameLink:
        return self._open_link()

    def _attach(self, link: FrameLink) -> None:
        self._link = link

    def _detach(self) -> None:
        self._link = None
        self._out.clear()

    async def _flush(self, link: FrameLink) -> None:
        del link  # send_frame writes to the current link, which is this one
        while self._out:
            await self.send_frame(self._out.pop(0))

    def _read_once(self, link: FrameLink) -> Awaitable[CanFrame]:
        return link.recv()

    def _deliver(self, item: CanFrame, now: float) -> list[DeviceEvent]:
        if self.frame_trace:
            self.frame_trace("rx", item)
        return self._on_frame(item, now)

    async def _abandon_read(self, reader: asyncio.Future[CanFrame]) -> None:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)


class MessageDriver(ConnectionLoop[MessageLink, TopicMessage, SettingsT]):
    """A driver over a :class:`MessageLink`: devices that are services on an MQTT broker.

    Hooks, as for the other two bindings (synchronous, time passed in): ``_open_link`` (build, not
    open), ``_handshake`` (after each connect; may ``queue_publish``), ``_on_message``,
    ``_on_tick`` and ``_on_connection_lost``. A broker that drops us, or a PUBACK that never
    comes, is a :class:`TransportClosedError` like an unplugged port: one ``disconnected``
    unavailability, the one backoff, a fresh link. Whether the *devices behind* the broker are
    there is the family's to say (``DeviceAvailable``/``DeviceUnavailable("silent")`` from its
    interpreter): a broker that accepts us proves nothing about a shaker.

    Args:
        table_broker: the table's own ``[mqtt]`` broker, which the composition root hands to every
            message driver it builds (``tablectl.controller.service.app.build_drivers``), so a
            studio device needs no second copy of the broker's address, CA and password. A family
            with its own ``url`` key uses that instead; ``None`` when built outside a table
            (technician tools, tests).
    """

    tick_interval: float = 0.1
    """How often ``_on_tick`` runs while connected (seconds; instances may lower it)."""

    _hook_unavailable_is_down: ClassVar[bool] = True

    def __init__(
        self, *args: Any, table_broker: BrokerEndpoint | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.table_broker = table_broker
        self._link: MessageLink | None = None
        self._out: list[TopicMessage] = []
        self.message_trace: MessageTraceHook | None = None

    @abstractmethod
    def _open_link(self) -> MessageLink:
        """Build (not open) the link, with the family's subscriptions."""

    async def _handshake(self) -> None:
        """Runs after each (re)connect, before reading; may ``queue_publish``."""

    @abstractmethod
    def _on_message(self, message: TopicMessage, now: float) -> list[DeviceEvent]:
        """Decode one message and turn it into events."""

    # --- services for subclasses ---------------------------------------------------------------

    def queue_publish(self, message: TopicMessage) -> None:
        """Publish ``message`` as soon as the loop gets control (hooks are synchronous)."""
        self._out.append(message)
        self._wake.set()

    async def publish(self, message: TopicMessage) -> None:
        """Publish ``message`` now (QoS 1, waiting for the broker's acknowledgement).

        Raises:
            TransportClosedError: not connected, or the link failed.
        """
        link = self._link
        if link is None:
            raise TransportClosedError(f"device {self.device_id!r} is not connected")
        if self.message_trace:
            self.message_trace("tx", message)
        await link.send(message)

    async def send_raw(self, data: bytes) -> None:
        """Technician tools: ``data`` is ``TOPIC PAYLOAD``, split at the first space
        (``b"studio/shaker/listens /state"`` asks a shaker for its state).

        Raises:
            ValueError: no space, or an empty topic.
            TransportClosedError: not connected.
        """
        topic, space, payload = data.partition(b" ")
        if not space or not topic:
            raise ValueError("raw message: TOPIC, a space, then the payload")
        await self.publish(TopicMessage(topic.decode("utf-8", "replace"), payload))

    # --- the loop's transport hooks -------------------------------------------------------------

    def _new_link(self) -> MessageLink:
        return self._open_link()

    def _attach(self, link: MessageLink) -> None:
        self._link = link

    def _detach(self) -> None:
        self._link = None
        self._out.clear()

    async def _flush(self, link: MessageLink) -> None:
        del link  # publish writes to the current link, which is this one
        while self._out:
            await self.publish(self._out.pop(0))

    def _read_once(self, link: MessageLink) -> Awaitable[TopicMessage]:
        return link.recv()

    def _deliver(self, item: TopicMessage, now: float) -> list[DeviceEvent]:
        if self.message_trace:
            self.message_trace("rx", item)
        return self._on_message(item, now)

    async def _abandon_read(self, reader: asyncio.Future[TopicMessage]) -> None:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
