"""How a :class:`StreamDriver` gets its bytes: a serial port with a descriptor calls back into the
driver's item path (no task reads it), anything else is read by a task; both give the same events.

A small line device is declared to the base here (a codec that splits lines, an interpreter that
makes each a card), so what is tested is the base's loop, over a real pty and pyserial's
``loop://``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterable
from typing import Any, TypeVar

import pytest

from tablectl.drivers.base import ReportsOnly, StreamDriver
from tablectl.drivers.events import CardScanned, DeviceAvailable, DeviceEvent, DeviceUnavailable
from tablectl.drivers.transports.base import ByteStream
from tablectl.drivers.transports.serial import SerialStream
from tests.support.pty import Pty, pty_fixture  # noqa: F401 - the `pty` fixture

pytestmark = pytest.mark.timeout(10)

E = TypeVar("E", bound=DeviceEvent)
FAST = {"reconnect_min_delay": 0.05, "reconnect_max_delay": 0.1}


class Lines:
    """The codec: ``\\n``-ended lines; a line ``BUG`` is a bug in it."""

    def __init__(self) -> None:
        self._buffer = b""

    def feed(self, data: bytes) -> Iterable[str]:
        self._buffer += data
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            if line == b"BUG":
                raise ZeroDivisionError("a bug in the codec")
            yield line.decode()


class Cards(ReportsOnly):
    def feed(self, message: str, now: float) -> list[DeviceEvent]:
        return [CardScanned(device="shoe", at=now, card=message)]


class LineDriver(StreamDriver):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.interpreter = Cards()
        self.links: list[Any] = []

    def _open_link(self) -> ByteStream:
        link = self._serial_link(9600)
        self.links.append(link)
        return link

    def _new_decoder(self) -> Lines:
        return Lines()

    def _available_on_open(self) -> str:
        return "lines"


class Host:
    """Runs ``driver.events()`` in a task; the test takes the events."""

    def __init__(self, driver: LineDriver) -> None:
        self.driver = driver
        self.queue: asyncio.Queue[DeviceEvent] = asyncio.Queue()
        self.task = asyncio.create_task(self._consume())

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.queue.put_nowait(event)

    async def expect(self, kind: type[E]) -> E:
        event = await self.queue.get()
        assert isinstance(event, kind), event
        return event

    async def cards(self, n: int) -> list[str]:
        return [(await self.expect(CardScanned)).card for _ in range(n)]


@contextlib.asynccontextmanager
async def running(driver: LineDriver) -> AsyncIterator[Host]:
    host = Host(driver)
    try:
        async with asyncio.timeout(5):
            yield host
    finally:
        await driver.aclose()
        async with asyncio.timeout(2):
            await asyncio.gather(host.task, return_exceptions=True)


def reading_tasks() -> list[asyncio.Task[Any]]:
    """Tasks parked in ``SerialStream.read`` (the fallback's reader)."""
    return [
        task
        for task in asyncio.all_tasks()
        if getattr(task.get_coro(), "__qualname__", "") == "SerialStream.read"
    ]


async def test_pty_lines_come_by_callback_with_no_read_task(pty: Pty) -> None:
    async with running(LineDriver("shoe", pty.path, FAST)) as host:
        await host.expect(DeviceAvailable)
        (link,) = host.driver.links
        assert isinstance(link, SerialStream)
        assert link.uses_event_loop
        pty.send(b"KH\nQ")
        assert await host.cards(1) == ["KH"]
        assert reading_tasks() == []
        pty.send(b"S\nTD\n2C\n")  # a line split over two chunks, then three in one
        assert await host.cards(3) == ["QS", "TD", "2C"]
        with pytest.raises(RuntimeError, match="delivers to a receiver"):
            await link.read()  # the driver's receiver has the port


async def test_loop_url_is_read_by_a_task(pty: Pty) -> None:
    del pty
    async with running(LineDriver("shoe", "loop://", FAST)) as host:
        await host.expect(DeviceAvailable)
        await host.driver.send_raw(b"KH\nQS\n")  # loop:// echoes what is written
        assert await host.cards(2) == ["KH", "QS"]
        assert len(reading_tasks()) == 1


async def test_port_gone_is_disconnected(pty: Pty) -> None:
    driver = LineDriver("shoe", pty.path, FAST)
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        pty.send(b"KH\n")
        assert await host.cards(1) == ["KH"]
        pty.close()
        lost = await host.expect(DeviceUnavailable)
        assert lost.reason == "disconnected"
        assert lost.detail.startswith(f"serial port {pty.path!r}: read failed: ")
        assert driver.counters["disconnects"] == 1
        assert not driver.links[0].is_open


async def test_a_bug_in_the_callback_ends_the_loop(pty: Pty) -> None:
    driver = LineDriver("shoe", pty.path, FAST)
    async with running(driver) as host:
        await host.expect(DeviceAvailable)
        pty.send(b"KH\n")
        assert await host.cards(1) == ["KH"]
        pty.send(b"BUG\nQS\n")
        with pytest.raises(ZeroDivisionError, match="a bug in the codec"):
            await host.task
        assert host.queue.empty()  # nothing after the bug
        assert not driver.links[0].is_open
