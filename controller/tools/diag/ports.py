"""``diag ports``: what is plugged in (serial, USB, CAN) and which configured device each is.

Three sources because a wheel sits behind a USB serial adapter, a shoe is often USB HID and a
device may be on CAN. Nothing here opens a device, so listing is safe while the service runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from tablectl.controller.config import DeviceConfig
from tablectl.controller.plugins import plugin_games
from tablectl.drivers.discovery import (
    CanInterface,
    SerialPort,
    UsbDevice,
    list_can,
    list_serial,
    list_usb,
)
from tablectl.drivers.plugins import RegistryEntry
from tablectl.drivers.registry import available_drivers


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
    drivers: list[RegistryEntry]
    """Every driver a config may name: built-in and from installed plugins (entry points)."""
    games: list[RegistryEntry]
    """Games from installed packages (``tablectl.games`` entry points); the catalog's are not
    listed (``tablectl demo --help`` names them)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _resolve(path: str | None) -> str | None:
    if path is None or "://" in path:
        return None
    try:
        return os.path.realpath(path)
    except OSError:
        return None


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
    drivers = list(available_drivers().values())
    return PortsReport(serial, usb, can, configured, notes, drivers, plugin_games())
