"""Drum codec vectors (the examples table of docs/protocols/drum.md), rejects, and round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.drum.protocol import (
    MAX_BALL,
    MAX_POSITION,
    MAX_QUALITY,
    MAX_READERS,
    Ack,
    AckResult,
    BallReport,
    Command,
    DecodeError,
    DrumMessage,
    DrumState,
    FaultKind,
    FaultReport,
    FunctionCode,
    Heartbeat,
    NodeState,
    Opcode,
    TubeFullReport,
    arbitration_id,
    decode,
    encode_command,
    encode_message,
    split_id,
)
from tablectl.drivers.transports.frames import CanFrame
from tablectl.simulators.drum import garbage_frames

N = 0x10


def frame(text: str) -> CanFrame:
    """candump notation: ``210#0300070000``."""
    ident, _, data = text.partition("#")
    return CanFrame(int(ident, 16), bytes.fromhex(data), is_extended_id=len(ident) > 3)


# The examples table of docs/protocols/drum.md, row for row.
VECTORS: list[tuple[str, DrumMessage]] = [
    ("710#052A000000", Heartbeat(N, NodeState.OPERATIONAL, 42)),
    ("711#7F01000000", Heartbeat(0x11, NodeState.PRE_OPERATIONAL, 1)),
    ("710#0078563412", Heartbeat(N, NodeState.BOOT, 0x12345678)),
    ("210#0000070000", DrumState(N, False, False, False, False, 0, 7)),
    ("210#0300070000", DrumState(N, True, True, False, False, 0, 7)),
    ("210#0702070000", DrumState(N, True, True, True, False, 2, 7)),
    ("210#0807070000", DrumState(N, False, False, False, True, 7, 7)),
    (
        "210#0000070103",
        DrumState(
            N,
            False,
            False,
            False,
            False,
            0,
            7,
            faults=frozenset({FaultKind.BLOWER}),
            reader_faults=frozenset({1, 2}),
        ),
    ),
    (
        "210#0000070600",
        DrumState(
            N, False, False, False, False, 0, 7, frozenset({FaultKind.GATE, FaultKind.SENSOR})
        ),
    ),
    ("191#1101016205", BallReport(0x11, 17, 1, 1, 98, 5)),
    ("192#2A02076400", BallReport(0x12, 42, 2, 7, 100, 0)),
    ("191#00010000FF", BallReport(0x11, 0, 1, 0, 0, 255)),
    ("290#0707", TubeFullReport(N, 7, 7)),
    ("290#0807", TubeFullReport(N, 8, 7)),
    ("090#01010002", FaultReport(N, FaultKind.BLOWER, 0, 2, True)),
    ("090#00010000", FaultReport(N, FaultKind.BLOWER, 0, 0, False)),
    ("091#01020107", FaultReport(0x11, FaultKind.READER, 1, 7, True)),
    ("090#01030000", FaultReport(N, FaultKind.GATE, 0, 0, True)),
    ("090#01040009", FaultReport(N, FaultKind.SENSOR, 0, 9, True)),
    ("310#01010000", Command(N, Opcode.START_MIXING, 1)),
    ("310#02020000", Command(N, Opcode.STOP_MIXING, 2)),
    ("310#03030000", Command(N, Opcode.RELEASE_BALL, 3)),
    ("310#04040000", Command(N, Opcode.QUERY_STATUS, 4)),
    ("310#05050000", Command(N, Opcode.CLEAR_FAULT, 5)),
    ("310#05060202", Command(N, Opcode.CLEAR_FAULT, 6, kind=2, reader=2)),
    ("310#06070000", Command(N, Opcode.RETURN_BALLS, 7)),
    ("390#010100", Ack(N, Opcode.START_MIXING, 1, AckResult.OK)),
    ("390#030301", Ack(N, Opcode.RELEASE_BALL, 3, AckResult.REFUSED)),
    ("390#030904", Ack(N, Opcode.RELEASE_BALL, 9, AckResult.FAULT_ACTIVE)),
]


@pytest.mark.parametrize(("text", "message"), VECTORS, ids=[v[0] for v in VECTORS])
def test_vector_decodes(text: str, message: DrumMessage) -> None:
    assert decode(frame(text)) == message


@pytest.mark.parametrize(("text", "message"), VECTORS, ids=[v[0] for v in VECTORS])
def test_vector_encodes(text: str, message: DrumMessage) -> None:
    assert encode_message(message) == frame(text)
    assert str(encode_message(message)) == text


def test_commands_encode_through_encode_command() -> None:
    assert str(encode_command(Command(N, Opcode.RELEASE_BALL, 0x2A))) == "310#032A0000"


def test_ids_put_the_function_code_above_the_node() -> None:
    assert arbitration_id(FunctionCode.FAULT, 0x10) == 0x090
    assert arbitration_id(FunctionCode.HEARTBEAT, 0x7F) == 0x77F
    assert split_id(0x191) == (FunctionCode.BALL, 0x11)
    # Arbitration order: a fault beats a ball read beats a heartbeat.
    assert (
        arbitration_id(FunctionCode.FAULT, 0x7F)
        < arbitration_id(FunctionCode.BALL, 1)
        < arbitration_id(FunctionCode.HEARTBEAT, 1)
    )
    with pytest.raises(ValueError, match="node id"):
        arbitration_id(FunctionCode.BALL, 0)
    with pytest.raises(ValueError, match="node id"):
        arbitration_id(FunctionCode.BALL, 0x80)


REJECTS = [
    ("unknown function code", "010#0100"),
    ("unknown function code", "410#00"),
    ("unknown function code", "790#00"),
    ("node id 0", "700#0500000000"),
    ("DLC 4, expected 5", "191#11010162"),
    ("DLC 6, expected 5", "191#110101620500"),
    ("DLC 0, expected 5", "710#"),
    ("DLC 3, expected 4", "310#010100"),
    ("DLC 8, expected 3", "390#0101000000000000"),
    ("unknown node state", "710#4200000000"),
    ("reserved flag bits", "210#1000070000"),
    ("reserved fault bits", "210#0000070800"),
    ("capacity 0", "210#0000000000"),
    ("tube-full flag 0 with 7/7", "210#0007070000"),
    ("tube-full flag 1 with 6/7", "210#0806070000"),
    ("ball number 101", "191#6501016205"),
    ("ball number 200", "191#C801016205"),
    ("reader 0", "191#1100016205"),
    ("reader 9", "191#1109016205"),
    ("position 101", "191#1101656205"),
    ("quality 101", "191#1101016505"),
    ("6 of 7 is not full", "290#0607"),
    ("0 of 0 is not full", "290#0000"),
    ("byte 0 must be 0", "090#02010000"),
    ("unknown fault kind 5", "090#01050000"),
    ("unknown fault kind 0", "090#01000000"),
    ("reader 0 out of range", "090#01020000"),
    ("reader 9 out of range", "090#01020900"),
    ("names reader 1", "090#01010100"),
    ("unknown opcode 0x07", "310#07010000"),
    ("unknown opcode 0x00", "310#00010000"),
    ("takes no arguments", "310#01010100"),
    ("takes no arguments", "310#04010001"),
    ("clear-all names no reader", "310#05010001"),
    ("unknown fault kind 9", "310#05010900"),
    ("reader 0 out of range", "310#05010200"),
    ("fault kind 1 names no reader", "310#05010101"),
    ("unknown opcode 0x09 or result", "390#090100"),
    ("result 7", "390#010107"),
]


@pytest.mark.parametrize(("reason", "text"), REJECTS, ids=[r[1] for r in REJECTS])
def test_malformed_frames_are_decode_error_values(reason: str, text: str) -> None:
    result = decode(frame(text))
    assert isinstance(result, DecodeError), result
    assert reason in result.reason
    assert result.raw == frame(text)


def test_extended_ids_are_rejected() -> None:
    result = decode(CanFrame(0x191, bytes.fromhex("1101016205"), is_extended_id=True))
    assert isinstance(result, DecodeError)
    assert "extended" in result.reason


def test_every_simulator_garbage_frame_is_rejected() -> None:
    for bad in garbage_frames(N):
        assert isinstance(decode(bad), DecodeError), bad


@pytest.mark.parametrize(
    "message",
    [
        BallReport(0x11, MAX_BALL + 1, 1, 1, 90, 0),
        BallReport(0x11, 1, 0, 1, 90, 0),
        BallReport(0x11, 1, 1, MAX_POSITION + 1, 90, 0),
        BallReport(0x11, 1, 1, 1, MAX_QUALITY + 1, 0),
        BallReport(0x11, 1, 1, 1, 90, 256),
        DrumState(N, False, False, False, True, 3, 7),
        DrumState(N, False, False, False, False, 0, 0),
        DrumState(N, False, False, False, False, 0, 7, reader_faults=frozenset({9})),
        DrumState(N, False, False, False, False, 0, 7, faults=frozenset({FaultKind.READER})),
        TubeFullReport(N, 3, 7),
        FaultReport(N, FaultKind.BLOWER, 1, 0, True),
        FaultReport(N, FaultKind.READER, 0, 0, True),
        Heartbeat(N, NodeState.OPERATIONAL, 1 << 32),
        Command(N, Opcode.START_MIXING, 1, kind=1),
        Command(N, Opcode.START_MIXING, 256),
        Command(0, Opcode.START_MIXING, 1),
    ],
)
def test_encoding_refuses_what_decoding_would_reject(message: DrumMessage) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each case has its own message
        encode_message(message)


def test_can_frame_is_validated() -> None:
    with pytest.raises(ValueError, match="standard"):
        CanFrame(0x800, b"")
    with pytest.raises(ValueError, match="at most 8"):
        CanFrame(0x100, bytes(9))
    assert CanFrame(0x1FFFFFFF, b"", is_extended_id=True).dlc == 0
    assert str(CanFrame(0x1234567, b"\xab", is_extended_id=True)) == "01234567#AB"


# --- round-trip property -------------------------------------------------------------------------

nodes = st.integers(1, 0x7F)
u8 = st.integers(0, 255)
readers = st.integers(1, MAX_READERS)


@st.composite
def states(draw: st.DrawFn) -> DrumState:
    capacity = draw(st.integers(1, 255))
    count = draw(u8)
    return DrumState(
        draw(nodes),
        draw(st.booleans()),
        draw(st.booleans()),
        draw(st.booleans()),
        count >= capacity,
        count,
        capacity,
        draw(st.frozensets(st.sampled_from([FaultKind.BLOWER, FaultKind.GATE, FaultKind.SENSOR]))),
        draw(st.frozensets(readers)),
    )


@st.composite
def faults(draw: st.DrawFn) -> FaultReport:
    kind = draw(st.sampled_from(FaultKind))
    reader = draw(readers) if kind is FaultKind.READER else 0
    return FaultReport(draw(nodes), kind, reader, draw(u8), draw(st.booleans()))


@st.composite
def commands(draw: st.DrawFn) -> Command:
    opcode = draw(st.sampled_from(Opcode))
    kind = reader = 0
    if opcode is Opcode.CLEAR_FAULT:
        kind = draw(st.sampled_from([0, *FaultKind]))
        reader = draw(readers) if kind == FaultKind.READER else 0
    return Command(draw(nodes), opcode, draw(u8), int(kind), reader)


@st.composite
def tube_full(draw: st.DrawFn) -> TubeFullReport:
    capacity = draw(st.integers(1, 255))
    return TubeFullReport(draw(nodes), draw(st.integers(capacity, 255)), capacity)


messages = st.one_of(
    st.builds(Heartbeat, nodes, st.sampled_from(NodeState), st.integers(0, 0xFFFF_FFFF)),
    states(),
    st.builds(
        BallReport,
        nodes,
        st.integers(0, MAX_BALL),
        readers,
        st.integers(0, MAX_POSITION),
        st.integers(0, MAX_QUALITY),
        u8,
    ),
    tube_full(),
    faults(),
    commands(),
    st.builds(Ack, nodes, st.sampled_from(Opcode), u8, st.sampled_from(AckResult)),
)


@given(messages)
def test_encode_decode_round_trip(message: DrumMessage) -> None:
    assert decode(encode_message(message)) == message


@given(st.integers(0, 0x7FF), st.binary(max_size=8))
def test_decode_never_raises(ident: int, data: bytes) -> None:
    result = decode(CanFrame(ident, data))
    if not isinstance(result, DecodeError):
        # Whatever decodes re-encodes to the very same frame: no two spellings of one message.
        assert encode_message(result) == CanFrame(ident, data)
