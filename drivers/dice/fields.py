"""The field grammar of the tablectl reference dice protocol (``docs/protocols/dice.md``), sans
I/O: the limits, the fault and refusal codes, the wire tokens of states, closers and no-result
reasons, the text patterns, the frame, and the parsers of single fields. The message and command
types are :mod:`tablectl.drivers.dice.messages`; :mod:`tablectl.drivers.dice.protocol` re-exports
both as the codec's one face.

The frame and its checksum are the shuffler's (``STX payload ETX CC CR LF``, CRC-8/SMBUS): both
come from :mod:`tablectl.drivers.stx`, the reference protocols' one frame.
"""

from __future__ import annotations

import re
from typing import Final, Literal, TypeVar

from tablectl.drivers import stx
from tablectl.drivers.events import RollInvalidCode
from tablectl.drivers.stx import CRLF, ETX, GARBAGE, MAX_GARBAGE, MAX_PAYLOAD, MAX_RAW, STX, crc8

__all__ = [
    "CLOSED_BY_TOKEN",
    "CLOSED_BY_WIRE",
    "COLOR_PATTERN",
    "CRLF",
    "DETAIL_PATTERN",
    "ETX",
    "FAULT_LID",
    "FAULT_MEANINGS",
    "FAULT_MOTION",
    "FAULT_READER",
    "GARBAGE",
    "MAX_CODE",
    "MAX_CONFIDENCE",
    "MAX_DICE",
    "MAX_GARBAGE",
    "MAX_NUMBER",
    "MAX_PAYLOAD",
    "MAX_RAW",
    "NAK_REASONS",
    "NO_RESULT_TOKEN",
    "NO_RESULT_WIRE",
    "READER_PATTERN",
    "REASON_PATTERN",
    "STATE_TOKEN",
    "STATE_WIRE",
    "STX",
    "TOKEN_PATTERN",
    "VERB_PATTERN",
    "ClosedBy",
    "DiceState",
    "FieldError",
    "crc8",
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
    """``STX payload ETX CRC CR LF`` (:func:`tablectl.drivers.stx.frame`).

    Raises:
        EncodeError: an empty, over-long or non-printable payload (never sent half-formed).
    """
    return stx.frame(payload, "dice")


# --- parsing one field ----------------------------------------------------------------------------


class FieldError(ValueError):
    """A field failed validation; becomes a :class:`DecodeError` with this message."""


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
