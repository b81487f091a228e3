"""The tablectl reference dice protocol, sans I/O (``docs/protocols/dice.md``).

Bytes in, messages out; commands in, bytes out. No asyncio, serial or clock: the driver owns the
port and the time, and the simulator reuses this module to speak as the dice unit
(:func:`encode_message`, :class:`CommandDecoder`), so the two ends cannot drift apart.

Why this framing. Dice shakers and result readers have no public protocol; this one is ours, and
it is the shuffler's frame, scanned by the project's one :class:`~tablectl.drivers.codec.
FrameScanner`::

    STX  payload                 ETX  C C  CR LF
    0x02 "RSLT;12;57;4,6,1;-;98;CAM1" 0x03 "xx" "\\r\\n"

* ``payload``: printable ASCII, ``;``-separated fields, a four-letter verb first. STX and ETX can
  never occur inside it, so after any line noise the receiver resynchronises at the next STX and
  loses at most one frame.
* ``C C``: CRC-8/SMBUS of the payload as two upper-case hex digits. A CRC rather than the big
  wheel's NMEA XOR because a dice result is a *fact* that settles bets and is sent once: the
  status the host polls carries no faces that could contradict a corrupted one, and an XOR
  misses two flips in one bit column (``4,1`` → ``6,3`` flips bit 1 twice). CRC-8 catches every
  1-, 2- and 3-bit error in a frame this short.
* ``CR LF`` after each frame is for people reading a sniff; decoders skip it between frames.

Every field is validated (faces 1–6, at most six dice, a colour per die or none, confidence
0–100…); a frame that fails becomes a :class:`DecodeError` value (the driver counts them), never an
exception. Whether a valid result has the *table's* number of dice is the interpreter's check.

The vocabulary is :mod:`tablectl.drivers.dice.fields` (limits, codes, wire tokens, the frame,
single-field parsers) and :mod:`tablectl.drivers.dice.messages` (the message and command types and
their encoders); this module adds the framing and the decoders, and re-exports the vocabulary so
that it stays the codec's one face.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

from tablectl.drivers import stx
from tablectl.drivers.codec import DecodeError, FrameScanner
from tablectl.drivers.dice.fields import (
    CLOSED_BY_WIRE,
    CRLF,
    ETX,
    FAULT_LID,
    FAULT_MEANINGS,
    FAULT_MOTION,
    FAULT_READER,
    GARBAGE,
    MAX_CODE,
    MAX_CONFIDENCE,
    MAX_DICE,
    MAX_NUMBER,
    MAX_PAYLOAD,
    MAX_RAW,
    NAK_REASONS,
    NO_RESULT_WIRE,
    READER_PATTERN,
    REASON_PATTERN,
    STATE_WIRE,
    STX,
    TOKEN_PATTERN,
    VERB_PATTERN,
    ClosedBy,
    DiceState,
    FieldError,
    crc8,
    frame,
    parse_codes,
    parse_colors,
    parse_faces,
    parse_number,
    parse_text,
    parse_token,
)
from tablectl.drivers.dice.messages import (
    Ack,
    BettingClosed,
    BettingOpen,
    ClearFault,
    CloseBetting,
    Command,
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
    Rolling,
    RollNow,
    SelfTest,
    Status,
    TestReport,
    command_verb,
    encode_command,
    encode_message,
)

__all__ = [
    "CRLF",
    "ETX",
    "FAULT_LID",
    "FAULT_MEANINGS",
    "FAULT_MOTION",
    "FAULT_READER",
    "FRAMING",
    "GARBAGE",
    "MAX_CODE",
    "MAX_CONFIDENCE",
    "MAX_DICE",
    "MAX_NUMBER",
    "MAX_PAYLOAD",
    "NAK_REASONS",
    "NO_RESULT_WIRE",
    "STX",
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
    "crc8",
    "encode_command",
    "encode_message",
    "frame",
]

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


def _result(f: list[str]) -> Result:
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
    "RSLT": (7, _result),
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


def _cap(raw: bytes | bytearray) -> bytes:
    return bytes(raw[:MAX_RAW])


def _checked(scanned: bytes) -> bytes | DecodeError:
    """The payload of a ``STX payload ETX CC`` frame from the scanner, or its checksum error."""
    payload, check = scanned[1:-3], scanned[-2:]
    got, want = int(check, 16), crc8(payload)
    if got != want:
        return DecodeError(f"checksum mismatch: got {got:02X}, computed {want:02X}", _cap(scanned))
    return payload


_Item = TypeVar("_Item")


class _FrameDecoder:
    """Frames → parsed items, errors as values; the two directions differ only in the parser."""

    def __init__(self) -> None:
        self._frames = FrameScanner(FRAMING)
        self.errors = 0
        """Count of :class:`DecodeError` values produced so far."""

    def _feed(self, data: bytes, parse: Callable[[list[str]], _Item]) -> list[_Item | DecodeError]:
        out: list[_Item | DecodeError] = []
        for scanned in self._frames.feed(data):
            item = scanned if isinstance(scanned, DecodeError) else _checked(scanned)
            if isinstance(item, DecodeError):
                out.append(item)
                continue
            try:
                # Printable ASCII was checked by the scanner, so decoding cannot fail.
                out.append(parse(item.decode("ascii").split(";")))
            except FieldError as exc:
                out.append(DecodeError(str(exc), _cap(item)))
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out


class Decoder(_FrameDecoder):
    """The host's side: dice-unit bytes in, :data:`Message` values out (errors included).

    Frames split anywhere decode the same; garbage, bad checksums and bad fields become
    :class:`DecodeError` values (counted in :attr:`errors`) and decoding resumes at the next STX.
    """

    def feed(self, data: bytes) -> list[Message]:
        return self._feed(data, _parse_message)


class CommandDecoder(_FrameDecoder):
    """The dice unit's side: host bytes in, :data:`Command` (or :class:`DecodeError`) out.

    ``DecodeError.raw`` of a frame that had a valid checksum but bad fields starts with the
    payload (no STX), so the simulator can NAK it by verb; framing errors start with STX.
    """

    def feed(self, data: bytes) -> list[Command | DecodeError]:
        return self._feed(data, _parse_command)
