"""The big-wheel sensor on a serial port: :class:`BigWheelDriver` (registry ``tablectl-bigwheel``).

All protocol logic lives in :mod:`tablectl.drivers.bigwheel.protocol` (bytes ↔ messages) and
:mod:`tablectl.drivers.bigwheel.interpreter` (messages + time → events); this module only binds them
to a :class:`~tablectl.drivers.transports.serial.SerialStream` through the
:class:`~tablectl.drivers.base.StreamDriver` hooks, so it has no logic of its own worth a test
double.
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.bigwheel.interpreter import BigWheelInterpreter
from tablectl.drivers.bigwheel.messages import (
    HEARTBEAT_PERIOD,
    MAX_SEGMENTS,
    MIN_SEGMENTS,
    Command,
    encode_command,
)
from tablectl.drivers.bigwheel.protocol import DecodeError, Decoder
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.transports.base import ByteStream

__all__ = ["BigWheelDriver", "BigWheelSettings"]


class BigWheelSettings(DriverSettings):
    """The ``[[devices]]`` options of a big-wheel sensor (unknown keys are rejected).

    ``segments``: the table's segment count, written with ``SEG`` on every connect and checked
    against every heartbeat (a mismatch latches ``bigwheel_segment_count``); unset keeps whatever
    the sensor has. ``silence_timeout`` must exceed the 1 s heartbeat period, or availability
    would flap between two heartbeats.
    """

    baudrate: Literal[9600, 19200] = 9600
    segments: int | None = pydantic.Field(default=None, ge=MIN_SEGMENTS, le=MAX_SEGMENTS)
    silence_timeout: float = pydantic.Field(default=3.0, gt=HEARTBEAT_PERIOD, le=600)


class BigWheelDriver(StreamDriver[BigWheelSettings]):
    """One money-wheel sensor on a serial port (any pyserial URL: a tty, a pty, ``socket://``).

    Counters: ``decode_errors`` (sentences that failed; the decoder resynchronises), plus the
    base's ``open_failures`` and ``disconnects``. :attr:`interpreter` holds the last status,
    version and reply for technician tools.
    """

    settings_model = BigWheelSettings

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("a big-wheel sensor needs a serial port")
        self.interpreter = BigWheelInterpreter(
            self.device_id,
            silence_timeout=self.settings.silence_timeout,
            segments=self.settings.segments,
        )
        self._decoder = Decoder()

    def _open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - keeps pyserial lazy

        assert self.port is not None  # checked in __init__
        return SerialStream(self.port, baudrate=self.settings.baudrate)

    async def _handshake(self) -> None:
        # A fresh decoder: half a sentence from the previous connection must not prefix the next.
        self._decoder = Decoder()
        self.interpreter.connected(self.clock.now())
        self._send_pending()

    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        for message in self._decoder.feed(data):
            if isinstance(message, DecodeError):
                self.count("decode_errors")
                continue
            events += self.interpreter.feed(message, now)
        self._send_pending()
        return events

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        events = self.interpreter.tick(now)
        self._send_pending()
        return events

    def _on_connection_lost(self, now: float) -> list[DeviceEvent]:
        events = self.interpreter.connection_lost(now)
        self.interpreter.take_commands()  # stale: the handshake asks again
        return events

    def send(self, command: Command) -> None:
        """Queue a host command (technician tools: clear a fault, set the segment count)."""
        self._send(command)

    def _send_pending(self) -> None:
        for command in self.interpreter.take_commands():
            self._send(command)

    def _send(self, command: Command) -> None:
        self.queue_write(encode_command(command))
