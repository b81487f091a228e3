"""Which configured device a diagnostic talks to, with its validated driver settings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.config import DeviceConfig, TableConfig, load_config, validate_device
from tablectl.controller.tools.diag.devices.plugins import DeviceDiagnostics, get_diagnostics
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.drivers.base import DriverSettings
from tablectl.drivers.registry import get_driver_class


@dataclass(frozen=True)
class Target:
    """A configured device and the plug-in that knows how to diagnose it."""

    config: TableConfig
    device: DeviceConfig
    settings: DriverSettings
    diagnostics: DeviceDiagnostics


def pick_device(config: TableConfig, device_id: str | None) -> DeviceConfig:
    """The ``[[devices]]`` entry named ``device_id``; the only one when ``None`` and there is one.

    Raises:
        DiagError: no such device, or several and none named (the message lists them).
    """
    ids = ", ".join(d.id for d in config.devices) or "(none)"
    if device_id is None:
        if len(config.devices) == 1:
            return config.devices[0]
        raise DiagError(f"{config.source}: name a device (configured: {ids})")
    for device in config.devices:
        if device.id == device_id:
            return device
    raise DiagError(f"{config.source}: no device {device_id!r} (configured: {ids})")


def resolve_target(config_path: Path, device_id: str | None) -> Target:
    """Load the config, pick the device, validate its driver keys, find its diagnostics."""
    config = load_config(config_path)
    device = pick_device(config, device_id)
    index = config.devices.index(device)
    settings = validate_device(get_driver_class(device.driver).settings_model, config, index)
    return Target(config, device, settings, get_diagnostics(device, settings))
