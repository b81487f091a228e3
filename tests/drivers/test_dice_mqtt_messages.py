"""The studio dice codec: vectors for every shape rule, and properties over default and random
shapes (both directions round-trip; no payload makes a parser raise)."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.messages import (
    MAX_PAYLOAD,
    CameraKeys,
    CameraShape,
    DetectRequest,
    DetectResult,
    Shake,
    ShakerShape,
    ShakerStatus,
    StateQuery,
    StudioCodec,
    StudioShape,
    format_duration,
)
from tablectl.drivers.errors import EncodeError

CODEC = StudioCodec()
SAYS = "studio/shaker/says"
LISTENS = "studio/shaker/listens"
RESULTS = "studio/camera/response"
REQUESTS = "studio/camera/command"


# --- vectors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (b"S0", ShakerStatus("S0", "idle")),
        (b"S1", ShakerStatus("S1", "shaking")),
        (b"S2", ShakerStatus("S2", "accepted")),
        (b"S90", ShakerStatus("S90", "motion_fault")),
        (b" S0\r\n", ShakerStatus("S0", "idle")),  # a device's line ending is not part of it
    ],
)
def test_default_status_words(payload: bytes, expected: ShakerStatus) -> None:
    assert CODEC.decode(SAYS, payload) == expected


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"S3", "unknown status word"),
        (b"", "unknown status word"),
        (b"s0", "unknown status word"),
        (b"S\xff", "status not UTF-8"),
        (b"S" * (MAX_PAYLOAD + 1), "status too long"),
    ],
)
def test_bad_status_words_are_values(payload: bytes, reason: str) -> None:
    decoded = CODEC.decode(SAYS, payload)
    assert isinstance(decoded, DecodeError)
    assert decoded.reason == reason
    assert len(decoded.raw) <= 80


def test_default_commands_are_the_studios_own_text() -> None:
    assert CODEC.encode(StateQuery()) == (LISTENS, b"/state")
    assert CODEC.encode(Shake(0, 9.59)) == (
        LISTENS,
        b"/cycle/?pattern=0&parameter1=10&parameter2=0&amplitude=0.41&duration=9.59",
    )
    topic, payload = CODEC.encode(DetectRequest("dice-1f-7"))
    assert topic == REQUESTS
    assert json.loads(payload) == {"command": "detect", "arg": {"round_id": "dice-1f-7"}}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(9.59, "9.59"), (6.0, "6"), (6.1, "6.1"), (0.01, "0.01"), (12.345, "12.35")],
)
def test_durations_go_to_the_hundredth(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(("pattern", "duration"), [(-1, 6.0), (1000, 6.0), (0, 0.0), (0, 3601.0)])
def test_shake_out_of_range_is_refused(pattern: int, duration: float) -> None:
    with pytest.raises(EncodeError):
        CODEC.encode(Shake(pattern, duration))


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            b'{"response":"result","arg":{"round_id":"r1","res":[4,6,1],"err":0}}',
            DetectResult("r1", (4, 6, 1), 0),
        ),
        (
            b'{"response":"result","arg":{"round_id":"r1","res":null,"err":-1}}',
            DetectResult("r1", None, -1),
        ),
        (
            b'{"response":"result","arg":{"round_id":"r1","res":[4,6,1]}}',
            DetectResult("r1", (4, 6, 1), 0),
        ),
        (b'{"response":"result","arg":{"round_id":17,"res":[9,0]}}', DetectResult("17", (9, 0), 0)),
        (b'{"response":"ack","arg":{}}', None),  # another response kind: not a result
    ],
)
def test_camera_results(payload: bytes, expected: DetectResult | None) -> None:
    assert CODEC.decode(RESULTS, payload) == expected


@pytest.mark.parametrize(
    "payload",
    [
        b'{"response":"result","arg":{"round_id":"r1","res":[4,6,',  # cut short
        b"[1,2,3]",
        b'{"response":"result","arg":[]}',
        b'{"response":"result","arg":{"res":[1,2,3]}}',  # no round id
        b'{"response":"result","arg":{"round_id":"","res":[1,2,3]}}',
        b'{"response":"result","arg":{"round_id":true,"res":[1,2,3]}}',
        b'{"response":"result","arg":{"round_id":"r","res":[1,true,3]}}',
        b'{"response":"result","arg":{"round_id":"r","res":[1,2.5,3]}}',
        b'{"response":"result","arg":{"round_id":"r","res":"4,6,1"}}',
        b'{"response":"result","arg":{"round_id":"r","res":[1,2,3],"err":"0"}}',
        b'{"response":"result","arg":{"round_id":"r","res":[1,2,3],"err":NaN}}',
        b"\xff\xfe{",
        b"[" * 60_000,  # nested deeper than the parser recurses
        b" " * (MAX_PAYLOAD + 1),
    ],
)
def test_malformed_results_are_values(payload: bytes) -> None:
    assert isinstance(CODEC.decode(RESULTS, payload), DecodeError)


def test_topics_not_in_the_shape_are_not_decoded() -> None:
    assert CODEC.decode("studio/other", b"S0") is None
    assert CODEC.decode(LISTENS, b"S0") is None  # a command topic, not the host's
    assert CODEC.decode_command(SAYS, b"/state") is None


@pytest.mark.parametrize(
    "payload",
    [b"/stat", b"/cycle/?pattern=0", b"/cycle/?pattern=x&parameter1=10", b"\xff", b""],
)
def test_unknown_shaker_commands_are_values(payload: bytes) -> None:
    assert isinstance(CODEC.decode_command(LISTENS, payload), DecodeError)


def test_unknown_camera_commands_are_values() -> None:
    for payload in (b'{"command":"timeout","arg":{}}', b'{"command":"detect"}', b"nope"):
        assert isinstance(CODEC.decode_command(REQUESTS, payload), DecodeError)


def test_another_studios_shapes() -> None:
    shape = StudioShape(
        ShakerShape(
            command_topic="ikg/sicbo/Billy-III/listens",
            status_topic="ikg/sicbo/Billy-III/says",
            status_words={
                "READY": "idle",
                "RUN": "shaking",
                "ACK": "accepted",
                "E1": "motion_fault",
            },
            state_query="?",
            shake_command="SHAKE {duration}s P{pattern}",
        ),
        CameraShape(
            command_topic="ikg/idp/SBO-001/command",
            result_topic="ikg/idp/SBO-001/response",
            keys=CameraKeys(command="cmd", detect="read", arg="a", round_id="id", dice="faces"),
            detect_args={"input": "rtmp://studio/live/r14"},
            errors={-7: "die_cocked"},
        ),
    )
    codec = StudioCodec(shape)
    assert codec.encode(Shake(3, 9.5)) == ("ikg/sicbo/Billy-III/listens", b"SHAKE 9.5s P3")
    assert codec.decode_command("ikg/sicbo/Billy-III/listens", b"SHAKE 9.5s P3") == Shake(3, 9.5)
    topic, payload = codec.encode(DetectRequest("d-1"))
    assert topic == "ikg/idp/SBO-001/command"
    assert json.loads(payload) == {
        "cmd": "read",
        "a": {"id": "d-1", "input": "rtmp://studio/live/r14"},
    }
    assert codec.decode("ikg/sicbo/Billy-III/says", b"RUN") == ShakerStatus("RUN", "shaking")
    answer = b'{"response":"result","a":{"id":"d-1","faces":[2,2,2],"err":0}}'
    assert codec.decode("ikg/idp/SBO-001/response", answer) == DetectResult("d-1", (2, 2, 2), 0)
    assert codec.status_word("motion_fault") == "E1"


@pytest.mark.parametrize(
    "template",
    [
        "/cycle/?duration={duration}&again={duration}",
        "/cycle/?p={speed}",
        "/cycle/?p={pattern:03d}",
        "{",
    ],
)
def test_templates_that_cannot_work_are_refused(template: str) -> None:
    with pytest.raises(EncodeError):
        ShakerShape(shake_command=template)


def test_shape_contradictions_are_refused() -> None:
    with pytest.raises(EncodeError):
        CameraShape(detect_args={"round_id": "x"})
    with pytest.raises(EncodeError):
        CameraShape(errors={0: "dice_unreadable"})
    with pytest.raises(EncodeError):
        CameraKeys(dice="err")
    with pytest.raises(EncodeError):
        ShakerShape(status_words={" S0": "idle"})
    with pytest.raises(EncodeError):
        StudioCodec(StudioShape(ShakerShape(status_words={"S0": "idle"}))).status_word("shaking")


# --- properties ---------------------------------------------------------------------------------

texts = st.text(min_size=1, max_size=40)
round_ids = st.text(min_size=1, max_size=60)
words = st.text(alphabet=string.ascii_letters + string.digits + "_-/", min_size=1, max_size=8)
keys = st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=10)
durations = st.integers(min_value=1, max_value=360_000).map(lambda n: n / 100)
results = st.builds(
    DetectResult,
    round_ids,
    st.none() | st.lists(st.integers(-(2**40), 2**40), max_size=8).map(tuple),
    st.integers(-(2**31), 2**31),
)
commands = st.one_of(
    st.just(StateQuery()),
    st.builds(Shake, st.integers(0, 999), durations),
    st.builds(DetectRequest, round_ids),
)


@st.composite
def shapes(draw: st.DrawFn) -> StudioShape:
    """Random but self-consistent studio shapes: four distinct topics, distinct words and keys."""
    topics = draw(st.lists(words, min_size=4, max_size=4, unique=True))
    status = draw(st.lists(words, min_size=4, max_size=4, unique=True))
    query = draw(words.filter(lambda w: "{" not in w))
    prefix = draw(st.sampled_from(["/cycle/?", "SHAKE ", "go:"]))
    names = draw(st.lists(keys, min_size=8, max_size=8, unique=True))
    shaker = ShakerShape(
        command_topic=topics[0],
        status_topic=topics[1],
        status_words=dict(
            zip(status, ("idle", "shaking", "accepted", "motion_fault"), strict=True)
        ),
        state_query=query,
        shake_command=f"{prefix}pattern={{pattern}}&duration={{duration}}",
    )
    camera = CameraShape(
        command_topic=topics[2],
        result_topic=topics[3],
        keys=CameraKeys(*names),
        errors={-1: "dice_unreadable", -9: "die_off_table"},
    )
    return StudioShape(shaker, camera)


@given(shapes(), commands)
def test_commands_round_trip(
    shape: StudioShape, command: StateQuery | Shake | DetectRequest
) -> None:
    # The query word has no "=" and "&", so it never reads as a shake, nor a shake as it.
    codec = StudioCodec(shape)
    assert codec.decode_command(*codec.encode(command)) == command


@given(shapes(), results)
def test_results_round_trip(shape: StudioShape, result: DetectResult) -> None:
    codec = StudioCodec(shape)
    assert codec.decode(*codec.encode_message(result)) == result


@given(shapes(), st.sampled_from(["idle", "shaking", "accepted", "motion_fault"]))
def test_status_words_round_trip(shape: StudioShape, state: str) -> None:
    codec = StudioCodec(shape)
    word = codec.status_word(state)  # type: ignore[arg-type]
    status = ShakerStatus(word, shape.shaker.status_words[word])
    assert codec.decode(*codec.encode_message(status)) == status


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
near_misses = st.fixed_dictionaries(
    {"response": st.sampled_from(["result", "ack", 1, None]), "arg": json_values}
) | st.fixed_dictionaries(
    {
        "response": st.just("result"),
        "arg": st.fixed_dictionaries(
            {"round_id": json_values, "res": json_values, "err": json_values}
        ),
    }
)


@given(shapes() | st.just(StudioShape()), st.binary(max_size=300), st.integers(0, 3))
def test_garbage_never_raises(shape: StudioShape, payload: bytes, which: int) -> None:
    codec = StudioCodec(shape)
    topic = [*shape.host_topics, *shape.service_topics][which]
    decoded = codec.decode(topic, payload)
    command = codec.decode_command(topic, payload)
    assert decoded is None or isinstance(decoded, ShakerStatus | DetectResult | DecodeError)
    assert command is None or isinstance(command, StateQuery | Shake | DetectRequest | DecodeError)


@given(st.one_of(near_misses, json_values))
def test_json_near_misses_never_raise(body: object) -> None:
    payload = json.dumps(body).encode("utf-8")
    decoded = CODEC.decode(RESULTS, payload)
    assert decoded is None or isinstance(decoded, DetectResult | DecodeError)
    if isinstance(decoded, DetectResult):
        assert decoded.dice is None or all(isinstance(d, int) for d in decoded.dice)
    assert isinstance(CODEC.decode_command(REQUESTS, payload), DetectRequest | DecodeError)
