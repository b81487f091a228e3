"""Runs a simulated drum on an open CAN frame link, on a clock."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from tablectl.drivers.errors import TransportClosedError
from tablectl.drivers.transports.frames import CanFrame, FrameLink
from tablectl.simulators.drum.model import SimDrum


async def run_sim_drum(
    model: SimDrum,
    link: FrameLink,
    *,
    clock: Callable[[], float] = time.monotonic,
    on_frame: Callable[[CanFrame], None] | None = None,
) -> None:
    """Run ``model`` on an open ``link`` until cancelled (or the link fails).

    The model's own schedule says when to wake, so frames go out on time without a fixed tick.
    """
    recv: asyncio.Future[CanFrame] | None = None

    async def send(frames: list[CanFrame]) -> None:
        for frame in frames:
            if on_frame is not None:
                on_frame(frame)
            await link.send(frame)

    try:
        while True:
            now = clock()
            await send(model.advance(now))
            due = model.next_due()
            timeout = 0.05 if due is None else min(0.05, max(0.0, due - clock()))
            if recv is None:
                recv = asyncio.ensure_future(link.recv())
            done, _ = await asyncio.wait({recv}, timeout=timeout)
            if recv in done:
                frame = recv.result()  # TransportClosedError ends the runner
                recv = None
                now = clock()
                await send(model.advance(now))
                await send(model.receive(frame, now))
    finally:
        if recv is not None:
            recv.cancel()
            with contextlib.suppress(asyncio.CancelledError, TransportClosedError):
                await recv
