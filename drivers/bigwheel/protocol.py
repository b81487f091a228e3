"""The tablectl reference money-wheel sensor protocol, sans I/O (``docs/protocols/bigwheel.md``).

The simulator speaks as the sensor with this module too, so the two cannot drift apart. Vendors
keep their protocols closed; this one is ours, in NMEA 0183 sentence framing so that any NMEA
viewer or a 9600-baud terminal reads a sniff::

    $BWSTP,17,12,4,CW*67<CR><LF>
    |  |   '--------'  '-- checksum: XOR of every byte between $ and *, two hex digits
    |  '- sentence type  fields, comma separated
    '- talker: BW = the wheel sensor, BH = the host

``$`` never occurs inside a sentence, so the receiver resynchronises at the next one. NMEA's XOR
misses two flips in one bit column; accepted for tool compatibility because every field is
validated strictly and the heartbeat repeats the last result as a level every second. At most
:data:`MAX_SENTENCE` bytes including ``$`` and CR LF (NMEA's 82). A bad sentence is a
:class:`DecodeError` value, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons, Version
from tablectl.drivers.errors import EncodeError

__all__ = [
    "CHECKSUM_MARK",
    "CODE_PATTERN",
    "CRLF",
    "DETAIL_PATTERN",
    "FAULT_CODES",
    "FAULT_MEANINGS",
    "FRAMING",
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
    "REASON_PATTERN",
    "START",
    "TALKER_HOST",
    "TALKER_WHEEL",
    "TOKEN_PATTERN",
    "TYPE_PATTERN",
    "Ack",
    "ClearFault",
    "Command",
    "CommandDecoder",
    "DecodeError",
    "Decoder",
    "Direction",
    "Fault",
    "FaultCleared",
    "FieldError",
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
    "check_arity",
    "check_divider",
    "checksum",
    "encode_command",
    "encode_message",
    "encode_number",
    "encode_text",
    "parse_code",
    "parse_direction",
    "parse_index",
    "parse_number",
    "parse_status",
    "sentence",
]


_NUMBER: Final = re.compile(r"\d{1,6}")
CODE_PATTERN: Final = re.compile(r"[A-Z]{3}")
TYPE_PATTERN: Final = re.compile(r"[A-Z]{3}")
REASON_PATTERN: Final = re.compile(r"[A-Z]{1,8}")
TOKEN_PATTERN: Final = re.compile(r"[\x21-\x23\x25-\x29\x2b\x2d-\x7e]{1,20}")
"""Model/firmware/serial: 1–20 printable characters without space, ``$``, ``*`` or ``,``."""
DETAIL_PATTERN: Final = re.compile(r"[\x20-\x23\x25-\x29\x2b\x2d-\x7e]{0,40}")
"""Fault detail: 0–40 printable characters without ``$``, ``*`` or ``,``."""

_DIR_WIRE: Final[dict[str, Direction]] = {"CW": "cw", "CCW": "ccw"}


class FieldError(ValueError):
    """A field failed validation; becomes a :class:`DecodeError` with this message."""


def parse_number(text: str, what: str, low: int, high: int) -> int:
    """``text`` as 1–6 decimal digits in ``low``–``high``, or :class:`FieldError`."""
    if not _NUMBER.fullmatch(text):
        raise FieldError(f"{what}: {text!r} is not 1-6 decimal digits")
    value = int(text)
    if not low <= value <= high:
        raise FieldError(f"{what}: {value} not in {low}-{high}")
    return value


def parse_direction(text: str) -> Direction:
    """``CW`` or ``CCW`` as a :data:`~tablectl.drivers.bigwheel.protocol.Direction`."""
    value = _DIR_WIRE.get(text)
    if value is None:
        raise FieldError(f"direction {text!r} is not CW or CCW")
    return value


def check_divider(before: int, after: int) -> None:
    """:class:`FieldError` unless ``after`` is the segment after ``before`` (a divider pin)."""
    if after != before + 1 and not (after == 0 and before > 0):
        raise FieldError(f"divider {before}:{after}: b must be a + 1, or 0 after the last")


def parse_code(text: str) -> str:
    """A three-letter fault code, or :class:`FieldError`."""
    if not CODE_PATTERN.fullmatch(text):
        raise FieldError(f"fault code {text!r} is not three capital letters")
    return text


def check_arity(fields: list[str], count: int) -> None:
    """:class:`FieldError` unless the sentence has ``count`` fields, its type included."""
    if len(fields) != count:
        raise FieldError(f"{fields[0]}: {len(fields) - 1} fields, expected {count - 1}")


def encode_number(value: int, what: str, low: int, high: int) -> str:
    """An integer in ``low``–``high`` as decimal digits, or :class:`EncodeError`."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise EncodeError(f"{what} must be an integer {low}-{high}, not {value!r}")
    return str(value)


def encode_text(text: str, what: str, pattern: re.Pattern[str]) -> str:
    """``text`` unchanged if it matches ``pattern``, else :class:`EncodeError`."""
    if not pattern.fullmatch(text):
        raise EncodeError(f"{what} {text!r} does not match {pattern.pattern}")
    return text


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
    """``$`` body ``*`` checksum CR LF; ``ValueError`` for a body that cannot be framed whole."""
    if not body or len(body) > _MAX_BODY or not _printable(body) or b"$" in body or b"*" in body:
        raise EncodeError(f"sentence body must be 1-{_MAX_BODY} printable bytes without $ or *")
    return b"$" + body + b"*%02X" % checksum(body) + CRLF


# --- messages the wheel sends --------------------------------------------------------------------

Rest = int | tuple[int, int]
"""Where the pointer rests: a segment index, or ``(a, b)`` for the divider pin between two."""


@dataclass(frozen=True)
class Status:
    """``$BWSTA,<state>,<segments>,<spin>,<dir>,<revs>,<last>[,<fault>...]``: the heartbeat.

    A level, every :data:`HEARTBEAT_PERIOD` and in reply to ``QRY``. ``spin``: current or last spin
    (0 before the first); ``direction``/``revolutions`` of that spin so far (``-`` and 0 when idle);
    ``last``: where the pointer rests (``-`` idle or spinning, ``12`` or ``12:13``); trailing
    faults.
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

    ``count`` revolutions since the start (or last reversal); ``period_ms`` the last one's duration.
    """

    spin: int
    count: int
    period_ms: int


@dataclass(frozen=True)
class Stopped:
    """``$BWSTP,<spin>,<index>,<revs>,<dir>``: at rest in segment ``index``; ``dir`` is final."""

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
    """The sentence the wheel sends for ``message``; ``ValueError`` rather than a bad frame."""
    return sentence((TALKER_WHEEL + _body(message)).encode("ascii"))


def encode_command(command: Command) -> bytes:
    """The sentence the host sends for ``command``; ``ValueError`` for a field out of range."""
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


FRAMING: Final = Framing(
    start=START[0],
    start_required=True,
    printable=True,
    max_length=MAX_SENTENCE - len(CRLF),
    max_raw=MAX_RAW,
    max_garbage=MAX_GARBAGE,
    reasons=Reasons(
        garbage=GARBAGE,
        restarted="sentence restarted ($ before CR LF)",
        too_long="sentence too long",
        non_printable="non-printable byte in sentence",
    ),
)
"""``$ … *HH`` up to CR or LF; the checksum is inside the frame, checked by the decoders."""


def _parse_message(fields: list[str]) -> Message:
    kind = fields[0]
    match kind:
        case "STA":
            return parse_status(fields)
        case "SPN":
            check_arity(fields, 3)
            return SpinStarted(
                parse_number(fields[1], "spin", 1, MAX_SPIN), parse_direction(fields[2])
            )
        case "REV":
            check_arity(fields, 4)
            return RevolutionTick(
                parse_number(fields[1], "spin", 1, MAX_SPIN),
                parse_number(fields[2], "count", 1, MAX_REVOLUTIONS),
                parse_number(fields[3], "period", 1, MAX_PERIOD_MS),
            )
        case "STP":
            check_arity(fields, 5)
            return Stopped(
                parse_number(fields[1], "spin", 1, MAX_SPIN),
                parse_index(fields[2]),
                parse_number(fields[3], "revolutions", 0, MAX_REVOLUTIONS),
                parse_direction(fields[4]),
            )
        case "DIV":
            check_arity(fields, 6)
            before, after = parse_index(fields[2]), parse_index(fields[3])
            check_divider(before, after)
            return StoppedOnDivider(
                parse_number(fields[1], "spin", 1, MAX_SPIN),
                before,
                after,
                parse_number(fields[4], "revolutions", 0, MAX_REVOLUTIONS),
                parse_direction(fields[5]),
            )
        case "FLT":
            check_arity(fields, 3)
            if not DETAIL_PATTERN.fullmatch(fields[2]):
                raise FieldError("FLT: detail longer than 40 characters")
            return Fault(parse_code(fields[1]), fields[2])
        case "FCL":
            check_arity(fields, 2)
            return FaultCleared(parse_code(fields[1]))
        case "VER":
            check_arity(fields, 4)
            for name, text in zip(("model", "firmware", "serial"), fields[1:], strict=True):
                if not TOKEN_PATTERN.fullmatch(text):
                    raise FieldError(f"VER: {name} {text!r} is not 1-20 printable characters")
            return Version(fields[1], fields[2], fields[3])
        case "ACK":
            check_arity(fields, 2)
            if not TYPE_PATTERN.fullmatch(fields[1]):
                raise FieldError(f"ACK: {fields[1]!r} is not a sentence type")
            return Ack(fields[1])
        case "NAK":
            check_arity(fields, 3)
            if not (TYPE_PATTERN.fullmatch(fields[1]) or fields[1] == "?"):
                raise FieldError(f"NAK: {fields[1]!r} is not a sentence type or ?")
            if not REASON_PATTERN.fullmatch(fields[2]):
                raise FieldError(f"NAK: reason {fields[2]!r} is not 1-8 capital letters")
            return Nak(fields[1], fields[2])
    raise FieldError(f"unknown sentence type {kind!r}")


def _parse_command(fields: list[str]) -> Command:
    kind = fields[0]
    match kind:
        case "QRY":
            check_arity(fields, 1)
            return QueryStatus()
        case "SEG":
            check_arity(fields, 2)
            return SetSegments(parse_number(fields[1], "segments", MIN_SEGMENTS, MAX_SEGMENTS))
        case "CLR":
            if len(fields) == 1:
                return ClearFault()
            check_arity(fields, 2)
            return ClearFault(parse_code(fields[1]))
        case "IDN":
            check_arity(fields, 1)
            return Identify()
    raise FieldError(f"unknown command type {kind!r}")


# --- sentences ---------------------------------------------------------------------------------

_HEX: Final = frozenset(b"0123456789ABCDEFabcdef")


def _cap(raw: bytes | bytearray) -> bytes:
    return bytes(raw[:MAX_RAW])


def _checked(sentence: bytes) -> bytes | DecodeError:
    """The body (between ``$`` and ``*``) of a ``$…*HH`` sentence from the scanner, or why its
    checksum part is wrong."""
    raw = _cap(sentence)
    body, mark, check = sentence[1:].rpartition(b"*")
    if not mark:
        return DecodeError("no checksum (*HH) before the terminator", raw)
    if len(check) != 2 or not all(c in _HEX for c in check):
        return DecodeError("checksum is not two hex digits", raw)
    if not body or b"*" in body:
        return DecodeError("empty body or a second *", raw)
    got, want = int(check, 16), checksum(body)
    if got != want:
        return DecodeError(f"checksum mismatch: got {got:02X}, computed {want:02X}", raw)
    return body


_Parsed = Message | Command


def _decode(
    scanner: FrameScanner,
    data: bytes,
    talker: str,
    parse: Callable[[list[str]], _Parsed],
) -> list[_Parsed]:
    out: list[_Parsed] = []
    for scanned in scanner.feed(data):
        item = scanned if isinstance(scanned, DecodeError) else _checked(scanned)
        if isinstance(item, DecodeError):
            out.append(item)
            continue
        # The scanner checked printable ASCII, so decoding cannot fail.
        text = item.decode("ascii")
        if not text.startswith(talker):
            out.append(DecodeError(f"talker is not {talker}", _cap(b"$" + item)))
            continue
        fields = text[len(talker) :].split(",")
        if not TYPE_PATTERN.fullmatch(fields[0]):
            out.append(DecodeError("sentence type is not three letters", _cap(b"$" + item)))
            continue
        try:
            out.append(parse(fields))
        except FieldError as exc:
            out.append(DecodeError(str(exc), _cap(b"$" + item)))
    return out


class Decoder:
    """The host's side: wheel bytes in, :data:`Message` values out (errors included).

    A wrong talker (``$BH``: the host's own echo) is a :class:`DecodeError` like a bad checksum.
    """

    def __init__(self) -> None:
        self._scanner = FrameScanner(FRAMING)
        self.errors = 0
        """Count of :class:`DecodeError` values produced so far."""

    def feed(self, data: bytes) -> list[Message]:
        out: list[Message] = []
        for item in _decode(self._scanner, data, TALKER_WHEEL, _parse_message):
            if not isinstance(item, QueryStatus | SetSegments | ClearFault | Identify):
                out.append(item)
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out


class CommandDecoder:
    """The wheel's side: host bytes in, :data:`Command` (or :class:`DecodeError`) out."""

    def __init__(self) -> None:
        self._scanner = FrameScanner(FRAMING)
        self.errors = 0

    def feed(self, data: bytes) -> list[Command | DecodeError]:
        out: list[Command | DecodeError] = []
        for item in _decode(self._scanner, data, TALKER_HOST, _parse_command):
            if isinstance(item, QueryStatus | SetSegments | ClearFault | Identify | DecodeError):
                out.append(item)
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out
