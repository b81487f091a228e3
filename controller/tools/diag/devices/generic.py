"""Listen-only diagnostics for any stream driver (card shoes, the shuffler, future devices).

Every :class:`~tablectl.drivers.base.StreamDriver` has a transport and a decoder; calling its hooks
on a driver whose connection loop never runs gives exactly what the service would see, and sends
nothing (queued commands stay queued).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.devices.plugins import (
    Decoded,
    DeviceDiagnostics,
    Identity,
    LiveDecoder,
)
from tablectl.controller.tools.diag.errors import UnsupportedError
from tablectl.controller.tools.diag.link import Link
from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.registry import get_driver_class
from tablectl.drivers.transports.base import ByteStream


def describe_event(event: DeviceEvent) -> Decoded:
    """A device event as a technician reads it (fields other than device and time)."""
    fields = {k: v for k, v in dataclasses.asdict(event).items() if k not in ("device", "at")}
    name = type(event).__name__
    shown = " ".join(f"{k}={v}" for k, v in fields.items() if v not in (None, "", ()))
    data: dict[str, Any] = {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()}
    return Decoded("event", f"{name} {shown}".rstrip(), {"type": name, **data})


class _DriverDecoder:
    """The driver's hooks as a :class:`LiveDecoder` (events only; the driver never connects)."""

    def __init__(self, driver: StreamDriver) -> None:
        self._driver = driver

    def feed(self, data: bytes, now: float) -> list[Decoded]:
        return [describe_event(e) for e in self._driver._receive(data, now)]

    def tick(self, now: float) -> list[Decoded]:
        return [describe_event(e) for e in self._driver._on_tick(now)]


class StreamDriverDiagnostics(DeviceDiagnostics):
    """``probe`` (listen and decode) and ``sniff`` for any :class:`StreamDriver`."""

    def __init__(self, device: DeviceConfig, settings: DriverSettings) -> None:
        super().__init__(device, settings)
        cls = get_driver_class(device.driver)
        if not issubclass(cls, StreamDriver):
            raise UnsupportedError(f"{device.driver}: not a byte-stream driver")
        self.family = f"{device.driver} ({cls.__name__})"
        self._cls = cls

    @property
    def port(self) -> str:
        if self.device.port is not None:
            return self.device.port
        vid, pid = getattr(self.settings, "vid", None), getattr(self.settings, "pid", None)
        if isinstance(vid, int) and isinstance(pid, int):
            return f"usb {vid:04x}:{pid:04x}"
        return "(no port)"

    def _driver(self) -> StreamDriver:
        driver = self._cls(self.device.id, self.device.port, self.settings)
        assert isinstance(driver, StreamDriver)  # checked in __init__
        return driver

    def open_stream(self) -> ByteStream:
        return self._driver()._open_link()

    def decoder(self) -> LiveDecoder:
        driver = self._driver()
        # What the driver does right after connecting, minus the handshake's writes: a device
        # that is there once its link opens (a shoe) says so.
        driver._announce = True
        return _DriverDecoder(driver)


class ShoeDiagnostics(StreamDriverDiagnostics):
    """A card shoe: listen and decode only, and say why."""

    async def identify(self, link: Link) -> Identity:
        raise UnsupportedError(
            "a card shoe has no query protocol (no identify, status or self-test command): it "
            "only sends a line when a card passes its reader, so diag can only listen; deal or "
            "scan a card to see it decoded"
        )
