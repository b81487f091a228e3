"""In-process null-modem :class:`~tablectl.drivers.transports.base.ByteStream` pairs
(STYLE practice 7).

A real transport, not a mock: tests run the production loop over it without pty, socket or
thread. After pymodbus's ``NullModem``: ``mangle`` rewrites every write into the chunks the peer
reads (split, garble, drop). Like a socket: each chunk is one ``read`` (empty ones skipped); a
closed side lets the peer drain, then raises ``TransportClosedError``, and so does a write towards
it (``EPIPE``); a closed stream's ``open`` raises ``DriverInitError`` (a port error, like an
unplugged adapter).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from tablectl.drivers.errors import DriverInitError, TransportClosedError

Mangle = Callable[[bytes], list[bytes]]
"""Turns one write into the chunks the peer reads: ``[data]`` is a clean line, ``[]`` drops it."""

_EOF = None


class MemoryStream:
    """One end of a :func:`memory_pair`.

    ``mangle`` is a public attribute so a test can switch faults on mid-conversation.
    """

    def __init__(self, name: str, mangle: Mangle | None = None) -> None:
        self.name = name
        self.mangle = mangle
        self._inbox: asyncio.Queue[bytes | None] = asyncio.Queue()
        self._peer: MemoryStream | None = None
        self._closed = False
        self._eof = False  # our inbox delivered the peer's EOF marker

    def __repr__(self) -> str:
        return f"MemoryStream({self.name!r}, {'closed' if self._closed else 'open'})"

    @property
    def closed(self) -> bool:
        return self._closed

    async def open(self) -> None:
        """No-op while open; a closed stream cannot reopen (the link is gone for good)."""
        if self._closed:
            raise DriverInitError(f"memory stream {self.name!r} is closed")

    async def read(self) -> bytes:
        """Next chunk the peer wrote (after ``mangle``); raises once either side has closed."""
        if self._closed or self._eof:
            raise TransportClosedError(f"memory stream {self.name!r} closed")
        chunk = await self._inbox.get()
        if chunk is _EOF:
            self._eof = True
            raise TransportClosedError(f"memory stream {self.name!r}: peer closed")
        return chunk

    async def write(self, data: bytes) -> None:
        """Deliver ``data`` (through ``mangle``) to the peer; never blocks (unbounded buffer)."""
        peer = self._peer
        if self._closed:
            raise TransportClosedError(f"memory stream {self.name!r} closed")
        if peer is None or peer._closed:
            raise TransportClosedError(f"memory stream {self.name!r}: peer closed")
        chunks = self.mangle(bytes(data)) if self.mangle is not None else [bytes(data)]
        for chunk in chunks:
            if chunk:
                peer._inbox.put_nowait(bytes(chunk))

    async def close(self) -> None:
        """Idempotent. Wakes our own pending ``read`` and signals EOF to the peer."""
        if self._closed:
            return
        self._closed = True
        self._inbox.put_nowait(_EOF)  # wake a read pending on this side
        if self._peer is not None and not self._peer._closed:
            self._peer._inbox.put_nowait(_EOF)


def memory_pair(mangle: Mangle | None = None) -> tuple[MemoryStream, MemoryStream]:
    """Two connected streams: what ``a`` writes, ``b`` reads, and vice versa.

    ``mangle`` applies both ways; set ``stream.mangle`` to fault one direction only.
    """
    a = MemoryStream("a", mangle)
    b = MemoryStream("b", mangle)
    a._peer = b
    b._peer = a
    return a, b
