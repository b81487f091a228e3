"""Serve an I/O-free simulated device on a pseudo-terminal or a TCP port.

A pty gives the host a real tty path, so the production serial path (termios,
``serial_for_url("/dev/…")``) runs unchanged; TCP works in containers and CI and makes a
``disconnect`` an honest closed connection. Every tick (about ``20 ms / speed``) the model gets
``time.monotonic()`` and its output is written; host bytes go to ``receive`` right after an
``advance`` at the same instant, so replies never overtake earlier output. One writer task keeps
``split`` pieces in order.

Disconnects (``model.link_down(now)``): TCP aborts the client and refuses others during the
window. A pty's master is closed (reads fail as on an unplugged adapter) and a new pair opens
afterwards with another ``/dev/pts/N``, so a host needs ``link_path``: a symlink removed during
the window and re-created to the new slave.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import struct
import termios
import time
import tty
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from tablectl.simulators.chunks import Chunk

_log = logging.getLogger(__name__)

_SPLIT_PAUSE = 0.002
"""Seconds between ``split`` fragments: long enough that the host's reads see them apart."""
_PTY_STALE = 3072
"""Unread bytes in the slave's input queue after which nobody is reading: flush them (a UART with
no listener loses bytes too), so a host that opens the port late does not get minutes-old lines
and the kernel buffer (4 KiB) never blocks the simulator."""
_TCP_BACKLOG = 1 << 20
"""Bytes queued to a client that does not read, after which output is dropped instead."""


class SimDevice(Protocol):
    """What the servers need from a model (:class:`~tablectl.simulators.ss2.SimSS2` fits)."""

    @property
    def speed(self) -> float: ...

    def advance_chunks(self, now: float) -> list[Chunk]: ...

    def receive(self, data: bytes, now: float) -> bytes: ...

    def link_down(self, now: float) -> bool: ...


Sink = Callable[[bytes], None]


class _Pump:
    """Moves time and bytes between one model and the current port (``sink``, or none)."""

    def __init__(self, model: SimDevice) -> None:
        self.model = model
        self.sink: Sink | None = None
        self._queue: asyncio.Queue[Chunk] = asyncio.Queue()

    def poll(self, now: float) -> None:
        for chunk in self.model.advance_chunks(now):
            self._queue.put_nowait(chunk)

    def feed(self, data: bytes) -> None:
        now = time.monotonic()
        self.poll(now)
        reply = self.model.receive(data, now)
        if reply:
            self._queue.put_nowait(Chunk(now, reply))

    def flush(self) -> None:
        """Write everything queued now (before a disconnect closes the port)."""
        while not self._queue.empty():
            self._write(self._queue.get_nowait().data)

    def _write(self, data: bytes) -> None:
        if self.sink is not None:
            self.sink(data)

    async def write_loop(self) -> None:
        while True:
            chunk = await self._queue.get()
            self._write(chunk.data)
            if chunk.partial:
                await asyncio.sleep(_SPLIT_PAUSE)

    async def tick_loop(self, on_link: Callable[[bool], None]) -> None:
        interval = max(0.002, 0.02 / self.model.speed)
        down = False
        while True:
            now = time.monotonic()
            self.poll(now)
            if self.model.link_down(now) != down:
                down = not down
                if down:
                    self.flush()
                on_link(down)
            await asyncio.sleep(interval)

    async def run(self, on_link: Callable[[bool], None]) -> None:
        async with asyncio.TaskGroup() as group:
            group.create_task(self.write_loop(), name="sim:write")
            group.create_task(self.tick_loop(on_link), name="sim:tick")


# --- pty ---------------------------------------------------------------------------------------


class _Pty:
    """One pty pair. We keep the slave open too, so the master never sees EIO between hosts."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)

    def read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            return b""  # EIO: no slave side; nothing to read

    def write(self, data: bytes) -> None:
        try:
            raw = fcntl.ioctl(self.slave, termios.FIONREAD, b"\0\0\0\0")
            if struct.unpack("i", raw)[0] > _PTY_STALE:
                termios.tcflush(self.slave, termios.TCIFLUSH)
            view = memoryview(data)
            while view:
                view = view[os.write(self.master, view) :]
        except (BlockingIOError, InterruptedError):
            pass  # buffer full: nobody reads; drop like an overrun
        except OSError as exc:
            _log.debug("pty write failed: %s", exc)

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


def _point_link(link: Path, target: str) -> None:
    """Atomically create or replace ``link`` → ``target``."""
    temp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temp.unlink()
    temp.symlink_to(target)
    temp.replace(link)


def _drop_link(link: Path, target: str) -> None:
    with contextlib.suppress(OSError):
        if link.is_symlink() and os.readlink(link) == target:
            link.unlink()


async def serve_pty(
    model: SimDevice,
    *,
    on_ready: Callable[[str], None],
    link_path: str | os.PathLike[str] | None = None,
) -> None:
    """Serve ``model`` on a new pty until cancelled; ``on_ready(slave_path)`` once it is open.

    ``link_path``: a symlink kept at the current slave, the only stable path across ``disconnect``.
    """
    loop = asyncio.get_running_loop()
    pump = _Pump(model)
    link = Path(link_path) if link_path is not None else None
    port: _Pty | None = None

    def on_readable() -> None:
        if port is not None and (data := port.read()):
            pump.feed(data)

    def open_port() -> _Pty:
        nonlocal port
        port = _Pty()
        loop.add_reader(port.master, on_readable)
        pump.sink = port.write
        if link is not None:
            _point_link(link, port.path)
        _log.info("simulator pty %s%s", port.path, f" (link {link})" if link else "")
        return port

    def close_port() -> None:
        nonlocal port
        if port is None:
            return
        pump.sink = None
        loop.remove_reader(port.master)
        if link is not None:
            _drop_link(link, port.path)
        port.close()
        port = None

    def on_link(down: bool) -> None:
        if down:
            _log.info("simulator pty: disconnect")
            close_port()
        else:
            open_port()

    first = open_port()
    try:
        on_ready(first.path)
        await pump.run(on_link)
    finally:
        close_port()


# --- TCP ---------------------------------------------------------------------------------------


async def serve_tcp(
    model: SimDevice,
    host: str,
    port: int,
    *,
    on_ready: Callable[[str], None],
) -> None:
    """Serve ``model`` to one TCP client at a time until cancelled.

    ``on_ready("host:port")`` once listening (the real port when ``port`` is 0). A second client is
    closed at once (a serial port has one owner); the device runs whether or not one is connected.
    """
    tcp = _TcpServer(model)
    server = await asyncio.start_server(tcp.handle, host, port)
    try:
        bound = server.sockets[0].getsockname()[1]
        on_ready(f"{host}:{bound}")
        await tcp.pump.run(tcp.on_link)
    finally:
        server.close()
        await tcp.close()
        await server.wait_closed()


class _TcpServer:
    """The one-client-at-a-time policy and the disconnect window for :func:`serve_tcp`."""

    def __init__(self, model: SimDevice) -> None:
        self.pump = _Pump(model)
        self._current: asyncio.StreamWriter | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self._link_down = False

    def _attach(self, writer: asyncio.StreamWriter) -> None:
        self._current = writer

        def write(data: bytes) -> None:
            if not writer.is_closing() and writer.transport.get_write_buffer_size() < _TCP_BACKLOG:
                writer.write(data)

        self.pump.sink = write

    def _detach(self, writer: asyncio.StreamWriter) -> None:
        if self._current is writer:
            self._current = None
            self.pump.sink = None
        writer.transport.abort()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._handlers.add(task)
        try:
            if self._current is not None or self._link_down:
                return  # busy or "unplugged": the finally clause closes this connection
            self._attach(writer)
            while data := await reader.read(1024):
                self.pump.feed(data)
        except OSError:  # includes ConnectionError: the client went away
            pass
        except asyncio.CancelledError:
            # Finish normally: on 3.11, asyncio.streams calls task.exception() on a finished
            # client task, which raises (and logs a traceback) if the task ended cancelled.
            pass
        finally:
            self._detach(writer)
            if task is not None:
                self._handlers.discard(task)

    def on_link(self, down: bool) -> None:
        self._link_down = down
        if down and self._current is not None:
            _log.info("simulator tcp: disconnect")
            self._detach(self._current)

    async def close(self) -> None:
        """Abort the client and let its handler see EOF; cancel only a handler that lingers."""
        if self._current is not None:
            self._detach(self._current)
        handlers = list(self._handlers)
        if handlers:
            _, pending = await asyncio.wait(handlers, timeout=1.0)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
