"""The tablectl reference shuffler protocol, sans I/O (``docs/protocols/shuffler.md``).

Bytes in, messages out; commands in, bytes out. No asyncio, serial, usb or clock: the driver
owns the link and the time, and the simulator reuses this module to speak as the shuffler
(``encode_message``, :class:`CommandDecoder`), so the two cannot drift apart.

Why this framing. Vendor shuffler protocols are closed; this one is ours and vendor codecs map
onto its message types. It is ASCII so a technician can read a sniff (``tablectl diag`` or a
terminal at 9600 baud) and binary-safe enough for a noisy RS-232 line::

    STX  payload  ETX  C C  CR LF
    0x02 "SHDN;12;416;-;-" 0x03 "1D" "\\r\\n"

* ``payload``: 1–:data:`MAX_PAYLOAD` printable ASCII bytes (0x20–0x7E), ``;``-separated fields,
  the first a four-letter verb. STX/ETX can never occur inside it, so a lost byte costs at most
  one frame: the next STX always starts a fresh one (resynchronisation).
* ``C C``: CRC-8 (polynomial 0x07, init 0x00, no reflection, no final XOR; "CRC-8/SMBUS", check
  value 0xF4) of the payload bytes as two upper-case hex digits. CRC-8 rather than an XOR: XOR
  misses two flipped bits in the same column and swapped bytes, CRC-8 catches every one-, two-
  and three-bit error in a frame this short, for no measurable cost.
* ``CR LF`` after each frame is for people reading a sniff line by line; decoders skip CR/LF
  between frames, so a device may omit them.

The same frames run over USB bulk endpoints as a **byte stream**: a transfer may hold part of a
frame or several frames, exactly like serial reads, so one decoder serves both transports.

Every field is validated; a frame that fails becomes a :class:`DecodeError` value (the driver
counts them), never an exception, and the decoder resynchronises at the next STX.

The vocabulary (limits, fault codes, the checksum and the frame, the message and command types and
their encoders) is :mod:`tablectl.drivers.shuffler.messages`; this module adds the framing, the
decoders and the vendor seam, and re-exports the vocabulary so that it stays the codec's one face.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from tablectl.drivers import stx
from tablectl.drivers.codec import DecodeError, FrameScanner
from tablectl.drivers.shuffler.messages import (
    CARD_PATTERN,
    CRLF,
    DETAIL_PATTERN,
    DOOR_WIRE,
    ETX,
    FAULT_CLEARING,
    FAULT_JAM,
    FAULT_MEANINGS,
    GARBAGE,
    MAX_CODE,
    MAX_DECKS,
    MAX_LIST,
    MAX_NUMBER,
    MAX_PAYLOAD,
    MAX_RAW,
    NAK_REASONS,
    NUMBER_PATTERN,
    REASON_PATTERN,
    STATE_WIRE,
    STX,
    TOKEN_PATTERN,
    VERB_PATTERN,
    Ack,
    ClearFault,
    Command,
    DeckReport,
    Door,
    Fault,
    FaultClear,
    Message,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShuffleDone,
    ShufflerState,
    ShuffleStart,
    StartShuffle,
    Status,
    Version,
    command_verb,
    crc8,
    encode_command,
    encode_message,
    frame,
)

__all__ = [
    "CARD_PATTERN",
    "CRLF",
    "ETX",
    "FAULT_CLEARING",
    "FAULT_JAM",
    "FAULT_MEANINGS",
    "FRAMING",
    "GARBAGE",
    "MAX_CODE",
    "MAX_DECKS",
    "MAX_LIST",
    "MAX_NUMBER",
    "MAX_PAYLOAD",
    "NAK_REASONS",
    "REFERENCE_CODEC",
    "STX",
    "Ack",
    "ClearFault",
    "Codec",
    "Command",
    "CommandDecoder",
    "DeckReport",
    "DecodeError",
    "Decoder",
    "Door",
    "Fault",
    "FaultClear",
    "Message",
    "MessageDecoder",
    "Nak",
    "QueryStatus",
    "QueryVersion",
    "RequestDeckCheck",
    "ShuffleDone",
    "ShuffleStart",
    "ShufflerState",
    "StartShuffle",
    "Status",
    "Version",
    "command_verb",
    "crc8",
    "encode_command",
    "encode_message",
    "frame",
]

FRAMING: Final = stx.FRAMING
"""The reference protocols' frame (:mod:`tablectl.drivers.stx`)."""


class _FieldError(ValueError):
    """A field failed validation; becomes a :class:`DecodeError` with this message."""


def _number(text: str, what: str, low: int = 0, high: int = MAX_NUMBER) -> int:
    if not NUMBER_PATTERN.fullmatch(text):
        raise _FieldError(f"{what}: {text!r} is not 1-4 decimal digits")
    value = int(text)
    if not low <= value <= high:
        raise _FieldError(f"{what}: {value} not in {low}-{high}")
    return value


def _card_list(text: str, what: str) -> tuple[str, ...]:
    if text == "-":
        return ()
    cards = text.split(",")
    if len(cards) > MAX_LIST:
        raise _FieldError(f"{what}: {len(cards)} cards, at most {MAX_LIST}")
    for card in cards:
        if not CARD_PATTERN.fullmatch(card):
            raise _FieldError(f"{what}: {card!r} is not a card code (e.g. QS, TH, JK)")
    return tuple(cards)


def _check_lists(missing: str, extra: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    if missing == "?" or extra == "?":
        if missing != extra:
            raise _FieldError("deck check: both lists must be ? (not checked) or neither")
        return (), (), False
    return _card_list(missing, "missing"), _card_list(extra, "extra"), True


def _fault_list(text: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    codes = tuple(_number(part, "fault code", 1, MAX_CODE) for part in text.split(","))
    if len(set(codes)) != len(codes):
        raise _FieldError(f"faults: duplicate code in {text!r}")
    return codes


def _arity(fields: list[str], count: int) -> None:
    if len(fields) != count:
        raise _FieldError(f"{fields[0]}: {len(fields) - 1} fields, expected {count - 1}")


def _parse_message(fields: list[str]) -> Message:
    verb = fields[0]
    match verb:
        case "STAT":
            _arity(fields, 6)
            state = STATE_WIRE.get(fields[1])
            if state is None:
                raise _FieldError(f"STAT: state {fields[1]!r} not IDLE, SHUF, READY or FAULT")
            door = DOOR_WIRE.get(fields[2])
            if door is None:
                raise _FieldError(f"STAT: door {fields[2]!r} not OPEN or CLSD")
            return Status(
                state,
                door,
                _number(fields[3], "cards"),
                _fault_list(fields[4]),
                _number(fields[5], "shuffle"),
            )
        case "SHST":
            _arity(fields, 3)
            return ShuffleStart(
                _number(fields[1], "shuffle", 1), _number(fields[2], "decks", 1, MAX_DECKS)
            )
        case "SHDN":
            _arity(fields, 5)
            missing, extra, checked = _check_lists(fields[3], fields[4])
            return ShuffleDone(
                _number(fields[1], "shuffle", 1),
                _number(fields[2], "cards"),
                missing,
                extra,
                checked,
            )
        case "DECK":
            _arity(fields, 4)
            missing, extra, checked = _check_lists(fields[2], fields[3])
            return DeckReport(_number(fields[1], "cards"), missing, extra, checked)
        case "DOOR":
            _arity(fields, 2)
            door = DOOR_WIRE.get(fields[1])
            if door is None:
                raise _FieldError(f"DOOR: {fields[1]!r} not OPEN or CLSD")
            return Door(door)
        case "FALT":
            _arity(fields, 3)
            if not DETAIL_PATTERN.fullmatch(fields[2]):
                raise _FieldError("FALT: detail longer than 64 characters")
            return Fault(_number(fields[1], "fault code", 1, MAX_CODE), fields[2])
        case "FCLR":
            _arity(fields, 2)
            return FaultClear(_number(fields[1], "fault code", 1, MAX_CODE))
        case "VERS":
            _arity(fields, 4)
            for name, text in zip(("model", "firmware", "serial"), fields[1:], strict=True):
                if not TOKEN_PATTERN.fullmatch(text):
                    raise _FieldError(f"VERS: {name} {text!r} is not 1-64 printable characters")
            return Version(fields[1], fields[2], fields[3])
        case "ACK":
            _arity(fields, 2)
            if not VERB_PATTERN.fullmatch(fields[1]):
                raise _FieldError(f"ACK: {fields[1]!r} is not a verb")
            return Ack(fields[1])
        case "NAK":
            _arity(fields, 3)
            if not (VERB_PATTERN.fullmatch(fields[1]) or fields[1] == "?"):
                raise _FieldError(f"NAK: {fields[1]!r} is not a verb or ?")
            if not REASON_PATTERN.fullmatch(fields[2]):
                raise _FieldError(f"NAK: reason {fields[2]!r} is not 1-8 capital letters")
            return Nak(fields[1], fields[2])
    raise _FieldError(f"unknown message verb {verb!r}")


def _parse_command(fields: list[str]) -> Command:
    verb = fields[0]
    match verb:
        case "SHUF":
            _arity(fields, 2)
            return StartShuffle(_number(fields[1], "decks", 1, MAX_DECKS))
        case "STAT":
            _arity(fields, 1)
            return QueryStatus()
        case "VERS":
            _arity(fields, 1)
            return QueryVersion()
        case "CLRF":
            if len(fields) == 1:
                return ClearFault()
            _arity(fields, 2)
            return ClearFault(_number(fields[1], "fault code", 1, MAX_CODE))
        case "DCHK":
            _arity(fields, 1)
            return RequestDeckCheck()
    raise _FieldError(f"unknown command verb {verb!r}")


# --- frames ------------------------------------------------------------------------------------


def _cap(raw: bytes | bytearray) -> bytes:
    return bytes(raw[:MAX_RAW])


def _checked(frame: bytes) -> bytes | DecodeError:
    """The payload of a ``STX payload ETX CC`` frame from the scanner, or its checksum error."""
    payload, check = frame[1:-3], frame[-2:]
    got, want = int(check, 16), crc8(payload)
    if got != want:
        return DecodeError(f"checksum mismatch: got {got:02X}, computed {want:02X}", _cap(frame))
    return payload


def _split(payload: bytes) -> list[str]:
    # Printable ASCII was checked by the scanner, so this cannot fail.
    return payload.decode("ascii").split(";")


class Decoder:
    """The host's side: shuffler bytes in, :data:`Message` values out (errors included).

    Frames split anywhere decode the same; garbage, bad checksums and bad fields become
    :class:`DecodeError` values (counted in :attr:`errors`) and decoding resumes at the next STX.
    """

    def __init__(self) -> None:
        self._frames = FrameScanner(FRAMING)
        self.errors = 0
        """Count of :class:`DecodeError` values produced so far."""

    def feed(self, data: bytes) -> list[Message]:
        out: list[Message] = []
        for scanned in self._frames.feed(data):
            item = scanned if isinstance(scanned, DecodeError) else _checked(scanned)
            if isinstance(item, DecodeError):
                out.append(item)
                continue
            try:
                out.append(_parse_message(_split(item)))
            except _FieldError as exc:
                out.append(DecodeError(str(exc), _cap(item)))
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out


class CommandDecoder:
    """The shuffler's side: host bytes in, :data:`Command` (or :class:`DecodeError`) out.

    ``DecodeError.raw`` of a frame that had a valid checksum but bad fields starts with the
    payload (no STX), so the simulator can NAK it by verb; framing errors start with STX.
    """

    def __init__(self) -> None:
        self._frames = FrameScanner(FRAMING)
        self.errors = 0

    def feed(self, data: bytes) -> list[Command | DecodeError]:
        out: list[Command | DecodeError] = []
        for scanned in self._frames.feed(data):
            item = scanned if isinstance(scanned, DecodeError) else _checked(scanned)
            if isinstance(item, DecodeError):
                out.append(item)
                continue
            try:
                out.append(_parse_command(_split(item)))
            except _FieldError as exc:
                out.append(DecodeError(str(exc), _cap(item)))
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out


# --- the vendor seam -----------------------------------------------------------------------------


class MessageDecoder(Protocol):
    """What a vendor codec's decoder must do: bytes in, reference :data:`Message` values out."""

    errors: int

    def feed(self, data: bytes) -> list[Message]: ...


@dataclass(frozen=True)
class Codec:
    """One shuffler wire protocol, mapped onto this module's message and command types.

    The driver and interpreter only ever see :data:`Message` and :data:`Command` values, so a
    vendor's protocol is one module that builds a ``Codec`` (a decoder factory and a command
    encoder) plus a registry entry; see ``docs/protocols/shuffler.md`` ("Other vendors").
    """

    name: str
    new_decoder: Callable[[], MessageDecoder]
    encode_command: Callable[[Command], bytes]


REFERENCE_CODEC: Final = Codec("tablectl", Decoder, encode_command)
"""This module as a :class:`Codec` (the driver's default)."""
