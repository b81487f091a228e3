"""tablectl reference ball-drum protocol over classic CAN, sans I/O (STYLE practice 1).

The executable form of ``docs/protocols/drum.md``; the two agree byte for byte, and the simulator
speaks as the drum with :func:`encode_message`. Identifiers (CAN 2.0A, 11 bits) are
``function code << 7 | node id``, as in CANopen's predefined connection set, so a lower function
code wins arbitration (faults before balls before heartbeats). A drum occupies node ``N`` (its
controller) and ``N + r`` for readers ``r = 1..8``; node 0 is reserved. A frame that breaks any
rule decodes to a :class:`DecodeError` holding it, so garbage on the bus cannot stop a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.errors import EncodeError
from tablectl.drivers.transports.frames import CanFrame

__all__ = [
    "HEARTBEAT_PERIOD",
    "MAX_BALL",
    "MAX_NODE",
    "MAX_POSITION",
    "MAX_QUALITY",
    "MAX_READERS",
    "STATE_PERIOD",
    "Ack",
    "AckResult",
    "BallReport",
    "Command",
    "DecodeError",
    "Decoder",
    "DrumMessage",
    "DrumState",
    "FaultKind",
    "FaultReport",
    "FunctionCode",
    "Heartbeat",
    "NodeState",
    "Opcode",
    "TubeFullReport",
    "arbitration_id",
    "decode",
    "encode_command",
    "encode_message",
    "split_id",
]

HEARTBEAT_PERIOD = 0.2
"""Every node sends a heartbeat every 200 ms."""
STATE_PERIOD = 1.0
"""The controller repeats its state frame every second (and sends it on every change)."""

MAX_NODE = 0x7F
MAX_READERS = 8
"""Readers per drum: one bit each in the state frame's reader-fault byte."""
MAX_BALL = 100
"""Ball numbers are 0–100 on the wire (1 Bet has ball 0, Keno Express goes to 100)."""
MAX_POSITION = 100
"""Receiver positions 1–100; 0 means the drum has no positions (one tube read at its mouth)."""
MAX_QUALITY = 100


class FunctionCode(IntEnum):
    """The upper 4 bits of the 11-bit id; lower wins arbitration."""

    FAULT = 0x1
    BALL = 0x3
    STATE = 0x4
    TUBE_FULL = 0x5
    COMMAND = 0x6
    ACK = 0x7
    HEARTBEAT = 0xE


class NodeState(IntEnum):
    """Heartbeat byte 0; the CANopen NMT state values, so a CANopen analyser shows them."""

    BOOT = 0x00
    STOPPED = 0x04
    OPERATIONAL = 0x05
    PRE_OPERATIONAL = 0x7F


class FaultKind(IntEnum):
    """Fault frame byte 1."""

    BLOWER = 1
    READER = 2
    GATE = 3
    SENSOR = 4


class Opcode(IntEnum):
    """Command frame byte 0 (echoed in the acknowledgement)."""

    START_MIXING = 0x01
    STOP_MIXING = 0x02
    RELEASE_BALL = 0x03
    QUERY_STATUS = 0x04
    CLEAR_FAULT = 0x05
    RETURN_BALLS = 0x06


class AckResult(IntEnum):
    """Acknowledgement byte 2."""

    OK = 0
    REFUSED = 1
    """Not now (e.g. release while the tube is full, start mixing during a blower fault)."""
    UNKNOWN = 2
    """An opcode this controller does not implement."""
    BAD_ARGUMENT = 3
    FAULT_ACTIVE = 4
    """A fault that blocks the command is latched (a silent or faulty reader blocks releases)."""


# Payload sizes: exact, a frame of any other length is rejected.
_DLC = {
    FunctionCode.FAULT: 4,
    FunctionCode.BALL: 5,
    FunctionCode.STATE: 5,
    FunctionCode.TUBE_FULL: 2,
    FunctionCode.COMMAND: 4,
    FunctionCode.ACK: 3,
    FunctionCode.HEARTBEAT: 5,
}

_FLAG_MIXING = 0x01
_FLAG_AIR = 0x02
_FLAG_GATE = 0x04
_FLAG_TUBE_FULL = 0x08
_FLAGS_RESERVED = 0xF0
_FAULT_BITS = {FaultKind.BLOWER: 0x01, FaultKind.GATE: 0x02, FaultKind.SENSOR: 0x04}
_FAULT_BITS_RESERVED = 0xF8


# --- messages ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Heartbeat:
    """``0x700 + node``: a node is alive. ``uptime`` is seconds since the node booted (u32)."""

    node: int
    state: NodeState
    uptime: int


@dataclass(frozen=True)
class DrumState:
    """``0x200 + N``: the controller's state level (on change and every second).

    ``faults``: drum-level kinds latched now; ``reader_faults``: readers (1-based) with a latched
    fault. They tell a reconnecting host which faults cleared while it was away.
    """

    node: int
    mixing: bool
    air: bool
    gate_open: bool
    tube_full: bool
    tube_count: int
    capacity: int
    faults: frozenset[FaultKind] = frozenset()
    reader_faults: frozenset[int] = frozenset()


@dataclass(frozen=True)
class BallReport:
    """``0x180 + N + reader``: a reader read a ball.

    ``position``: receiver slot (1-based), 0 when none; ``seq`` counts the reader's reads (255 → 0),
    so a frame repeated on the bus is recognisable.
    """

    node: int
    ball: int
    reader: int
    position: int
    quality: int
    seq: int


@dataclass(frozen=True)
class TubeFullReport:
    """``0x280 + N``: the receiver holds its programmed number of balls (the edge; the state
    frame's tube-full flag is the level)."""

    node: int
    count: int
    capacity: int


@dataclass(frozen=True)
class FaultReport:
    """``0x080 + node``: a fault raised (``active``) or cleared. ``reader`` is 1–8 for
    :attr:`FaultKind.READER` and 0 otherwise; ``detail`` is a kind-specific sub-code."""

    node: int
    kind: FaultKind
    reader: int
    detail: int
    active: bool


@dataclass(frozen=True)
class Command:
    """``0x300 + N``: host → controller. ``token`` is the host's choice and comes back in the
    :class:`Ack`. For :attr:`Opcode.CLEAR_FAULT`, ``kind``/``reader`` select the fault
    (``kind`` 0 = every latched fault); they are 0 for every other opcode."""

    node: int
    opcode: Opcode
    token: int = 0
    kind: int = 0
    reader: int = 0


@dataclass(frozen=True)
class Ack:
    """``0x380 + N``: controller → host, the answer to one :class:`Command`."""

    node: int
    opcode: Opcode
    token: int
    result: AckResult


DrumMessage = Heartbeat | DrumState | BallReport | TubeFullReport | FaultReport | Command | Ack


# --- identifiers ---------------------------------------------------------------------------------


def arbitration_id(function: FunctionCode, node: int) -> int:
    """``function << 7 | node``; ``ValueError`` for a node outside 1–127."""
    if not 1 <= node <= MAX_NODE:
        raise EncodeError(f"node id {node} out of range 1-{MAX_NODE}")
    return int(function) << 7 | node


def split_id(identifier: int) -> tuple[int, int]:
    """``(function code, node id)`` of an 11-bit identifier (no validation)."""
    return identifier >> 7 & 0xF, identifier & 0x7F


# --- decoding ------------------------------------------------------------------------------------


def decode(frame: CanFrame) -> DrumMessage | DecodeError[CanFrame]:
    """Decode one frame; see the module docstring and ``docs/protocols/drum.md``."""
    if frame.is_extended_id:
        return DecodeError("extended (29-bit) id: the drum uses 11-bit ids only", frame)
    code, node = split_id(frame.arbitration_id)
    try:
        function = FunctionCode(code)
    except ValueError:
        return DecodeError(f"unknown function code 0x{code:X}", frame)
    if node == 0:
        return DecodeError("node id 0 is reserved", frame)
    expected = _DLC[function]
    if frame.dlc != expected:
        return DecodeError(f"{function.name}: DLC {frame.dlc}, expected {expected}", frame)
    d = frame.data
    match function:
        case FunctionCode.HEARTBEAT:
            return _decode_heartbeat(frame, node, d)
        case FunctionCode.STATE:
            return _decode_state(frame, node, d)
        case FunctionCode.BALL:
            return _decode_ball(frame, node, d)
        case FunctionCode.TUBE_FULL:
            count, capacity = d[0], d[1]
            if capacity == 0 or count < capacity:
                return DecodeError(f"TUBE_FULL: {count} of {capacity} is not full", frame)
            return TubeFullReport(node, count, capacity)
        case FunctionCode.FAULT:
            return _decode_fault(frame, node, d)
        case FunctionCode.COMMAND:
            return _decode_command(frame, node, d)
        case FunctionCode.ACK:
            try:
                opcode, result = Opcode(d[0]), AckResult(d[2])
            except ValueError:
                return DecodeError(f"ACK: unknown opcode 0x{d[0]:02X} or result {d[2]}", frame)
            return Ack(node, opcode, d[1], result)
    raise AssertionError(function)  # pragma: no cover - the match is exhaustive


class Decoder:
    """:func:`decode` as the driver base takes a codec: a frame is a whole message, so nothing is
    kept from one frame to the next."""

    def feed(self, frame: CanFrame) -> list[DrumMessage | DecodeError[CanFrame]]:
        return [decode(frame)]


def _decode_heartbeat(frame: CanFrame, node: int, d: bytes) -> Heartbeat | DecodeError[CanFrame]:
    try:
        state = NodeState(d[0])
    except ValueError:
        return DecodeError(f"HEARTBEAT: unknown node state 0x{d[0]:02X}", frame)
    return Heartbeat(node, state, int.from_bytes(d[1:5], "little"))


def _decode_state(frame: CanFrame, node: int, d: bytes) -> DrumState | DecodeError[CanFrame]:
    flags, count, capacity, fault_bits, reader_bits = d
    if flags & _FLAGS_RESERVED:
        return DecodeError(f"STATE: reserved flag bits set (0x{flags:02X})", frame)
    if fault_bits & _FAULT_BITS_RESERVED:
        return DecodeError(f"STATE: reserved fault bits set (0x{fault_bits:02X})", frame)
    if capacity == 0:
        return DecodeError("STATE: receiver capacity 0", frame)
    full = bool(flags & _FLAG_TUBE_FULL)
    if full != (count >= capacity):
        return DecodeError(f"STATE: tube-full flag {int(full)} with {count}/{capacity}", frame)
    return DrumState(
        node,
        mixing=bool(flags & _FLAG_MIXING),
        air=bool(flags & _FLAG_AIR),
        gate_open=bool(flags & _FLAG_GATE),
        tube_full=full,
        tube_count=count,
        capacity=capacity,
        faults=frozenset(k for k, bit in _FAULT_BITS.items() if fault_bits & bit),
        reader_faults=frozenset(r + 1 for r in range(MAX_READERS) if reader_bits >> r & 1),
    )


def _decode_ball(frame: CanFrame, node: int, d: bytes) -> BallReport | DecodeError[CanFrame]:
    ball, reader, position, quality, seq = d
    if ball > MAX_BALL:
        return DecodeError(f"BALL: ball number {ball} > {MAX_BALL}", frame)
    if not 1 <= reader <= MAX_READERS:
        return DecodeError(f"BALL: reader {reader} out of range 1-{MAX_READERS}", frame)
    if position > MAX_POSITION:
        return DecodeError(f"BALL: position {position} > {MAX_POSITION}", frame)
    if quality > MAX_QUALITY:
        return DecodeError(f"BALL: quality {quality} > {MAX_QUALITY}", frame)
    return BallReport(node, ball, reader, position, quality, seq)


def _decode_fault(frame: CanFrame, node: int, d: bytes) -> FaultReport | DecodeError[CanFrame]:
    active, kind_code, reader, detail = d
    if active > 1:
        return DecodeError(f"FAULT: byte 0 must be 0 (cleared) or 1 (raised), not {active}", frame)
    try:
        kind = FaultKind(kind_code)
    except ValueError:
        return DecodeError(f"FAULT: unknown fault kind {kind_code}", frame)
    if kind is FaultKind.READER:
        if not 1 <= reader <= MAX_READERS:
            return DecodeError(f"FAULT: reader {reader} out of range 1-{MAX_READERS}", frame)
    elif reader != 0:
        return DecodeError(f"FAULT: {kind.name} fault names reader {reader}, must be 0", frame)
    return FaultReport(node, kind, reader, detail, bool(active))


def _decode_command(frame: CanFrame, node: int, d: bytes) -> Command | DecodeError[CanFrame]:
    code, token, kind, reader = d
    try:
        opcode = Opcode(code)
    except ValueError:
        return DecodeError(f"COMMAND: unknown opcode 0x{code:02X}", frame)
    problem = _command_problem(opcode, kind, reader)
    if problem:
        return DecodeError(f"COMMAND: {problem}", frame)
    return Command(node, opcode, token, kind, reader)


def _command_problem(opcode: Opcode, kind: int, reader: int) -> str:
    if opcode is not Opcode.CLEAR_FAULT:
        return "" if kind == reader == 0 else f"{opcode.name} takes no arguments"
    if kind == 0:
        return "" if reader == 0 else "clear-all names no reader"
    if kind not in {k.value for k in FaultKind}:
        return f"unknown fault kind {kind}"
    if kind == FaultKind.READER:
        return "" if 1 <= reader <= MAX_READERS else f"reader {reader} out of range"
    return "" if reader == 0 else f"fault kind {kind} names no reader"


# --- encoding ------------------------------------------------------------------------------------


def _u8(value: int, what: str, high: int = 0xFF, low: int = 0) -> int:
    if isinstance(value, bool) or not low <= value <= high:
        raise EncodeError(f"{what} {value!r} out of range {low}-{high}")
    return value


def encode_command(command: Command) -> CanFrame:
    """The frame for a host command; ``ValueError`` rather than a half-formed frame."""
    problem = _command_problem(command.opcode, command.kind, command.reader)
    if problem:
        raise EncodeError(problem)
    return CanFrame(
        arbitration_id(FunctionCode.COMMAND, command.node),
        bytes(
            (
                Opcode(command.opcode),
                _u8(command.token, "token"),
                _u8(command.kind, "fault kind"),
                _u8(command.reader, "reader"),
            )
        ),
    )


def encode_message(message: DrumMessage) -> CanFrame:
    """The frame a drum node (or the host) sends for ``message``: the inverse of :func:`decode`."""
    match message:
        case Command():
            return encode_command(message)
        case Heartbeat(node, state, uptime):
            if not 0 <= uptime <= 0xFFFF_FFFF:
                raise EncodeError(f"uptime {uptime} is not a u32")
            data = bytes((NodeState(state),)) + uptime.to_bytes(4, "little")
            return CanFrame(arbitration_id(FunctionCode.HEARTBEAT, node), data)
        case DrumState():
            return _encode_state(message)
        case BallReport(node, ball, reader, position, quality, seq):
            data = bytes(
                (
                    _u8(ball, "ball", MAX_BALL),
                    _u8(reader, "reader", MAX_READERS, 1),
                    _u8(position, "position", MAX_POSITION),
                    _u8(quality, "quality", MAX_QUALITY),
                    _u8(seq, "sequence counter"),
                )
            )
            return CanFrame(arbitration_id(FunctionCode.BALL, node), data)
        case TubeFullReport(node, count, capacity):
            if not 1 <= _u8(capacity, "capacity") <= _u8(count, "count"):
                raise EncodeError(f"tube full needs 1 <= capacity <= count ({count}/{capacity})")
            return CanFrame(arbitration_id(FunctionCode.TUBE_FULL, node), bytes((count, capacity)))
        case FaultReport(node, kind, reader, detail, active):
            kind = FaultKind(kind)
            if kind is FaultKind.READER:
                _u8(reader, "reader", MAX_READERS, 1)
            elif reader != 0:
                raise EncodeError(f"a {kind.name} fault names no reader")
            data = bytes((int(active), kind, reader, _u8(detail, "detail")))
            return CanFrame(arbitration_id(FunctionCode.FAULT, node), data)
        case Ack(node, opcode, token, result):
            data = bytes((Opcode(opcode), _u8(token, "token"), AckResult(result)))
            return CanFrame(arbitration_id(FunctionCode.ACK, node), data)
    raise TypeError(f"not a drum message: {message!r}")  # pragma: no cover - exhaustive match


def _encode_state(state: DrumState) -> CanFrame:
    _u8(state.tube_count, "tube count")
    if not _u8(state.capacity, "capacity") >= 1:
        raise EncodeError("capacity must be >= 1")
    if state.tube_full != (state.tube_count >= state.capacity):
        raise EncodeError(
            f"tube_full={state.tube_full} contradicts {state.tube_count}/{state.capacity}"
        )
    flags = (
        (_FLAG_MIXING if state.mixing else 0)
        | (_FLAG_AIR if state.air else 0)
        | (_FLAG_GATE if state.gate_open else 0)
        | (_FLAG_TUBE_FULL if state.tube_full else 0)
    )
    fault_bits = 0
    for kind in state.faults:
        if kind not in _FAULT_BITS:
            raise EncodeError(f"{kind!r} has no state bit (reader faults go in reader_faults)")
        fault_bits |= _FAULT_BITS[kind]
    reader_bits = 0
    for reader in state.reader_faults:
        reader_bits |= 1 << (_u8(reader, "reader", MAX_READERS, 1) - 1)
    data = bytes((flags, state.tube_count, state.capacity, fault_bits, reader_bits))
    return CanFrame(arbitration_id(FunctionCode.STATE, state.node), data)
