"""Bounded input of the ``mqtt-dice`` driver, without a broker (issue 26: "bounded input
everywhere a broker message lands").

The bounded reader (``drivers/dice_mqtt/bounded.py``) against a plain reference scanner, the
payloads that got through before (UTF-16 JSON, a result nested hundreds of levels deep), and
properties over any bytes and any JSON of random shapes and sizes: the driver's own message
handler turns each into events or a counted decode error, never an exception. The same payloads
through a real Mosquitto are in ``test_dice_mqtt_driver.py``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt import bounded
from tablectl.drivers.dice_mqtt.bounded import (
    MAX_DEPTH,
    MAX_INT_DIGITS,
    NOT_AN_OBJECT,
    NOT_JSON,
    NOT_UTF8,
    TOO_DEEP,
    TOO_LONG,
    nesting,
    read_object,
)
from tablectl.drivers.dice_mqtt.driver import DiceMqttDriver
from tablectl.drivers.dice_mqtt.messages import (
    MAX_PAYLOAD,
    MAX_ROUND_ID,
    DetectResult,
    ShakerStatus,
    StudioCodec,
)
from tablectl.drivers.events import DeviceEvent
from tablectl.drivers.transports.pubsub import BrokerEndpoint, TopicMessage

CODEC = StudioCodec()
SAYS = "studio/shaker/says"
RESULTS = "studio/camera/response"
GOOD: dict[str, Any] = {"response": "result", "arg": {"round_id": "r1", "res": [4, 6, 1], "err": 0}}

FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


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


def _nested(levels: int, inner: Any) -> Any:
    for level in range(levels):
        inner = [inner] if level % 2 else {"k": inner}
    return inner


# --- the reader -------------------------------------------------------------------------------


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


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b" " * (MAX_PAYLOAD + 1), TOO_LONG),
        (b"\xff", NOT_UTF8),
        # UTF-16 with a byte order mark: json.loads(bytes) would have read it.
        (json.dumps(GOOD).encode("utf-16"), NOT_UTF8),
        (json.dumps(GOOD).encode("utf-32"), NOT_UTF8),
        (b"[" * 60_000, TOO_DEEP),  # deeper than the parser recurses
        (b"[" * 30_000 + b"]" * 30_000, TOO_DEEP),
        # A valid result with a field nested 500 levels deep: the parser would have taken it.
        (json.dumps({**GOOD, "x": _nested(500, 1)}).encode(), TOO_DEEP),
        (json.dumps(_nested(MAX_DEPTH + 1, GOOD)).encode(), TOO_DEEP),
        (b'{"err": NaN}', NOT_JSON),
        (b'{"err": -Infinity}', NOT_JSON),
        (b'{"err": ' + b"9" * (MAX_INT_DIGITS + 1) + b"}", NOT_JSON),
        (b'{"err": ' + b"9" * 100_000 + b"}", TOO_LONG),
        (b"\xef\xbb\xbf{}", NOT_JSON),  # a UTF-8 byte order mark is no JSON
        (b'{"a": 1', NOT_JSON),
        (b"[1, 2, 3]", NOT_AN_OBJECT),
        (b'"S0"', NOT_AN_OBJECT),
    ],
)
def test_what_the_reader_refuses(payload: bytes, reason: str) -> None:
    refused = read_object(payload, max_bytes=MAX_PAYLOAD)
    assert isinstance(refused, DecodeError)
    assert refused.reason == reason
    assert len(refused.raw) <= bounded.RAW_BYTES


@pytest.mark.parametrize(
    "payload",
    [
        json.dumps(GOOD).encode("utf-16"),
        json.dumps({**GOOD, "x": _nested(500, 1)}).encode(),
    ],
    ids=["utf-16", "500-deep"],
)
def test_results_the_codec_took_before_are_refused(payload: bytes) -> None:
    assert isinstance(CODEC.decode(RESULTS, payload), DecodeError)


def test_what_the_reader_takes() -> None:
    # GOOD is 3 levels deep ({"arg": {"res": [...]}}).
    deepest = json.dumps(_nested(MAX_DEPTH - 3, GOOD)).encode()
    assert nesting(deepest.decode()) == MAX_DEPTH
    assert isinstance(read_object(deepest, max_bytes=MAX_PAYLOAD), dict)
    big = "9" * MAX_INT_DIGITS
    assert read_object(f'{{"err": -{big}}}'.encode(), max_bytes=100) == {"err": -int(big)}
    # A float literal of any size is a float; the fields that want whole numbers refuse it.
    assert read_object(b'{"e": 1e999}', max_bytes=100) == {"e": float("inf")}


# --- the codec: every field of the wrong type, and the bounds ----------------------------------

WRONG = [None, True, 1.5, "x", "", [], {}, [[1]], {"a": 1}, [4, "6", 1], -(10**20)]
"""Values of every JSON type (and a few near misses) for each field of a camera result."""
TAKEN: list[tuple[str, object, DetectResult]] = [
    # What the shape allows of another type than the usual: a null res is a failed read, an
    # empty list a well-formed read of no dice (the interpreter rejects its count), a number is a
    # round id in decimal, a large err an error the table does not map.
    ("res", None, DetectResult("r1", None, 0)),
    ("res", [], DetectResult("r1", (), 0)),
    ("round_id", -(10**20), DetectResult(str(-(10**20)), (4, 6, 1), 0)),
    ("round_id", "x", DetectResult("x", (4, 6, 1), 0)),
    ("err", -(10**20), DetectResult("r1", (4, 6, 1), -(10**20))),
]


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("field", ["round_id", "res", "err"])
def test_a_field_of_the_wrong_type_is_a_value(field: str, value: object) -> None:
    arg: dict[str, Any] = {"round_id": "r1", "res": [4, 6, 1], "err": 0, field: value}
    decoded = CODEC.decode(RESULTS, json.dumps({"response": "result", "arg": arg}).encode())
    taken = [r for f, v, r in TAKEN if f == field and v == value and type(v) is type(value)]
    if taken:
        assert decoded == taken[0]
    else:
        assert isinstance(decoded, DecodeError), decoded


@pytest.mark.parametrize("value", WRONG, ids=repr)
@pytest.mark.parametrize("field", ["response", "arg"])
def test_an_envelope_of_the_wrong_type_is_not_a_result(field: str, value: object) -> None:
    body: dict[str, Any] = {"response": "result", "arg": GOOD["arg"], field: value}
    decoded = CODEC.decode(RESULTS, json.dumps(body).encode())
    # Another response kind is ignored (not ours to judge); an arg that is no object is refused.
    assert decoded is None if field == "response" else isinstance(decoded, DecodeError)


def test_a_round_id_longer_than_the_bound_is_refused() -> None:
    arg = {"round_id": "r" * (MAX_ROUND_ID + 1), "res": [4, 6, 1]}
    decoded = CODEC.decode(RESULTS, json.dumps({"response": "result", "arg": arg}).encode())
    assert isinstance(decoded, DecodeError)
    assert decoded.reason == "result round id 'round_id' too long"


# --- properties: any input → events or a counted decode error ----------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats()
    | st.text(max_size=30)
    | st.sampled_from(["result", "S0", "S90", "r1", "dice-0-1", "\ud800", ""])
)
json_values: st.SearchStrategy[Any] = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=6)
        | st.dictionaries(
            st.sampled_from(["response", "arg", "round_id", "res", "err", "x"]), inner
        )
        | st.dictionaries(st.text(max_size=8), inner, max_size=6)
    ),
    max_leaves=60,
)
deep_values = st.builds(_nested, st.integers(0, 300), json_values)
results_somewhere = st.builds(
    lambda depth, res, err: {"response": "result", "arg": _nested(depth, {"res": res, "err": err})},
    st.integers(0, 40),
    json_values,
    json_values,
)


def _payload(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _driver() -> DiceMqttDriver:
    return DiceMqttDriver("dice", None, {}, table_broker=BrokerEndpoint("127.0.0.1", 1))


def _handled(driver: DiceMqttDriver, topic: str, payload: bytes) -> list[DeviceEvent]:
    """The driver's own handler of one broker message (what its loop calls)."""
    before = driver.counters.get("decode_errors", 0)
    decoded = driver.codec.decode(topic, payload)
    events = driver._receive(TopicMessage(topic, payload), now=1_000.0)
    assert all(isinstance(e, DeviceEvent) for e in events)
    errors = driver.counters.get("decode_errors", 0) - before
    # A decode error is counted once, and nothing else is.
    assert errors == (1 if isinstance(decoded, DecodeError) else 0)
    assert decoded is None or isinstance(decoded, ShakerStatus | DetectResult | DecodeError)
    return events


# Large payloads are a drawn chunk repeated: hypothesis draws 64 KiB of bytes only slowly.
repeated = st.builds(
    lambda chunk, times: chunk * times, st.binary(min_size=1, max_size=16), st.integers(1, 6_000)
)


@given(st.binary(max_size=2_000) | repeated)
@FUZZ
def test_any_bytes_are_events_or_a_decode_error(payload: bytes) -> None:
    driver = _driver()
    for topic in (SAYS, RESULTS, "studio/elsewhere"):
        _handled(driver, topic, payload)


@given(st.one_of(json_values, deep_values, results_somewhere))
@FUZZ
def test_any_json_is_events_or_a_decode_error(value: Any) -> None:
    driver = _driver()
    payload = _payload(value)
    for topic in (SAYS, RESULTS):
        _handled(driver, topic, payload)
    decoded = CODEC.decode(RESULTS, payload)
    if isinstance(decoded, DetectResult):
        assert nesting(payload.decode("utf-8", "replace")) <= MAX_DEPTH
        assert all(isinstance(d, int) and not isinstance(d, bool) for d in decoded.dice or ())


def test_a_handler_that_raises_is_counted_not_fatal(monkeypatch: pytest.MonkeyPatch) -> None:
    driver = _driver()

    def broken(message: object, now: float) -> list[DeviceEvent]:
        raise RuntimeError("a bug")

    monkeypatch.setattr(driver.interpreter, "feed", broken)
    assert driver._receive(TopicMessage(SAYS, b"S0"), now=5.0) == []
    assert driver.counters["decode_errors"] == 1
    assert driver.malformed.last == (SAYS, "RuntimeError while handling it")
