"""The faults latched per device (R14, R18): as journaled, and as the queue will have them.

Two views, because device events are filtered when they are queued: a fault already latched, or
a clear for a fault that is not, is nothing to journal. The queue's view runs ahead of the
journaled one (a clear that follows a raise still in the queue is real); the journaled view is
what the table shows, what a checkpoint saves and what ``cmd/clear_fault`` may clear.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from tablectl.controller.core.events import Fault, FaultCleared, ShoeRemoved, TableEvent
from tablectl.controller.core.mapping import SHOE_REMOVED


class Latches:
    """Latched fault codes per device; ``devices`` start with none."""

    def __init__(self, devices: Iterable[str]) -> None:
        devices = list(devices)
        self.journaled: dict[str, set[str]] = {device: set() for device in devices}
        """Per device, the faults the journal has latched (and not cleared)."""
        self._queued: dict[str, set[str]] = {device: set() for device in devices}

    def restore(self, latched: Mapping[str, set[str]]) -> None:
        """Both views as a checkpoint saved them."""
        for device, codes in latched.items():
            self.journaled[device] = set(codes)
            self._queued[device] = set(codes)

    def copy(self) -> dict[str, set[str]]:
        """The journaled view, copied (for a checkpoint)."""
        return {device: set(codes) for device, codes in self.journaled.items()}

    def is_redundant(self, event: TableEvent) -> bool:
        """A fault already latched, or a clear for a fault that is not: nothing to journal."""
        if event.device is None:
            return False
        latched = self._queued.setdefault(event.device, set())
        if isinstance(event, Fault):
            return event.code in latched
        if isinstance(event, FaultCleared):
            return event.code not in latched
        return False

    def track(self, event: TableEvent) -> None:
        """An event journaled (or replayed): both views."""
        self._track(event, self.journaled, self._queued)

    def track_queued(self, event: TableEvent) -> None:
        """An event queued, not yet journaled: the queue's view only."""
        self._track(event, self._queued)

    @staticmethod
    def _track(event: TableEvent, *views: dict[str, set[str]]) -> None:
        if event.device is None:
            return
        for view in views:
            latched = view.setdefault(event.device, set())
            if isinstance(event, Fault):
                latched.add(event.code)
            elif isinstance(event, ShoeRemoved):
                # Latched by the card engines until the shoe is back (a fault_cleared).
                latched.add(SHOE_REMOVED)
            elif isinstance(event, FaultCleared):
                latched.discard(event.code)
