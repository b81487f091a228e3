"""The big-wheel sensor on a serial port: :class:`BigWheelDriver` (registry ``tablectl-bigwheel``).

Only declarations: the codec and interpreter do the work, :class:`StreamDriver` owns the loop.
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

    ``segments`` is written with ``SEG`` on connect and checked against every heartbeat (unset keeps
    the sensor's). ``silence_timeout`` must exceed the 1 s heartbeat, or availability would flap.
    """

    baudrate: Literal[9600, 19200] = 9600
    segments: int | None = pydantic.Field(default=None, ge=MIN_SEGMENTS, le=MAX_SEGMENTS)
    silence_timeout: float = pydantic.Field(default=3.0, gt=HEARTBEAT_PERIOD, le=600)


class BigWheelDriver(StreamDriver[BigWheelSettings]):
    """One money-wheel sensor on a serial port (any pyserial URL).

    :attr:`interpreter` keeps the last status, version and reply for technician tools.
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
