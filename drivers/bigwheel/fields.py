"""The tablectl reference money-wheel sensor protocol's field grammar, sans I/O: the patterns of
its text fields and the parsers and encoders of single fields, shared by the message encoders
(:mod:`tablectl.drivers.bigwheel.messages`) and the decoders
(:mod:`tablectl.drivers.bigwheel.protocol`) (``docs/protocols/bigwheel.md``).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from tablectl.drivers.errors import EncodeError

if TYPE_CHECKING:
    from tablectl.drivers.bigwheel.messages import Direction

__all__ = [
    "CODE_PATTERN",
    "DETAIL_PATTERN",
    "REASON_PATTERN",
    "TOKEN_PATTERN",
    "TYPE_PATTERN",
    "FieldError",
    "check_arity",
    "check_divider",
    "encode_number",
    "encode_text",
    "parse_code",
    "parse_direction",
    "parse_number",
]

_NUMBER: Final = re.compile(r"\d{1,6}")
CODE_PATTERN: Final = re.compile(r"[A-Z]{3}")
TYPE_PATTERN: Final = re.compile(r"[A-Z]{3}")
REASON_PATTERN: Final = re.compile(r"[A-Z]{1,8}")
TOKEN_PATTERN: Final = re.compile(r"[\x21-\x23\x25-\x29\x2b\x2d-\x7e]{1,20}")
"""Model/firmware/serial: 1–20 printable characters without space, ``$``, ``*`` or ``,``."""
DETAIL_PATTERN: Final = re.compile(r"[\x20-\x23\x25-\x29\x2b\x2d-\x7e]{0,40}")
"""Fault detail: 0–40 printable characters without ``$``, ``*`` or ``,``."""

_DIR_WIRE: Final[dict[str, Direction]] = {"CW": "cw", "CCW": "ccw"}


class FieldError(ValueError):
    """A field failed validation; becomes a :class:`DecodeError` with this message."""


def parse_number(text: str, what: str, low: int, high: int) -> int:
    """``text`` as 1–6 decimal digits in ``low``–``high``, or :class:`FieldError`."""
    if not _NUMBER.fullmatch(text):
        raise FieldError(f"{what}: {text!r} is not 1-6 decimal digits")
    value = int(text)
    if not low <= value <= high:
        raise FieldError(f"{what}: {value} not in {low}-{high}")
    return value


def parse_direction(text: str) -> Direction:
    """``CW`` or ``CCW`` as a :data:`~tablectl.drivers.bigwheel.messages.Direction`."""
    value = _DIR_WIRE.get(text)
    if value is None:
        raise FieldError(f"direction {text!r} is not CW or CCW")
    return value


def check_divider(before: int, after: int) -> None:
    """:class:`FieldError` unless ``after`` is the segment after ``before`` (a divider pin)."""
    if after != before + 1 and not (after == 0 and before > 0):
        raise FieldError(f"divider {before}:{after}: b must be a + 1, or 0 after the last")


def parse_code(text: str) -> str:
    """A three-letter fault code, or :class:`FieldError`."""
    if not CODE_PATTERN.fullmatch(text):
        raise FieldError(f"fault code {text!r} is not three capital letters")
    return text


def check_arity(fields: list[str], count: int) -> None:
    """:class:`FieldError` unless the sentence has ``count`` fields, its type included."""
    if len(fields) != count:
        raise FieldError(f"{fields[0]}: {len(fields) - 1} fields, expected {count - 1}")


def encode_number(value: int, what: str, low: int, high: int) -> str:
    """An integer in ``low``–``high`` as decimal digits, or :class:`EncodeError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EncodeError(f"{what} must be an integer {low}-{high}, not {value!r}")
    return str(value)


def encode_text(text: str, what: str, pattern: re.Pattern[str]) -> str:
    """``text`` unchanged if it matches ``pattern``, else :class:`EncodeError`."""
    if not pattern.fullmatch(text):
        raise EncodeError(f"{what} {text!r} does not match {pattern.pattern}")
    return text
