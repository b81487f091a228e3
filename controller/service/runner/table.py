"""TableRunner: the async glue of one table (drivers → engine → journal → publisher).

Device events and commands are funnelled through one queue, so the table sees a single ordered
stream. Under load this is a group commit: the events that queued up while the last batch was
being written form the next batch. The engine decides the batch first
(:mod:`~tablectl.controller.service.runner.batch`); the events and their conclusions are then
journaled in one transaction on the journal's own thread, and only once that is durable does
anything about them leave the process (DESIGN §3, docs/architecture.md). A write the journal
refuses rolls the engine back and locks the table (:mod:`tablectl.controller.service.outage`)
until it writes again.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import structlog

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.errors import (
    JournalConflictError,
    JournalError,
    JournalRecordError,
)
from tablectl.controller.core.events import TableEvent, Void
from tablectl.controller.core.mapping import to_table_event
from tablectl.controller.core.time import format_ts, not_before
from tablectl.controller.engines import Engine
from tablectl.controller.journal import Journal, JournalRecord
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.mqtt.refusals import RefusalLog
from tablectl.controller.service.betting import BettingTimer
from tablectl.controller.service.checkpoint import CHECKPOINT_EVERY, Checkpoints
from tablectl.controller.service.clock import CLOCK_STEP, ClockWatch
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE, JournalOutage
from tablectl.controller.service.recovery import (
    CARD_OUTAGE_LIMIT,
    CONFIRM_SECONDS,
    JournalScan,
    RestartGate,
)
from tablectl.controller.service.runner.batch import Batch, Before
from tablectl.controller.service.runner.commands import CommandDesk
from tablectl.controller.service.runner.hold import ENGINE_ERROR, EngineFailedError
from tablectl.controller.service.runner.latches import Latches
from tablectl.controller.service.runner.records import (
    MAX_REASON,
    clip,
    log_conclusions,
)
from tablectl.controller.service.runner.restart import Restart
from tablectl.controller.service.runner.views import (
    NO_OUTPUTS,
    TableOutputs,
    device_view,
    state_view,
    status_view,
    timer_view,
)
from tablectl.drivers import events as dev
from tablectl.drivers.base import Driver

__all__ = ["Listener", "TableRunner"]

log = structlog.get_logger("tablectl.runner")

Listener = Callable[[JournalRecord], None]
"""Called with every record once it is journaled (metrics, diagnostics); must be cheap."""

_Queued = tuple[TableEvent, asyncio.Future[list[JournalRecord]] | None]

_MAX_BATCH = 256
"""Events per group commit at most (bounds how long one batch holds the event loop)."""


class TableRunner:
    """Runs one table: drivers → engine → journal → publisher.

    Everything it works with arrives here: ``outputs`` is where it says what is not a journal
    record (the publisher's :class:`~tablectl.controller.mqtt.outbound.Outbound`; nothing by
    default), ``checkpoints`` where it saves its state (``None``: never); ``authority`` and
    ``insecure_commands`` decide on commands (:mod:`tablectl.controller.service.runner.commands`).
    """

    def __init__(
        self,
        *,
        table_id: str,
        engine: Engine,
        journal: Journal,
        drivers: Sequence[Driver] = (),
        outputs: TableOutputs = NO_OUTPUTS,
        clock: Callable[[], float],
        betting: BettingConfig | None = None,
        listeners: Sequence[Listener] = (),
        restart_window: float = CONFIRM_SECONDS,
        card_outage_limit: float = CARD_OUTAGE_LIMIT,
        checkpoints: Checkpoints | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        authority: CommandAuthority | None = None,
        insecure_commands: bool = False,
        refusals: RefusalLog | None = None,
        clock_watch: ClockWatch | None = None,
    ) -> None:
        self.table_id = table_id
        self.clock_watch = clock_watch
        """Watches the wall clock for steps (``None``: not watched, e.g. a test's fixed clock)."""
        if clock_watch is not None:
            # A rotation in the second before the watch looks must not prune by a stepped clock.
            journal.retention_guard = clock_watch.off_course
        self.betting = betting or BettingConfig()
        self.listeners = list(listeners)
        self.engine = engine
        self.journal = journal
        self.drivers = list(drivers)
        self._outputs = outputs
        self._clock = clock
        self._queue: asyncio.Queue[_Queued] = asyncio.Queue()
        self.latches = Latches(d.device_id for d in self.drivers)
        self.device_seen: set[str] = set()
        self.outage: JournalOutage | None = None
        """The journal outage in progress (:mod:`~tablectl.controller.service.outage`): locked."""
        self.outages = 0
        """Outages begun since start (metrics)."""
        self.engine_errors = 0
        """Exceptions the engine raised since start, each an ``engine_error`` fault (metrics)."""
        self._deciding: Batch | None = None
        """The batch whose commit is in flight: the engine has applied it, the journal not yet
        (nothing about it may leave the process; :meth:`publish_state` waits for its end)."""
        self._undo: tuple[Engine, int, Before] | None = None
        """The next batch's :class:`Before`, taken after the last batch was let out (the engine
        object and the journal's ``seq`` it was taken at): see :meth:`_take_undo`."""
        self._restart = Restart(
            self,
            journal=journal,
            latches=self.latches,
            devices=[d.device_id for d in self.drivers],
            outputs=outputs,
            clock=clock,
            checkpoints=checkpoints,
            checkpoint_every=checkpoint_every,
            restart_window=restart_window,
            card_outage_limit=card_outage_limit,
            clock_watch=clock_watch,
        )
        self._commands = CommandDesk(
            self,
            journal=journal,
            latches=self.latches,
            clock=clock,
            authority=authority,
            insecure=insecure_commands,
            refusals=refusals or RefusalLog(),
            outputs=outputs,
        )
        self.timer = BettingTimer(self.betting, self._timer_view, self.submit)
        """Opens and closes betting when ``[betting] mode = "timer"``."""
        self._state_seq = journal.last_seq
        """The journal's last ``seq`` when ``state`` was last built (the outbox backlog's edge)."""

    @property
    def latched(self) -> dict[str, set[str]]:
        """Per device, the faults the journal has latched (and not cleared)."""
        return self.latches.journaled

    @property
    def scan(self) -> JournalScan:
        """What :meth:`recover` learnt beside the engine state (how the last run ended)."""
        return self._restart.scan

    @property
    def gate(self) -> RestartGate | None:
        """Set by :meth:`power_on`: whether an interrupted round resumes."""
        return self._restart.gate

    @property
    def refusals(self) -> RefusalLog:
        """Refused commands of the current window (journaled as one record per window)."""
        return self._commands.refusals

    @property
    def checkpoints(self) -> Checkpoints | None:
        """Where :meth:`recover` starts from and the runner saves its state (``None``: never)."""
        return self._restart.checkpoints

    # --- start and stop (tablectl.controller.service.runner.restart) -----------------------

    def recover(self) -> int:
        """Rebuild engine state from the journal; returns the number of events replayed."""
        self._undo = None  # the replay moves the engine outside _decide
        return self._restart.recover()

    def checkpoint(self) -> None:
        """Save the state as of the journal's newest record (all its conclusions journaled)."""
        self._restart.checkpoint()

    def power_on(self) -> JournalRecord:
        """Journal ``power_on`` (after :meth:`recover`) and set up the restart gate."""
        return self._restart.power_on()

    def power_off(self, reason: str) -> None:
        """Journal ``power_off``: an orderly stop (R21). Never raises (the stop goes on)."""
        self._restart.power_off(reason)

    # --- commands (tablectl.controller.service.runner.commands) ----------------------------

    async def command(self, verb: str, payload: bytes) -> dict[str, Any]:
        """Handle ``cmd/{verb}`` (the publisher's command handler); never raises."""
        return await self._commands.command(verb, payload)

    def flush_refusals(self, *, force: bool = False) -> None:
        """Journal the current window's refusals as one record (when due, or ``force``)."""
        self._commands.flush_refusals(force=force)

    # --- inputs ------------------------------------------------------------------------------

    def submit(self, event: TableEvent) -> asyncio.Future[list[JournalRecord]]:
        """Queue an event (a command's); the future gets the journaled records."""
        future: asyncio.Future[list[JournalRecord]] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((event, future))
        return future

    def enqueue(self, event: TableEvent) -> None:
        """Queue an event nobody waits for (the restart gate's void)."""
        self._queue.put_nowait((event, None))

    async def run(self) -> None:
        """Process events until cancelled; one task per driver feeds the queue."""
        self.publish_state()
        for driver in self.drivers:
            self.publish_device(driver)
        async with asyncio.TaskGroup() as group:
            for driver in self.drivers:
                group.create_task(self._pump_driver(driver), name=f"driver:{driver.device_id}")
            group.create_task(self._process(), name="table:process")
            group.create_task(self._restart.deadline(), name="table:restart")
            group.create_task(self.timer.run(), name="table:betting")
            group.create_task(self._outage_watch(), name="table:outage")
            group.create_task(self._commands.refusal_flush(), name="table:refusals")
            if self.clock_watch is not None:
                group.create_task(self._watch_clock(), name="table:clock")

    # --- the wall clock (tablectl.controller.service.clock) --------------------------------

    async def _watch_clock(self, interval: float = 1.0) -> None:
        """Look for a step of the wall clock about once a second (two clock reads)."""
        watch = self.clock_watch
        assert watch is not None
        while True:
            await asyncio.sleep(interval)
            # Between batches: a step's record comes after every event read before the look
            # (stamped by the clock as it was, seconds ago under load), never before one: after
            # a step back, such a time would hold every later one (not_before).
            await self._drained()
            record = watch.check()
            if record is not None:
                self.journal_records([record], raising=False)
                self.clock_changed()

    async def _drained(self, limit: float = 5.0) -> None:
        """Until no event waits to be decided or committed (``limit`` seconds at most)."""
        deadline = asyncio.get_running_loop().time() + limit
        while self._deciding is not None or not self._queue.empty():
            if asyncio.get_running_loop().time() > deadline:
                return
            await asyncio.sleep(0.005)

    def clock_changed(self) -> None:
        """A step, a return or a confirmation: retention follows, ``state`` says so."""
        watch = self.clock_watch
        self.journal.retention_hold = watch.describe() if watch is not None else None
        self.publish_state()

    def clock_suspect(self) -> str | None:
        """One line while the clock is suspect (a step not confirmed), else ``None``."""
        return self.clock_watch.describe() if self.clock_watch is not None else None

    def confirm_clock(self, *, by: str | None, role: str | None) -> list[JournalRecord]:
        """A supervisor's ``cmd/clock_confirm``: journal ``clock_confirmed``; retention resumes.

        Raises:
            JournalError: the journal refused the record (the clock stays suspect).
        """
        watch = self.clock_watch
        if watch is None or watch.suspect is None:
            return []
        suspect = watch.suspect
        record = watch.confirm(by=by, role=role)
        try:
            stored = self.journal_records([record], raising=True)
        except JournalError:
            watch.suspect = suspect
            raise
        self.clock_changed()
        return stored

    async def _pump_driver(self, driver: Driver) -> None:
        # Each pump is its own task: the binding stays scoped to this device's log lines.
        structlog.contextvars.bind_contextvars(device=driver.device_id)
        async for device_event in driver.events():
            if isinstance(device_event, dev.DeviceAvailable):
                self.device_seen.add(driver.device_id)
            event = to_table_event(device_event)
            if not self._restart.admits(device_event, event):
                continue  # a catch-up milestone the resumed round already has
            if self.latches.is_redundant(event):
                self.publish_device(driver)
                continue
            # Track at enqueue time too: a clear that follows a raise still in the queue is real.
            self.latches.track_queued(event)
            self._queue.put_nowait((event, None))

    async def _process(self) -> None:
        while True:
            # Group commit: whatever queued up while the last batch was being fsync'd goes into
            # the next one (one fsync for its events and their conclusions). An idle table
            # still commits each event on its own, at once.
            batch = [await self._queue.get()]
            while len(batch) < _MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            await self._run_batch(batch)

    async def step(self, events: Sequence[TableEvent]) -> None:
        """One turn of the queue for ``events`` (the journal's thread commits it, a refused
        write locks the table, a checkpoint is saved when due): what :meth:`run` does with each
        batch, for a caller that drives the table without its tasks (tests, replays)."""
        await self._run_batch([(event, None) for event in events])

    async def _run_batch(self, batch: list[_Queued]) -> None:
        if (self.outage is not None) and not self._resume():
            # Locked: nothing that cannot be journaled is acted on (DESIGN §3, R14).
            assert self.outage is not None
            for event, future in batch:
                self.outage.drop(event)
                if future is not None and not future.done():
                    future.set_exception(JournalError(f"{JOURNAL_UNAVAILABLE}: table locked"))
            # The counts on status/state (the publisher coalesces the updates).
            self._outputs.set_status(status_view(self.outage))
            self.publish_state()
            return
        try:
            results = await self._commit_batch([event for event, _ in batch])
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
            # _decide turns into faults): nothing of the batch is durable. Lock the table and
            # alarm rather than end the process or go on as if it were journaled.
            if not isinstance(exc, JournalError):
                log.exception("batch_failed", error_type=type(exc).__name__)
            outage = self._begin_outage(exc)
            for event, future in batch:
                outage.drop(event)  # not journaled, and the engine is as before the batch
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        for (_, future), records in zip(batch, results, strict=True):
            if future is not None and not future.done():
                future.set_result(records)
        await self._restart.checkpoint_if_due()

    # --- journal outage ---------------------------------------------------------------------

    def _begin_outage(self, exc: BaseException) -> JournalOutage:
        """The journal refused a write: lock the table and say so everywhere it can be said."""
        if self.outage is not None:
            return self.outage
        outage = JournalOutage(
            started_ts=format_ts(self._clock()),
            error=clip(str(exc) or type(exc).__name__, MAX_REASON),
            round=self.engine.current_round,
        )
        self.outage = outage
        self.outages += 1
        log.error(
            "journal_outage_started",
            error=outage.error,
            round=outage.round,
            code=JOURNAL_UNAVAILABLE,
        )
        self._outputs.alarm(outage.alarm(self.table_id))
        self._outputs.set_status(status_view(self.outage))
        self.publish_state()
        return outage

    def _resume(self) -> bool:
        """Try to end the outage: journal what it owes; ``True`` once the journal took it all.

        In order: the void of the round still in play (``journal_outage``) and the fault raised
        and cleared with the outage's start and end, then the device faults that arrived
        meanwhile (R18). An event's conclusions are committed with it, so none can be owed.
        """
        outage = self.outage
        if outage is None:
            return True
        now_ts = format_ts(self._clock())
        closing = outage.closing_events(now_ts, void_round=self.engine.current_round is not None)
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
                self.handle_batch(events)
            except JournalError:
                return False
        self.outage = None
        log.warning(
            "journal_outage_ended",
            since=outage.started_ts,
            until=now_ts,
            events_not_journaled=outage.not_journaled,
            dropped=dict(outage.dropped),
            voided=outage.round if closing[0].type == "void" else None,
        )
        self._outputs.alarm(outage.alarm(self.table_id, cleared_ts=now_ts))
        self._outputs.set_status(status_view(self.outage))
        self.publish_state()
        return True

    async def _outage_watch(self, interval: float = 0.5) -> None:
        """Probe the journal while it is out, so the outage ends with no device event to wait for.

        Runs only between batches (``_resume`` has no await, and a batch whose commit is in
        flight is waited for), so it never interleaves with one.
        """
        while True:
            await asyncio.sleep(interval)
            if self.outage is not None and self._queue.empty() and self._deciding is None:
                self._resume()

    # --- the step ----------------------------------------------------------------------------

    def journal_records(
        self, records: list[dict[str, Any]], *, raising: bool
    ) -> list[JournalRecord]:
        """Append the controller's own (non-event) records; wake the outbox and listeners.

        A refused write is logged; then, with ``raising``, raised; without, the journal's
        failure begins an outage and ``[]`` is returned.
        """
        floor = self.journal.newest_ts
        for record in records:
            # In order, as the events are (core.time.not_before); a clock_step record alone may
            # go back: it is the record that says the clock did.
            if isinstance(record.get("ts"), str) and record.get("type") != CLOCK_STEP:
                record["ts"] = floor = not_before(record["ts"], floor)
        if self.clock_watch is not None and any(r.get("type") == CLOCK_STEP for r in records):
            # Held before the step's own append, which may rotate: no prune by the stepped clock.
            self.journal.retention_hold = self.clock_watch.describe()
        try:
            stored = self.journal.append(records)
        except JournalError as exc:
            log.error("journal_write_failed", error=str(exc), record_type=records[0]["type"])
            if raising:
                raise
            if not isinstance(exc, JournalRecordError):  # a refused record is no outage
                self._begin_outage(exc)
            return []
        self._restart.saw(stored, self.engine.current_round)
        self._outputs.notify()
        for listener in self.listeners:
            for item in stored:
                listener(item)
        return stored

    def handle(self, event: TableEvent) -> list[JournalRecord]:
        """Journal ``event`` with the engine's conclusions in one commit. Returns the records."""
        return self.handle_batch([event])[0]

    def handle_batch(self, events: Sequence[TableEvent]) -> list[list[JournalRecord]]:
        """Decide ``events`` and commit them with their conclusions in one transaction (one
        fsync), here on the caller's thread: recovery, the outage's closing events, tests.

        The running table commits on the journal's own thread instead (:meth:`_commit_batch`).
        Returns each event's records: its own, then its conclusions.
        """
        batch = self._decide(events)
        try:
            stored = self.journal.append(batch.records, after_seq=batch.after_seq)
        except BaseException:
            self.engine = batch.before.restore(self.latches)
            raise
        return self._conclude(batch, stored)

    async def _commit_batch(self, events: Sequence[TableEvent]) -> list[list[JournalRecord]]:
        """:meth:`handle_batch` with the commit on the journal's writer thread, so that this
        table's fsync (on a slow disk: 100 ms and more) never holds the event loop that the
        other tables of the process share. While it is in flight nothing about the batch leaves
        the process; another write that took its ``seq`` first (a command's record) makes the
        batch decide again.
        """
        while True:
            batch = self._deciding = self._decide(events)
            append = functools.partial(
                self.journal.append, batch.records, after_seq=batch.after_seq
            )
            commit = self.journal.in_writer(append)
            try:
                stored = await asyncio.wrap_future(commit)
            except JournalConflictError:
                self.engine = batch.before.restore(self.latches)
                continue
            except asyncio.CancelledError:
                # The table stops (or the task is cancelled) mid-commit; the write goes on in
                # its thread whatever happens here: wait for it, so the engine and the scan
                # match the journal for power_off's checkpoint.
                try:
                    stored = commit.result()
                except BaseException:
                    self.engine = batch.before.restore(self.latches)
                else:
                    self._conclude(batch, stored)
                raise
            except BaseException:
                self.engine = batch.before.restore(self.latches)
                raise
            finally:
                self._deciding = None
            return self._conclude(batch, stored)

    def _decide(self, events: Sequence[TableEvent]) -> Batch:
        """Apply ``events`` to the engine (:meth:`Batch.decide`); on any error the engine and
        the latches are as before them.

        An event the engine raises on is decided again from the batch's start with an
        ``engine_error`` fault before it (:mod:`.hold`): the event is journaled all the same
        and the table is held for a supervisor.
        """
        before = self._cached_undo() or Before.take(self.engine, self.latches)
        failed: dict[int, BaseException] = {}
        while True:
            try:
                return Batch.decide(
                    events,
                    engine=self.engine,
                    latches=self.latches,
                    before=before,
                    after_seq=self.journal.last_seq,
                    ts=lambda: format_ts(self._clock()),
                    failed=failed,
                    floor=self.journal.newest_ts,
                )
            except EngineFailedError as exc:
                self.engine = before.restore(self.latches)
                if exc.index in failed:  # cannot happen (held events are not applied): a bug
                    raise
                failed[exc.index] = exc.error
                self.engine_errors += 1
                event = events[exc.index]
                log.error(
                    "engine_error",
                    code=ENGINE_ERROR,
                    error_type=type(exc.error).__name__,
                    error=clip(str(exc.error), MAX_REASON),
                    event_type=event.type,
                    round=self.engine.current_round,
                    exc_info=exc.error,
                )
            except BaseException:
                self.engine = before.restore(self.latches)
                raise

    def _conclude(self, batch: Batch, stored: list[JournalRecord]) -> list[list[JournalRecord]]:
        """A batch is durable: let it out. The outbox first (woken here, it reads and publishes
        the stored bytes); the logs and the retained views only after it has been given its turn
        of the event loop (:meth:`_after_outbox`), so an outcome never waits behind them."""
        per_event = batch.split(stored)
        for records, round_in_play in zip(per_event, batch.rounds, strict=True):
            self._restart.saw(records, round_in_play)
        results = batch.by_given(per_event)
        self._outputs.notify()
        for listener in self.listeners:
            for record in stored:
                listener(record)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called without a loop (recovery before start, tools): now
            self._after_outbox(batch)
        else:
            loop.call_soon(self._after_outbox, batch)
            loop.call_soon(self._take_undo)
        return results

    def _after_outbox(self, batch: Batch) -> None:
        """A batch's log lines and the retained views it changed (coalesced by the publisher:
        once per batch is enough)."""
        for outputs in batch.outputs:
            log_conclusions(outputs)
        self.publish_state()
        devices = {event.device for event in batch.events if event.device is not None}
        for driver in self.drivers:
            if driver.device_id in devices:
                self.publish_device(driver)

    def _take_undo(self) -> None:
        """Pickle the engine for the next batch's undo now, after this batch went out, rather
        than when the next device line arrives (40–90 µs off the path from the line to the
        broker). Not while a commit is in flight: the engine is then ahead of the journal."""
        if self._deciding is None and self.outage is None:
            before = Before.take(self.engine, self.latches)
            self._undo = (self.engine, self.journal.last_seq, before)

    def _cached_undo(self) -> Before | None:
        """:meth:`_take_undo`'s pickle if it still describes the engine (used once).

        During a run the engine only moves in :meth:`_decide`, and every decided batch either
        appends to the journal or is undone into a new engine object; so the same object at
        the same ``seq`` with the same journaled latches is the same state. Anything else (a
        command's or an anchor's record in between, a restored engine) takes a fresh one.
        """
        undo, self._undo = self._undo, None
        if undo is None:
            return None
        engine, seq, before = undo
        if engine is not self.engine or seq != self.journal.last_seq:
            return None
        return before if before.latched == self.latches.journaled else None

    # --- retained views (tablectl.controller.service.runner.views) -------------------------

    def publish_state(self) -> None:
        """The retained ``state``; none while a batch's commit is in flight (its conclusions are
        not durable yet: the end of the commit publishes the state)."""
        if self._deciding is not None:
            return
        view = state_view(
            table_id=self.table_id,
            engine=self.engine,
            seq=self.journal.last_seq,
            latched=self.latches.journaled,
            outage=self.outage,
            ts=format_ts(self._clock()),
            outbox_pending=self._outbox_pending(),
            clock_suspect=self.clock_suspect(),
        )
        self._outputs.set_view("state", view)

    def _outbox_pending(self) -> int:
        """Records journaled before this batch (up to the last ``state``'s ``seq``) that the broker
        has not acknowledged yet: the outbox's backlog, 0 while the publisher keeps up. The batch
        just journaled is not counted: it is always unpublished at this point. No query: the
        journal keeps its acknowledged ``seq`` in memory (none may wait on the loop for a disk).
        """
        counted, self._state_seq = self._state_seq, self.journal.last_seq
        return max(counted - self.journal.acknowledged_seq, 0)

    def publish_device(self, driver: Driver) -> None:
        """The retained ``devices/{id}`` of one device."""
        view = device_view(
            table_id=self.table_id,
            driver=driver,
            latched=self.latches.journaled,
            ts=format_ts(self._clock()),
        )
        self._outputs.set_view(f"devices/{driver.device_id}", view)

    def _timer_view(self) -> Mapping[str, Any]:
        return timer_view(self.engine, self.outage)
