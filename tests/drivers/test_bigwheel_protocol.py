"""Byte vectors, split sentences, garbage, bad checksums, bad fields and round-trip properties for
the reference big-wheel codec (STYLE practice 2)."""

from __future__ import annotations

from functools import reduce

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.bigwheel.protocol import (
    FAULT_CODES,
    GARBAGE,
    MAX_GARBAGE,
    MAX_SEGMENTS,
    MAX_SENTENCE,
    Ack,
    ClearFault,
    Command,
    CommandDecoder,
    DecodeError,
    Decoder,
    Fault,
    FaultCleared,
    Identify,
    Message,
    Nak,
    QueryStatus,
    RevolutionTick,
    SetSegments,
    SpinStarted,
    Status,
    Stopped,
    StoppedOnDivider,
    Version,
    checksum,
    encode_command,
    encode_message,
    sentence,
)


def wire(body: bytes) -> bytes:
    """A sentence with a correct checksum, computed independently of :func:`checksum`."""
    value = reduce(lambda a, b: a ^ b, body, 0)
    return b"$" + body + b"*" + f"{value:02X}".encode() + b"\r\n"


def errors(messages: list[Message]) -> list[DecodeError]:
    return [m for m in messages if isinstance(m, DecodeError)]


# Hand-checked vectors: (wire bytes, message). The checksums were computed by hand once and are
# written out literally, so a change in the checksum function cannot hide behind itself.
VECTORS: list[tuple[bytes, Message]] = [
    (b"$BWSTA,IDLE,54,0,-,0,-*56\r\n", Status("idle", 54, 0)),
    (b"$BWSPN,3,CW*7F\r\n", SpinStarted(3, "cw")),
    (b"$BWREV,3,1,2100*79\r\n", RevolutionTick(3, 1, 2100)),
    (b"$BWSTP,17,12,4,CW*67\r\n", Stopped(17, 12, 4, "cw")),
    (b"$BWDIV,2,53,0,3,CCW*02\r\n", StoppedOnDivider(2, 53, 0, 3, "ccw")),
    (
        b"$BWSTA,STOP,54,17,CW,4,12:13,IDX*2E\r\n",
        Status("stopped", 54, 17, "cw", 4, (12, 13), ("IDX",)),
    ),
    (b"$BWFLT,IDX,no mark*2A\r\n", Fault("IDX", "no mark")),
    (b"$BWFCL,IDX*25\r\n", FaultCleared("IDX")),
    (b"$BWVER,TBW-1,1.0.0,SN1*38\r\n", Version("TBW-1", "1.0.0", "SN1")),
    (b"$BWACK,SEG*21\r\n", Ack("SEG")),
    (b"$BWNAK,?,TYPE*76\r\n", Nak("?", "TYPE")),
]

COMMANDS: list[tuple[bytes, Command]] = [
    (b"$BHQRY*50\r\n", QueryStatus()),
    (b"$BHSEG,54*76\r\n", SetSegments(54)),
    (b"$BHCLR*57\r\n", ClearFault()),
    (b"$BHCLR,IDX*2E\r\n", ClearFault("IDX")),
    (b"$BHIDN*49\r\n", Identify()),
]


def test_checksum_is_nmea_xor() -> None:
    assert checksum(b"BHQRY") == 0x50
    assert checksum(b"") == 0
    # The classic NMEA example sentence from the GPS world, to anchor "NMEA-style".
    assert checksum(b"GPGLL,5057.970,N,00146.110,E,142451,A") == 0x27


@pytest.mark.parametrize(("data", "message"), VECTORS, ids=lambda v: repr(v)[:24])
def test_vectors_encode_and_decode(data: bytes, message: Message) -> None:
    assert encode_message(message) == data
    assert data == wire(data[1 : data.index(b"*")])
    assert Decoder().feed(data) == [message]


@pytest.mark.parametrize(("data", "command"), COMMANDS, ids=lambda v: repr(v)[:24])
def test_command_vectors(data: bytes, command: Command) -> None:
    assert encode_command(command) == data
    assert CommandDecoder().feed(data) == [command]


@pytest.mark.parametrize(("data", "message"), VECTORS, ids=lambda v: repr(v)[:24])
def test_split_at_every_byte(data: bytes, message: Message) -> None:
    for cut in range(1, len(data)):
        decoder = Decoder()
        assert decoder.feed(data[:cut]) + decoder.feed(data[cut:]) == [message], cut


def test_one_byte_at_a_time_over_a_whole_stream() -> None:
    stream = b"".join(data for data, _ in VECTORS)
    decoder = Decoder()
    out: list[Message] = []
    for i in range(len(stream)):
        out += decoder.feed(stream[i : i + 1])
    assert out == [m for _, m in VECTORS]
    assert decoder.errors == 0


def test_terminator_may_be_cr_lf_or_both() -> None:
    body = b"BWSPN,3,CW*7F"
    for end in (b"\r", b"\n", b"\r\n", b"\n\r"):
        assert Decoder().feed(b"$" + body + end) == [SpinStarted(3, "cw")]


def test_lower_case_checksum_is_accepted() -> None:
    assert Decoder().feed(b"$BWSTA,STOP,54,17,CW,4,12:13,IDX*2e\r\n") == [VECTORS[5][1]]


def test_garbage_before_between_and_after() -> None:
    a, b = VECTORS[1][0], VECTORS[3][0]
    decoder = Decoder()
    out = decoder.feed(b"\x00\xff noise" + a + b"junk\x07" + b + b"trailing")
    assert [m for m in out if not isinstance(m, DecodeError)] == [VECTORS[1][1], VECTORS[3][1]]
    # Two runs reported so far; the trailing run is reported when it ends (at the next $ or EOL).
    assert [e.reason for e in errors(out)] == [GARBAGE, GARBAGE]
    assert errors(decoder.feed(b"\r\n"))[0].raw == b"trailing"
    assert decoder.errors == 3


def test_endless_garbage_is_counted_in_bounded_pieces() -> None:
    out = Decoder().feed(b"x" * (MAX_GARBAGE * 3))
    assert len(out) == 3
    assert all(isinstance(m, DecodeError) and len(m.raw) <= MAX_SENTENCE for m in out)


def test_bad_checksum_is_one_error_and_the_next_sentence_decodes() -> None:
    bad = b"$BWSTP,17,12,4,CW*68\r\n"
    out = Decoder().feed(bad + VECTORS[1][0])
    assert isinstance(out[0], DecodeError)
    assert "checksum mismatch" in out[0].reason
    assert out[1:] == [VECTORS[1][1]]


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (b"$BWSPN,3,CW\r\n", "no checksum"),
        (b"$BWSPN,3,CW*7\r\n", "two hex digits"),
        (b"$BWSPN,3,CW*7G\r\n", "two hex digits"),
        (b"$*00\r\n", "empty body"),
        (b"$BWSPN,3,CW\x01*7F\r\n", "non-printable"),
        (b"$BWSPN,3,C$BWSPN,3,CW*7F\r\n", "restarted"),
        (b"$" + b"A" * 100 + b"\r\n", "too long"),
    ],
)
def test_framing_errors(data: bytes, reason: str) -> None:
    out = Decoder().feed(data)
    assert reason in errors(out)[0].reason
    if reason == "restarted":
        assert out[1:] == [SpinStarted(3, "cw")]
    else:
        assert len(out) == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"BHQRY", "talker is not BW"),  # our own echo
        (b"BWXX,1", "three letters"),
        (b"BWFOO,1", "unknown sentence type"),
        (b"BWSPN,3", "fields"),
        (b"BWSPN,0,CW", "spin"),
        (b"BWSPN,3,UP", "direction"),
        (b"BWSPN,-3,CW", "digits"),
        (b"BWREV,3,0,2100", "count"),
        (b"BWREV,3,1,0", "period"),
        (b"BWSTP,17,128,4,CW", "index"),
        (b"BWSTP,17,12,x,CW", "revolutions"),
        (b"BWDIV,2,10,12,3,CW", "divider"),
        (b"BWDIV,2,0,0,3,CW", "divider"),
        (b"BWSTA,DONE,54,0,-,0,-", "state"),
        (b"BWSTA,IDLE,1,0,-,0,-", "segments"),
        (b"BWSTA,IDLE,129,0,-,0,-", "segments"),
        (b"BWSTA,IDLE,54,0,CW,0,-", "IDLE"),
        (b"BWSTA,STOP,54,3,CW,4,-", "STOP needs"),
        (b"BWSTA,SPIN,54,3,CW,1,7", "only given in STOP"),
        (b"BWSTA,SPIN,54,3,-,1,-", "SPIN needs"),
        (b"BWSTA,IDLE,54,0,-,0,-,IDX,IDX", "twice"),
        (b"BWSTA,IDLE,54,0,-,0,-,idx", "fault code"),
        (b"BWSTA,IDLE,54", "fields"),
        (b"BWFLT,IDX," + b"d" * 41, "detail"),
        (b"BWFLT,IX,x", "fault code"),
        (b"BWVER,a b,1,2", "model"),
        (b"BWACK,seg", "sentence type"),
        (b"BWNAK,SEG,busy", "reason"),
    ],
)
def test_bad_fields_are_values(body: bytes, reason: str) -> None:
    decoder = Decoder()
    out = decoder.feed(wire(body) + VECTORS[1][0])
    assert len(out) == 2, out
    assert isinstance(out[0], DecodeError)
    assert reason in out[0].reason
    assert out[0].raw == b"$" + body
    assert out[1] == VECTORS[1][1]
    assert decoder.errors == 1


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"BWQRY", "talker is not BH"),
        (b"BHSEG,1", "segments"),
        (b"BHSEG", "fields"),
        (b"BHCLR,idx", "fault code"),
        (b"BHQRY,1", "fields"),
        (b"BHRUN", "unknown command"),
    ],
)
def test_bad_commands_are_values(body: bytes, reason: str) -> None:
    decoder = CommandDecoder()
    out = decoder.feed(wire(body))
    assert len(out) == 1
    assert isinstance(out[0], DecodeError)
    assert reason in out[0].reason
    assert decoder.errors == 1


@pytest.mark.parametrize(
    "message",
    [
        Status("idle", 54, 0, "cw"),
        Status("stopped", 54, 3, "cw", 4, None),
        Status("idle", 1, 0),
        SpinStarted(0, "cw"),
        Stopped(1, MAX_SEGMENTS, 3, "cw"),
        StoppedOnDivider(1, 4, 6, 3, "cw"),
        Fault("IDX", "a,b"),
        Fault("IDX", "*"),
        Version("a b", "1", "2"),
        Nak("SEG", "busy"),
        DecodeError("x", b"y"),
    ],
)
def test_encoding_refuses_what_it_could_not_decode(message: Message) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - the message text varies per field
        encode_message(message)


def test_encoding_refuses_bad_commands_and_bodies() -> None:
    with pytest.raises(ValueError, match="segments"):
        encode_command(SetSegments(200))
    with pytest.raises(ValueError, match="fault code"):
        encode_command(ClearFault("x"))
    with pytest.raises(ValueError, match="body"):
        sentence(b"BW$")


# --- round trips ---------------------------------------------------------------------------------

spins = st.integers(1, 9999)
indices = st.integers(0, MAX_SEGMENTS - 1)
revs = st.integers(0, 999)
directions = st.sampled_from(["cw", "ccw"])
codes = st.from_regex(r"[A-Z]{3}", fullmatch=True)
tokens = st.from_regex(r"[A-Za-z0-9._\-/+#]{1,20}", fullmatch=True)
details = st.from_regex(r"[A-Za-z0-9 .:;()\-]{0,40}", fullmatch=True)


@st.composite
def dividers(draw: st.DrawFn) -> tuple[int, int]:
    before = draw(st.integers(0, MAX_SEGMENTS - 1))
    choices = ([before + 1] if before < MAX_SEGMENTS - 1 else []) + ([0] if before else [])
    return (before, draw(st.sampled_from(choices)))


@st.composite
def statuses(draw: st.DrawFn) -> Status:
    faults = tuple(draw(st.lists(st.sampled_from(FAULT_CODES), unique=True, max_size=4)))
    segments = draw(st.integers(2, MAX_SEGMENTS))
    state = draw(st.sampled_from(["idle", "spinning", "stopped"]))
    if state == "idle":
        return Status("idle", segments, draw(st.integers(0, 9999)), faults=faults)
    spin, direction, turns = draw(spins), draw(directions), draw(revs)
    if state == "spinning":
        return Status("spinning", segments, spin, direction, turns, None, faults)
    last = draw(st.one_of(indices, dividers()))
    return Status("stopped", segments, spin, direction, turns, last, faults)


messages = st.one_of(
    statuses(),
    st.builds(SpinStarted, spins, directions),
    st.builds(RevolutionTick, spins, st.integers(1, 999), st.integers(1, 999_999)),
    st.builds(Stopped, spins, indices, revs, directions),
    dividers().flatmap(
        lambda d: st.builds(StoppedOnDivider, spins, st.just(d[0]), st.just(d[1]), revs, directions)
    ),
    st.builds(Fault, codes, details),
    st.builds(FaultCleared, codes),
    st.builds(Version, tokens, tokens, tokens),
    st.builds(Ack, codes),
    st.builds(Nak, st.one_of(codes, st.just("?")), st.from_regex(r"[A-Z]{1,8}", fullmatch=True)),
)
commands = st.one_of(
    st.builds(QueryStatus),
    st.builds(SetSegments, st.integers(2, MAX_SEGMENTS)),
    st.builds(ClearFault, st.one_of(st.none(), codes)),
    st.builds(Identify),
)


@given(st.lists(messages, min_size=1, max_size=8), st.data())
def test_messages_round_trip_split_anywhere(batch: list[Message], data: st.DataObject) -> None:
    stream = b"".join(encode_message(m) for m in batch)
    assert all(len(encode_message(m)) <= MAX_SENTENCE for m in batch)
    cut = data.draw(st.integers(0, len(stream)))
    decoder = Decoder()
    assert decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) == batch


@given(st.lists(commands, min_size=1, max_size=8), st.data())
def test_commands_round_trip_split_anywhere(batch: list[Command], data: st.DataObject) -> None:
    stream = b"".join(encode_command(c) for c in batch)
    cut = data.draw(st.integers(0, len(stream)))
    decoder = CommandDecoder()
    assert decoder.feed(stream[:cut]) + decoder.feed(stream[cut:]) == batch


@given(st.binary(max_size=300), messages)
def test_any_noise_never_raises_and_the_decoder_recovers(noise: bytes, message: Message) -> None:
    decoder = Decoder()
    decoder.feed(noise)
    # A terminator ends whatever the noise left open; the next sentence then decodes.
    assert decoder.feed(b"\r\n" + encode_message(message))[-1] == message
