"""Cammegh Slingshot 2 (SS2 / Mercury) roulette wheel protocol, sans I/O.

The simulator speaks as the wheel with this module too. Facts from the vendor's developer guide
V2.07/V2.10, summarised in ``docs/protocols/cammegh-ss2.md``. Framing (:data:`FRAMING`): ``*`` to
CR and/or LF (the wheel sends ``\\r\\n``). The bare winning number (two characters, space padded,
port 1) and the ``*I 4`` sensor stream (``bs n``, ``bn nn``) have no ``*``, so it cannot be
required; a ``*`` inside a line means its terminator was lost. Empty lines are skipped. A bad line
is a :class:`DecodeError` value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons
from tablectl.drivers.errors import EncodeError

__all__ = [
    "COMMAND_LETTERS",
    "CR",
    "FAULT_MEANINGS",
    "FRAMING",
    "LF",
    "MAX_LINE",
    "START",
    "BallInPocket",
    "BareNumber",
    "ChiSquare",
    "Command",
    "CommandDecoder",
    "DecodeError",
    "Decoder",
    "FaultReport",
    "Message",
    "Number",
    "Reply",
    "SensorPassed",
    "Status",
    "WarningBit",
    "encode_command",
    "encode_message",
    "parse_number",
]

START = b"*"
CR = b"\r"
LF = b"\n"
TERMINATOR = b"\r\n"
MAX_LINE = 80
"""Longest line we accept; a longer run without a terminator is garbage and is dropped."""

FRAMING: Final = Framing(
    start=START[0],
    max_length=MAX_LINE,
    max_raw=MAX_LINE,
    reasons=Reasons(restarted="packet start inside a line", too_long="line too long"),
)

Number = int | Literal["00"]
"""A pocket: 0–36 (39/40-pocket wheels on firmware 2.52 go to 38), or the string ``"00"``."""


class WarningBit:
    """Warning bits of the status line (one hex digit, bitwise OR)."""

    BALL_NOT_SENSED = 1
    """Ball removed or not sensed (state 4 + this for ≥5 s = no ball)."""
    SAME_DIRECTION = 2
    """Ball rotating in the rotor's direction during state 3 = misspin."""
    SENSOR_FAULT = 4
    """Sensor stuck, motor or encoder fault."""
    LAUNCH_FAILED = 8
    """Ball launch failed, retrying (misfire)."""


# --- messages the wheel sends ------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """``*X;<state>;<spin>;<win>;<warn>;<speed>;<dir>``: a status level, repeated every 500 ms.

    ``last_number`` ``None``: two spaces, before the first result. ``rotor_rpm_x10``: tenths of rpm;
    ``rotor_direction`` 0 = clockwise.
    """

    state: int
    spin: int
    last_number: Number | None
    warnings: int
    rotor_rpm_x10: int
    rotor_direction: int


@dataclass(frozen=True)
class BareNumber:
    """The legacy bare winning-number line (``" 7"``, ``"25"``, ``" 0"``, ``"00"``)."""

    number: Number


@dataclass(frozen=True)
class Reply:
    """A reply to a command: ``*<letter> <text>`` (``*P OK``, ``*K CAM``, ``*V …``, ``*R OK``)."""

    letter: str
    text: str


@dataclass(frozen=True)
class FaultReport:
    """``*F <code>``: a self-test result or (mode bit 256) a fault during play."""

    code: int


@dataclass(frozen=True)
class ChiSquare:
    """``*w`` reply: the wheel's own chi-square value and percentage over its stored results."""

    value: float
    percent: float


@dataclass(frozen=True)
class SensorPassed:
    """``bs n``: the ball passed in-rim sensor ``n`` (0–2); from the ``*I 4`` stream."""

    sensor: int


@dataclass(frozen=True)
class BallInPocket:
    """``bn nn``: the ball sensed in pocket ``nn``; from the ``*I 4`` stream."""

    number: Number


Message = (
    Status
    | BareNumber
    | Reply
    | FaultReport
    | ChiSquare
    | SensorPassed
    | BallInPocket
    | DecodeError
)

FAULT_MEANINGS: dict[int, str] = {
    0: "ok",
    1: "hardware fault",
    2: "no ball",
    3: "no ball position",
    4: "wrong ball direction",
    5: "motor fault",
    6: "encoder fault or wheel not calibrated",
    7: "cannot play clockwise",
    8: "cannot play anticlockwise",
    11: "sensor 0 stuck on",
    12: "sensor 1 stuck on",
    13: "sensor 2 stuck on",
    21: "sensor 0 stuck off",
    22: "sensor 1 stuck off",
    23: "sensor 2 stuck off",
    100: "self-test timeout",
}
"""``*F`` codes from the vendor's guide; used by diagnostics and alarm texts."""

_STATUS = re.compile(rb"\*X;([1-6]);(\d{3});(  |[ \d]\d);([0-9A-Fa-f]);(\d{3});([01])")
_BARE = re.compile(rb"[ \d]\d")
_FAULT = re.compile(rb"\*F (\d{1,3})")
_CHI = re.compile(rb"\*w (\d+(?:\.\d+)?) (\d+(?:\.\d+)?)")
_REPLY = re.compile(rb"\*([A-Za-z])(?: ([\x20-\x7e]*))?")
_SENSOR = re.compile(rb"bs ([0-2])")
_POCKET = re.compile(rb"bn ([ \d]\d)")


def parse_number(field: bytes) -> Number | None:
    """Two characters, space padded, to a pocket number, or ``None``; ``"00"`` is the american
    double zero, and no SS2 wheel has a number above 38.
    """
    if field == b"00":
        return "00"
    if not _BARE.fullmatch(field):
        return None
    value = int(field.strip() or b"-1")
    return value if 0 <= value <= 38 else None


def _format_number(number: Number) -> bytes:
    if number == "00":
        return b"00"
    return f"{number:2d}".encode()


def decode_line(line: bytes) -> Message:
    """Decode one line (without its terminator)."""
    if line.startswith(START):
        if m := _STATUS.fullmatch(line):
            state, spin, win, warn, speed, direction = m.groups()
            last: Number | None = None
            if win != b"  ":
                last = parse_number(win)
                if last is None:
                    return DecodeError(f"status: bad winning number {win!r}", line)
            spin_no = int(spin)
            if not 0 <= spin_no <= 256:
                return DecodeError(f"status: spin number {spin_no} out of range", line)
            return Status(int(state), spin_no, last, int(warn, 16), int(speed), int(direction))
        if line.startswith(b"*X"):
            return DecodeError("status: malformed fields", line)
        if m := _FAULT.fullmatch(line):
            return FaultReport(int(m.group(1)))
        if m := _CHI.fullmatch(line):
            return ChiSquare(float(m.group(1)), float(m.group(2)))
        if m := _REPLY.fullmatch(line):
            return Reply(m.group(1).decode("ascii"), (m.group(2) or b"").decode("ascii"))
        return DecodeError("packet: not printable ASCII or no command letter", line)
    if m := _SENSOR.fullmatch(line):
        return SensorPassed(int(m.group(1)))
    if m := _POCKET.fullmatch(line):
        number = parse_number(m.group(1))
        if number is None:
            return DecodeError("sensor stream: bad pocket", line)
        return BallInPocket(number)
    if len(line) == 2:
        number = parse_number(line)
        if number is not None:
            return BareNumber(number)
    return DecodeError("unrecognised line", line)


class Decoder:
    """What the wheel sends: ``feed(bytes) -> list[Message]``, resynchronising at a terminator."""

    def __init__(self) -> None:
        self._lines = FrameScanner(FRAMING)
        self.errors = 0
        """Count of :class:`DecodeError` values produced so far."""

    def feed(self, data: bytes) -> list[Message]:
        out = [
            item if isinstance(item, DecodeError) else decode_line(item)
            for item in self._lines.feed(data)
            if item != b""
        ]
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out


def encode_message(message: Message) -> bytes:
    """What the wheel would send for ``message`` (used by the simulator and the tests)."""
    match message:
        case Status(state, spin, last, warn, speed, direction):
            win = b"  " if last is None else _format_number(last)
            return b"*X;%d;%03d;%s;%X;%03d;%d\r\n" % (state, spin, win, warn, speed, direction)
        case BareNumber(number):
            return _format_number(number) + TERMINATOR
        case Reply(letter, text):
            return (
                b"*"
                + letter.encode("ascii")
                + (b" " + text.encode("ascii") if text else b"")
                + TERMINATOR
            )
        case FaultReport(code):
            return b"*F %d\r\n" % code
        case ChiSquare(value, percent):
            return f"*w {value:.2f} {percent:.1f}\r\n".encode()
        case SensorPassed(sensor):
            return b"bs %d\r\n" % sensor
        case BallInPocket(number):
            return b"bn " + _format_number(number) + TERMINATOR
        case DecodeError(_, raw):
            return raw + TERMINATOR
    raise TypeError(f"not an SS2 message: {message!r}")  # pragma: no cover - exhaustive match


# --- commands the host sends ---------------------------------------------------------------------

COMMAND_LETTERS = frozenset("PRSVKuXIAdqwWMsTCFo")
"""Command letters of the guide. ``encode_command`` refuses anything else."""

_COMMAND = re.compile(rb"\*([A-Za-z])(?:[ ;]([\x20-\x7e]*))?")


@dataclass(frozen=True)
class Command:
    """A host command: letter and argument (``Command("o", "1159")`` → ``*o 1159``)."""

    letter: str
    argument: str = ""

    @classmethod
    def restart(cls) -> Command:
        """``*R``: back to state 1; also the host's acknowledgement of a misspin."""
        return cls("R")

    @classmethod
    def poll(cls) -> Command:
        """``*X``: one status line."""
        return cls("X")

    @classmethod
    def identify(cls) -> Command:
        """``*K``: ``*K CAM`` when idle; starts a game in host-start mode."""
        return cls("K")

    @classmethod
    def version(cls) -> Command:
        """``*V``: the full firmware version."""
        return cls("V")

    @classmethod
    def power(cls, on: bool) -> Command:
        """``*P 1`` / ``*P 0``."""
        return cls("P", "1" if on else "0")

    @classmethod
    def sensor_stream(cls, on: bool) -> Command:
        """``*I 4`` / ``*I 0``: the ball-sensor event stream (port 1 only)."""
        return cls("I", "4" if on else "0")

    @classmethod
    def operating_mode(cls, mode: int) -> Command:
        """``*o <sum>``: set the operating-mode bits (stored in NVRAM, echoed)."""
        if not 0 <= mode <= 0xFFFF:
            raise EncodeError(f"operating mode {mode} is not a 16-bit sum")
        return cls("o", str(mode))

    @classmethod
    def self_test(cls) -> Command:
        """``*F``: self-test (state 6 only; up to 5 minutes)."""
        return cls("F")


def encode_command(command: Command) -> bytes:
    """``*<letter>[ <argument>]\\r\\n``.

    ``ValueError`` for an unknown letter or an argument that is unprintable, too long or holds ``*``
    (the wheel would take it for a new packet).
    """
    if command.letter not in COMMAND_LETTERS:
        raise EncodeError(f"unknown SS2 command letter {command.letter!r}")
    arg = command.argument
    if (
        any(not (0x20 <= ord(c) <= 0x7E) for c in arg)
        or START.decode() in arg
        or len(arg) > MAX_LINE - 4
    ):
        raise EncodeError(f"SS2 command argument must be short printable ASCII without *: {arg!r}")
    sep = " " if arg else ""
    return f"*{command.letter}{sep}{arg}\r\n".encode("ascii")


class CommandDecoder:
    """The wheel's side: host bytes in, :class:`Command` (or :class:`DecodeError`) out."""

    def __init__(self) -> None:
        self._lines = FrameScanner(FRAMING)

    def feed(self, data: bytes) -> list[Command | DecodeError]:
        out: list[Command | DecodeError] = []
        for item in self._lines.feed(data):
            if isinstance(item, DecodeError):
                out.append(item)
                continue
            if not item:
                continue
            m = _COMMAND.fullmatch(item)
            if m is None or m.group(1).decode() not in COMMAND_LETTERS:
                out.append(DecodeError("not an SS2 command", item))
                continue
            out.append(Command(m.group(1).decode(), (m.group(2) or b"").decode("ascii")))
        return out
