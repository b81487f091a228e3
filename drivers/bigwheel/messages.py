"""The tablectl reference money-wheel sensor protocol's vocabulary, sans I/O: its limits and fault
codes, the NMEA checksum and the sentence, the messages the wheel sends and the commands the host
sends, and the encoders (``docs/protocols/bigwheel.md``); the field grammar is
:mod:`tablectl.drivers.bigwheel.fields`. The decoders are in
:mod:`tablectl.drivers.bigwheel.protocol`, which re-exports all of this as the codec's one face.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from tablectl.drivers.bigwheel.fields import (
    CODE_PATTERN,
    DETAIL_PATTERN,
    REASON_PATTERN,
    TOKEN_PATTERN,
    TYPE_PATTERN,
    FieldError,
    check_divider,
    encode_number,
    encode_text,
    parse_code,
    parse_direction,
    parse_number,
)
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.errors import EncodeError

__all__ = [
    "CHECKSUM_MARK",
    "CRLF",
    "FAULT_CODES",
    "FAULT_MEANINGS",
    "GARBAGE",
    "HEARTBEAT_PERIOD",
    "MAX_GARBAGE",
    "MAX_PERIOD_MS",
    "MAX_RAW",
    "MAX_REVOLUTIONS",
    "MAX_SEGMENTS",
    "MAX_SENTENCE",
    "MAX_SPIN",
    "MIN_SEGMENTS",
    "NAK_REASONS",
    "START",
    "TALKER_HOST",
    "TALKER_WHEEL",
    "Ack",
    "ClearFault",
    "Command",
    "Direction",
    "Fault",
    "FaultCleared",
    "Identify",
    "Message",
    "Nak",
    "QueryStatus",
    "Rest",
    "RevolutionTick",
    "SetSegments",
    "SpinStarted",
    "Status",
    "Stopped",
    "StoppedOnDivider",
    "Version",
    "WheelState",
    "checksum",
    "encode_command",
    "encode_message",
    "parse_index",
    "parse_status",
    "sentence",
]

START: Final = b"$"
CHECKSUM_MARK: Final = b"*"
CRLF: Final = b"\r\n"
TALKER_WHEEL: Final = "BW"
"""Talker of every sentence the wheel sensor sends."""
TALKER_HOST: Final = "BH"
"""Talker of every sentence the host sends (so a two-way sniff shows who spoke)."""
MAX_SENTENCE: Final = 82
"""NMEA's limit, counting ``$`` and CR LF: the body between ``$`` and ``*`` is at most 76."""
_MAX_BODY: Final = MAX_SENTENCE - 6
MAX_GARBAGE: Final = 256
"""Garbage between sentences is reported once per run, or once per this many bytes."""
GARBAGE: Final = "garbage between sentences"
"""The :attr:`DecodeError.reason` of bytes outside any sentence (line noise, not a bad one)."""
MAX_RAW: Final = 82
"""``DecodeError.raw`` keeps at most this many bytes."""
MIN_SEGMENTS: Final = 2
MAX_SEGMENTS: Final = 128
"""Segment counts the sensor can be configured for (19, 38, 54 and the 64-segment bonus wheel)."""
MAX_SPIN: Final = 9999
"""Spin numbers run 1–9999 and wrap to 1; 0 in a status means "no spin since power-up"."""
MAX_REVOLUTIONS: Final = 999
MAX_PERIOD_MS: Final = 999_999
HEARTBEAT_PERIOD: Final = 1.0
"""The sensor sends a status every second, idle or spinning (the silence clock's unit)."""

Direction = Literal["cw", "ccw"]
"""Rotation of the wheel seen from the front (the players' side)."""
WheelState = Literal["idle", "spinning", "stopped"]

FAULT_MEANINGS: Final[dict[str, str]] = {
    "IDX": "index sensor: reference mark not seen",
    "ENC": "encoder: counts lost or inconsistent",
    "PTR": "pointer sensor: position unreadable",
    "MOT": "motor or brake fault",
}
"""Reference fault codes; a vendor mapping may add its own three-letter codes. Each meaning fits
the 40-character ``FLT`` detail field, so the sensor can send it verbatim."""
FAULT_CODES: Final = tuple(FAULT_MEANINGS)

NAK_REASONS: Final[dict[str, str]] = {
    "BUSY": "the wheel is spinning; try again when it is at rest",
    "ARG": "a field is out of range",
    "COND": "the fault's condition is still present; cannot clear",
    "TYPE": "unknown sentence type",
}

_STATE_WIRE: Final[dict[str, WheelState]] = {"IDLE": "idle", "SPIN": "spinning", "STOP": "stopped"}
_STATE_TOKEN: Final[dict[WheelState, str]] = {v: k for k, v in _STATE_WIRE.items()}
_DIR_TOKEN: Final[dict[Direction, str]] = {"cw": "CW", "ccw": "CCW"}


# --- checksum and framing ------------------------------------------------------------------------


def checksum(body: bytes) -> int:
    """NMEA checksum: XOR of the bytes between ``$`` and ``*`` (``checksum(b"BHQRY") == 0x50``)."""
    value = 0
    for byte in body:
        value ^= byte
    return value


def _printable(data: bytes) -> bool:
    return all(0x20 <= b <= 0x7E for b in data)


def sentence(body: bytes) -> bytes:
    """``$`` body ``*`` checksum CR LF.

    Raises:
        ValueError: an empty, over-long body, or one holding non-printable bytes, ``$`` or ``*``
            (never sent half-formed).
    """
    if not body or len(body) > _MAX_BODY or not _printable(body) or b"$" in body or b"*" in body:
        raise EncodeError(f"sentence body must be 1-{_MAX_BODY} printable bytes without $ or *")
    return b"$" + body + b"*%02X" % checksum(body) + CRLF


# --- messages the wheel sends --------------------------------------------------------------------

Rest = int | tuple[int, int]
"""Where the pointer rests: a segment index, or ``(a, b)`` for the divider pin between two."""


@dataclass(frozen=True)
class Status:
    """``$BWSTA,<state>,<segments>,<spin>,<dir>,<revs>,<last>[,<fault>...]``: the heartbeat.

    A *level*, sent every :data:`HEARTBEAT_PERIOD` and as the reply to ``QRY``. ``spin`` is the
    current (spinning) or last (stopped) spin number, 0 before the first. ``direction`` and
    ``revolutions`` are those of that spin so far (``-`` and 0 when idle); ``last`` is where the
    pointer rests after it (``-`` on the wire when idle or spinning, ``12`` or ``12:13``).
    ``faults`` are the active fault codes, as trailing fields.
    """

    state: WheelState
    segments: int
    spin: int
    direction: Direction | None = None
    revolutions: int = 0
    last: Rest | None = None
    faults: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpinStarted:
    """``$BWSPN,<spin>,<dir>``: the wheel started moving (or reversed, same ``spin``)."""

    spin: int
    direction: Direction


@dataclass(frozen=True)
class RevolutionTick:
    """``$BWREV,<spin>,<count>,<period_ms>``: the reference mark passed the index sensor.

    ``count`` full revolutions since the start (or the last reversal); ``period_ms`` the time
    the last one took, in milliseconds.
    """

    spin: int
    count: int
    period_ms: int


@dataclass(frozen=True)
class Stopped:
    """``$BWSTP,<spin>,<index>,<revs>,<dir>``: at rest with the pointer inside segment ``index``.

    ``revolutions``: full turns in ``direction`` (the final direction of the spin).
    """

    spin: int
    index: int
    revolutions: int
    direction: Direction


@dataclass(frozen=True)
class StoppedOnDivider:
    """``$BWDIV,<spin>,<a>,<b>,<revs>,<dir>``: at rest with the pointer on the pin between ``a``
    and ``b`` (``b`` is the next segment in physical order: ``a + 1``, or 0 after the last)."""

    spin: int
    before: int
    after: int
    revolutions: int
    direction: Direction


@dataclass(frozen=True)
class Fault:
    """``$BWFLT,<code>,<detail>``: fault ``code`` (see :data:`FAULT_MEANINGS`) became active."""

    code: str
    detail: str = ""


@dataclass(frozen=True)
class FaultCleared:
    """``$BWFCL,<code>``: fault ``code`` is no longer active."""

    code: str


@dataclass(frozen=True)
class Version:
    """``$BWVER,<model>,<firmware>,<serial>``: the reply to ``IDN``."""

    model: str
    firmware: str
    serial: str


@dataclass(frozen=True)
class Ack:
    """``$BWACK,<type>``: the host's ``SEG`` or ``CLR`` was carried out."""

    sentence: str


@dataclass(frozen=True)
class Nak:
    """``$BWNAK,<type>,<reason>``: refused (see :data:`NAK_REASONS`; type ``?`` if unreadable)."""

    sentence: str
    reason: str


Message = (
    Status
    | SpinStarted
    | RevolutionTick
    | Stopped
    | StoppedOnDivider
    | Fault
    | FaultCleared
    | Version
    | Ack
    | Nak
    | DecodeError
)


# --- commands the host sends ---------------------------------------------------------------------


@dataclass(frozen=True)
class QueryStatus:
    """``$BHQRY``: reply with a :class:`Status` now."""


@dataclass(frozen=True)
class SetSegments:
    """``$BHSEG,<n>``: the wheel has ``count`` segments (refused with ``BUSY`` while spinning)."""

    count: int


@dataclass(frozen=True)
class ClearFault:
    """``$BHCLR`` (every clearable fault) or ``$BHCLR,<code>``."""

    code: str | None = None


@dataclass(frozen=True)
class Identify:
    """``$BHIDN``: reply with a :class:`Version`."""


Command = QueryStatus | SetSegments | ClearFault | Identify


# --- fields --------------------------------------------------------------------------------------

_MAX_FAULTS: Final = 8


def parse_index(text: str, what: str = "index") -> int:
    return parse_number(text, what, 0, MAX_SEGMENTS - 1)


def _rest(text: str) -> Rest | None:
    if text == "-":
        return None
    a, colon, b = text.partition(":")
    if not colon:
        return parse_index(a, "last")
    before, after = parse_index(a, "last"), parse_index(b, "last")
    check_divider(before, after)
    return (before, after)


def parse_status(fields: list[str]) -> Status:
    if not 7 <= len(fields) <= 7 + _MAX_FAULTS:
        raise FieldError(f"STA: {len(fields) - 1} fields, expected 6 plus up to 8 fault codes")
    state = _STATE_WIRE.get(fields[1])
    if state is None:
        raise FieldError(f"STA: state {fields[1]!r} not IDLE, SPIN or STOP")
    segments = parse_number(fields[2], "segments", MIN_SEGMENTS, MAX_SEGMENTS)
    spin = parse_number(fields[3], "spin", 0, MAX_SPIN)
    direction = None if fields[4] == "-" else parse_direction(fields[4])
    revolutions = parse_number(fields[5], "revolutions", 0, MAX_REVOLUTIONS)
    last = _rest(fields[6])
    faults = tuple(parse_code(f) for f in fields[7:])
    if len(set(faults)) != len(faults):
        raise FieldError("STA: a fault code is listed twice")
    if state == "stopped" and (last is None or direction is None or spin == 0):
        raise FieldError("STA: STOP needs a spin, a direction and a rest position")
    if state != "stopped" and last is not None:
        raise FieldError("STA: a rest position is only given in STOP")
    if state == "spinning" and (direction is None or spin == 0):
        raise FieldError("STA: SPIN needs a spin number and a direction")
    if state == "idle" and (direction is not None or revolutions):
        raise FieldError("STA: IDLE has no direction or revolutions")
    return Status(state, segments, spin, direction, revolutions, last, faults)


# --- encoders ------------------------------------------------------------------------------------


def _enc_index(value: int, what: str = "index") -> str:
    return encode_number(value, what, 0, MAX_SEGMENTS - 1)


def _enc_direction(direction: Direction) -> str:
    if direction not in _DIR_TOKEN:
        raise EncodeError(f"direction must be 'cw' or 'ccw', not {direction!r}")
    return _DIR_TOKEN[direction]


def _enc_divider(before: int, after: int) -> str:
    try:
        check_divider(before, after)
    except FieldError as exc:
        raise EncodeError(str(exc)) from None
    return f"{_enc_index(before)}:{_enc_index(after)}"


def _enc_rest(last: Rest | None) -> str:
    if last is None:
        return "-"
    if isinstance(last, tuple):
        return _enc_divider(*last)
    return _enc_index(last, "last")


def _enc_status(status: Status) -> str:
    try:
        # Encode through the decoder's own consistency rules: nothing invalid is ever framed.
        fields = [
            "STA",
            _STATE_TOKEN[status.state],
            encode_number(status.segments, "segments", MIN_SEGMENTS, MAX_SEGMENTS),
            encode_number(status.spin, "spin", 0, MAX_SPIN),
            "-" if status.direction is None else _enc_direction(status.direction),
            encode_number(status.revolutions, "revolutions", 0, MAX_REVOLUTIONS),
            _enc_rest(status.last),
            *(encode_text(code, "fault code", CODE_PATTERN) for code in status.faults),
        ]
        parse_status(fields)
    except (KeyError, FieldError) as exc:
        raise EncodeError(f"not a valid status: {exc}") from None
    return ",".join(fields)


def _body(message: Message) -> str:
    match message:
        case Status():
            return _enc_status(message)
        case SpinStarted(spin, direction):
            return f"SPN,{encode_number(spin, 'spin', 1, MAX_SPIN)},{_enc_direction(direction)}"
        case RevolutionTick(spin, count, period_ms):
            return (
                f"REV,{encode_number(spin, 'spin', 1, MAX_SPIN)},"
                f"{encode_number(count, 'count', 1, MAX_REVOLUTIONS)},"
                f"{encode_number(period_ms, 'period', 1, MAX_PERIOD_MS)}"
            )
        case Stopped(spin, index, revolutions, direction):
            return (
                f"STP,{encode_number(spin, 'spin', 1, MAX_SPIN)},{_enc_index(index)},"
                f"{encode_number(revolutions, 'revolutions', 0, MAX_REVOLUTIONS)},"
                f"{_enc_direction(direction)}"
            )
        case StoppedOnDivider(spin, before, after, revolutions, direction):
            return (
                f"DIV,{encode_number(spin, 'spin', 1, MAX_SPIN)},"
                f"{_enc_divider(before, after).replace(':', ',')},"
                f"{encode_number(revolutions, 'revolutions', 0, MAX_REVOLUTIONS)},"
                f"{_enc_direction(direction)}"
            )
        case Fault(code, detail):
            code = encode_text(code, "fault code", CODE_PATTERN)
            return f"FLT,{code},{encode_text(detail, 'detail', DETAIL_PATTERN)}"
        case FaultCleared(code):
            return f"FCL,{encode_text(code, 'fault code', CODE_PATTERN)}"
        case Version(model, firmware, serial):
            return "VER," + ",".join(
                encode_text(text, name, TOKEN_PATTERN)
                for name, text in (("model", model), ("firmware", firmware), ("serial", serial))
            )
        case Ack(kind):
            return f"ACK,{encode_text(kind, 'sentence type', TYPE_PATTERN)}"
        case Nak(kind, reason):
            if kind != "?":
                encode_text(kind, "sentence type", TYPE_PATTERN)
            return f"NAK,{kind},{encode_text(reason, 'reason', REASON_PATTERN)}"
        case DecodeError():
            raise EncodeError("a DecodeError has no wire form")
    raise TypeError(f"not a big-wheel message: {message!r}")  # pragma: no cover - exhaustive


def encode_message(message: Message) -> bytes:
    """The sentence the wheel sends for ``message`` (simulator and tests).

    Raises:
        ValueError: a field out of range or an inconsistent status (nothing invalid is framed).
    """
    return sentence((TALKER_WHEEL + _body(message)).encode("ascii"))


def encode_command(command: Command) -> bytes:
    """The sentence the host sends for ``command``.

    Raises:
        ValueError: a segment count or fault code out of range.
    """
    match command:
        case QueryStatus():
            body = "QRY"
        case SetSegments(count):
            body = f"SEG,{encode_number(count, 'segments', MIN_SEGMENTS, MAX_SEGMENTS)}"
        case ClearFault(code):
            body = "CLR" if code is None else f"CLR,{encode_text(code, 'fault code', CODE_PATTERN)}"
        case Identify():
            body = "IDN"
        case _:  # pragma: no cover - exhaustive
            raise TypeError(f"not a big-wheel command: {command!r}")
    return sentence((TALKER_HOST + body).encode("ascii"))
