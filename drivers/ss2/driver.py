"""Cammegh Slingshot 2 roulette wheel driver: a serial port bound to the pure SS2 modules.

Declarations for :class:`tablectl.drivers.base.StreamDriver` (STYLE practices 1, 4, 5). From the
vendor's developer guide: RS-232 9600 8N1, no flow control; ``*X`` polled no faster than every
100 ms; operating-mode bit 128 makes the wheel send its status every 500 ms by itself.
"""

from __future__ import annotations

from typing import Any

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.ss2.protocol import Command, Decoder, encode_command
from tablectl.drivers.transports.base import ByteStream

MIN_POLL_INTERVAL = 0.1
"""The guide: poll ``*X`` no faster than every 100 ms."""

AUTO_STATUS_PERIOD = 0.5
"""Operating-mode bit 128: one status line every 500 ms."""


class SS2Settings(DriverSettings):
    """The ``[[devices]]`` options of an SS2 wheel (unknown keys are rejected).

    ``operating_mode`` is written with ``*o`` on connect when set (it lives in the wheel's NVRAM;
    host-driven tables usually use 1159). ``auto_status`` must match mode bit 128: off, the driver
    polls ``*X`` every ``poll_interval``.
    """

    baudrate: int = pydantic.Field(default=9600, gt=0)
    operating_mode: int | None = pydantic.Field(default=None, ge=0, le=0xFFFF)
    sensor_stream: bool = False
    auto_status: bool = True
    poll_interval: float = pydantic.Field(default=0.2, ge=MIN_POLL_INTERVAL, le=10)
    silence_timeout: float = pydantic.Field(default=2.0, gt=0, le=600)
    no_ball_timeout: float = pydantic.Field(default=5.0, gt=0, le=75)
    misfire_grace: float = pydantic.Field(default=3.0, ge=0, le=75)

    @pydantic.model_validator(mode="after")
    def _silence_outlasts_status_period(self) -> SS2Settings:
        # A timeout shorter than the gap between two status lines would flap every period.
        period = AUTO_STATUS_PERIOD if self.auto_status else self.poll_interval
        if self.silence_timeout <= period:
            raise ValueError(
                f"silence_timeout ({self.silence_timeout} s) must exceed the status period "
                f"({period} s)"
            )
        return self


class SS2Driver(StreamDriver[SS2Settings]):
    """One SS2 wheel on a serial port; :attr:`interpreter` (``last_reply``) is for technicians."""

    settings_model = SS2Settings
    interpreter: SS2Interpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("an SS2 wheel needs a serial port")
        self.interpreter = SS2Interpreter(self.device_id, self.settings)

    def _open_link(self) -> ByteStream:
        return self._serial_link(self.settings.baudrate)

    def _new_decoder(self) -> Decoder:
        return Decoder()

    def _encode(self, command: Command) -> bytes:
        return encode_command(command)
