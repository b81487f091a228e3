"""Card shoe / barcode scanner family (contracts §5).

Pure: ``hid`` (boot-keyboard reports ↔ lines) and ``barcodes`` (text → card, signal or
rejection). ``driver`` binds them to ``hid-shoe`` (pyusb) or ``serial-shoe`` (pyserial).
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
