"""Card shufflers speaking the tablectl reference protocol (``docs/protocols/shuffler.md``).

:mod:`tablectl.drivers.shuffler.protocol` is the pure codec,
:mod:`tablectl.drivers.shuffler.interpreter` turns its messages into device events, and
:mod:`tablectl.drivers.shuffler.driver` binds both to a serial port or a pair of USB bulk endpoints.
Importing this package loads neither pyserial nor pyusb.
"""

from __future__ import annotations

from tablectl.drivers.shuffler.protocol import REFERENCE_CODEC, Codec

__all__ = ["REFERENCE_CODEC", "Codec"]
