"""Small pieces every device command shares: how long to run, and when to stop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from datetime import datetime
from typing import TypeVar

T = TypeVar("T")


class Deadline:
    """``--seconds N`` (or until stopped when ``None``) against the monotonic clock."""

    def __init__(self, seconds: float | None, stop: asyncio.Event) -> None:
        self._end = None if seconds is None else time.monotonic() + seconds
        self._stop = stop

    @property
    def done(self) -> bool:
        return self._stop.is_set() or (self._end is not None and time.monotonic() >= self._end)

    def left(self, cap: float) -> float:
        """Seconds to wait now: at most ``cap``, never past the deadline."""
        if self._end is None:
            return cap
        return max(0.0, min(cap, self._end - time.monotonic()))


async def until_stopped(work: Awaitable[T], stop: asyncio.Event) -> T | None:
    """Run ``work``; cancel it and return ``None`` if ``stop`` is set first (Ctrl-C)."""
    task = asyncio.ensure_future(work)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if task.done():
        return task.result()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    return None


def clock_text(epoch: float) -> str:
    """``HH:MM:SS.mmm`` local time, for live output."""
    return datetime.fromtimestamp(epoch).strftime("%H:%M:%S.%f")[:-3]
