"""The tablectl reference money-wheel sensor protocol, sans I/O (``docs/protocols/bigwheel.md``).

Bytes in, messages out; commands in, bytes out. No asyncio, serial or clock: the driver owns the
port and the time, and the simulator reuses this module to speak as the sensor
(:func:`encode_message`, :class:`CommandDecoder`), so the two cannot drift apart.

Why this framing. Big-wheel sensor vendors keep their protocols closed; this one is ours. It is
NMEA 0183 sentence framing, the convention of most serial sensors a technician meets (GPS,
anemometers, encoders), so any NMEA viewer or a terminal at 9600 baud reads a sniff::

    $BWSTP,17,12,4,CW*67<CR><LF>
    |  |   '--------'  '-- checksum: XOR of every byte between $ and *, two hex digits
    |  '- sentence type  fields, comma separated
    '- talker: BW = the wheel sensor, BH = the host

* ``$`` can never occur inside a sentence, so after any line noise the receiver resynchronises at
  the next ``$`` and loses at most one sentence.
* The XOR checksum is NMEA's. It misses two flips in the same bit column, which a CRC would
  catch; we accept that for tool compatibility because every field is also validated strictly
  (an index out of range, a wrong arity or a bad token is an error), and because the status
  heartbeat repeats the last result as a *level* once a second, so a single corrupted fact is
  contradicted within a second (the interpreter reconciles against it).
* At most :data:`MAX_SENTENCE` bytes including ``$`` and CR LF (NMEA's 82).

Every field is validated; a sentence that fails becomes a :class:`DecodeError` value (the driver
counts them), never an exception.

The vocabulary (limits, fault codes, the checksum and the sentence, the message and command types
and the encoders) is :mod:`tablectl.drivers.bigwheel.messages`, the field grammar
:mod:`tablectl.drivers.bigwheel.fields`; this module adds the framing and the decoders, and
re-exports the vocabulary so that it stays the codec's one face.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from tablectl.drivers.bigwheel.fields import (
    DETAIL_PATTERN,
    REASON_PATTERN,
    TOKEN_PATTERN,
    TYPE_PATTERN,
    FieldError,
    check_arity,
    check_divider,
    parse_code,
    parse_direction,
    parse_number,
)
from tablectl.drivers.bigwheel.messages import (
    CHECKSUM_MARK,
    CRLF,
    FAULT_CODES,
    FAULT_MEANINGS,
    GARBAGE,
    HEARTBEAT_PERIOD,
    MAX_GARBAGE,
    MAX_PERIOD_MS,
    MAX_RAW,
    MAX_REVOLUTIONS,
    MAX_SEGMENTS,
    MAX_SENTENCE,
    MAX_SPIN,
    MIN_SEGMENTS,
    NAK_REASONS,
    START,
    TALKER_HOST,
    TALKER_WHEEL,
    Ack,
    ClearFault,
    Command,
    Direction,
    Fault,
    FaultCleared,
    Identify,
    Message,
    Nak,
    QueryStatus,
    Rest,
    RevolutionTick,
    SetSegments,
    SpinStarted,
    Status,
    Stopped,
    StoppedOnDivider,
    Version,
    WheelState,
    checksum,
    encode_command,
    encode_message,
    parse_index,
    parse_status,
    sentence,
)
from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons

__all__ = [
    "CHECKSUM_MARK",
    "CRLF",
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
    "START",
    "TALKER_HOST",
    "TALKER_WHEEL",
    "Ack",
    "ClearFault",
    "Command",
    "CommandDecoder",
    "DecodeError",
    "Decoder",
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
    "sentence",
]

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

    Sentences split anywhere decode the same; garbage, bad checksums, a wrong talker (``$BH``:
    the host's own echo) and bad fields become :class:`DecodeError` values (counted in
    :attr:`errors`) and decoding resumes at the next ``$``.
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
