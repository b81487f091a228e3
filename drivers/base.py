"""The driver base (STYLE practice 4): one connection loop, owned here, behind a few hooks.

A family declares what differs: ``_open_link``, ``_new_decoder``, ``_encode`` and a pure
``interpreter`` (messages and time in, events and commands out). :class:`DeviceDriver` owns the
rest: open with :class:`Backoff` retries, handshake, pump (write, wait for an item, a wake-up or
``tick_interval``), decode, offer each message to the interpreter and to the waiting
:class:`~tablectl.drivers.replies.Replies`, and reopen on :class:`TransportClosedError`. A link that
calls back (:class:`~tablectl.drivers.transports.base.CallbackStream`) is decoded in its callback;
any other is read by a task. Every wait and every ``now`` is the injected clock's, so a
:class:`~tablectl.drivers.clock.ManualClock` decides when ticks and reconnects happen.

:class:`StreamDriver` (bytes), :class:`FrameDriver` (CAN) and :class:`MessageDriver` (MQTT) bind
the kinds of link. :class:`Driver`, :class:`DriverSettings` and :class:`Backoff` are re-exported
from :mod:`tablectl.drivers.connection`: this module is the plugins' surface.
"""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.connection import Backoff, Driver, DriverSettings, SettingsT
from tablectl.drivers.errors import DriverConfigError, DriverError, TransportClosedError
from tablectl.drivers.events import DeviceAvailable, DeviceEvent, DeviceUnavailable
from tablectl.drivers.replies import Replies
from tablectl.drivers.transports.base import ByteStream, CallbackStream
from tablectl.drivers.transports.frames import CanFrame, FrameLink
from tablectl.drivers.transports.pubsub import BrokerEndpoint, MessageLink, TopicMessage
from tablectl.drivers.transports.serial import serial_url_problem

__all__ = [
    "Backoff",
    "Decoder",
    "DeviceDriver",
    "Driver",
    "DriverSettings",
    "FrameDriver",
    "Interpreter",
    "MessageDriver",
    "ReportsOnly",
    "SettingsT",
    "StreamDriver",
]

ItemT = TypeVar("ItemT")
ItemT_contra = TypeVar("ItemT_contra", contravariant=True)


class _Link(Protocol):
    """What the loop needs of any transport: ``open`` (raising :class:`DriverError`) and an
    idempotent ``close``; the bindings read and write it."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...


LinkT = TypeVar("LinkT", bound=_Link)


class Decoder(Protocol[ItemT_contra]):
    """A family's receive side: what arrived in, messages and :class:`DecodeError` values out.

    Stateful (a frame may be split over reads); the base builds a fresh one per connection."""

    def feed(self, item: ItemT_contra, /) -> Iterable[Any]: ...


class Interpreter(Protocol):
    """A family's device logic: decoded messages and the time in, events and commands out."""

    def connected(self, now: float) -> None:
        """A (re)connect: queue the handshake's commands, start the timers."""

    def feed(self, message: Any, now: float) -> list[DeviceEvent]: ...

    def tick(self, now: float) -> list[DeviceEvent]: ...

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """Forget per-connection state (the base reports the unavailability itself)."""

    def take_commands(self) -> Sequence[Any]:
        """The commands to send now, oldest first; empties the queue."""


class ReportsOnly:
    """The rest of an :class:`Interpreter` for a device that only reports (a card shoe): no timers,
    no commands, nothing kept per connection. A subclass writes ``feed``."""

    def connected(self, now: float) -> None:
        del now

    def tick(self, now: float) -> list[DeviceEvent]:
        del now
        return []

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        del now
        return []

    def take_commands(self) -> list[Any]:
        return []


class DeviceDriver(Driver[SettingsT], Generic[LinkT, ItemT, SettingsT]):
    """One device on one link; see the module docstring.

    Counters: ``decode_errors``, ``open_failures``, ``disconnects`` (plus the interpreter's).
    """

    tick_interval: float = 0.1
    """How often the interpreter's ``tick`` runs while connected (seconds; instances may lower
    it)."""

    interpreter: Interpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._replies: Replies[Any] = Replies(self.device_id, self.clock)
        self._link: LinkT | None = None
        self._out: list[ItemT] = []
        self._decoder: Decoder[ItemT] | None = None
        self._announce = False
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        # What a link that calls back delivered since the loop last ran (_Receiver).
        self._delivered: deque[DeviceEvent] = deque()
        self._failure: Exception | None = None

    # --- what a family declares -----------------------------------------------------------------

    @abstractmethod
    def _open_link(self) -> LinkT:
        """Build (not open) the transport."""

    @abstractmethod
    def _new_decoder(self) -> Decoder[ItemT]:
        """A decoder for a new connection: what is left of the last one must not prefix it."""

    def _encode(self, command: Any) -> ItemT:
        """One command of the interpreter's as the link carries it."""
        raise TypeError(f"{type(self).__name__} sends no commands, not {command!r}")

    # --- hooks, where a protocol truly differs --------------------------------------------------

    def _on_decode_error(
        self, error: DecodeError[Any], item: ItemT, now: float
    ) -> list[DeviceEvent]:
        """An undecodable frame or message in ``item``: counted, and nothing else by default."""
        del error, item, now
        self.count("decode_errors")
        return []

    def _on_item_error(self, error: Exception, item: ItemT, now: float) -> list[DeviceEvent]:
        """Decoding or interpreting ``item`` raised (a bug). By default that ends the loop like any
        bug; a family whose input may come from anyone counts it and reads on."""
        del item, now
        raise error

    def _available_on_open(self) -> str | None:
        """For a device that says nothing until it has something to say (a card shoe): the detail
        of the ``DeviceAvailable`` reported once its link is open. ``None`` (the default): the
        interpreter says when the device is there."""
        return None

    def _reports_disconnect_after(self, event: DeviceUnavailable) -> bool:
        """Whether a link lost after the device's own unavailability ``event`` (``silent``) is
        reported too (``disconnected``). Yes on a byte stream, the device's own cable; a bus or a
        broker stands for no one device, so a loss after silence says nothing new there."""
        del event
        return True

    # --- how a kind of link is used (the bindings below) -----------------------------------------

    @abstractmethod
    def _read(self, link: LinkT) -> Awaitable[ItemT]:
        """The next item (raises :class:`TransportClosedError` once the link is gone)."""

    def _deliver_from(self, link: LinkT, receiver: _Receiver[ItemT]) -> bool:
        """Have ``link`` call ``receiver`` with each item as it arrives; False: the loop reads it
        with :meth:`_read` (the default)."""
        del link, receiver
        return False

    @abstractmethod
    async def _write(self, link: LinkT, item: ItemT) -> None:
        """Send one item (raises :class:`TransportClosedError` once the link is gone)."""

    @abstractmethod
    def _raw(self, data: bytes) -> ItemT:
        """What :meth:`send_raw` sends for ``data`` (raises ``ValueError`` if it cannot be one)."""

    @abstractmethod
    def _traced(self, item: ItemT) -> bytes | None:
        """``item`` as the ``trace`` hook sees it (``None``: not traced)."""

    # --- services -------------------------------------------------------------------------------

    def send_command(self, command: Any) -> None:
        """Send ``command`` as soon as the loop gets control (hooks are synchronous)."""
        self._out.append(self._encode(command))
        self._wake.set()

    async def send(self, item: ItemT) -> None:
        """Send ``item`` now; :class:`TransportClosedError` when not connected or the link fails."""
        link = self._link
        if link is None:
            raise TransportClosedError(f"device {self.device_id!r} is not connected")
        if self.trace and (shown := self._traced(item)) is not None:
            self.trace("tx", shown)
        await self._write(link, item)

    async def send_raw(self, data: bytes) -> None:
        await self.send(self._raw(data))

    async def _exchange(
        self,
        command: Any,
        match: Callable[[Any], bool],
        timeout: float,  # noqa: ASYNC109 - measured on the driver's clock
        what: str,
    ) -> Any:
        """Send ``command`` and wait for the message ``match`` takes (the loop must be running).

        Raises :class:`TransportClosedError` or, after ``timeout``, :class:`DeviceTimeoutError`.
        """
        if self._link is None:
            raise TransportClosedError(f"device {self.device_id!r} is not connected")
        return await self._replies.request(lambda: self.send_command(command), match, timeout, what)

    async def _close(self) -> None:
        self._replies.fail_all(TransportClosedError(f"device {self.device_id!r}: driver closed"))

    async def aclose(self) -> None:
        await super().aclose()
        # Wake the loop wherever it waits, in a tick or a backoff pause: on a clock that only
        # moves when a test moves it that wait would never end, and on the real one it could
        # last the whole reconnect delay.
        self._stopping.set()
        self._wake.set()

    # --- the steps of the loop ------------------------------------------------------------------

    def _handshake(self, now: float) -> None:
        """A (re)connect: a fresh decoder, the interpreter told, its commands queued."""
        self._decoder = self._new_decoder()
        self._announce = True
        self.interpreter.connected(now)
        self._send_pending()

    def _receive(self, item: ItemT, now: float) -> list[DeviceEvent]:
        """One item that arrived at ``now``: its events."""
        if self.trace and (shown := self._traced(item)) is not None:
            self.trace("rx", shown)
        events = self._announcement(now) if self._announce else []
        decoder = self._decoder
        if decoder is None:  # technician tools feed a driver that never connected
            decoder = self._decoder = self._new_decoder()
        try:
            for message in decoder.feed(item):
                if isinstance(message, DecodeError):
                    events += self._on_decode_error(message, item, now)
                else:
                    events += self.interpreter.feed(message, now)
                    self._replies.resolve(message)
            self._send_pending()
        except Exception as exc:  # the hook decides; by default it re-raises
            return self._on_item_error(exc, item, now)
        return events

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        """Timers, about every ``tick_interval`` while connected."""
        events = self._announcement(now) if self._announce else []
        events += self.interpreter.tick(now)
        self._send_pending()
        return events

    def _deliver(self, item: ItemT) -> None:
        """An item the link called back with: through :meth:`_receive` now, its events queued for
        the loop to yield. An exception is the loop's to raise, after what came before it."""
        if self._failure is not None:
            return  # the loop is ending; as before, nothing after a failure is read
        try:
            events = self._receive(item, self.clock.now())
        except Exception as exc:  # re-raised by the loop (_pump)
            self._link_failed(exc)
            return
        if events:
            self._delivered.extend(events)
        self._wake.set()

    def _link_failed(self, exc: Exception) -> None:
        if self._failure is None:
            self._failure = exc
        self._wake.set()

    def _on_connection_lost(self, now: float) -> list[DeviceEvent]:
        self._replies.fail_all(TransportClosedError(f"device {self.device_id!r}: link lost"))
        events = self.interpreter.connection_lost(now)
        self.interpreter.take_commands()  # stale: the next handshake asks again
        return events

    def _announcement(self, now: float) -> list[DeviceEvent]:
        self._announce = False
        detail = self._available_on_open()
        if detail is None:
            return []
        return [DeviceAvailable(device=self.device_id, at=now, detail=detail)]

    def _send_pending(self) -> None:
        for command in self.interpreter.take_commands():
            self.send_command(command)

    # --- the loop -------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[DeviceEvent]:
        backoff = Backoff(self.settings.reconnect_min_delay, self.settings.reconnect_max_delay)
        reported_down = False
        while not self._closed:
            link = self._open_link()
            try:
                await link.open()
            except DriverError as exc:
                self.count("open_failures")
                if not reported_down:
                    reported_down = True
                    yield self._mark(
                        DeviceUnavailable(
                            device=self.device_id,
                            at=self.clock.now(),
                            reason="port_error",
                            detail=str(exc),
                        )
                    )
                await self._pause(backoff.next())
                continue
            self._link = link
            try:
                self._handshake(self.clock.now())
                async for event in self._pump(link):
                    if isinstance(event, DeviceAvailable):
                        backoff.reset()
                        reported_down = False
                    elif isinstance(event, DeviceUnavailable) and (
                        not self._reports_disconnect_after(event)
                    ):
                        reported_down = True
                    yield self._mark(event)
            except TransportClosedError as exc:
                self.count("disconnects")
                now = self.clock.now()
                for event in self._on_connection_lost(now):
                    yield self._mark(event)
                if not reported_down:
                    reported_down = True
                    yield self._mark(
                        DeviceUnavailable(
                            device=self.device_id, at=now, reason="disconnected", detail=str(exc)
                        )
                    )
            finally:
                self._link = None
                self._out.clear()
                await link.close()
            if not self._closed:
                await self._pause(backoff.next())

    async def _pump(self, link: LinkT) -> AsyncIterator[DeviceEvent]:
        # One wait per turn on _wake, which everything sets: a delivered item, a read task or
        # the ticker done, a command queued, aclose. Waiting on the event itself (no task around
        # it, no asyncio.wait) keeps a delivered line one loop turn from the consumer: each task
        # or asyncio.wait between them was a turn (docs/performance.md). The ticker is renewed
        # once it fires, so the interpreter's tick still runs at least every tick_interval.
        self._delivered.clear()
        self._failure = None
        receiver: _Receiver[ItemT] = _Receiver(self)
        delivering = self._deliver_from(link, receiver)
        reader: asyncio.Future[ItemT] | None = None
        ticker: asyncio.Future[Any] | None = None
        try:
            while not self._closed:
                while self._out:
                    await self.send(self._out.pop(0))
                if reader is None and not delivering:
                    reader = asyncio.ensure_future(self._read(link))
                    reader.add_done_callback(self._wake_on)
                if ticker is None:
                    ticker = asyncio.ensure_future(self.clock.sleep(self.tick_interval))
                    ticker.add_done_callback(self._wake_on)
                await self._wake.wait()
                self._wake.clear()
                if ticker.done():
                    ticker = None
                now = self.clock.now()
                if reader is not None and reader.done():
                    item = reader.result()  # raises TransportClosedError when the link is gone
                    reader = None
                    for event in self._receive(item, now):
                        yield event
                while self._delivered:  # may grow while an event is out: a callback ran
                    yield self._delivered.popleft()
                if self._failure is not None:
                    raise self._failure  # the link's TransportClosedError, or a bug
                for event in self._on_tick(now):
                    yield event
        finally:
            receiver.detach()
            for pending in (ticker, reader):
                if pending is not None:
                    pending.remove_done_callback(self._wake_on)
                    pending.cancel()
            if reader is not None:
                await asyncio.gather(reader, return_exceptions=True)

    def _wake_on(self, done: asyncio.Future[Any]) -> None:
        del done
        self._wake.set()

    async def _pause(self, delay: float) -> None:
        """``delay`` seconds of the clock, or less if the driver is closed meanwhile."""
        sleeping = asyncio.ensure_future(self.clock.sleep(delay))
        stopping = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait({sleeping, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeping.cancel()
            stopping.cancel()

    def _mark(self, event: DeviceEvent) -> DeviceEvent:
        if isinstance(event, DeviceAvailable):
            self.available = True
        elif isinstance(event, DeviceUnavailable):
            self.available = False
        return event


class _Receiver(Generic[ItemT]):
    """A driver's end of a link that calls back, for one connection (asyncio's ``Protocol``):
    each item goes through the driver's item path as it arrives. Detached when the connection's
    loop ends, so a callback that still comes before the link is closed finds no one."""

    def __init__(self, driver: DeviceDriver[Any, ItemT, Any]) -> None:
        self._driver: DeviceDriver[Any, ItemT, Any] | None = driver

    def data_received(self, data: ItemT) -> None:
        if self._driver is not None:
            self._driver._deliver(data)

    def connection_lost(self, exc: TransportClosedError) -> None:
        if self._driver is not None:
            self._driver._link_failed(exc)

    def detach(self) -> None:
        self._driver = None


class StreamDriver(DeviceDriver[ByteStream, bytes, SettingsT]):
    """A device on a :class:`ByteStream`: a serial port (any pyserial URL), USB endpoints.

    A serial port with a descriptor delivers by callbacks; ``loop://``, ``rfc2217://`` and USB are
    read by a task.
    """

    def _read(self, link: ByteStream) -> Awaitable[bytes]:
        return link.read()

    def _deliver_from(self, link: ByteStream, receiver: _Receiver[bytes]) -> bool:
        return isinstance(link, CallbackStream) and link.deliver_to(receiver)

    async def _write(self, link: ByteStream, item: bytes) -> None:
        await link.write(item)

    def _raw(self, data: bytes) -> bytes:
        return data

    def _traced(self, item: bytes) -> bytes:
        return item

    def _require_serial_port(self, needs: str) -> str:
        """``port`` checked as a serial port when the driver is built (``check-config``).

        A malformed port is a config error now rather than a ``port_error`` loop later; an absent
        device path is fine (it may be unplugged). ``needs`` is the message's reason.
        """
        if self.port is None:
            raise DriverConfigError(self.device_id, f"missing key 'port' ({needs})")
        problem = serial_url_problem(self.port)
        if problem is not None:
            raise DriverConfigError(self.device_id, f"port {self.port!r}: {problem}")
        return self.port

    def _serial_link(self, baudrate: int) -> ByteStream:
        """The serial port ``port`` (checked by :meth:`_require_serial_port`)."""
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - keeps pyserial lazy

        assert self.port is not None
        return SerialStream(self.port, baudrate=baudrate)


class FrameDriver(DeviceDriver[FrameLink, CanFrame, SettingsT]):
    """A device on a :class:`FrameLink` (a CAN bus). ``trace`` sees frames in candump form
    (``210#0300070000``)."""

    def _read(self, link: FrameLink) -> Awaitable[CanFrame]:
        return link.recv()

    async def _write(self, link: FrameLink, item: CanFrame) -> None:
        await link.send(item)

    def _raw(self, data: bytes) -> CanFrame:
        """``data`` is a 2-byte big-endian 11-bit id and 0–8 data bytes
        (``bytes.fromhex("0310" "01010000")`` = start mixing on node 0x10)."""
        if not 2 <= len(data) <= 10:
            raise ValueError("raw CAN frame: 2-byte id and 0-8 data bytes")
        return CanFrame(int.from_bytes(data[:2], "big"), bytes(data[2:]))

    def _traced(self, item: CanFrame) -> bytes:
        return str(item).encode()

    def _reports_disconnect_after(self, event: DeviceUnavailable) -> bool:
        del event
        return False


class MessageDriver(DeviceDriver[MessageLink, TopicMessage, SettingsT]):
    """A device that is a service on an MQTT broker (whole :class:`TopicMessage` values).

    A dropped broker or a missing PUBACK is a :class:`TransportClosedError` like an unplugged port;
    whether the devices behind the broker are there is the interpreter's to say. ``table_broker`` is
    the table's own ``[mqtt]`` broker (``tablectl.controller.service.app.build_drivers``), used
    unless the family has its own ``url``; ``None`` outside a table. Messages are not traced.
    """

    def __init__(
        self, *args: Any, table_broker: BrokerEndpoint | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.table_broker = table_broker

    def _read(self, link: MessageLink) -> Awaitable[TopicMessage]:
        return link.recv()

    async def _write(self, link: MessageLink, item: TopicMessage) -> None:
        await link.send(item)

    def _raw(self, data: bytes) -> TopicMessage:
        """``data`` is ``TOPIC PAYLOAD``, split at the first space
        (``b"studio/shaker/listens /state"`` asks a shaker for its state)."""
        topic, space, payload = data.partition(b" ")
        if not space or not topic:
            raise ValueError("raw message: TOPIC, a space, then the payload")
        return TopicMessage(topic.decode("utf-8", "replace"), payload)

    def _traced(self, item: TopicMessage) -> None:
        del item

    def _reports_disconnect_after(self, event: DeviceUnavailable) -> bool:
        del event
        return False
