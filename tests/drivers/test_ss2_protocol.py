"""Byte vectors, garbage, split frames and round-trip properties for the SS2 codec (STYLE 2)."""

from __future__ import annotations

import random
from itertools import groupby, pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.drivers.ss2.protocol import (
    COMMAND_LETTERS,
    MAX_LINE,
    BallInPocket,
    BareNumber,
    ChiSquare,
    Command,
    CommandDecoder,
    DecodeError,
    Decoder,
    FaultReport,
    Message,
    Number,
    Reply,
    SensorPassed,
    Status,
    encode_command,
    encode_message,
)

REAL_CAPTURE = Path(__file__).resolve().parents[3] / "shared" / "captures" / "ss2-status-trace.log"
OUR_CAPTURE = Path(__file__).resolve().parents[1] / "data" / "captures" / "ss2-six-spins.trace"

GOOD = b"*X;2;011;34;0;154;0\r\n"
GOOD_MSG = Status(2, 11, 34, 0, 154, 0)
GOOD2 = b"*X;3;011;34;0;141;1\r\n"
GOOD2_MSG = Status(3, 11, 34, 0, 141, 1)


def feed_in_pieces(data: bytes, *cuts: int) -> tuple[list[Message], Decoder]:
    """Feed ``data`` to a fresh decoder cut at the given offsets."""
    decoder = Decoder()
    out: list[Message] = []
    bounds = [0, *cuts, len(data)]
    for start, end in pairwise(bounds):
        out += decoder.feed(data[start:end])
    return out, decoder


def feed_bytewise(data: bytes) -> list[Message]:
    decoder = Decoder()
    out: list[Message] = []
    for i in range(len(data)):
        out += decoder.feed(data[i : i + 1])
    return out


# --- every message kind ----------------------------------------------------------------------

VECTORS: list[tuple[str, bytes, Message]] = [
    ("status-idle", b"*X;1;011;34;0;157;0\r\n", Status(1, 11, 34, 0, 157, 0)),
    ("status-no-last-number", b"*X;1;101;  ;0;000;0\r\n", Status(1, 101, None, 0, 0, 0)),
    ("status-last-zero", b"*X;5;016; 0;0;149;0\r\n", Status(5, 16, 0, 0, 149, 0)),
    ("status-last-7", b"*X;2;012; 7;0;137;1\r\n", Status(2, 12, 7, 0, 137, 1)),
    ("status-last-00", b"*X;5;200;00;0;150;1\r\n", Status(5, 200, "00", 0, 150, 1)),
    ("status-warn-1", b"*X;4;013;16;1;140;1\r\n", Status(4, 13, 16, 1, 140, 1)),
    ("status-warn-2", b"*X;3;013;16;2;140;1\r\n", Status(3, 13, 16, 2, 140, 1)),
    ("status-warn-8", b"*X;3;013;16;8;140;1\r\n", Status(3, 13, 16, 8, 140, 1)),
    ("status-warn-A", b"*X;3;102;17;A;160;1\r\n", Status(3, 102, 17, 10, 160, 1)),
    ("status-warn-F", b"*X;6;256;36;F;999;1\r\n", Status(6, 256, 36, 15, 999, 1)),
    ("status-pocket-38", b"*X;5;001;38;0;175;0\r\n", Status(5, 1, 38, 0, 175, 0)),
    ("bare-0", b" 0\r\n", BareNumber(0)),
    ("bare-7", b" 7\r\n", BareNumber(7)),
    ("bare-27", b"27\r\n", BareNumber(27)),
    ("bare-36", b"36\r\n", BareNumber(36)),
    ("bare-00", b"00\r\n", BareNumber("00")),
    ("reply-power-ok", b"*P OK\r\n", Reply("P", "OK")),
    ("reply-restart-ok", b"*R OK\r\n", Reply("R", "OK")),
    ("reply-identify", b"*K CAM\r\n", Reply("K", "CAM")),
    ("reply-version", b"*V 2.52 SS2 Mercury\r\n", Reply("V", "2.52 SS2 Mercury")),
    ("reply-operating-mode", b"*o 1159\r\n", Reply("o", "1159")),
    ("reply-busy", b"*w BUSY\r\n", Reply("w", "BUSY")),
    ("reply-letter-only", b"*R\r\n", Reply("R", "")),
    ("fault-0", b"*F 0\r\n", FaultReport(0)),
    ("fault-23", b"*F 23\r\n", FaultReport(23)),
    ("fault-100", b"*F 100\r\n", FaultReport(100)),
    ("chi-square", b"*w 12.34 56.7\r\n", ChiSquare(12.34, 56.7)),
    ("sensor-0", b"bs 0\r\n", SensorPassed(0)),
    ("sensor-2", b"bs 2\r\n", SensorPassed(2)),
    ("pocket-17", b"bn 17\r\n", BallInPocket(17)),
    ("pocket-5", b"bn  5\r\n", BallInPocket(5)),
    ("pocket-00", b"bn 00\r\n", BallInPocket("00")),
]
VECTOR_IDS = [name for name, _, _ in VECTORS]
VECTOR_PARAMS = [(raw, msg) for _, raw, msg in VECTORS]


@pytest.mark.parametrize(("raw", "expected"), VECTOR_PARAMS, ids=VECTOR_IDS)
def test_vector_decodes(raw: bytes, expected: Message) -> None:
    decoder = Decoder()
    assert decoder.feed(raw) == [expected]
    assert decoder.errors == 0


@pytest.mark.parametrize(("raw", "expected"), VECTOR_PARAMS, ids=VECTOR_IDS)
def test_vector_split_at_every_byte_boundary(raw: bytes, expected: Message) -> None:
    for cut in range(len(raw) + 1):
        out, decoder = feed_in_pieces(raw, cut)
        assert out == [expected], f"cut at {cut}"
        assert decoder.errors == 0


@pytest.mark.parametrize(("raw", "expected"), VECTOR_PARAMS, ids=VECTOR_IDS)
def test_vector_one_byte_at_a_time(raw: bytes, expected: Message) -> None:
    assert feed_bytewise(raw) == [expected]


@pytest.mark.parametrize(("raw", "expected"), VECTOR_PARAMS, ids=VECTOR_IDS)
def test_vector_encodes_to_the_same_bytes(raw: bytes, expected: Message) -> None:
    assert encode_message(expected) == raw


def test_all_vectors_back_to_back_split_everywhere() -> None:
    stream = b"".join(raw for _, raw, _ in VECTORS)
    expected = [msg for _, _, msg in VECTORS]
    for cut in range(len(stream) + 1):
        assert feed_in_pieces(stream, cut)[0] == expected, f"cut at {cut}"
    assert feed_bytewise(stream) == expected


@pytest.mark.parametrize("digit", "ABCDEFabcdef")
def test_status_warning_hex_digits(digit: str) -> None:
    line = f"*X;3;102;17;{digit};160;1\r\n".encode()
    assert Decoder().feed(line) == [Status(3, 102, 17, int(digit, 16), 160, 1)]


# --- terminators -----------------------------------------------------------------------------

TERMINATORS = [
    ("cr", b"\r"),
    ("lf", b"\n"),
    ("crlf", b"\r\n"),
    ("lfcr", b"\n\r"),
    ("crcr", b"\r\r"),
]


@pytest.mark.parametrize("terminator", [t for _, t in TERMINATORS], ids=[n for n, _ in TERMINATORS])
def test_terminators(terminator: bytes) -> None:
    lines = [raw.removesuffix(b"\r\n") for _, raw, _ in VECTORS]
    stream = b"".join(line + terminator for line in lines)
    expected = [msg for _, _, msg in VECTORS]
    decoder = Decoder()
    assert decoder.feed(stream) == expected
    assert decoder.errors == 0
    assert feed_bytewise(stream) == expected


def test_mixed_terminators_and_blank_lines() -> None:
    stream = b"\r\n\r\n*P OK\r27\n\n\r*X;1;011;34;0;157;0\r\n\nbs 1\r"
    assert Decoder().feed(stream) == [
        Reply("P", "OK"),
        BareNumber(27),
        Status(1, 11, 34, 0, 157, 0),
        SensorPassed(1),
    ]


def test_line_without_terminator_is_held_until_one_arrives() -> None:
    decoder = Decoder()
    assert decoder.feed(b"*X;2;011;34;0;154;0") == []
    assert decoder.feed(b"\r") == [GOOD_MSG]
    assert decoder.feed(b"\n") == []


# --- garbage and resynchronisation -------------------------------------------------------------

RANDOM_GARBAGE = bytes(random.Random(7).randrange(256) for _ in range(48))

GARBAGE = [
    ("random-binary", RANDOM_GARBAGE),
    ("nuls", b"\x00" * 8),
    ("ff", b"\xff" * 8),
    ("lone-star", b"*"),
    ("text", b"hello wheel"),
    ("truncated-status", b"*X;1;01"),
    ("bare-number-lost-terminator", b"27"),
    ("high-ascii-packet", b"*P \xe9\x80"),
]
GARBAGE_IDS = [name for name, _ in GARBAGE]
GARBAGE_BYTES = [junk for _, junk in GARBAGE]


def assert_errors_then(out: list[Message], decoder: Decoder, *good: Message) -> None:
    """``out`` is one or more DecodeErrors (each with a reason) followed by exactly ``good``."""
    n = len(good)
    assert out[-n:] == list(good)
    errors = out[:-n]
    assert errors
    assert all(isinstance(m, DecodeError) and m.reason for m in errors)
    assert decoder.errors == len(errors)


@pytest.mark.parametrize("junk", GARBAGE_BYTES, ids=GARBAGE_IDS)
def test_garbage_before_a_frame(junk: bytes) -> None:
    out, decoder = feed_in_pieces(junk + GOOD)
    assert_errors_then(out, decoder, GOOD_MSG)


@pytest.mark.parametrize("junk", GARBAGE_BYTES, ids=GARBAGE_IDS)
def test_garbage_between_frames(junk: bytes) -> None:
    out, decoder = feed_in_pieces(GOOD + junk + GOOD2)
    assert out[0] == GOOD_MSG
    assert_errors_then(out[1:], decoder, GOOD2_MSG)


@pytest.mark.parametrize(
    "junk",
    # "27" on a line of its own is a valid bare number, not garbage.
    [junk for junk in GARBAGE_BYTES if junk != b"27"],
    ids=[name for name in GARBAGE_IDS if name != "bare-number-lost-terminator"],
)
def test_garbage_after_a_frame_then_terminator(junk: bytes) -> None:
    decoder = Decoder()
    assert decoder.feed(GOOD + junk) == [GOOD_MSG]
    out = decoder.feed(b"\r\n" + b" 7\r\n")
    assert_errors_then(out, decoder, BareNumber(7))


@pytest.mark.parametrize("junk", GARBAGE_BYTES, ids=GARBAGE_IDS)
def test_garbage_resync_is_the_same_bytewise(junk: bytes) -> None:
    stream = junk + GOOD + junk + b"\r\n" + GOOD2
    assert feed_bytewise(stream) == Decoder().feed(stream)


def test_nul_garbage_exact_error() -> None:
    decoder = Decoder()
    assert decoder.feed(b"\x00\x00\x00" + GOOD) == [
        DecodeError("packet start inside a line", b"\x00\x00\x00"),
        GOOD_MSG,
    ]
    assert decoder.errors == 1


def test_lone_star_line() -> None:
    decoder = Decoder()
    assert decoder.feed(b"*\r\n" + GOOD) == [
        DecodeError("packet: not printable ASCII or no command letter", b"*"),
        GOOD_MSG,
    ]
    assert decoder.errors == 1


def test_two_packets_run_together() -> None:
    decoder = Decoder()
    stream = GOOD.removesuffix(b"\r\n") + GOOD2
    assert decoder.feed(stream) == [
        DecodeError("packet start inside a line", GOOD.removesuffix(b"\r\n")),
        GOOD2_MSG,
    ]
    assert decoder.errors == 1


def test_status_runs_into_bare_number() -> None:
    decoder = Decoder()
    stream = b"*X;4;011;34;0;140;127\r\n" + GOOD
    assert decoder.feed(stream) == [
        DecodeError("status: malformed fields", b"*X;4;011;34;0;140;127"),
        GOOD_MSG,
    ]
    assert decoder.errors == 1


def test_repeated_characters_after_a_frame() -> None:
    # A decoder in the wild notes the device can repeat characters after the first frame.
    decoder = Decoder()
    assert decoder.feed(b"*P OK\r\nKK\r\n" + GOOD) == [
        Reply("P", "OK"),
        DecodeError("unrecognised line", b"KK"),
        GOOD_MSG,
    ]


# --- bad fields -------------------------------------------------------------------------------

MALFORMED = "status: malformed fields"
NO_LETTER = "packet: not printable ASCII or no command letter"

BAD_LINES = [
    ("state-0", b"*X;0;011;34;0;157;0", MALFORMED),
    ("state-7", b"*X;7;011;34;0;157;0", MALFORMED),
    ("state-9", b"*X;9;011;34;0;157;0", MALFORMED),
    ("spin-257", b"*X;1;257;34;0;157;0", "status: spin number 257 out of range"),
    ("spin-999", b"*X;1;999;34;0;157;0", "status: spin number 999 out of range"),
    ("spin-1a3", b"*X;1;1a3;34;0;157;0", MALFORMED),
    ("spin-2-digits", b"*X;1;11;34;0;157;0", MALFORMED),
    ("warn-G", b"*X;1;011;34;G;157;0", MALFORMED),
    ("warn-2-digits", b"*X;1;011;34;10;157;0", MALFORMED),
    ("speed-12", b"*X;1;011;34;0;12;0", MALFORMED),
    ("speed-1234", b"*X;1;011;34;0;1234;0", MALFORMED),
    ("dir-2", b"*X;1;011;34;0;157;2", MALFORMED),
    ("win-99", b"*X;5;011;99;0;157;0", "status: bad winning number b'99'"),
    ("win-39", b"*X;5;011;39;0;157;0", "status: bad winning number b'39'"),
    ("win-x5", b"*X;5;011;x5;0;157;0", MALFORMED),
    ("win-5-space", b"*X;5;011;5 ;0;157;0", MALFORMED),
    ("extra-field", b"*X;1;011;34;0;157;0;1", MALFORMED),
    ("missing-field", b"*X;1;011;34;0;157", MALFORMED),
    ("spaces-for-semicolons", b"*X 1 011 34 0 157 0", MALFORMED),
    ("status-bare-X", b"*X", MALFORMED),
    ("lowercase-x", b"*x;1;011;34;0;157;0", NO_LETTER),
    ("no-letter", b"*1 OK", NO_LETTER),
    ("control-char-in-reply", b"*P \x01K", NO_LETTER),
    ("bare-99", b"99", "unrecognised line"),
    ("bare-x5", b"x5", "unrecognised line"),
    ("bare-two-spaces", b"  ", "unrecognised line"),
    ("bare-three-digits", b"123", "unrecognised line"),
    ("sensor-3", b"bs 3", "unrecognised line"),
    ("pocket-99", b"bn 99", "sensor stream: bad pocket"),
    ("pocket-x5", b"bn x5", "unrecognised line"),
]


@pytest.mark.parametrize(
    ("line", "reason"),
    [(line, reason) for _, line, reason in BAD_LINES],
    ids=[name for name, _, _ in BAD_LINES],
)
def test_bad_line_is_a_decode_error_then_resync(line: bytes, reason: str) -> None:
    decoder = Decoder()
    assert decoder.feed(line + b"\r\n") == [DecodeError(reason, line)]
    assert decoder.errors == 1
    assert decoder.feed(GOOD) == [GOOD_MSG]
    assert decoder.errors == 1


def test_error_counter_counts_every_bad_line() -> None:
    decoder = Decoder()
    stream = b"".join(line + b"\r\n" + GOOD for _, line, _ in BAD_LINES)
    out = decoder.feed(stream)
    assert decoder.errors == len(BAD_LINES)
    assert out[1::2] == [GOOD_MSG] * len(BAD_LINES)
    assert [m.reason for m in out[::2] if isinstance(m, DecodeError)] == [
        reason for _, _, reason in BAD_LINES
    ]


# --- overlong lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "length", [MAX_LINE + 1, MAX_LINE + 2, 2 * MAX_LINE, 1000], ids=lambda n: f"len-{n}"
)
@pytest.mark.parametrize("start", [b"*V ", b"\xff\xfe", b"bs "], ids=["packet", "binary", "sensor"])
def test_overlong_line_is_one_error(start: bytes, length: int) -> None:
    line = (start + b"x" * length)[:length]
    stream = line + b"\r\n" + GOOD
    decoder = Decoder()
    assert decoder.feed(stream) == [DecodeError("line too long", line[:MAX_LINE]), GOOD_MSG]
    assert decoder.errors == 1
    assert feed_bytewise(stream) == [DecodeError("line too long", line[:MAX_LINE]), GOOD_MSG]


def test_line_of_exactly_max_line_is_accepted() -> None:
    text = "v" * (MAX_LINE - 3)
    line = b"*V " + text.encode()
    assert len(line) == MAX_LINE
    decoder = Decoder()
    assert decoder.feed(line + b"\r\n") == [Reply("V", text)]
    assert decoder.errors == 0


def test_overlong_discard_ends_at_the_terminator_not_at_a_star() -> None:
    # Documented behaviour: once a line is too long, everything up to the next terminator is
    # dropped, including a packet that started inside it; the frame after that decodes.
    decoder = Decoder()
    junk = b"\x00" * (MAX_LINE + 5)
    assert decoder.feed(junk + GOOD + GOOD2) == [
        DecodeError("line too long", junk[:MAX_LINE]),
        GOOD2_MSG,
    ]
    assert decoder.errors == 1


# --- captures ---------------------------------------------------------------------------------


def decode_capture(path: Path) -> list[Message]:
    decoder = Decoder()
    messages = decoder.feed(path.read_bytes())
    assert decoder.errors == 0
    assert not [m for m in messages if isinstance(m, DecodeError)]
    return messages


def kinds(messages: list[Message]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in messages:
        counts[type(m).__name__] = counts.get(type(m).__name__, 0) + 1
    return counts


def states_in_order(messages: list[Message]) -> list[int]:
    return [state for state, _ in groupby(m.state for m in messages if isinstance(m, Status))]


@pytest.fixture
def real_capture() -> Path:
    if not REAL_CAPTURE.is_file():
        pytest.skip(f"real SS2 capture not present at {REAL_CAPTURE} (only in the workspace)")
    return REAL_CAPTURE


def test_real_capture_decodes_cleanly(real_capture: Path) -> None:
    messages = decode_capture(real_capture)
    assert kinds(messages) == {"Reply": 4, "Status": 452, "BareNumber": 6}
    assert [m.number for m in messages if isinstance(m, BareNumber)] == [27, 16, 6, 3, 10, 0]
    assert [m for m in messages if isinstance(m, Reply)] == [
        Reply("P", "1"),
        Reply("P", "OK"),
        Reply("P", "0"),
        Reply("P", "OK"),
    ]
    assert messages[2] == Status(1, 11, 34, 0, 57, 0)
    assert states_in_order(messages) == [1, *[2, 3, 4, 5] * 6, 2, 6]
    statuses = [m for m in messages if isinstance(m, Status)]
    assert {m.warnings for m in statuses} == {0}
    assert sorted({m.spin for m in statuses}) == [11, 12, 13, 14, 15, 16, 17]


def test_real_capture_same_in_random_chunks(real_capture: Path) -> None:
    data = real_capture.read_bytes()
    rng = random.Random(11)
    cuts = sorted(rng.sample(range(1, len(data)), 300))
    assert feed_in_pieces(data, *cuts)[0] == Decoder().feed(data)


OUR_NUMBERS: list[Number] = [32, 15, 0, 26, 3, 35]


def test_our_capture_decodes_cleanly() -> None:
    messages = decode_capture(OUR_CAPTURE)
    assert kinds(messages) == {"Reply": 4, "Status": 361, "BareNumber": 6}
    assert [m.number for m in messages if isinstance(m, BareNumber)] == OUR_NUMBERS
    assert [m for m in messages if isinstance(m, Reply)] == [
        Reply("P", "1"),
        Reply("P", "OK"),
        Reply("P", "0"),
        Reply("P", "OK"),
    ]
    assert messages[2] == Status(1, 101, None, 0, 0, 0)
    assert states_in_order(messages) == [1, *[2, 3, 4, 5] * 6, 2, 6]


def test_our_capture_game_by_game() -> None:
    messages = decode_capture(OUR_CAPTURE)
    results: list[tuple[int, Number | None, int]] = []
    for i, m in enumerate(messages):
        if isinstance(m, BareNumber):
            after = messages[i + 1]
            assert isinstance(after, Status)
            assert after.state == 5
            assert after.last_number == m.number
            results.append((after.spin, after.last_number, after.rotor_direction))
    assert results == [
        (101, 32, 0),
        (102, 15, 1),
        (103, 0, 0),
        (104, 26, 1),
        (105, 3, 0),
        (106, 35, 1),
    ]
    playing = [m for m in messages if isinstance(m, Status) and m.state in (3, 4)]
    assert min(m.rotor_rpm_x10 for m in playing) == 136
    assert max(m.rotor_rpm_x10 for m in playing) == 177
    assert bytes(OUR_CAPTURE.read_bytes()).count(b"\r\n") == len(messages)


# --- round-trip properties --------------------------------------------------------------------

PRINTABLE_NO_STAR = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "*")

numbers: st.SearchStrategy[Number] = st.one_of(st.integers(0, 38), st.just("00"))
statuses = st.builds(
    Status,
    state=st.integers(1, 6),
    spin=st.integers(0, 256),
    last_number=st.none() | numbers,
    warnings=st.integers(0, 15),
    rotor_rpm_x10=st.integers(0, 999),
    rotor_direction=st.integers(0, 1),
)
# X is the status letter; F and w with numeric text are fault / chi-square lines.
replies = st.builds(
    Reply,
    letter=st.sampled_from(sorted(set("ABCDEGHIJKLMNOPQRSTUVWYZabcdefghijklmnopqrstuvxyz"))),
    text=st.text(PRINTABLE_NO_STAR, max_size=MAX_LINE - 3),
)
messages: st.SearchStrategy[Message] = st.one_of(
    statuses,
    st.builds(BareNumber, numbers),
    replies,
    st.builds(FaultReport, st.integers(0, 999)),
    st.builds(
        ChiSquare,
        st.integers(0, 999_999).map(lambda n: n / 100),
        st.integers(0, 1000).map(lambda n: n / 10),
    ),
    st.builds(SensorPassed, st.integers(0, 2)),
    st.builds(BallInPocket, numbers),
)


@settings(max_examples=300, deadline=None)
@given(messages)
def test_round_trip_one_message(message: Message) -> None:
    decoder = Decoder()
    assert decoder.feed(encode_message(message)) == [message]
    assert decoder.errors == 0


@settings(max_examples=100, deadline=None)
@given(st.lists(messages, max_size=20), st.data())
def test_round_trip_stream_resplit(batch: list[Message], data: st.DataObject) -> None:
    stream = b"".join(encode_message(m) for m in batch)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10).map(sorted))
    out, decoder = feed_in_pieces(stream, *cuts)
    assert out == batch
    assert decoder.errors == 0


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    decoder = Decoder()
    out = decoder.feed(data)
    assert all(isinstance(m, Message) for m in out)
    assert decoder.errors == sum(isinstance(m, DecodeError) for m in out)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=400), messages)
def test_resync_after_arbitrary_garbage(junk: bytes, message: Message) -> None:
    decoder = Decoder()
    out = decoder.feed(junk + b"\r\n" + encode_message(message))
    assert out[-1] == message


# --- commands ---------------------------------------------------------------------------------

commands = st.builds(
    Command,
    letter=st.sampled_from(sorted(COMMAND_LETTERS)),
    argument=st.text(PRINTABLE_NO_STAR, max_size=MAX_LINE - 4),
)


@settings(max_examples=300, deadline=None)
@given(commands)
def test_command_round_trip(command: Command) -> None:
    assert CommandDecoder().feed(encode_command(command)) == [command]


@settings(max_examples=100, deadline=None)
@given(st.lists(commands, max_size=10), st.data())
def test_command_stream_resplit(batch: list[Command], data: st.DataObject) -> None:
    stream = b"".join(encode_command(c) for c in batch)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=10).map(sorted))
    decoder = CommandDecoder()
    out: list[Command | DecodeError] = []
    for start, end in pairwise([0, *cuts, len(stream)]):
        out += decoder.feed(stream[start:end])
    assert out == batch


@pytest.mark.parametrize(
    ("command", "wire"),
    [
        pytest.param(Command.restart(), b"*R\r\n", id="restart"),
        pytest.param(Command.poll(), b"*X\r\n", id="poll"),
        pytest.param(Command.identify(), b"*K\r\n", id="identify"),
        pytest.param(Command.version(), b"*V\r\n", id="version"),
        pytest.param(Command.power(on=True), b"*P 1\r\n", id="power-on"),
        pytest.param(Command.power(on=False), b"*P 0\r\n", id="power-off"),
        pytest.param(Command.sensor_stream(on=True), b"*I 4\r\n", id="sensor-stream-on"),
        pytest.param(Command.sensor_stream(on=False), b"*I 0\r\n", id="sensor-stream-off"),
        pytest.param(Command.operating_mode(1159), b"*o 1159\r\n", id="mode-1159"),
        pytest.param(Command.operating_mode(0xFFFF), b"*o 65535\r\n", id="mode-max"),
        pytest.param(Command.operating_mode(0), b"*o 0\r\n", id="mode-0"),
        pytest.param(Command.self_test(), b"*F\r\n", id="self-test"),
        pytest.param(Command("T", "h 60"), b"*T h 60\r\n", id="setup-parameter"),
    ],
)
def test_command_helpers_encode(command: Command, wire: bytes) -> None:
    assert encode_command(command) == wire
    assert CommandDecoder().feed(wire) == [command]


def test_command_decoder_accepts_semicolon_and_rejects_garbage() -> None:
    decoder = CommandDecoder()
    assert decoder.feed(b"*q;1\r\n*Z\r\nhello\r*P 1\n") == [
        Command("q", "1"),
        DecodeError("not an SS2 command", b"*Z"),
        DecodeError("not an SS2 command", b"hello"),
        Command("P", "1"),
    ]


@pytest.mark.parametrize("letter", ["Z", "x", "", "PR", "1", "*", " "], ids=repr)
def test_encode_command_rejects_unknown_letters(letter: str) -> None:
    with pytest.raises(ValueError, match="unknown SS2 command letter"):
        encode_command(Command(letter))


@pytest.mark.parametrize(
    "argument",
    ["\r", "\n", "1\r\n*R", "\x00", "\x7f", "é", "a*b", "1" * (MAX_LINE - 3)],
    ids=["cr", "lf", "injected-command", "nul", "del", "non-ascii", "star", "too-long"],
)
def test_encode_command_rejects_bad_arguments(argument: str) -> None:
    with pytest.raises(ValueError, match="argument must be short printable ASCII"):
        encode_command(Command("T", argument))


def test_longest_argument_is_accepted() -> None:
    argument = "1" * (MAX_LINE - 4)
    assert CommandDecoder().feed(encode_command(Command("T", argument))) == [Command("T", argument)]


@pytest.mark.parametrize("mode", [0x10000, 1 << 20, -1], ids=["17-bits", "21-bits", "negative"])
def test_operating_mode_rejects_more_than_16_bits(mode: int) -> None:
    with pytest.raises(ValueError, match="16-bit"):
        Command.operating_mode(mode)
