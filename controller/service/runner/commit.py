"""The table's writer: every record it journals, and letting each commit out.

Events go in batches (:mod:`.batch`: decided first, then committed with their conclusions in
one transaction); the controller's own records (``power_on``, a command's, a clock step's) go
through :meth:`Committer.journal_records`. After each commit, and only then, the records are
let out: the outputs (the outbox) first, the listeners, then — a turn of the event loop later,
so an outcome never waits behind them — the log lines and the retained views.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Sequence
from typing import Any

import structlog

from tablectl.controller.core.errors import (
    JournalConflictError,
    JournalError,
    JournalRecordError,
)
from tablectl.controller.core.events import TableEvent
from tablectl.controller.core.time import format_ts, not_before
from tablectl.controller.engines import Engine
from tablectl.controller.journal import Committed, Journal, JournalRecord
from tablectl.controller.service.clock import CLOCK_STEP, ClockWatch
from tablectl.controller.service.runner.batch import Batch, Before
from tablectl.controller.service.runner.hold import ENGINE_ERROR, EngineFailedError
from tablectl.controller.service.runner.records import MAX_REASON, clip, log_conclusions
from tablectl.controller.service.runner.state import TableState
from tablectl.controller.service.runner.views import TableOutputs, TableViews
from tablectl.drivers.clock import Clock

log = structlog.get_logger("tablectl.runner")

Listener = Callable[[JournalRecord], None]
"""Called with every record once it is journaled (metrics, diagnostics); must be cheap."""


class Committer:
    """Journals a table's events (with the engine's conclusions) and its own records.

    Args:
        journal: where everything is written.
        state: the engine is moved here (and put back when a commit fails).
        views: republished after each batch; a refused write begins an outage there.
        outputs: handed each commit's rows (the outbox).
        listeners: called with every record journaled (the list is shared: callers may add).
        clock: the table's clock (its wall time: ``ts`` of events that have none).
        clock_watch: the wall clock's watch (retention is held before a step is journaled).
    """

    def __init__(
        self,
        *,
        journal: Journal,
        state: TableState,
        views: TableViews,
        outputs: TableOutputs,
        listeners: list[Listener],
        clock: Clock,
        clock_watch: ClockWatch | None,
    ) -> None:
        self._journal = journal
        self._state = state
        self._views = views
        self._outputs = outputs
        self._listeners = listeners
        self._clock = clock
        self._clock_watch = clock_watch
        self._undo: tuple[Engine, int, Before] | None = None
        """The next batch's :class:`Before`, taken after the last batch was let out (the engine
        object and the journal's ``seq`` it was taken at): see :meth:`_take_undo`."""

    # --- the controller's own records ------------------------------------------------------

    def journal_records(
        self, records: list[dict[str, Any]], *, raising: bool
    ) -> list[JournalRecord]:
        """Append the controller's own (non-event) records; let them out (outbox, listeners).

        A refused write is logged; then, with ``raising``, raised; without, the journal's
        failure begins an outage and ``[]`` is returned.
        """
        journal = self._journal
        floor = journal.newest_ts
        for record in records:
            # In order, as the events are (core.time.not_before); a clock_step record alone may
            # go back: it is the record that says the clock did.
            if isinstance(record.get("ts"), str) and record.get("type") != CLOCK_STEP:
                record["ts"] = floor = not_before(record["ts"], floor)
        if self._clock_watch is not None and any(r.get("type") == CLOCK_STEP for r in records):
            # Held before the step's own append, which may rotate: no prune by the stepped clock.
            journal.retention_hold = self._clock_watch.describe()
        try:
            committed = journal.commit(records)
        except JournalError as exc:
            log.error("journal_write_failed", error=str(exc), record_type=records[0]["type"])
            if raising:
                raise
            if not isinstance(exc, JournalRecordError):  # a refused record is no outage
                self._views.begin_outage(exc)
            return []
        self._state.saw(committed.records, self._state.engine.current_round)
        self._let_out(committed)
        return committed.records

    # --- events ----------------------------------------------------------------------------

    def handle(self, event: TableEvent) -> list[JournalRecord]:
        """Journal ``event`` with the engine's conclusions in one commit. Returns the records."""
        return self.handle_batch([event])[0]

    def handle_batch(self, events: Sequence[TableEvent]) -> list[list[JournalRecord]]:
        """Decide ``events`` and commit them with their conclusions in one transaction (one
        fsync), here on the caller's thread: recovery, the outage's closing events, tests.

        The running table commits on the journal's own thread instead (:meth:`commit_batch`).
        Returns each event's records: its own, then its conclusions.
        """
        batch = self._decide(events)
        try:
            committed = self._journal.commit(batch.records, after_seq=batch.after_seq)
        except BaseException:
            self._state.engine = batch.before.restore(self._state.latches)
            raise
        return self._conclude(batch, committed)

    async def commit_batch(self, events: Sequence[TableEvent]) -> list[list[JournalRecord]]:
        """:meth:`handle_batch` with the commit on the journal's writer thread, so that this
        table's fsync (on a slow disk: 100 ms and more) never holds the event loop that the
        other tables of the process share. While it is in flight nothing about the batch leaves
        the process; another write that took its ``seq`` first (a command's record) makes the
        batch decide again.
        """
        state = self._state
        while True:
            batch = self._decide(events)
            state.committing = True
            append = functools.partial(
                self._journal.commit, batch.records, after_seq=batch.after_seq
            )
            commit = self._journal.in_writer(append)
            try:
                committed = await asyncio.wrap_future(commit)
            except JournalConflictError:
                state.engine = batch.before.restore(state.latches)
                continue
            except asyncio.CancelledError:
                # The table stops (or the task is cancelled) mid-commit; the write goes on in
                # its thread whatever happens here: wait for it, so the engine and the scan
                # match the journal for power_off's checkpoint.
                try:
                    committed = commit.result()
                except BaseException:
                    state.engine = batch.before.restore(state.latches)
                else:
                    self._conclude(batch, committed)
                raise
            except BaseException:
                state.engine = batch.before.restore(state.latches)
                raise
            finally:
                state.committing = False
            return self._conclude(batch, committed)

    def _decide(self, events: Sequence[TableEvent]) -> Batch:
        """Apply ``events`` to the engine (:meth:`Batch.decide`); on any error the engine and
        the latches are as before them.

        An event the engine raises on is decided again from the batch's start with an
        ``engine_error`` fault before it (:mod:`.hold`): the event is journaled all the same
        and the table is held for a supervisor.
        """
        state = self._state
        before = self._cached_undo() or Before.take(state.engine, state.latches)
        failed: dict[int, BaseException] = {}
        while True:
            try:
                return Batch.decide(
                    events,
                    engine=state.engine,
                    latches=state.latches,
                    before=before,
                    after_seq=self._journal.last_seq,
                    ts=lambda: format_ts(self._clock.now()),
                    failed=failed,
                    floor=self._journal.newest_ts,
                )
            except EngineFailedError as exc:
                state.engine = before.restore(state.latches)
                if exc.index in failed:  # cannot happen (held events are not applied): a bug
                    raise
                failed[exc.index] = exc.error
                state.engine_errors += 1
                event = events[exc.index]
                log.error(
                    "engine_error",
                    code=ENGINE_ERROR,
                    error_type=type(exc.error).__name__,
                    error=clip(str(exc.error), MAX_REASON),
                    event_type=event.type,
                    round=state.engine.current_round,
                    exc_info=exc.error,
                )
            except BaseException:
                state.engine = before.restore(state.latches)
                raise

    def _conclude(self, batch: Batch, committed: Committed) -> list[list[JournalRecord]]:
        """A batch is durable: let it out. The outbox first (handed the stored bytes here, it
        publishes them); the logs and the retained views only after it has been given its turn
        of the event loop (:meth:`_after_outbox`), so an outcome never waits behind them."""
        per_event = batch.split(committed.records)
        for records, round_in_play in zip(per_event, batch.rounds, strict=True):
            self._state.saw(records, round_in_play)
        results = batch.by_given(per_event)
        self._let_out(committed, batch.withheld)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called without a loop (recovery before start, tools): now
            self._after_outbox(batch)
        else:
            loop.call_soon(self._after_outbox, batch)
            loop.call_soon(self._take_undo)
        return results

    def _let_out(self, committed: Committed, withheld: Sequence[int] = ()) -> None:
        self._outputs.committed(committed, withheld)
        for listener in self._listeners:
            for record in committed.records:
                listener(record)

    def _after_outbox(self, batch: Batch) -> None:
        """A batch's log lines and the retained views it changed (coalesced by the publisher:
        once per batch is enough)."""
        for outputs in batch.outputs:
            log_conclusions(outputs)
        self._views.publish_state()
        devices = {event.device for event in batch.events if event.device is not None}
        if devices:
            self._views.publish_devices(devices)

    # --- undo ------------------------------------------------------------------------------

    def _take_undo(self) -> None:
        """Pickle the engine for the next batch's undo now, after this batch went out, rather
        than when the next device line arrives (40–90 µs off the path from the line to the
        broker). Not while a commit is in flight: the engine is then ahead of the journal."""
        state = self._state
        if not state.committing and state.outage is None:
            before = Before.take(state.engine, state.latches)
            self._undo = (state.engine, self._journal.last_seq, before)

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
        if engine is not self._state.engine or seq != self._journal.last_seq:
            return None
        return before if before.latched == self._state.latches.journaled else None
