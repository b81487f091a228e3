"""TableRunner: the only async glue of one table.

Device events and commands are funnelled through one queue, so the table sees a single ordered
stream. For each event: journal it (fsync'd) → apply the game engine → journal what the engine
concluded → wake the publisher. Nothing is acted on before it is in the journal (DESIGN §3).
Under load this is a group commit: the events that queued up meanwhile are journaled in one
transaction, then applied in order, then their conclusions journaled in a second one.

On start the runner replays the journal through a fresh engine to rebuild the table state (round
counter, phase, latched faults) — from its last checkpoint on, when it has a valid one
(:mod:`tablectl.controller.service.checkpoint`; the runner saves one at an orderly stop and every
``checkpoint_every`` records) — and journals any conclusion that a crash between "event journaled"
and "outcome journaled" left out, so nothing the engine decided is lost. Then it journals
``power_on`` and lets :class:`tablectl.controller.service.recovery.RestartGate` decide, from the
first device reports, whether a round that was in play resumes or is voided
(``controller_restart``); an orderly stop journals ``power_off`` (regulatory R12, R21).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Final

import structlog

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.errors import EventFormatError, JournalError
from tablectl.controller.core.events import (
    EVENT_TYPES,
    Card,
    Fault,
    FaultCleared,
    ShoeRemoved,
    TableEvent,
    Void,
    event_to_dict,
    parse_event,
)
from tablectl.controller.core.mapping import SHOE_REMOVED, iso_ts, to_table_event
from tablectl.controller.core.outcomes import EngineOutput, Outcome, ShoeReport, Verdict
from tablectl.controller.engines import Engine
from tablectl.controller.journal.store import Journal, canonical_json
from tablectl.controller.mqtt.refusals import RefusalLog
from tablectl.controller.mqtt.security import CommandAuthority, action_for
from tablectl.controller.mqtt.security import Verdict as CommandVerdict
from tablectl.controller.service.betting import BettingTimer
from tablectl.controller.service.checkpoint import CHECKPOINT_EVERY, Checkpoints, RecoveryState
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE, JournalOutage
from tablectl.controller.service.recovery import (
    CARD_OUTAGE_LIMIT,
    CONFIRM_SECONDS,
    CONTROLLER_RESTART,
    POWER_OFF,
    POWER_ON,
    ROUND_RESUMED,
    GateAnswer,
    Interrupted,
    JournalScan,
    RestartGate,
)
from tablectl.drivers import events as dev
from tablectl.drivers.base import Driver

__all__ = ["Sink", "TableRunner", "output_record"]

log = structlog.get_logger("tablectl.runner")

Sink = Callable[[], None]
"""Called after records were journaled (wakes the publisher's outbox drain)."""
RetainedSink = Callable[[str, Mapping[str, Any]], None]
"""Publishes a retained latest-value topic (suffix under the table, payload)."""
MessageSink = Callable[[Mapping[str, Any]], None]
"""Publishes one payload that is not a journal record: an alarm the journal cannot take yet, or
the extra fields of the retained ``status`` (a journal outage)."""

_OUTPUT_TYPES = frozenset({"outcome", "verdict", "shoe_end"})


def output_record(output: EngineOutput, ts: str | None = None) -> dict[str, Any]:
    """The journal record for an engine conclusion; ``ts`` is the deciding event's when unset."""
    if isinstance(output, Outcome):
        record = {**output.to_payload(), "type": "outcome"}
    elif isinstance(output, ShoeReport):
        record = {"type": "shoe_end", **output.to_payload()}
    else:
        record = {"type": "verdict", **output.to_payload()}
    if record.get("ts") is None:
        record["ts"] = ts
    return record


def _event_record(event: TableEvent) -> dict[str, Any]:
    record = event_to_dict(event)
    record.pop("seq", None)
    return record


class TableRunner:
    """Runs one table: drivers → engine → journal → publisher."""

    def __init__(
        self,
        *,
        table_id: str,
        engine: Engine,
        journal: Journal,
        drivers: Sequence[Driver] = (),
        on_journaled: Sink = lambda: None,
        publish_retained: RetainedSink = lambda _topic, _payload: None,
        publish_alarm: MessageSink = lambda _payload: None,
        publish_status: MessageSink = lambda _payload: None,
        clock: Callable[[], float],
        betting: BettingConfig | None = None,
        listeners: Sequence[Callable[[Mapping[str, Any]], None]] = (),
        restart_window: float = CONFIRM_SECONDS,
        card_outage_limit: float = CARD_OUTAGE_LIMIT,
        checkpoints: Checkpoints | None = None,
        checkpoint_every: int = CHECKPOINT_EVERY,
        authority: CommandAuthority | None = None,
        insecure_commands: bool = False,
        refusals: RefusalLog | None = None,
    ) -> None:
        self.table_id = table_id
        self.betting = betting or BettingConfig()
        self.listeners = list(listeners)
        """Called with every record once it is journaled (metrics, diagnostics); must be cheap."""
        self.engine = engine
        self.journal = journal
        self.drivers = list(drivers)
        self._on_journaled = on_journaled
        self._publish_retained = publish_retained
        self._publish_alarm = publish_alarm
        self._publish_status = publish_status
        self._clock = clock
        self._queue: asyncio.Queue[tuple[TableEvent, asyncio.Future[list[dict[str, Any]]] | None]]
        self._queue = asyncio.Queue()
        self.latched: dict[str, set[str]] = {d.device_id: set() for d in self.drivers}
        # What the queue will have latched once processed (filters repeated raises and clears).
        self._pending_latches: dict[str, set[str]] = {d.device_id: set() for d in self.drivers}
        self.device_seen: set[str] = set()
        self.scan = JournalScan()
        """What :meth:`recover` learnt beside the engine state (how the last run ended)."""
        self.gate: RestartGate | None = None
        """Set by :meth:`power_on`: whether an interrupted round resumes."""
        self._restart_window = restart_window
        self._card_outage_limit = card_outage_limit
        self.checkpoints = checkpoints
        """Where :meth:`recover` starts from and the runner saves its state (``None``: never)."""
        self._checkpoint_every = checkpoint_every
        self._conclusions_lost = False
        self.outage: JournalOutage | None = None
        """The journal outage in progress (:mod:`tablectl.controller.service.outage`): the table is
        locked."""
        self.outages = 0
        """Outages begun since start (metrics)."""
        self.authority = authority
        """Verifies signed commands (``[security] roles``); ``None``: see
        :attr:`insecure_commands`."""
        self.insecure_commands = insecure_commands
        """Without an authority: accept unsigned commands (labs) instead of refusing them."""
        self.refusals = refusals or RefusalLog()
        """Refused commands of the current window (journaled as one record per window)."""
        self._lost_outputs: list[dict[str, Any]] = []
        """Conclusions of journaled events that the journal refused: journaled first when it
        writes again (until then no checkpoint may cover them)."""

    # --- recovery --------------------------------------------------------------------------

    def recover(self) -> int:
        """Rebuild engine state from the journal; returns the number of events replayed.

        With a valid checkpoint the state starts as the checkpoint saved it and only the records
        after its ``seq`` are replayed; a long replay saves checkpoints as it goes, and the end
        state is saved too, so the next start replays nothing it replayed now.

        Conclusions are matched to the journal by content, in order: a group commit stores a
        batch's events first and their conclusions after them, so an output record need not
        follow its own event directly. What the engine concludes again but the journal lacks
        after the last matched conclusion is journaled now (the crash window).
        """
        pending: list[tuple[str, dict[str, Any]]] = []
        replayed = 0
        unsaved = 0
        for record in self.journal.records(self._load_checkpoint()):
            if self._replay(record, pending):
                replayed += 1
                unsaved += 1
            if unsaved >= self._checkpoint_every and not pending:
                # A long replay keeps its progress: a start killed now resumes from here.
                self._save_checkpoint(int(record["seq"]), str(record["hash"]))
                unsaved = 0
        if pending:
            # The crash came after the events were journaled and before their outcomes were.
            log.warning("recovering_missing_outputs", count=len(pending))
            for stored in self.journal.append([out for _, out in pending]):
                self.scan.record(stored, self.engine.current_round)
            self._on_journaled()
        if replayed:
            self.checkpoint()
        return replayed

    def _replay(self, record: dict[str, Any], pending: list[tuple[str, dict[str, Any]]]) -> bool:
        """One journal record of :meth:`recover`; ``True`` if it was an event (applied)."""
        kind = record.get("type")
        if kind not in EVENT_TYPES:
            self.scan.record(record, self.engine.current_round)
        if kind in _OUTPUT_TYPES:
            key = _output_key(record)
            for index, (expected, _) in enumerate(pending):
                if expected == key:
                    # Anything before it was lost to a failed write long ago (the table went
                    # on); only the tail after the last match is the crash window.
                    del pending[: index + 1]
                    break
            return False
        if kind not in EVENT_TYPES:
            return False
        fields = {k: v for k, v in record.items() if k not in _JOURNAL_FIELDS}
        try:
            event = parse_event(fields)
        except EventFormatError as exc:  # a journal we wrote ourselves: should never happen
            log.error("journal_event_unreadable", seq=record.get("seq"), error=str(exc))
            return False
        self._track_faults(event)
        for output in self.engine.apply(event):
            out = output_record(output, event.ts)
            pending.append((_output_key(out), out))
        self.scan.record(record, self.engine.current_round)
        return True

    def _load_checkpoint(self) -> int:
        """Restore the state of the last checkpoint; the ``seq`` to replay after (0: all)."""
        if self.checkpoints is None:
            return 0
        loaded = self.checkpoints.load(self.journal)
        if loaded is None:
            return 0
        seq, state = loaded  # same code, table, game and rules: the fingerprint says so
        self.engine = state.engine
        self.scan = state.scan
        for device, codes in state.latched.items():
            self.latched[device] = set(codes)
            self._pending_latches[device] = set(codes)
        return seq

    def checkpoint(self) -> None:
        """Save the state as of the journal's newest record (all its conclusions journaled)."""
        if self._conclusions_lost:
            return
        if self.checkpoints is not None and self.journal.last_seq > self.checkpoints.seq:
            self._save_checkpoint(self.journal.last_seq, self.journal.last_hash)

    def _save_checkpoint(self, seq: int, record_hash: str) -> None:
        assert self.checkpoints is not None
        latched = {device: set(codes) for device, codes in self.latched.items()}
        self.checkpoints.save(seq, record_hash, RecoveryState(self.engine, self.scan, latched))

    def _scan(self, records: Sequence[Mapping[str, Any]]) -> None:
        """Keep :attr:`scan` as a replay would leave it, so a checkpoint in play is exact."""
        for record in records:
            self.scan.record(record, self.engine.current_round)

    def power_on(self) -> dict[str, Any]:
        """Journal ``power_on`` (after :meth:`recover`) and set up the restart gate.

        The record says how the last run ended (``previous``: ``power_off``, ``unclean`` or
        ``none``), which round was interrupted, and the faults still latched (R18). A decision that
        needs no device (a coup dealt through a long outage, a round awaiting a supervisor) is
        journaled at once; otherwise the first device reports decide (see ``_gate_admits``), or
        the window's end (``_restart_deadline``). Raises :class:`JournalError` when the journal
        cannot be written: a table that cannot journal must not start.
        """
        now = self._clock()
        interrupted = Interrupted.of(self.engine.snapshot(), self.engine.game, self.scan, now)
        record: dict[str, Any] = {
            "type": POWER_ON,
            "ts": iso_ts(now),
            "previous": self.scan.previous,
            "interrupted": None
            if interrupted is None
            else {
                "round": interrupted.round,
                "phase": interrupted.phase,
                "spin": interrupted.spin,
                "outage_s": None if interrupted.outage is None else round(interrupted.outage, 3),
                "confirm_within_s": self._restart_window,
            },
            "latched": {d: sorted(codes) for d, codes in sorted(self.latched.items()) if codes},
        }
        stored = self._journal_records([record], raising=True)[0]
        log.info(
            "power_on",
            previous=record["previous"],
            interrupted=interrupted.round if interrupted else None,
        )
        self.gate = RestartGate(
            interrupted,
            devices=[d.device_id for d in self.drivers],
            now=now,
            window=self._restart_window,
            card_outage_limit=self._card_outage_limit,
        )
        answer = self.gate.at_start()
        if answer is not None:
            for event in self._gate_decision(answer):
                self.handle(event)
        return stored

    def power_off(self, reason: str) -> None:
        """Journal ``power_off``: an orderly stop (R21). Never raises (the stop goes on)."""
        snapshot = self.engine.snapshot()
        record = {
            "type": POWER_OFF,
            "ts": iso_ts(self._clock()),
            "reason": reason,
            "round": self.engine.current_round,
            "phase": snapshot.get("phase"),
        }
        self.flush_refusals(force=True)
        self._journal_records([record], raising=False)
        self.checkpoint()
        log.info("power_off", reason=reason, round=self.engine.current_round)

    def _journal_records(
        self, records: list[dict[str, Any]], *, raising: bool
    ) -> list[dict[str, Any]]:
        """Append the controller's own (non-event) records; wake the outbox and listeners."""
        try:
            stored = self.journal.append(records)
        except (JournalError, ValueError) as exc:
            log.error("journal_write_failed", error=str(exc), record_type=records[0]["type"])
            if raising:
                raise
            if isinstance(exc, JournalError):
                self._begin_outage(exc)
            return []
        self._scan(stored)
        self._on_journaled()
        for listener in self.listeners:
            for item in stored:
                listener(item)
        return stored

    def _gate_decision(self, answer: GateAnswer) -> list[TableEvent]:
        """Act on a gate decision: journal ``round_resumed`` now, or return the void to queue."""
        gate = self.gate
        it = gate.interrupted if gate is not None else None
        if it is None or answer.decision is None:
            return []
        if answer.decision == "resume":
            log.info("round_resumed", round=it.round, **answer.detail)
            record = {
                "type": ROUND_RESUMED,
                "ts": iso_ts(self._clock()),
                "round": it.round,
                **answer.detail,
            }
            self._journal_records([record], raising=False)
            return []
        log.warning("round_not_resumed", round=it.round, **answer.detail)
        return [Void(ts=iso_ts(self._clock()), reason=CONTROLLER_RESTART, by="controller")]

    def _gate_admits(self, device_event: dev.DeviceEvent, event: TableEvent) -> bool:
        """Feed the restart gate one device event; queue its void first if it decided one."""
        gate = self.gate
        if gate is None or not gate.active:
            return True
        if gate.pending and self._round_moved_on(gate):
            return True
        spin = getattr(device_event, "spin", None)
        answer = gate.on_event(event, spin if isinstance(spin, int) else None, self._clock())
        for decided in self._gate_decision(answer):
            self._queue.put_nowait((decided, None))
        return answer.forward

    def _round_moved_on(self, gate: RestartGate) -> bool:
        """The interrupted round ended without the gate (a supervisor, a fault): stand down."""
        it = gate.interrupted
        if it is not None and self.engine.current_round != it.round:
            gate.round_ended()
            return True
        return False

    async def _restart_deadline(self) -> None:
        """Void the interrupted round when no device confirmed it within the window."""
        gate = self.gate
        while gate is not None and gate.pending:
            # Polled in short steps: the deadline is on the injected (wall) clock.
            await asyncio.sleep(min(0.25, max(0.0, gate.deadline - self._clock()) + 0.01))
            if not gate.pending or self._round_moved_on(gate):
                return
            answer = gate.expire(self._clock())
            if answer is not None:
                for decided in self._gate_decision(answer):
                    self._queue.put_nowait((decided, None))

    # --- inputs ------------------------------------------------------------------------------

    def submit(self, event: TableEvent) -> asyncio.Future[list[dict[str, Any]]]:
        """Queue an event (a command's); the future gets the journaled records."""
        future: asyncio.Future[list[dict[str, Any]]] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((event, future))
        return future

    async def run(self) -> None:
        """Process events until cancelled; one task per driver feeds the queue."""
        self.publish_state()
        for driver in self.drivers:
            self.publish_device(driver)
        async with asyncio.TaskGroup() as group:
            for driver in self.drivers:
                group.create_task(self._pump_driver(driver), name=f"driver:{driver.device_id}")
            group.create_task(self._process(), name="table:process")
            group.create_task(self._restart_deadline(), name="table:restart")
            timer = BettingTimer(self.betting, self._timer_view, self.submit)
            group.create_task(timer.run(), name="table:betting")
            group.create_task(self._outage_watch(), name="table:outage")
            group.create_task(self._refusal_flush(), name="table:refusals")

    async def _pump_driver(self, driver: Driver) -> None:
        # Each pump is its own task: the binding stays scoped to this device's log lines.
        structlog.contextvars.bind_contextvars(device=driver.device_id)
        async for device_event in driver.events():
            if isinstance(device_event, dev.DeviceAvailable):
                self.device_seen.add(driver.device_id)
            event = to_table_event(device_event)
            if not self._gate_admits(device_event, event):
                continue  # a catch-up milestone the resumed round already has
            if self._is_redundant(event):
                self.publish_device(driver)
                continue
            # Track at enqueue time too: a clear that follows a raise still in the queue is real.
            self._track_faults(event, self._pending_latches)
            self._queue.put_nowait((event, None))

    async def _process(self) -> None:
        while True:
            # Group commit: whatever queued up while the last batch was being fsync'd goes into
            # the next one (one fsync for the events, one for their conclusions). An idle table
            # still commits each event on its own, at once.
            batch = [await self._queue.get()]
            while len(batch) < _MAX_BATCH and not self._queue.empty():
                batch.append(self._queue.get_nowait())
            self._run_batch(batch)

    def _run_batch(
        self, batch: list[tuple[TableEvent, asyncio.Future[list[dict[str, Any]]] | None]]
    ) -> None:
        if (self.outage is not None or self._lost_outputs) and not self._resume():
            # Locked: nothing that cannot be journaled is acted on (DESIGN §3, R14).
            assert self.outage is not None
            for event, future in batch:
                self.outage.drop(event)
                if future is not None and not future.done():
                    future.set_exception(JournalError(f"{JOURNAL_UNAVAILABLE}: table locked"))
            # The counts on status/state (the publisher coalesces the updates).
            self._publish_status(self._status_view())
            self.publish_state()
            return
        last_seq = self.journal.last_seq
        try:
            results = self.handle_batch([event for event, _ in batch])
        except JournalError as exc:
            outage = self._begin_outage(exc)
            written = self.journal.last_seq != last_seq
            for event, future in batch:
                if not written:  # with the events journaled, only their conclusions wait
                    outage.drop(event)
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        except ValueError as exc:
            if len(batch) > 1 and self.journal.last_seq == last_seq:
                # Nothing was written: one event may be the one the journal refuses, so the
                # others must not fail with it. Retry them one at a time.
                for item in batch:
                    self._run_batch([item])
                return
            # Disk full (or a record the journal refuses): the event is not journaled, so it
            # is not acted on; the table goes on with the next event.
            for event, future in batch:
                log.error("journal_write_failed", error=str(exc), event_type=event.type)
                if future is not None and not future.done():
                    future.set_exception(exc)
            return
        for (_, future), records in zip(batch, results, strict=True):
            if future is not None and not future.done():
                future.set_result(records)
        if (
            self.checkpoints is not None
            and self.journal.last_seq - self.checkpoints.seq >= self._checkpoint_every
        ):
            self.checkpoint()

    # --- journal outage ---------------------------------------------------------------------

    def _begin_outage(self, exc: BaseException) -> JournalOutage:
        """The journal refused a write: lock the table and say so everywhere it can be said."""
        if self.outage is not None:
            return self.outage
        outage = JournalOutage(
            started_ts=iso_ts(self._clock()),
            error=_clip(str(exc) or type(exc).__name__, _MAX_REASON),
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
        self._publish_alarm(outage.alarm(self.table_id))
        self._publish_status(self._status_view())
        self.publish_state()
        return outage

    def _resume(self) -> bool:
        """Try to end the outage: journal what it owes; ``True`` once the journal took it all.

        In order: the conclusions the engine reached but could not journal, then the void of the
        round still in play (``journal_outage``) and the fault raised and cleared with the
        outage's start and end, then the device faults that arrived meanwhile (R18).
        """
        if self._lost_outputs:
            try:
                self._journal_records(self._lost_outputs, raising=True)
            except JournalError as exc:
                self._begin_outage(exc)
                return False
            except ValueError:  # never journalable (logged): only a full replay re-derives them
                self._lost_outputs = []
                return self._resume()
            self._lost_outputs = []
            self._conclusions_lost = False
        outage = self.outage
        if outage is None:
            return True
        now_ts = iso_ts(self._clock())
        closing = outage.closing_events(now_ts, void_round=self.engine.current_round is not None)
        for event in outage.kept:
            self._track_faults(event, self._pending_latches)
        # The void and its outcome first, then the fault's records: the journal reads in the
        # order it happened (one batch would put the outcome after all three events). Either
        # step may meet a full disk again: with nothing of it written the outage goes on (after
        # the void alone the round has ended, so the next attempt journals the rest).
        voids = [e for e in closing if isinstance(e, Void)]
        rest = [*(e for e in closing if not isinstance(e, Void)), *outage.kept]
        for events in ([voids] if voids else []) + [rest]:
            last_seq = self.journal.last_seq
            try:
                self.handle_batch(events)
            except (JournalError, ValueError) as exc:
                if self.journal.last_seq == last_seq:
                    return False
                log.error("journal_outage_conclusions_lost", error=str(exc))
        self.outage = None
        log.warning(
            "journal_outage_ended",
            since=outage.started_ts,
            until=now_ts,
            events_not_journaled=outage.not_journaled,
            dropped=dict(outage.dropped),
            voided=outage.round if closing[0].type == "void" else None,
        )
        self._publish_alarm(outage.alarm(self.table_id, cleared_ts=now_ts))
        self._publish_status(self._status_view())
        self.publish_state()
        return True

    async def _outage_watch(self, interval: float = 0.5) -> None:
        """Probe the journal while it is out, so the outage ends with no device event to wait for.

        Runs between batches (``_resume`` has no await), so it never interleaves with one.
        """
        while True:
            await asyncio.sleep(interval)
            if (self.outage is not None or self._lost_outputs) and self._queue.empty():
                self._resume()

    def _status_view(self) -> dict[str, Any]:
        """The extra fields of the retained ``status``: locked by a journal outage or not."""
        outage = self.outage
        if outage is None:
            return {"locked": False, "faults": []}
        return {"locked": True, "faults": [JOURNAL_UNAVAILABLE], "journal": outage.view()}

    def _timer_view(self) -> Mapping[str, Any]:
        """What the betting timer sees: the engine's snapshot, and the lock of an outage."""
        snapshot = self.engine.snapshot()
        if self.outage is None:
            return snapshot
        return {**snapshot, "locked": True}

    # --- the step ----------------------------------------------------------------------------

    def handle(self, event: TableEvent) -> list[dict[str, Any]]:
        """Journal ``event``, apply the engine, journal its conclusions. Returns the records."""
        return self.handle_batch([event])[0]

    def handle_batch(self, events: Sequence[TableEvent]) -> list[list[dict[str, Any]]]:
        """:meth:`handle` for several events with two commits (two fsyncs) in all.

        The events are journaled together first, and only then applied, in order; their
        conclusions are journaled together after that. So nothing is acted on before it is
        durable, and each conclusion follows its event in the journal (after the rest of the
        batch's events). Returns each event's records: its own, then its conclusions.
        """
        if len(events) > 1 and any(isinstance(e, Card) for e in events[1:]):
            # Whether a card goes face down depends on every event before it, and it must be
            # known before the card is journaled: cut the batch before each card.
            cuts = [i for i, e in enumerate(events) if isinstance(e, Card) and i > 0]
            bounds = zip([0, *cuts], [*cuts, len(events)], strict=True)
            return [r for start, end in bounds for r in self.handle_batch(events[start:end])]
        events = [e if e.ts is not None else replace(e, ts=iso_ts(self._clock())) for e in events]
        if isinstance(events[0], Card) and self.engine.conceals(events[0]):
            events[0] = replace(events[0], face_down=True)
        stored_events = self.journal.append([_event_record(e) for e in events])
        decided: list[list[EngineOutput]] = []
        for event, record in zip(events, stored_events, strict=True):
            self._track_faults(event)
            decided.append(self.engine.apply(replace(event, seq=record["seq"])))
            self._scan([record])
        out_records = [
            output_record(o, event.ts)
            for event, outputs in zip(events, decided, strict=True)
            for o in outputs
        ]
        try:
            stored_outputs = self.journal.append(out_records) if out_records else []
        except BaseException as exc:
            # The engine decided what the journal lacks: no checkpoint may cover these events
            # until the conclusions are journaled (when the journal writes again), or a full
            # replay re-derives them (the crash window of recover()).
            self._conclusions_lost = True
            if isinstance(exc, JournalError):
                self._lost_outputs.extend(out_records)
            raise
        self._scan(stored_outputs)
        self._on_journaled()
        for listener in self.listeners:
            for record in stored_events + stored_outputs:
                listener(record)
        results: list[list[dict[str, Any]]] = []
        taken = 0
        for record, outputs in zip(stored_events, decided, strict=True):
            results.append([record, *stored_outputs[taken : taken + len(outputs)]])
            taken += len(outputs)
            for output in outputs:
                if isinstance(output, Outcome):
                    log.info(
                        "round_outcome",
                        round=output.round,
                        status=output.status,
                        reason=output.reason,
                        result=output.result,
                    )
                elif isinstance(output, Verdict):
                    log.warning(
                        "verdict", code=output.code, round=output.round, message=output.message
                    )
        # Latest-value topics: once per batch is enough (the publisher coalesces them anyway).
        self.publish_state()
        devices = {event.device for event in events if event.device is not None}
        for driver in self.drivers:
            if driver.device_id in devices:
                self.publish_device(driver)
        return results

    def _is_redundant(self, event: TableEvent) -> bool:
        """A fault already latched, or a clear for a fault that is not: nothing to journal."""
        if event.device is None:
            return False
        latched = self._pending_latches.setdefault(event.device, set())
        if isinstance(event, Fault):
            return event.code in latched
        if isinstance(event, FaultCleared):
            return event.code not in latched
        return False

    def _track_faults(self, event: TableEvent, *views: dict[str, set[str]]) -> None:
        """Update latched faults: the journaled view, or the given ones (the queue's view)."""
        if event.device is None:
            return
        for view in views or (self.latched, self._pending_latches):
            latched = view.setdefault(event.device, set())
            if isinstance(event, Fault):
                latched.add(event.code)
            elif isinstance(event, ShoeRemoved):
                # Latched by the card engines until the shoe is back (a fault_cleared).
                latched.add(SHOE_REMOVED)
            elif isinstance(event, FaultCleared):
                latched.discard(event.code)

    # --- retained views ----------------------------------------------------------------------

    def publish_state(self) -> None:
        snapshot = dict(self.engine.snapshot())
        self._publish_retained(
            "state",
            {
                "schema": 1,
                "table": self.table_id,
                "game": self.engine.game,
                "ts": iso_ts(self._clock()),
                "seq": self.journal.last_seq,
                **snapshot,
                "devices": {
                    device: {"faults": sorted(codes)} for device, codes in self.latched.items()
                },
                "locked": self.outage is not None or bool(snapshot.get("faults")),
                "journal": {"available": True}
                if self.outage is None
                else {"available": False, **self.outage.view()},
            },
        )

    def publish_device(self, driver: Driver) -> None:
        self._publish_retained(
            f"devices/{driver.device_id}",
            {
                "schema": 1,
                "table": self.table_id,
                "device": driver.device_id,
                "available": driver.available,
                "faults": sorted(self.latched.get(driver.device_id, ())),
                "counters": dict(driver.counters),
                "ts": iso_ts(self._clock()),
            },
        )

    # --- commands ----------------------------------------------------------------------------

    async def command(self, verb: str, payload: bytes) -> dict[str, Any]:
        """Handle ``cmd/{verb}``; the reply carries the request's ``id`` for correlation.

        Verbs: ``void`` (``reason``, optional ``by``), ``event`` (a normalized event under
        ``event``, journaled as manual: a scanner failed and the dealer keys it in), ``clear_fault``
        (``code``, ``device``), ``status``. All but ``status`` change a round or a fault and need,
        with an :attr:`authority`, a signature by a role ``[security] require`` allows
        (:mod:`tablectl.controller.mqtt.security`); without one they are refused
        (``commands_disabled``) unless :attr:`insecure_commands` (labs).

        An accepted command is journaled as a ``command`` record with who sent it before anything is
        acted on (R19: logical access is logged with who and why). Refusals are counted and
        journaled once per window (:mod:`tablectl.controller.mqtt.refusals`), so a flood of them
        cannot bloat the journal. Every reply says ``ok``; a refusal also has a stable ``code`` and
        a one-line ``error``. Never raises: whatever arrives on ``cmd/+`` is answered.
        """
        try:
            return await self._command(verb, payload)
        except Exception as exc:  # a bug here must cost one reply, never the table
            log.exception("command_failed", verb=_clip(verb))
            return _reply(None, error=f"internal error: {type(exc).__name__}", code="internal")

    async def _command(self, verb: str, payload: bytes) -> dict[str, Any]:
        request, problem = _decode_request(payload)
        corr = _safe_id(request.get("id")) if request is not None else None
        if verb == "status":
            return _reply(corr, ok=True, state=dict(self.engine.snapshot()), **self._status_view())
        if request is None:
            code = "payload_too_large" if len(payload) > MAX_COMMAND_BYTES else "bad_request"
            return self._refuse(verb, None, CommandVerdict(False, problem), code, size=len(payload))
        if self.outage is not None:
            # Nothing unjournaled is acted on, and the command record cannot be journaled.
            self.outage.commands_refused += 1
            verdict = CommandVerdict(False, "journal unavailable: the table is locked")
            return self._refuse(verb, request, verdict, JOURNAL_UNAVAILABLE)
        if verb not in _COMMAND_VERBS:
            error = f"unknown command {_clip(verb)!r} (known: {', '.join(_COMMAND_VERBS)})"
            return self._refuse(verb, request, CommandVerdict(False, error), "unknown_command")
        bad = _bad_field(request)
        if bad is not None:
            code, why = bad
            return self._refuse(verb, request, CommandVerdict(False, why), code)
        verdict, code = self._authorise(verb, request)
        if not verdict.accepted:
            return self._refuse(verb, request, verdict, code)
        try:
            event = self._command_event(verb, request)
        except EventFormatError as exc:
            refused = replace(verdict, accepted=False, reason=str(exc))
            return self._refuse(verb, request, refused, "bad_request")
        if verdict.verified and isinstance(event, Void):
            # The journaled decision names the person whose signature was verified.
            event = replace(event, by=verdict.by)
        # The verdict is durable before the event is acted on; a journal that cannot take it
        # cannot take the event either, so nothing happens unrecorded.
        record = self._journal_command(verb, request, verdict)
        if record is None:
            error = "not journaled: the journal refused the command record"
            return _reply(corr, error=error, code=JOURNAL_UNAVAILABLE)
        try:
            records = await asyncio.wait_for(self.submit(event), timeout=10)
        except (JournalError, ValueError, TimeoutError) as exc:
            error = f"not journaled: {exc or type(exc).__name__}"
            return _reply(corr, error=error, code="not_journaled")
        outputs = [r for r in records if r.get("type") in _OUTPUT_TYPES]
        return _reply(
            corr, ok=True, seq=records[0]["seq"], command_seq=record["seq"], outputs=outputs
        )

    def _authorise(self, verb: str, request: Mapping[str, Any]) -> tuple[CommandVerdict, str]:
        """The verdict on a command that changes a round or a fault, and a refusal's code."""
        by = request.get("by")
        claimed = _clip(by) if isinstance(by, str) else None
        authority = self.authority
        if authority is None:
            if self.insecure_commands:
                return CommandVerdict(True, by=claimed), ""
            return CommandVerdict(
                False,
                "commands are disabled: this table has no [security] roles "
                "(insecure_commands = true for a lab)",
                by=claimed,
            ), COMMANDS_DISABLED
        now = self._clock()
        if not authority.seeded and action_for(verb, request) is not None:
            # After a restart: the nonces accepted just before it must stay spent.
            since = max(0, self.journal.last_seq - _NONCE_SEED_RECORDS)
            authority.seed(self.journal.records(since), now)
        return authority.check(verb, request, now), "unauthorised"

    def _refuse(
        self,
        verb: str,
        request: Mapping[str, Any] | None,
        verdict: CommandVerdict,
        code: str,
        *,
        size: int | None = None,
    ) -> dict[str, Any]:
        """Count a refusal (journaled once per window) and build its reply."""
        now = self._clock()
        details = self._command_fields(verb, request, verdict)
        del details["ts"], details["accepted"]
        if size is not None:
            details["bytes"] = size
        self.refusals.add(now, iso_ts(now), code, details)
        log.info("command_refused", verb=details["verb"], code=code, reason=details["reason"])
        if self.refusals.due(now):
            self.flush_refusals()
        corr = _safe_id(request.get("id")) if request is not None else None
        # A malformed request says what is wrong with it; a well-formed one, why it was refused.
        error = verdict.reason if code in _MALFORMED else f"refused: {verdict.reason}"
        return _reply(corr, error=error or "refused", code=code)

    def flush_refusals(self, *, force: bool = False) -> None:
        """Journal the current window's refusals as one record (when due, or ``force``)."""
        now = self._clock()
        if self.outage is not None or not (force or self.refusals.due(now)):
            return
        record = self.refusals.take(iso_ts(now))
        if record is not None and not self._journal_records([record], raising=False):
            self.refusals.put_back(record, now)

    async def _refusal_flush(self) -> None:
        """Close each refusal window when it has run its time, even if no command follows."""
        while True:
            await asyncio.sleep(min(1.0, self.refusals.window / 2))
            if self.refusals.pending:
                self.flush_refusals()

    def _command_fields(
        self, verb: str, request: Mapping[str, Any] | None, verdict: CommandVerdict
    ) -> dict[str, Any]:
        """What the journal says about a command: verb, id, verdict and who; never a secret."""
        fields: dict[str, Any] = {
            "ts": iso_ts(self._clock()),
            "verb": _clip(verb),
            "id": _safe_id(request.get("id")) if request is not None else None,
            "accepted": verdict.accepted,
            "reason": _clip(verdict.reason, _MAX_REASON) if verdict.reason else None,
            "role": verdict.role,
            "by": _clip(verdict.by) if verdict.by is not None else None,
            "verified": verdict.verified,
        }
        if verdict.nonce is not None:
            fields["nonce"] = verdict.nonce
        body = request.get("event") if request is not None else None
        if verb == "event" and isinstance(body, Mapping) and isinstance(body.get("type"), str):
            fields["event_type"] = _clip(body["type"])
        return fields

    def _journal_command(
        self, verb: str, request: Mapping[str, Any], verdict: CommandVerdict
    ) -> dict[str, Any] | None:
        """Journal an accepted command's ``command`` record before it acts.

        Returns the stored record, or ``None`` when the journal refused it (logged: the reply
        says so, and the command is then not acted on).
        """
        record = {"type": "command", **self._command_fields(verb, request, verdict)}
        stored = self._journal_records([record], raising=False)
        if not stored:
            log.error("command_not_journaled", verb=record["verb"])
            return None
        log.info(
            "command",
            verb=record["verb"],
            accepted=verdict.accepted,
            role=verdict.role,
            by=record["by"],
        )
        return stored[0]

    def _command_event(self, verb: str, request: Mapping[str, Any]) -> TableEvent:
        ts = iso_ts(self._clock())
        if verb == "void":
            reason = request.get("reason")
            by = request.get("by")
            if not isinstance(reason, str) or not reason.strip():
                raise EventFormatError("void needs a non-empty string 'reason'")
            if by is not None and not isinstance(by, str):
                raise EventFormatError("'by' must be a string")
            return Void(ts=ts, reason=reason, by=by, manual=True)
        if verb == "event":
            body = request.get("event")
            if not isinstance(body, dict):
                raise EventFormatError("event needs an 'event' object (a normalized event)")
            event = parse_event({k: v for k, v in body.items() if k not in ("seq", "manual")})
            return replace(event, ts=event.ts or ts, manual=True)
        if verb == "clear_fault":
            code = request.get("code")
            device = request.get("device")
            if not isinstance(code, str) or not isinstance(device, str):
                raise EventFormatError("clear_fault needs string 'code' and 'device'")
            if code not in self.latched.get(device, set()):
                raise EventFormatError(f"fault {code!r} is not latched on device {device!r}")
            return FaultCleared(ts=ts, device=device, code=code, manual=True)
        raise EventFormatError(f"unknown command {verb!r} (known: {', '.join(_COMMAND_VERBS)})")


_JOURNAL_FIELDS = frozenset({"schema", "table", "seq", "hash", "prev_hash"})

_MAX_BATCH = 256
"""Events per group commit at most (bounds how long one batch holds the event loop)."""


def _output_key(record: Mapping[str, Any]) -> str:
    """An output record's content without what the journal adds, for matching in recovery."""
    return canonical_json({k: v for k, v in record.items() if k not in _JOURNAL_FIELDS})


_COMMAND_VERBS = ("clear_fault", "event", "status", "void")

COMMANDS_DISABLED: Final = "commands_disabled"
"""The refusal code of a round- or fault-changing command on a table without ``[security]``
roles (safe by default, DESIGN §7)."""

FIELD_TOO_LONG: Final = "field_too_long"
_MALFORMED: Final = frozenset({"payload_too_large", "bad_request", "unknown_command"})

MAX_FIELD_CHARS: Final = 256
"""Longest string a command field may hold (a void reason is a code such as
``foreign_object``; a card is two characters): a longer one is refused, not journaled."""
_FIELD_LIMITS: Final[Mapping[str, int]] = {"reason": 64, "by": 64, "id": 128}
"""Tighter limits for the fields every command may carry."""

MAX_COMMAND_BYTES = 64 * 1024
"""Largest command payload decoded; a manual event is a few hundred bytes, so anything near
this is a mistake or an attack, refused before it costs a parse (or a deep recursion)."""

_MAX_TEXT = 64
_MAX_REASON = 300
_NONCE_SEED_RECORDS = 20_000
"""Journal records scanned for recently used nonces after a restart (far more than a table
journals within a freshness window)."""


def _bad_field(request: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(code, why)`` for a string field of a decoded request over its cap (or not UTF-8).

    Checked before the request's event is parsed or anything is journaled: a 2,000-character
    void reason used to be journaled (and published) whole.
    """
    stack: list[tuple[str, object]] = [("", request)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            limit = _FIELD_LIMITS.get(path, MAX_FIELD_CHARS)
            if len(value) > limit:
                why = f"field {_clip(path)!r} has {len(value)} characters (at most {limit})"
                return FIELD_TOO_LONG, why
            if not _is_utf8(value):
                return "bad_request", f"field {_clip(path)!r} is not UTF-8 text (a lone surrogate)"
        elif isinstance(value, Mapping):
            if any(isinstance(key, str) and len(key) > MAX_FIELD_CHARS for key in value):
                where = f"field {_clip(path)!r}" if path else "the request"
                return FIELD_TOO_LONG, f"{where} has a key over {MAX_FIELD_CHARS} characters"
            stack.extend((f"{path}.{key}" if path else str(key), v) for key, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
    return None


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _clip(text: str, limit: int = _MAX_TEXT) -> str:
    """Untrusted text made safe to journal and publish: bounded, valid UTF-8 (no surrogates)."""
    clipped = text if len(text) <= limit else text[: limit - 1] + "…"
    return clipped.encode("utf-8", "backslashreplace").decode("utf-8")


def _safe_id(value: object) -> str | int | None:
    """A correlation id that survives canonical JSON, or ``None`` for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    if isinstance(value, str):
        return _clip(value, 128)
    return None


def _decode_request(payload: bytes) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """``(request, None)`` or ``(None, why not)`` for a command payload; never raises."""
    if len(payload) > MAX_COMMAND_BYTES:
        return None, f"payload too large: {len(payload)} bytes (at most {MAX_COMMAND_BYTES})"
    try:
        request = json.loads(payload) if payload else {}
    except (ValueError, UnicodeDecodeError) as exc:
        return None, f"payload is not JSON: {_clip(str(exc), _MAX_REASON)}"
    except RecursionError:
        return None, "payload is not JSON: nested too deeply"
    if not isinstance(request, dict):
        return None, "payload must be a JSON object"
    return request, None


def _reply(
    corr: object, *, ok: bool = False, error: str | None = None, **extra: Any
) -> dict[str, Any]:
    reply: dict[str, Any] = {"schema": 1, "id": corr, "ok": ok and error is None}
    if error is not None:
        reply["error"] = _clip(error, _MAX_REASON)
    reply.update(extra)
    return reply
