"""Barcode-reading card shoes: a HID keyboard-wedge scanner (pyusb) or a serial one (pyserial).

Both deliver one line per scan, decoded by the table's
:class:`~tablectl.drivers.shoe.barcodes.BarcodeCodec` into one event. A shoe says nothing between
coups, so there is no silence detection: it is available from the moment its link opens.
Counters besides the base's: ``decode_errors``, ``rejected_barcodes``, ``blank_lines``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

import pydantic

from tablectl.drivers.base import DriverSettings, ReportsOnly, StreamDriver
from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons
from tablectl.drivers.errors import DriverConfigError
from tablectl.drivers.events import (
    CardScanned,
    CutCardSeen,
    DeviceEvent,
    ScanRejected,
    ShoeEmptied,
    ShoeInserted,
    ShoeRemoved,
)
from tablectl.drivers.shoe.barcodes import (
    DEFAULT_CUT_CARD_BARCODES,
    DEFAULT_NO_READ_BARCODES,
    DEFAULT_SIGNAL_BARCODES,
    BarcodeCodec,
    Decoded,
    Rejected,
    SignalKind,
    SymbolDeck,
)
from tablectl.drivers.shoe.hid import REPORT_SIZE, UNMAPPED, HidLineDecoder
from tablectl.drivers.transports.base import ByteStream

LineEnding = Literal["any", "cr", "lf", "crlf"]
MAX_LINE: Final = 256
"""Bytes per serial line; more without a line ending is noise (or a wrong baud rate)."""

_TERMINATORS: Final[Mapping[LineEnding, tuple[bytes, ...]]] = {
    "any": (b"\r", b"\n"),
    "cr": (b"\r",),
    "lf": (b"\n",),
    "crlf": (b"\r\n",),
}

LINE_FRAMINGS: Final[Mapping[LineEnding, Framing]] = {
    ending: Framing(
        terminators=terminators,
        max_length=MAX_LINE,
        max_raw=MAX_LINE,
        report_overflow_at_end=True,
        reasons=Reasons(too_long="line too long"),
    )
    for ending, terminators in _TERMINATORS.items()
}
"""Serial scanners' lines per ``line_ending``. ``any`` ends a line at CR or LF, so CR LF, LF and CR
scanners all work (CR LF then also ends an empty line, counted in ``blank_lines``); the others end
it only at their sequence. An over-long line is kept to :data:`MAX_LINE` bytes and rejected as one
unreadable scan when it ends: the dealer sees the rescan request for the scan that failed."""

_SIGNAL_EVENTS: Final[Mapping[SignalKind, Callable[..., DeviceEvent]]] = {
    "cut_card": CutCardSeen,
    "shoe_empty": ShoeEmptied,
    "shoe_removed": ShoeRemoved,
    "shoe_inserted": ShoeInserted,
}


class ShoeSettings(DriverSettings):
    """The ``[[devices]]`` options of a shoe (unknown keys are rejected).

    Barcode keys: :mod:`tablectl.drivers.shoe.barcodes` (``symbol_deck = "rock_paper_scissors"``
    makes ``RK``, ``PA``, ``SC`` cards). HID: ``vid``, ``pid`` (TOML hex: ``vid = 0x0c2e``),
    ``serial``, ``interface``, ``ep_in``. Serial: ``baudrate``, ``line_ending``.
    """

    barcode_pattern: str | None = None
    rank_map: dict[str, str] = pydantic.Field(default_factory=dict)
    suit_map: dict[str, str] = pydantic.Field(default_factory=dict)
    barcodes: dict[str, str] = pydantic.Field(default_factory=dict)
    deck_serials: tuple[str, ...] = ()
    cut_card_barcodes: tuple[str, ...] = DEFAULT_CUT_CARD_BARCODES
    signal_barcodes: dict[str, SignalKind] = pydantic.Field(
        default_factory=lambda: dict(DEFAULT_SIGNAL_BARCODES)
    )
    no_read_barcodes: tuple[str, ...] = DEFAULT_NO_READ_BARCODES
    accept_notation: bool = True
    symbol_deck: SymbolDeck | None = None

    vid: int | None = pydantic.Field(default=None, ge=0, le=0xFFFF)
    pid: int | None = pydantic.Field(default=None, ge=0, le=0xFFFF)
    serial: str | None = None
    interface: int = pydantic.Field(default=0, ge=0, le=255)
    ep_in: int | None = pydantic.Field(default=None, ge=0x81, le=0x8F)

    baudrate: int = pydantic.Field(default=9600, gt=0)
    line_ending: LineEnding = "any"

    @pydantic.model_validator(mode="after")
    def _codec_builds(self) -> ShoeSettings:
        # Fail at config load with the codec's own message, not at the first scan.
        self.codec()
        return self

    def codec(self) -> BarcodeCodec:
        """The table's barcode codec. Raises ``ValueError`` on inconsistent options."""
        return BarcodeCodec(
            pattern=self.barcode_pattern,
            rank_map=self.rank_map,
            suit_map=self.suit_map,
            barcodes=self.barcodes,
            deck_serials=self.deck_serials,
            cut_card_barcodes=self.cut_card_barcodes,
            signal_barcodes=self.signal_barcodes,
            no_read_barcodes=self.no_read_barcodes,
            accept_notation=self.accept_notation,
            symbol_deck=self.symbol_deck,
        )


class ShoeInterpreter(ReportsOnly):
    """Scanned lines in, one event per scan out; no timers, no commands, no silence to detect."""

    def __init__(self, device_id: str, codec: BarcodeCodec, count: Callable[[str], None]) -> None:
        self.device_id = device_id
        self.codec = codec
        self._count = count
        self.last_barcode: str | None = None

    def feed(self, line: str, now: float) -> list[DeviceEvent]:
        """One scanned line (a decoding error arrives as a line ending in U+FFFD: unreadable)."""
        barcode = line.strip()
        if not barcode:
            self._count("blank_lines")
            return []
        self.last_barcode = barcode
        result = self.codec.decode(barcode)
        if isinstance(result, Decoded):
            return [CardScanned(device=self.device_id, at=now, card=result.card, barcode=barcode)]
        if isinstance(result, Rejected):
            self._count("rejected_barcodes")
            return [
                ScanRejected(device=self.device_id, at=now, barcode=barcode, reason=result.reason)
            ]
        return [_SIGNAL_EVENTS[result.kind](device=self.device_id, at=now)]


class _ShoeDriver(StreamDriver[ShoeSettings]):
    """What both wirings share: line → codec → event, and availability on connect."""

    settings_model = ShoeSettings
    interpreter: ShoeInterpreter

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.codec = self.settings.codec()
        self.interpreter = ShoeInterpreter(self.device_id, self.codec, self.count)


class SerialLines:
    """A serial scanner's bytes in, its lines out (:data:`LINE_FRAMINGS`).

    Non-ASCII decodes to U+FFFD, which the codec rejects. An over-long line is a
    :class:`DecodeError` followed by its text and a U+FFFD: one unreadable scan, so the dealer
    rescans.
    """

    def __init__(self, ending: LineEnding) -> None:
        self._lines = FrameScanner(LINE_FRAMINGS[ending])

    def feed(self, data: bytes) -> list[str | DecodeError]:
        out: list[str | DecodeError] = []
        for line in self._lines.feed(data):
            if isinstance(line, DecodeError):
                out += [line, _text(line.raw) + UNMAPPED]
            else:
                out.append(_text(line))
        return out


def _text(line: bytes) -> str:
    return line.decode("ascii", errors="replace")


class SerialShoeDriver(_ShoeDriver):
    """A serial or USB-CDC scanner: one line per scan. ``port`` is any pyserial URL."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._require_serial_port("a serial shoe needs a port")

    def _open_link(self) -> ByteStream:
        return self._serial_link(self.settings.baudrate)

    def _new_decoder(self) -> SerialLines:
        return SerialLines(self.settings.line_ending)

    def _available_on_open(self) -> str:
        return str(self.port)


class _HidReports:
    """Key reports in, lines out; a malformed report is a :class:`DecodeError` (counted)."""

    def __init__(self, hid: HidLineDecoder) -> None:
        self._hid = hid

    def feed(self, report: bytes) -> list[str | DecodeError]:
        before = self._hid.malformed
        out: list[str | DecodeError] = list(self._hid.feed(report))
        if self._hid.malformed != before:
            out.append(DecodeError(f"not a {REPORT_SIZE}-byte key report", report))
        return out


class HidShoeDriver(_ShoeDriver):
    """A keyboard-wedge scanner read with pyusb (boot-keyboard reports, interrupt IN).

    The kernel's keyboard driver is detached while we hold it, so scans never leak into the console.
    ``usb_backend``: a simulated backend for tests; None means libusb.
    """

    def __init__(self, *args: Any, usb_backend: object | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings, port = self.settings, self.port
        if port is not None:
            raise DriverConfigError(
                self.device_id,
                f"a HID shoe is found by its vid/pid/serial options; remove port = {port!r}",
            )
        if settings.vid is None or settings.pid is None:
            raise DriverConfigError(self.device_id, "a HID shoe needs the vid and pid options")
        self.vid: int = settings.vid
        self.pid: int = settings.pid
        self.usb_backend = usb_backend
        self.hid = HidLineDecoder()

    def _open_link(self) -> ByteStream:
        from tablectl.drivers.transports.usb import UsbEndpointStream  # noqa: PLC0415 - keeps pyusb lazy

        settings = self.settings
        return UsbEndpointStream(
            vid=self.vid,
            pid=self.pid,
            serial=settings.serial,
            interface=settings.interface,
            ep_in=settings.ep_in,
            backend=self.usb_backend,
            hid_boot_protocol=True,
        )

    def _new_decoder(self) -> _HidReports:
        self.hid.reset()  # keys held and half a line from the old connection are stale
        return _HidReports(self.hid)

    def _available_on_open(self) -> str:
        serial = self.settings.serial
        return f"usb {self.vid:04x}:{self.pid:04x}" + (f" serial {serial}" if serial else "")
