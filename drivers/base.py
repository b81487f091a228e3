"""Driver base classes (STYLE practice 4): a context manager, idempotent close, small hooks.

:class:`StreamDriver` owns the whole connection lifecycle of a byte-stream device so that a
device family only writes three synchronous hooks that take the time as an argument:
``_on_bytes`` (decode and interpret), ``_on_tick`` (timers: silence, hold times) and
``_on_connection_lost``. The loop opens the port, reconnects with jittered exponential backoff when
it vanishes (never busy-looping), reports availability changes, and flushes the writes the hooks
queued. A device family's logic can therefore be tested without any I/O.
"""

from __future__ import annotations

import asyncio
import random
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, ClassVar

import pydantic

from drivers.errors import DriverError, DriverInitError, TransportClosedError
from drivers.events import DeviceAvailable, DeviceEvent, DeviceUnavailable
from drivers.transports.base import ByteStream, TraceHook

__all__ = ["Backoff", "Driver", "DriverSettings", "StreamDriver"]

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


class StreamDriver(Driver):
    """A driver over a :class:`ByteStream`, with reconnect, availability and timers."""

    tick_interval: ClassVar[float] = 0.1
    """How often ``_on_tick`` runs while connected (seconds)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._stream: ByteStream | None = None
        self._writes: list[bytes] = []
        self._wake = asyncio.Event()

    # --- hooks --------------------------------------------------------------------------------

    @abstractmethod
    def _open_stream(self) -> ByteStream:
        """Build (not open) the transport for ``self.port``."""

    async def _handshake(self) -> None:
        """Runs after each (re)connect, before reading; may ``queue_write`` commands."""

    @abstractmethod
    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        """Decode what arrived and turn it into events."""

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        """Timers. Called about every ``tick_interval`` while connected."""
        del now
        return []

    def _on_connection_lost(self, now: float) -> list[DeviceEvent]:
        """Reset per-connection state; events to emit (besides the base's unavailability)."""
        del now
        return []

    # --- services for subclasses ---------------------------------------------------------------

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

    # --- the loop -------------------------------------------------------------------------------

    async def events(self) -> AsyncIterator[DeviceEvent]:
        backoff = Backoff(self.settings.reconnect_min_delay, self.settings.reconnect_max_delay)
        reported_down = False
        while not self._closed:
            stream = self._open_stream()
            try:
                await stream.open()
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
            self._stream = stream
            try:
                await self._handshake()
                async for event in self._pump(stream):
                    if isinstance(event, DeviceAvailable):
                        backoff.reset()
                        reported_down = False
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
                self._stream = None
                self._writes.clear()
                await stream.close()
            if not self._closed:
                await self._pause(backoff.next())

    async def _pump(self, stream: ByteStream) -> AsyncIterator[DeviceEvent]:
        reader: asyncio.Task[bytes] | None = None
        try:
            while not self._closed:
                await self._flush(stream)
                if reader is None:
                    reader = asyncio.ensure_future(stream.read())
                waker = asyncio.ensure_future(self._wake.wait())
                done, _ = await asyncio.wait(
                    {reader, waker},
                    timeout=self.tick_interval,
                    return_when=asyncio.FIRST_COMPLETED,
                )
                waker.cancel()
                self._wake.clear()
                now = self.clock()
                if reader in done:
                    data = reader.result()  # raises TransportClosedError when the link is gone
                    reader = None
                    if self.trace:
                        self.trace("rx", data)
                    for event in self._on_bytes(data, now):
                        yield event
                for event in self._on_tick(now):
                    yield event
        finally:
            if reader is not None:
                reader.cancel()

    async def _flush(self, stream: ByteStream) -> None:
        while self._writes:
            data = self._writes.pop(0)
            if self.trace:
                self.trace("tx", data)
            await stream.write(data)

    async def _pause(self, delay: float) -> None:
        await asyncio.sleep(delay)

    def _mark(self, event: DeviceEvent) -> DeviceEvent:
        if isinstance(event, DeviceAvailable):
            self.available = True
        elif isinstance(event, DeviceUnavailable):
            self.available = False
        return event
