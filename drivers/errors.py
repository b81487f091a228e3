"""The one exception tree of tablectl.

Rooted here because ``drivers`` is the bottom layer: ``controller`` and ``simulators`` import it,
never the other way round. Domain refusals (a card the tableau does not call for, a spin with too
few revolutions) are *values* (verdicts, voids), never exceptions; these classes are for things
that stop an operation: a port that cannot be opened, a config that cannot be loaded.

    TablectlError
    ├── DriverError
    │   ├── UnknownDriverError          registry has no such key
    │   ├── DriverUnavailableError      the driver's library (libusb, python-can backend) is missing
    │   ├── DriverInitError             the device could not be opened or configured
    │   │   └── DriverConfigError(ValueError)  a device entry's keys cannot work (at construction)
    │   ├── TransportClosedError        the link went away (port unplugged, socket closed)
    │   ├── FramingError(ValueError)    bytes that are not a frame of the protocol
    │   └── DeviceTimeoutError(TimeoutError)
    └── (tablectl.controller.core.errors) ControllerError
        ├── ConfigError(ValueError)
        ├── EventFormatError(ValueError)
        ├── JournalError
        └── ...
"""

from __future__ import annotations

__all__ = [
    "DeviceTimeoutError",
    "DriverConfigError",
    "DriverError",
    "DriverInitError",
    "DriverUnavailableError",
    "FramingError",
    "TablectlError",
    "TransportClosedError",
    "UnknownDriverError",
]


class TablectlError(Exception):
    """Root of every error tablectl raises on purpose."""


class DriverError(TablectlError):
    """Something about a device or its link."""


class UnknownDriverError(DriverError, LookupError):
    """The ``driver`` key names no registered driver."""


class DriverUnavailableError(DriverError):
    """The driver exists but cannot load (a missing library or backend)."""


class DriverInitError(DriverError):
    """The device could not be opened or configured."""


class DriverConfigError(DriverInitError, ValueError):
    """A device entry's keys cannot work whatever is plugged in: raised when a driver is built.

    ``problem`` is the message without the device, for callers that name the entry themselves
    (``tablectl.controller.config.device_error``: file, ``devices[i]``, id and driver).
    """

    def __init__(self, device_id: str, problem: str) -> None:
        super().__init__(f"device {device_id!r}: {problem}")
        self.device_id = device_id
        self.problem = problem


class TransportClosedError(DriverError, ConnectionError):
    """The byte stream or frame link is gone."""


class FramingError(DriverError, ValueError):
    """Bytes that do not form a valid frame of the protocol."""


class DeviceTimeoutError(DriverError, TimeoutError):
    """The device did not answer in time."""
