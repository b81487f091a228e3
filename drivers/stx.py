"""The frame the tablectl reference protocols share: ``STX payload ETX CRC CR LF``.

Defined by the shuffler's protocol (docs/protocols/shuffler.md) and taken over unchanged by the
dice unit's (docs/protocols/dice.md). CRC-8 rather than XOR: a dice result or card count is sent
once, and XOR misses two flips in one bit column (``4,1`` → ``6,3``). Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Generic, TypeVar

from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons
from tablectl.drivers.errors import EncodeError

__all__ = [
    "CRLF",
    "ETX",
    "FRAMING",
    "GARBAGE",
    "MAX_GARBAGE",
    "MAX_PAYLOAD",
    "MAX_RAW",
    "STX",
    "FieldError",
    "FrameDecoder",
    "crc8",
    "frame",
]

T = TypeVar("T")

STX: Final = 0x02
ETX: Final = 0x03
CRLF: Final = b"\r\n"
MAX_PAYLOAD: Final = 1000
"""Longest payload accepted; a longer run after STX is one error and is dropped."""
MAX_GARBAGE: Final = 256
"""Garbage between frames is reported once per run, or once per this many bytes."""
GARBAGE: Final = "garbage between frames"
"""The :attr:`DecodeError.reason` of bytes outside any frame (line noise, not a bad frame)."""
MAX_RAW: Final = 80
"""``DecodeError.raw`` keeps at most this many bytes (a log line, not a memory hog)."""

FRAMING: Final = Framing(
    start=STX,
    start_required=True,
    end=ETX,
    trailer_length=2,
    trailer_bytes=frozenset(b"0123456789ABCDEF"),
    terminators=(),
    separators=CRLF,
    printable=True,
    max_length=1 + MAX_PAYLOAD,
    max_raw=MAX_RAW,
    max_garbage=MAX_GARBAGE,
    reasons=Reasons(
        garbage=GARBAGE,
        restarted="frame restarted (STX before ETX)",
        trailer_cut="frame truncated in its checksum",
        bad_trailer="checksum is not two upper-case hex digits",
    ),
)
"""``STX payload ETX CC``: the checksum digits are the trailer; CR LF may separate frames."""


def _crc8_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
        table.append(crc)
    return tuple(table)


_CRC8: Final = _crc8_table()


def crc8(data: bytes) -> int:
    """CRC-8/SMBUS (poly 0x07, init 0, no reflection): ``crc8(b"123456789") == 0xF4``."""
    crc = 0
    for byte in data:
        crc = _CRC8[crc ^ byte]
    return crc


def frame(payload: bytes, device: str) -> bytes:
    """``STX payload ETX CRC CR LF``; ``device`` names the protocol in the ``EncodeError``."""
    if not payload or len(payload) > MAX_PAYLOAD or not all(0x20 <= b <= 0x7E for b in payload):
        raise EncodeError(f"{device} payload must be 1-{MAX_PAYLOAD} printable ASCII bytes")
    return b"\x02" + payload + b"\x03" + b"%02X" % crc8(payload) + CRLF


class FieldError(ValueError):
    """A field failed validation; becomes a :class:`DecodeError` with this message."""


class FrameDecoder(Generic[T]):
    """Frames → parsed items, errors as values; protocols and directions differ only in ``parse``.

    ``DecodeError.raw`` of a frame with a good checksum but bad fields starts with the payload (no
    STX), so a simulator can NAK it by verb; framing errors start with STX.
    """

    def __init__(self, parse: Callable[[list[str]], T]) -> None:
        self._parse = parse
        self._frames = FrameScanner(FRAMING)
        self.errors = 0
        """Count of :class:`DecodeError` values produced so far."""

    def feed(self, data: bytes) -> list[T | DecodeError]:
        out: list[T | DecodeError] = []
        for scanned in self._frames.feed(data):
            if isinstance(scanned, DecodeError):
                out.append(scanned)
                continue
            payload, check = scanned[1:-3], scanned[-2:]
            got, want = int(check, 16), crc8(payload)
            if got != want:
                reason = f"checksum mismatch: got {got:02X}, computed {want:02X}"
                out.append(DecodeError(reason, scanned[:MAX_RAW]))
                continue
            try:
                # Printable ASCII was checked by the scanner, so decoding cannot fail.
                out.append(self._parse(payload.decode("ascii").split(";")))
            except FieldError as exc:
                out.append(DecodeError(str(exc), payload[:MAX_RAW]))
        self.errors += sum(isinstance(m, DecodeError) for m in out)
        return out
