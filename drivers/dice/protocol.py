"""The tablectl reference dice protocol, sans I/O (``docs/protocols/dice.md``).

The simulator speaks as the unit with this module too. Dice units have no public protocol; this
one uses the shuffler's frame (:mod:`tablectl.drivers.stx`)::

    STX  payload                 ETX  C C  CR LF
    0x02 "RSLT;12;57;4,6,1;-;98;CAM1" 0x03 "xx" "\\r\\n"

``payload``: printable ASCII, ``;``-separated, a four-letter verb first. ``C C``: CRC-8/SMBUS in
upper-case hex, not the big wheel's XOR: a dice result is a fact sent once that no status repeats,
and XOR misses two flips in a bit column (``4,1`` → ``6,3``). Every field is validated (faces 1–6,
at most six dice, confidence 0–100…); whether a result has the table's dice is the interpreter's
check. A bad frame is a :class:`DecodeError` value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

from tablectl.drivers import stx
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.events import RollInvalidCode
from tablectl.drivers.stx import FieldError, FrameDecoder

__all__ = [
    "CLOSED_BY_TOKEN",
    "CLOSED_BY_WIRE",
    "COLOR_PATTERN",
    "DETAIL_PATTERN",
    "FAULT_LID",
    "FAULT_MEANINGS",
    "FAULT_MOTION",
    "FAULT_READER",
    "FRAMING",
    "MAX_CODE",
    "MAX_CONFIDENCE",
    "MAX_DICE",
    "MAX_NUMBER",
    "NAK_REASONS",
    "NO_RESULT_TOKEN",
    "NO_RESULT_WIRE",
    "READER_PATTERN",
    "REASON_PATTERN",
    "STATE_TOKEN",
    "STATE_WIRE",
    "TOKEN_PATTERN",
    "VERB_PATTERN",
    "Ack",
    "BettingClosed",
    "BettingOpen",
    "ClearFault",
    "CloseBetting",
    "ClosedBy",
    "Command",
    "CommandDecoder",
    "DecodeError",
    "Decoder",
    "DiceState",
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
    "frame",
    "parse_codes",
    "parse_colors",
    "parse_faces",
    "parse_number",
    "parse_text",
    "parse_token",
]

MAX_NUMBER: Final = 9999
"""Game and roll numbers are 1–9999 and wrap to 1; 0 means "none yet" (in a status only)."""
MAX_DICE: Final = 6
MAX_CODE: Final = 99
MAX_CONFIDENCE: Final = 100

FAULT_MOTION: Final = 1
FAULT_LID: Final = 2
FAULT_READER: Final = 3
FAULT_MEANINGS: Final[dict[int, str]] = {
    FAULT_MOTION: "shaker motion fault (motor, dome or tower gate did not move as commanded)",
    FAULT_LID: "lid or door open",
    FAULT_READER: "result reader fault (camera or sensor plate)",
}
"""Reference fault codes (``FALT``); 10–99 are vendor codes passed through."""

NAK_REASONS: Final[dict[str, str]] = {
    "STATE": "not possible in the current state (e.g. ROLL while betting is open)",
    "BUSY": "a self-test is running",
    "FAULT": "an active fault blocks the command; clear it first",
    "LID": "the lid or door is open",
    "COND": "the fault's condition is still present (e.g. the lid is still open)",
    "NONE": "nothing to repeat: no roll has ended since power-up",
    "ARG": "a field is out of range",
    "VERB": "unknown command verb",
    "FRAME": "the frame's checksum or fields were bad (verb ? when unreadable)",
}
"""NAK reasons of the reference protocol; decoders accept any 1–8 capital letters."""

DiceState = Literal["ready", "closed", "rolling", "result", "fault"]
STATE_WIRE: Final[dict[str, DiceState]] = {
    "READY": "ready",
    "CLOSED": "closed",
    "ROLLING": "rolling",
    "RESULT": "result",
    "FAULT": "fault",
}
STATE_TOKEN: Final = {v: k for k, v in STATE_WIRE.items()}

ClosedBy = Literal["button", "host", "timer"]
CLOSED_BY_WIRE: Final[dict[str, ClosedBy]] = {"BTN": "button", "HOST": "host", "TIME": "timer"}
CLOSED_BY_TOKEN: Final = {v: k for k, v in CLOSED_BY_WIRE.items()}

NO_RESULT_WIRE: Final[dict[str, RollInvalidCode]] = {
    "COCKED": "die_cocked",
    "OFFTABLE": "die_off_table",
    "UNREAD": "dice_unreadable",
    "MOVING": "dice_not_at_rest",
    "NOWALL": "no_wall_hit",
}
"""``NRES`` reasons → the stable ``roll_invalid`` codes of :mod:`tablectl.drivers.events`."""
NO_RESULT_TOKEN: Final = {v: k for k, v in NO_RESULT_WIRE.items()}

VERB_PATTERN: Final = re.compile(r"[A-Z]{4}")
REASON_PATTERN: Final = re.compile(r"[A-Z]{1,8}")
COLOR_PATTERN: Final = re.compile(r"[a-z]{1,12}")
"""A die's colour: a lower-case word (``red``, ``blue``)."""
READER_PATTERN: Final = re.compile(r"[A-Za-z0-9_-]{1,16}")
TOKEN_PATTERN: Final = re.compile(r"[\x21-\x3a\x3c-\x7e][\x20-\x3a\x3c-\x7e]{0,63}")
"""Model/firmware/serial: 1–64 printable characters, no ``;``, not starting with a space."""
DETAIL_PATTERN: Final = re.compile(r"[\x20-\x3a\x3c-\x7e]{0,64}")


# --- the frame -----------------------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """``STX payload ETX CRC CR LF`` (:func:`tablectl.drivers.stx.frame`); ``EncodeError`` if
    unframeable.
    """
    return stx.frame(payload, "dice")


# --- parsing one field ----------------------------------------------------------------------------


_T = TypeVar("_T")


def parse_number(text: str, what: str, low: int = 0, high: int = MAX_NUMBER) -> int:
    if not (1 <= len(text) <= 4 and text.isascii() and text.isdigit()):
        raise FieldError(f"{what}: {text!r} is not 1-4 decimal digits")
    value = int(text)
    if not low <= value <= high:
        raise FieldError(f"{what}: {value} not in {low}-{high}")
    return value


def parse_codes(text: str, what: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    codes = tuple(parse_number(part, what, 1, MAX_CODE) for part in text.split(","))
    if list(codes) != sorted(set(codes)):
        raise FieldError(f"{what}s must be distinct and ascending: {text!r}")
    return codes


def parse_faces(text: str) -> tuple[int, ...]:
    parts = text.split(",")
    if len(parts) > MAX_DICE:
        raise FieldError(f"faces: {len(parts)} dice, at most {MAX_DICE}")
    for part in parts:
        if len(part) != 1 or part not in "123456":
            raise FieldError(f"faces: {part!r} is not a die face 1-6")
    return tuple(int(part) for part in parts)


def parse_colors(text: str, dice: int) -> tuple[str, ...]:
    if text == "-":
        return ()
    colors = tuple(text.split(","))
    if len(colors) != dice:
        raise FieldError(f"colours: {len(colors)} for {dice} dice")
    if len(set(colors)) != len(colors):
        raise FieldError(f"colours: the same colour twice in {text!r}")
    for color in colors:
        if not COLOR_PATTERN.fullmatch(color):
            raise FieldError(f"colours: {color!r} is not a lower-case word of 1-12 letters")
    return colors


def parse_text(text: str, what: str) -> str:
    if not DETAIL_PATTERN.fullmatch(text):
        raise FieldError(f"{what}: longer than 64 characters")
    return text


def parse_token(table: dict[str, _T], text: str, what: str) -> _T:
    value = table.get(text)
    if value is None:
        raise FieldError(f"{what} {text!r} is not one of {', '.join(table)}")
    return value


# --- messages the dice unit sends ----------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``STAT;<state>;<game>;<roll>;<faults>``: the status level.

    ``game``: in progress or last played; ``roll``: last started (0 before the first); faults
    ascending.
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

    Faces in the reader's order; ``colors`` empty (``-``) when not told apart; confidence 0–100;
    ``reader`` ``None`` is ``-``.
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
    """The frame the dice unit sends for ``message``; ``EncodeError`` rather than a bad frame."""
    return frame(_payload(message).encode("ascii"))


def command_verb(command: Command) -> str:
    """The four-letter verb of ``command`` (what ACK/NAK name)."""
    verb = _VERBS.get(type(command))
    if verb is None:
        raise TypeError(f"not a dice command: {command!r}")
    return verb


def encode_command(command: Command) -> bytes:
    """The frame the host sends for ``command``; ``EncodeError`` for a fault code out of range."""
    text = command_verb(command)
    if isinstance(command, ClearFault) and command.code is not None:
        text += f";{_number(command.code, 'fault code', 1, MAX_CODE)}"
    return frame(text.encode("ascii"))


# --- decoding ----------------------------------------------------------------------------------

FRAMING: Final = stx.FRAMING
"""The reference protocols' frame (:mod:`tablectl.drivers.stx`)."""


def _status(f: list[str]) -> Status:
    state: DiceState = parse_token(STATE_WIRE, f[1], "STAT: state")
    return Status(
        state,
        parse_number(f[2], "game"),
        parse_number(f[3], "roll"),
        parse_codes(f[4], "fault code"),
    )


def _parse_result(f: list[str]) -> Result:
    faces = parse_faces(f[3])
    reader = None if f[6] == "-" else f[6]
    if reader is not None and not READER_PATTERN.fullmatch(reader):
        raise FieldError(f"RSLT: reader {reader!r} is not 1-16 letters, digits, _ or -")
    return Result(
        parse_number(f[1], "game", 1),
        parse_number(f[2], "roll", 1),
        faces,
        parse_colors(f[4], len(faces)),
        parse_number(f[5], "confidence", 0, MAX_CONFIDENCE),
        reader,
    )


def _identity(f: list[str]) -> Identity:
    for name, text in zip(("model", "firmware", "serial"), f[1:4], strict=True):
        if not TOKEN_PATTERN.fullmatch(text):
            raise FieldError(f"IDNT: {name} {text!r} is not 1-64 printable characters")
    dice = parse_number(f[4], "dice", 1, MAX_DICE)
    return Identity(f[1], f[2], f[3], dice, parse_colors(f[5], dice))


def _reply(f: list[str], unreadable: bool) -> str:
    if not (VERB_PATTERN.fullmatch(f[1]) or (unreadable and f[1] == "?")):
        raise FieldError(f"{f[0]}: {f[1]!r} is not a verb")
    return f[1]


def _nak(f: list[str]) -> Nak:
    if not REASON_PATTERN.fullmatch(f[2]):
        raise FieldError(f"NAK: reason {f[2]!r} is not 1-8 capital letters")
    return Nak(_reply(f, unreadable=True), f[2])


_MESSAGES: Final[dict[str, tuple[int, Callable[[list[str]], Message]]]] = {
    "STAT": (5, _status),
    "OPEN": (2, lambda f: BettingOpen(parse_number(f[1], "game", 1))),
    "CLSD": (
        3,
        lambda f: BettingClosed(
            parse_number(f[1], "game", 1), parse_token(CLOSED_BY_WIRE, f[2], "CLSD: closer")
        ),
    ),
    "ROLL": (3, lambda f: Rolling(parse_number(f[1], "game", 1), parse_number(f[2], "roll", 1))),
    "RSLT": (7, _parse_result),
    "NRES": (
        5,
        lambda f: NoResult(
            parse_number(f[1], "game", 1),
            parse_number(f[2], "roll", 1),
            parse_token(NO_RESULT_WIRE, f[3], "NRES: reason"),
            parse_text(f[4], "NRES: detail"),
        ),
    ),
    "FALT": (
        3,
        lambda f: Fault(parse_number(f[1], "fault code", 1, MAX_CODE), parse_text(f[2], "FALT")),
    ),
    "FCLR": (2, lambda f: FaultClear(parse_number(f[1], "fault code", 1, MAX_CODE))),
    "IDNT": (6, _identity),
    "TEST": (
        3,
        lambda f: TestReport(parse_codes(f[1], "failed code"), parse_text(f[2], "TEST: detail")),
    ),
    "ACK": (2, lambda f: Ack(_reply(f, unreadable=False))),
    "NAK": (3, _nak),
}
"""Verb → (field count including the verb, parser)."""

_COMMANDS: Final[dict[str, Command]] = {
    "STAT": QueryStatus(),
    "IDNT": Identify(),
    "TEST": SelfTest(),
    "CLOS": CloseBetting(),
    "ROLL": RollNow(),
    "LAST": RepeatLast(),
}
"""The commands without fields (``CLRF`` takes an optional code)."""


def _parse_message(fields: list[str]) -> Message:
    entry = _MESSAGES.get(fields[0])
    if entry is None:
        raise FieldError(f"unknown message verb {fields[0]!r}")
    count, parse = entry
    if len(fields) != count:
        raise FieldError(f"{fields[0]}: {len(fields) - 1} fields, expected {count - 1}")
    return parse(fields)


def _parse_command(fields: list[str]) -> Command:
    verb = fields[0]
    if verb == "CLRF" and len(fields) <= 2:
        code = None if len(fields) == 1 else parse_number(fields[1], "fault code", 1, MAX_CODE)
        return ClearFault(code)
    command = _COMMANDS.get(verb)
    if command is None:
        if verb == "CLRF":
            raise FieldError(f"CLRF: {len(fields) - 1} fields, expected 0 or 1")
        raise FieldError(f"unknown command verb {verb!r}")
    if len(fields) != 1:
        raise FieldError(f"{verb}: {len(fields) - 1} fields, expected none")
    return command


# --- frames ------------------------------------------------------------------------------------


class Decoder(FrameDecoder[Message]):
    """The host's side: dice-unit bytes in, :data:`Message` values out (errors included)."""

    def __init__(self) -> None:
        super().__init__(_parse_message)


class CommandDecoder(FrameDecoder[Command]):
    """The dice unit's side: host bytes in, :data:`Command` (or :class:`DecodeError`) out."""

    def __init__(self) -> None:
        super().__init__(_parse_command)
