"""``diag ports``: what is plugged in (serial, USB, CAN) and which configured device each is.

Why three sources: a wheel or shuffler usually sits behind a USB serial adapter (pyserial's
``list_ports`` gives its vid/pid/serial and ``/dev/serial/by-id`` gives the stable name udev
made for it), a barcode shoe is often a USB HID device (pyusb), and a future device may be on
CAN (``/sys/class/net/*/type`` 280 = ARPHRD_CAN). A device is *marked* when its configured port
resolves to the same node (following symlinks such as by-id or a simulator's ``--link``), or
when its config names a ``vid``/``pid`` (or a CAN ``channel``) that matches.

Nothing here opens a device: listing is safe while the service runs. pyusb needs libusb; without
it the USB section is replaced by a one-line note.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from controller.config import DeviceConfig

__all__ = [
    "CanInterface",
    "ConfiguredPort",
    "PortsReport",
    "SerialPort",
    "UsbDevice",
    "list_can",
    "list_ports_report",
    "list_serial",
    "list_usb",
]

BY_ID = Path("/dev/serial/by-id")
SYS_NET = Path("/sys/class/net")
SYS_USB = Path("/sys/bus/usb/devices")
ARPHRD_CAN = "280"


@dataclass
class SerialPort:
    device: str
    by_id: list[str] = field(default_factory=list)
    vid: str | None = None
    pid: str | None = None
    serial_number: str | None = None
    description: str | None = None
    configured: list[str] = field(default_factory=list)


@dataclass
class UsbDevice:
    bus: int | None
    address: int | None
    vid: str
    pid: str
    manufacturer: str | None = None
    product: str | None = None
    serial_number: str | None = None
    configured: list[str] = field(default_factory=list)


@dataclass
class CanInterface:
    name: str
    state: str | None = None
    configured: list[str] = field(default_factory=list)


@dataclass
class ConfiguredPort:
    """A configured device's port as found (or not) on this host."""

    device: str
    driver: str
    port: str | None
    resolved: str | None
    exists: bool
    matched: list[str] = field(default_factory=list)
    """Which listed entries are this device (``serial /dev/ttyUSB0``, ``usb 0403:6001``…)."""


@dataclass
class PortsReport:
    serial: list[SerialPort]
    usb: list[UsbDevice]
    can: list[CanInterface]
    configured: list[ConfiguredPort]
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _hex4(value: Any) -> str | None:
    return f"{int(value):04x}" if isinstance(value, int) else None


def _resolve(path: str | None) -> str | None:
    if path is None or "://" in path:
        return None
    try:
        return os.path.realpath(path)
    except OSError:
        return None


def _by_id_links(directory: Path = BY_ID) -> dict[str, list[str]]:
    """Real device node → its ``/dev/serial/by-id`` names."""
    links: dict[str, list[str]] = {}
    with contextlib.suppress(OSError):
        for entry in sorted(directory.iterdir()):
            links.setdefault(os.path.realpath(entry), []).append(str(entry))
    return links


def list_serial(notes: list[str]) -> list[SerialPort]:
    """Serial ports pyserial can enumerate, with their by-id names."""
    try:
        from serial.tools import list_ports  # noqa: PLC0415 - pyserial lazily
    except ImportError:
        notes.append("serial: pyserial is not installed")
        return []
    by_id = _by_id_links()
    ports: dict[str, SerialPort] = {}
    for info in list_ports.comports(include_links=False):
        real = os.path.realpath(info.device)
        ports[real] = SerialPort(
            device=info.device,
            by_id=by_id.get(real, []),
            vid=_hex4(info.vid),
            pid=_hex4(info.pid),
            serial_number=info.serial_number,
            description=None if info.description in (None, "n/a") else info.description,
        )
    return sorted(ports.values(), key=lambda p: p.device)


def _sysfs_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip() or None
    except OSError:
        return None


def list_usb(notes: list[str]) -> list[UsbDevice]:
    """USB devices via pyusb; names from sysfs (readable without opening the device)."""
    try:
        import usb.core  # noqa: PLC0415 - pyusb lazily
    except ImportError:
        notes.append("usb: pyusb is not installed; USB devices not listed")
        return []
    try:
        found = list(usb.core.find(find_all=True) or ())
    except usb.core.NoBackendError:
        notes.append("usb: no libusb backend (install libusb-1.0-0); USB devices not listed")
        return []
    except (usb.core.USBError, OSError, ValueError) as exc:
        notes.append(f"usb: cannot enumerate: {exc}")
        return []
    devices = []
    for dev in found:
        bus, ports_path = getattr(dev, "bus", None), getattr(dev, "port_numbers", None)
        sysfs = SYS_USB / f"{bus}-{'.'.join(map(str, ports_path))}" if bus and ports_path else None
        devices.append(
            UsbDevice(
                bus=bus,
                address=getattr(dev, "address", None),
                vid=f"{dev.idVendor:04x}",
                pid=f"{dev.idProduct:04x}",
                manufacturer=_sysfs_text(sysfs / "manufacturer") if sysfs else None,
                product=_sysfs_text(sysfs / "product") if sysfs else None,
                serial_number=_sysfs_text(sysfs / "serial") if sysfs else None,
            )
        )
    return devices


def list_can(net: Path = SYS_NET) -> list[CanInterface]:
    """Network interfaces of type ARPHRD_CAN (real CAN adapters, ``vcan``, ``slcan``)."""
    out = []
    with contextlib.suppress(OSError):
        for entry in sorted(net.iterdir()):
            if _sysfs_text(entry / "type") == ARPHRD_CAN:
                out.append(CanInterface(entry.name, _sysfs_text(entry / "operstate")))
    return out


def _option_id(options: Mapping[str, Any], *names: str) -> str | None:
    for name in names:
        value = options.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return f"{value:04x}"
        if isinstance(value, str) and value:
            with contextlib.suppress(ValueError):
                return f"{int(value, 16):04x}"
    return None


def _mark(
    devices: Iterable[DeviceConfig],
    serial: list[SerialPort],
    usb: list[UsbDevice],
    can: list[CanInterface],
) -> list[ConfiguredPort]:
    configured = []
    for device in devices:
        options = device.options
        resolved = _resolve(device.port)
        entry = ConfiguredPort(
            device=device.id,
            driver=device.driver,
            port=device.port,
            resolved=resolved,
            exists=resolved is not None and os.path.exists(resolved),
        )
        vid = _option_id(options, "vid", "vendor_id", "usb_vid")
        pid = _option_id(options, "pid", "product_id", "usb_pid")
        for port in serial:
            same_node = resolved is not None and os.path.realpath(port.device) == resolved
            same_ids = vid is not None and port.vid == vid and pid in (None, port.pid)
            if same_node or same_ids:
                port.configured.append(device.id)
                entry.matched.append(f"serial {port.device}")
        for dev in usb:
            if vid is not None and dev.vid == vid and pid in (None, dev.pid):
                dev.configured.append(device.id)
                entry.matched.append(f"usb {dev.vid}:{dev.pid}")
        channel = options.get("channel") or device.port
        for iface in can:
            if channel == iface.name:
                iface.configured.append(device.id)
                entry.matched.append(f"can {iface.name}")
        configured.append(entry)
    return configured


def list_ports_report(devices: Iterable[DeviceConfig] = ()) -> PortsReport:
    """Everything ``diag ports`` shows, marked with the configured ``devices``."""
    notes: list[str] = []
    serial = list_serial(notes)
    usb = list_usb(notes)
    can = list_can()
    configured = _mark(devices, serial, usb, can)
    return PortsReport(serial, usb, can, configured, notes)
