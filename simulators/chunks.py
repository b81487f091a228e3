"""What a simulated serial device hands its server: timed pieces of output (:class:`Chunk`).

Neutral ground, so no model imports another device's model for it; :class:`Outbox` is the serial
models' output buffer, :func:`noise_burst` a line protocol's ``garbage`` noise.
"""

from __future__ import annotations

import random
from typing import NamedTuple


class Chunk(NamedTuple):
    """Bytes sent at model time ``at``. ``partial``: a fragment cut by a ``split`` fault; servers
    pause before the next chunk so the host really reads it in pieces.
    """

    at: float
    data: bytes
    partial: bool = False


class Outbox:
    """The chunks queued since the server last took them; ``size`` lets a model stop queueing for a
    server that does not take them.
    """

    def __init__(self) -> None:
        self._chunks: list[Chunk] = []
        self.size = 0

    def append(self, chunk: Chunk) -> None:
        self._chunks.append(chunk)
        self.size += len(chunk.data)

    def append_split(self, at: float, data: bytes, rng: random.Random) -> None:
        """Queue ``data`` in ``partial`` fragments of 1-4 bytes (a ``split`` fault)."""
        pos = 0
        while pos < len(data):
            size = rng.randint(1, 4)
            self.append(Chunk(at, data[pos : pos + size], partial=True))
            pos += size

    def take(self) -> list[Chunk]:
        """Everything queued, oldest first; the outbox is empty afterwards."""
        out, self._chunks, self.size = self._chunks, [], 0
        return out


def noise_burst(rng: random.Random, start: bytes, *, avoid: bytes = b"") -> bytes:
    """Line noise: binary bytes with a NUL or 0xFF, then a lone ``start`` (a false start of a
    line, which the next real one restarts). CR, LF, ``start`` and ``avoid`` are left out, so
    each burst costs the host exactly two decode errors (the run, and the false start)."""
    alphabet = [b for b in range(256) if b not in b"\r\n" + start + avoid]
    body = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
    return bytes([rng.choice((0x00, 0xFF))]) + body + start
