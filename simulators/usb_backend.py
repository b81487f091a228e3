"""A simulated pyusb backend: USB devices described as data, served at the ``IBackend`` layer.

Why this layer: everything above it is the real pyusb (``usb.core.find``, ``Device``,
``set_configuration``, ``usb.util.claim_interface``, ``Endpoint.read/write``,
``usb.util.get_string``), so production transports run unchanged and only libusb is replaced —
the pyusb counterpart of python-can's virtual bus (STYLE practice 7). Any test or simulator can
host devices on it: the shoe simulator (a HID keyboard with an interrupt IN endpoint) and the
shuffler simulator (bulk IN/OUT) both do.

Usage::

    device = SimUsbDevice.hid_keyboard(vid=0x0C2E, pid=0x0B61, serial="SHOE-1")
    backend = SimUsbBackend(device)
    dev = usb.core.find(idVendor=0x0C2E, backend=backend)
    device.push_in(0x81, report)          # the device side: queue an IN transfer
    device.on_out(lambda ep, data: ...)   # the device side: OUT transfers arrive here

What is modelled, and how faithfully (Linux libusb semantics, errors as pyusb's libusb1 backend
raises them: ``USBError(strerror, libusb_code, errno)``):

* Descriptors: one configuration (value 1), interfaces with one alternate setting, endpoints of a
  given address/type; string descriptors (language 0x0409) for manufacturer, product, serial.
* Kernel drivers: an interface may have one (``usbhid`` for the keyboard helper), bound whenever
  the device is plugged. ``claim_interface`` and ``set_configuration`` fail with EBUSY while it is
  bound (or while another handle holds a claim), as usbfs does; ``detach_kernel_driver`` /
  ``attach_kernel_driver`` flip it (ENOENT when there is none to detach).
* IN endpoints: a FIFO per endpoint. Each :meth:`SimUsbDevice.push_in` is one transfer; a read
  returns the head transfer, cut to the read size (the rest stays queued). An empty queue blocks
  the reading thread up to the timeout, then raises ``USBTimeoutError`` (ETIMEDOUT, code -7);
  timeout 0 waits forever, as in libusb. Thread-safe: the device side may push from any thread.
* OUT endpoints: each write calls the :meth:`SimUsbDevice.on_out` callback (in the writer's
  thread) and accepts all bytes. Control transfers: standard GET_DESCRIPTOR is answered, other IN
  requests stall (EPIPE), OUT requests (HID SET_IDLE, SET_PROTOCOL, vendor) are accepted and
  recorded in :attr:`SimUsbDevice.control_log`.
* Hot-plug: :meth:`SimUsbDevice.unplug` drops the device from enumeration, wakes blocked readers
  and fails every later call on its handles with ``USBError`` ENODEV (code -4) — what a real
  unplug looks like. :meth:`SimUsbDevice.plug` makes it enumerable again as a *new* device
  (old ``usb.core.Device`` objects stay dead, the kernel driver is bound again, queues are empty).
"""

from __future__ import annotations

import array
import errno
import itertools
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import usb.backend
import usb.core

__all__ = [
    "OutCallback",
    "SimEndpoint",
    "SimInterface",
    "SimUsbBackend",
    "SimUsbDevice",
]

EndpointType = Literal["bulk", "interrupt"]
OutCallback = Callable[[int, bytes], None]

_TYPE_BITS = {"bulk": 0x02, "interrupt": 0x03}
_LANGID_EN_US = 0x0409
_STRING_MANUFACTURER, _STRING_PRODUCT, _STRING_SERIAL = 1, 2, 3
_GET_DESCRIPTOR = 0x06
_DESC_DEVICE, _DESC_CONFIG, _DESC_STRING = 1, 2, 3

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
_IO, _INVALID, _NO_DEVICE, _NOT_FOUND, _BUSY, _TIMEOUT, _PIPE = -1, -2, -4, -5, -6, -7, -9


def _error(code: int) -> usb.core.USBError:
    text, number = _ERRORS[code]
    if code == _TIMEOUT:
        return usb.core.USBTimeoutError(text, code, number)
    return usb.core.USBError(text, code, number)


class _Descriptor:
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
class _Handle:
    device: SimUsbDevice
    generation: int
    claimed: set[int] = field(default_factory=set)


@dataclass(frozen=True)
class _DeviceId:
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
        self._claims: dict[int, _Handle] = {}
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
        """Queue one IN transfer on endpoint ``address``. Dropped while unplugged (no host).

        Raises:
            ValueError: ``address`` is not an IN endpoint of this device.
        """
        endpoint = self._endpoints.get(address)
        if endpoint is None or not endpoint.is_in:
            raise ValueError(f"{self!r} has no IN endpoint 0x{address:02x}")
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

    def _check(self, handle: _Handle) -> None:
        if not self._connected or handle.generation != self._generation:
            raise _error(_NO_DEVICE)

    def _interface(self, number: int) -> SimInterface:
        for interface in self.interfaces:
            if interface.number == number:
                return interface
        raise _error(_NOT_FOUND)

    def _string(self, index: int) -> str | None:
        return {
            _STRING_MANUFACTURER: self.manufacturer,
            _STRING_PRODUCT: self.product,
            _STRING_SERIAL: self.serial,
        }.get(index)


class SimUsbBackend(usb.backend.IBackend):  # type: ignore[misc]  # pyusb is untyped
    """A pyusb backend hosting :class:`SimUsbDevice` objects; pass it as ``backend=``."""

    def __init__(self, *devices: SimUsbDevice) -> None:
        super().__init__()
        self._devices: list[SimUsbDevice] = list(devices)
        self._lock = threading.Lock()

    def add(self, device: SimUsbDevice) -> None:
        with self._lock:
            self._devices.append(device)

    def remove(self, device: SimUsbDevice) -> None:
        with self._lock:
            self._devices.remove(device)

    @property
    def devices(self) -> tuple[SimUsbDevice, ...]:
        with self._lock:
            return tuple(self._devices)

    # --- enumeration and descriptors ---------------------------------------------------------

    def enumerate_devices(self) -> Iterator[_DeviceId]:
        # A list, not a generator holding locks: pyusb may drop the iterator half-way, and its
        # finalizer can run in another thread.
        found = []
        for device in self.devices:
            with device._cond:
                if device.connected:
                    found.append(_DeviceId(device, device._generation))
        return iter(found)

    def get_parent(self, dev: _DeviceId) -> None:
        return None

    def get_device_descriptor(self, dev: _DeviceId) -> _Descriptor:
        d = dev.device
        return _Descriptor(
            bLength=18,
            bDescriptorType=_DESC_DEVICE,
            bcdUSB=0x0200,
            bDeviceClass=0,
            bDeviceSubClass=0,
            bDeviceProtocol=0,
            bMaxPacketSize0=64,
            idVendor=d.vid,
            idProduct=d.pid,
            bcdDevice=d.bcd_device,
            iManufacturer=_STRING_MANUFACTURER if d.manufacturer is not None else 0,
            iProduct=_STRING_PRODUCT if d.product is not None else 0,
            iSerialNumber=_STRING_SERIAL if d.serial is not None else 0,
            bNumConfigurations=1,
            bus=1,
            address=d.address,
            port_number=d.address,
            port_numbers=(d.address,),
            speed=2,  # LIBUSB_SPEED_FULL
        )

    def get_configuration_descriptor(self, dev: _DeviceId, config: int) -> _Descriptor:
        if config != 0:
            raise IndexError(f"Invalid configuration index {config}")
        d = dev.device
        total = 9 + sum(9 + len(i.extra) + 7 * len(i.endpoints) for i in d.interfaces)
        return _Descriptor(
            bLength=9,
            bDescriptorType=_DESC_CONFIG,
            wTotalLength=total,
            bNumInterfaces=len(d.interfaces),
            bConfigurationValue=1,
            iConfiguration=0,
            bmAttributes=0x80,
            bMaxPower=50,
            extra_descriptors=[],
        )

    def get_interface_descriptor(
        self, dev: _DeviceId, intf: int, alt: int, config: int
    ) -> _Descriptor:
        d = dev.device
        if config != 0 or intf >= len(d.interfaces):
            raise IndexError(f"Invalid interface index {intf}")
        if alt != 0:
            raise IndexError(f"Invalid alternate setting index {alt}")
        i = d.interfaces[intf]
        return _Descriptor(
            bLength=9,
            bDescriptorType=4,
            bInterfaceNumber=i.number,
            bAlternateSetting=0,
            bNumEndpoints=len(i.endpoints),
            bInterfaceClass=i.interface_class,
            bInterfaceSubClass=i.interface_subclass,
            bInterfaceProtocol=i.interface_protocol,
            iInterface=0,
            extra_descriptors=list(i.extra),
        )

    def get_endpoint_descriptor(
        self, dev: _DeviceId, ep: int, intf: int, alt: int, config: int
    ) -> _Descriptor:
        self.get_interface_descriptor(dev, intf, alt, config)  # validates the indexes
        endpoints = dev.device.interfaces[intf].endpoints
        if ep >= len(endpoints):
            raise IndexError(f"Invalid endpoint index {ep}")
        e = endpoints[ep]
        return _Descriptor(
            bLength=7,
            bDescriptorType=5,
            bEndpointAddress=e.address,
            bmAttributes=_TYPE_BITS[e.type],
            wMaxPacketSize=e.max_packet_size,
            bInterval=e.interval,
            bRefresh=0,
            bSynchAddress=0,
            extra_descriptors=[],
        )

    # --- handles, configuration, interfaces ----------------------------------------------------

    def open_device(self, dev: _DeviceId) -> _Handle:
        d = dev.device
        with d._cond:
            if not d.connected or dev.generation != d._generation:
                raise _error(_NO_DEVICE)
            return _Handle(d, dev.generation)

    def close_device(self, dev_handle: _Handle) -> None:
        d = dev_handle.device
        with d._cond:
            for number in dev_handle.claimed:
                if d._claims.get(number) is dev_handle:
                    del d._claims[number]
            dev_handle.claimed.clear()

    def set_configuration(self, dev_handle: _Handle, config_value: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            if config_value not in (0, 1):
                raise _error(_NOT_FOUND)
            if d._claims or any(d._kernel.values()):
                raise _error(_BUSY)
            d._configuration = config_value

    def get_configuration(self, dev_handle: _Handle) -> int:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            return d._configuration

    def set_interface_altsetting(self, dev_handle: _Handle, intf: int, altsetting: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            if altsetting != 0:
                raise _error(_NOT_FOUND)

    def claim_interface(self, dev_handle: _Handle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            owner = d._claims.get(intf)
            if owner is dev_handle:
                return
            if owner is not None or d._kernel.get(intf, False):
                raise _error(_BUSY)
            d._claims[intf] = dev_handle
            dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle: _Handle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            dev_handle.claimed.discard(intf)
            d._check(dev_handle)
            if d._claims.get(intf) is not dev_handle:
                raise _error(_NOT_FOUND)
            del d._claims[intf]

    def is_kernel_driver_active(self, dev_handle: _Handle, intf: int) -> bool:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            return d._kernel.get(intf, False)

    def detach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            if not d._kernel.get(intf, False):
                raise _error(_NOT_FOUND)
            d._kernel[intf] = False

    def attach_kernel_driver(self, dev_handle: _Handle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            if d._interface(intf).kernel_driver is None:
                raise _error(_NOT_FOUND)
            if d._kernel.get(intf, False) or intf in d._claims:
                raise _error(_BUSY)
            d._kernel[intf] = True

    def clear_halt(self, dev_handle: _Handle, ep: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)

    def reset_device(self, dev_handle: _Handle) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)

    # --- transfers ----------------------------------------------------------------------------

    def bulk_read(
        self, dev_handle: _Handle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout)

    def intr_read(
        self, dev_handle: _Handle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout)

    def bulk_write(
        self, dev_handle: _Handle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        return self._write(dev_handle, ep, intf, data)

    def intr_write(
        self, dev_handle: _Handle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        return self._write(dev_handle, ep, intf, data)

    def ctrl_transfer(  # noqa: PLR0917 - IBackend's signature, called positionally by pyusb
        self,
        dev_handle: _Handle,
        bmRequestType: int,  # noqa: N803 - pyusb's parameter names
        bRequest: int,  # noqa: N803
        wValue: int,  # noqa: N803
        wIndex: int,  # noqa: N803
        data: array.array[int],
        timeout: int,
    ) -> int:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            if not bmRequestType & 0x80:
                d.control_log.append((bmRequestType, bRequest, wValue, wIndex, data.tobytes()))
                return len(data)
            if bmRequestType & 0x60 != 0 or bRequest != _GET_DESCRIPTOR:
                raise _error(_PIPE)  # an unsupported request: the device stalls
            reply = self._descriptor(d, wValue >> 8, wValue & 0xFF)
        size = min(len(reply), len(data))
        data[:size] = array.array("B", reply[:size])
        return size

    def _descriptor(self, d: SimUsbDevice, kind: int, index: int) -> bytes:
        if kind == _DESC_STRING:
            if index == 0:
                return bytes([4, _DESC_STRING]) + _LANGID_EN_US.to_bytes(2, "little")
            text = d._string(index)
            if text is None:
                raise _error(_PIPE)
            encoded = text.encode("utf-16-le")[:252]
            return bytes([2 + len(encoded), _DESC_STRING]) + encoded
        if kind == _DESC_DEVICE:
            return bytes([18, _DESC_DEVICE, 0, 2, 0, 0, 0, 64]) + (
                d.vid.to_bytes(2, "little")
                + d.pid.to_bytes(2, "little")
                + d.bcd_device.to_bytes(2, "little")
                + bytes([_STRING_MANUFACTURER, _STRING_PRODUCT, _STRING_SERIAL, 1])
            )
        raise _error(_PIPE)

    def _read(
        self, handle: _Handle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        d = handle.device
        deadline = None if timeout == 0 else time.monotonic() + timeout / 1000
        with d._cond:
            self._check_io(handle, ep, intf, inbound=True)
            queue = d._queues[ep]
            while not queue:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise _error(_TIMEOUT)
                d._cond.wait(remaining)
                self._check_io(handle, ep, intf, inbound=True)
            head = queue.popleft()
            size = len(buff) * buff.itemsize
            if len(head) > size:
                queue.appendleft(head[size:])
                head = head[:size]
        buff[: len(head)] = array.array("B", head)
        return len(head)

    def _write(self, handle: _Handle, ep: int, intf: int, data: array.array[int]) -> int:
        d = handle.device
        with d._cond:
            self._check_io(handle, ep, intf, inbound=False)
            callback = d._out
        payload = data.tobytes()
        if callback is not None:
            callback(ep, payload)
        return len(payload)

    @staticmethod
    def _check_io(handle: _Handle, ep: int, intf: int, *, inbound: bool) -> None:
        d = handle.device
        d._check(handle)
        endpoint = d._endpoints.get(ep)
        if endpoint is None or endpoint.is_in != inbound:
            raise _error(_INVALID)
        if d._claims.get(intf) is not handle:
            raise _error(_BUSY)  # usbfs: the kernel driver (or another program) has it
