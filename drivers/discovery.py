"""What is plugged into this host: serial ports, USB devices, CAN interfaces.

pyserial's ``list_ports``, pyusb, and sysfs for CAN (``/sys/class/net/*/type`` 280 =
ARPHRD_CAN). Nothing is opened, so listing is safe while the service runs; a missing pyserial,
pyusb or libusb becomes a note, not an error.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "CanInterface",
    "SerialPort",
    "UsbDevice",
    "list_can",
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


def _hex4(value: Any) -> str | None:
    return f"{int(value):04x}" if isinstance(value, int) else None


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
