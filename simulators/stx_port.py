"""The simulated serial line of a reference-frame device (``STX payload ETX CC``: the shuffler,
the dice unit), mixed into each ``HostPort``.

Host bytes go through the production decoder (``_decoder``) to the model's handler per command
type (``_handlers``); an unusable frame is NAKed as real devices do (noise outside frames is
ignored). Frames out use the production encoder with the wire faults applied (silence, unplugged,
``split``, a broken checksum); a fault code goes ``FALT`` once and ``FCLR`` once.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Generic, Protocol, TypeVar

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.stx import GARBAGE, FrameDecoder
from tablectl.simulators.chunks import Chunk
from tablectl.simulators.timeline import SerialModel

M = TypeVar("M")
R = TypeVar("R")

CommandHandler = Callable[[Any, float], list[Any]]
"""A ``_cmd_*`` method: the decoded command and its arrival time → the reply frames."""

_STALE_LIMIT: Final = 1 << 20  # bytes not collected by advance(): drop output beyond this


class _Plan(Protocol):
    def has(self, kind: str) -> bool: ...


@dataclass(frozen=True)
class StxMessages(Generic[M]):
    """The protocol's side of the port: its encoder and the messages the port sends itself."""

    encode: Callable[[M], bytes]
    nak: Callable[[str, str], M]
    """``NAK;VERB;REASON``."""
    fault: Callable[[int, str], M]
    """``FALT;CODE;DETAIL``."""
    fault_clear: Callable[[int], M]
    """``FCLR;CODE``."""


class StxPort(SerialModel[int, R], Generic[M, R]):
    """What a host sees of the device; see the module docstring. ``M``: the protocol's message,
    ``R``: the model's result."""

    _messages: StxMessages[M]
    _rng: random.Random
    _decoder: FrameDecoder[Any]
    _wire: _Plan | None
    """Whose wire faults (``split``) apply to the output now."""
    _silent_until: float
    _handlers: dict[type, CommandHandler]
    _active: dict[int, str]
    """The fault codes (``FALT``) raised and not yet cleared, with their detail."""

    @property
    def active_faults(self) -> frozenset[int]:
        return frozenset(self._active)

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes at ``now``; return the immediate replies.

        Frames a command causes (a shuffle's start, a cleared fault) are queued for the next
        ``advance``, so they follow the reply.
        """
        self._run_until(now)
        if now < self._silent_until or self.link_down(now):
            self._ignored += 1
            return b""
        replies: list[M] = []
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._ignored += 1
                nak = self._nak_for(item)
                if nak is not None:
                    replies.append(nak)
                continue
            replies += self._handlers[type(item)](item, now)
        return b"".join(self._messages.encode(m) for m in replies)

    def _nak_for(self, error: DecodeError) -> M | None:
        """The device NAKs a frame it could not use; line noise outside frames it ignores."""
        raw = error.raw
        if error.reason == GARBAGE:
            return None
        if raw.startswith(b"\x02"):
            if error.reason.startswith("checksum mismatch"):
                return self._messages.nak("?", "FRAME")
            return None  # a broken or truncated frame: nothing to answer
        verb = raw[:4].decode("ascii", "replace")
        known = verb if len(verb) == 4 and verb.isalpha() and verb.isupper() else "?"
        unknown = error.reason.startswith("unknown command verb")
        return self._messages.nak(known, "VERB" if unknown else "ARG")

    def _emit(self, at: float, message: M, *, broken: bool = False) -> None:
        """Queue one frame (with a wrong checksum when ``broken``), applying the ``split`` fault
        of ``_wire``; nothing goes out while the device is silent or unplugged."""
        if at < self._silent_until or self.link_down(at) or self._outbox.size > _STALE_LIMIT:
            return
        data = self._messages.encode(message)
        if broken:
            data = corrupt(data)
        if self._wire is not None and self._wire.has("split"):
            self._outbox.append_split(at, data, self._rng)
            return
        self._outbox.append(Chunk(at, data))

    def _raise_code(self, at: float, code: int, detail: str) -> bool:
        """Raise fault ``code`` unless it is active; whether it was raised."""
        if code in self._active:
            return False
        self._active[code] = detail
        self._emit(at, self._messages.fault(code, detail))
        return True

    def _clear_code(self, at: float, code: int) -> bool:
        """Clear fault ``code`` if it is active; whether it was."""
        if code not in self._active:
            return False
        del self._active[code]
        self._emit(at, self._messages.fault_clear(code))
        return True


def corrupt(data: bytes) -> bytes:
    """``data`` (one frame) with its checksum's last digit changed."""
    broken = bytearray(data)
    broken[-3] = ord("0") if broken[-3] != ord("0") else ord("1")
    return bytes(broken)


def line_noise(rng: random.Random) -> bytes:
    """Line noise without STX, ETX, CR or LF, so it cannot pass for (part of) a frame."""
    alphabet = [b for b in range(256) if b not in (0x02, 0x03, 0x0D, 0x0A)]
    return bytes(rng.choice(alphabet) for _ in range(rng.randint(3, 12))) + b"\r\n"
