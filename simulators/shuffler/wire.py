"""The simulated shuffler's serial line on the reference-frame port
(:class:`~tablectl.simulators.stx_port.StxPort`): :class:`HostPort`, the half of the model a host
sees, answering or refusing its commands as the real shuffler does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, TypeVar

from tablectl.drivers.shuffler.protocol import (
    FAULT_JAM,
    Ack,
    ClearFault,
    DeckReport,
    Fault,
    FaultClear,
    Message,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShufflerState,
    StartShuffle,
    Status,
    Version,
    encode_message,
)
from tablectl.simulators.stx_port import StxMessages, StxPort

if TYPE_CHECKING:
    from tablectl.simulators.shuffler.model import ShufflePlan

MODEL: Final = "TS-1"
FIRMWARE: Final = "1.0.0"

_SERVICE_ONLY: Final = frozenset({7})
"""Fault codes no ``CLRF`` clears (a technician's job)."""

R = TypeVar("R")


class HostPort(StxPort[Message, R]):
    """The shuffler's serial line: what :class:`~tablectl.simulators.shuffler.model.SimShuffler`
    hears and says. A mixin: the state below is the model's, set in its ``__init__``."""

    _state: ShufflerState
    _door_open: bool
    _cards: int
    _missing: tuple[str, ...]
    _extra: tuple[str, ...]
    _jam_door_cycled: bool
    _reads_faces: bool
    _serial: str
    _wire: ShufflePlan | None

    if TYPE_CHECKING:  # the model's own, which the handlers call

        def status(self) -> Status: ...
        def _refusal(self) -> str | None: ...
        def _begin(self, decks: int, now: float) -> bool: ...

    _messages = StxMessages(encode_message, Nak, Fault, FaultClear)

    # --- commands ------------------------------------------------------------------------------

    def _cmd_shuffle(self, command: StartShuffle, now: float) -> list[Message]:
        refusal = self._refusal()
        if refusal is not None:
            return [Nak("SHUF", refusal)]
        # The ACK goes first (the reply); SHST follows in the next advance().
        self._begin(command.decks, now)
        return [Ack("SHUF")]

    def _cmd_status(self, command: QueryStatus, now: float) -> list[Message]:
        del command, now
        return [self.status()]

    def _cmd_version(self, command: QueryVersion, now: float) -> list[Message]:
        del command, now
        return [Version(MODEL, FIRMWARE, self._serial)]

    def _cmd_clear(self, command: ClearFault, now: float) -> list[Message]:
        codes = sorted(self._active) if command.code is None else [command.code]
        codes = [c for c in codes if c in self._active]
        for code in codes:
            if code in _SERVICE_ONLY or (code == FAULT_JAM and not self._jam_door_cycled):
                return [Nak("CLRF", "COND")]
            if code == FAULT_JAM and self._door_open:
                return [Nak("CLRF", "DOOR")]
        for code in codes:
            self._schedule(now, "self_clear", code)
        return [Ack("CLRF")]

    def _cmd_deck_check(self, command: RequestDeckCheck, now: float) -> list[Message]:
        del command, now
        if self._state == "shuffling":
            return [Nak("DCHK", "BUSY")]
        if self._active:
            return [Nak("DCHK", "FAULT")]
        if not self._reads_faces:
            return [DeckReport(self._cards, checked=False)]
        return [DeckReport(self._cards, self._missing, self._extra)]
