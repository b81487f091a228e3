"""Byte vectors, split frames, garbage, bad checksums, bad fields and round-trip properties for the
reference dice codec (STYLE practice 2; ``docs/protocols/dice.md``)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.drivers.dice.protocol import (
    NO_RESULT_WIRE,
    Ack,
    BettingClosed,
    BettingOpen,
    ClearFault,
    CloseBetting,
    Command,
    CommandDecoder,
    DecodeError,
    Decoder,
    Fault,
    FaultClear,
    Identify,
    Identity,
    Message,
    Nak,
    NoResult,
    QueryStatus,
    RepeatLast,
    Result,
    Rolling,
    RollNow,
    SelfTest,
    Status,
    TestReport,
    command_verb,
    encode_command,
    encode_message,
    frame,
)
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.stx import MAX_PAYLOAD, crc8


def wire(payload: bytes) -> bytes:
    """A frame with a correct checksum, written out independently of :func:`frame`."""
    return b"\x02" + payload + b"\x03" + f"{crc8(payload):02X}".encode() + b"\r\n"


def feed_in_pieces(data: bytes, *cuts: int) -> list[Message]:
    decoder = Decoder()
    out: list[Message] = []
    for start, end in pairwise([0, *cuts, len(data)]):
        out += decoder.feed(data[start:end])
    return out


def good(messages: list[Message]) -> list[Message]:
    return [m for m in messages if not isinstance(m, DecodeError)]


def errors(messages: list[Message]) -> list[DecodeError]:
    return [m for m in messages if isinstance(m, DecodeError)]


# --- the documented frames -----------------------------------------------------------------------


def test_crc_is_the_shuffler_s_crc8_smbus() -> None:
    assert crc8(b"123456789") == 0xF4


def test_documented_example_frames() -> None:
    # docs/protocols/dice.md, byte for byte.
    assert encode_message(Result(12, 57, (4, 6, 1), (), 98, "CAM1")) == (
        b"\x02RSLT;12;57;4,6,1;-;98;CAM1\x03B0\r\n"
    )
    assert encode_message(Status("ready", 12, 56)) == b"\x02STAT;READY;12;56;-\x032B\r\n"
    assert encode_message(NoResult(12, 57, "die_cocked", "die 2")) == (
        b"\x02NRES;12;57;COCKED;die 2\x0356\r\n"
    )
    assert encode_command(RollNow()) == b"\x02ROLL\x0355\r\n"
    assert encode_command(ClearFault(1)) == b"\x02CLRF;1\x0381\r\n"


# --- every message and command kind --------------------------------------------------------------

VECTORS: list[tuple[str, bytes, Message]] = [
    ("status-ready", b"STAT;READY;12;56;-", Status("ready", 12, 56)),
    ("status-power-up", b"STAT;READY;0;0;-", Status("ready", 0, 0)),
    ("status-closed", b"STAT;CLOSED;12;56;-", Status("closed", 12, 56)),
    ("status-rolling", b"STAT;ROLLING;12;57;-", Status("rolling", 12, 57)),
    ("status-result", b"STAT;RESULT;9999;9999;-", Status("result", 9999, 9999)),
    ("status-fault", b"STAT;FAULT;12;57;1,2,42", Status("fault", 12, 57, (1, 2, 42))),
    ("open", b"OPEN;12", BettingOpen(12)),
    ("closed-button", b"CLSD;12;BTN", BettingClosed(12, "button")),
    ("closed-host", b"CLSD;12;HOST", BettingClosed(12, "host")),
    ("closed-timer", b"CLSD;1;TIME", BettingClosed(1, "timer")),
    ("roll", b"ROLL;12;57", Rolling(12, 57)),
    ("result-sic-bo", b"RSLT;12;57;4,6,1;-;98;CAM1", Result(12, 57, (4, 6, 1), (), 98, "CAM1")),
    (
        "result-colours",
        b"RSLT;3;9;5,2;red,blue;100;-",
        Result(3, 9, (5, 2), ("red", "blue"), 100, None),
    ),
    ("result-one-die", b"RSLT;1;1;6;-;0;plate_2", Result(1, 1, (6,), (), 0, "plate_2")),
    (
        "result-six-dice",
        b"RSLT;7;8;1,2,3,4,5,6;-;50;-",
        Result(7, 8, (1, 2, 3, 4, 5, 6), (), 50, None),
    ),
    *[
        (f"no-result-{wire_code.lower()}", b"NRES;12;57;" + wire_code.encode() + b";die 2", msg)
        for wire_code, code in NO_RESULT_WIRE.items()
        for msg in [NoResult(12, 57, code, "die 2")]
    ],
    ("no-result-no-detail", b"NRES;12;58;NOWALL;", NoResult(12, 58, "no_wall_hit")),
    ("fault", b"FALT;1;shaker motion fault", Fault(1, "shaker motion fault")),
    ("fault-vendor", b"FALT;99;", Fault(99)),
    ("fault-clear", b"FCLR;2", FaultClear(2)),
    ("identity", b"IDNT;TDS-1;1.0.0;SIM00000;3;-", Identity("TDS-1", "1.0.0", "SIM00000", 3)),
    (
        "identity-colours",
        b"IDNT;Dice Duel 2;v2 b7;A 1;2;red,blue",
        Identity("Dice Duel 2", "v2 b7", "A 1", 2, ("red", "blue")),
    ),
    ("test-passed", b"TEST;-;shaker ok, reader ok", TestReport((), "shaker ok, reader ok")),
    ("test-failed", b"TEST;1,3;no image", TestReport((1, 3), "no image")),
    ("ack", b"ACK;CLOS", Ack("CLOS")),
    ("nak", b"NAK;ROLL;STATE", Nak("ROLL", "STATE")),
    ("nak-unreadable", b"NAK;?;FRAME", Nak("?", "FRAME")),
]
IDS = [name for name, _, _ in VECTORS]
PARAMS = [(wire(payload), msg) for _, payload, msg in VECTORS]

COMMANDS: list[tuple[bytes, Command]] = [
    (b"STAT", QueryStatus()),
    (b"IDNT", Identify()),
    (b"TEST", SelfTest()),
    (b"CLOS", CloseBetting()),
    (b"ROLL", RollNow()),
    (b"CLRF", ClearFault()),
    (b"CLRF;3", ClearFault(3)),
    (b"LAST", RepeatLast()),
]


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_decodes(raw: bytes, expected: Message) -> None:
    decoder = Decoder()
    assert decoder.feed(raw) == [expected]
    assert decoder.errors == 0


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_encodes_to_the_same_bytes(raw: bytes, expected: Message) -> None:
    assert encode_message(expected) == raw


@pytest.mark.parametrize(("payload", "command"), COMMANDS, ids=[p.decode() for p, _ in COMMANDS])
def test_command_vectors(payload: bytes, command: Command) -> None:
    assert encode_command(command) == wire(payload)
    assert CommandDecoder().feed(wire(payload)) == [command]
    assert command_verb(command) == payload[:4].decode()


def test_a_stream_of_every_vector_split_at_every_byte() -> None:
    stream = b"".join(raw for raw, _ in PARAMS)
    expected = [msg for _, msg in PARAMS]
    for cut in range(len(stream) + 1):
        assert feed_in_pieces(stream, cut) == expected
    assert feed_in_pieces(stream, *range(1, len(stream))) == expected  # one byte at a time


def test_crlf_between_frames_is_optional() -> None:
    bare = b"".join(raw.removesuffix(b"\r\n") for raw, _ in PARAMS[:5])
    assert Decoder().feed(bare) == [msg for _, msg in PARAMS[:5]]


# --- noise, broken frames, bad checksums ---------------------------------------------------------


def test_garbage_before_between_and_after_costs_one_error_per_run() -> None:
    a, b = encode_message(BettingOpen(3)), encode_message(Rolling(3, 9))
    out = Decoder().feed(b"\x00\xffnoise" + a + b"junk" + b + b"tail\r\n")
    assert good(out) == [BettingOpen(3), Rolling(3, 9)]
    assert [e.reason for e in errors(out)] == ["garbage between frames"] * 3


def test_bad_checksum_is_one_error_and_the_next_frame_decodes() -> None:
    bad = bytearray(encode_message(Result(1, 1, (4, 6, 1))))
    bad[-3] = ord("0") if bad[-3] != ord("0") else ord("1")
    decoder = Decoder()
    out = decoder.feed(bytes(bad) + encode_message(BettingOpen(2)))
    assert good(out) == [BettingOpen(2)]
    (error,) = errors(out)
    assert error.reason.startswith("checksum mismatch")
    assert decoder.errors == 1


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"\x02OPEN;1\x02OPEN;2\x03" + b"%02X" % crc8(b"OPEN;2"), "frame restarted"),
        (b"\x02OPEN;1\x03A\x02", "truncated in its checksum"),
        (b"\x02OPEN;1\x03a1", "not two upper-case hex digits"),
        (b"\x02OPEN;\x011\x03", "non-printable"),
        (b"\x02\x0300", "empty frame"),
        (b"\x02" + b"A" * (MAX_PAYLOAD + 1), "too long"),
    ],
)
def test_framing_errors(data: bytes, reason: str) -> None:
    out = Decoder().feed(data)
    assert reason in errors(out)[0].reason


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"RSLT;1;1;4,7,1;-;98;-", "not a die face 1-6"),
        (b"RSLT;1;1;4,0,1;-;98;-", "not a die face 1-6"),
        (b"RSLT;1;1;4,66,1;-;98;-", "not a die face 1-6"),
        (b"RSLT;1;1;;-;98;-", "not a die face 1-6"),
        (b"RSLT;1;1;1,2,3,4,5,6,1;-;98;-", "7 dice, at most 6"),
        (b"RSLT;1;1;4,6;red;98;-", "1 for 2 dice"),
        (b"RSLT;1;1;4,6;red,red;98;-", "the same colour twice"),
        (b"RSLT;1;1;4,6;Red,blue;98;-", "lower-case word"),
        (b"RSLT;1;1;4,6,1;-;101;-", "confidence: 101 not in 0-100"),
        (b"RSLT;1;1;4,6,1;-;98;cam 1", "reader"),
        (b"RSLT;0;1;4,6,1;-;98;-", "game: 0 not in 1-9999"),
        (b"RSLT;1;1;4,6,1;-;98", "5 fields, expected 6"),
        (b"NRES;1;1;LEANING;", "reason 'LEANING' is not one of"),
        (b"STAT;IDLE;1;1;-", "state 'IDLE' is not one of"),
        (b"STAT;READY;1;1;3,1", "distinct and ascending"),
        (b"STAT;READY;1;1;0", "fault code: 0 not in 1-99"),
        (b"STAT;READY;12345;1;-", "is not 1-4 decimal digits"),
        (b"STAT;READY;+1;1;-", "is not 1-4 decimal digits"),
        (b"CLSD;1;DEALER", "closer 'DEALER' is not one of"),
        (b"ROLL;1;0", "roll: 0 not in 1-9999"),
        (b"FALT;100;x", "fault code: 100 not in 1-99"),
        (b"IDNT;TDS-1;1.0;S1;7;-", "dice: 7 not in 1-6"),
        (b"IDNT;TDS-1;1.0;S1;2;red", "1 for 2 dice"),
        (b"IDNT; TDS-1;1.0;S1;2;-", "model"),
        (b"ACK;roll", "is not a verb"),
        (b"NAK;ROLL;state", "reason"),
        (b"SHAKE;1", "unknown message verb"),
    ],
)
def test_bad_fields_are_one_error_naming_the_problem(payload: bytes, reason: str) -> None:
    decoder = Decoder()
    out = decoder.feed(wire(payload) + encode_message(BettingOpen(5)))
    assert out[1:] == [BettingOpen(5)]
    assert isinstance(out[0], DecodeError)
    assert reason in out[0].reason
    assert out[0].raw == payload  # a bad field: raw is the payload, without STX


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"CLRF;0", "fault code: 0 not in 1-99"),
        (b"CLRF;1;2", "expected 0 or 1"),
        (b"STAT;1", "expected none"),
        (b"SHAK", "unknown command verb"),
        (b"OPEN;1", "unknown command verb"),  # a message, not a command
    ],
)
def test_bad_commands(payload: bytes, reason: str) -> None:
    (error,) = CommandDecoder().feed(wire(payload))
    assert isinstance(error, DecodeError)
    assert reason in error.reason


@pytest.mark.parametrize(
    "message",
    [
        Result(1, 1, (7,)),
        Result(1, 1, ()),
        Result(1, 1, (1, 2), ("red",)),
        Result(1, 1, (1, 2), ("red", "red")),
        Result(1, 1, (1,), (), 101),
        Result(1, 1, (1,), (), 99, "cam 1"),
        Result(0, 1, (1,)),
        Status("ready", 10000, 1),
        Status("ready", 1, 1, (2, 1)),
        Status("idle", 1, 1),  # type: ignore[arg-type]
        BettingClosed(1, "dealer"),  # type: ignore[arg-type]
        NoResult(1, 1, "leaning"),  # type: ignore[arg-type]
        NoResult(1, 1, "die_cocked", "a;b"),
        Fault(0),
        Identity("", "1", "2", 3),
        Identity("m", "1", "2", 2, ("red",)),
        Identity("m", "1", "2", 7),
        Result(1, 1, (1,), (), 0, "-"),  # "-" alone is the wire's "no reader id"
        TestReport((100,)),
        Ack("roll"),
        Nak("ROLL", "state"),
        Nak("??", "FRAME"),
        DecodeError("x", b"x"),
    ],
)
def test_nothing_invalid_is_ever_framed(message: Message) -> None:
    with pytest.raises(EncodeError):
        encode_message(message)


def test_encode_errors() -> None:
    with pytest.raises(EncodeError):
        encode_command(ClearFault(100))
    with pytest.raises(EncodeError):
        frame(b"")
    with pytest.raises(EncodeError):
        frame(b"A\x03")
    assert issubclass(EncodeError, ValueError)


def test_every_single_bit_flip_of_every_vector_is_caught() -> None:
    # CRC-8 catches every error burst of 8 bits or fewer while the frame's bounds hold; a flip
    # that makes a delimiter (a 'C' with bit 6 flipped is ETX) moves the bounds, and the rules of
    # the scanner and the field parsers catch those. Checked exhaustively, not sampled.
    for raw, _ in PARAMS:
        for index in range(len(raw) - 2):  # CR LF are separators, not part of the frame
            for bit in range(8):
                garbled = bytearray(raw)
                garbled[index] ^= 1 << bit
                out = Decoder().feed(bytes(garbled) + encode_message(BettingOpen(7)))
                assert good(out) == [BettingOpen(7)], (raw, index, bit, out)


# --- properties ----------------------------------------------------------------------------------

_numbers = st.integers(1, 9999)
_colors = st.sampled_from(["red", "blue", "green", "white", "black", "yellow", "gold"])
_texts = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, exclude_characters=";"),
    max_size=64,
)
_tokens = st.from_regex(r"[\x21-\x3a\x3c-\x7e][\x20-\x3a\x3c-\x7e]{0,63}", fullmatch=True)
_codes = st.lists(st.integers(1, 99), unique=True, max_size=6).map(lambda c: tuple(sorted(c)))
_verbs = st.from_regex(r"[A-Z]{4}", fullmatch=True)


@st.composite
def _results(draw: st.DrawFn) -> Result:
    dice = draw(st.integers(1, 6))
    faces = tuple(draw(st.lists(st.integers(1, 6), min_size=dice, max_size=dice)))
    colors = draw(st.just(()) | st.lists(_colors, min_size=dice, max_size=dice, unique=True))
    ids = st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True).filter(lambda r: r != "-")
    reader = draw(st.none() | ids)  # "-" alone is the wire's "no reader id" (refused to encode)
    return Result(
        draw(_numbers), draw(_numbers), faces, tuple(colors), draw(st.integers(0, 100)), reader
    )


@st.composite
def _identities(draw: st.DrawFn) -> Identity:
    dice = draw(st.integers(1, 6))
    colors = draw(st.just(()) | st.lists(_colors, min_size=dice, max_size=dice, unique=True))
    return Identity(draw(_tokens), draw(_tokens), draw(_tokens), dice, tuple(colors))


messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(
        Status,
        st.sampled_from(["ready", "closed", "rolling", "result", "fault"]),
        st.integers(0, 9999),
        st.integers(0, 9999),
        _codes,
    ),
    st.builds(BettingOpen, _numbers),
    st.builds(BettingClosed, _numbers, st.sampled_from(["button", "host", "timer"])),
    st.builds(Rolling, _numbers, _numbers),
    _results(),
    st.builds(NoResult, _numbers, _numbers, st.sampled_from(list(NO_RESULT_WIRE.values())), _texts),
    st.builds(Fault, st.integers(1, 99), _texts),
    st.builds(FaultClear, st.integers(1, 99)),
    _identities(),
    st.builds(TestReport, _codes, _texts),
    st.builds(Ack, _verbs),
    st.builds(Nak, _verbs | st.just("?"), st.from_regex(r"[A-Z]{1,8}", fullmatch=True)),
)
commands: st.SearchStrategy[Command] = st.one_of(
    st.sampled_from(
        [QueryStatus(), Identify(), SelfTest(), CloseBetting(), RollNow(), RepeatLast()]
    ),
    st.builds(ClearFault, st.none() | st.integers(1, 99)),
)


@given(messages)
def test_every_message_round_trips(message: Message) -> None:
    assert Decoder().feed(encode_message(message)) == [message]


@given(commands)
def test_every_command_round_trips(command: Command) -> None:
    assert CommandDecoder().feed(encode_command(command)) == [command]


@settings(max_examples=150)
@given(st.lists(messages, min_size=1, max_size=8), st.data())
def test_any_split_of_a_valid_stream_decodes_the_same(
    sent: list[Message], data: st.DataObject
) -> None:
    stream = b"".join(encode_message(m) for m in sent)
    cuts = sorted(data.draw(st.sets(st.integers(0, len(stream)), max_size=12), label="cuts"))
    assert feed_in_pieces(stream, *cuts) == sent


@settings(max_examples=150)
@given(st.lists(messages, min_size=2, max_size=6), st.data())
def test_a_corrupted_byte_costs_its_frame_only_and_never_yields_a_wrong_message(
    sent: list[Message], data: st.DataObject
) -> None:
    frames = [encode_message(m) for m in sent]
    victim = data.draw(st.integers(0, len(frames) - 1), label="frame")
    original = frames[victim]
    # Any byte of the payload or the checksum, replaced by any other byte that is no delimiter
    # (delimiters are the exhaustive bit-flip test's business).
    index = data.draw(st.integers(1, len(original) - 3), label="index")
    value = data.draw(
        st.integers(0, 255).filter(lambda b: b not in (original[index], 0x02, 0x03)), label="byte"
    )
    garbled = bytearray(original)
    garbled[index] = value
    frames[victim] = bytes(garbled)
    out = Decoder().feed(b"".join(frames))
    assert good(out) == [m for i, m in enumerate(sent) if i != victim]
    assert errors(out)


@settings(max_examples=200)
@given(st.binary(max_size=400), st.lists(messages, max_size=3))
def test_garbage_never_raises_and_never_hides_the_frames_after_it(
    noise: bytes, sent: list[Message]
) -> None:
    decoder = Decoder()
    out = decoder.feed(noise)
    assert all(isinstance(m, Message) for m in out)
    # Whatever the noise left half-open, the next STX starts afresh: the frames decode.
    tail = decoder.feed(b"".join(encode_message(m) for m in sent))
    assert good(tail) == sent
