"""Transport interfaces: a protocol runs over any of them (STYLE practice 5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol

__all__ = ["ByteStream", "TraceHook"]

TraceHook = Callable[[Literal["rx", "tx"], bytes], None]
"""Observation seam at the transport boundary: called with every chunk read or written."""


class ByteStream(Protocol):
    """An ordered byte pipe to one device (serial port, pty, TCP socket).

    ``read`` waits for at least one byte; both ``read`` and ``write`` raise
    :class:`tablectl.drivers.errors.TransportClosedError` once the link is gone. ``close`` is
    idempotent.
    """

    async def open(self) -> None: ...

    async def read(self) -> bytes: ...

    async def write(self, data: bytes) -> None: ...

    async def close(self) -> None: ...
