"""A driver's life whatever its transport: settings, reconnect backoff, the :class:`Driver`
interface. Plugins import them from :mod:`tablectl.drivers.base`, which re-exports them.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from typing import Any, Generic, Self, cast

import pydantic
from typing_extensions import TypeVar

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.errors import (
    DriverInitError,
)
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.transports.base import TraceHook

__all__ = ["Backoff", "Driver", "DriverSettings", "SettingsT"]


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

    Generic over its settings (``class SS2Driver(StreamDriver[SS2Settings])``) so ``self.settings``
    is typed without a constructor of its own. ``options`` are validated with
    :attr:`settings_model`; ``clock`` drives every wait; ``trace`` sees every chunk read and
    written.
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
