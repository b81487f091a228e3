"""A :class:`~tablectl.drivers.transports.base.ByteStream` over one USB interface's endpoints
(pyusb), for HID wedge shoes (interrupt IN) and bulk shufflers. One ``read()`` is one transfer, so
HID report boundaries survive.

Why each step of :meth:`UsbEndpointStream.open` (in a thread: libusb blocks): match vid/pid and
serial, so two identical shoes on one PC stay apart; keep the active configuration (setting it
again with other interfaces bound fails on Linux); detach a bound kernel driver (``usbhid`` owns
a scanner; claiming would fail with EBUSY), re-attached on close so the scanner types into the
console again; claim and pick endpoints. Each read is ``to_thread(ep.read(…, timeout_ms))``; a
cancelled read's result is kept for the next, so no report is lost. ``USBError`` after opening →
``TransportClosedError``; absent or unclaimable → ``DriverInitError``; no pyusb or libusb →
``DriverUnavailableError``. ``usb`` is imported in ``open`` only (STYLE practice 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
from typing import Any

from tablectl.drivers.errors import (
    DriverInitError,
    DriverUnavailableError,
    TransportClosedError,
)

_WRITE_TIMEOUT_MS = 1000
"""A device that does not take an OUT transfer within a second is treated as gone."""

_ENDPOINT_INTR = 3
_ENDPOINT_BULK = 2
_DIRECTION_IN = 0x80

_HID_SET_IDLE = 0x0A
_HID_SET_PROTOCOL = 0x0B
_HID_CLASS_INTERFACE_OUT = 0x21


def _import_usb() -> tuple[Any, Any]:
    try:
        import usb.core  # noqa: PLC0415 - lazy: a table without USB devices never loads pyusb
        import usb.util  # noqa: PLC0415
    except ImportError as exc:
        raise DriverUnavailableError(f"USB needs pyusb (pip install pyusb): {exc}") from exc
    return usb.core, usb.util


class UsbEndpointStream:
    """Byte pipe to one interface of one USB device; see the module docstring.

    ``serial`` must match iSerialNumber (devices without one never match). Endpoints default to the
    first of each direction; without OUT it can only be read. ``timeout_ms`` bounds one blocking
    read and how long :meth:`close` waits. ``hid_boot_protocol`` sends SET_PROTOCOL(boot) and
    SET_IDLE(0) so a keyboard reports in the 8-byte boot format (a device that stalls them is
    accepted).
    """

    def __init__(
        self,
        *,
        vid: int,
        pid: int,
        serial: str | None = None,
        interface: int = 0,
        ep_in: int | None = None,
        ep_out: int | None = None,
        backend: object | None = None,
        read_size: int = 64,
        timeout_ms: int = 100,
        hid_boot_protocol: bool = False,
    ) -> None:
        if timeout_ms <= 0:
            raise ValueError("timeout_ms must be > 0 (0 would block a thread forever)")
        if read_size <= 0:
            raise ValueError("read_size must be > 0")
        self.vid = vid
        self.pid = pid
        self.serial = serial
        self.interface = interface
        self.ep_in_address = ep_in
        self.ep_out_address = ep_out
        self.backend = backend
        self.read_size = read_size
        self.timeout_ms = timeout_ms
        self.hid_boot_protocol = hid_boot_protocol
        self._core: Any = None  # usb.core, once open
        self._util: Any = None
        self._dev: Any = None  # usb.core.Device; pyusb ships no type stubs
        self._ep_in: Any = None
        self._ep_out: Any = None
        self._detached = False
        self._pending: asyncio.Future[bytes] | None = None

    def __repr__(self) -> str:
        state = "open" if self._dev is not None else "closed"
        return f"UsbEndpointStream({self.name}, interface={self.interface}, {state})"

    @property
    def name(self) -> str:
        """``vvvv:pppp`` (plus ``/serial``): how messages name the device."""
        return f"{self.vid:04x}:{self.pid:04x}" + (f"/{self.serial}" if self.serial else "")

    @property
    def is_open(self) -> bool:
        return self._dev is not None

    @property
    def kernel_driver_detached(self) -> bool:
        """True while we hold an interface that a kernel driver had (re-attached on close)."""
        return self._detached

    # --- open / close ----------------------------------------------------------------------

    async def open(self) -> None:
        """Find, detach, claim and pick endpoints (in a thread)."""
        if self._dev is not None:
            return
        self._core, self._util = _import_usb()
        await asyncio.to_thread(self._open_blocking)

    def _open_blocking(self) -> None:
        core = self._core
        try:
            found = core.find(
                find_all=True, idVendor=self.vid, idProduct=self.pid, backend=self.backend
            )
            dev = next((d for d in found if self._serial_matches(d)), None)
        except core.NoBackendError:
            raise DriverUnavailableError(
                f"USB device {self.name}: no libusb backend for pyusb "
                "(install libusb-1.0, e.g. apt-get install libusb-1.0-0)"
            ) from None
        except core.USBError as exc:
            raise DriverInitError(f"USB device {self.name}: enumeration failed: {exc}") from exc
        if dev is None:
            raise DriverInitError(f"USB device {self.name} not found")
        try:
            self._setup(dev)
        except BaseException:
            self._release(dev)
            raise
        self._dev = dev

    def _serial_matches(self, dev: Any) -> bool:
        if self.serial is None:
            return True
        try:
            return bool(dev.serial_number == self.serial)
        except (self._core.USBError, ValueError):
            return False  # no string descriptors, or no permission to read them

    def _setup(self, dev: Any) -> None:
        core, util = self._core, self._util
        try:
            try:
                config = dev.get_active_configuration()
            except core.USBError:
                # Unconfigured: no interface exists yet, so no kernel driver is bound either.
                dev.set_configuration()
                config = dev.get_active_configuration()
            intf = util.find_descriptor(config, bInterfaceNumber=self.interface)
            if intf is None:
                raise DriverInitError(f"USB device {self.name} has no interface {self.interface}")
            if self._kernel_driver_active(dev):
                dev.detach_kernel_driver(self.interface)
                self._detached = True
            util.claim_interface(dev, self.interface)
            if self.hid_boot_protocol:
                self._hid_boot(dev)
        except core.USBError as exc:
            raise DriverInitError(f"USB device {self.name}: {_explain(exc)}") from exc
        self._ep_in = self._endpoint(intf, self.ep_in_address, inbound=True)
        self._ep_out = self._endpoint(intf, self.ep_out_address, inbound=False)
        if self._ep_in is None:
            raise DriverInitError(
                f"USB device {self.name} interface {self.interface} has no IN endpoint"
                + (f" 0x{self.ep_in_address:02x}" if self.ep_in_address is not None else "")
            )
        if self.ep_out_address is not None and self._ep_out is None:
            raise DriverInitError(
                f"USB device {self.name} has no OUT endpoint 0x{self.ep_out_address:02x}"
            )

    def _kernel_driver_active(self, dev: Any) -> bool:
        try:
            return bool(dev.is_kernel_driver_active(self.interface))
        except NotImplementedError:
            return False  # macOS/Windows backends: there is nothing to detach

    def _hid_boot(self, dev: Any) -> None:
        for request, value in ((_HID_SET_PROTOCOL, 0), (_HID_SET_IDLE, 0)):
            with contextlib.suppress(self._core.USBError):  # optional requests: a STALL is ok
                dev.ctrl_transfer(_HID_CLASS_INTERFACE_OUT, request, value, self.interface, None)

    @staticmethod
    def _endpoint(intf: Any, address: int | None, *, inbound: bool) -> Any:
        for ep in intf:
            if address is not None:
                if ep.bEndpointAddress == address:
                    return ep
                continue
            is_in = bool(ep.bEndpointAddress & _DIRECTION_IN)
            if is_in == inbound and ep.bmAttributes & 0x3 in (_ENDPOINT_INTR, _ENDPOINT_BULK):
                return ep
        return None

    async def close(self) -> None:
        """Release the interface and give it back to the kernel driver. Idempotent."""
        dev, self._dev = self._dev, None
        if dev is None:
            return
        pending, self._pending = self._pending, None
        if pending is not None:
            # The read thread ends within timeout_ms; releasing under it would race libusb.
            await asyncio.gather(pending, return_exceptions=True)
        await asyncio.to_thread(self._release, dev)

    def _release(self, dev: Any) -> None:
        core, util = self._core, self._util
        with contextlib.suppress(core.USBError):
            util.release_interface(dev, self.interface)
        if self._detached:
            self._detached = False
            # Unplugged, or someone else grabbed it: nothing to give back then.
            with contextlib.suppress(core.USBError, NotImplementedError):
                dev.attach_kernel_driver(self.interface)
        with contextlib.suppress(core.USBError):
            util.dispose_resources(dev)
        self._ep_in = self._ep_out = None

    # --- I/O ---------------------------------------------------------------------------------

    async def read(self) -> bytes:
        """One transfer from the IN endpoint (waits as long as it takes)."""
        while True:
            if self._dev is None:
                raise TransportClosedError(f"USB device {self.name} is not open")
            pending = self._pending
            if pending is None:
                pending = asyncio.ensure_future(asyncio.to_thread(self._read_blocking))
                self._pending = pending
            try:
                data = await asyncio.shield(pending)
            finally:
                if pending.done() and self._pending is pending:
                    self._pending = None
            if data:
                return data

    def _read_blocking(self) -> bytes:
        core, ep = self._core, self._ep_in
        if ep is None:
            raise TransportClosedError(f"USB device {self.name} is not open")
        try:
            return bytes(ep.read(self.read_size, self.timeout_ms))
        except core.USBTimeoutError:
            return b""
        except core.USBError as exc:
            raise TransportClosedError(f"USB device {self.name}: read: {_explain(exc)}") from exc

    async def write(self, data: bytes) -> None:
        """Send ``data`` to the OUT endpoint (``DriverInitError`` when there is none: a config
        mistake).
        """
        if self._dev is None:
            raise TransportClosedError(f"USB device {self.name} is not open")
        if self._ep_out is None:
            raise DriverInitError(f"USB device {self.name} has no OUT endpoint to write to")
        await asyncio.to_thread(self._write_blocking, bytes(data))

    def _write_blocking(self, data: bytes) -> None:
        core, ep = self._core, self._ep_out
        view = memoryview(data)
        while view:
            if ep is None:
                raise TransportClosedError(f"USB device {self.name} is not open")
            try:
                written = int(ep.write(view.tobytes(), max(self.timeout_ms, _WRITE_TIMEOUT_MS)))
            except core.USBTimeoutError as exc:
                raise TransportClosedError(f"USB device {self.name}: write timed out") from exc
            except core.USBError as exc:
                raise TransportClosedError(
                    f"USB device {self.name}: write: {_explain(exc)}"
                ) from exc
            if written <= 0:
                raise TransportClosedError(f"USB device {self.name}: write accepted no bytes")
            view = view[written:]


def _explain(exc: OSError) -> str:
    hints = {
        errno.EACCES: "permission denied (add a udev rule or the plugdev group)",
        errno.EBUSY: "busy (claimed by another program or driver)",
        errno.ENODEV: "device gone (unplugged)",
        errno.EPIPE: "endpoint stalled",
    }
    hint = hints.get(exc.errno or 0)
    return f"{hint}: {exc}" if hint else str(exc)
