"""A :class:`~tablectl.drivers.transports.base.ByteStream` over any pyserial URL (STYLE practices 5,
6).

One class for a USB adapter, a pty, a ``socket://`` bridge and ``loop://``, so config picks the
medium. A driver has bytes delivered (:meth:`SerialStream.deliver_to`, after pymodbus
``transport/serialtransport.py``): ``loop.add_reader`` calls back and the codec gets the bytes at
once, with no task between. :meth:`SerialStream.read` (simulators, tools) waits on the same
descriptor. Ports without one (``loop://``, ``rfc2217://``; STYLE practice 6) fall back to a worker
thread whose result survives a cancelled ``read``, so cancelling never loses bytes. Writes wait on
``add_writer`` only while the OS buffer is full.

A device path is read and written with ``os.read``/``os.write`` on its non-blocking descriptor,
skipping pyserial's ``select()``: the loop has already waited, and ``select()`` refuses
descriptors above 1,023, which a hundred tables reach (each port holds five). URL handlers go
through pyserial. Failures to open become ``DriverInitError``, later ones ``TransportClosedError``
(the driver reconnects). pyserial is imported in :meth:`SerialStream.open` only.
:func:`serial_url_problem` checks a port's form at build time, so ``check-config`` refuses a bad
URL instead of a reconnect loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import os
import pkgutil
import re
import sys
from typing import Any
from urllib.parse import SplitResult, parse_qs, parse_qsl, urlencode, urlsplit

from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports.base import ByteReceiver

__all__ = ["SerialStream", "open_serial_stream", "serial_url_problem"]

_CHUNK = 4096
"""Upper bound of one non-blocking read; a burst larger than this just takes two reads."""

_THREAD_POLL = 0.1
"""pyserial timeout of one fallback thread read: bounds how long a thread outlives ``close``."""

_NO_DATA = (
    "device reports readiness to read but returned no data "
    "(device disconnected or multiple access on port?)"
)
"""pyserial's words for a port the loop found readable that reads nothing: a hung-up tty."""


def serial_url_problem(url: str) -> str | None:
    """What makes ``url`` unusable as a pyserial port whatever is plugged in; None if nothing.

    pyserial's own handler parses the URL on a port not opened; checked first is only what it takes
    and then fails on at open, or crashes on (empty or padded text, a TCP URL without host or a port
    in 1-65535, ``spy://``/``alt://`` without a path, ``hwgrep://`` without a search).
    """
    if not url.strip():
        return "empty (a device path such as /dev/ttyUSB0, or a pyserial URL)"
    if url != url.strip() or any(ord(c) < 0x20 or c == "\x7f" for c in url):
        return "has surrounding whitespace or control characters"
    if "://" not in url:
        return None  # a device path: whether it exists is the device's business, at open
    scheme = url.split("://", 1)[0].lower()
    if (problem := _handler_problem(scheme)) is not None:
        return problem
    if scheme == "hwgrep":
        if not url[len("hwgrep://") :].split("&", 1)[0]:
            return "hwgrep:// needs a regular expression (e.g. hwgrep://USB.*FTDI)"
        return _pyserial_problem(url, scheme)
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # an unbalanced [ in the host
        return f"not a URL: {exc}"
    if scheme in ("socket", "rfc2217"):
        problem = _host_port_problem(scheme, parts)
    elif scheme in ("spy", "alt") and not (parts.netloc or parts.path):
        problem = f"{scheme}:// needs a device path after it (e.g. {scheme}:///dev/ttyUSB0)"
    return problem or _pyserial_problem(url, scheme)


def _handler_problem(scheme: str) -> str | None:
    """None when a pyserial handler takes ``scheme://``, looked up as ``serial_for_url`` does
    (which says "not known" also when the handler is there but a module it needs is not)."""
    import serial  # noqa: PLC0415 - lazy: keep `import drivers` free of pyserial

    for package in serial.protocol_handler_packages:
        handler = f"{package}.protocol_{scheme}"
        try:
            importlib.import_module(handler)
        except ModuleNotFoundError as exc:
            if exc.name and not handler.startswith(exc.name):  # cp2110:// without hidapi
                needed = {"hid": "hidapi"}.get(exc.name, exc.name)  # pip's name, where it differs
                return (
                    f"{scheme}:// needs the {needed} package (Python module {exc.name!r}), "
                    "which is missing"
                )
        except (ImportError, ValueError):  # a scheme that is no module name at all
            pass
        else:
            return None
    known = sorted(
        f"{module.name.removeprefix('protocol_')}://"
        for package in serial.protocol_handler_packages
        for module in pkgutil.iter_modules(importlib.import_module(package).__path__)
        if module.name.startswith("protocol_")
    )
    known_text = ", ".join(known)
    return f"unknown URL scheme {scheme + '://'!r} (pyserial knows {known_text}, or a device path)"


def _pyserial_problem(url: str, scheme: str) -> str | None:
    """pyserial's verdict: its handler parses ``url`` (``from_url``) on a port not opened.

    Left out because they act while parsed: ``spy://``'s ``file`` (opened for writing),
    ``hwgrep://``'s ``skip_busy`` (opens ports) and ``logging`` (configures the root logger).
    """
    import serial  # noqa: PLC0415 - lazy: keep `import drivers` free of pyserial

    if scheme == "hwgrep":  # options after "&", no query
        url = "&".join(part for part in url.split("&") if part != "skip_busy")
    elif scheme == "spy":
        url = _without(url, "file")
    try:
        port = serial.serial_for_url(url, do_not_open=True)  # alt, spy, hwgrep parse here too
        levels = getattr(sys.modules[type(port).__module__], "LOGGER_LEVELS", None)
        if levels is not None:
            for level in parse_qs(urlsplit(url).query, keep_blank_values=True).get("logging", []):
                if level not in levels:
                    return f"option logging={level!r}: one of {', '.join(levels)}"
            url = _without(url, "logging")
        if hasattr(port, "from_url"):
            port.from_url(url)
    except re.error as exc:  # hwgrep:// compiles its search
        return f"hwgrep:// regular expression {exc.pattern!r}: {exc}"
    except (serial.SerialException, ValueError, KeyError, TypeError) as exc:
        if scheme == "hwgrep" and str(exc).startswith("no ports found"):
            return None  # a good search; the device is absent now (reported at open)
        return _reason(exc, scheme)
    return None


def _without(url: str, option: str) -> str:
    base, _, query = url.partition("?")
    kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != option]
    return f"{base}?{urlencode(kept)}" if kept else base


_FORM = re.compile(r'expected a string in the form "(?P<form>.*?)": (?P<reason>.*)', re.DOTALL)


def _reason(exc: BaseException, scheme: str) -> str:
    """pyserial's refusal in a user's words: its reason, then the form it expects."""
    # socket:// and loop:// format their message over a text holding braces ("{debug|info|…}"),
    # so a refusal surfaces as that format call's KeyError: the refusal is what it formatted.
    if isinstance(exc, KeyError) and isinstance(exc.__context__, ValueError):
        exc = exc.__context__
    found = _FORM.fullmatch(str(exc))
    if found is None:
        return f"{exc} (pyserial's {scheme}:// handler)"
    # alt:// shows its reason as a repr: ValueError("unknown option: 'x'")
    reason = re.sub(r"^\w+\((['\"])(.*)\1\)$", r"\2", found["reason"], flags=re.DOTALL)
    return f"{reason} (pyserial expects {found['form']})"


def _host_port_problem(scheme: str, parts: SplitResult) -> str | None:
    # pyserial would connect to port 0 or to no host, and crashes (TypeError) without a port.
    if not parts.hostname:
        return f"{scheme}:// needs HOST:PORT (e.g. {scheme}://127.0.0.1:7001)"
    text = parts.netloc.rpartition(":")[2] if ":" in parts.netloc.rpartition("]")[2] else ""
    if not text:
        return f"{scheme}:// needs a TCP port: {scheme}://{parts.hostname}:PORT"
    if not text.isdigit():
        return f"TCP port {text!r} is not a number"
    if not 1 <= int(text) <= 65535:
        return f"TCP port {int(text)} is out of range 1-65535"
    return None


def _is_device_path(url: str) -> bool:
    # pyserial only implements ``exclusive`` (flock) for native ports. URL handlers accept the
    # keyword but silently ignore it, so only pass it where it means something.
    return "://" not in url


class SerialStream:
    """A byte pipe over ``serial.serial_for_url(url)``; see the module docstring.

    ``exclusive`` takes an ``flock`` on device paths, so a second tablectl (or a stray ``screen``)
    cannot silently share the wheel's port. Bytes go to a receiver or to one ``read``; ``close`` may
    come from anywhere and wakes both.
    """

    def __init__(self, url: str, *, baudrate: int = 9600, exclusive: bool = True) -> None:
        self.url = url
        self.baudrate = baudrate
        self.exclusive = exclusive
        self._port: Any = None  # serial.SerialBase once open; pyserial ships no type stubs
        self._fd: int | None = None
        self._direct = False  # pyserial's own port: os.read/os.write on _fd (module docstring)
        self._receiver: ByteReceiver | None = None
        self._read_waiter: asyncio.Future[None] | None = None
        self._write_waiter: asyncio.Future[None] | None = None
        self._thread_read: asyncio.Future[bytes] | None = None

    def __repr__(self) -> str:
        state = "open" if self._port is not None else "closed"
        return f"SerialStream({self.url!r}, baudrate={self.baudrate}, {state})"

    @property
    def is_open(self) -> bool:
        return self._port is not None

    @property
    def uses_event_loop(self) -> bool:
        """True when reads are driven by ``add_reader``; False for the thread fallback."""
        return self._fd is not None

    # --- open / close ----------------------------------------------------------------------

    async def open(self) -> None:
        """Open the port in a thread (a TCP connect can take seconds); ``DriverInitError`` on
        failure.
        """
        if self._port is not None:
            return
        opening = asyncio.ensure_future(asyncio.to_thread(self._open_blocking))
        try:
            port = await asyncio.shield(opening)
        except asyncio.CancelledError:
            # The thread cannot be stopped; close whatever it opens so the port is not leaked
            # (and, for an exclusive device, not left locked until the process exits).
            opening.add_done_callback(_close_if_opened)
            raise
        fd = _usable_fileno(port)
        try:
            if fd is not None:
                # Non-blocking writes; we wait for writability on the loop ourselves.
                port.write_timeout = 0
            else:
                # Short blocking reads in the worker thread, so it never outlives close by much.
                port.timeout = _THREAD_POLL
        except (OSError, ValueError) as exc:
            await asyncio.to_thread(_close_quietly, port)
            raise DriverInitError(f"cannot configure serial port {self.url!r}: {exc}") from exc
        self._port = port
        self._fd = fd
        self._direct = fd is not None and _is_native(port)

    def _open_blocking(self) -> Any:
        try:
            import serial  # noqa: PLC0415 - lazy: keep `import drivers` free of pyserial
        except ImportError as exc:  # pragma: no cover - pyserial is a hard dependency
            raise DriverInitError(f"cannot open {self.url!r}: pyserial is not installed") from exc
        problem = serial_url_problem(self.url)
        if problem is not None:
            # Before pyserial sees it: for some malformed URLs its handlers raise KeyError or
            # TypeError (socket:// formats its own message wrongly), which no caller expects.
            raise DriverInitError(f"cannot open serial port {self.url!r}: {problem}")
        kwargs: dict[str, Any] = {"baudrate": self.baudrate, "timeout": 0}
        if self.exclusive and _is_device_path(self.url):
            kwargs["exclusive"] = True
        try:
            return serial.serial_for_url(self.url, **kwargs)
        except (serial.SerialException, OSError, ValueError) as exc:
            raise DriverInitError(f"cannot open serial port {self.url!r}: {exc}") from exc

    async def close(self) -> None:
        """Close and wake any pending ``read``/``write``. Idempotent.

        Readers and writers are unregistered before the descriptor closes, so the selector never
        watches a closed (or reused) fd.
        """
        port, fd = self._port, self._fd
        if port is None:
            return
        self._port = None
        self._fd = None
        self._receiver = None  # close ends a delivery without calling it: its owner closed us
        closed = TransportClosedError(f"serial port {self.url!r} closed")
        if fd is not None:
            loop = asyncio.get_running_loop()
            loop.remove_reader(fd)
            loop.remove_writer(fd)
        for waiter in (self._read_waiter, self._write_waiter):
            if waiter is not None and not waiter.done():
                waiter.set_exception(closed)
        # Unblock a fallback thread read now rather than after its timeout.
        with contextlib.suppress(Exception):
            port.cancel_read()
        # In a thread: pyserial's socket:// close() sleeps 0.3 s ("give the server some time"),
        # which would freeze every other device on this event loop.
        await asyncio.to_thread(_close_quietly, port)
        # Not cancelled: a reader may be awaiting it and gets its TransportClosedError (the
        # thread returns at once after cancel_read, or within _THREAD_POLL).
        self._thread_read = None

    # --- delivery ---------------------------------------------------------------------------

    def deliver_to(self, receiver: ByteReceiver | None) -> bool:
        """Hand what arrives to ``receiver`` from the loop: ``data_received`` per read, one
        ``connection_lost`` on a failed read. ``None`` ends it, as does :meth:`close` (which calls
        nothing). Callbacks run in this call's context (a log binding). False, changing nothing, for
        a port the loop cannot watch: :meth:`read` it.
        """
        fd = self._fd
        if fd is None:
            return False
        loop = asyncio.get_running_loop()
        if receiver is None:
            if self._receiver is not None:
                self._receiver = None
                loop.remove_reader(fd)
            return True
        if self._read_waiter is not None:
            raise RuntimeError(f"serial port {self.url!r}: a read() is pending")
        self._receiver = receiver
        loop.add_reader(fd, self._read_ready)
        return True

    def _read_ready(self) -> None:
        receiver = self._receiver
        if receiver is None:  # remove_reader cancels this callback; defensive only
            return
        try:
            data = self._read_available()
        except TransportClosedError as exc:
            self.deliver_to(None)
            receiver.connection_lost(exc)
            return
        if data:
            receiver.data_received(data)

    def _read_available(self) -> bytes:
        """What the port holds now that the loop found it readable (up to ``_CHUNK`` bytes;
        ``b""`` if a URL handler finds nothing after all)."""
        port = self._require_port()
        fd = self._fd
        if not self._direct or fd is None:
            try:
                data: bytes = port.read(_CHUNK)
            except OSError as exc:  # SerialException is an OSError
                raise self._lost("read", exc) from exc
            return data
        # pyserial's Serial.read after its select(): the same call, the same words on failure.
        try:
            data = os.read(fd, _CHUNK)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            raise self._lost("read", f"read failed: {exc}") from exc
        if not data:  # readable, yet nothing: the tty hung up (a USB adapter unplugged)
            raise self._lost("read", _NO_DATA)
        return data

    # --- read ------------------------------------------------------------------------------

    async def read(self) -> bytes:
        """Wait for at least one byte and return everything available (up to 4 KiB).

        ``TransportClosedError`` also for a closed pty master (EIO) or ``socket://`` peer.
        """
        if self._receiver is not None:
            raise RuntimeError(f"serial port {self.url!r} delivers to a receiver: no read()")
        if self._fd is None:
            return await self._read_in_thread()
        while True:
            port = self._require_port()
            try:
                data: bytes = port.read(_CHUNK)
            except OSError as exc:  # SerialException is an OSError
                raise self._lost("read", exc) from exc
            if data:
                return data
            # Nothing there: sleep until the fd is readable. A spurious wake-up just reads b""
            # and sleeps again; it never spins because each pass waits on the selector.
            await self._wait_ready(writable=False)

    async def _read_in_thread(self) -> bytes:
        while True:
            port = self._require_port()
            pending = self._thread_read
            if pending is None:
                pending = asyncio.ensure_future(asyncio.to_thread(self._blocking_read, port))
                # If close() orphans it, its TransportClosedError must not be logged as
                # "exception was never retrieved".
                pending.add_done_callback(_consume_result)
                self._thread_read = pending
            try:
                # shield: a cancelled read() leaves the thread's result for the next read().
                data = await asyncio.shield(pending)
            finally:
                if pending.done() and self._thread_read is pending:
                    self._thread_read = None
            if data:
                return data

    def _blocking_read(self, port: Any) -> bytes:
        try:
            first: bytes = port.read(1)  # waits up to _THREAD_POLL
            if not first:
                if not port.is_open:
                    raise TransportClosedError(f"serial port {self.url!r} closed")
                return b""
            waiting = port.in_waiting
            return first + (port.read(min(waiting, _CHUNK - 1)) if waiting else b"")
        except OSError as exc:
            raise self._lost("read", exc) from exc

    # --- write -----------------------------------------------------------------------------

    async def write(self, data: bytes) -> None:
        """Write all of ``data``, waiting (not blocking) while the port is full; on failure part may
        be sent.
        """
        view = memoryview(data)
        if self._fd is None:
            port = self._require_port()
            try:
                # loop:// and friends: pyserial's blocking write (write_timeout=None) in a thread.
                await asyncio.to_thread(port.write, bytes(view))
            except OSError as exc:
                raise self._lost("write", exc) from exc
            return
        # pyserial's own port is written at once. Its URL handlers retry EAGAIN in a tight loop
        # (write_timeout=0), so those are written only once the selector says they take a byte.
        ready = self._direct
        while view:
            if not ready:
                await self._wait_ready(writable=True)
            view = view[self._write_available(view) :]
            ready = False  # what is left waits until the OS buffer has room

    def _write_available(self, view: memoryview) -> int:
        """Write what the OS takes now; the number of bytes written (0 when its buffer is
        full)."""
        port = self._require_port()
        fd = self._fd
        if self._direct and fd is not None:
            # pyserial's Serial.write with write_timeout=0, minus its spin on EAGAIN.
            try:
                return os.write(fd, view)
            except (BlockingIOError, InterruptedError):
                return 0
            except OSError as exc:
                raise self._lost("write", f"write failed: {exc}") from exc
        try:
            written: int | None = port.write(view)
        except OSError as exc:
            raise self._lost("write", exc) from exc
        return written or 0

    # --- helpers ---------------------------------------------------------------------------

    def _require_port(self) -> Any:
        if self._port is None:
            raise TransportClosedError(f"serial port {self.url!r} is not open")
        return self._port

    def _lost(self, what: str, exc: BaseException | str) -> TransportClosedError:
        return TransportClosedError(f"serial port {self.url!r}: {what} failed: {exc}")

    async def _wait_ready(self, *, writable: bool) -> None:
        fd = self._fd
        if fd is None:
            raise TransportClosedError(f"serial port {self.url!r} is not open")
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            if not waiter.done():
                waiter.set_result(None)

        if writable:
            self._write_waiter = waiter
            loop.add_writer(fd, wake)
        else:
            self._read_waiter = waiter
            loop.add_reader(fd, wake)
        try:
            await waiter
        finally:
            # Also on cancellation: a stale reader would keep firing on a readable fd.
            if self._fd == fd:
                if writable:
                    loop.remove_writer(fd)
                else:
                    loop.remove_reader(fd)
            if writable:
                self._write_waiter = None
            else:
                self._read_waiter = None


def _usable_fileno(port: Any) -> int | None:
    """The port's descriptor if the event loop can watch it, else None (``loop://``)."""
    try:
        fd = port.fileno()
    except (AttributeError, OSError, ValueError, NotImplementedError):
        return None
    return fd if isinstance(fd, int) and fd >= 0 else None


def _is_native(port: Any) -> bool:
    """Whether ``port`` is pyserial's own POSIX port class, not a URL handler's built on it
    (``spy://`` logs in its ``read``, ``alt://`` waits another way): its ``read``/``write`` are
    ``os.read``/``os.write`` on its non-blocking descriptor."""
    import serial  # noqa: PLC0415 - lazy: keep `import drivers` free of pyserial

    return os.name == "posix" and type(port) is serial.Serial


def _consume_result(fut: asyncio.Future[Any]) -> None:
    if not fut.cancelled():
        fut.exception()


def _close_quietly(port: Any) -> None:
    with contextlib.suppress(OSError):
        port.close()


def _close_if_opened(fut: asyncio.Future[Any]) -> None:
    if fut.cancelled() or fut.exception() is not None:
        return
    _close_quietly(fut.result())


async def open_serial_stream(
    url: str, baudrate: int = 9600, *, exclusive: bool = True
) -> SerialStream:
    """Build and open a :class:`SerialStream` (for tools and simulators; drivers let
    ``StreamDriver`` call ``open`` so that failures become availability events)."""
    stream = SerialStream(url, baudrate=baudrate, exclusive=exclusive)
    await stream.open()
    return stream
