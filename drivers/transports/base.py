"""Transport interfaces: a protocol runs over any of them (STYLE practice 5)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, Protocol, runtime_checkable

from tablectl.drivers.errors import TransportClosedError

__all__ = ["ByteReceiver", "ByteStream", "CallbackStream", "TraceHook"]

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


class ByteReceiver(Protocol):
    """Where a :class:`CallbackStream` delivers, from the event loop: asyncio's
    ``Protocol.data_received`` and ``connection_lost``."""

    def data_received(self, data: bytes) -> None: ...

    def connection_lost(self, exc: TransportClosedError) -> None:
        """The link failed (called once; nothing is delivered after it)."""


@runtime_checkable
class CallbackStream(ByteStream, Protocol):
    """A :class:`ByteStream` that can also hand what arrives to a :class:`ByteReceiver` as it
    arrives (pymodbus ``transport/serialtransport.py``), with no task reading in between."""

    def deliver_to(self, receiver: ByteReceiver | None) -> bool:
        """Deliver to ``receiver`` from now on (``None``: stop). False when this stream cannot
        (then ``read`` it)."""
