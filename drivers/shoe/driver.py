"""Barcode-reading card shoes: a HID keyboard-wedge scanner (pyusb) or a serial one (pyserial).

Both wirings deliver the same thing — one line of text per scan — and differ only in how the line
arrives: key reports decoded by :mod:`tablectl.drivers.shoe.hid`, or bytes up to a line ending. Each
line then goes through the table's :class:`~tablectl.drivers.shoe.barcodes.BarcodeCodec` and becomes
one event: :class:`CardScanned`, :class:`ScanRejected` (the dealer rescans or enters the card by
hand), :class:`CutCardSeen`, :class:`ShoeEmptied`, :class:`ShoeRemoved` or :class:`ShoeInserted`.

A shoe says nothing between coups, so there is no silence detection: the device is available
from the moment its port or interface opens (``DeviceAvailable`` on every connect) until the link
fails. Counters: ``decode_errors`` (malformed HID reports, over-long lines), ``rejected_barcodes``
(scans that are no card of this table), ``blank_lines`` (a bare line ending), plus the base's
``open_failures`` and ``disconnects``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.drivers.base import Clock, DriverSettings, StreamDriver
from tablectl.drivers.errors import DriverConfigError
from tablectl.drivers.events import (
    CardScanned,
    CutCardSeen,
    DeviceAvailable,
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
)
from tablectl.drivers.shoe.hid import UNMAPPED, HidLineDecoder
from tablectl.drivers.transports.base import ByteStream, TraceHook

__all__ = ["HidShoeDriver", "LineSplitter", "SerialShoeDriver", "ShoeSettings"]

LineEnding = Literal["any", "cr", "lf", "crlf"]
MAX_LINE: Final = 256
"""Bytes per serial line; more without a line ending is noise (or a wrong baud rate)."""

_SIGNAL_EVENTS: Final[Mapping[SignalKind, Callable[..., DeviceEvent]]] = {
    "cut_card": CutCardSeen,
    "shoe_empty": ShoeEmptied,
    "shoe_removed": ShoeRemoved,
    "shoe_inserted": ShoeInserted,
}


class ShoeSettings(DriverSettings):
    """The ``[[devices]]`` options of a shoe (unknown keys are rejected).

    Barcodes (see :mod:`tablectl.drivers.shoe.barcodes`): ``barcode_pattern`` +
    ``rank_map``/``suit_map`` for a vendor format, ``barcodes`` for an explicit barcode → card
    table, ``deck_serials`` for the table's decks, ``cut_card_barcodes``, ``signal_barcodes``
    (barcode → ``shoe_empty`` | ``shoe_removed`` | ``shoe_inserted``), ``no_read_barcodes``,
    ``accept_notation``. HID (``hid-shoe``): ``vid``, ``pid`` (TOML hex literals: ``vid = 0x0c2e``),
    optional ``serial``, ``interface``, ``ep_in``. Serial (``serial-shoe``): ``baudrate``,
    ``line_ending``.
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
        )


class LineSplitter:
    """Bytes → text lines for serial scanners (pure).

    ``any`` ends a line at CR or LF (so CR LF, LF and CR scanners all work); the others only at
    their sequence. Bytes are ASCII: anything else decodes to U+FFFD, which the codec rejects as
    unreadable. A line longer than :data:`MAX_LINE` is cut there, ends in U+FFFD and is counted in
    ``overflows``.
    """

    def __init__(self, ending: LineEnding = "any") -> None:
        self.ending = ending
        self._buffer = bytearray()
        self._overflowed = False
        self.overflows = 0

    def reset(self) -> None:
        self._buffer.clear()
        self._overflowed = False

    def feed(self, data: bytes) -> list[str]:
        lines: list[str] = []
        for byte in data:
            if self._ends_line(byte):
                lines.append(self._take())
            elif len(self._buffer) < MAX_LINE:
                self._buffer.append(byte)
            elif not self._overflowed:
                self._overflowed = True
                self.overflows += 1
        return lines

    def _ends_line(self, byte: int) -> bool:
        if self.ending == "any":
            return byte in b"\r\n"
        if self.ending == "cr":
            return byte == 0x0D
        if self.ending == "lf" or byte != 0x0A:
            return byte == 0x0A
        # crlf: LF ends the line only right after CR (the CR is dropped with it).
        if self._buffer.endswith(b"\r"):
            del self._buffer[-1]
            return True
        return False

    def _take(self) -> str:
        text = self._buffer.decode("ascii", errors="replace")
        if self._overflowed:
            text += UNMAPPED
        self.reset()
        return text


class _ShoeDriver(StreamDriver):
    """What both wirings share: line → codec → event, and availability on connect."""

    settings_model: ClassVar[type[DriverSettings]] = ShoeSettings

    def __init__(
        self,
        device_id: str,
        port: str | None,
        options: Mapping[str, Any] | DriverSettings | None = None,
        *,
        clock: Clock = time.time,
        trace: TraceHook | None = None,
    ) -> None:
        super().__init__(device_id, port, options, clock=clock, trace=trace)
        assert isinstance(self.settings, ShoeSettings)  # the base validated it with settings_model
        self.shoe_settings: ShoeSettings = self.settings
        self.codec = self.shoe_settings.codec()
        self._announce = False
        self.last_barcode: str | None = None

    def _connected(self) -> None:
        self._announce = True

    def _announcement(self, now: float) -> list[DeviceEvent]:
        if not self._announce:
            return []
        self._announce = False
        return [DeviceAvailable(device=self.device_id, at=now, detail=self._describe())]

    def _describe(self) -> str:
        return ""

    def _on_tick(self, now: float) -> list[DeviceEvent]:
        return self._announcement(now)

    def _scan(self, line: str, now: float) -> list[DeviceEvent]:
        barcode = line.strip()
        if not barcode:
            self.count("blank_lines")
            return []
        self.last_barcode = barcode
        result = self.codec.decode(barcode)
        if isinstance(result, Decoded):
            return [CardScanned(device=self.device_id, at=now, card=result.card, barcode=barcode)]
        if isinstance(result, Rejected):
            self.count("rejected_barcodes")
            return [
                ScanRejected(device=self.device_id, at=now, barcode=barcode, reason=result.reason)
            ]
        return [_SIGNAL_EVENTS[result.kind](device=self.device_id, at=now)]


class SerialShoeDriver(_ShoeDriver):
    """A serial or USB-CDC scanner: one line per scan. ``port`` is any pyserial URL."""

    def __init__(
        self,
        device_id: str,
        port: str | None,
        options: Mapping[str, Any] | DriverSettings | None = None,
        *,
        clock: Clock = time.time,
        trace: TraceHook | None = None,
    ) -> None:
        super().__init__(device_id, port, options, clock=clock, trace=trace)
        self._require_serial_port("a serial shoe needs a port")
        self._lines = LineSplitter(self.shoe_settings.line_ending)

    def _open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415 - keeps pyserial lazy

        assert self.port is not None  # checked in __init__
        return SerialStream(self.port, baudrate=self.shoe_settings.baudrate)

    def _describe(self) -> str:
        return str(self.port)

    async def _handshake(self) -> None:
        # Half a line from the previous connection must not prefix the next scan.
        self._lines = LineSplitter(self.shoe_settings.line_ending)
        self._connected()

    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        events = self._announcement(now)
        before = self._lines.overflows
        for line in self._lines.feed(data):
            events += self._scan(line, now)
        if overflows := self._lines.overflows - before:
            self.count("decode_errors", overflows)
        return events


class HidShoeDriver(_ShoeDriver):
    """A keyboard-wedge scanner read with pyusb (boot-keyboard reports, interrupt IN endpoint).

    Found by the ``vid``/``pid`` (and ``serial``) options; ``port`` must be unset. The kernel's
    keyboard driver is detached while tablectl holds the scanner, so scans never leak into the
    console, and re-attached on close. ``usb_backend`` is for tests and simulators (a
    :class:`tablectl.simulators.usb_backend.SimUsbBackend`); None means libusb.
    """

    def __init__(
        self,
        device_id: str,
        port: str | None,
        options: Mapping[str, Any] | DriverSettings | None = None,
        *,
        clock: Clock = time.time,
        trace: TraceHook | None = None,
        usb_backend: object | None = None,
    ) -> None:
        super().__init__(device_id, port, options, clock=clock, trace=trace)
        settings = self.shoe_settings
        if port is not None:
            raise DriverConfigError(
                device_id,
                f"a HID shoe is found by its vid/pid/serial options; remove port = {port!r}",
            )
        if settings.vid is None or settings.pid is None:
            raise DriverConfigError(device_id, "a HID shoe needs the vid and pid options")
        self.vid: int = settings.vid
        self.pid: int = settings.pid
        self.usb_backend = usb_backend
        self.hid = HidLineDecoder()

    def _open_stream(self) -> ByteStream:
        from tablectl.drivers.transports.usb import UsbEndpointStream  # noqa: PLC0415 - keeps pyusb lazy

        settings = self.shoe_settings
        return UsbEndpointStream(
            vid=self.vid,
            pid=self.pid,
            serial=settings.serial,
            interface=settings.interface,
            ep_in=settings.ep_in,
            backend=self.usb_backend,
            hid_boot_protocol=True,
        )

    def _describe(self) -> str:
        serial = self.shoe_settings.serial
        return f"usb {self.vid:04x}:{self.pid:04x}" + (f" serial {serial}" if serial else "")

    async def _handshake(self) -> None:
        self.hid.reset()  # keys held and half a line from the old connection are stale
        self._connected()

    def _on_bytes(self, data: bytes, now: float) -> list[DeviceEvent]:
        events = self._announcement(now)
        before = self.hid.malformed
        for line in self.hid.feed(data):
            events += self._scan(line, now)
        if malformed := self.hid.malformed - before:
            self.count("decode_errors", malformed)
        return events
