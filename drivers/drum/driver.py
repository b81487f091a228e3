"""Lotto/keno ball drum driver: a CAN bus (python-can) bound to the pure drum modules.

Declarations for :class:`~tablectl.drivers.base.FrameDriver`, plus matching command
acknowledgements. Configuration (``[[devices]]``, unknown keys rejected)::

    [[devices]]
    id = "drum"
    driver = "tablectl-drum"
    interface = "socketcan"   # any python-can interface: slcan, pcan, kvaser, virtual, ...
    channel = "can0"          # or `port = "can0"` (the same thing; both only if equal)
    bitrate = 250000          # omit for socketcan (set with `ip link`); adapters need it
    node_id = 16              # the drum controller; readers are node_id + 1 .. node_id + readers
    readers = 2
    balls = 42                # numbers first_ball .. first_ball + balls - 1 are in range
"""

from __future__ import annotations

from typing import Any

import pydantic

from tablectl.drivers.base import DriverSettings, FrameDriver
from tablectl.drivers.clock import within
from tablectl.drivers.drum.interpreter import DrumInterpreter
from tablectl.drivers.drum.protocol import (
    MAX_BALL,
    MAX_NODE,
    MAX_READERS,
    Ack,
    AckResult,
    Command,
    Decoder,
    DrumState,
    FaultKind,
    Opcode,
    encode_command,
)
from tablectl.drivers.errors import DeviceTimeoutError, DriverConfigError
from tablectl.drivers.transports.frames import CanFrame, FrameLink

DEFAULT_CHANNEL = "can0"


class DrumSettings(DriverSettings):
    """The ``[[devices]]`` options of a ``tablectl-drum`` (see the module docstring).

    ``can_options`` go to ``can.Bus`` unchanged. ``relink_after``: a drum silent this long gets its
    bus reopened, which is how an unplugged socketcan adapter is noticed (python-can reports
    nothing; see :mod:`tablectl.drivers.transports.can`).
    """

    interface: str = pydantic.Field(default="socketcan", min_length=1)
    channel: str | None = pydantic.Field(default=None, min_length=1)
    bitrate: int | None = pydantic.Field(default=None, ge=10_000, le=1_000_000)
    can_options: dict[str, str | int | float | bool] = pydantic.Field(default_factory=dict)
    node_id: int = pydantic.Field(default=0x10, ge=1, le=MAX_NODE - MAX_READERS)
    readers: int = pydantic.Field(default=1, ge=1, le=MAX_READERS)
    heartbeat_timeout: float = pydantic.Field(default=1.0, ge=0.05, le=60)
    balls: int = pydantic.Field(default=80, ge=1, le=MAX_BALL + 1)
    first_ball: int = pydantic.Field(default=1, ge=0, le=1)
    command_timeout: float = pydantic.Field(default=1.0, gt=0, le=30)
    relink_after: float = pydantic.Field(default=10.0, gt=0, le=3600)

    @pydantic.model_validator(mode="after")
    def _check(self) -> DrumSettings:
        if self.first_ball + self.balls - 1 > MAX_BALL:
            raise ValueError(
                f"balls {self.first_ball}..{self.first_ball + self.balls - 1} exceed the "
                f"protocol's largest ball number {MAX_BALL}"
            )
        if self.relink_after <= self.heartbeat_timeout:
            raise ValueError("relink_after must exceed heartbeat_timeout")
        return self


class DrumDriver(FrameDriver[DrumSettings]):
    """One ball drum on a CAN bus (tablectl reference protocol).

    Each command waits for the controller's acknowledgement and returns its :class:`AckResult` (a
    refusal is a value). Counters: the base's, the interpreter's, ``relinks``.
    """

    settings_model = DrumSettings
    interpreter: DrumInterpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        s, port = self.settings, self.port
        if s.channel is not None and port is not None and s.channel != port:
            raise DriverConfigError(
                self.device_id,
                f"port {port!r} and channel {s.channel!r} disagree; give one of them",
            )
        self.channel = s.channel or port or DEFAULT_CHANNEL
        self._check_interface(s.interface)
        self.interpreter = DrumInterpreter(self.device_id, s, count=self.count)
        self.tick_interval = min(0.1, s.heartbeat_timeout / 4)
        self._token = 0

    def _check_interface(self, interface: str) -> None:
        try:
            from can.interfaces import VALID_INTERFACES  # noqa: PLC0415 - lazy, like the link
        except ImportError:
            return  # CanLink.open reports the missing library as DriverUnavailableError
        if interface not in VALID_INTERFACES:
            known = ", ".join(sorted(VALID_INTERFACES))
            raise DriverConfigError(
                self.device_id, f"unknown CAN interface {interface!r}; known: {known}"
            )

    @property
    def state(self) -> DrumState | None:
        """The drum's last reported state (None before the first state frame)."""
        return self.interpreter.state

    @property
    def last_ack(self) -> Ack | None:
        """The drum's last acknowledgement (technician tools)."""
        return self.interpreter.last_ack

    def _open_link(self) -> FrameLink:
        from tablectl.drivers.transports.can import CanLink  # noqa: PLC0415 - keeps python-can lazy

        s = self.settings
        options: dict[str, Any] = dict(s.can_options)
        if s.node_id % 16 == 0 and "can_filters" not in options:
            # The drum's nodes share the id's bits 4-6: one filter, applied in the kernel or
            # the adapter where the interface can, keeps other devices' traffic out of Python.
            options["can_filters"] = [{"can_id": s.node_id, "can_mask": 0x070, "extended": False}]
        return CanLink(s.interface, self.channel, bitrate=s.bitrate, **options)

    def _new_decoder(self) -> Decoder:
        return Decoder()

    def _encode(self, command: Command) -> CanFrame:
        return encode_command(command)

    # --- commands ------------------------------------------------------------------------------

    async def start_mixing(self) -> AckResult:
        """Blower and air on: the balls mix (R16: mechanical mixing by air flow)."""
        return await self.command(Opcode.START_MIXING)

    async def stop_mixing(self) -> AckResult:
        return await self.command(Opcode.STOP_MIXING)

    async def release_ball(self) -> AckResult:
        """Open the gate for one ball; its read arrives later as a ``BallRead`` event."""
        return await self.command(Opcode.RELEASE_BALL)

    async def query_status(self) -> AckResult:
        """Ask for a state frame now (and a fault frame per latched fault)."""
        return await self.command(Opcode.QUERY_STATUS)

    async def return_balls(self) -> AckResult:
        """Empty the receiver back into the drum (between draws)."""
        return await self.command(Opcode.RETURN_BALLS)

    async def clear_fault(self, kind: FaultKind | None = None, reader: int = 0) -> AckResult:
        """Ask the drum to clear a latched fault (``None``: all); the drum answers with a
        fault-cleared frame if the cause is gone, ``REFUSED`` otherwise."""
        return await self.command(Opcode.CLEAR_FAULT, kind=int(kind or 0), reader=reader)

    async def command(self, opcode: Opcode, *, kind: int = 0, reader: int = 0) -> AckResult:
        """Send one command and wait for its acknowledgement (``command_timeout``)."""
        # Tokens 1-255: 0 is the driver's own status query on connect, whose answer must never
        # be taken for a command's.
        self._token = self._token % 255 + 1
        command = Command(self.settings.node_id, opcode, self._token, kind, reader)
        frame = encode_command(command)

        key = (command.node, opcode, command.token)

        def answers(message: object) -> bool:
            return isinstance(message, Ack) and (message.node, message.opcode, message.token) == key

        waiter = self._replies.expect(answers)
        try:
            await self.send(frame)
            ack = await within(self.clock, waiter.future, self.settings.command_timeout)
        except TimeoutError:
            raise DeviceTimeoutError(
                f"device {self.device_id!r}: no acknowledgement of {opcode.name} within "
                f"{self.settings.command_timeout:g} s"
            ) from None
        finally:
            self._replies.forget(waiter)
        assert isinstance(ack, Ack)
        return ack.result
