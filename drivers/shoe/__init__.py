"""Card shoe / barcode scanner family (contracts §5).

Pure parts: :mod:`tablectl.drivers.shoe.hid` (boot-keyboard reports ↔ text lines) and
:mod:`tablectl.drivers.shoe.barcodes` (barcode text → card, shoe signal or rejection, per table).
:mod:`tablectl.drivers.shoe.driver` binds them to a transport: ``hid-shoe`` (pyusb, interrupt IN)
and ``serial-shoe`` (pyserial, a line per scan); the registry imports it lazily.
"""

from __future__ import annotations

from tablectl.drivers.shoe.barcodes import BarcodeCodec, BarcodeResult, Decoded, Rejected, Signal
from tablectl.drivers.shoe.hid import HidLineDecoder, encode_line

__all__ = [
    "BarcodeCodec",
    "BarcodeResult",
    "Decoded",
    "HidLineDecoder",
    "Rejected",
    "Signal",
    "encode_line",
]
