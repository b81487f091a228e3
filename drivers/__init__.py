"""Everything that touches hardware, and nothing about games.

The public surface: :func:`open_driver` builds a driver from a config entry, drivers yield the event
types of :mod:`tablectl.drivers.events`, and every failure is a :class:`DriverError`. Importing this
package loads no hardware library (pyserial, pyusb, python-can): those are imported when a driver or
port is actually used, so a missing one fails that device with a clear message.
"""

from __future__ import annotations

from tablectl.drivers import events
from tablectl.drivers.base import Driver, DriverSettings, StreamDriver
from tablectl.drivers.errors import (
    DeviceTimeoutError,
    DriverConfigError,
    DriverError,
    DriverInitError,
    DriverUnavailableError,
    FramingError,
    TablectlError,
    TransportClosedError,
    UnknownDriverError,
)
from tablectl.drivers.events import (
    BallLaunched,
    BallRead,
    BettingOpened,
    CardScanned,
    CutCardSeen,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    DiceRead,
    DiceRollInvalid,
    DiceRollStarted,
    Direction,
    MixingChanged,
    NoMoreBets,
    RollInvalidCode,
    ScanRejected,
    ShoeEmptied,
    ShoeInserted,
    ShoeRemoved,
    ShuffleCompleted,
    ShuffleStarted,
    SpinInvalid,
    TubeFull,
    WheelReady,
    WheelSettled,
    WheelSpinStarted,
    WheelStopped,
)
from tablectl.drivers.registry import DRIVERS, get_driver_class, open_driver

__all__ = [
    "DRIVERS",
    "BallLaunched",
    "BallRead",
    "BettingOpened",
    "CardScanned",
    "CutCardSeen",
    "DeviceAvailable",
    "DeviceEvent",
    "DeviceFaultCleared",
    "DeviceFaultRaised",
    "DeviceTimeoutError",
    "DeviceUnavailable",
    "DiceRead",
    "DiceRollInvalid",
    "DiceRollStarted",
    "Direction",
    "Driver",
    "DriverConfigError",
    "DriverError",
    "DriverInitError",
    "DriverSettings",
    "DriverUnavailableError",
    "FramingError",
    "MixingChanged",
    "NoMoreBets",
    "RollInvalidCode",
    "ScanRejected",
    "ShoeEmptied",
    "ShoeInserted",
    "ShoeRemoved",
    "ShuffleCompleted",
    "ShuffleStarted",
    "SpinInvalid",
    "StreamDriver",
    "TablectlError",
    "TransportClosedError",
    "TubeFull",
    "UnknownDriverError",
    "WheelReady",
    "WheelSettled",
    "WheelSpinStarted",
    "WheelStopped",
    "events",
    "get_driver_class",
    "open_driver",
]
