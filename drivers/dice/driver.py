"""A dice shaker or tower with its reader on a serial port: :class:`DiceDriver` (``tablectl-dice``).

Requests (:meth:`DiceDriver.close_betting`, :meth:`DiceDriver.roll`, …) go through the polls'
queue and wait for a reply that the running ``events()`` loop decodes, so someone must iterate it.
The cycle itself is reported as events, never as a request's return value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

import pydantic

from tablectl.drivers.base import DriverSettings, StreamDriver
from tablectl.drivers.dice.interpreter import DiceInterpreter
from tablectl.drivers.dice.protocol import (
    COLOR_PATTERN,
    MAX_CODE,
    MAX_DICE,
    Ack,
    ClearFault,
    CloseBetting,
    Command,
    Decoder,
    Identify,
    Identity,
    Message,
    Nak,
    QueryStatus,
    RollNow,
    SelfTest,
    Status,
    TestReport,
    command_verb,
    encode_command,
)
from tablectl.drivers.replies import acked, as_a, is_a
from tablectl.drivers.transports.base import ByteStream

T = TypeVar("T")


class DiceSettings(DriverSettings):
    """The ``[[devices]]`` options of a dice unit (unknown keys are rejected).

    ``dice`` and ``colors`` (the table's fixed order, e.g. Dice Duel ``["red", "blue"]``; unset when
    not told apart) are checked against the identity and every result. ``silence_timeout`` must
    exceed ``poll_interval``, or availability would flap.
    """

    baudrate: Literal[9600, 19200] = 9600
    dice: int = pydantic.Field(default=3, ge=1, le=MAX_DICE)
    colors: tuple[str, ...] | None = None
    poll_interval: float = pydantic.Field(default=1.0, ge=0.05, le=60)
    silence_timeout: float = pydantic.Field(default=3.0, gt=0, le=600)
    reply_timeout: float = pydantic.Field(default=2.0, gt=0, le=60)
    self_test_timeout: float = pydantic.Field(default=30.0, gt=0, le=600)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> DiceSettings:
        if self.silence_timeout <= self.poll_interval:
            raise ValueError(
                f"silence_timeout ({self.silence_timeout}) must exceed poll_interval "
                f"({self.poll_interval})"
            )
        if self.colors is not None:
            if len(self.colors) != self.dice:
                raise ValueError(f"colors: {len(self.colors)} colours for {self.dice} dice")
            if len(set(self.colors)) != len(self.colors):
                raise ValueError("colors: each die needs its own colour")
            for color in self.colors:
                if not COLOR_PATTERN.fullmatch(color):
                    raise ValueError(f"colors: {color!r} is not a lower-case word of 1-12 letters")
        return self


class DiceDriver(StreamDriver[DiceSettings]):
    """One dice unit on a serial port (any pyserial URL).

    Counters besides the base's: ``duplicate_results``, ``rejected_results``, ``stale_results``.
    """

    settings_model = DiceSettings
    interpreter: DiceInterpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("a dice unit needs a serial port")
        s = self.settings
        self.interpreter = DiceInterpreter(
            self.device_id,
            dice=s.dice,
            colors=s.colors,
            poll_interval=s.poll_interval,
            silence_timeout=s.silence_timeout,
            counters=self.counters,
        )

    def _open_link(self) -> ByteStream:
        return self._serial_link(self.settings.baudrate)

    def _new_decoder(self) -> Decoder:
        return Decoder()

    def _encode(self, command: Command) -> bytes:
        return encode_command(command)

    # --- requests (controller, technicians) ------------------------------------------------------

    async def query_status(self) -> Status:
        """The unit's status now (state, game, last roll, faults); transport errors and timeouts
        raise.
        """
        return await self._request(QueryStatus(), is_a(Status), as_a(Status))

    async def identify(self) -> Identity:
        """Model, firmware, serial, dice and colours (R9: the journal shows them on
        ``DeviceAvailable``).
        """
        return await self._request(Identify(), is_a(Identity), as_a(Identity))

    async def close_betting(self) -> Ack | Nak:
        """No more bets now (``Nak("CLOS", "STATE")`` unless open); the closing comes as
        ``NoMoreBets``.
        """
        return await self._request(CloseBetting(), *acked("CLOS", Ack, Nak))

    async def roll(self) -> Ack | Nak:
        """Shake (or drop) now, once betting is closed (``Nak("ROLL", "STATE")`` otherwise)."""
        return await self._request(RollNow(), *acked("ROLL", Ack, Nak))

    async def clear_fault(self, code: int | None = None) -> Ack | Nak:
        """Ask to clear fault ``code`` (all when ``None``); the event follows the unit's own
        ``FCLR``.
        """
        if code is not None and not 1 <= code <= MAX_CODE:
            raise ValueError(f"fault code must be 1-{MAX_CODE}, not {code}")
        return await self._request(ClearFault(code), *acked("CLRF", Ack, Nak))

    async def self_test(self) -> TestReport | Nak:
        """Run the self-test (between games) and return its report, or the refusal.

        The timeout is ``reply_timeout`` for the ``ACK``, then ``self_test_timeout`` for the report.
        """
        # Waiting for the report is registered before the command goes out: the report may
        # follow the ACK in the same read.
        report = self._replies.expect(is_a(TestReport))
        try:
            reply = await self._request(SelfTest(), *acked("TEST", Ack, Nak))
            if isinstance(reply, Nak):
                return reply
            timeout = self.settings.self_test_timeout
            return as_a(TestReport)(await self._replies.wait(report, timeout, "the self-test"))
        finally:
            self._replies.forget(report)

    async def _request(
        self, command: Command, match: Callable[[Message], bool], convert: Callable[[Message], T]
    ) -> T:
        timeout = self.settings.reply_timeout
        return convert(await self._exchange(command, match, timeout, command_verb(command)))
