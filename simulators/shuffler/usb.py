"""The simulated shuffler behind a simulated USB device (bulk IN ``0x81``, OUT ``0x02``)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from tablectl.simulators.chunks import Chunk
from tablectl.simulators.shuffler.model import SimShuffler

if TYPE_CHECKING:
    from tablectl.simulators.usb_backend import SimUsbBackend
    from tablectl.simulators.usb_device import SimUsbDevice

USB_VID: Final = 0x1209
"""pid.codes' vendor id for open-source hardware; the simulated shuffler's default."""
USB_PID: Final = 0x5346


class SimShufflerUsb:
    """A :class:`SimShuffler` behind the bulk endpoints of a simulated USB device.

    Each chunk becomes one IN transfer on ``0x81`` (``split`` pieces become short transfers the host
    must reassemble); each OUT transfer on ``0x02`` goes to :meth:`SimShuffler.receive`, its reply
    pushed at once. ``disconnect`` unplugs the device and plugs it back as a new one. Give
    :attr:`backend` to the driver and drive time with :meth:`run` (or :meth:`poll`).
    """

    def __init__(
        self,
        model: SimShuffler,
        *,
        vid: int = USB_VID,
        pid: int = USB_PID,
        serial: str | None = "SIM-SHUFFLER",
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        # Lazy: pyusb is only needed when a USB shuffler is simulated.
        from tablectl.simulators.usb_backend import SimUsbBackend  # noqa: PLC0415
        from tablectl.simulators.usb_device import SimUsbDevice  # noqa: PLC0415

        self.model = model
        self.device: SimUsbDevice = SimUsbDevice.bulk(
            vid, pid, serial=serial, product="tablectl shuffler simulator"
        )
        self.backend: SimUsbBackend = SimUsbBackend(self.device)
        self._clock = clock
        # OUT transfers arrive in the host's writer thread, time in the event loop's: one lock.
        self._lock = threading.Lock()
        self._unplugged = False
        self.device.on_out(self._on_out)

    def poll(self, now: float | None = None) -> None:
        """Advance the model to ``now`` and queue what it sent as IN transfers."""
        with self._lock:
            t = self._clock() if now is None else now
            self._follow_link(t)
            self._push(self.model.advance_chunks(t))

    async def run(self, interval: float | None = None) -> None:
        """Poll until cancelled (every ``interval`` s; default 20 ms / speed, at least 2 ms)."""
        step = interval if interval is not None else max(0.002, 0.02 / self.model.speed)
        while True:
            self.poll()
            await asyncio.sleep(step)

    def _on_out(self, endpoint: int, data: bytes) -> None:
        del endpoint
        with self._lock:
            now = self._clock()
            self._push(self.model.advance_chunks(now))
            reply = self.model.receive(data, now)
            if reply:
                self.device.push_in(0x81, reply)

    def _follow_link(self, now: float) -> None:
        down = self.model.link_down(now)
        if down and not self._unplugged:
            self._unplugged = True
            self.device.unplug()
        elif not down and self._unplugged:
            self._unplugged = False
            self.device.plug()

    def _push(self, chunks: list[Chunk]) -> None:
        for chunk in chunks:
            if chunk.data:
                self.device.push_in(0x81, chunk.data)
