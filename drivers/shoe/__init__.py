"""Card shoe / barcode scanner family (DESIGN §5).

Pure parts: :mod:`drivers.shoe.hid` (boot-keyboard reports ↔ text lines) and
:mod:`drivers.shoe.barcodes` (barcode text → card, shoe signal or rejection, per table).
:mod:`drivers.shoe.driver` binds them to a transport: ``hid-shoe`` (pyusb, interrupt IN) and
``serial-shoe`` (pyserial, a line per scan); the registry imports it lazily.
"""

from __future__ import annotations

from drivers.shoe.barcodes import BarcodeCodec, BarcodeResult, Decoded, Rejected, Signal
from drivers.shoe.hid import HidLineDecoder, encode_line

__all__ = [
    "BarcodeCodec",
    "BarcodeResult",
    "Decoded",
    "HidLineDecoder",
    "Rejected",
    "Signal",
    "encode_line",
]
