"""Transports over real media: a pty pair, a TCP socket (``socket://``) and pyserial's ``loop://``.

These use the kernel's pty and loopback TCP rather than mocks, because what matters is exactly
what mocks get wrong: EIO when the pty master goes, pyserial's "socket disconnected", partial
writes against a full kernel buffer, and whether an idle read really sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import resource
import time
import tty
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports import ByteStream, MemoryStream, SerialStream, memory_pair
from tablectl.drivers.transports.base import CallbackStream
from tests.support.mosquitto import free_port
from tests.support.waiting import until_waiting, wait_until

pytestmark = pytest.mark.timeout(10)


# --- fixtures: the far side of each medium ----------------------------------------------------


@dataclass
class Pty:
    master: int
    slave: int
    path: str
    closed: bool = False

    def close_master(self) -> None:
        if not self.closed:
            self.closed = True
            os.close(self.master)


@pytest.fixture
def pty_pair() -> Iterator[Pty]:
    master, slave = os.openpty()
    tty.setraw(master)
    os.set_blocking(master, False)
    pair = Pty(master, slave, os.ttyname(slave))
    try:
        yield pair
    finally:
        pair.close_master()
        os.close(slave)


async def _wait_fd(fd: int, *, writable: bool = False) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    (loop.add_writer if writable else loop.add_reader)(fd, wake)
    try:
        await ready
    finally:
        (loop.remove_writer if writable else loop.remove_reader)(fd)


async def master_recv(pty: Pty, n: int) -> bytes:
    """Read exactly ``n`` bytes from the pty master (what the SerialStream wrote)."""
    buf = b""
    async with asyncio.timeout(2):
        while len(buf) < n:
            await _wait_fd(pty.master)
            with contextlib.suppress(BlockingIOError):
                buf += os.read(pty.master, n - len(buf))
    return buf


async def master_send(pty: Pty, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(pty.master, view) :]
        except BlockingIOError:
            await _wait_fd(pty.master, writable=True)


@dataclass
class TcpPeer:
    """An asyncio TCP server standing in for a serial-over-IP bridge; one client at a time."""

    server: asyncio.Server
    port: int
    connected: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = field(
        default_factory=asyncio.Queue
    )

    @property
    def url(self) -> str:
        return f"socket://127.0.0.1:{self.port}"


@pytest.fixture
async def tcp_peer() -> AsyncIterator[TcpPeer]:
    queue: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    writers: list[asyncio.StreamWriter] = []

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writers.append(writer)
        await queue.put((reader, writer))

    server = await asyncio.start_server(on_client, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield TcpPeer(server, port, queue)
    finally:
        for writer in writers:
            writer.close()
        server.close()
        await server.wait_closed()


async def read_exactly(stream: ByteStream, n: int) -> bytes:
    buf = b""
    async with asyncio.timeout(2):
        while len(buf) < n:
            buf += await stream.read()
    return buf


async def assert_read_idles_without_cpu(stream: SerialStream) -> None:
    """A read with nothing to read must sleep on the selector (or in a thread), not poll.

    Counted, not timed: the port's reads while idle. On the selector there is exactly one (it
    found nothing, then waits) however often the loop turns; the thread fallback blocks in each
    read for its whole timeout, so its reads are never closer together than that.
    """
    port = stream._port
    calls: list[float] = []
    original = port.read

    def counting(size: int = 1) -> bytes:
        calls.append(time.monotonic())
        data: bytes = original(size)
        return data

    port.read = counting
    try:
        reader = asyncio.ensure_future(stream.read())
        if stream.uses_event_loop:
            await until_waiting(reader)
            for _ in range(200):
                await asyncio.sleep(0)  # turns of the loop: a polling read would read on each
            assert len(calls) == 1
        else:
            await wait_until(lambda: len(calls) >= 4, what="idle thread reads")
            gaps = [b - a for a, b in itertools.pairwise(calls)]
            assert min(gaps) >= 0.05, f"thread reads {gaps} apart: it does not block"
        assert not reader.done()
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
    finally:
        port.read = original


async def assert_cancel_leaves_usable(
    stream: ByteStream, far_send: Callable[[bytes], Awaitable[None]]
) -> None:
    """Cancel a pending read, then the stream still delivers every byte sent afterwards."""
    for _ in range(3):
        reader = asyncio.ensure_future(stream.read())
        await until_waiting(reader)
        reader.cancel()
        with pytest.raises(asyncio.CancelledError):
            await reader
    await far_send(b"after-cancel")
    assert await read_exactly(stream, len(b"after-cancel")) == b"after-cancel"


# --- pty ---------------------------------------------------------------------------------------


async def test_pty_bytes_both_ways(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path, baudrate=115200)
    await stream.open()
    try:
        assert stream.uses_event_loop
        await stream.write(b"\x02hello\x03")
        assert await master_recv(pty_pair, 7) == b"\x02hello\x03"
        await master_send(pty_pair, b"*X;1;0;17;0\r\n")
        assert await read_exactly(stream, 13) == b"*X;1;0;17;0\r\n"
    finally:
        await stream.close()


async def test_pty_split_reads_reassemble(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    try:
        message = b"*X;1;123;32;0;345;0\r\n"
        received = b""
        for i in range(0, len(message), 3):
            await master_send(pty_pair, message[i : i + 3])
            received += await stream.read()  # waits for (at least the start of) that chunk
        received += await read_exactly(stream, len(message) - len(received))
        assert received == message
    finally:
        await stream.close()


async def test_pty_large_write_survives_full_kernel_buffer(pty_pair: Pty) -> None:
    """64 KiB is far more than a pty buffers: the write must wait for room, not drop or spin."""
    stream = SerialStream(pty_pair.path)
    await stream.open()
    payload = bytes(range(256)) * 256
    try:
        writer = asyncio.ensure_future(stream.write(payload))
        assert await master_recv(pty_pair, len(payload)) == payload
        await writer
    finally:
        await stream.close()


async def test_pty_master_closed_raises_transport_closed(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    try:
        reader = asyncio.ensure_future(stream.read())
        await until_waiting(reader)
        pty_pair.close_master()
        async with asyncio.timeout(1):
            with pytest.raises(TransportClosedError, match="read failed"):
                await reader
        with pytest.raises(TransportClosedError):
            await stream.write(b"x")
    finally:
        await stream.close()


async def test_pty_idle_read_does_not_spin(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    try:
        await assert_read_idles_without_cpu(stream)
    finally:
        await stream.close()


async def test_pty_cancelled_read_leaves_stream_usable(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    try:
        await assert_cancel_leaves_usable(stream, lambda data: master_send(pty_pair, data))
    finally:
        await stream.close()


async def test_pty_exclusive_lock_refuses_second_open(pty_pair: Pty) -> None:
    first = SerialStream(pty_pair.path)
    await first.open()
    try:
        with pytest.raises(DriverInitError, match="exclusively lock"):
            await SerialStream(pty_pair.path).open()
        shared = SerialStream(pty_pair.path, exclusive=False)
        await shared.open()  # opting out of the lock is allowed
        await shared.close()
    finally:
        await first.close()


async def test_close_wakes_pending_read_and_is_idempotent(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    reader = asyncio.ensure_future(stream.read())
    await until_waiting(reader)
    await stream.close()
    with pytest.raises(TransportClosedError):
        await reader
    await stream.close()
    assert not stream.is_open
    with pytest.raises(TransportClosedError):
        await stream.read()
    with pytest.raises(TransportClosedError):
        await stream.write(b"x")


async def test_reopen_after_close(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    for attempt in (b"one", b"two"):
        await stream.open()
        await master_send(pty_pair, attempt)
        assert await read_exactly(stream, 3) == attempt
        await stream.close()


# --- open failures -----------------------------------------------------------------------------


async def test_open_missing_path_names_it() -> None:
    path = "/dev/tablectl-no-such-port-0"
    with pytest.raises(DriverInitError, match="tablectl-no-such-port-0"):
        await SerialStream(path).open()


async def test_open_unknown_url_scheme() -> None:
    with pytest.raises(DriverInitError, match="bogus://x"):
        await SerialStream("bogus://x").open()


async def test_open_refused_socket() -> None:
    url = f"socket://127.0.0.1:{free_port()}"
    with pytest.raises(DriverInitError, match=url):
        await SerialStream(url).open()


# --- socket:// ---------------------------------------------------------------------------------


async def test_socket_bytes_both_ways_and_split(tcp_peer: TcpPeer) -> None:
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    try:
        assert stream.uses_event_loop
        reader, writer = await asyncio.wait_for(tcp_peer.connected.get(), 2)
        await stream.write(b"ping")
        assert await asyncio.wait_for(reader.readexactly(4), 2) == b"ping"
        message = b"*X;1;0;17;0\r\n"
        for i in range(0, len(message), 4):
            writer.write(message[i : i + 4])
            await writer.drain()
            await asyncio.sleep(0.005)  # pacing, so that the chunks arrive apart
        assert await read_exactly(stream, len(message)) == message
    finally:
        await stream.close()


async def test_socket_large_write(tcp_peer: TcpPeer) -> None:
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    try:
        reader, _ = await asyncio.wait_for(tcp_peer.connected.get(), 2)
        payload = os.urandom(4 * 1024 * 1024)
        writing = asyncio.ensure_future(stream.write(payload))
        assert await asyncio.wait_for(reader.readexactly(len(payload)), 2) == payload
        await writing
    finally:
        await stream.close()


async def test_socket_peer_close_raises_transport_closed(tcp_peer: TcpPeer) -> None:
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    try:
        _, writer = await asyncio.wait_for(tcp_peer.connected.get(), 2)
        pending = asyncio.ensure_future(stream.read())
        await until_waiting(pending)
        writer.close()
        async with asyncio.timeout(1):
            with pytest.raises(TransportClosedError, match="socket disconnected"):
                await pending
    finally:
        await stream.close()


async def test_socket_idle_and_cancel(tcp_peer: TcpPeer) -> None:
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    try:
        _, writer = await asyncio.wait_for(tcp_peer.connected.get(), 2)
        await assert_read_idles_without_cpu(stream)

        async def send(data: bytes) -> None:
            writer.write(data)
            await writer.drain()

        await assert_cancel_leaves_usable(stream, send)
    finally:
        await stream.close()


async def test_socket_close_does_not_block_the_loop(tcp_peer: TcpPeer) -> None:
    """pyserial's socket:// close() sleeps 0.3 s; other devices must keep running meanwhile."""
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    turns = 0

    async def other_device() -> None:
        nonlocal turns
        while True:
            await asyncio.sleep(0)
            turns += 1

    running = asyncio.ensure_future(other_device())
    closing = asyncio.ensure_future(stream.close())
    try:
        # A close that blocked the loop would finish before the other task ran at all.
        await wait_until(lambda: turns >= 10 or closing.done(), what="loop turns during close")
        assert not closing.done(), f"the loop turned {turns} times during close"
        await closing
    finally:
        running.cancel()


# --- delivery by callbacks (a descriptor on the loop, no read task) ------------------------------


class Receiver:
    """A :class:`ByteReceiver` that records what it is handed, and in which task."""

    def __init__(self) -> None:
        self.data = b""
        self.chunks = 0
        self.lost: list[TransportClosedError] = []
        self.tasks: set[asyncio.Task[Any] | None] = set()

    def data_received(self, data: bytes) -> None:
        self.data += data
        self.chunks += 1
        self.tasks.add(asyncio.current_task())

    def connection_lost(self, exc: TransportClosedError) -> None:
        self.lost.append(exc)


async def test_pty_delivers_from_the_loop_without_a_task(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    receiver = Receiver()
    try:
        assert isinstance(stream, CallbackStream)
        assert stream.deliver_to(receiver)
        message = b"*X;1;123;32;0;345;0\r\n"
        for i in range(0, len(message), 5):
            await master_send(pty_pair, message[i : i + 5])
        await wait_until(lambda: receiver.data == message, what="the delivered line")
        assert receiver.tasks == {None}, "delivered by a task, not by the loop's callback"
        with pytest.raises(RuntimeError, match="delivers to a receiver"):
            await stream.read()
        await stream.write(b"\x02cmd\x03")  # writing goes on while delivering
        assert await master_recv(pty_pair, 5) == b"\x02cmd\x03"
        # None ends the delivery: what comes next is there for read().
        assert stream.deliver_to(None)
        await master_send(pty_pair, b"next")
        assert await read_exactly(stream, 4) == b"next"
        assert receiver.data == message
    finally:
        await stream.close()


async def test_pty_delivery_idles_without_reading(pty_pair: Pty) -> None:
    """Nothing to read: the callback never runs, however often the loop turns."""
    stream = SerialStream(pty_pair.path)
    await stream.open()
    receiver = Receiver()
    try:
        stream.deliver_to(receiver)
        for _ in range(200):
            await asyncio.sleep(0)
        assert receiver.chunks == 0
        await master_send(pty_pair, b"x")
        await wait_until(lambda: receiver.data == b"x", what="one byte")
    finally:
        await stream.close()


async def test_pty_master_closed_is_connection_lost_once(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    receiver = Receiver()
    try:
        stream.deliver_to(receiver)
        await master_send(pty_pair, b"last")
        await wait_until(lambda: receiver.data == b"last", what="the last bytes")
        pty_pair.close_master()
        await wait_until(lambda: receiver.lost, what="connection_lost")
        for _ in range(20):
            await asyncio.sleep(0)
        assert len(receiver.lost) == 1
        # pyserial's own words, as read() gives them (the driver reports them as the detail).
        assert str(receiver.lost[0]).startswith(f"serial port {pty_pair.path!r}: read failed: ")
        with pytest.raises(TransportClosedError):
            await stream.write(b"x")
    finally:
        await stream.close()


async def test_close_ends_delivery_without_calling_back(pty_pair: Pty) -> None:
    stream = SerialStream(pty_pair.path)
    await stream.open()
    receiver = Receiver()
    stream.deliver_to(receiver)
    await master_send(pty_pair, b"unread")  # readable when close comes
    await stream.close()
    for _ in range(20):
        await asyncio.sleep(0)
    assert receiver.chunks == 0
    assert receiver.lost == []
    assert stream.deliver_to(receiver) is False  # closed: nothing to deliver from


async def test_pty_write_goes_out_without_a_loop_turn(pty_pair: Pty) -> None:
    """A write the OS buffer takes completes at once: add_writer only once it is full."""
    stream = SerialStream(pty_pair.path)
    await stream.open()
    try:
        writing = stream.write(b"\x02now\x03").__await__()
        with pytest.raises(StopIteration):
            writing.send(None)  # finished on its first step: it never waited for the loop
        assert await master_recv(pty_pair, 5) == b"\x02now\x03"
    finally:
        await stream.close()


@pytest.fixture
def fds_above_select_limit() -> Iterator[None]:
    """Fill descriptors 0-1,023, so the next port opened gets one that select() refuses."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 1100:
        if hard != resource.RLIM_INFINITY and hard < 1100:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < 1100")
        resource.setrlimit(resource.RLIMIT_NOFILE, (1100, hard))
    held: list[int] = []
    try:
        while not held or held[-1] < 1024:
            held.append(os.open(os.devnull, os.O_RDONLY))
        os.close(held.pop())  # the one above the limit is free again
        yield
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


async def test_pty_above_select_limit_delivers_and_writes(
    pty_pair: Pty, fds_above_select_limit: None
) -> None:
    """pyserial's read() selects, which refuses a descriptor above 1,023 (a process with a
    hundred tables reaches that); delivery reads the descriptor the loop (epoll) watched."""
    del fds_above_select_limit
    stream = SerialStream(pty_pair.path)
    await stream.open()
    receiver = Receiver()
    try:
        assert stream._fd is not None
        assert stream._fd >= 1024
        stream.deliver_to(receiver)
        await master_send(pty_pair, b"*X;1;0;17;0\r\n")
        await wait_until(lambda: receiver.data == b"*X;1;0;17;0\r\n", what="the line")
        await stream.write(b"ack")
        assert await master_recv(pty_pair, 3) == b"ack"
    finally:
        await stream.close()


async def test_socket_delivers_and_peer_close_is_connection_lost(tcp_peer: TcpPeer) -> None:
    stream = SerialStream(tcp_peer.url)
    await stream.open()
    receiver = Receiver()
    try:
        _, writer = await asyncio.wait_for(tcp_peer.connected.get(), 2)
        assert stream.deliver_to(receiver)
        writer.write(b"ping")
        await writer.drain()
        await wait_until(lambda: receiver.data == b"ping", what="the delivered bytes")
        writer.close()
        await wait_until(lambda: receiver.lost, what="connection_lost")
        assert "socket disconnected" in str(receiver.lost[0])
    finally:
        await stream.close()


async def test_loop_url_cannot_deliver() -> None:
    stream = SerialStream("loop://")
    await stream.open()
    try:
        assert stream.deliver_to(Receiver()) is False  # read() it: the thread fallback
        await stream.write(b"abc")
        assert await read_exactly(stream, 3) == b"abc"
    finally:
        await stream.close()


# --- loop:// (no fileno: thread fallback) ------------------------------------------------------


async def test_loop_url_echoes_through_thread_fallback() -> None:
    stream = SerialStream("loop://")
    await stream.open()
    try:
        assert not stream.uses_event_loop
        await stream.write(b"abc")
        await stream.write(b"def")
        assert await read_exactly(stream, 6) == b"abcdef"
    finally:
        await stream.close()


async def test_loop_url_idle_and_cancel_do_not_lose_bytes() -> None:
    stream = SerialStream("loop://")
    await stream.open()
    try:
        await assert_read_idles_without_cpu(stream)
        await assert_cancel_leaves_usable(stream, stream.write)
    finally:
        await stream.close()


async def test_loop_url_close_wakes_read() -> None:
    stream = SerialStream("loop://")
    await stream.open()
    reader = asyncio.ensure_future(stream.read())
    await until_waiting(reader)
    started = time.monotonic()
    await stream.close()
    with pytest.raises(TransportClosedError):
        await asyncio.wait_for(reader, 1)
    assert time.monotonic() - started < 0.5
    with pytest.raises(TransportClosedError):
        await stream.write(b"x")


# --- memory pair -------------------------------------------------------------------------------


async def test_memory_pair_both_ways() -> None:
    a, b = memory_pair()
    await a.open()
    await b.open()
    await a.write(b"to-b")
    await b.write(b"to-a")
    assert await b.read() == b"to-b"
    assert await a.read() == b"to-a"


async def test_memory_mangle_splits_garbles_and_drops() -> None:
    def mangle(data: bytes) -> list[bytes]:
        if data == b"drop":
            return []
        if data == b"garble":
            return [b"g\xffrble"]
        return [data[:2], b"", data[2:]]

    a, b = memory_pair(mangle)
    await a.write(b"drop")
    await a.write(b"garble")
    await a.write(b"split")
    chunks = [await b.read() for _ in range(3)]
    assert chunks == [b"g\xffrble", b"sp", b"lit"]
    b.mangle = None  # faults can be switched per direction, mid-test
    await b.write(b"clean")
    assert await a.read() == b"clean"


async def test_memory_close_drains_then_raises_on_peer() -> None:
    a, b = memory_pair()
    await a.write(b"last words")
    pending = asyncio.ensure_future(a.read())
    await until_waiting(pending)
    await a.close()
    await a.close()  # idempotent
    with pytest.raises(TransportClosedError):
        await pending  # local close wakes our own reader
    assert await b.read() == b"last words"
    with pytest.raises(TransportClosedError, match="peer closed"):
        await asyncio.wait_for(b.read(), 1)
    with pytest.raises(TransportClosedError):
        await b.read()
    with pytest.raises(TransportClosedError, match="peer closed"):
        await b.write(b"anyone?")
    with pytest.raises(DriverInitError):
        await a.open()


async def test_memory_stream_is_a_byte_stream() -> None:
    a, _ = memory_pair()
    stream: ByteStream = a
    assert isinstance(stream, MemoryStream)
