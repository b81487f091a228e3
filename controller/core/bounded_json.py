"""A broker message's JSON object, read bounded: the controller's one reader of what a table
published (pure).

Nothing on the broker is trusted (contracts §7): anyone who can publish there can send ten
megabytes, JSON nested a hundred thousand deep, an integer of 4,000 digits, ``NaN`` or a lone
UTF-16 surrogate. The watch view, the dashboard and the archive's admission all read a message
with :func:`read_object`, which checks, in the order that keeps each step cheap whatever arrives:

1. **size**: at most ``max_bytes`` bytes (``too_large``; a table's largest payload is a few kB);
2. **UTF-8**, strictly (``not_json``: ``json.loads`` would also take UTF-16 and UTF-32 from
   bytes, and tables publish UTF-8 only);
3. **depth**: brackets outside strings nest at most ``max_depth`` levels (``too_deep``), counted
   *before* parsing and without recursion, so the parser's own recursion is never what stops a
   deep document (a ``RecursionError`` at best; on a thread with a small stack, a crash);
4. **parse** (``not_json``), without the extensions ``json`` accepts (``NaN``, ``Infinity``:
   ``bad_number``) and without integers longer than :data:`MAX_INT_DIGITS` digits
   (``bad_number``: their conversion is quadratic);
5. **no lone UTF-16 surrogate** in a string or a key (``not_json``: it is no text, and
   PostgreSQL's ``jsonb`` refuses the whole batch that holds one); a surrogate *pair* is one
   character and fine;
6. **an object** (``not_object``).

A refusal is a :class:`~tablectl.controller.core.errors.MalformedError` with one of
:data:`REASONS`: stable words, counted by the dashboard (``tablectl_dashboard_malformed_total``)
and, mapped to its own codes, kept by the archive (``archive_quarantine.reason``).

The ``mqtt-dice`` driver has its own copy of steps 1-4 and 6
(:mod:`tablectl.drivers.dice_mqtt.bounded`): ``drivers`` may not import the controller.
"""

from __future__ import annotations

import itertools
import json
import math
import operator
import re
from typing import Any, Final, NoReturn

from tablectl.controller.core.errors import MalformedError

MAX_BYTES: Final = 65_536
"""Bytes a message may have by default: a table's largest payload (a card table's ``state``, a
poker outcome) is a few kB."""
MAX_DEPTH: Final = 32
"""Levels of nesting a message may have by default (a table's payloads have at most six)."""
MAX_INT_DIGITS: Final = 32
"""Digits of an integer literal at most (a ``seq`` has at most 19)."""
REASONS: Final = frozenset({"too_large", "not_json", "too_deep", "bad_number", "not_object"})
"""Every :attr:`MalformedError.reason` :func:`read_object` gives."""

# A JSON string, escapes included; an unterminated one runs to the end (then the parser refuses
# the document). Possessive, so no input makes it backtrack.
_STRING: Final = re.compile(r'"(?:[^"\\]|\\.)*+(?:"|\\?\Z)', re.DOTALL)
_NOT_BRACKET: Final = re.compile(r"[^\[\]{}]+")
# An opening bracket as 2, a closing one as 0: see nesting().
_STEPS: Final = str.maketrans({"[": "\x02", "{": "\x02", "]": "\x00", "}": "\x00"})
# The escape of a UTF-16 surrogate (or a backslash before ``ud800``): only then are strings read.
_SURROGATE: Final = re.compile(r"\\u[dD][89a-fA-F]")


def nesting(text: str) -> int:
    """How deep the brackets of ``text`` nest outside its strings: the deepest point of any
    prefix (so ``[[[`` is 3 although it never closes). Linear, and its loops run in C."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)).translate(_STEPS).encode("ascii")
    # With each opening bracket worth 2 and each closing one 0, the running sum after k brackets
    # is the depth there plus k.
    depths = map(operator.sub, itertools.accumulate(brackets), itertools.count(1))
    return max(0, max(depths, default=0))


def _integer(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise MalformedError(
            "bad_number", f"an integer of {digits} digits (at most {MAX_INT_DIGITS})"
        )
    return int(literal)


def _real(literal: str) -> float:
    number = float(literal)
    if not math.isfinite(number):  # 1e999: JSON's grammar allows it, no record holds it
        raise MalformedError("bad_number", f"{literal[:20]} is not a finite number")
    return number


def _no_constant(name: str) -> NoReturn:
    raise MalformedError("bad_number", f"{name} is not JSON")


def read_object(
    payload: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH
) -> dict[str, Any]:
    """``payload``'s JSON object, bounded (see the module doc for the checks and their order).

    Raises:
        MalformedError: ``too_large``, ``not_json`` (not UTF-8, not JSON, a lone surrogate),
            ``too_deep``, ``bad_number`` (``NaN``, ``Infinity``, ``1e999``, an integer over
            :data:`MAX_INT_DIGITS` digits) or ``not_object``; nothing else, whatever the bytes.
    """
    if len(payload) > max_bytes:
        raise MalformedError("too_large", f"{len(payload)} bytes, more than {max_bytes}")
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedError("not_json", "not UTF-8") from None
    # Fewer opening brackets than the cap cannot nest deeper: most messages skip the scan.
    if text.count("[") + text.count("{") > max_depth and nesting(text) > max_depth:
        raise MalformedError("too_deep", f"JSON nested deeper than {max_depth}")
    try:
        body = json.loads(text, parse_int=_integer, parse_float=_real, parse_constant=_no_constant)
    except RecursionError:  # never with the depth counted first (unless max_depth is absurd)
        raise MalformedError("too_deep", f"JSON nested deeper than {max_depth}") from None
    except MalformedError:  # bad_number, from the hooks
        raise
    except ValueError as exc:
        raise MalformedError("not_json", f"not JSON: {str(exc)[:80]}") from None
    if _SURROGATE.search(text) is not None:
        _refuse_lone_surrogates(body)
    if not isinstance(body, dict):
        raise MalformedError("not_object", f"a JSON {type(body).__name__}, not an object")
    return body


def _refuse_lone_surrogates(value: Any) -> None:
    """Every string and key of ``value`` encodes to UTF-8, or ``not_json``. Iterative: only
    containers are put on the stack (a 64 KiB payload holds at most ~32,000 of them)."""
    if isinstance(value, str):
        _utf8(value)
    stack: list[Any] = [value] if isinstance(value, dict | list) else []
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for name in node:
                _utf8(name)
            children: Any = node.values()
        else:
            children = node
        for child in children:
            if isinstance(child, dict | list):
                stack.append(child)
            elif isinstance(child, str):
                _utf8(child)


def _utf8(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise MalformedError("not_json", "a lone UTF-16 surrogate in a string") from None
