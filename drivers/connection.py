"""A driver's life, whatever its transport: settings, the reconnect backoff, the :class:`Driver`
interface (a context manager with an idempotent close), and the one connection loop
(:class:`ConnectionLoop`) that :class:`~tablectl.drivers.base.StreamDriver` and
:class:`~tablectl.drivers.base.FrameDriver` bind to a byte stream and to CAN frames.

Plugins import these from :mod:`tablectl.drivers.base`, the stable surface, which re-exports them.
"""

from __future__ import annotations

import asyncio
import random
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Mapping
from typing import Any, ClassVar, Generic, Protocol, Self, cast

import pydantic
from typing_extensions import TypeVar

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.errors import (
    DriverError,
    DriverInitError,
    TransportClosedError,
)
from tablectl.drivers.events import DeviceAvailable, DeviceEvent, DeviceUnavailable
from tablectl.drivers.transports.base import TraceHook

__all__ = ["Backoff", "ConnectionLoop", "Driver", "DriverSettings", "SettingsT"]


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


SettingsT = TypeVar("SettingsT", bound=DriverSettings, default=DriverSettings)
"""A driver's settings model; a family names its own (``StreamDriver[SS2Settings]``)."""


class Driver(ABC, Generic[SettingsT]):
    """One device. Use as ``async with driver: async for event in driver.events(): ...``.

    Generic over its settings: a family declares ``class SS2Driver(StreamDriver[SS2Settings])``
    with ``settings_model = SS2Settings``, and ``self.settings`` is an ``SS2Settings`` everywhere,
    so it needs no constructor of its own just to narrow the type.

    Args:
        device_id: The ``[[devices]]`` entry's id (events carry it).
        port: Its ``port``, when the family uses one.
        options: Its other keys, validated with :attr:`settings_model` (already validated
            settings are taken as they are).
        clock: Timestamps, the hooks' ``now`` and every wait of the driver's loop.
        trace: Sees every chunk read and written.
    """

    # mypy cannot see that the default of SettingsT is DriverSettings; subclasses set their own.
    settings_model: type[SettingsT] = cast("type[SettingsT]", DriverSettings)
    """Validates the options (the app and ``diag`` check a config with it before building)."""

    def __init__(
        self,
        device_id: str,
        port: str | None,
        options: Mapping[str, Any] | DriverSettings | None = None,
        *,
        clock: Clock = SYSTEM_CLOCK,
        trace: TraceHook | None = None,
    ) -> None:
        self.device_id = device_id
        self.port = port
        model = self.settings_model
        if isinstance(options, model):
            self.settings: SettingsT = options
        else:
            raw = options.model_dump() if isinstance(options, DriverSettings) else options
            try:
                self.settings = model.model_validate(dict(raw or {}))
            except pydantic.ValidationError as exc:
                raise DriverInitError(f"device {device_id!r}: {exc}") from None
        self.clock = clock
        self.trace = trace
        self.available = False
        self.counters: dict[str, int] = {}
        self._closed = False

    @property
    def where(self) -> str:
        """Where the device is reached, for a person (``check-config``, ``diag``): its port, else
        its transport."""
        return self.port or "USB"

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop the driver. Idempotent: the first call flips ``_closed`` so later calls return."""
        if self._closed:
            return
        self._closed = True
        await self._close()

    async def _close(self) -> None:
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


class ConnectionLoop(Driver[SettingsT], Generic[_LinkT, _ItemT, SettingsT]):
    """The connection lifecycle shared by :class:`StreamDriver` and :class:`FrameDriver`.

    Open the link (reporting ``port_error`` once and retrying with :class:`Backoff`), run the
    ``_handshake``, then pump: flush queued writes, wait for the next item, the wake event or
    ``tick_interval``, hand items to ``_deliver`` and call ``_on_tick``. Every wait and every
    ``now`` is the injected clock's, so a :class:`~tablectl.drivers.clock.ManualClock` decides
    when a tick or a reconnect attempt happens. A
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
        self._stopping = asyncio.Event()

    async def aclose(self) -> None:
        await super().aclose()
        # Wake the loop wherever it waits, in a tick or a backoff pause: on a clock that only
        # moves when a test moves it that wait would never end, and on the real one it could
        # last the whole reconnect delay.
        self._stopping.set()
        self._wake.set()

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
                            at=self.clock.now(),
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
                self._detach()
                await link.close()
            if not self._closed:
                await self._pause(backoff.next())

    async def _pump(self, link: _LinkT) -> AsyncIterator[DeviceEvent]:
        # The wake and tick waits outlive a read: a device sends a line every few milliseconds
        # at a busy table, and two tasks created and cancelled per line were a third of the time
        # between the pty and the runner (docs/performance.md). The ticker is renewed once it
        # fires, so _on_tick still runs at least every tick_interval.
        reader: asyncio.Future[_ItemT] | None = None
        waker: asyncio.Future[Any] | None = None
        ticker: asyncio.Future[Any] | None = None
        try:
            while not self._closed:
                await self._flush(link)
                if reader is None:
                    reader = asyncio.ensure_future(self._read_once(link))
                if waker is None:
                    waker = asyncio.ensure_future(self._wake.wait())
                if ticker is None:
                    ticker = asyncio.ensure_future(self.clock.sleep(self.tick_interval))
                done, _ = await asyncio.wait(
                    {reader, waker, ticker}, return_when=asyncio.FIRST_COMPLETED
                )
                if waker in done:
                    waker = None
                if ticker in done:
                    ticker = None
                self._wake.clear()
                now = self.clock.now()
                if reader in done:
                    item = reader.result()  # raises TransportClosedError when the link is gone
                    reader = None
                    for event in self._deliver(item, now):
                        yield event
                for event in self._on_tick(now):
                    yield event
        finally:
            for pending in (waker, ticker):
                if pending is not None:
                    pending.cancel()
            if reader is not None:
                await self._abandon_read(reader)

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
