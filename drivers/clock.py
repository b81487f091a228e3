"""The time tablectl lives by: one injected :class:`Clock` for timestamps, durations and waits.

Drivers, the journal and the MQTT side all use the same object, so a test with
:class:`ManualClock` decides when a tick or retry happens instead of sleeping. Two kinds of time,
never mixed: the wall clock (:meth:`Clock.now`, :meth:`Clock.wall`) that events carry and that can
be stepped, and the monotonic clock (:meth:`Clock.monotonic`) for durations and ``sleep``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from typing import Protocol, TypeVar

__all__ = ["SYSTEM_CLOCK", "Clock", "ManualClock", "SystemClock", "within"]

T = TypeVar("T")


class Clock(Protocol):
    """Wall time (``now()`` seconds, events carry it as their ``at``; ``wall()`` as a UTC
    ``datetime``), monotonic time (``monotonic()``: durations) and ``sleep(delay)``."""

    def now(self) -> float: ...

    def wall(self) -> datetime: ...

    def monotonic(self) -> float: ...

    async def sleep(self, delay: float) -> None: ...


class SystemClock:
    """The real thing: ``time.time``, ``time.monotonic`` (what asyncio's default loop reads) and
    the event loop's ``asyncio.sleep``."""

    def now(self) -> float:
        return time.time()

    def wall(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)

    def __repr__(self) -> str:
        return "SystemClock()"


SYSTEM_CLOCK = SystemClock()
"""What every driver uses unless told otherwise."""


class ManualClock:
    """A clock that moves only when a test says so (:meth:`advance`, :meth:`step_wall`).

    ``start`` is both wall and monotonic time. :attr:`pending` lists the sleepers, so a test can
    wait until a driver is parked on the clock before moving it.
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._wall_offset = 0.0
        self._sleepers: list[tuple[float, asyncio.Future[None]]] = []

    def now(self) -> float:
        return self._now + self._wall_offset

    def wall(self) -> datetime:
        return datetime.fromtimestamp(self.now(), UTC)

    def monotonic(self) -> float:
        return self._now

    def step_wall(self, seconds: float) -> None:
        """Step the wall clock (either way, as NTP or an operator does); monotonic time, and
        what sleeps on it, do not move."""
        self._wall_offset += seconds

    async def sleep(self, delay: float) -> None:
        if delay <= 0:
            await asyncio.sleep(0)  # still a turn of the loop, as asyncio.sleep(0) would give
            return
        entry = (self._now + delay, asyncio.get_running_loop().create_future())
        self._sleepers.append(entry)
        try:
            await entry[1]
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)

    @property
    def pending(self) -> list[float]:
        """The time each waiting ``sleep`` still needs, shortest first (cancelled ones excluded)."""
        return sorted(deadline - self._now for deadline, f in self._sleepers if not f.done())

    def advance_to_next(self) -> float:
        """Move the time to the earliest waiting ``sleep``'s deadline, exactly (a step computed
        from :attr:`pending` can fall a rounding error short), and wake it. Returns the step."""
        waiting = [deadline for deadline, future in self._sleepers if not future.done()]
        if not waiting:
            raise RuntimeError("nothing is waiting on this clock")
        deadline = min(waiting)
        step = deadline - self._now
        self._wake(deadline)
        return step

    def advance(self, seconds: float) -> None:
        """Move the time forward and wake every ``sleep`` whose deadline has come."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        self._wake(self._now + seconds)

    def _wake(self, now: float) -> None:
        self._now = max(now, self._now)
        due = [entry for entry in self._sleepers if entry[0] <= self._now]
        for entry in due:
            self._sleepers.remove(entry)
            if not entry[1].done():
                entry[1].set_result(None)

    def __repr__(self) -> str:
        return f"ManualClock({self._now!r}, pending={self.pending!r})"


async def within(
    clock: Clock,
    awaitable: Awaitable[T],
    timeout: float,  # noqa: ASYNC109 - measured on ``clock``, which asyncio.timeout cannot do
) -> T:
    """``awaitable``'s result, or :class:`TimeoutError` after ``timeout`` s of ``clock``.

    ``asyncio.timeout`` would measure the loop's time. Like ``wait_for``, cancels ``awaitable``.
    """
    task = asyncio.ensure_future(awaitable)
    timer = asyncio.ensure_future(clock.sleep(timeout))
    try:
        await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        task.cancel()
        raise
    finally:
        timer.cancel()
    if task.done():
        return task.result()
    task.cancel()
    raise TimeoutError
