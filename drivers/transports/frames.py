"""Frame-based transports: a CAN frame value and the :class:`FrameLink` interface.

Pure (no ``can``, no asyncio), so protocol modules stay testable without python-can
(STYLE practice 1); :class:`tablectl.drivers.transports.can.CanLink` implements it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

from tablectl.drivers.errors import EncodeError

MAX_STANDARD_ID = 0x7FF
"""CAN 2.0A: 11-bit identifiers."""
MAX_EXTENDED_ID = 0x1FFF_FFFF
"""CAN 2.0B: 29-bit identifiers."""
MAX_DLC = 8
"""Classic CAN carries at most 8 data bytes (CAN FD is not used by any of our devices)."""


@dataclass(frozen=True)
class CanFrame:
    """One classic CAN data frame, validated at construction.

    A frame that could not exist (a 12-bit standard id, nine data bytes) fails where it is built,
    not as a confusing python-can error where it is sent.
    """

    arbitration_id: int
    data: bytes = b""
    is_extended_id: bool = False

    def __post_init__(self) -> None:
        limit = MAX_EXTENDED_ID if self.is_extended_id else MAX_STANDARD_ID
        if not 0 <= self.arbitration_id <= limit:
            kind = "extended" if self.is_extended_id else "standard"
            raise EncodeError(f"{kind} CAN id 0x{self.arbitration_id:X} out of range 0-0x{limit:X}")
        if not isinstance(self.data, bytes):
            # bytearray/memoryview would make the frozen value mutable or unhashable.
            object.__setattr__(self, "data", bytes(self.data))
        if len(self.data) > MAX_DLC:
            raise EncodeError(f"a classic CAN frame carries at most 8 bytes, not {len(self.data)}")

    @property
    def dlc(self) -> int:
        """Data length code (the number of data bytes)."""
        return len(self.data)

    def __str__(self) -> str:
        # candump style ("210#030007"): what technicians type into cansend.
        width = 8 if self.is_extended_id else 3
        return f"{self.arbitration_id:0{width}X}#{self.data.hex().upper()}"


FrameTraceHook = Callable[[Literal["rx", "tx"], CanFrame], None]
"""Observation seam at a frame link's boundary (the frame twin of ``TraceHook``)."""


class FrameLink(Protocol):
    """A link that carries whole frames (a CAN bus, or a test double).

    ``open`` raises ``DriverInitError``/``DriverUnavailableError``; ``recv``/``send`` raise
    ``TransportClosedError`` once the link is gone; ``close`` is idempotent.
    """

    async def open(self) -> None: ...

    async def recv(self) -> CanFrame: ...

    async def send(self, frame: CanFrame) -> None: ...

    async def close(self) -> None: ...
