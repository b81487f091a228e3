"""Card shufflers speaking the tablectl reference protocol (``docs/protocols/shuffler.md``).

``protocol`` (pure codec), ``interpreter`` (events), ``driver`` (serial or USB bulk). Importing
this package loads neither pyserial nor pyusb.
"""

from __future__ import annotations

from tablectl.drivers.shuffler.protocol import REFERENCE_CODEC, Codec

__all__ = ["REFERENCE_CODEC", "Codec"]
