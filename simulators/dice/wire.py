"""The simulated dice unit's serial line on the reference-frame port
(:class:`~tablectl.simulators.stx_port.StxPort`): :class:`HostPort`, the half of the model a host
sees, answering or refusing its commands; the state and schedule are the model's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

from tablectl.drivers.dice.protocol import (
    FAULT_LID,
    Ack,
    ClearFault,
    CloseBetting,
    ClosedBy,
    CommandDecoder,
    DiceState,
    Fault,
    FaultClear,
    Identify,
    Identity,
    Message,
    Nak,
    NoResult,
    QueryStatus,
    RepeatLast,
    Result,
    RollNow,
    SelfTest,
    Status,
    encode_message,
)
from tablectl.simulators.stx_port import StxMessages, StxPort

if TYPE_CHECKING:
    from tablectl.simulators.dice.model import GamePlan

MODEL: Final = "TDS-1"
FIRMWARE: Final = "1.0.0"
READER: Final = "CAM1"
"""The simulated reader's id in every ``RSLT``."""
SELF_TEST_SECONDS: Final = 2.0
"""Device seconds a self-test takes (one test shake and read); the cycle waits meanwhile."""

R = TypeVar("R")


class HostPort(StxPort[Message, R]):
    """The dice unit's serial line: what :class:`~tablectl.simulators.dice.model.SimDice` hears
    and says. A mixin: the state below is the model's, set in its ``__init__``."""

    _state: DiceState
    _dice: int
    _colors: tuple[str, ...]
    _serial: str
    _testing: bool
    _last: Result | NoResult | None
    _wire: GamePlan | None

    if TYPE_CHECKING:  # the model's own, which the handlers call

        def status(self) -> Status: ...
        def _close(self, at: float, by: ClosedBy) -> None: ...
        def _start_roll(self, at: float) -> None: ...
        def _start_self_test(self, at: float) -> None: ...

    _messages = StxMessages(encode_message, Nak, Fault, FaultClear)

    def _setup_port(self) -> None:
        self._decoder = CommandDecoder()
        self._handlers = {
            QueryStatus: self._cmd_status,
            Identify: self._cmd_identify,
            SelfTest: self._cmd_self_test,
            CloseBetting: self._cmd_close,
            RollNow: self._cmd_roll,
            ClearFault: self._cmd_clear,
            RepeatLast: self._cmd_last,
        }

    # --- commands ------------------------------------------------------------------------------

    def _refusal(self, verb: str, wanted: DiceState) -> Nak | None:
        if self._testing:
            return Nak(verb, "BUSY")
        if FAULT_LID in self._active:
            return Nak(verb, "LID")
        if self._active:
            return Nak(verb, "FAULT")
        if self._state != wanted:
            return Nak(verb, "STATE")
        return None

    def _cmd_status(self, command: QueryStatus, now: float) -> list[Message]:
        del command, now
        return [self.status()]

    def _cmd_identify(self, command: Identify, now: float) -> list[Message]:
        del command, now
        return [Identity(MODEL, FIRMWARE, self._serial, self._dice, self._colors)]

    def _cmd_close(self, command: CloseBetting, now: float) -> list[Message]:
        del command
        refusal = self._refusal("CLOS", "ready")
        if refusal is not None:
            return [refusal]
        self._close(now, "host")
        return [Ack("CLOS")]

    def _cmd_roll(self, command: RollNow, now: float) -> list[Message]:
        del command
        refusal = self._refusal("ROLL", "closed")
        if refusal is not None:
            return [refusal]
        self._start_roll(now)
        return [Ack("ROLL")]

    def _cmd_self_test(self, command: SelfTest, now: float) -> list[Message]:
        del command
        # A test shake is only allowed between games: while betting is open or a result shows.
        refusal = self._refusal("TEST", self._state)
        if refusal is None and self._state not in ("ready", "result"):
            refusal = Nak("TEST", "STATE")
        if refusal is not None:
            return [refusal]
        self._start_self_test(now)
        return [Ack("TEST")]

    def _cmd_clear(self, command: ClearFault, now: float) -> list[Message]:
        codes = sorted(self._active) if command.code is None else [command.code]
        codes = [c for c in codes if c in self._active]
        if FAULT_LID in codes:
            return [Nak("CLRF", "COND")]  # the lid is still open: close it first
        for code in codes:
            self._schedule(now, "clear", code)
        return [Ack("CLRF")]

    def _cmd_last(self, command: RepeatLast, now: float) -> list[Message]:
        del command, now
        return [Nak("LAST", "NONE")] if self._last is None else [self._last]
