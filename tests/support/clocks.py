"""A table clock whose wall time a test sets, for runners that run in real time.

:class:`~tablectl.drivers.clock.ManualClock` is the clock of a test that moves time itself. A
test that runs a runner's periodic work in real time (the betting timer, the restart gate) but
fixes or steers its wall time (the ``ts`` of records, a command's freshness) uses
:class:`WallClock`: the wall time it is given, the system's monotonic time and sleep.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from tablectl.drivers.clock import SYSTEM_CLOCK

__all__ = ["WallClock"]


class WallClock:
    """Wall time from ``now`` (seconds since the epoch, or a function giving them); monotonic
    time and ``sleep`` are the system's."""

    def __init__(self, now: float | Callable[[], float]) -> None:
        self._now = now if callable(now) else (lambda: now)

    def now(self) -> float:
        return self._now()

    def wall(self) -> datetime:
        return datetime.fromtimestamp(self.now(), UTC)

    def monotonic(self) -> float:
        return SYSTEM_CLOCK.monotonic()

    async def sleep(self, delay: float) -> None:
        await SYSTEM_CLOCK.sleep(delay)
