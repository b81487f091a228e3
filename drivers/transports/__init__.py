"""Byte transports a device protocol runs over (STYLE practice 5).

Importing this package is cheap: :mod:`tablectl.drivers.transports.serial` loads pyserial only when
a port is opened, and nothing here imports ``usb`` or ``can``.
"""

from __future__ import annotations

from tablectl.drivers.transports.base import ByteStream, TraceHook
from tablectl.drivers.transports.memory import MemoryStream, memory_pair
from tablectl.drivers.transports.serial import SerialStream, open_serial_stream

__all__ = [
    "ByteStream",
    "MemoryStream",
    "SerialStream",
    "TraceHook",
    "memory_pair",
    "open_serial_stream",
]
