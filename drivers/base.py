"""Driver base classes (STYLE practice 4): a context manager, idempotent close, small hooks.

:class:`StreamDriver` owns the whole connection lifecycle of a byte-stream device so that a
device family only writes three synchronous hooks that take the time as an argument:
``_on_bytes`` (decode and interpret), ``_on_tick`` (timers: silence, hold times) and
``_on_connection_lost``. The loop opens the port, reconnects with jittered exponential backoff when
it vanishes (never busy-looping), reports availability changes, and flushes the writes the hooks
queued. A device family's logic can therefore be tested without any I/O.

:class:`FrameDriver` is its frame-based sibling (a CAN bus: whole :class:`CanFrame` values instead
of bytes, ``_on_frame`` instead of ``_on_bytes``). Both run the one loop of
:class:`_ConnectionLoop`; they differ only in the transport they build, read and write.
"""

from __future__ import annotations

import asyncio
import random
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import pydantic

from tablectl.drivers.errors import (
    DriverConfigError,
    DriverError,
    DriverInitError,
    TransportClosedError,
)
from tablectl.drivers.events import DeviceAvailable, DeviceEvent, DeviceUnavailable
from tablectl.drivers.transports.base import ByteStream, TraceHook
from tablectl.drivers.transports.frames import CanFrame, FrameLink, FrameTraceHook
from tablectl.drivers.transports.serial import serial_url_problem

__all__ = ["Backoff", "Driver", "DriverSettings", "FrameDriver", "StreamDriver"]

Clock = Callable[[], float]


class DriverSettings(pydantic.BaseModel):
    """Keys every driver accepts in its ``[[devices]]`` entry, besides id, driver and port."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    reconnect_min_delay: float = pydantic.Field(default=0.2, gt=0, le=60)
    reconnect_max_delay: float = pydantic.Field(default=5.0, gt=0, le=600)


class Backoff:
    """Jittered exponential backoff: ``next()`` gives the delay before the next attempt."""

    def __init__(self, initial: float, cap: float, *, rng: random.Random | None = None) -> None:
        self._initial = initial
        self._cap = max(cap, initial)
        self._current = initial
        self._rng = rng or random.Random()

    def next(self) -> float:
        delay = self._current
        self._current = min(self._current * 2, self._cap)
        # Full jitter on the upper half: many tables reconnecting at once do not stampede.
        return delay / 2 + self._rng.random() * delay / 2

    def reset(self) -> None:
        self._current = self._initial


class Driver(ABC):
    """One device. Use as ``async with driver: async for event in driver.events(): ...``."""

    settings_model: ClassVar[type[DriverSettings]] = DriverSettings

    def __init__(
        self,
        device_id: str,
        port: str | None,
        options: Mapping[str, Any] | DriverSettings | None = None,
        *,
        clock: Clock = time.time,
        trace: TraceHook | None = None,
    ) -> None:
        self.device_id = device_id
        self.port = port
        if isinstance(options, self.settings_model):
            self.settings: DriverSettings = options
        else:
            raw = options.model_dump() if isinstance(options, DriverSettings) else options
            try:
                self.settings = self.settings_model.model_validate(dict(raw or {}))
            except pydantic.ValidationError as exc:
                raise DriverInitError(f"device {device_id!r}: {exc}") from None
        self.clock = clock
        self.trace = trace
        self.available = False
        self.counters: dict[str, int] = {}
        self._closed = False

    async def __aenter__(self) -> Driver:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the driver. Idempotent: the first call flips ``_closed`` so later calls return."""
        if self._closed:
            return
        self._closed = True
        await self._close()

    async def _close(self) -> None:  # noqa: B027 - optional hook, empty by default
        """Release resources; called once."""

    def count(self, name: str, n: int = 1) -> None:
        """Bump a diagnostic counter (decode errors, reconnects, …)."""
        self.counters[name] = self.counters.get(name, 0) + n

    @abstractmethod
    def events(self) -> AsyncIterator[DeviceEvent]:
        """Device events until :meth:`aclose`; never raises for link trouble (that is an event)."""

    @abstractmethod
    async def send_raw(self, data: bytes) -> None:
        """Write bytes to the device now (technician tools); raises if not connected."""


class _Link(Protocol):
    """What the loop itself needs of a transport: ``open`` (raising :class:`DriverError`) and an
    idempotent ``close``. Reading and writing go through the subclass's hooks."""

    async def open(self) -> None: ...

    async def close(self) -> None: ...


_LinkT = TypeVar("_LinkT", bound=_Link)
_ItemT = TypeVar("_ItemT")


class _ConnectionLoop(Driver, Generic[_LinkT, _ItemT]):
    """The connection lifecycle shared by :class:`StreamDriver` and :class:`FrameDriver`.

    Open the link (reporting ``port_error`` once and retrying with :class:`Backoff`), run the
    ``_handshake``, then pump: flush queued writes, wait for the next item, the wake event or
    ``tick_interval``, hand items to ``_deliver`` and call ``_on_tick``. A
    :class:`TransportClosedError` (from a read, a write or a hook) drops the link:
    ``_on_connection_lost``, one ``disconnected`` unavailability, backoff, reopen.

    Transport hooks (one set per kind of link): ``_new_link``, ``_attach``, ``_detach``,
    ``_flush``, ``_read_once``, ``_deliver`` and ``_abandon_read``. Device hooks:
    ``_handshake``, ``_on_tick``, ``_on_connection_lost``.
    """

    tick_interval: float = 0.1
    """How often ``_on_tick`` runs while connected (seconds)."""

    _hook_unavailable_is_down: ClassVar[bool] = False
    """Whether a ``DeviceUnavailable`` from a hook counts as reported, so that a disconnect right
    after it adds no second one (the frame loop's behaviour; the stream loop reports both)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._wake = asyncio.Event()

    # --- transport hooks ------------------------------------------------------------------------

    @abstractmethod
    def _new_link(self) -> _LinkT:
        """Build (not open) the transport."""

    @abstractmethod
    def _attach(self, link: _LinkT) -> None:
        """``link`` is open: make it the current one."""

    @abstractmethod
    def _detach(self) -> None:
        """The connection is over: forget the current link and the writes still queued."""

    @abstractmethod
    async def _flush(self, link: _LinkT) -> None:
        """Write what the hooks queued."""

    @abstractmethod
    def _read_once(self, link: _LinkT) -> Awaitable[_ItemT]:
        """The next item from ``link`` (raises :class:`TransportClosedError` once it is gone)."""

    @abstractmethod
    def _deliver(self, item: _ItemT, now: float) -> list[DeviceEvent]:
        """Trace an item that arrived and turn it into events."""

    async def _abandon_read(self, reader: asyncio.Future[_ItemT]) -> None:
        """The pump stops with a read pending."""
        reader.cancel()

    # --- device hooks ---------------------------------------------------------------------------

    async def _handshake(self) -> None:
        """Runs after each (re)connect, before reading; may queue writes."""

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        """Timers. Called about every ``tick_interval`` while connected."""
        del now
        return []

    def _on_connection_lost(self, now: float) -> list[DeviceEvent]:
        """Reset per-connection state; events to emit (besides the base's unavailability)."""
        del now
        return []

    # --- the loop -------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[DeviceEvent]:
        backoff = Backoff(self.settings.reconnect_min_delay, self.settings.reconnect_max_delay)
        reported_down = False
        while not self._closed:
            link = self._new_link()
            try:
                await link.open()
            except DriverError as exc:
                self.count("open_failures")
                if not reported_down:
                    reported_down = True
                    yield self._mark(
                        DeviceUnavailable(
                            device=self.device_id,
                            at=self.clock(),
                            reason="port_error",
                            detail=str(exc),
                        )
                    )
                await self._pause(backoff.next())
                continue
            self._attach(link)
            try:
                await self._handshake()
                async for event in self._pump(link):
                    if isinstance(event, DeviceAvailable):
                        backoff.reset()
                        reported_down = False
                    elif self._hook_unavailable_is_down and isinstance(event, DeviceUnavailable):
                        reported_down = True
                    yield self._mark(event)
            except TransportClosedError as exc:
                self.count("disconnects")
                now = self.clock()
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
                self._detach()
                await link.close()
            if not self._closed:
                await self._pause(backoff.next())

    async def _pump(self, link: _LinkT) -> AsyncIterator[DeviceEvent]:
        reader: asyncio.Future[_ItemT] | None = None
        try:
            while not self._closed:
                await self._flush(link)
                if reader is None:
                    reader = asyncio.ensure_future(self._read_once(link))
                waker: asyncio.Future[Any] = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait(
                    {reader, waker},
                    timeout=self.tick_interval,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                waker.cancel()
                self._wake.clear()
                now = self.clock()
                if reader in done:
                    item = reader.result()  # raises TransportClosedError when the link is gone
                    reader = None
                    for event in self._deliver(item, now):
                        yield event
                for event in self._on_tick(now):
                    yield event
        finally:
            if reader is not None:
                await self._abandon_read(reader)

    async def _pause(self, delay: float) -> None:
        await asyncio.sleep(delay)

    def _mark(self, event: DeviceEvent) -> DeviceEvent:
        if isinstance(event, DeviceAvailable):
            self.available = True
        elif isinstance(event, DeviceUnavailable):
            self.available = False
        return event


class StreamDriver(_ConnectionLoop[ByteStream, bytes]):
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


class FrameDriver(_ConnectionLoop[FrameLink, CanFrame]):
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

    async def _close(self) -> None:
        self._wake.set()  # the pump notices _closed at its next turn
