"""What every device codec shares: the :class:`DecodeError` value and the one frame scanner.

Pure. Every byte-stream protocol has reads that end anywhere and noise inside messages, and one
bad message must cost only itself; :class:`FrameScanner` solves that once, per a :class:`Framing`
declared by each protocol (the families' old scanners differed in delimiters, texts and bugs).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final, Generic

from typing_extensions import TypeVar

__all__ = ["DecodeError", "FrameScanner", "Framing", "Reasons", "Version"]

RawT = TypeVar("RawT", default=bytes)


@dataclass(frozen=True)
class DecodeError(Generic[RawT]):
    """Input that is not a valid frame or message: returned, never raised.

    A raising decoder would end the read loop at the first noisy byte. ``raw`` is the offending
    input, capped to fit a log line (bytes of a stream, or the whole frame:
    ``DecodeError[CanFrame]``).
    """

    reason: str
    raw: RawT


@dataclass(frozen=True)
class Version:
    """A device's identity, the reply to a version query: the big wheel's ``$BWVER,<model>,
    <firmware>,<serial>`` (to ``IDN``), the shuffler's ``VERS;<model>;<firmware>;<serial>``."""

    model: str
    firmware: str
    serial: str


@dataclass(frozen=True)
class Reasons:
    """One protocol's framing error texts: its behaviour (logs and simulators match them)."""

    garbage: str = "garbage between frames"
    """Bytes outside any frame (framings with a required start byte)."""
    restarted: str = "frame restarted"
    """A start byte inside a frame: the end of the previous one was lost."""
    too_long: str = "frame too long"
    non_printable: str = "non-printable byte in frame"
    empty: str = "empty frame"
    """An end marker right after the start byte."""
    trailer_cut: str = "frame truncated in its trailer"
    """A start byte inside the trailer."""
    bad_trailer: str = "bad byte in the trailer"


_CR_LF: Final = (b"\r", b"\n")


@dataclass(frozen=True)
class Framing:
    """How one protocol delimits its frames (rules: :class:`FrameScanner`).

    An end marker and trailer (``STX … ETX CC``) belong to the frame; CR/LF terminators do not.
    """

    max_length: int
    """Most bytes of a frame from its start byte up to its terminator or end marker."""
    terminators: tuple[bytes, ...] = _CR_LF
    """Byte sequences (one or two bytes each) that end a frame and are not part of it."""
    start: int | None = None
    """The byte that opens a frame."""
    start_required: bool = False
    """True: only ``start`` opens a frame, and bytes outside frames are garbage. False: any byte
    opens a line, and ``start`` inside a line means its terminator was lost."""
    end: int | None = None
    """A byte that ends a frame and belongs to it (followed by ``trailer_length`` bytes)."""
    trailer_length: int = 0
    trailer_bytes: frozenset[int] = frozenset()
    """The bytes a trailer may hold (a checksum's hex digits)."""
    separators: bytes = b""
    """Bytes allowed between frames (they end a garbage run and are never reported)."""
    printable: bool = False
    """Inside a frame only 0x20-0x7E are allowed."""
    max_raw: int = 80
    """:attr:`DecodeError.raw` keeps at most this many bytes."""
    max_garbage: int = 256
    """A run of garbage is reported when it ends, or once per this many bytes."""
    report_overflow_at_end: bool = False
    """False: an over-long frame is reported at once and the rest of it dropped quietly. True: its
    first ``max_length`` bytes are kept and reported when its terminator arrives (a barcode line
    is one scan, rejected as a whole when it ends)."""
    reasons: Reasons = field(default_factory=Reasons)

    def __post_init__(self) -> None:
        if any(not 1 <= len(t) <= 2 for t in self.terminators):
            raise ValueError("terminators are one or two bytes long")
        if self.start_required and self.start is None:
            raise ValueError("start_required needs a start byte")
        if self.end is not None and not self.start_required:
            raise ValueError("an end marker needs a required start byte")
        if self.trailer_length and self.end is None:
            raise ValueError("a trailer follows an end marker")


_OUTSIDE, _FRAME, _DISCARD, _TRAILER = range(4)


class FrameScanner:
    """Frames from a byte stream split or garbled anywhere, per one :class:`Framing`.

    Holds at most one frame and ``max_garbage`` bytes whatever arrives. Errors: one per garbage run,
    a start byte inside a frame (the lost end costs that frame only), non-printable, over-long,
    empty, bad trailer; after one, the rest of the frame is dropped up to the next terminator,
    separator or required start byte. Checksums are the protocol's to check.
    """

    def __init__(self, framing: Framing) -> None:
        self.framing = framing
        terminators = framing.terminators
        self._enders = frozenset(t[0] for t in terminators if len(t) == 1)
        self._pairs = frozenset(t for t in terminators if len(t) == 2)
        self._pair_starts = frozenset(t[0] for t in self._pairs) - self._enders
        # Bytes that end a garbage run, or the rest of a broken frame, by themselves.
        self._quiet = frozenset(framing.separators) | self._enders
        self._idle = _OUTSIDE if framing.start_required else _FRAME
        self._state = self._idle
        self._frame = bytearray()
        self._garbage = bytearray()
        self._trailer_left = 0
        self._overflowed = False
        # The first byte of a two-byte terminator, held until the next byte says what it was.
        self._pending: int | None = None
        self._plain = _run_of(self._ordinary())

    def _ordinary(self) -> set[int]:
        """The bytes that inside a frame are only appended to it: no terminator, marker or pair
        start, printable where the framing wants it."""
        framing = self.framing
        ordinary = set(range(0x20, 0x7F) if framing.printable else range(256))
        ordinary -= self._enders | self._pair_starts
        ordinary -= {b for b in (framing.start, framing.end) if b is not None}
        return ordinary

    def feed(self, data: bytes) -> list[bytes | DecodeError]:
        out: list[bytes | DecodeError] = []
        plain, i, size = self._plain, 0, len(data)
        while i < size:
            if plain is not None and self._state == _FRAME and self._pending is None:
                # The body of a frame, a run at a time: what the loop below would append byte
                # by byte (~1 µs a byte in Python, most of a driver's decoding cost).
                run = plain.match(data, i)
                if run is not None and run.end() - i <= self.framing.max_length - len(self._frame):
                    self._frame += data[i : run.end()]
                    i = run.end()
                    continue
            byte = data[i]
            i += 1
            pending = self._pending
            if pending is not None:
                self._pending = None
                if bytes((pending, byte)) in self._pairs:
                    self._line_end(out)
                    continue
                self._step(pending, out)
            if byte in self._pair_starts and self._state in (_FRAME, _DISCARD):
                self._pending = byte
            else:
                self._step(byte, out)
        return out

    # --- states ---------------------------------------------------------------------------------

    def _step(self, byte: int, out: list[bytes | DecodeError]) -> None:
        if self._state == _TRAILER:
            self._in_trailer(byte, out)
        elif byte in self._enders:
            self._line_end(out)
        elif self._state == _OUTSIDE:
            self._outside(byte, out)
        elif self._state == _DISCARD:
            if byte in self._quiet:
                self._reset()
            elif self.framing.start_required and byte == self.framing.start:
                self._open()
        else:
            self._in_frame(byte, out)

    def _outside(self, byte: int, out: list[bytes | DecodeError]) -> None:
        framing = self.framing
        if byte == framing.start:
            self._end_garbage(out)
            self._open()
        elif byte in self._quiet:
            self._end_garbage(out)
        else:
            self._garbage.append(byte)
            if len(self._garbage) >= framing.max_garbage:
                # Endless noise keeps being reported, in bounded memory.
                self._end_garbage(out)

    def _in_frame(self, byte: int, out: list[bytes | DecodeError]) -> None:
        framing = self.framing
        reasons = framing.reasons
        if byte == framing.start:
            if framing.start_required:
                self._error(out, reasons.restarted, self._frame)
                self._open()
                return
            if self._frame:
                self._error(out, reasons.restarted, self._frame)
                self._reset()
            # The start byte begins the new line (it is part of what the protocol decodes).
        elif byte == framing.end:
            if len(self._frame) == 1:
                self._error(out, reasons.empty, self._frame + bytes((byte,)))
                self._reset()
                return
            self._frame.append(byte)
            self._trailer_left = framing.trailer_length
            if self._trailer_left:
                self._state = _TRAILER
            else:
                self._emit(out)
            return
        elif framing.printable and not 0x20 <= byte <= 0x7E:
            self._error(out, reasons.non_printable, self._frame + bytes((byte,)))
            self._drop(byte)
            return
        if len(self._frame) < framing.max_length:
            self._frame.append(byte)
        elif framing.report_overflow_at_end:
            self._overflowed = True
        else:
            self._error(out, reasons.too_long, self._frame + bytes((byte,)))
            self._frame.clear()
            self._state = _DISCARD

    def _in_trailer(self, byte: int, out: list[bytes | DecodeError]) -> None:
        framing = self.framing
        if byte == framing.start:
            self._error(out, framing.reasons.trailer_cut, self._frame)
            self._open()
        elif byte not in framing.trailer_bytes:
            self._error(out, framing.reasons.bad_trailer, self._frame + bytes((byte,)))
            self._drop(byte)
        else:
            self._frame.append(byte)
            self._trailer_left -= 1
            if not self._trailer_left:
                self._emit(out)

    def _line_end(self, out: list[bytes | DecodeError]) -> None:
        if self._state == _FRAME:
            if self._overflowed:
                self._error(out, self.framing.reasons.too_long, self._frame)
                self._reset()
            else:
                self._emit(out)
        else:
            self._end_garbage(out)
            self._reset()

    # --- helpers --------------------------------------------------------------------------------

    def _open(self) -> None:
        assert self.framing.start is not None  # only called for a start byte
        self._reset()
        self._state = _FRAME
        self._frame.append(self.framing.start)

    def _reset(self) -> None:
        self._state = self._idle
        self._frame.clear()
        self._overflowed = False

    def _drop(self, byte: int) -> None:
        # A separator or terminator already ends the broken frame; anything else starts a run to
        # drop quietly.
        self._reset()
        if byte not in self._quiet:
            self._state = _DISCARD

    def _emit(self, out: list[bytes | DecodeError]) -> None:
        out.append(bytes(self._frame))
        self._reset()

    def _end_garbage(self, out: list[bytes | DecodeError]) -> None:
        if self._garbage:
            self._error(out, self.framing.reasons.garbage, self._garbage)
            self._garbage.clear()

    def _error(self, out: list[bytes | DecodeError], reason: str, raw: bytes | bytearray) -> None:
        out.append(DecodeError(reason, bytes(raw[: self.framing.max_raw])))


def _run_of(members: set[int]) -> re.Pattern[bytes] | None:
    """A pattern matching a run of ``members`` (``None`` for no members)."""
    if not members:
        return None
    return re.compile(b"[" + b"".join(re.escape(bytes((b,))) for b in sorted(members)) + b"]+")
