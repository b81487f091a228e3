"""A :class:`~tablectl.drivers.transports.frames.FrameLink` over python-can (STYLE practices 5, 7).

The interface is configuration: ``CanLink("socketcan", "can0")``, ``CanLink("slcan",
"/dev/ttyACM0", bitrate=250_000)``, ``CanLink("virtual", "some-name")`` in tests; extra keyword
arguments go to ``can.Bus``. Receiving is python-can's asyncio recipe (``can.Notifier`` with a
``can.AsyncBufferedReader``). A missing python-can or backend → ``DriverUnavailableError``; a bad
interface, channel or bitrate → ``DriverInitError``; a failure after opening →
``TransportClosedError``.

Caveat, read in ``can/notifier.py`` (4.6): when the notifier watches a descriptor (socketcan), an
error in ``bus.recv`` goes to the loop's exception handler, not to :meth:`recv`, so an unplugged
socketcan adapter looks like a silent bus; the drum driver's watchdog reopens the link. ``can`` is
imported in :meth:`CanLink.open` only (STYLE practice 3).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tablectl.drivers.errors import DriverInitError, DriverUnavailableError, TransportClosedError
from tablectl.drivers.transports.frames import MAX_DLC, CanFrame, FrameTraceHook

if TYPE_CHECKING:
    import can

log = logging.getLogger(__name__)


def _import_can() -> ModuleType:
    try:
        import can  # noqa: PLC0415 - lazy: a table without CAN devices never loads python-can
    except ImportError as exc:
        raise DriverUnavailableError(
            f"CAN needs python-can (pip install python-can): {exc}"
        ) from exc
    return can


class _ErrorListener:
    """A notifier listener that only records the reader thread's fatal error.

    ``Notifier._on_error`` calls ``on_error`` of every listener that has one (in the loop, via
    ``call_soon_threadsafe``); ``AsyncBufferedReader`` has none, so this one wakes :meth:`recv`.
    """

    def __init__(self) -> None:
        self.error: BaseException | None = None
        self.failed = asyncio.Event()

    def __call__(self, msg: can.Message) -> None:
        del msg  # frames go to the AsyncBufferedReader

    def on_error(self, exc: Exception) -> None:
        if self.error is None:
            self.error = exc
        self.failed.set()


class CanLink:
    """One CAN bus opened through python-can; see the module docstring.

    ``bitrate`` goes to ``can.Bus`` only when given (socketcan takes it from ``ip link``).
    ``poll_interval`` bounds the reader thread's ``bus.recv`` and so how long :meth:`close` waits;
    ``send_timeout`` how long ``bus.send`` waits for room in the adapter's queue.
    """

    def __init__(
        self,
        interface: str,
        channel: str,
        *,
        bitrate: int | None = None,
        receive_own_messages: bool = False,
        poll_interval: float = 0.1,
        send_timeout: float = 1.0,
        trace: FrameTraceHook | None = None,
        **kwargs: Any,
    ) -> None:
        if poll_interval <= 0 or send_timeout <= 0:
            raise ValueError("poll_interval and send_timeout must be > 0")
        self.interface = interface
        self.channel = channel
        self.bitrate = bitrate
        self.receive_own_messages = receive_own_messages
        self.poll_interval = poll_interval
        self.send_timeout = send_timeout
        self.trace = trace
        self.kwargs = dict(kwargs)
        self.skipped = 0
        """Received frames that are no classic data frame (error, remote, CAN FD > 8 bytes)."""
        self._can: ModuleType | None = None
        self._bus: can.BusABC | None = None
        self._notifier: can.Notifier | None = None
        self._reader: can.AsyncBufferedReader | None = None
        self._errors: _ErrorListener | None = None
        self._threaded = True
        self._send_lock = asyncio.Lock()

    def __repr__(self) -> str:
        state = "open" if self._bus is not None else "closed"
        return f"CanLink({self.interface!r}, {self.channel!r}, {state})"

    @property
    def is_open(self) -> bool:
        return self._bus is not None

    async def open(self) -> None:
        """Create the bus (in a thread: some interfaces sleep in it) and start the notifier."""
        if self._bus is not None:
            return
        can_mod = _import_can()
        loop = asyncio.get_running_loop()
        config: dict[str, Any] = dict(self.kwargs)
        if self.bitrate is not None:
            config["bitrate"] = self.bitrate
        where = f"CAN {self.interface}:{self.channel}"
        valid = can_mod.interfaces.VALID_INTERFACES
        if self.interface not in valid:
            # python-can says CanInterfaceNotImplementedError for this too; it is a config typo,
            # not a missing library.
            known = ", ".join(sorted(valid))
            raise DriverInitError(f"{where}: unknown CAN interface; known: {known}")
        try:
            bus = await asyncio.to_thread(
                can_mod.Bus,
                interface=self.interface,
                channel=self.channel,
                receive_own_messages=self.receive_own_messages,
                **config,
            )
        except can_mod.CanInterfaceNotImplementedError as exc:
            raise DriverUnavailableError(f"{where}: backend not available: {exc}") from exc
        except (can_mod.CanError, OSError, ValueError, TypeError) as exc:
            raise DriverInitError(f"{where}: cannot open: {exc}") from exc
        try:
            fd = bus.fileno()
        except NotImplementedError:
            fd = -1
        except Exception:
            fd = -1
        reader = can_mod.AsyncBufferedReader()
        errors = _ErrorListener()
        try:
            notifier = can_mod.Notifier(
                bus, [reader, errors], timeout=self.poll_interval, loop=loop
            )
        except Exception as exc:
            await asyncio.to_thread(_shutdown_quietly, bus)
            raise DriverInitError(f"{where}: cannot start the notifier: {exc}") from exc
        # Mirrors Notifier.add_bus: a file descriptor plus a loop means no reader thread.
        self._threaded = fd < 0
        self._can = can_mod
        self._bus, self._notifier, self._reader, self._errors = bus, notifier, reader, errors

    async def recv(self) -> CanFrame:
        """The next classic data frame (error, remote and oversize FD frames are skipped)."""
        while True:
            reader, errors = self._reader, self._errors
            if reader is None or errors is None or self._bus is None:
                raise TransportClosedError(f"CAN {self.interface}:{self.channel} is closed")
            if not reader.buffer.empty():
                msg = reader.buffer.get_nowait()
            else:
                if errors.failed.is_set():
                    raise self._failure(errors)
                getter = asyncio.ensure_future(reader.get_message())
                failed = asyncio.ensure_future(errors.failed.wait())
                try:
                    await asyncio.wait({getter, failed}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    failed.cancel()
                    if not getter.done():
                        getter.cancel()
                if not getter.done() or getter.cancelled():
                    raise self._failure(errors)
                msg = getter.result()
            frame = self._to_frame(msg)
            if frame is None:
                self.skipped += 1
                continue
            if self.trace:
                self.trace("rx", frame)
            return frame

    def _failure(self, errors: _ErrorListener) -> TransportClosedError:
        where = f"CAN {self.interface}:{self.channel}"
        if errors.error is None:
            return TransportClosedError(f"{where} is closed")
        return TransportClosedError(f"{where}: receive failed: {errors.error}")

    @staticmethod
    def _to_frame(msg: can.Message) -> CanFrame | None:
        if msg.is_error_frame or msg.is_remote_frame or len(msg.data) > MAX_DLC:
            return None
        return CanFrame(msg.arbitration_id, bytes(msg.data), msg.is_extended_id)

    async def send(self, frame: CanFrame) -> None:
        """Transmit ``frame`` (in call order)."""
        where = f"CAN {self.interface}:{self.channel}"
        async with self._send_lock:
            bus, can_mod = self._bus, self._can
            if bus is None or can_mod is None:
                raise TransportClosedError(f"{where} is closed")
            msg = can_mod.Message(
                arbitration_id=frame.arbitration_id,
                data=frame.data,
                is_extended_id=frame.is_extended_id,
            )
            if self.trace:
                self.trace("tx", frame)
            try:
                # A worker thread: a full transmit queue blocks bus.send up to send_timeout.
                await asyncio.to_thread(bus.send, msg, self.send_timeout)
            except (can_mod.CanError, OSError, ValueError) as exc:
                raise TransportClosedError(f"{where}: send failed: {exc}") from exc

    async def close(self) -> None:
        """Stop the notifier, then shut the bus down. Idempotent.

        In a thread that finishes even if the caller is cancelled, so the bus is always released.
        """
        bus, notifier, errors = self._bus, self._notifier, self._errors
        self._bus = self._notifier = self._reader = self._errors = None
        if bus is None:
            return
        if errors is not None:
            errors.failed.set()  # wakes a pending recv(), which then reports "closed"
        if notifier is not None and not self._threaded:
            # File-descriptor mode: stop() calls loop.remove_reader, which belongs to this thread.
            with contextlib.suppress(Exception):
                notifier.stop()
            notifier = None
        await asyncio.to_thread(_stop_and_shutdown, notifier, bus)


def _stop_and_shutdown(notifier: can.Notifier | None, bus: can.BusABC) -> None:
    if notifier is not None:
        try:
            # Joins the reader thread, which leaves bus.recv within poll_interval.
            notifier.stop()
        except Exception:
            log.debug("CAN notifier stop failed", exc_info=True)
    _shutdown_quietly(bus)


def _shutdown_quietly(bus: can.BusABC) -> None:
    try:
        bus.shutdown()
    except Exception:
        log.debug("CAN bus shutdown failed", exc_info=True)


async def open_can_link(interface: str, channel: str, **kwargs: Any) -> CanLink:
    """Build and open a :class:`CanLink` (tools and simulators; drivers open it themselves so
    that a failure becomes an availability event)."""
    link = CanLink(interface, channel, **kwargs)
    await link.open()
    return link
