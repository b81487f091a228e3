"""The tablectl reference dice protocol's messages and commands, sans I/O: what the dice unit
sends, what the host sends, and their encoders (``docs/protocols/dice.md``). The field grammar
(limits, codes, wire tokens, the frame) is :mod:`tablectl.drivers.dice.fields`; the decoders are
in :mod:`tablectl.drivers.dice.protocol`, which re-exports all of it as the codec's one face.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice.fields import (
    CLOSED_BY_TOKEN,
    COLOR_PATTERN,
    DETAIL_PATTERN,
    MAX_CODE,
    MAX_CONFIDENCE,
    MAX_DICE,
    MAX_NUMBER,
    NO_RESULT_TOKEN,
    READER_PATTERN,
    REASON_PATTERN,
    STATE_TOKEN,
    TOKEN_PATTERN,
    VERB_PATTERN,
    ClosedBy,
    DiceState,
    frame,
)
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.events import RollInvalidCode

__all__ = [
    "Ack",
    "BettingClosed",
    "BettingOpen",
    "ClearFault",
    "CloseBetting",
    "Command",
    "Fault",
    "FaultClear",
    "Identify",
    "Identity",
    "Message",
    "Nak",
    "NoResult",
    "QueryStatus",
    "RepeatLast",
    "Result",
    "RollNow",
    "Rolling",
    "SelfTest",
    "Status",
    "TestReport",
    "command_verb",
    "encode_command",
    "encode_message",
]


# --- messages the dice unit sends ----------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``STAT;<state>;<game>;<roll>;<faults>``: the reply to a status query (a *level*).

    ``game`` is the game (betting round) in progress or last played, ``roll`` the last roll
    started (0 before the first); ``faults`` the active fault codes, ascending.
    """

    state: DiceState
    game: int
    roll: int
    faults: tuple[int, ...] = ()


@dataclass(frozen=True)
class BettingOpen:
    """``OPEN;<game>``: game ``game`` opened; place your bets."""

    game: int


@dataclass(frozen=True)
class BettingClosed:
    """``CLSD;<game>;<by>``: no more bets for ``game`` (the dealer's button, the host's ``CLOS``
    or the betting timer)."""

    game: int
    by: ClosedBy


@dataclass(frozen=True)
class Rolling:
    """``ROLL;<game>;<roll>``: roll ``roll`` of ``game`` started (shaker on, tower gate open)."""

    game: int
    roll: int


@dataclass(frozen=True)
class Result:
    """``RSLT;<game>;<roll>;<faces>;<colours>;<confidence>;<reader>``: the dice at rest.

    ``faces`` in the reader's order; ``colors`` name each die where the reader tells them apart
    (empty: it does not, ``-`` on the wire); ``confidence`` 0–100; ``reader`` the reader's id
    (``None``: ``-``).
    """

    game: int
    roll: int
    faces: tuple[int, ...]
    colors: tuple[str, ...] = ()
    confidence: int = MAX_CONFIDENCE
    reader: str | None = None


@dataclass(frozen=True)
class NoResult:
    """``NRES;<game>;<roll>;<reason>;<detail>``: roll ``roll`` gives no result (``code``)."""

    game: int
    roll: int
    code: RollInvalidCode
    detail: str = ""


@dataclass(frozen=True)
class Fault:
    """``FALT;<code>;<detail>``: fault ``code`` (:data:`FAULT_MEANINGS`) became active."""

    code: int
    detail: str = ""


@dataclass(frozen=True)
class FaultClear:
    """``FCLR;<code>``: fault ``code`` is no longer active."""

    code: int


@dataclass(frozen=True)
class Identity:
    """``IDNT;<model>;<firmware>;<serial>;<dice>;<colours>``: the reply to an identify query."""

    model: str
    firmware: str
    serial: str
    dice: int
    colors: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestReport:
    """``TEST;<failed>;<detail>``: a self-test ended; ``failed`` are the fault codes it found
    (empty: passed, ``-`` on the wire)."""

    __test__ = False  # not a pytest class, whatever its name says

    failed: tuple[int, ...]
    detail: str = ""

    @property
    def passed(self) -> bool:
        return not self.failed


@dataclass(frozen=True)
class Ack:
    """``ACK;<verb>``: the command was accepted."""

    verb: str


@dataclass(frozen=True)
class Nak:
    """``NAK;<verb>;<reason>``: refused (:data:`NAK_REASONS`; verb ``?`` if unreadable)."""

    verb: str
    reason: str


Message = (
    Status
    | BettingOpen
    | BettingClosed
    | Rolling
    | Result
    | NoResult
    | Fault
    | FaultClear
    | Identity
    | TestReport
    | Ack
    | Nak
    | DecodeError
)


# --- commands the host sends ---------------------------------------------------------------------


@dataclass(frozen=True)
class QueryStatus:
    """``STAT``: reply with a :class:`Status`."""


@dataclass(frozen=True)
class Identify:
    """``IDNT``: reply with an :class:`Identity`."""


@dataclass(frozen=True)
class SelfTest:
    """``TEST``: ``ACK;TEST``, a test roll, then a :class:`TestReport`."""

    __test__ = False


@dataclass(frozen=True)
class CloseBetting:
    """``CLOS``: no more bets now (``ACK`` then ``CLSD;<game>;HOST``)."""


@dataclass(frozen=True)
class RollNow:
    """``ROLL``: shake (or drop) now; only once betting is closed."""


@dataclass(frozen=True)
class ClearFault:
    """``CLRF`` (every clearable fault) or ``CLRF;<code>``."""

    code: int | None = None


@dataclass(frozen=True)
class RepeatLast:
    """``LAST``: send the last ``RSLT`` or ``NRES`` again, unchanged (a lost result is asked
    for, never guessed)."""


Command = QueryStatus | Identify | SelfTest | CloseBetting | RollNow | ClearFault | RepeatLast

_VERBS: Final[dict[type, str]] = {
    QueryStatus: "STAT",
    Identify: "IDNT",
    SelfTest: "TEST",
    CloseBetting: "CLOS",
    RollNow: "ROLL",
    ClearFault: "CLRF",
    RepeatLast: "LAST",
}


# --- encoders ------------------------------------------------------------------------------------


def _number(value: int, what: str, low: int = 0, high: int = MAX_NUMBER) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EncodeError(f"{what} must be an integer {low}-{high}, not {value!r}")
    return str(value)


def _codes(codes: tuple[int, ...], what: str) -> str:
    if len(set(codes)) != len(codes) or list(codes) != sorted(codes):
        raise EncodeError(f"{what} must be distinct and ascending: {codes!r}")
    return ",".join(_number(c, what, 1, MAX_CODE) for c in codes) or "-"


def _colors(colors: tuple[str, ...]) -> str:
    if len(colors) > MAX_DICE or len(set(colors)) != len(colors):
        raise EncodeError(f"colours must be at most {MAX_DICE} distinct words: {colors!r}")
    for color in colors:
        if not isinstance(color, str) or not COLOR_PATTERN.fullmatch(color):
            raise EncodeError(f"colour {color!r} is not a lower-case word of 1-12 letters")
    return ",".join(colors) or "-"


def _text(text: str, what: str, pattern: re.Pattern[str]) -> str:
    if not isinstance(text, str) or not pattern.fullmatch(text):
        raise EncodeError(f"{what} must be printable ASCII without ';', at most 64: {text!r}")
    return text


def _verb(verb: str, what: str, *, unreadable: bool = False) -> str:
    if not (VERB_PATTERN.fullmatch(verb) or (unreadable and verb == "?")):
        raise EncodeError(f"{what} verb must be four capital letters, not {verb!r}")
    return verb


def _result(message: Result) -> str:
    faces = message.faces
    if not 1 <= len(faces) <= MAX_DICE:
        raise EncodeError(f"a result has 1-{MAX_DICE} dice, not {len(faces)}")
    for face in faces:
        _number(face, "face", 1, 6)
    if message.colors and len(message.colors) != len(faces):
        raise EncodeError("a result names a colour for every die or for none")
    reader = message.reader
    if reader is not None and not READER_PATTERN.fullmatch(reader):
        raise EncodeError(f"reader id {reader!r} is not 1-16 letters, digits, _ or -")
    if reader == "-":  # the wire's "no reader id": it would come back as None
        raise EncodeError("reader id '-' is the wire's mark for no reader id")
    return (
        f"RSLT;{_number(message.game, 'game', 1)};{_number(message.roll, 'roll', 1)};"
        f"{','.join(map(str, faces))};{_colors(message.colors)};"
        f"{_number(message.confidence, 'confidence', 0, MAX_CONFIDENCE)};{reader or '-'}"
    )


def _payload(message: Message) -> str:
    match message:
        case Status(state, game, roll, faults):
            if state not in STATE_TOKEN:
                raise EncodeError(f"unknown dice state {state!r}")
            return (
                f"STAT;{STATE_TOKEN[state]};{_number(game, 'game')};{_number(roll, 'roll')};"
                f"{_codes(faults, 'fault code')}"
            )
        case BettingOpen(game):
            return f"OPEN;{_number(game, 'game', 1)}"
        case BettingClosed(game, by):
            if by not in CLOSED_BY_TOKEN:
                raise EncodeError(f"unknown closer {by!r}")
            return f"CLSD;{_number(game, 'game', 1)};{CLOSED_BY_TOKEN[by]}"
        case Rolling(game, roll):
            return f"ROLL;{_number(game, 'game', 1)};{_number(roll, 'roll', 1)}"
        case Result():
            return _result(message)
        case NoResult(game, roll, code, detail):
            if code not in NO_RESULT_TOKEN:
                raise EncodeError(f"unknown no-result code {code!r}")
            return (
                f"NRES;{_number(game, 'game', 1)};{_number(roll, 'roll', 1)};"
                f"{NO_RESULT_TOKEN[code]};{_text(detail, 'detail', DETAIL_PATTERN)}"
            )
        case Fault(code, detail):
            return (
                f"FALT;{_number(code, 'fault code', 1, MAX_CODE)};"
                f"{_text(detail, 'detail', DETAIL_PATTERN)}"
            )
        case FaultClear(code):
            return f"FCLR;{_number(code, 'fault code', 1, MAX_CODE)}"
        case Identity(model, firmware, serial, dice, colors):
            if colors and len(colors) != dice:
                raise EncodeError("an identity names a colour for every die or for none")
            named = {"model": model, "firmware": firmware, "serial": serial}
            texts = ";".join(_text(t, name, TOKEN_PATTERN) for name, t in named.items())
            return f"IDNT;{texts};{_number(dice, 'dice', 1, MAX_DICE)};{_colors(colors)}"
        case TestReport(failed, detail):
            return f"TEST;{_codes(failed, 'failed code')};{_text(detail, 'detail', DETAIL_PATTERN)}"
        case Ack(verb):
            return f"ACK;{_verb(verb, 'ACK')}"
        case Nak(verb, reason):
            if not REASON_PATTERN.fullmatch(reason):
                raise EncodeError(f"NAK reason must be 1-8 capital letters, not {reason!r}")
            return f"NAK;{_verb(verb, 'NAK', unreadable=True)};{reason}"
        case DecodeError():
            raise EncodeError("a DecodeError has no wire form")
    raise TypeError(f"not a dice message: {message!r}")  # pragma: no cover - exhaustive


def encode_message(message: Message) -> bytes:
    """The frame the dice unit sends for ``message`` (simulator and tests).

    Raises:
        EncodeError: a field out of range (nothing invalid is ever framed).
    """
    return frame(_payload(message).encode("ascii"))


def command_verb(command: Command) -> str:
    """The four-letter verb of ``command`` (what ACK/NAK name)."""
    verb = _VERBS.get(type(command))
    if verb is None:
        raise TypeError(f"not a dice command: {command!r}")
    return verb


def encode_command(command: Command) -> bytes:
    """The frame the host sends for ``command``.

    Raises:
        EncodeError: a fault code out of range.
    """
    text = command_verb(command)
    if isinstance(command, ClearFault) and command.code is not None:
        text += f";{_number(command.code, 'fault code', 1, MAX_CODE)}"
    return frame(text.encode("ascii"))
