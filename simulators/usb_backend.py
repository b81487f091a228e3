"""A simulated pyusb backend: USB devices described as data, served at the ``IBackend`` layer.

Everything above it is real pyusb, so production transports run unchanged and only libusb is
replaced: pyusb's counterpart of python-can's virtual bus (STYLE practice 7). Usage::

    device = SimUsbDevice.hid_keyboard(vid=0x0C2E, pid=0x0B61, serial="SHOE-1")
    backend = SimUsbBackend(device)
    dev = usb.core.find(idVendor=0x0C2E, backend=backend)
    device.push_in(0x81, report)          # the device side: queue an IN transfer
    device.on_out(lambda ep, data: ...)   # the device side: OUT transfers arrive here

Linux libusb semantics, errors as pyusb's libusb1 backend raises them (``USBError(strerror,
libusb_code, errno)``): one configuration (value 1); string descriptors in language 0x0409; a
bound kernel driver makes ``claim_interface``/``set_configuration`` fail with EBUSY, as usbfs
does (ENOENT detaching none); an IN endpoint is a FIFO of transfers, cut to the read size, an
empty one timing out with ETIMEDOUT (-7; timeout 0 waits forever); OUT writes call
:meth:`SimUsbDevice.on_out`; GET_DESCRIPTOR is answered, other IN control requests stall (EPIPE),
OUT ones are logged in :attr:`SimUsbDevice.control_log`. :meth:`SimUsbDevice.unplug` fails every
later call with ENODEV (-4); :meth:`SimUsbDevice.plug` brings it back as a new device.
"""

from __future__ import annotations

import array
import threading
import time
from collections.abc import Iterator

import usb.backend
import usb.core

from tablectl.simulators.usb_device import (
    DESC_CONFIG,
    DESC_DEVICE,
    DESC_STRING,
    ENDPOINT_TYPE_BITS,
    ERROR_BUSY,
    ERROR_INVALID,
    ERROR_NO_DEVICE,
    ERROR_NOT_FOUND,
    ERROR_PIPE,
    ERROR_TIMEOUT,
    GET_DESCRIPTOR,
    LANGID_EN_US,
    STRING_MANUFACTURER,
    STRING_PRODUCT,
    STRING_SERIAL,
    Descriptor,
    DeviceHandle,
    DeviceId,
    SimUsbDevice,
    usb_error,
)


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

    def enumerate_devices(self) -> Iterator[DeviceId]:
        # A list, not a generator holding locks: pyusb may drop the iterator half-way, and its
        # finalizer can run in another thread.
        found = []
        for device in self.devices:
            with device._cond:
                if device.connected:
                    found.append(DeviceId(device, device._generation))
        return iter(found)

    def get_parent(self, dev: DeviceId) -> None:
        return None

    def get_device_descriptor(self, dev: DeviceId) -> Descriptor:
        d = dev.device
        return Descriptor(
            bLength=18,
            bDescriptorType=DESC_DEVICE,
            bcdUSB=0x0200,
            bDeviceClass=0,
            bDeviceSubClass=0,
            bDeviceProtocol=0,
            bMaxPacketSize0=64,
            idVendor=d.vid,
            idProduct=d.pid,
            bcdDevice=d.bcd_device,
            iManufacturer=STRING_MANUFACTURER if d.manufacturer is not None else 0,
            iProduct=STRING_PRODUCT if d.product is not None else 0,
            iSerialNumber=STRING_SERIAL if d.serial is not None else 0,
            bNumConfigurations=1,
            bus=1,
            address=d.address,
            port_number=d.address,
            port_numbers=(d.address,),
            speed=2,  # LIBUSB_SPEED_FULL
        )

    def get_configuration_descriptor(self, dev: DeviceId, config: int) -> Descriptor:
        if config != 0:
            raise IndexError(f"Invalid configuration index {config}")
        d = dev.device
        total = 9 + sum(9 + len(i.extra) + 7 * len(i.endpoints) for i in d.interfaces)
        return Descriptor(
            bLength=9,
            bDescriptorType=DESC_CONFIG,
            wTotalLength=total,
            bNumInterfaces=len(d.interfaces),
            bConfigurationValue=1,
            iConfiguration=0,
            bmAttributes=0x80,
            bMaxPower=50,
            extra_descriptors=[],
        )

    def get_interface_descriptor(
        self, dev: DeviceId, intf: int, alt: int, config: int
    ) -> Descriptor:
        d = dev.device
        if config != 0 or intf >= len(d.interfaces):
            raise IndexError(f"Invalid interface index {intf}")
        if alt != 0:
            raise IndexError(f"Invalid alternate setting index {alt}")
        i = d.interfaces[intf]
        return Descriptor(
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
        self, dev: DeviceId, ep: int, intf: int, alt: int, config: int
    ) -> Descriptor:
        self.get_interface_descriptor(dev, intf, alt, config)  # validates the indexes
        endpoints = dev.device.interfaces[intf].endpoints
        if ep >= len(endpoints):
            raise IndexError(f"Invalid endpoint index {ep}")
        e = endpoints[ep]
        return Descriptor(
            bLength=7,
            bDescriptorType=5,
            bEndpointAddress=e.address,
            bmAttributes=ENDPOINT_TYPE_BITS[e.type],
            wMaxPacketSize=e.max_packet_size,
            bInterval=e.interval,
            bRefresh=0,
            bSynchAddress=0,
            extra_descriptors=[],
        )

    # --- handles, configuration, interfaces ----------------------------------------------------

    def open_device(self, dev: DeviceId) -> DeviceHandle:
        d = dev.device
        with d._cond:
            if not d.connected or dev.generation != d._generation:
                raise usb_error(ERROR_NO_DEVICE)
            return DeviceHandle(d, dev.generation)

    def close_device(self, dev_handle: DeviceHandle) -> None:
        d = dev_handle.device
        with d._cond:
            for number in dev_handle.claimed:
                if d._claims.get(number) is dev_handle:
                    del d._claims[number]
            dev_handle.claimed.clear()

    def set_configuration(self, dev_handle: DeviceHandle, config_value: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            if config_value not in (0, 1):
                raise usb_error(ERROR_NOT_FOUND)
            if d._claims or any(d._kernel.values()):
                raise usb_error(ERROR_BUSY)
            d._configuration = config_value

    def get_configuration(self, dev_handle: DeviceHandle) -> int:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            return d._configuration

    def set_interface_altsetting(
        self, dev_handle: DeviceHandle, intf: int, altsetting: int
    ) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            if altsetting != 0:
                raise usb_error(ERROR_NOT_FOUND)

    def claim_interface(self, dev_handle: DeviceHandle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            owner = d._claims.get(intf)
            if owner is dev_handle:
                return
            if owner is not None or d._kernel.get(intf, False):
                raise usb_error(ERROR_BUSY)
            d._claims[intf] = dev_handle
            dev_handle.claimed.add(intf)

    def release_interface(self, dev_handle: DeviceHandle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            dev_handle.claimed.discard(intf)
            d._check(dev_handle)
            if d._claims.get(intf) is not dev_handle:
                raise usb_error(ERROR_NOT_FOUND)
            del d._claims[intf]

    def is_kernel_driver_active(self, dev_handle: DeviceHandle, intf: int) -> bool:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            return d._kernel.get(intf, False)

    def detach_kernel_driver(self, dev_handle: DeviceHandle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            d._interface(intf)
            if not d._kernel.get(intf, False):
                raise usb_error(ERROR_NOT_FOUND)
            d._kernel[intf] = False

    def attach_kernel_driver(self, dev_handle: DeviceHandle, intf: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)
            if d._interface(intf).kernel_driver is None:
                raise usb_error(ERROR_NOT_FOUND)
            if d._kernel.get(intf, False) or intf in d._claims:
                raise usb_error(ERROR_BUSY)
            d._kernel[intf] = True

    def clear_halt(self, dev_handle: DeviceHandle, ep: int) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)

    def reset_device(self, dev_handle: DeviceHandle) -> None:
        d = dev_handle.device
        with d._cond:
            d._check(dev_handle)

    # --- transfers ----------------------------------------------------------------------------

    def bulk_read(
        self, dev_handle: DeviceHandle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout)

    def intr_read(
        self, dev_handle: DeviceHandle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        return self._read(dev_handle, ep, intf, buff, timeout)

    def bulk_write(
        self, dev_handle: DeviceHandle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        return self._write(dev_handle, ep, intf, data)

    def intr_write(
        self, dev_handle: DeviceHandle, ep: int, intf: int, data: array.array[int], timeout: int
    ) -> int:
        return self._write(dev_handle, ep, intf, data)

    def ctrl_transfer(  # noqa: PLR0917 - IBackend's signature, called positionally by pyusb
        self,
        dev_handle: DeviceHandle,
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
            if bmRequestType & 0x60 != 0 or bRequest != GET_DESCRIPTOR:
                raise usb_error(ERROR_PIPE)  # an unsupported request: the device stalls
            reply = self._descriptor(d, wValue >> 8, wValue & 0xFF)
        size = min(len(reply), len(data))
        data[:size] = array.array("B", reply[:size])
        return size

    def _descriptor(self, d: SimUsbDevice, kind: int, index: int) -> bytes:
        if kind == DESC_STRING:
            if index == 0:
                return bytes([4, DESC_STRING]) + LANGID_EN_US.to_bytes(2, "little")
            text = d._string(index)
            if text is None:
                raise usb_error(ERROR_PIPE)
            encoded = text.encode("utf-16-le")[:252]
            return bytes([2 + len(encoded), DESC_STRING]) + encoded
        if kind == DESC_DEVICE:
            return bytes([18, DESC_DEVICE, 0, 2, 0, 0, 0, 64]) + (
                d.vid.to_bytes(2, "little")
                + d.pid.to_bytes(2, "little")
                + d.bcd_device.to_bytes(2, "little")
                + bytes([STRING_MANUFACTURER, STRING_PRODUCT, STRING_SERIAL, 1])
            )
        raise usb_error(ERROR_PIPE)

    def _read(
        self, handle: DeviceHandle, ep: int, intf: int, buff: array.array[int], timeout: int
    ) -> int:
        d = handle.device
        deadline = None if timeout == 0 else time.monotonic() + timeout / 1000
        with d._cond:
            self._check_io(handle, ep, intf, inbound=True)
            queue = d._queues[ep]
            while not queue:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise usb_error(ERROR_TIMEOUT)
                d._cond.wait(remaining)
                self._check_io(handle, ep, intf, inbound=True)
            head = queue.popleft()
            size = len(buff) * buff.itemsize
            if len(head) > size:
                queue.appendleft(head[size:])
                head = head[:size]
        buff[: len(head)] = array.array("B", head)
        return len(head)

    def _write(self, handle: DeviceHandle, ep: int, intf: int, data: array.array[int]) -> int:
        d = handle.device
        with d._cond:
            self._check_io(handle, ep, intf, inbound=False)
            callback = d._out
        payload = data.tobytes()
        if callback is not None:
            callback(ep, payload)
        return len(payload)

    @staticmethod
    def _check_io(handle: DeviceHandle, ep: int, intf: int, *, inbound: bool) -> None:
        d = handle.device
        d._check(handle)
        endpoint = d._endpoints.get(ep)
        if endpoint is None or endpoint.is_in != inbound:
            raise usb_error(ERROR_INVALID)
        if d._claims.get(intf) is not handle:
            raise usb_error(ERROR_BUSY)  # usbfs: the kernel driver (or another program) has it
