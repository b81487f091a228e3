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
    │   ├── EncodeError(ValueError)     a value the protocol cannot carry (a field out of range,
    │   │                               not a card code, a barcode table that contradicts itself)
    │   └── DeviceTimeoutError(TimeoutError)
    ├── (tablectl.simulators.errors) SimulatorError(ValueError)  an impossible simulator setting
    └── (tablectl.controller.core.errors) ControllerError
        ├── ConfigError(ValueError)
        ├── EventFormatError(ValueError)
        ├── RuleError(ValueError)
        ├── JournalError
        └── ...

``ValueError`` stays raised directly only inside pydantic validators (pydantic's own protocol: it
turns them into the config error that names the key) and for a programmer's wrong argument.
"""

from __future__ import annotations

__all__ = [
    "DeviceTimeoutError",
    "DriverConfigError",
    "DriverError",
    "DriverInitError",
    "DriverUnavailableError",
    "EncodeError",
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

    ``problem`` is the message without the device, for callers that name the entry themselves.
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


class EncodeError(DriverError, ValueError):
    """A value the protocol cannot carry: a field out of range, a string that is no card code, a
    barcode table that contradicts itself. A ``ValueError`` too, so pydantic validators that
    call a codec report it as the config key's error."""
