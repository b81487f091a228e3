"""Simulated USB devices as data: descriptors, kernel drivers, IN queues, OUT callbacks, hot-plug.

The device side of :mod:`tablectl.simulators.usb_backend` (which serves these devices to pyusb);
the semantics modelled are described there.
"""

from __future__ import annotations

import errno
import itertools
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import usb.core

from tablectl.simulators.errors import SimulatorError

EndpointType = Literal["bulk", "interrupt"]
OutCallback = Callable[[int, bytes], None]

ENDPOINT_TYPE_BITS = {"bulk": 0x02, "interrupt": 0x03}
LANGID_EN_US = 0x0409
STRING_MANUFACTURER, STRING_PRODUCT, STRING_SERIAL = 1, 2, 3
GET_DESCRIPTOR = 0x06
DESC_DEVICE, DESC_CONFIG, DESC_STRING = 1, 2, 3

# libusb error codes (usb/backend/libusb1.py) with pyusb's strerror and errno for each.
_ERRORS: dict[int, tuple[str, int]] = {
    -1: ("Input/output error", errno.EIO),
    -2: ("Invalid parameter", errno.EINVAL),
    -4: ("No such device (it may have been disconnected)", errno.ENODEV),
    -5: ("Entity not found", errno.ENOENT),
    -6: ("Resource busy", errno.EBUSY),
    -7: ("Operation timed out", errno.ETIMEDOUT),
    -9: ("Pipe error", errno.EPIPE),
}
ERROR_IO, ERROR_INVALID, ERROR_NO_DEVICE, ERROR_NOT_FOUND = -1, -2, -4, -5
ERROR_BUSY, ERROR_TIMEOUT, ERROR_PIPE = -6, -7, -9


def usb_error(code: int) -> usb.core.USBError:
    text, number = _ERRORS[code]
    if code == ERROR_TIMEOUT:
        return usb.core.USBTimeoutError(text, code, number)
    return usb.core.USBError(text, code, number)


class Descriptor:
    """A descriptor as pyusb wants it: fields readable as attributes."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


@dataclass(frozen=True)
class SimEndpoint:
    """One endpoint. ``address`` carries the direction bit (``0x81`` is IN 1, ``0x02`` OUT 2)."""

    address: int
    type: EndpointType = "bulk"
    max_packet_size: int = 64
    interval: int = 10

    @property
    def is_in(self) -> bool:
        return bool(self.address & 0x80)


@dataclass(frozen=True)
class SimInterface:
    """One interface (alternate setting 0). ``kernel_driver`` names the driver the OS binds on
    plug (``"usbhid"``) or is None; ``extra`` holds class descriptors (the HID descriptor)."""

    number: int
    endpoints: tuple[SimEndpoint, ...]
    interface_class: int = 0xFF
    interface_subclass: int = 0
    interface_protocol: int = 0
    kernel_driver: str | None = None
    extra: bytes = b""


@dataclass
class DeviceHandle:
    device: SimUsbDevice
    generation: int
    claimed: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class DeviceId:
    device: SimUsbDevice
    generation: int


class SimUsbDevice:
    """A simulated USB device: descriptors plus the device side of its endpoints."""

    _addresses = itertools.count(2)

    def __init__(
        self,
        vid: int,
        pid: int,
        *,
        serial: str | None = None,
        manufacturer: str | None = "tablectl",
        product: str | None = "simulated device",
        interfaces: Sequence[SimInterface] = (),
        bcd_device: int = 0x0100,
    ) -> None:
        self.vid = vid
        self.pid = pid
        self.serial = serial
        self.manufacturer = manufacturer
        self.product = product
        self.interfaces = tuple(interfaces)
        self.bcd_device = bcd_device
        self.address = next(self._addresses)
        self.control_log: list[tuple[int, int, int, int, bytes]] = []
        """OUT control requests received: (bmRequestType, bRequest, wValue, wIndex, data)."""
        self._cond = threading.Condition()
        self._endpoints = {ep.address: ep for i in self.interfaces for ep in i.endpoints}
        self._queues: dict[int, deque[bytes]] = {a: deque() for a in self._endpoints}
        self._out: OutCallback | None = None
        self._generation = 0
        self._connected = True
        self._configuration = 1
        self._kernel: dict[int, bool] = {}
        self._claims: dict[int, DeviceHandle] = {}
        self._bind_kernel_drivers()

    @classmethod
    def hid_keyboard(
        cls,
        vid: int,
        pid: int,
        *,
        serial: str | None = None,
        product: str | None = "simulated barcode scanner",
        in_address: int = 0x81,
    ) -> SimUsbDevice:
        """A boot keyboard (class 3/1/1) with one interrupt IN endpoint, bound to usbhid."""
        hid_descriptor = bytes([9, 0x21, 0x11, 0x01, 0, 1, 0x22, 63, 0])
        interface = SimInterface(
            number=0,
            endpoints=(SimEndpoint(in_address, "interrupt", 8, 10),),
            interface_class=3,
            interface_subclass=1,
            interface_protocol=1,
            kernel_driver="usbhid",
            extra=hid_descriptor,
        )
        return cls(vid, pid, serial=serial, product=product, interfaces=[interface])

    @classmethod
    def bulk(
        cls,
        vid: int,
        pid: int,
        *,
        serial: str | None = None,
        product: str | None = "simulated bulk device",
        in_address: int = 0x81,
        out_address: int = 0x02,
    ) -> SimUsbDevice:
        """A vendor-class device with one bulk IN and one bulk OUT endpoint, no kernel driver."""
        interface = SimInterface(
            number=0,
            endpoints=(SimEndpoint(in_address, "bulk"), SimEndpoint(out_address, "bulk")),
        )
        return cls(vid, pid, serial=serial, product=product, interfaces=[interface])

    def __repr__(self) -> str:
        state = "plugged" if self._connected else "unplugged"
        return f"SimUsbDevice({self.vid:04x}:{self.pid:04x}, serial={self.serial!r}, {state})"

    # --- the device side ------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected

    def kernel_driver_active(self, interface: int) -> bool:
        """Whether the OS driver has ``interface`` now (for tests)."""
        with self._cond:
            return self._kernel.get(interface, False)

    def claimed(self, interface: int) -> bool:
        """Whether some handle has claimed ``interface`` (for tests)."""
        with self._cond:
            return interface in self._claims

    def push_in(self, address: int, data: bytes) -> None:
        """Queue one IN transfer on endpoint ``address`` (dropped while unplugged)."""
        endpoint = self._endpoints.get(address)
        if endpoint is None or not endpoint.is_in:
            raise SimulatorError(f"{self!r} has no IN endpoint 0x{address:02x}")
        with self._cond:
            if self._connected:
                self._queues[address].append(bytes(data))
                self._cond.notify_all()

    def pending_in(self, address: int) -> int:
        """Transfers queued on ``address`` and not read yet."""
        with self._cond:
            return len(self._queues[address])

    def on_out(self, callback: OutCallback | None) -> None:
        """Receive OUT transfers as ``callback(endpoint_address, data)`` (writer's thread)."""
        self._out = callback

    def unplug(self) -> None:
        """Pull the cable: see the module docstring."""
        with self._cond:
            self._connected = False
            self._generation += 1
            self._claims.clear()
            for queue in self._queues.values():
                queue.clear()
            self._cond.notify_all()

    def plug(self) -> None:
        """Plug it back in: enumerable again as a new device, kernel drivers bound."""
        with self._cond:
            if self._connected:
                return
            self._generation += 1
            self._connected = True
            self._configuration = 1
            self._bind_kernel_drivers()

    def _bind_kernel_drivers(self) -> None:
        self._kernel = {i.number: i.kernel_driver is not None for i in self.interfaces}

    # --- what the backend calls (all under the lock) ---------------------------------------

    def _check(self, handle: DeviceHandle) -> None:
        if not self._connected or handle.generation != self._generation:
            raise usb_error(ERROR_NO_DEVICE)

    def _interface(self, number: int) -> SimInterface:
        for interface in self.interfaces:
            if interface.number == number:
                return interface
        raise usb_error(ERROR_NOT_FOUND)

    def _string(self, index: int) -> str | None:
        return {
            STRING_MANUFACTURER: self.manufacturer,
            STRING_PRODUCT: self.product,
            STRING_SERIAL: self.serial,
        }.get(index)
