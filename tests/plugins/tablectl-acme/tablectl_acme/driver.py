"""The ACME shoe on a serial port: the codec and a small interpreter declared to tablectl's driver
base, which owns the loop.

``[[devices]] driver = "acme-shoe"`` (the entry point in this package's ``pyproject.toml``).
"""

from __future__ import annotations

from typing import Any

import pydantic

from tablectl.drivers.base import DriverSettings, ReportsOnly, StreamDriver
from tablectl.drivers.events import CardScanned, DeviceEvent, ShoeEmptied
from tablectl.drivers.transports.base import ByteStream
from tablectl_acme.protocol import Card, Decoder, Empty

__all__ = ["AcmeShoeDriver", "AcmeShoeSettings"]


class AcmeShoeSettings(DriverSettings):
    """The ``[[devices]]`` options of an ACME shoe (unknown keys are rejected)."""

    baudrate: int = pydantic.Field(default=9600, ge=1200, le=115200)


class AcmeInterpreter(ReportsOnly):
    """ACME messages in, card events out (a shoe only reports)."""

    def __init__(self, device_id: str) -> None:
        self.device_id = device_id

    def feed(self, message: Card | Empty, now: float) -> list[DeviceEvent]:
        if isinstance(message, Card):
            return [CardScanned(device=self.device_id, at=now, card=message.card)]
        return [ShoeEmptied(device=self.device_id, at=now)]


class AcmeShoeDriver(StreamDriver[AcmeShoeSettings]):
    """One ACME shoe on any pyserial URL (a tty, a pty, ``socket://``)."""

    settings_model = AcmeShoeSettings

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("an ACME shoe needs a serial port")
        self.interpreter = AcmeInterpreter(self.device_id)

    def _open_link(self) -> ByteStream:
        return self._serial_link(self.settings.baudrate)

    def _new_decoder(self) -> Decoder:
        return Decoder()

    def _available_on_open(self) -> str:
        return "ACME shoe"  # a shoe is there once its port opens
