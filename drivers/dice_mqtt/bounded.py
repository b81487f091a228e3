"""A broker message's JSON object, bounded before it is parsed (pure).

Anything on a broker may come from anyone (contracts §7: MQTT-bound drivers bound every input), so
checks run in the order that keeps each cheap: size (``max_bytes``); strict UTF-8 (``json.loads``
would take UTF-16/32); bracket depth counted before parsing (the parser's recursion must never be
what stops a deep document: a ``RecursionError`` at best, a crash on a small stack); parse without
``NaN``/``Infinity`` or integers over :data:`MAX_INT_DIGITS` digits (quadratic conversion); an
object. Each refusal is a :class:`~tablectl.drivers.codec.DecodeError` with one of :data:`REASONS`.
The controller has its own reader, which ``drivers`` may not import (the layers).
"""

from __future__ import annotations

import itertools
import json
import operator
import re
from typing import Any, Final, NoReturn

from tablectl.drivers.codec import DecodeError

MAX_DEPTH: Final = 32
"""Deepest nesting of arrays and objects taken (a camera result has 3 levels)."""
MAX_INT_DIGITS: Final = 32
"""Longest integer literal taken, in digits (a die face has one; an ``err`` a few)."""
RAW_BYTES: Final = 80
""":attr:`DecodeError.raw` keeps at most this many bytes (a log line)."""

TOO_LONG: Final = "JSON too long"
NOT_UTF8: Final = "JSON not UTF-8"
TOO_DEEP: Final = "JSON nested too deep"
NOT_JSON: Final = "not JSON"
NOT_AN_OBJECT: Final = "JSON is not an object"
REASONS: Final = frozenset({TOO_LONG, NOT_UTF8, TOO_DEEP, NOT_JSON, NOT_AN_OBJECT})

# A JSON string, escapes included; an unterminated one runs to the end (then the parser refuses
# the document). Possessive, so no input makes it backtrack.
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
# An opening bracket as 2, a closing one as 0: see nesting().
_STEPS: Final = str.maketrans({"[": "\x02", "{": "\x02", "]": "\x00", "}": "\x00"})


def nesting(text: str) -> int:
    """How deep the brackets of ``text`` nest outside its strings: the deepest point of any
    prefix (so ``[[[`` is 3 although it never closes). Linear, and its loops run in C."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_STEPS).encode("ascii")
    # With each opening bracket worth 2 and each closing one 0, the running sum after k brackets
    # is the depth there plus k.
    depths = map(operator.sub, itertools.accumulate(brackets), itertools.count(1))
    return max(0, max(depths, default=0))


def _integer(literal: str) -> int:
    if len(literal.lstrip("-")) > MAX_INT_DIGITS:
        raise ValueError(f"integer of {len(literal)} digits")
    return int(literal)


def _no_constant(name: str) -> NoReturn:
    raise ValueError(f"{name} is not JSON")


def read_object(
    payload: bytes, *, max_bytes: int, max_depth: int = MAX_DEPTH
) -> dict[str, Any] | DecodeError:
    """``payload``'s JSON object, or a :class:`DecodeError` saying which bound it broke."""
    raw = payload[:RAW_BYTES]
    if len(payload) > max_bytes:
        return DecodeError(TOO_LONG, raw)
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        return DecodeError(NOT_UTF8, raw)
    if nesting(text) > max_depth:
        return DecodeError(TOO_DEEP, raw)
    try:
        body = json.loads(text, parse_int=_integer, parse_constant=_no_constant)
    except (ValueError, RecursionError):  # RecursionError: never, with the depth checked first
        return DecodeError(NOT_JSON, raw)
    if not isinstance(body, dict):
        return DecodeError(NOT_AN_OBJECT, raw)
    return body
