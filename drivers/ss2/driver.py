"""Cammegh Slingshot 2 roulette wheel driver: a serial port bound to the pure SS2 modules.

All the protocol knowledge lives in :mod:`tablectl.drivers.ss2.protocol` (bytes ↔ messages) and
:mod:`tablectl.drivers.ss2.interpreter` (messages + time → events, the vendor's exception handling);
this class only wires them to :class:`tablectl.drivers.base.StreamDriver`, which owns the port,
reconnects and the write queue (STYLE practices 1, 4, 5). Link facts from the vendor's developer
guide: RS-232 9600 8N1, no flow control; ``*X`` may be polled no faster than every 100 ms;
operating-mode bit 128 makes the wheel send its status every 500 ms by itself.
"""

from __future__ import annotations

from typing import Any

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.ss2.protocol import Command, DecodeError, Decoder, Reply, encode_command
from tablectl.drivers.transports.base import ByteStream

__all__ = ["SS2Driver", "SS2Settings"]

MIN_POLL_INTERVAL = 0.1
"""The guide: poll ``*X`` no faster than every 100 ms."""

AUTO_STATUS_PERIOD = 0.5
"""Operating-mode bit 128: one status line every 500 ms."""


class SS2Settings(DriverSettings):
    """The ``[[devices]]`` options of an SS2 wheel (unknown keys are rejected).

    ``operating_mode`` is written with ``*o`` on every connect when set (it is stored in the
    wheel's NVRAM, so leaving it unset keeps whatever the wheel has; host-driven tables usually
    use 1159). ``auto_status`` must match the wheel's mode bit 128: when it is off the driver
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
    """One SS2 wheel on a serial port (any pyserial URL: a tty, a pty, ``socket://``).

    Counters: ``decode_errors`` (lines that are not SS2 messages; the decoder resynchronises),
    plus the base's ``open_failures`` and ``disconnects``. :attr:`last_reply` and
    :attr:`interpreter` are there for technician tools.
    """

    settings_model = SS2Settings

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("an SS2 wheel needs a serial port")
        self.interpreter = SS2Interpreter(self.device_id, self.settings)
        self.last_reply: Reply | None = None
        self._decoder = Decoder()
        self._last_poll: float | None = None

    def _open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - keeps pyserial lazy

        assert self.port is not None  # checked in __init__
        return SerialStream(self.port, baudrate=self.settings.baudrate)

    async def _handshake(self) -> None:
        # A fresh decoder: half a line from the previous connection must not prefix the next.
        self._decoder = Decoder()
        self._last_poll = None
        if self.settings.operating_mode is not None:
            self._send(Command.operating_mode(self.settings.operating_mode))
        if self.settings.sensor_stream:
            self._send(Command.sensor_stream(on=True))

    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        for message in self._decoder.feed(data):
            if isinstance(message, DecodeError):
                self.count("decode_errors")
                continue
            if isinstance(message, Reply):
                self.last_reply = message
            events += self.interpreter.feed(message, now)
        self._send_pending()
        return events

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        events = self.interpreter.tick(now)
        if not self.settings.auto_status and (
            self._last_poll is None or now - self._last_poll >= self.settings.poll_interval
        ):
            self._last_poll = now
            self._send(Command.poll())
        self._send_pending()
        return events

    def _on_connection_lost(self, now: float) -> list[DeviceEvent]:
        events = self.interpreter.connection_lost(now)
        # A *R for a game on the old link is stale: the wheel's next status says where it is.
        self.interpreter.take_commands()
        return events

    def _send_pending(self) -> None:
        for command in self.interpreter.take_commands():
            self._send(command)

    def _send(self, command: Command) -> None:
        self.queue_write(encode_command(command))
