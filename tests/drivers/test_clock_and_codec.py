"""The shared pieces under every driver: the injected clock and the one frame scanner.

The families' tests cover each framing byte for byte; these pin down what the pieces promise on
their own: a ManualClock wakes exactly what is due, ``within`` times out on its clock and nowhere
else, and a Framing that could not work is refused when it is declared.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.drivers import stx
from tablectl.drivers.bigwheel import protocol as bigwheel_protocol
from tablectl.drivers.clock import SYSTEM_CLOCK, ManualClock, within
from tablectl.drivers.codec import DecodeError, FrameScanner, Framing, Reasons
from tablectl.drivers.shoe.driver import LINE_FRAMINGS
from tablectl.drivers.ss2 import protocol as ss2_protocol
from tests.support.waiting import until_waiting, wait_until


async def test_manual_clock_wakes_what_is_due() -> None:
    clock = ManualClock(100.0)
    short = asyncio.ensure_future(clock.sleep(1.0))
    long = asyncio.ensure_future(clock.sleep(3.0))
    await wait_until(lambda: clock.pending == [1.0, 3.0])
    clock.advance(0.5)
    assert clock.pending == [0.5, 2.5]
    assert clock.advance_to_next() == 0.5
    await short
    assert clock.now() == 101.0
    assert not long.done()
    long.cancel()
    await asyncio.gather(long, return_exceptions=True)
    assert clock.pending == []
    with pytest.raises(ValueError, match="back"):
        clock.advance(-1)


async def test_wall_time_steps_alone_and_sleeps_on_monotonic_time() -> None:
    clock = ManualClock(1_764_496_800.0)
    assert clock.wall() == datetime(2025, 11, 30, 10, tzinfo=UTC)
    nap = asyncio.ensure_future(clock.sleep(5.0))
    await wait_until(lambda: clock.pending == [5.0])
    clock.step_wall(-3600.0)  # NTP steps the wall clock back: nothing that waits moves
    assert (clock.now(), clock.monotonic()) == (1_764_493_200.0, 1_764_496_800.0)
    assert clock.pending == [5.0]
    clock.advance(5.0)
    await nap
    assert (clock.now(), clock.monotonic()) == (1_764_493_205.0, 1_764_496_805.0)
    assert clock.wall() == datetime.fromtimestamp(1_764_493_205.0, UTC)


def test_the_system_clock_reads_the_system() -> None:
    before, wall, after = time.time(), SYSTEM_CLOCK.wall(), time.time()
    assert before <= wall.timestamp() <= after
    assert wall.tzinfo is UTC
    assert time.monotonic() <= SYSTEM_CLOCK.monotonic() <= time.monotonic()


async def test_within_times_out_on_its_clock_only() -> None:
    clock = ManualClock()
    reply: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    waiting = asyncio.ensure_future(within(clock, asyncio.shield(reply), 2.0))
    await until_waiting(waiting)
    assert clock.pending == [2.0]  # real time passing does nothing: only the clock counts
    clock.advance(2.0)
    with pytest.raises(TimeoutError):
        await waiting
    assert not reply.cancelled()  # shielded: the caller still owns it

    answered = asyncio.ensure_future(within(clock, reply, 2.0))
    await until_waiting(answered)
    reply.set_result("ACK")
    assert await answered == "ACK"
    assert clock.pending == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"terminators": (b"\r\n\r",)}, "one or two bytes"),
        ({"start_required": True}, "needs a start byte"),
        ({"start": 0x02, "end": 0x03}, "required start byte"),
        ({"start": 0x02, "start_required": True, "trailer_length": 2}, "end marker"),
    ],
)
def test_framings_that_cannot_work_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Framing(max_length=10, **kwargs)  # type: ignore[arg-type]


def test_endless_noise_is_reported_in_bounded_pieces() -> None:
    framing = Framing(start=0x24, start_required=True, max_length=10, max_raw=4, max_garbage=8)
    scanner = FrameScanner(framing)
    out = scanner.feed(b"x" * 20 + b"$ok\n")
    assert out == [
        DecodeError("garbage between frames", b"xxxx"),
        DecodeError("garbage between frames", b"xxxx"),
        DecodeError("garbage between frames", b"xxxx"),  # the last 4 bytes, ended by the $
        b"$ok",
    ]


def test_a_two_byte_terminator_split_across_reads() -> None:
    scanner = FrameScanner(Framing(terminators=(b"\r\n",), max_length=4, reasons=Reasons()))
    assert scanner.feed(b"ab\r") == []
    assert scanner.feed(b"\ncd\rx\r") == [b"ab"]
    assert scanner.feed(b"\n") == [b"cd\rx"]
    # The held CR does not count against the length until it turns out to be data.
    assert scanner.feed(b"wxyz\r\n") == [b"wxyz"]


def _byte_by_byte(framing: Framing) -> FrameScanner:
    """A scanner without the run-at-a-time path: the reference its fast path must agree with."""
    scanner = FrameScanner(framing)
    scanner._plain = None  # the one switch: every byte through the state machine
    return scanner


_FRAMINGS = [
    ss2_protocol.FRAMING,
    bigwheel_protocol.FRAMING,
    stx.FRAMING,
    *LINE_FRAMINGS.values(),
    Framing(max_length=6, terminators=(b"\r\n",), report_overflow_at_end=True),
]


@settings(max_examples=300, deadline=None)
@given(
    framing=st.sampled_from(_FRAMINGS),
    chunks=st.lists(
        st.binary(max_size=40)
        | st.sampled_from([b"*X:01:00:0:2:0:0:0\r\n", b"\x02AB\x03", b"\r", b"\n", b"\x02"]),
        max_size=25,
    ),
)
def test_a_frame_body_scanned_a_run_at_a_time_is_what_byte_by_byte_gives(
    framing: Framing, chunks: list[bytes]
) -> None:
    fast, slow = FrameScanner(framing), _byte_by_byte(framing)
    for chunk in chunks:
        assert fast.feed(chunk) == slow.feed(chunk)
