"""What a simulated service will do later, in order: a tiny scheduler driven by passed-in time.

The studio's models never read a clock and never sleep: they put what they will say on a
:class:`Timeline` with the time it is due, and whoever drives them (a test with any clock, the
broker service with the injected one) calls ``due(now)`` and waits until ``next_due``. What
comes out carries the time it was due, not the time it was asked for, so what a model says does
not depend on how often it is advanced (a coarse step says the same things at the same times).
"""

from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass
from typing import Generic, TypeVar

from tablectl.drivers.dice_mqtt.messages import ShakerState
from tablectl.drivers.transports.pubsub import TopicMessage

__all__ = ["Said", "Timeline"]

T = TypeVar("T")


@dataclass(frozen=True)
class Said:
    """A message a service says ``at`` (studio time); ``state`` when it is a status word."""

    at: float
    message: TopicMessage
    state: ShakerState | None = None


class Timeline(Generic[T]):
    """Items due at given times; items due at the same time come out in the order put in."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, T]] = []
        self._order = itertools.count()

    def at(self, due: float, item: T) -> None:
        heapq.heappush(self._heap, (due, next(self._order), item))

    def due(self, now: float) -> list[tuple[float, T]]:
        """Every item due by ``now`` with its time, earliest first; they are removed."""
        out: list[tuple[float, T]] = []
        while self._heap and self._heap[0][0] <= now:
            due, _, item = heapq.heappop(self._heap)
            out.append((due, item))
        return out

    @property
    def next_due(self) -> float | None:
        """When the earliest item is due (``None``: nothing is planned)."""
        return self._heap[0][0] if self._heap else None

    def clear(self) -> None:
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._heap)
