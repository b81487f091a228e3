"""One scheduler for a table's periodic work.

A table looks at a few things on its own, with no event to wake it: the betting timer (ten times
a second), the restart gate's deadline, a journal outage's probe, the refused commands' window
and the wall clock. Each was a task of its own, sleeping in its own loop; here they are jobs of
one task. A job does one look and says when it wants the next (``None``: it is done). Jobs run
one after another in the order they fall due, never concurrently, so none of them can interleave
with another; a job that awaits (the betting timer, for its event's commit) holds the others
that long, so a job that would wait longer returns and looks again soon instead.
"""

from __future__ import annotations

import heapq
from collections.abc import Awaitable, Callable

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

Tick = Callable[[], Awaitable[float | None]]
"""One look; the seconds until the next one, or ``None`` when the job is done."""


class Ticks:
    """A table's periodic jobs, run by :meth:`run` in one task, timed and paced on ``clock``'s
    monotonic time."""

    def __init__(self, clock: Clock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._jobs: list[tuple[float, str, Tick]] = []

    def add(self, name: str, first: float | None, tick: Tick) -> None:
        """Run ``tick`` ``first`` seconds after :meth:`run` starts (``None``: not at all)."""
        if first is not None:
            self._jobs.append((first, name, tick))

    @property
    def names(self) -> list[str]:
        """The jobs added, in order."""
        return [name for _, name, _ in self._jobs]

    async def run(self) -> None:
        """Until every job is done (or cancelled)."""
        clock = self._clock
        start = clock.monotonic()
        due = [(start + first, index, tick) for index, (first, _, tick) in enumerate(self._jobs)]
        heapq.heapify(due)
        while due:
            at, index, tick = heapq.heappop(due)
            await clock.sleep(max(0.0, at - clock.monotonic()))
            after = await tick()
            if after is not None:
                heapq.heappush(due, (clock.monotonic() + after, index, tick))
