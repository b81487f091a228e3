"""The simulated dice unit's serial line: host frames in, the command handlers, unit frames out.

:class:`HostPort` is the half of :class:`~tablectl.simulators.dice.model.SimDice` that talks, kept
apart from the mechanism (the cycle, faults, the schedule) because it is what a host sees: it
parses host commands with the production :class:`~tablectl.drivers.dice.protocol.CommandDecoder`,
answers or refuses them as the reference protocol says, and encodes every frame with
:func:`~tablectl.drivers.dice.protocol.encode_message`, applying the wire faults (silence,
disconnect, split, a bad checksum). The state it reads and the schedule it moves are the model's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from tablectl.drivers.dice.protocol import (
    FAULT_LID,
    Ack,
    ClearFault,
    CloseBetting,
    ClosedBy,
    CommandDecoder,
    DecodeError,
    DiceState,
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
from tablectl.drivers.stx import GARBAGE
from tablectl.simulators.chunks import Chunk, Outbox

if TYPE_CHECKING:
    from tablectl.simulators.dice.model import GamePlan

__all__ = ["FIRMWARE", "MODEL", "READER", "CommandHandler", "HostPort", "corrupt", "line_noise"]

MODEL: Final = "TDS-1"
FIRMWARE: Final = "1.0.0"
READER: Final = "CAM1"
"""The simulated reader's id in every ``RSLT``."""
SELF_TEST_SECONDS: Final = 2.0
"""Device seconds a self-test takes (one test shake and read); the cycle waits meanwhile."""

_STALE_LIMIT: Final = 1 << 20  # bytes not collected by advance(): drop output beyond this

CommandHandler = Callable[[Any, float], list[Message]]
"""A ``_cmd_*`` method: the decoded command and its arrival time → the reply frames."""


class HostPort:
    """The dice unit's serial line: what :class:`~tablectl.simulators.dice.model.SimDice` hears
    and says. A mixin: the state below is the model's, set in its ``__init__``."""

    _rng: random.Random
    _decoder: CommandDecoder
    _outbox: Outbox
    _state: DiceState
    _dice: int
    _colors: tuple[str, ...]
    _serial: str
    _active: dict[int, str]
    _testing: bool
    _last: Result | NoResult | None
    _wire: GamePlan | None
    _ignored: int
    _silent_until: float
    _handlers: dict[type, CommandHandler]

    if TYPE_CHECKING:  # the model's own, which the handlers call

        def status(self) -> Status: ...
        def link_down(self, now: float) -> bool: ...
        def _run_until(self, now: float) -> None: ...
        def _schedule(self, at: float, kind: str, arg: int = 0) -> None: ...
        def _close(self, at: float, by: ClosedBy) -> None: ...
        def _start_roll(self, at: float) -> None: ...
        def _start_self_test(self, at: float) -> None: ...

    def _setup_port(self) -> None:
        self._decoder = CommandDecoder()
        self._outbox = Outbox()
        self._ignored = 0
        self._handlers = {
            QueryStatus: self._cmd_status,
            Identify: self._cmd_identify,
            SelfTest: self._cmd_self_test,
            CloseBetting: self._cmd_close,
            RollNow: self._cmd_roll,
            ClearFault: self._cmd_clear,
            RepeatLast: self._cmd_last,
        }

    # --- host bytes in -------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes arriving at ``now``; return the immediate replies.

        Frames a command causes (``CLSD`` after ``ACK;CLOS``, ``ROLL`` after ``ACK;ROLL``,
        ``FCLR`` after ``ACK;CLRF``) are queued for the next :meth:`advance`, so they follow the
        reply.
        """
        self._run_until(now)
        if now < self._silent_until or self.link_down(now):
            self._ignored += 1
            return b""
        replies: list[Message] = []
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._ignored += 1
                nak = _nak_for(item)
                if nak is not None:
                    replies.append(nak)
                continue
            replies += self._handlers[type(item)](item, now)
        return b"".join(encode_message(m) for m in replies)

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

    # --- output --------------------------------------------------------------------------------

    def _emit(self, at: float, message: Message, *, broken: bool = False) -> None:
        """Queue one frame (with a wrong checksum when ``broken``), applying the current game's
        ``split`` fault; nothing goes out while the unit is silent or unplugged."""
        if at < self._silent_until or self.link_down(at) or self._outbox.size > _STALE_LIMIT:
            return
        data = encode_message(message)
        if broken:
            data = corrupt(data)
        if self._wire is not None and self._wire.has("split"):
            self._outbox.append_split(at, data, self._rng)
            return
        self._outbox.append(Chunk(at, data))


def corrupt(data: bytes) -> bytes:
    """``data`` (one frame) with its checksum's last digit changed."""
    broken = bytearray(data)
    broken[-3] = ord("0") if broken[-3] != ord("0") else ord("1")
    return bytes(broken)


def _nak_for(error: DecodeError) -> Nak | None:
    """A unit NAKs a frame it could not use; line noise outside frames it ignores."""
    raw = error.raw
    if error.reason == GARBAGE:
        return None
    if raw.startswith(b"\x02"):
        if error.reason.startswith("checksum mismatch"):
            return Nak("?", "FRAME")
        return None  # a broken or truncated frame: nothing to answer
    verb = raw[:4].decode("ascii", "replace")
    known = verb if len(verb) == 4 and verb.isalpha() and verb.isupper() else "?"
    return Nak(known, "VERB" if error.reason.startswith("unknown command verb") else "ARG")


def line_noise(rng: random.Random) -> bytes:
    """Line noise without STX, ETX, CR or LF, so it cannot pass for (part of) a frame."""
    alphabet = [b for b in range(256) if b not in (0x02, 0x03, 0x0D, 0x0A)]
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(3, 12))) + b"\r\n"
