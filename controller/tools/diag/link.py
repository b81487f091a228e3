"""An open link to one device for a technician tool: one reader, a tap on both directions.

Not the driver: it reconnects forever and acts on what it hears, where a technician wants a reason
at once when the port is busy and nothing sent unasked. So the transport is opened directly, with
the driver's exclusive lock, and a *tap* sees every chunk.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Literal

from tablectl.controller.core.closing import AsyncClosing
from tablectl.controller.tools.diag.errors import DiagError, PortHeldError
from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports.base import ByteStream

Direction = Literal["rx", "tx"]
Tap = Callable[[Direction, bytes, float], None]
"""Called with the direction, the bytes and the monotonic time they were read or written."""

_LOCK_MARKERS = ("exclusively lock", "device or resource busy", "resource busy")


def is_lock_error(exc: BaseException) -> bool:
    """Whether an open failure means another process holds the port: pyserial's failed ``flock``
    ("Resource temporarily unavailable") or EBUSY, both only as the wrapped error's text."""
    text = str(exc).lower()
    return any(marker in text for marker in _LOCK_MARKERS)


class Link(AsyncClosing):
    """``async with Link(stream, port) as link``: open, read in the background, close."""

    def __init__(
        self,
        stream: ByteStream,
        port: str,
        *,
        tap: Tap | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.port = port
        self._stream = stream
        self._tap = tap
        self._clock = clock
        self._queue: asyncio.Queue[bytes | TransportClosedError] = asyncio.Queue()
        self._reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        """Open the transport and start reading; ``PortHeldError`` when another process holds it."""
        try:
            await self._stream.open()
        except DriverInitError as exc:
            if is_lock_error(exc):
                raise PortHeldError(self.port) from None
            raise DiagError(str(exc)) from None
        self._reader = asyncio.create_task(self._read_loop(), name=f"diag:read:{self.port}")

    async def close(self) -> None:
        """Stop reading and close the transport (idempotent)."""
        reader, self._reader = self._reader, None
        if reader is not None:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
        await self._stream.close()

    _open = open  # what ``async with`` awaits first

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._stream.read()
                if self._tap is not None:
                    self._tap("rx", data, self._clock())
                self._queue.put_nowait(data)
        except TransportClosedError as exc:
            self._queue.put_nowait(exc)

    async def read(self, within: float | None = None) -> bytes:
        """The next chunk the device sent, or ``b""`` when ``within`` seconds pass first.

        Raises:
            DiagError: the link went away (cable pulled, simulator stopped).
        """
        try:
            item = await asyncio.wait_for(self._queue.get(), within)
        except TimeoutError:
            return b""
        if isinstance(item, TransportClosedError):
            self._queue.put_nowait(item)  # every later read fails the same way
            raise DiagError(f"{self.port}: link lost: {item}")
        return item

    async def send(self, data: bytes) -> None:
        """Write ``data`` to the device (seen by the tap as ``tx``).

        Raises:
            DiagError: the link went away.
        """
        if self._tap is not None:
            self._tap("tx", data, self._clock())
        try:
            await self._stream.write(data)
        except TransportClosedError as exc:
            raise DiagError(f"{self.port}: link lost: {exc}") from None
