"""TableRunner: the async glue of one table (drivers → engine → journal → publisher).

One queue of device events and commands; what queued during the last commit is the next batch
(docs/architecture.md "One commit per batch"). A write the journal refuses rolls the engine back and
locks the table (:mod:`tablectl.controller.service.outage`). The parts are composed here (they do
not know the runner); what remains is the loop: pumps, batches, the lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import structlog

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.errors import JournalError, JournalRecordError
from tablectl.controller.core.events import TableEvent, Void
from tablectl.controller.core.mapping import to_table_event
from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import Engine
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.refusals import RefusalLog
from tablectl.controller.service.betting import BettingTimer
from tablectl.controller.service.checkpoint import CHECKPOINT_EVERY, Checkpoints
from tablectl.controller.service.clock import ClockWatch
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE
from tablectl.controller.service.recovery import CARD_OUTAGE_LIMIT, CONFIRM_SECONDS
from tablectl.controller.service.runner.commands import CommandDesk, Refusals
from tablectl.controller.service.runner.commit import Committer, Listener
from tablectl.controller.service.runner.latches import Latches
from tablectl.controller.service.runner.restart import Restart
from tablectl.controller.service.runner.state import EventQueue, Queued, TableState
from tablectl.controller.service.runner.ticks import Ticks
from tablectl.controller.service.runner.views import (
    NO_OUTPUTS,
    TableOutputs,
    TableViews,
    betting_view,
)
from tablectl.controller.staff.roster import Roster
from tablectl.drivers import events as dev
from tablectl.drivers.base import Driver
from tablectl.drivers.clock import Clock

__all__ = ["Listener", "TableRunner"]

log = structlog.get_logger("tablectl.runner")

_MAX_BATCH = 256
"""Events per group commit at most (bounds how long one batch holds the event loop)."""

OUTAGE_PROBE = 0.5
"""Seconds between two probes of a journal that is out."""

CLOCK_LOOK = 1.0
"""Seconds between two looks at the wall clock."""

_DRAIN_POLL, _DRAIN_LIMIT = 0.005, 5.0
"""The clock's look waits for the queue to drain: looked again this soon, this long at most."""


class TableRunner:
    """Runs one table: drivers → engine → journal → publisher.

    ``outputs`` takes what is not a journal record (the publisher's
    :class:`~tablectl.controller.mqtt.outbound.Outbound`); ``clock`` is the table's one clock (wall
    time stamps records, monotonic time paces :meth:`ticks`). Its parts are public attributes:
    :attr:`restart`, :attr:`commands`, :attr:`refusals`, :attr:`committer`, :attr:`views`,
    :attr:`state`, :attr:`queue`.
    """

    def __init__(
        self,
        *,
        table_id: str,
        engine: Engine,
        journal: Journal,
        drivers: Sequence[Driver] = (),
        outputs: TableOutputs = NO_OUTPUTS,
        clock: Clock,
        betting: BettingConfig | None = None,
        listeners: Sequence[Listener] = (),
        restart_window: float = CONFIRM_SECONDS,
        card_outage_limit: float = CARD_OUTAGE_LIMIT,
        checkpoints: Checkpoints | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        authority: CommandAuthority | None = None,
        insecure_commands: bool = False,
        roster: Roster | None = None,
        refusals: RefusalLog | None = None,
        clock_watch: ClockWatch | None = None,
    ) -> None:
        self.table_id = table_id
        self.journal = journal
        self.drivers = list(drivers)
        self.listeners = list(listeners)
        self.clock_watch = clock_watch
        """Watches the wall clock for steps (``None``: not watched, e.g. a test's fixed clock)."""
        if clock_watch is not None:
            # A rotation in the second before the watch looks must not prune by a stepped clock.
            journal.retention_guard = clock_watch.off_course
        self._clock = clock
        self._clock_waits = 0.0
        self.device_seen: set[str] = set()
        self.latches = Latches(d.device_id for d in self.drivers)
        self.state = TableState(engine, self.latches)
        self.queue = EventQueue(self.state)
        self.views = TableViews(
            table_id=table_id,
            state=self.state,
            journal=journal,
            drivers=self.drivers,
            outputs=outputs,
            clock=clock,
            clock_watch=clock_watch,
        )
        self.committer = Committer(
            journal=journal,
            state=self.state,
            views=self.views,
            outputs=outputs,
            listeners=self.listeners,
            clock=clock,
            clock_watch=clock_watch,
        )
        self.refusals = Refusals(
            refusals or RefusalLog(), committer=self.committer, state=self.state, clock=clock
        )
        self.restart = Restart(
            state=self.state,
            journal=journal,
            committer=self.committer,
            queue=self.queue,
            views=self.views,
            refusals=self.refusals,
            devices=[d.device_id for d in self.drivers],
            outputs=outputs,
            clock=clock,
            checkpoints=checkpoints,
            checkpoint_every=checkpoint_every,
            restart_window=restart_window,
            card_outage_limit=card_outage_limit,
            clock_watch=clock_watch,
        )
        self.commands = CommandDesk(
            state=self.state,
            journal=journal,
            committer=self.committer,
            queue=self.queue,
            views=self.views,
            refusals=self.refusals,
            outputs=outputs,
            clock=clock,
            authority=authority,
            insecure=insecure_commands,
            roster=roster,
        )
        self.timer = BettingTimer(
            betting or BettingConfig(),
            lambda: betting_view(self.state.engine, self.state.outage),
            self.queue.submit,
            clock=clock,
        )
        """Opens and closes betting when ``[betting] mode = "timer"``."""

    @property
    def engine(self) -> Engine:
        """The engine in play (:attr:`state`'s; recovery and a failed commit replace it)."""
        return self.state.engine

    # --- running ---------------------------------------------------------------------------

    async def run(self) -> None:
        """Process events until cancelled; one task per driver feeds the queue, one runs the
        table's periodic work (:meth:`ticks`)."""
        self.views.publish_state()
        self.views.publish_devices()
        async with asyncio.TaskGroup() as group:
            for driver in self.drivers:
                group.create_task(self._pump_driver(driver), name=f"driver:{driver.device_id}")
            group.create_task(self._process(), name="table:process")
            group.create_task(self.ticks().run(), name="table:ticks")

    def ticks(self) -> Ticks:
        """The table's periodic work, as it stands now, in one scheduler: the restart gate's
        deadline, the betting timer, the journal outage's probe, the refusal window, the clock."""
        ticks = Ticks(self._clock)
        ticks.add("restart", self.restart.next_look(), self.restart.look)
        ticks.add("betting", self.timer.start(), self.timer.tick)
        ticks.add("outage", OUTAGE_PROBE, self._outage_look)
        ticks.add("refusals", self.refusals.every, self.refusals.look)
        if self.clock_watch is not None:
            ticks.add("clock", CLOCK_LOOK, self._clock_look)
        return ticks

    async def _clock_look(self) -> float:
        """Look for a step of the wall clock about once a second (two clock reads)."""
        watch = self.clock_watch
        assert watch is not None
        # Between batches: a step's record comes after every event read before the look
        # (stamped by the clock as it was, seconds ago under load), never before one: after a
        # step back, such a time would hold every later one (not_before). Not waited for here
        # (the other periodic work goes on): looked again soon, for 5 s at most.
        now = self._clock.monotonic()
        if not self.queue.idle:
            self._clock_waits = self._clock_waits or now
            if now - self._clock_waits <= _DRAIN_LIMIT:
                return _DRAIN_POLL
        self._clock_waits = 0.0
        record = watch.check()
        if record is not None:
            self.committer.journal_records([record], raising=False)
            self.views.clock_changed()
        return CLOCK_LOOK

    async def _pump_driver(self, driver: Driver) -> None:
        # Each pump is its own task: the binding stays scoped to this device's log lines.
        structlog.contextvars.bind_contextvars(device=driver.device_id)
        async for device_event in driver.events():
            if isinstance(device_event, dev.DeviceAvailable):
                self.device_seen.add(driver.device_id)
            event = to_table_event(device_event)
            if not self.restart.admits(device_event, event):
                continue  # a catch-up milestone the resumed round already has
            if self.latches.is_redundant(event):
                self.views.publish_device(driver)
                continue
            # Track at enqueue time too: a clear that follows a raise still in the queue is real.
            self.latches.track_queued(event)
            self.queue.enqueue(event)

    async def _process(self) -> None:
        queue = self.queue.queue
        while True:
            # Group commit: whatever queued up while the last batch was being fsync'd goes into
            # the next one (one fsync for its events and their conclusions). An idle table
            # still commits each event on its own, at once.
            batch = [await queue.get()]
            while len(batch) < _MAX_BATCH and not queue.empty():
                batch.append(queue.get_nowait())
            await self._run_batch(batch)

    async def step(self, events: Sequence[TableEvent]) -> None:
        """One turn of the queue for ``events`` (the journal's thread commits it, a refused
        write locks the table, a checkpoint is saved when due): what :meth:`run` does with each
        batch, for a caller that drives the table without its tasks (tests, replays)."""
        await self._run_batch([(event, None) for event in events])

    async def _run_batch(self, batch: list[Queued]) -> None:
        outage = self.state.outage
        if outage is not None and not self._resume():
            # Locked: nothing that cannot be journaled is acted on (contracts §3, R14).
            for event, future in batch:
                outage.drop(event)
                if future is not None and not future.done():
                    future.set_exception(JournalError(f"{JOURNAL_UNAVAILABLE}: table locked"))
            self.views.locked()  # the counts on status/state
            return
        try:
            results = await self.committer.commit_batch([event for event, _ in batch])
        except JournalRecordError as exc:  # first: a JournalRecordError is a JournalError too
            if len(batch) > 1:
                # Nothing was written (one transaction): one event may be the one the journal
                # refuses, so the others must not fail with it. Retry them one at a time.
                for item in batch:
                    await self._run_batch([item])
                return
            # A record the journal refuses (malformed, too large): the event is not journaled,
            # so it is not acted on; the table goes on with the next event (no outage). The
            # engine's own errors never come here: they are journaled as engine_error faults.
            for event, future in batch:
                log.error("journal_record_refused", error=str(exc), event_type=event.type)
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        except Exception as exc:
            # The journal's write failed (JournalError), or a defect outside the engine (which
            # the committer turns into faults): nothing of the batch is durable. Lock the table
            # and alarm rather than end the process or go on as if it were journaled.
            if not isinstance(exc, JournalError):
                log.exception("batch_failed", error_type=type(exc).__name__)
            outage = self.views.begin_outage(exc)
            for event, future in batch:
                outage.drop(event)  # not journaled, and the engine is as before the batch
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        for (_, future), records in zip(batch, results, strict=True):
            if future is not None and not future.done():
                future.set_result(records)
        await self.restart.checkpoint_if_due()

    # --- journal outage (tablectl.controller.service.outage) -------------------------------

    def _resume(self) -> bool:
        """Try to end the outage: journal what it owes; ``True`` once the journal took it all.

        In order: the void of the round still in play (``journal_outage``) and the fault raised
        and cleared with the outage's start and end, then the device faults that arrived
        meanwhile (R18). An event's conclusions are committed with it, so none can be owed.
        """
        outage = self.state.outage
        if outage is None:
            return True
        now_ts = format_ts(self._clock.now())
        void_round = self.state.engine.current_round is not None
        closing = outage.closing_events(now_ts, void_round=void_round)
        for event in outage.kept:
            self.latches.track_queued(event)
        # The void and its outcome first, then the fault's records: the journal reads in the
        # order it happened. Either step may meet a full disk again: nothing of it is written
        # then and the outage goes on (after the void alone the round has ended, so the next
        # attempt journals the rest).
        voids = [e for e in closing if isinstance(e, Void)]
        rest = [*(e for e in closing if not isinstance(e, Void)), *outage.kept]
        for events in ([voids] if voids else []) + [rest]:
            try:
                self.committer.handle_batch(events)
            except JournalError:
                return False
        self.views.end_outage(now_ts, voided=closing[0].type == "void")
        return True

    async def _outage_look(self) -> float:
        """Probe the journal while it is out, so the outage ends with no device event to wait for.

        Only between batches (``_resume`` has no await, and none while a commit is in flight),
        so it never interleaves with one.
        """
        if self.state.outage is not None and self.queue.idle:
            self._resume()
        return OUTAGE_PROBE
