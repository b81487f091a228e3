"""What a table's parts share: its state as the journal has it, and its one queue of events.

The runner composes small parts (:mod:`.batch`'s committer, :mod:`.restart`, :mod:`.commands`,
:mod:`.views`, the betting timer); none of them holds the runner. What they have in common is
here: :class:`TableState` (the engine in play and what a checkpoint saves with it, the outage
lock) and :class:`EventQueue` (the one ordered stream of the table's events).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from tablectl.controller.core.events import TableEvent
from tablectl.controller.engines import Engine
from tablectl.controller.journal import JournalRecord
from tablectl.controller.service.outage import JournalOutage
from tablectl.controller.service.recovery import JournalScan
from tablectl.controller.service.runner.latches import Latches

Queued = tuple[TableEvent, asyncio.Future[list[JournalRecord]] | None]
"""An event in the queue, with the future of whoever waits for its records (or ``None``)."""


@dataclass
class TableState:
    """The table as the journal has it: what recovery rebuilds and a checkpoint saves."""

    engine: Engine
    """The engine in play (recovery and a failed commit replace it with another object)."""
    latches: Latches
    scan: JournalScan = field(default_factory=JournalScan)
    """What replay learns beside the engine (how the last run ended), kept current in play."""
    outage: JournalOutage | None = None
    """The journal outage in progress (:mod:`tablectl.controller.service.outage`): locked."""
    outages: int = 0
    """Outages begun since start (metrics)."""
    engine_errors: int = 0
    """Exceptions the engine raised since start, each an ``engine_error`` fault (metrics)."""
    committing: bool = False
    """A batch's commit is in flight: the engine is ahead of the journal (nothing about the
    batch may leave the process yet)."""

    def saw(self, records: Sequence[JournalRecord], current_round: str | None) -> None:
        """Records journaled in play: keep :attr:`scan` as a replay would leave it, so a
        checkpoint in play is exact. ``current_round``: the engine's round after the event the
        records belong to (for the controller's own records, the round now)."""
        for record in records:
            self.scan.record(record, current_round)


class EventQueue:
    """The table's one ordered stream: device events, commands' events, the timer's."""

    def __init__(self, state: TableState) -> None:
        self._state = state
        self.queue: asyncio.Queue[Queued] = asyncio.Queue()

    def submit(self, event: TableEvent) -> asyncio.Future[list[JournalRecord]]:
        """Queue an event (a command's); the future gets the journaled records."""
        future: asyncio.Future[list[JournalRecord]] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait((event, future))
        return future

    def enqueue(self, event: TableEvent) -> None:
        """Queue an event nobody waits for (a device's, the restart gate's void)."""
        self.queue.put_nowait((event, None))

    @property
    def idle(self) -> bool:
        """No event waits to be decided, and no commit is in flight."""
        return not self._state.committing and self.queue.empty()
