"""Byte vectors, split frames, garbage, bad checksums, bad fields and round-trip properties for
the reference shuffler codec (STYLE practice 2)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.drivers.shuffler.protocol import (
    MAX_LIST,
    REFERENCE_CODEC,
    Ack,
    ClearFault,
    Command,
    CommandDecoder,
    DeckReport,
    DecodeError,
    Decoder,
    Door,
    Fault,
    FaultClear,
    Message,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShuffleDone,
    ShuffleStart,
    StartShuffle,
    Status,
    Version,
    command_verb,
    encode_command,
    encode_message,
    frame,
)
from tablectl.drivers.stx import MAX_GARBAGE, MAX_PAYLOAD, crc8


def wire(payload: bytes) -> bytes:
    """A frame with a correct checksum, written out independently of :func:`frame`."""
    return b"\x02" + payload + b"\x03" + f"{crc8(payload):02X}".encode() + b"\r\n"


def feed_in_pieces(data: bytes, *cuts: int) -> tuple[list[Message], Decoder]:
    decoder = Decoder()
    out: list[Message] = []
    for start, end in pairwise([0, *cuts, len(data)]):
        out += decoder.feed(data[start:end])
    return out, decoder


def errors(messages: list[Message]) -> list[DecodeError]:
    return [m for m in messages if isinstance(m, DecodeError)]


def good(messages: list[Message]) -> list[Message]:
    return [m for m in messages if not isinstance(m, DecodeError)]


# --- the checksum --------------------------------------------------------------------------------


def test_crc8_check_value() -> None:
    # CRC-8/SMBUS catalogue check value; a technician's tool must agree with ours.
    assert crc8(b"123456789") == 0xF4
    assert crc8(b"") == 0


def test_documented_example_frame() -> None:
    # The example in docs/protocols/shuffler.md, byte for byte.
    assert encode_message(ShuffleDone(12, 416)) == b"\x02SHDN;12;416;-;-\x031D\r\n"
    assert encode_command(StartShuffle(8)) == wire(b"SHUF;8")


# --- every message kind --------------------------------------------------------------------------

VECTORS: list[tuple[str, bytes, Message]] = [
    ("status-idle", b"STAT;IDLE;CLSD;416;-;0", Status("idle", False, 416, (), 0)),
    ("status-shuffling", b"STAT;SHUF;CLSD;416;-;12", Status("shuffling", False, 416, (), 12)),
    ("status-ready", b"STAT;READY;CLSD;415;-;12", Status("ready", False, 415, (), 12)),
    (
        "status-fault-door",
        b"STAT;FAULT;OPEN;208;1,6;9999",
        Status("fault", True, 208, (1, 6), 9999),
    ),
    ("shuffle-start", b"SHST;13;8", ShuffleStart(13, 8)),
    ("shuffle-start-1-deck", b"SHST;1;1", ShuffleStart(1, 1)),
    ("shuffle-done-clean", b"SHDN;13;416;-;-", ShuffleDone(13, 416)),
    ("shuffle-done-missing", b"SHDN;14;415;QS;-", ShuffleDone(14, 415, ("QS",))),
    (
        "shuffle-done-both",
        b"SHDN;15;416;QS,TH;AH,JK",
        ShuffleDone(15, 416, ("QS", "TH"), ("AH", "JK")),
    ),
    ("shuffle-done-unchecked", b"SHDN;16;417;?;?", ShuffleDone(16, 417, checked=False)),
    ("shuffle-done-jokers", b"SHDN;17;54;-;JK1,JK2", ShuffleDone(17, 54, (), ("JK1", "JK2"))),
    ("deck-report", b"DECK;52;2C;-", DeckReport(52, ("2C",))),
    ("deck-report-unchecked", b"DECK;0;?;?", DeckReport(0, checked=False)),
    ("door-open", b"DOOR;OPEN", Door(True)),
    ("door-closed", b"DOOR;CLSD", Door(False)),
    (
        "fault-jam",
        b"FALT;1;card jam in the mixing elevator",
        Fault(1, "card jam in the mixing elevator"),
    ),
    ("fault-no-detail", b"FALT;99;", Fault(99, "")),
    ("fault-clear", b"FCLR;1", FaultClear(1)),
    ("version", b"VERS;TS-1;1.0.0;SIM00042", Version("TS-1", "1.0.0", "SIM00042")),
    (
        "version-spaces",
        b"VERS;Deck Mate 2;v2.3 build 7;A 1",
        Version("Deck Mate 2", "v2.3 build 7", "A 1"),
    ),
    ("ack", b"ACK;SHUF", Ack("SHUF")),
    ("nak", b"NAK;SHUF;BUSY", Nak("SHUF", "BUSY")),
    ("nak-unreadable", b"NAK;?;FRAME", Nak("?", "FRAME")),
]
IDS = [name for name, _, _ in VECTORS]
PARAMS = [(wire(payload), msg) for _, payload, msg in VECTORS]


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_decodes(raw: bytes, expected: Message) -> None:
    decoder = Decoder()
    assert decoder.feed(raw) == [expected]
    assert decoder.errors == 0


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_encodes_to_the_same_bytes(raw: bytes, expected: Message) -> None:
    assert encode_message(expected) == raw


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_split_at_every_byte(raw: bytes, expected: Message) -> None:
    for cut in range(len(raw) + 1):
        out, decoder = feed_in_pieces(raw, cut)
        assert out == [expected], f"cut at {cut}"
        assert decoder.errors == 0


@pytest.mark.parametrize(("raw", "expected"), PARAMS, ids=IDS)
def test_vector_one_byte_at_a_time(raw: bytes, expected: Message) -> None:
    cuts = list(range(1, len(raw)))
    out, _ = feed_in_pieces(raw, *cuts)
    assert out == [expected]


def test_all_vectors_back_to_back_split_everywhere() -> None:
    stream = b"".join(raw for raw, _ in PARAMS)
    expected = [msg for _, msg in PARAMS]
    for step in (1, 2, 3, 7, 64):
        out, decoder = feed_in_pieces(stream, *range(step, len(stream), step))
        assert out == expected, f"step {step}"
        assert decoder.errors == 0


def test_frames_without_crlf_and_with_extra_blank_lines() -> None:
    a, b = encode_message(Door(True)), encode_message(Door(False))
    decoder = Decoder()
    assert decoder.feed(a.rstrip(b"\r\n") + b.rstrip(b"\r\n")) == [Door(True), Door(False)]
    assert decoder.feed(b"\r\n\n\r" + a + b"\n\n") == [Door(True)]
    assert decoder.errors == 0


def test_a_frame_is_held_until_its_checksum_arrives() -> None:
    raw = wire(b"DOOR;OPEN")
    decoder = Decoder()
    assert decoder.feed(raw[:-3]) == []  # up to the first checksum digit
    assert decoder.feed(raw[-3:]) == [Door(True)]


# --- commands ------------------------------------------------------------------------------------

COMMANDS: list[tuple[bytes, Command]] = [
    (b"SHUF;8", StartShuffle(8)),
    (b"SHUF;1", StartShuffle(1)),
    (b"STAT", QueryStatus()),
    (b"VERS", QueryVersion()),
    (b"CLRF", ClearFault()),
    (b"CLRF;1", ClearFault(1)),
    (b"DCHK", RequestDeckCheck()),
]


@pytest.mark.parametrize(("payload", "command"), COMMANDS, ids=[p.decode() for p, _ in COMMANDS])
def test_command_vectors(payload: bytes, command: Command) -> None:
    raw = wire(payload)
    assert encode_command(command) == raw
    assert REFERENCE_CODEC.encode_command(command) == raw
    assert command_verb(command) == payload[:4].decode()
    for cut in range(len(raw) + 1):
        decoder = CommandDecoder()
        assert decoder.feed(raw[:cut]) + decoder.feed(raw[cut:]) == [command]


@pytest.mark.parametrize(
    "command",
    [StartShuffle(0), StartShuffle(9), StartShuffle(-1), ClearFault(0), ClearFault(100)],
    ids=repr,
)
def test_encode_command_refuses_out_of_range(command: Command) -> None:
    with pytest.raises(ValueError, match="must be"):
        encode_command(command)


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"SHUF", "0 fields"),
        (b"SHUF;9", "not in 1-8"),
        (b"SHUF;x", "decimal digits"),
        (b"STAT;1", "expected 0"),
        (b"CLRF;0", "not in 1-99"),
        (b"CLRF;1;2", "expected 1"),
        (b"HALT", "unknown command verb"),
        (b"SHDN;1;416;-;-", "unknown command verb"),  # a device message is no command
    ],
)
def test_bad_commands_are_errors(payload: bytes, reason: str) -> None:
    decoder = CommandDecoder()
    out = decoder.feed(wire(payload) + encode_command(QueryStatus()))
    assert len(out) == 2
    assert isinstance(out[0], DecodeError)
    assert reason in out[0].reason
    assert out[0].raw == payload  # no STX: the shuffler can NAK it by verb
    assert out[1] == QueryStatus()
    assert decoder.errors == 1


# --- garbage, bad checksums, resynchronisation ---------------------------------------------------

GOOD = encode_message(ShuffleStart(3, 8))
GOOD_MSG = ShuffleStart(3, 8)

GARBAGE = [
    ("nul", b"\x00"),
    ("ff-run", b"\xff\xff\xff"),
    ("text", b"hello"),
    ("lone-etx", b"\x03"),
    ("etx-and-hex", b"\x03AB"),
    ("binary", bytes(b for b in range(4, 32) if b not in (0x0A, 0x0D))),
    ("high", bytes(range(0x80, 0x100))),
]


@pytest.mark.parametrize("junk", [j for _, j in GARBAGE], ids=[n for n, _ in GARBAGE])
def test_garbage_before_between_and_after_frames(junk: bytes) -> None:
    stream = junk + GOOD + junk + GOOD + junk + b"\r\n"
    for step in (1, 2, 5, len(stream)):
        out, decoder = feed_in_pieces(stream, *range(step, len(stream), step))
        assert good(out) == [GOOD_MSG, GOOD_MSG], f"step {step}"
        # One error per run of garbage, however it was split.
        assert len(errors(out)) == 3, f"step {step}: {out}"
        assert decoder.errors == 3


def test_long_garbage_is_reported_in_bounded_pieces() -> None:
    junk = b"x" * (MAX_GARBAGE * 3)
    out, _ = feed_in_pieces(junk + GOOD)
    assert good(out) == [GOOD_MSG]
    assert len(errors(out)) == 3
    assert all(len(e.raw) <= 80 for e in errors(out))


def test_bad_checksum_is_one_error_then_resync() -> None:
    bad = bytearray(GOOD)
    bad[-3] = ord("0") if bad[-3] != ord("0") else ord("1")
    out, decoder = feed_in_pieces(bytes(bad) + GOOD)
    assert len(out) == 2
    assert isinstance(out[0], DecodeError)
    assert "checksum mismatch" in out[0].reason
    assert out[1] == GOOD_MSG
    assert decoder.errors == 1


@pytest.mark.parametrize("position", range(1, len(GOOD) - 4))
def test_a_flipped_payload_bit_is_always_caught(position: int) -> None:
    for bit in range(7):  # stay in 7-bit ASCII: the high bit is caught by the printable check
        bad = bytearray(GOOD)
        bad[position] ^= 1 << bit
        out, _ = feed_in_pieces(bytes(bad) + GOOD)
        assert good(out)[-1:] == [GOOD_MSG]
        assert GOOD_MSG not in good(out)[:-1], f"byte {position} bit {bit} went undetected"


def test_lower_case_checksum_is_rejected() -> None:
    payload = b"DOOR;OPEN"
    raw = b"\x02" + payload + b"\x03" + f"{crc8(payload):02x}".encode()
    if raw[-2:].upper() == raw[-2:]:
        pytest.skip("checksum has no letters")
    out, _ = feed_in_pieces(raw + GOOD)
    assert "hex digits" in out[0].reason  # type: ignore[union-attr]
    assert out[-1] == GOOD_MSG


def test_stx_inside_a_frame_restarts_it() -> None:
    out, decoder = feed_in_pieces(b"\x02SHDN;12;41" + GOOD)
    assert isinstance(out[0], DecodeError)
    assert "restarted" in out[0].reason
    assert out[1:] == [GOOD_MSG]
    assert decoder.errors == 1


def test_stx_inside_the_checksum_restarts() -> None:
    out, _ = feed_in_pieces(b"\x02DOOR;OPEN\x03A" + GOOD)
    assert "truncated" in out[0].reason  # type: ignore[union-attr]
    assert out[1:] == [GOOD_MSG]


def test_non_printable_byte_inside_a_frame() -> None:
    out, decoder = feed_in_pieces(b"\x02DOOR;\x00OPEN\x03XX\r\n" + GOOD)
    assert good(out) == [GOOD_MSG]
    assert len(errors(out)) == 1  # the rest of the broken frame is not a second error
    assert decoder.errors == 1


def test_crlf_inside_a_frame_ends_it_quietly() -> None:
    out, _ = feed_in_pieces(b"\x02DOOR;OP\r\n" + GOOD)
    assert len(errors(out)) == 1
    assert good(out) == [GOOD_MSG]


def test_empty_frame() -> None:
    out, _ = feed_in_pieces(b"\x02\x03" + GOOD)
    assert "empty" in out[0].reason  # type: ignore[union-attr]
    assert out[1:] == [GOOD_MSG]


def test_overlong_frame_is_one_error() -> None:
    out, decoder = feed_in_pieces(b"\x02" + b"A" * (MAX_PAYLOAD + 500) + b"\x0300\r\n" + GOOD)
    assert good(out) == [GOOD_MSG]
    assert len(errors(out)) == 1
    assert "too long" in errors(out)[0].reason
    assert decoder.errors == 1


def test_longest_frame_is_accepted() -> None:
    detail = "x" * 64
    cards = ",".join(["QS"] * MAX_LIST)
    raw = wire(f"SHDN;1;416;{cards};{cards}".encode())
    assert len(raw) < MAX_PAYLOAD + 6
    (msg,) = Decoder().feed(raw)
    assert isinstance(msg, ShuffleDone)
    assert len(msg.missing) == MAX_LIST
    assert Decoder().feed(wire(f"FALT;2;{detail}".encode())) == [Fault(2, detail)]


# --- bad fields ----------------------------------------------------------------------------------

BAD_FIELDS = [
    (b"STAT;IDLE;CLSD;416;-", "expected 5"),
    (b"STAT;BUSY;CLSD;416;-;0", "state"),
    (b"STAT;IDLE;AJAR;416;-;0", "door"),
    (b"STAT;IDLE;CLSD;-1;-;0", "decimal digits"),
    (b"STAT;IDLE;CLSD;10000;-;0", "decimal digits"),
    (b"STAT;IDLE;CLSD;416;0;0", "not in 1-99"),
    (b"STAT;IDLE;CLSD;416;1,1;0", "duplicate"),
    (b"STAT;IDLE;CLSD;416;;0", "decimal digits"),
    (b"STAT;idle;CLSD;416;-;0", "state"),
    (b"SHST;0;8", "not in 1-9999"),
    (b"SHST;1;9", "not in 1-8"),
    (b"SHST;1;0", "not in 1-8"),
    (b"SHST;1", "expected 2"),
    (b"SHDN;1;416;QS", "expected 4"),
    (b"SHDN;1;416;QX;-", "not a card code"),
    (b"SHDN;1;416;10H;-", "not a card code"),
    (b"SHDN;1;416;qs;-", "not a card code"),
    (b"SHDN;1;416;QS,;-", "not a card code"),
    (b"SHDN;1;416;?;-", "both lists"),
    (b"SHDN;1;416;;-", "not a card code"),
    (b"SHDN;1;4 6;-;-", "decimal digits"),
    (b"SHDN;1;+16;-;-", "decimal digits"),
    (b"DECK;52;-", "expected 3"),
    (b"DOOR;open", "OPEN or CLSD"),
    (b"DOOR", "expected 1"),
    (b"FALT;0;x", "not in 1-99"),
    (b"FALT;100;x", "not in 1-99"),
    (b"FALT;1", "expected 2"),
    (b"FALT;1;" + b"x" * 65, "longer than 64"),
    (b"FCLR;x", "decimal digits"),
    (b"VERS;TS-1;1.0", "expected 3"),
    (b"VERS;;1.0;S", "model"),
    (b"VERS; TS;1.0;S", "model"),
    (b"ACK;SH", "not a verb"),
    (b"ACK;shuf", "not a verb"),
    (b"NAK;SHUF", "expected 2"),
    (b"NAK;SHUF;busy", "reason"),
    (b"NAK;SHUF;TOOLONGREASON", "reason"),
    (b"HELLO", "unknown message verb"),
    (b"SHUF;8", "unknown message verb"),  # a host command is no device message
]


@pytest.mark.parametrize(
    ("payload", "reason"), BAD_FIELDS, ids=[p.decode()[:30] for p, _ in BAD_FIELDS]
)
def test_bad_field_is_a_counted_error_then_resync(payload: bytes, reason: str) -> None:
    decoder = Decoder()
    out = decoder.feed(wire(payload) + GOOD)
    assert len(out) == 2, out
    assert isinstance(out[0], DecodeError)
    assert reason in out[0].reason
    assert out[1] == GOOD_MSG
    assert decoder.errors == 1


def test_too_many_cards_in_a_list() -> None:
    cards = ",".join(["2C"] * (MAX_LIST + 1))
    (err,) = Decoder().feed(wire(f"DECK;52;{cards};-".encode()))
    assert isinstance(err, DecodeError)
    assert "at most" in err.reason


def test_leading_zeros_are_accepted() -> None:
    assert Decoder().feed(wire(b"SHST;0012;08")) == [ShuffleStart(12, 8)]


@pytest.mark.parametrize(
    "message",
    [
        Status("idle", False, 10000, (), 0),
        Status("idle", False, 0, (1, 1), 0),
        Status("idle", False, 0, (0,), 0),
        ShuffleStart(0, 8),
        ShuffleStart(1, 9),
        ShuffleDone(1, 416, ("QX",)),
        ShuffleDone(1, 416, ("QS",), checked=False),
        ShuffleDone(1, 416, ("QS",) * (MAX_LIST + 1)),
        DeckReport(-1),
        Fault(1, "a;b"),
        Fault(1, "x" * 65),
        Fault(100),
        FaultClear(0),
        Version("", "1", "2"),
        Version("a\n", "1", "2"),
        Ack("SH"),
        Nak("SHUF", "busy"),
        DecodeError("x", b""),
    ],
    ids=repr,
)
def test_encode_message_refuses_invalid_values(message: Message) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        encode_message(message)


def test_frame_refuses_bad_payloads() -> None:
    for payload in (b"", b"\x02", b"a\r\nb", b"x" * (MAX_PAYLOAD + 1)):
        with pytest.raises(ValueError, match="printable"):
            frame(payload)


# --- round trips (hypothesis) --------------------------------------------------------------------

_numbers = st.integers(0, 9999)
_shuffles = st.integers(1, 9999)
_decks = st.integers(1, 8)
_codes = st.integers(1, 99)
_cards = st.sampled_from([r + s for r in "A23456789TJQK" for s in "SHDC"] + ["JK", "JK1", "JK2"])
_lists = st.lists(_cards, max_size=40).map(tuple)
_text = st.text(
    alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E, blacklist_characters=";"),
    max_size=64,
)
_token = _text.filter(lambda t: bool(t) and not t.startswith(" "))
_verbs = st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=4, max_size=4)


@st.composite
def _checked(draw: st.DrawFn) -> tuple[tuple[str, ...], tuple[str, ...], bool]:
    if draw(st.booleans()):
        return draw(_lists), draw(_lists), True
    return (), (), False


@st.composite
def _done(draw: st.DrawFn) -> ShuffleDone:
    missing, extra, checked = draw(_checked())
    return ShuffleDone(draw(_shuffles), draw(_numbers), missing, extra, checked)


@st.composite
def _deck(draw: st.DrawFn) -> DeckReport:
    missing, extra, checked = draw(_checked())
    return DeckReport(draw(_numbers), missing, extra, checked)


messages: st.SearchStrategy[Message] = st.one_of(
    st.builds(
        Status,
        st.sampled_from(["idle", "shuffling", "ready", "fault"]),
        st.booleans(),
        _numbers,
        st.lists(_codes, unique=True, max_size=5).map(tuple),
        _numbers,
    ),
    st.builds(ShuffleStart, _shuffles, _decks),
    _done(),
    _deck(),
    st.builds(Door, st.booleans()),
    st.builds(Fault, _codes, _text),
    st.builds(FaultClear, _codes),
    st.builds(Version, _token, _token, _token),
    st.builds(Ack, _verbs),
    st.builds(
        Nak,
        _verbs | st.just("?"),
        st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=8),
    ),
)
commands: st.SearchStrategy[Command] = st.one_of(
    st.builds(StartShuffle, _decks),
    st.just(QueryStatus()),
    st.just(QueryVersion()),
    st.builds(ClearFault, st.none() | _codes),
    st.just(RequestDeckCheck()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(messages, min_size=1, max_size=8), st.data())
def test_messages_round_trip_through_any_split(batch: list[Message], data: st.DataObject) -> None:
    stream = b"".join(encode_message(m) for m in batch)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    out, decoder = feed_in_pieces(stream, *cuts)
    assert out == batch
    assert decoder.errors == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(commands, min_size=1, max_size=8), st.data())
def test_commands_round_trip_through_any_split(batch: list[Command], data: st.DataObject) -> None:
    stream = b"".join(encode_command(c) for c in batch)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    decoder = CommandDecoder()
    out: list[Command | DecodeError] = []
    for start, end in pairwise([0, *cuts, len(stream)]):
        out += decoder.feed(stream[start:end])
    assert out == batch


@settings(max_examples=200, deadline=None)
@given(messages, st.binary(max_size=40))
def test_garbage_never_hides_the_next_frame(message: Message, junk: bytes) -> None:
    # Whatever precedes it, a complete frame after a CR/LF or STX boundary decodes.
    decoder = Decoder()
    decoder.feed(junk)
    out = decoder.feed(b"\r\n" + encode_message(message))
    assert good(out)[-1:] == [message]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_decoder_never_raises(data: bytes) -> None:
    decoder = Decoder()
    out = decoder.feed(data)
    assert decoder.errors == len(errors(out))
    assert all(len(e.raw) <= 80 for e in errors(out))
    command_decoder = CommandDecoder()
    command_decoder.feed(data)
