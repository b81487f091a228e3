"""The tablectl reference shuffler protocol, sans I/O (``docs/protocols/shuffler.md``).

The simulator speaks as the shuffler with this module too. Vendor protocols are closed; this one
is ours (vendor codecs map onto its types), ASCII for a readable sniff and safe on noisy RS-232::

    STX  payload  ETX  C C  CR LF
    0x02 "SHDN;12;416;-;-" 0x03 "1D" "\\r\\n"

* ``payload``: 1–:data:`MAX_PAYLOAD` printable bytes, ``;``-separated, a four-letter verb first;
  STX/ETX never occur inside, so a lost byte costs one frame.
* ``C C``: CRC-8 (poly 0x07, init 0x00, no reflection, no final XOR; "CRC-8/SMBUS", check 0xF4)
  in upper-case hex. XOR misses two flips in one column and swapped bytes; CRC-8 catches every
  1-, 2- and 3-bit error in a frame this short.
* ``CR LF`` is for people; decoders skip it, so a device may omit it.

Over USB bulk the same frames are a byte stream (a transfer may hold part of a frame or several),
so one decoder serves both transports. A bad frame is a :class:`DecodeError` value.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from tablectl.drivers import stx
from tablectl.drivers.codec import DecodeError, Version
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.stx import FieldError, FrameDecoder

__all__ = [
    "CARD_PATTERN",
    "DETAIL_PATTERN",
    "DOOR_WIRE",
    "FAULT_CLEARING",
    "FAULT_JAM",
    "FAULT_MEANINGS",
    "FRAMING",
    "MAX_CODE",
    "MAX_DECKS",
    "MAX_LIST",
    "MAX_NUMBER",
    "MAX_TEXT",
    "NAK_REASONS",
    "NUMBER_PATTERN",
    "REASON_PATTERN",
    "REFERENCE_CODEC",
    "STATE_WIRE",
    "TOKEN_PATTERN",
    "VERB_PATTERN",
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
    "encode_command",
    "encode_message",
    "frame",
]

MAX_NUMBER: Final = 9999
"""Counts and shuffle numbers are 1–4 decimal digits."""
MAX_DECKS: Final = 8
MAX_CODE: Final = 99
"""Fault codes are 1–99 (0 is never sent: "no fault" is an empty list)."""
MAX_LIST: Final = 150
"""Most cards in one missing/extra list (three lists' worth fits :data:`MAX_PAYLOAD`)."""
MAX_TEXT: Final = 64
"""Longest free-text field (fault detail, model, firmware, serial number)."""


CARD_PATTERN: Final = re.compile(r"[A2-9TJQK][SHDC]|JK[12]?")
"""Cards on the wire: contracts §4.1's codes only; vendor spellings belong in their codec."""

FAULT_JAM: Final = 1

FAULT_MEANINGS: Final[dict[int, str]] = {
    1: "card jam in the transport path",
    2: "elevator or mixing motor fault",
    3: "card reader (face recognition) fault",
    4: "input tray empty at start",
    5: "output shoe full or not removed",
    6: "sensor fault",
    7: "firmware or memory integrity error",
    8: "over-temperature",
}
"""Reference fault codes (``FALT``); vendor codecs map their own codes onto these where they can
and pass the rest through as 10–99."""

FAULT_CLEARING: Final[dict[int, str]] = {
    1: "open the door, remove the jammed cards, close the door, then the host sends CLRF",
    2: "host CLRF (the device re-homes the motor and sends FCLR, or FALT again)",
    3: "host CLRF; deck checks report ? until the reader works",
    4: "clears by itself when cards are loaded",
    5: "clears by itself when the output shoe is emptied or removed",
    6: "host CLRF after the device's self-test passes",
    7: "service only (power cycle, re-flash); CLRF is refused with NAK COND",
    8: "clears by itself when cool",
}

NAK_REASONS: Final[dict[str, str]] = {
    "BUSY": "shuffling; try again when READY or IDLE",
    "DOOR": "the door is open",
    "FAULT": "a latched fault blocks the command; clear it first",
    "COND": "the fault's condition is still present (e.g. jam not removed); cannot clear",
    "ARG": "a field is out of range",
    "VERB": "unknown command verb",
    "FRAME": "the frame's checksum or fields were bad (verb ? when unreadable)",
}
"""NAK reasons defined by the reference protocol; decoders accept any 1–8 letter token."""

ShufflerState = Literal["idle", "shuffling", "ready", "fault"]

STATE_WIRE: Final[dict[str, ShufflerState]] = {
    "IDLE": "idle",
    "SHUF": "shuffling",
    "READY": "ready",
    "FAULT": "fault",
}
_STATE_TOKEN: Final[dict[str, str]] = {v: k for k, v in STATE_WIRE.items()}
DOOR_WIRE: Final[dict[str, bool]] = {"OPEN": True, "CLSD": False}


# --- checksum and framing ------------------------------------------------------------------------


def frame(payload: bytes) -> bytes:
    """``STX payload ETX CRC CR LF`` (:func:`tablectl.drivers.stx.frame`)."""
    return stx.frame(payload, "shuffler")


# --- messages the shuffler sends -----------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``STAT;<state>;<door>;<cards>;<faults>;<shuffle>``: the reply to a status query.

    ``cards``: last counted (input tray when idle, the shuffle's when ready); ``faults`` ``-`` when
    none; ``shuffle``: last started (0 before the first; wraps 9999 → 1).
    """

    state: ShufflerState
    door_open: bool
    cards: int
    faults: tuple[int, ...]
    shuffle: int


@dataclass(frozen=True)
class ShuffleStart:
    """``SHST;<shuffle>;<decks>``: shuffle number ``shuffle`` started with ``decks`` decks."""

    shuffle: int
    decks: int


@dataclass(frozen=True)
class ShuffleDone:
    """``SHDN;<shuffle>;<cards>;<missing>;<extra>``: the shuffle finished, ``cards`` counted.

    ``checked`` False: no card faces read (both lists ``?``); else the deck check (``-`` when
    empty).
    """

    shuffle: int
    cards: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    checked: bool = True


@dataclass(frozen=True)
class DeckReport:
    """``DECK;<cards>;<missing>;<extra>``: the reply to a deck-check request (same list rules as
    :class:`ShuffleDone`)."""

    cards: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    checked: bool = True


@dataclass(frozen=True)
class Door:
    """``DOOR;OPEN`` / ``DOOR;CLSD``: the lid/door changed."""

    open: bool


@dataclass(frozen=True)
class Fault:
    """``FALT;<code>;<detail>``: fault ``code`` (see :data:`FAULT_MEANINGS`) became active."""

    code: int
    detail: str = ""


@dataclass(frozen=True)
class FaultClear:
    """``FCLR;<code>``: fault ``code`` is no longer active."""

    code: int


@dataclass(frozen=True)
class Ack:
    """``ACK;<verb>``: the command was accepted (SHUF, CLRF)."""

    verb: str


@dataclass(frozen=True)
class Nak:
    """``NAK;<verb>;<reason>``: refused (see :data:`NAK_REASONS`; verb ``?`` if unreadable)."""

    verb: str
    reason: str


Message = (
    Status
    | ShuffleStart
    | ShuffleDone
    | DeckReport
    | Door
    | Fault
    | FaultClear
    | Version
    | Ack
    | Nak
    | DecodeError
)


# --- commands the host sends ---------------------------------------------------------------------


@dataclass(frozen=True)
class StartShuffle:
    """``SHUF;<decks>``: shuffle the loaded cards, expecting ``decks`` decks (1–8)."""

    decks: int


@dataclass(frozen=True)
class QueryStatus:
    """``STAT``: reply with a :class:`Status`."""


@dataclass(frozen=True)
class QueryVersion:
    """``VERS``: reply with a :class:`Version`."""


@dataclass(frozen=True)
class ClearFault:
    """``CLRF`` (all clearable faults) or ``CLRF;<code>``."""

    code: int | None = None


@dataclass(frozen=True)
class RequestDeckCheck:
    """``DCHK``: count and check the loaded cards; reply with a :class:`DeckReport`."""


Command = StartShuffle | QueryStatus | QueryVersion | ClearFault | RequestDeckCheck


# --- fields --------------------------------------------------------------------------------------

NUMBER_PATTERN = re.compile(r"\d{1,4}")
VERB_PATTERN = re.compile(r"[A-Z]{4}")
REASON_PATTERN = re.compile(r"[A-Z]{1,8}")
TOKEN_PATTERN = re.compile(r"[\x21-\x3a\x3c-\x7e][\x20-\x3a\x3c-\x7e]{0,63}")
"""Model/firmware/serial: 1–64 printable characters, no ``;``, not starting with a space."""
DETAIL_PATTERN = re.compile(r"[\x20-\x3a\x3c-\x7e]{0,64}")

# --- encoders ------------------------------------------------------------------------------------


def _enc_number(value: int, what: str, low: int = 0, high: int = MAX_NUMBER) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EncodeError(f"{what} must be an integer {low}-{high}, not {value!r}")
    return str(value)


def _enc_cards(cards: tuple[str, ...], what: str) -> str:
    if len(cards) > MAX_LIST:
        raise EncodeError(f"{what}: at most {MAX_LIST} cards, not {len(cards)}")
    for card in cards:
        if not CARD_PATTERN.fullmatch(card):
            raise EncodeError(f"{what}: {card!r} is not a canonical card code")
    return ",".join(cards) or "-"


def _enc_check(missing: tuple[str, ...], extra: tuple[str, ...], checked: bool) -> str:
    if not checked:
        if missing or extra:
            raise EncodeError("an unchecked deck report carries no card lists")
        return "?;?"
    return f"{_enc_cards(missing, 'missing')};{_enc_cards(extra, 'extra')}"


def _enc_text(text: str, what: str, pattern: re.Pattern[str]) -> str:
    if not pattern.fullmatch(text):
        raise EncodeError(f"{what} must be printable ASCII without ';', at most 64: {text!r}")
    return text


def _payload(message: Message) -> str:
    match message:
        case Status(state, door_open, cards, faults, shuffle):
            if state not in _STATE_TOKEN:
                raise EncodeError(f"unknown shuffler state {state!r}")
            if len(set(faults)) != len(faults):
                raise EncodeError(f"duplicate fault codes {faults!r}")
            codes = ",".join(_enc_number(c, "fault code", 1, MAX_CODE) for c in faults) or "-"
            door = "OPEN" if door_open else "CLSD"
            return (
                f"STAT;{_STATE_TOKEN[state]};{door};{_enc_number(cards, 'cards')};{codes};"
                f"{_enc_number(shuffle, 'shuffle')}"
            )
        case ShuffleStart(shuffle, decks):
            number = _enc_number(shuffle, "shuffle", 1)
            return f"SHST;{number};{_enc_number(decks, 'decks', 1, MAX_DECKS)}"
        case ShuffleDone(shuffle, cards, missing, extra, checked):
            return (
                f"SHDN;{_enc_number(shuffle, 'shuffle', 1)};{_enc_number(cards, 'cards')};"
                f"{_enc_check(missing, extra, checked)}"
            )
        case DeckReport(cards, missing, extra, checked):
            return f"DECK;{_enc_number(cards, 'cards')};{_enc_check(missing, extra, checked)}"
        case Door(is_open):
            return "DOOR;OPEN" if is_open else "DOOR;CLSD"
        case Fault(code, detail):
            number = _enc_number(code, "fault code", 1, MAX_CODE)
            return f"FALT;{number};{_enc_text(detail, 'detail', DETAIL_PATTERN)}"
        case FaultClear(code):
            return f"FCLR;{_enc_number(code, 'fault code', 1, MAX_CODE)}"
        case Version(model, firmware, serial):
            fields = (
                _enc_text(model, "model", TOKEN_PATTERN),
                _enc_text(firmware, "firmware", TOKEN_PATTERN),
                _enc_text(serial, "serial", TOKEN_PATTERN),
            )
            return "VERS;" + ";".join(fields)
        case Ack(verb):
            if not VERB_PATTERN.fullmatch(verb):
                raise EncodeError(f"ACK verb must be four capital letters, not {verb!r}")
            return f"ACK;{verb}"
        case Nak(verb, reason):
            if not (VERB_PATTERN.fullmatch(verb) or verb == "?"):
                raise EncodeError(f"NAK verb must be four capital letters or ?, not {verb!r}")
            if not REASON_PATTERN.fullmatch(reason):
                raise EncodeError(f"NAK reason must be 1-8 capital letters, not {reason!r}")
            return f"NAK;{verb};{reason}"
        case DecodeError():
            raise EncodeError("a DecodeError has no wire form")
    raise TypeError(f"not a shuffler message: {message!r}")  # pragma: no cover - exhaustive


def encode_message(message: Message) -> bytes:
    """The frame the shuffler sends for ``message``; ``ValueError`` rather than a bad frame."""
    return frame(_payload(message).encode("ascii"))


def encode_command(command: Command) -> bytes:
    """The frame the host sends for ``command``; ``ValueError`` for a field out of range."""
    match command:
        case StartShuffle(decks):
            text = f"SHUF;{_enc_number(decks, 'decks', 1, MAX_DECKS)}"
        case QueryStatus():
            text = "STAT"
        case QueryVersion():
            text = "VERS"
        case ClearFault(code):
            text = (
                "CLRF" if code is None else f"CLRF;{_enc_number(code, 'fault code', 1, MAX_CODE)}"
            )
        case RequestDeckCheck():
            text = "DCHK"
        case _:  # pragma: no cover - exhaustive
            raise TypeError(f"not a shuffler command: {command!r}")
    return frame(text.encode("ascii"))


def command_verb(command: Command) -> str:
    """The four-letter verb of ``command`` (what ACK/NAK name)."""
    match command:
        case StartShuffle():
            return "SHUF"
        case QueryStatus():
            return "STAT"
        case QueryVersion():
            return "VERS"
        case ClearFault():
            return "CLRF"
        case RequestDeckCheck():
            return "DCHK"
    raise TypeError(f"not a shuffler command: {command!r}")  # pragma: no cover - exhaustive


FRAMING: Final = stx.FRAMING
"""The reference protocols' frame (:mod:`tablectl.drivers.stx`)."""


def _number(text: str, what: str, low: int = 0, high: int = MAX_NUMBER) -> int:
    if not NUMBER_PATTERN.fullmatch(text):
        raise FieldError(f"{what}: {text!r} is not 1-4 decimal digits")
    value = int(text)
    if not low <= value <= high:
        raise FieldError(f"{what}: {value} not in {low}-{high}")
    return value


def _card_list(text: str, what: str) -> tuple[str, ...]:
    if text == "-":
        return ()
    cards = text.split(",")
    if len(cards) > MAX_LIST:
        raise FieldError(f"{what}: {len(cards)} cards, at most {MAX_LIST}")
    for card in cards:
        if not CARD_PATTERN.fullmatch(card):
            raise FieldError(f"{what}: {card!r} is not a card code (e.g. QS, TH, JK)")
    return tuple(cards)


def _check_lists(missing: str, extra: str) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    if missing == "?" or extra == "?":
        if missing != extra:
            raise FieldError("deck check: both lists must be ? (not checked) or neither")
        return (), (), False
    return _card_list(missing, "missing"), _card_list(extra, "extra"), True


def _fault_list(text: str) -> tuple[int, ...]:
    if text == "-":
        return ()
    codes = tuple(_number(part, "fault code", 1, MAX_CODE) for part in text.split(","))
    if len(set(codes)) != len(codes):
        raise FieldError(f"faults: duplicate code in {text!r}")
    return codes


def _arity(fields: list[str], count: int) -> None:
    if len(fields) != count:
        raise FieldError(f"{fields[0]}: {len(fields) - 1} fields, expected {count - 1}")


def _parse_message(fields: list[str]) -> Message:
    verb = fields[0]
    match verb:
        case "STAT":
            _arity(fields, 6)
            state = STATE_WIRE.get(fields[1])
            if state is None:
                raise FieldError(f"STAT: state {fields[1]!r} not IDLE, SHUF, READY or FAULT")
            door = DOOR_WIRE.get(fields[2])
            if door is None:
                raise FieldError(f"STAT: door {fields[2]!r} not OPEN or CLSD")
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
                raise FieldError(f"DOOR: {fields[1]!r} not OPEN or CLSD")
            return Door(door)
        case "FALT":
            _arity(fields, 3)
            if not DETAIL_PATTERN.fullmatch(fields[2]):
                raise FieldError("FALT: detail longer than 64 characters")
            return Fault(_number(fields[1], "fault code", 1, MAX_CODE), fields[2])
        case "FCLR":
            _arity(fields, 2)
            return FaultClear(_number(fields[1], "fault code", 1, MAX_CODE))
        case "VERS":
            _arity(fields, 4)
            for name, text in zip(("model", "firmware", "serial"), fields[1:], strict=True):
                if not TOKEN_PATTERN.fullmatch(text):
                    raise FieldError(f"VERS: {name} {text!r} is not 1-64 printable characters")
            return Version(fields[1], fields[2], fields[3])
        case "ACK":
            _arity(fields, 2)
            if not VERB_PATTERN.fullmatch(fields[1]):
                raise FieldError(f"ACK: {fields[1]!r} is not a verb")
            return Ack(fields[1])
        case "NAK":
            _arity(fields, 3)
            if not (VERB_PATTERN.fullmatch(fields[1]) or fields[1] == "?"):
                raise FieldError(f"NAK: {fields[1]!r} is not a verb or ?")
            if not REASON_PATTERN.fullmatch(fields[2]):
                raise FieldError(f"NAK: reason {fields[2]!r} is not 1-8 capital letters")
            return Nak(fields[1], fields[2])
    raise FieldError(f"unknown message verb {verb!r}")


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
    raise FieldError(f"unknown command verb {verb!r}")


# --- frames ------------------------------------------------------------------------------------


class Decoder(FrameDecoder[Message]):
    """The host's side: shuffler bytes in, :data:`Message` values out (errors included)."""

    def __init__(self) -> None:
        super().__init__(_parse_message)


class CommandDecoder(FrameDecoder[Command]):
    """The shuffler's side: host bytes in, :data:`Command` (or :class:`DecodeError`) out."""

    def __init__(self) -> None:
        super().__init__(_parse_command)


# --- the vendor seam -----------------------------------------------------------------------------


class MessageDecoder(Protocol):
    """What a vendor codec's decoder must do: bytes in, reference :data:`Message` values out."""

    errors: int

    def feed(self, data: bytes) -> list[Message]: ...


@dataclass(frozen=True)
class Codec:
    """One shuffler wire protocol, mapped onto this module's message and command types.

    The driver sees only these types, so a vendor protocol is one module building a ``Codec`` plus a
    registry entry (``docs/protocols/shuffler.md`` §8).
    """

    name: str
    new_decoder: Callable[[], MessageDecoder]
    encode_command: Callable[[Command], bytes]


REFERENCE_CODEC: Final = Codec("tablectl", Decoder, encode_command)
"""This module as a :class:`Codec` (the driver's default)."""
