"""The ACME shoe on a serial port: the codec bound to a byte stream through tablectl's hooks.

``[[devices]] driver = "acme-shoe"`` (the entry point in this package's ``pyproject.toml``).
"""

from __future__ import annotations

from typing import Any

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.events import CardScanned, DeviceAvailable, DeviceEvent, ShoeEmptied
from tablectl.drivers.transports.base import ByteStream
from tablectl_acme.protocol import Card, Decoder

__all__ = ["AcmeShoeDriver", "AcmeShoeSettings"]


class AcmeShoeSettings(DriverSettings):
    """The ``[[devices]]`` options of an ACME shoe (unknown keys are rejected)."""

    baudrate: int = pydantic.Field(default=9600, ge=1200, le=115200)


class AcmeShoeDriver(StreamDriver[AcmeShoeSettings]):
    """One ACME shoe on any pyserial URL (a tty, a pty, ``socket://``)."""

    settings_model = AcmeShoeSettings

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("an ACME shoe needs a serial port")
        self._decoder = Decoder()
        self._announce = False

    def _open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - lazy pyserial

        assert self.port is not None  # checked in __init__
        return SerialStream(self.port, baudrate=self.settings.baudrate)

    async def _handshake(self) -> None:
        self._decoder = Decoder()  # half a line from the last connection must not prefix the next
        self._announce = True

    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        if self._announce:
            self._announce = False
            events.append(DeviceAvailable(device=self.device_id, at=now, detail="ACME shoe"))
        for message in self._decoder.feed(data):
            if isinstance(message, DecodeError):
                self.count("decode_errors")
            elif isinstance(message, Card):
                events.append(CardScanned(device=self.device_id, at=now, card=message.card))
            else:
                events.append(ShoeEmptied(device=self.device_id, at=now))
        return events
