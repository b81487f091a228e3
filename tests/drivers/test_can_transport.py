"""CanLink over python-can's real ``virtual`` interface (STYLE practice 7: used as is)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest

from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports.can import CanLink, open_can_link
from tablectl.drivers.transports.frames import CanFrame
from tests.support.waiting import until_waiting

pytestmark = pytest.mark.timeout(10)

_names = itertools.count()


@pytest.fixture
def channel() -> str:
    # A fresh virtual channel per test: buses on one name in one process hear each other.
    return f"tablectl-test-{next(_names)}"


@pytest.fixture
async def pair(channel: str) -> AsyncIterator[tuple[CanLink, CanLink]]:
    a = await open_can_link("virtual", channel)
    b = await open_can_link("virtual", channel)
    try:
        yield a, b
    finally:
        await a.close()
        await b.close()


async def test_frames_go_both_ways(pair: tuple[CanLink, CanLink]) -> None:
    a, b = pair
    await a.send(CanFrame(0x310, b"\x01\x01\x00\x00"))
    assert await asyncio.wait_for(b.recv(), 2) == CanFrame(0x310, b"\x01\x01\x00\x00")
    await b.send(CanFrame(0x390, b"\x01\x01\x00"))
    assert await asyncio.wait_for(a.recv(), 2) == CanFrame(0x390, b"\x01\x01\x00")


async def test_order_empty_and_extended_frames_survive(pair: tuple[CanLink, CanLink]) -> None:
    a, b = pair
    frames = [CanFrame(0x700 + i, bytes([i] * (i % 9))) for i in range(20)]
    frames.append(CanFrame(0x1ABCDEF, b"\xff", is_extended_id=True))
    for frame in frames:
        await a.send(frame)
    received = [await asyncio.wait_for(b.recv(), 2) for _ in frames]
    assert received == frames


async def test_own_frames_only_when_asked(channel: str) -> None:
    echo = await open_can_link("virtual", channel, receive_own_messages=True)
    quiet = await open_can_link("virtual", channel)
    try:
        await quiet.send(CanFrame(0x123, b"q"))
        await echo.send(CanFrame(0x124, b"e"))
        assert await asyncio.wait_for(echo.recv(), 2) == CanFrame(0x123, b"q")
        assert await asyncio.wait_for(echo.recv(), 2) == CanFrame(0x124, b"e")
        assert await asyncio.wait_for(quiet.recv(), 2) == CanFrame(0x124, b"e")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(quiet.recv(), 0.1)
    finally:
        await echo.close()
        await quiet.close()


async def test_trace_sees_both_directions(pair: tuple[CanLink, CanLink]) -> None:
    a, b = pair
    seen: list[tuple[str, str]] = []
    b.trace = lambda direction, frame: seen.append((direction, str(frame)))
    await a.send(CanFrame(0x191, b"\x11"))
    await asyncio.wait_for(b.recv(), 2)
    await b.send(CanFrame(0x310, b"\x04\x00\x00\x00"))
    assert seen == [("rx", "191#11"), ("tx", "310#04000000")]


async def test_close_is_idempotent_and_ends_io(channel: str) -> None:
    link = CanLink("virtual", channel)
    await link.close()  # never opened
    await link.open()
    await link.open()  # opening twice is harmless
    assert link.is_open
    await link.close()
    await link.close()
    assert not link.is_open
    with pytest.raises(TransportClosedError):
        await link.recv()
    with pytest.raises(TransportClosedError):
        await link.send(CanFrame(0x100, b""))


async def test_close_wakes_a_pending_recv(channel: str) -> None:
    link = await open_can_link("virtual", channel)
    pending = asyncio.create_task(link.recv())
    await until_waiting(pending)
    await link.close()
    with pytest.raises(TransportClosedError):
        await asyncio.wait_for(pending, 2)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
async def test_bus_gone_is_transport_closed(channel: str) -> None:
    link = await open_can_link("virtual", channel, poll_interval=0.05)
    try:
        pending = asyncio.create_task(link.recv())
        await until_waiting(pending)
        # The bus dies under the notifier (what an adapter error looks like to python-can): the
        # notifier's thread fails, and recv() must say so instead of waiting forever.
        link._bus.shutdown()  # type: ignore[union-attr]
        with pytest.raises(TransportClosedError, match="receive failed"):
            await asyncio.wait_for(pending, 2)
        with pytest.raises(TransportClosedError):
            await link.recv()
        with pytest.raises(TransportClosedError, match="send failed"):
            await link.send(CanFrame(0x100, b""))
    finally:
        await link.close()


async def test_unknown_interface_is_an_init_error() -> None:
    with pytest.raises(DriverInitError, match="unknown CAN interface"):
        await open_can_link("no-such-interface", "x")


async def test_absent_socketcan_channel_is_an_init_error() -> None:
    with pytest.raises(DriverInitError):
        await open_can_link("socketcan", "tablectl-no-such-can9")


def test_bad_timeouts_are_refused() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        CanLink("virtual", "x", poll_interval=0)
