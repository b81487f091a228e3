"""The controller's one bounded reader of broker messages (``controller/core/bounded_json.py``):
what watch, the dashboard and the archive's admission read a table's payloads with.

Each bound pinned by a case (size, UTF-8, depth counted before the parser, ``NaN``/``Infinity``,
integer digits, lone surrogates, an object), the depth scan against a plain reference scanner,
and properties: any JSON object within the caps reads back as itself, one level over the depth
cap is refused, and any bytes are an object or a :class:`MalformedError`, never another error.
What each caller makes of a refusal (the dashboard's counters, the archive's quarantine codes) is
tested with the caller: ``test_dashboard_hostile.py``,
``tests/controller/archive/test_admission.py``.
"""

from __future__ import annotations

import json
import time
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.controller.core import bounded_json
from tablectl.controller.core.bounded_json import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_INT_DIGITS,
    REASONS,
    nesting,
    read_object,
)
from tablectl.controller.core.errors import ControllerError, MalformedError

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _read(payload: bytes, **bounds: int) -> dict[str, Any] | MalformedError:
    """``payload``'s object, or the reader's refusal of it."""
    try:
        return read_object(payload, **bounds)
    except MalformedError as exc:
        return exc


def _reason(payload: bytes, **bounds: int) -> str | None:
    """The reason ``payload`` is refused for, ``None`` when it is read."""
    read = _read(payload, **bounds)
    if not isinstance(read, MalformedError):
        return None
    assert read.reason in REASONS
    return read.reason


def _reference_nesting(text: str) -> int:
    """The deepest bracket nesting outside strings, one character at a time (slow and plain)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _nested(levels: int, inner: Any) -> dict[str, Any]:
    """``inner`` in ``levels`` containers (objects and arrays by turns, an object outside)."""
    assert levels >= 1
    for level in range(levels - 1):
        inner = [inner] if level % 2 == 0 else {"k": inner}
    return {"k": inner}


# --- the bounds, one by one --------------------------------------------------------------------


def test_the_error_is_a_controller_error_with_a_stable_reason() -> None:
    with pytest.raises(MalformedError) as refused:
        read_object(b"[" * 40 + b"]" * 40)
    assert isinstance(refused.value, ControllerError)
    assert isinstance(refused.value, ValueError)
    assert (refused.value.reason, refused.value.detail) == (
        "too_deep",
        "JSON nested deeper than 32",
    )
    assert str(refused.value) == "too_deep (JSON nested deeper than 32)"


def test_the_size_cap() -> None:
    fits = b'{"a":"' + b"x" * (MAX_BYTES - 8) + b'"}'
    assert len(fits) == MAX_BYTES
    assert read_object(fits)
    with pytest.raises(MalformedError, match="too_large"):
        read_object(fits + b" ")
    with pytest.raises(MalformedError, match="too_large"):
        read_object(b"{}" + b" " * 70_000)
    assert _reason(b'{"a": 1}', max_bytes=7) == "too_large"
    ten_megabytes = b"{" * 10_000_000
    start = time.monotonic()
    assert _reason(ten_megabytes) == "too_large"
    assert time.monotonic() - start < 1  # never decoded nor scanned


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff\xfe",
        b'{"a": "\xff"}',
        b'{"a": "\xed\xa0\x80"}',  # a surrogate encoded as UTF-8: not UTF-8
        '{"seq": 1}'.encode("utf-16"),  # tables publish UTF-8 only
        '{"seq": 1}'.encode("utf-32"),
        b"not json",
        b"",
        b'{"a": 1',
        b'{"a": 1}}',
        b'{"a": "\\ud800"}',  # a lone high surrogate
        b'{"a": "\\udc00x"}',  # a lone low surrogate
        b'{"a": ["x", "\\udfff"]}',
        b'{"\\ud800": 1}',  # in a key
        b'{"a": "\\udc00\\ud800"}',  # a pair the wrong way round
    ],
)
def test_what_is_not_utf8_json_is_not_json(payload: bytes) -> None:
    assert _reason(payload) == "not_json"


def test_a_surrogate_pair_is_one_character_and_fine() -> None:
    assert read_object(b'{"d": "\\ud83c\\udfb2"}') == {"d": "\N{GAME DIE}"}
    assert read_object(b'{"\\ud83c\\udfb2": ["\\\\ud800"]}') == {"\N{GAME DIE}": ["\\ud800"]}


@pytest.mark.parametrize(
    "number",
    [
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b"1e999",
        b"-1.5e400",
        b"1" * (MAX_INT_DIGITS + 1),
        b"-" + b"9" * 40,
    ],
)
def test_nan_infinity_and_long_integers_are_bad_numbers(number: bytes) -> None:
    with pytest.raises(MalformedError, match="bad_number"):
        read_object(b'{"seq": ' + number + b"}")
    with pytest.raises(MalformedError, match="bad_number"):
        read_object(b'{"a": [1, {"b": ' + number + b"}]}")


def test_a_huge_integer_is_refused_before_its_conversion() -> None:
    payload = b'{"n": ' + b"7" * 60_000 + b"}"
    start = time.monotonic()
    assert _reason(payload) == "bad_number"
    assert time.monotonic() - start < 1  # never converted
    assert read_object(b'{"n": -' + b"9" * MAX_INT_DIGITS + b"}") == {
        "n": -(10**MAX_INT_DIGITS - 1)
    }
    # Floats of any length convert in linear time; only non-finite literals are refused.
    assert read_object(b'{"f": 0.' + b"1" * 1_000 + b"}")["f"] == pytest.approx(1 / 9)


@pytest.mark.parametrize(("payload", "kind"), [(b"[1]", "list"), (b'"x"', "str"), (b"7", "int")])
def test_json_that_is_no_object_is_not_an_object(payload: bytes, kind: str) -> None:
    with pytest.raises(MalformedError) as refused:
        read_object(payload)
    assert (refused.value.reason, refused.value.detail) == (
        "not_object",
        f"a JSON {kind}, not an object",
    )


def test_the_depth_cap() -> None:
    assert read_object(b'{"a":' * 10 + b"1" + b"}" * 10)
    assert _reason(b'{"a":' * 40 + b"1" + b"}" * 40) == "too_deep"
    assert _reason(b'{"a":' * 5000 + b"1" + b"}" * 5000) == "too_deep"
    assert read_object(b'{"a":[1,{"b":[]}]}', max_depth=4) == {"a": [1, {"b": []}]}
    assert _reason(b'{"a":[1,{"b":[]}]}', max_depth=3) == "too_deep"
    assert read_object(json.dumps(_nested(MAX_DEPTH, 1)).encode())
    assert _reason(json.dumps(_nested(MAX_DEPTH + 1, 1)).encode()) == "too_deep"
    # Brackets inside strings are not depth; an unclosed document is as deep as it got.
    assert read_object(json.dumps({"note": "[" * 1_000, "q": '\\"[[['}).encode())
    assert _reason(b'{"a":' + b"[" * 40) == "too_deep"
    assert _reason(b'{"a":' + b"[" * 20) == "not_json"


@pytest.mark.parametrize(
    "payload",
    [
        b"[" * 60_000,
        b"[" * 30_000 + b"]" * 30_000,
        b'{"a":' * 13_000 + b"1" + b"}" * 13_000,
        b"[" * 50_000 + b"NaN",
    ],
)
def test_a_deep_payload_never_reaches_the_parser(
    monkeypatch: pytest.MonkeyPatch, payload: bytes
) -> None:
    def parse(*_: Any, **__: Any) -> Any:
        raise AssertionError("parsed")

    monkeypatch.setattr(bounded_json, "json", SimpleNamespace(loads=parse))
    assert _reason(payload, max_bytes=len(payload)) == "too_deep"


def test_a_wide_payload_is_read_quickly() -> None:
    # 60 KB, 10,000 strings in as many arrays, and a surrogate pair: every string is looked at.
    payload = b'{"d":"\\ud83c\\udfb2","w":[' + b",".join([b'["x"]'] * 10_000) + b"]}"
    start = time.monotonic()
    assert len(read_object(payload)["w"]) == 10_000
    # 42 KB, 21,001 containers, 3 deep: the depth scan of every bracket.
    wide = b'{"w":[' + b",".join([b"[]"] * 21_000) + b"]}"
    assert len(read_object(wide)["w"]) == 21_000
    assert time.monotonic() - start < 2  # milliseconds, not a hang


# --- the depth scan ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "depth"),
    [
        ("", 0),
        ("1", 0),
        ("[]", 1),
        ('{"a":[1,{"b":[]}]}', 4),
        ("[[[", 3),  # never closed: still three deep where it stops
        ("]]][", 0),  # never below the top: what the parser would refuse first
        ('["[[[[", "\\"[[[", "\\\\", [[]]]', 3),  # brackets and escaped quotes in strings
        ('["unterminated [[[[', 1),
        ('"\\', 0),  # a string cut after its backslash
    ],
)
def test_nesting_counts_brackets_outside_strings(text: str, depth: int) -> None:
    assert nesting(text) == depth == _reference_nesting(text)


@given(st.text(alphabet='[]{}"\\ab,:', max_size=200))
@FUZZ
def test_nesting_is_the_reference_on_any_text(text: str) -> None:
    assert nesting(text) == _reference_nesting(text)


# --- properties --------------------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**MAX_INT_DIGITS - 1), max_value=10**MAX_INT_DIGITS - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=30)
    | st.sampled_from(["[[[", "\\ud800", '"', "\N{GAME DIE}", "\u0000", ""])
)
_KEYS = st.text(max_size=4) | st.sampled_from(["seq", "type", "\\ud800", "\N{GAME DIE}"])
_VALUES: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_KEYS, inner, max_size=5),
    max_leaves=25,
)
_OBJECTS = st.dictionaries(_KEYS, _VALUES, max_size=5)


def _depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


@given(_OBJECTS, st.booleans())
@FUZZ
def test_any_object_within_the_caps_reads_back_as_itself(value: Any, ascii_only: bool) -> None:
    payload = json.dumps(value, ensure_ascii=ascii_only).encode("utf-8")
    assert _depth(value) <= MAX_DEPTH
    assert len(payload) <= MAX_BYTES
    assert read_object(payload) == value
    # The tightest caps that still fit it.
    assert read_object(payload, max_bytes=len(payload), max_depth=_depth(value)) == value


@given(st.integers(1, 80), _SCALARS | _OBJECTS)
@FUZZ
def test_one_level_over_the_depth_cap_is_refused(levels: int, inner: Any) -> None:
    payload = json.dumps(_nested(levels, inner)).encode("utf-8")
    depth = _depth(_nested(levels, inner))
    assert read_object(payload, max_depth=depth)
    assert _reason(payload, max_depth=depth - 1) == "too_deep"
    assert _reason(payload) == (None if depth <= MAX_DEPTH else "too_deep")


# Large payloads are a drawn chunk repeated: hypothesis draws 64 KiB of bytes only slowly.
_REPEATED = st.builds(
    lambda chunk, times: chunk * times, st.binary(min_size=1, max_size=16), st.integers(1, 6_000)
)
_TOKENS = ["[", "]", "{", "}", '"', "\\", ":", ",", "1", "-", "e", ".", "a", " ", "\x00"]
_TOKENS += ["NaN", "Infinity", "\\ud800", "\\udc00", "\\u0041", '"k":', "9" * 20, "\N{GAME DIE}"]
_JSONISH = st.lists(st.sampled_from(_TOKENS), max_size=150).map(lambda t: "".join(t).encode())
"""Text of JSON's tokens in any order (and the ones a reader must refuse)."""


@given(st.binary(max_size=2_000) | _REPEATED | _JSONISH)
@FUZZ
def test_any_bytes_are_an_object_or_malformed_never_another_error(payload: bytes) -> None:
    read = _read(payload)  # any other exception fails the test
    if isinstance(read, MalformedError):
        assert read.reason in REASONS
        assert len(str(read)) < 200
    else:
        assert _depth(read) <= MAX_DEPTH
        json.dumps(read).encode("utf-8")  # no lone surrogate anywhere
