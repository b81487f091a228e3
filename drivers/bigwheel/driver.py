"""The big-wheel sensor on a serial port: :class:`BigWheelDriver` (registry ``tablectl-bigwheel``).

All protocol logic lives in :mod:`tablectl.drivers.bigwheel.protocol` (bytes ↔ messages) and
:mod:`tablectl.drivers.bigwheel.interpreter` (messages + time → events); this module only declares
them and the serial port to :class:`~tablectl.drivers.base.StreamDriver`, which owns the loop, so
it has no logic of its own worth a test double.
"""

from __future__ import annotations

from typing import Any, Literal

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.bigwheel.interpreter import BigWheelInterpreter
from tablectl.drivers.bigwheel.protocol import (
    HEARTBEAT_PERIOD,
    MAX_SEGMENTS,
    MIN_SEGMENTS,
    Command,
    Decoder,
    encode_command,
)
from tablectl.drivers.transports.base import ByteStream


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
    version and reply for technician tools, who send commands with :meth:`send_command` (clear a
    fault, set the segment count).
    """

    settings_model = BigWheelSettings
    interpreter: BigWheelInterpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("a big-wheel sensor needs a serial port")
        self.interpreter = BigWheelInterpreter(
            self.device_id,
            silence_timeout=self.settings.silence_timeout,
            segments=self.settings.segments,
        )

    def _open_link(self) -> ByteStream:
        return self._serial_link(self.settings.baudrate)

    def _new_decoder(self) -> Decoder:
        return Decoder()

    def _encode(self, command: Command) -> bytes:
        return encode_command(command)
