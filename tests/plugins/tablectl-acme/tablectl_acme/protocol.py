"""The ACME shoe's line protocol, sans I/O: bytes in, messages out (and back, for the simulator).

ACME is fictional; its protocol has the shape most vendors' shoes share. One line per fact::

    C,AS,0042*5B<CR><LF>     a card left the shoe: rank+suit, the shoe's own card counter
    E,0312*1F<CR><LF>        the shoe is empty (its counter at that moment)

``*5B`` is the XOR of every byte before the ``*``, in two hex digits. The line framing is
tablectl's one scanner (:class:`tablectl.drivers.codec.FrameScanner`) with this protocol's
:data:`FRAMING`; every bad line is a :class:`~tablectl.drivers.codec.DecodeError` value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tablectl.drivers.codec import DecodeError, FrameScanner, Framing

__all__ = ["FRAMING", "Card", "Decoder", "Empty", "encode"]

FRAMING: Final = Framing(max_length=32, printable=True)
_LINE: Final = re.compile(rb"(?P<body>[CE],[^*]*)\*(?P<sum>[0-9A-F]{2})")
_CARD: Final = re.compile(r"C,(?P<card>[2-9TJQKA][CDHS]),(?P<count>\d{4})")
_EMPTY: Final = re.compile(r"E,(?P<count>\d{4})")


@dataclass(frozen=True)
class Card:
    card: str
    count: int


@dataclass(frozen=True)
class Empty:
    count: int


def _checksum(body: bytes) -> str:
    value = 0
    for byte in body:
        value ^= byte
    return f"{value:02X}"


def encode(message: Card | Empty) -> bytes:
    """The line the shoe sends for ``message`` (the simulator speaks through this)."""
    if isinstance(message, Card):
        body = f"C,{message.card},{message.count:04d}".encode()
    else:
        body = f"E,{message.count:04d}".encode()
    return body + b"*" + _checksum(body).encode() + b"\r\n"


class Decoder:
    """Lines from a byte stream split or garbled anywhere → messages and decode errors."""

    def __init__(self) -> None:
        self._lines = FrameScanner(FRAMING)

    def feed(self, data: bytes) -> list[Card | Empty | DecodeError]:
        out: list[Card | Empty | DecodeError] = []
        for line in self._lines.feed(data):
            out.append(line if isinstance(line, DecodeError) else _parse(line))
        return out


def _parse(line: bytes) -> Card | Empty | DecodeError:
    framed = _LINE.fullmatch(line)
    if framed is None:
        return DecodeError("not an ACME line", line)
    if _checksum(framed["body"]) != framed["sum"].decode():
        return DecodeError("bad checksum", line)
    body = framed["body"].decode()
    if card := _CARD.fullmatch(body):
        return Card(card["card"], int(card["count"]))
    if empty := _EMPTY.fullmatch(body):
        return Empty(int(empty["count"]))
    return DecodeError("bad fields", line)
