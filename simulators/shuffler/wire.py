"""The simulated shuffler's serial line: host frames in, the command handlers, shuffler frames out.

:class:`HostPort` is the half of :class:`~tablectl.simulators.shuffler.model.SimShuffler` that
talks, kept apart from the mechanism (shuffles, door, faults, the schedule) because it is what a
host sees: it parses host commands with the production
:class:`~tablectl.drivers.shuffler.protocol.CommandDecoder`, answers or refuses them as the real
shuffler does, and encodes every frame with
:func:`~tablectl.drivers.shuffler.protocol.encode_message`, applying the wire faults (silence,
disconnect, split). The state it reads and the schedule it moves are the model's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from tablectl.drivers.shuffler.protocol import (
    FAULT_JAM,
    Ack,
    ClearFault,
    CommandDecoder,
    DeckReport,
    DecodeError,
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
from tablectl.drivers.stx import GARBAGE
from tablectl.simulators.chunks import Chunk, Outbox

if TYPE_CHECKING:
    from tablectl.simulators.shuffler.model import ShufflePlan

__all__ = ["FIRMWARE", "MODEL", "CommandHandler", "HostPort", "line_noise"]

MODEL: Final = "TS-1"
FIRMWARE: Final = "1.0.0"

_SERVICE_ONLY: Final = frozenset({7})
"""Fault codes no ``CLRF`` clears (a technician's job)."""
_STALE_LIMIT: Final = 1 << 20  # bytes not collected by advance(): drop output beyond this

CommandHandler = Callable[[Any, float], list[Message]]
"""A ``_cmd_*`` method: the decoded command and its arrival time → the reply frames."""


class HostPort:
    """The shuffler's serial line: what :class:`~tablectl.simulators.shuffler.model.SimShuffler`
    hears and says. A mixin: the state below is the model's, set in its ``__init__``."""

    _rng: random.Random
    _decoder: CommandDecoder
    _outbox: Outbox
    _state: ShufflerState
    _door_open: bool
    _cards: int
    _missing: tuple[str, ...]
    _extra: tuple[str, ...]
    _active: dict[int, str]
    _jam_door_cycled: bool
    _reads_faces: bool
    _serial: str
    _wire: ShufflePlan | None
    _ignored: int
    _silent_until: float
    _handlers: dict[type, CommandHandler]

    if TYPE_CHECKING:  # the model's own, which the handlers call

        def status(self) -> Status: ...
        def link_down(self, now: float) -> bool: ...
        def _run_until(self, now: float) -> None: ...
        def _schedule(self, at: float, kind: str, arg: int = 0) -> None: ...
        def _refusal(self) -> str | None: ...
        def _begin(self, decks: int, now: float) -> bool: ...

    # --- host bytes in -------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes arriving at ``now``; return the immediate replies.

        Unsolicited frames caused by a command (``SHST`` after ``ACK;SHUF``, ``FCLR`` after
        ``ACK;CLRF``) are queued for the next :meth:`advance`, so they follow the reply.
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

    # --- output --------------------------------------------------------------------------------

    def _emit(self, at: float, message: Message) -> None:
        """Queue one frame, applying the last shuffle's ``split`` fault (it lasts until the next
        shuffle starts); nothing goes out while the device is silent or unplugged."""
        if at < self._silent_until or self.link_down(at) or self._outbox.size > _STALE_LIMIT:
            return
        data = encode_message(message)
        if self._wire is not None and self._wire.has("split"):
            self._outbox.append_split(at, data, self._rng)
            return
        self._outbox.append(Chunk(at, data))


def _nak_for(error: DecodeError) -> Nak | None:
    """A real shuffler NAKs a frame it could not use; line noise outside frames it ignores."""
    raw = error.raw
    if error.reason == GARBAGE:
        return None
    if raw.startswith(b"\x02"):
        if error.reason.startswith("checksum mismatch"):
            return Nak("?", "FRAME")
        return None  # a broken or truncated frame: nothing to answer
    verb = raw[:4].decode("ascii", "replace")
    if error.reason.startswith("unknown command verb"):
        return Nak(verb if verb.isalpha() and verb.isupper() and len(verb) == 4 else "?", "VERB")
    return Nak(verb if verb.isalpha() and verb.isupper() else "?", "ARG")


def line_noise(rng: random.Random) -> bytes:
    """Line noise without STX, ETX, CR or LF, so it cannot pass for (part of) a frame."""
    alphabet = [b for b in range(256) if b not in (0x02, 0x03, 0x0D, 0x0A)]
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(3, 12))) + b"\r\n"
