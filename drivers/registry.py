"""Driver registry: config ``driver = "cammegh-ss2"`` → a :class:`~tablectl.drivers.base.Driver`
class.

Entries are ``(module path, class name)`` strings imported on first use (STYLE practice 3, after
python-can's ``BACKENDS``), so a missing library fails the config that uses it, not every start.
Vendors' protocols are under NDA, so integrators register drivers under the entry-point group
``tablectl.drivers``::

    [project.entry-points."tablectl.drivers"]
    acme-shoe = "acme_tablectl.driver:AcmeShoeDriver"

A plugin reusing a built-in name is refused, so no package can silently replace the driver a
certified table was tested with.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from tablectl.drivers.base import Driver
from tablectl.drivers.errors import DriverUnavailableError, UnknownDriverError
from tablectl.drivers.plugins import RegistryEntry, entry_point_entries

__all__ = [
    "DRIVERS",
    "ENTRY_POINT_GROUP",
    "available_drivers",
    "get_driver_class",
    "open_driver",
]

ENTRY_POINT_GROUP = "tablectl.drivers"
"""The entry-point group third-party packages register their drivers under."""

DRIVERS: dict[str, tuple[str, str]] = {
    "cammegh-ss2": ("tablectl.drivers.ss2.driver", "SS2Driver"),
    "hid-shoe": ("tablectl.drivers.shoe.driver", "HidShoeDriver"),
    "serial-shoe": ("tablectl.drivers.shoe.driver", "SerialShoeDriver"),
    "tablectl-shuffler": ("tablectl.drivers.shuffler.driver", "ShufflerDriver"),
    "tablectl-drum": ("tablectl.drivers.drum.driver", "DrumDriver"),
    "tablectl-bigwheel": ("tablectl.drivers.bigwheel.driver", "BigWheelDriver"),
    "tablectl-dice": ("tablectl.drivers.dice.driver", "DiceDriver"),
    "mqtt-dice": ("tablectl.drivers.dice_mqtt.driver", "DiceMqttDriver"),
}
"""Config key → (module, class). Add a device family here; nothing else needs to know."""


def available_drivers() -> dict[str, RegistryEntry]:
    """Every driver by config name: built-ins, then plugins (refused ones keyed
    ``"name (package version)"``). Read from metadata each call, so a fresh install is seen at once.
    """
    found = {
        name: RegistryEntry(name, module, cls, "built-in")
        for name, (module, cls) in DRIVERS.items()
    }
    for entry in entry_point_entries(ENTRY_POINT_GROUP, DRIVERS, "driver"):
        found[entry.name if entry.refused is None else f"{entry.name} ({entry.source})"] = entry
    return found


def get_driver_class(name: str) -> type[Driver]:
    """Import and return the driver class registered as ``name``.

    ``UnknownDriverError`` lists the known names; ``DriverUnavailableError`` when its module or a
    library it needs cannot be imported.
    """
    entry = available_drivers().get(name)
    if entry is None or entry.refused is not None:
        known = ", ".join(sorted(n for n, e in available_drivers().items() if e.refused is None))
        raise UnknownDriverError(f"unknown driver {name!r}; known drivers: {known or '(none)'}")
    module_name, class_name = entry.module, entry.cls
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        missing = exc.name or ""
        if missing and (module_name == missing or module_name.startswith(missing + ".")):
            # The driver's own module is absent: a wrong registry entry or a broken install.
            reason = f"module {module_name} does not exist"
        else:
            reason = f"importing {module_name} failed: {missing or 'a dependency'!r} is missing"
        raise DriverUnavailableError(f"driver {name!r} cannot be loaded: {reason} ({exc})") from exc
    except OSError as exc:
        # ctypes-backed libraries (libusb, CAN vendor DLLs) fail this way when the .so is absent.
        raise DriverUnavailableError(
            f"driver {name!r} cannot be loaded: importing {module_name} failed: {exc}"
        ) from exc
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Driver)):
        raise DriverUnavailableError(
            f"driver {name!r}: {module_name} defines no Driver subclass {class_name!r}"
        )
    return cls


def open_driver(
    device_id: str,
    driver: str,
    port: str | None,
    options: Mapping[str, Any],
    **kwargs: Any,
) -> Driver:
    """Build (not connect) the driver for one ``[[devices]]`` entry.

    Connecting happens in ``Driver.events()``, so an absent device is an availability event, not a
    crash. ``DriverInitError`` when ``options`` do not validate.
    """
    cls = get_driver_class(driver)
    return cls(device_id, port, options, **kwargs)
