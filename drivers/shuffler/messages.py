"""The tablectl reference shuffler protocol's vocabulary, sans I/O: its limits and fault codes, the
checksum and the frame, the messages the shuffler sends and the commands the host sends, and their
encoders (``docs/protocols/shuffler.md``). The decoders are in
:mod:`tablectl.drivers.shuffler.protocol`, which re-exports all of this as the codec's one face.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from tablectl.drivers import stx
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.stx import CRLF, ETX, GARBAGE, MAX_GARBAGE, MAX_PAYLOAD, MAX_RAW, STX, crc8

__all__ = [
    "CARD_PATTERN",
    "CRLF",
    "DETAIL_PATTERN",
    "DOOR_WIRE",
    "ETX",
    "FAULT_CLEARING",
    "FAULT_JAM",
    "FAULT_MEANINGS",
    "GARBAGE",
    "MAX_CODE",
    "MAX_DECKS",
    "MAX_GARBAGE",
    "MAX_LIST",
    "MAX_NUMBER",
    "MAX_PAYLOAD",
    "MAX_RAW",
    "MAX_TEXT",
    "NAK_REASONS",
    "NUMBER_PATTERN",
    "REASON_PATTERN",
    "STATE_WIRE",
    "STX",
    "TOKEN_PATTERN",
    "VERB_PATTERN",
    "Ack",
    "ClearFault",
    "Command",
    "DeckReport",
    "Door",
    "Fault",
    "FaultClear",
    "Message",
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
"""Cards on the wire: DESIGN §4.1 canonical codes only; vendor spellings belong in their codec."""

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
    """``STX payload ETX CRC CR LF`` (:func:`tablectl.drivers.stx.frame`).

    Raises:
        EncodeError: an empty, over-long or non-printable payload (never sent half-formed).
    """
    return stx.frame(payload, "shuffler")


# --- messages the shuffler sends -----------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``STAT;<state>;<door>;<cards>;<faults>;<shuffle>``: the reply to a status query.

    ``cards``: the cards the shuffler last counted (input tray when idle, the shuffle's count when
    ready). ``faults``: active fault codes (``-`` on the wire when none). ``shuffle``: the number
    of the last shuffle started (0 before the first; wraps 9999 → 1).
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

    ``checked`` is False when the shuffler reads no card faces (both lists ``?`` on the wire);
    otherwise ``missing``/``extra`` are its deck check (``-`` on the wire when empty).
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
class Version:
    """``VERS;<model>;<firmware>;<serial>``: the reply to a version query."""

    model: str
    firmware: str
    serial: str


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
    """The frame the shuffler sends for ``message`` (simulator and tests).

    Raises:
        ValueError: a field out of range (nothing invalid is ever framed).
    """
    return frame(_payload(message).encode("ascii"))


def encode_command(command: Command) -> bytes:
    """The frame the host sends for ``command``.

    Raises:
        ValueError: ``decks`` or a fault code out of range.
    """
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
