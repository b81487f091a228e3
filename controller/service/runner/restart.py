"""A table's start and stop: replay, checkpoints, the power records and the restart gate.

Start: replay the journal (from the last valid checkpoint) through a fresh engine, journal any
conclusion a crash left out, journal ``power_on``, and let
:class:`tablectl.controller.service.recovery.RestartGate` decide whether a round in play resumes or
is voided; stop: ``power_off`` (R12, R21). The rules are pure, in
:mod:`tablectl.controller.service.recovery`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import pickle
from collections.abc import Sequence
from typing import Any

import structlog

from tablectl.controller.core.errors import EventFormatError, JournalError
from tablectl.controller.core.events import EVENT_TYPES, TableEvent, Void, parse_event
from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import Engine
from tablectl.controller.journal import Journal, JournalRecord
from tablectl.controller.service.checkpoint import (
    CheckpointIgnoredError,
    Checkpoints,
    RecoveryState,
    state_mismatch,
)
from tablectl.controller.service.clock import ClockWatch
from tablectl.controller.service.recovery import (
    CONTROLLER_RESTART,
    POWER_OFF,
    POWER_ON,
    ROUND_RESUMED,
    GateAnswer,
    Interrupted,
    JournalScan,
    RestartGate,
)
from tablectl.controller.service.runner.commands import Refusals
from tablectl.controller.service.runner.commit import Committer
from tablectl.controller.service.runner.hold import (
    ENGINE_DEVICE,
    ENGINE_ERROR,
    EngineFailedError,
    apply_held,
    engine_fault,
    is_held,
)
from tablectl.controller.service.runner.records import (
    JOURNAL_FIELDS,
    OUTPUT_TYPES,
    event_record,
    output_key,
    output_record,
)
from tablectl.controller.service.runner.state import EventQueue, TableState
from tablectl.controller.service.runner.views import TableOutputs, TableViews
from tablectl.drivers import events as dev
from tablectl.drivers.clock import Clock

log = structlog.get_logger("tablectl.runner")


class Restart:
    """Recovery from the journal, checkpoints, ``power_on`` / ``power_off`` and the gate.

    Args:
        queue: where the gate's decision in play goes (behind what is queued).
        views: told when the clock was checked (retention, ``state``).
        outputs: handed what recovery journals that a crash left out.
        checkpoints: where recovery starts from and the state is saved (``None``: never).
        restart_window: seconds the devices have to confirm an interrupted round.
        card_outage_limit: the longest outage a card round resumes after.
        clock_watch: checks the wall clock against the journal before ``power_on``.
    """

    def __init__(
        self,
        *,
        state: TableState,
        journal: Journal,
        committer: Committer,
        queue: EventQueue,
        views: TableViews,
        refusals: Refusals,
        devices: Sequence[str],
        outputs: TableOutputs,
        clock: Clock,
        checkpoints: Checkpoints | None,
        checkpoint_every: int,
        restart_window: float,
        card_outage_limit: float,
        clock_watch: ClockWatch | None = None,
    ) -> None:
        self._state = state
        self._committer = committer
        self._queue = queue
        self._views = views
        self._refusals = refusals
        self._clock_watch = clock_watch
        self._journal = journal
        self._latches = state.latches
        self._devices = list(devices)
        self._outputs = outputs
        self._clock = clock
        self.checkpoints = checkpoints
        """Where :meth:`recover` starts from and the runner saves its state (``None``: never)."""
        self._checkpoint_every = checkpoint_every
        self._restart_window = restart_window
        self._card_outage_limit = card_outage_limit
        self.gate: RestartGate | None = None
        """Set by :meth:`power_on`: whether an interrupted round resumes."""
        self._holds: dict[int, BaseException] = {}
        """Records a full replay holds the table at (the engine raised there in a pass)."""
        self._replaying = 0
        """The ``seq`` of the event being replayed (where an engine error is placed)."""

    # --- recovery --------------------------------------------------------------------------

    def recover(self) -> int:
        """Rebuild engine state from the journal; returns the number of events replayed.

        Starts from a valid checkpoint and saves new ones as it goes. Conclusions are matched to the
        journal by content, in order (a batch stores its events first, conclusions after); what the
        engine concludes again but the journal lacks after the last match is journaled now.

        A checkpoint that cannot be used (missing state, raises on replay or on :meth:`power_on`'s
        read) is discarded (``checkpoint_ignored``, file deleted) and the journal replayed in full:
        a table never dies on a checkpoint. An error of the journal itself is raised.
        """
        if self._clock_watch is not None:
            # Nothing is pruned before power_on has checked the clock: a rotation that recovery
            # or the start's records cause would judge ages by a clock that may have stepped
            # (power_on's clock_changed sets the hold as the check found it).
            self._journal.retention_hold = "the clock is not checked yet (start)"
        fresh = self._state.engine
        # Our own bytes, never read from outside the process: a full replay's fresh start.
        pristine = pickle.dumps(fresh, protocol=pickle.HIGHEST_PROTOCOL)
        loaded = self.checkpoints.load(self._journal) if self.checkpoints is not None else None
        pending: list[tuple[str, dict[str, Any]]] = []
        discarded = False
        try:
            after = 0 if loaded is None else self._restore(*loaded, fresh=fresh)
            replayed = self._replay_after(after, pending)
            if after:
                self._probe_restored()
        except JournalError:
            raise
        except Exception as exc:
            if (loaded is None or self.checkpoints is None) and not isinstance(
                exc, EngineFailedError
            ):
                raise  # no checkpoint in use: a full replay's own failure
            if loaded is not None and self.checkpoints is not None:
                why = str(exc) if isinstance(exc, CheckpointIgnoredError) else repr(exc)
                self.checkpoints.discard(f"unusable: {why}")
            discarded = True
            pending = []
            replayed = self._replay_in_full(pristine, pending)
        if pending:
            # The crash came after the events were journaled and before their outcomes were.
            log.warning("recovering_missing_outputs", count=len(pending))
            committed = self._journal.commit([out for _, out in pending])
            self._state.saw(committed.records, self._state.engine.current_round)
            self._outputs.committed(committed)
        if replayed or discarded:
            self.checkpoint()
        return replayed

    def _replay_in_full(self, pristine: bytes, pending: list[tuple[str, dict[str, Any]]]) -> int:
        """Replay the whole journal through a fresh engine. Where the engine raises on a record
        that play did not hold (an upgrade's engine takes an old event otherwise), the table is
        held from that record on, as play would have held it (:mod:`.hold`): the replay starts
        again with the hold there, and the ``engine_error`` fault is journaled after it, once."""
        holds: dict[int, BaseException] = {}
        while True:
            self._state.engine = pickle.loads(pristine)  # noqa: S301 (see recover)
            self._state.scan = JournalScan()
            self._latches.restore({device: set() for device in self._latches.copy()})
            pending.clear()
            self._holds = holds
            try:
                replayed = self._replay_after(0, pending)
            except EngineFailedError as exc:
                seq = self._replaying
                if seq in holds:
                    raise
                holds[seq] = exc.error
                log.error(
                    "replay_engine_error",
                    seq=seq,
                    error_type=type(exc.error).__name__,
                    error=str(exc.error),
                    hint="the table is held from this record on: a supervisor voids the round "
                    "and clears engine_error",
                )
                continue
            finally:
                self._holds = {}
            break
        if holds and not is_held(self._latches):
            return replayed  # a supervisor already cleared it (journaled): nothing owed
        if holds and not self._hold_journaled(min(holds)):
            seq, error = min(holds.items())
            fault = engine_fault(error, f"seq {seq}", format_ts(self._clock.now()))
            self._committer.journal_records([event_record(fault)], raising=True)
        return replayed

    def _hold_journaled(self, seq: int) -> bool:
        """Whether an ``engine_error`` fault was journaled after record ``seq`` already."""
        found = self._journal.last_record_of_type("fault")
        return (
            found is not None
            and found.seq > seq
            and found.get("device") == ENGINE_DEVICE
            and found.get("code") == ENGINE_ERROR
        )

    def _replay_after(self, after: int, pending: list[tuple[str, dict[str, Any]]]) -> int:
        """Replay the journal's records after ``after`` into the table's engine; the number of
        events. A long replay checkpoints as it goes (a start killed now resumes from there)."""
        replayed = 0
        unsaved = 0
        for record in self._journal.records(after):
            if self._replay(record, pending):
                replayed += 1
                unsaved += 1
            if unsaved >= self._checkpoint_every and not pending:
                self._save_checkpoint(record.seq, record.hash)
                unsaved = 0
        return replayed

    def _replay(self, record: JournalRecord, pending: list[tuple[str, dict[str, Any]]]) -> bool:
        """One journal record of :meth:`recover`; ``True`` if it was an event (applied)."""
        engine = self._state.engine
        scan = self._state.scan
        kind = record.type
        if kind not in EVENT_TYPES:
            scan.record(record, engine.current_round)
        if kind in OUTPUT_TYPES:
            key = output_key(record.fields)
            for index, (expected, _) in enumerate(pending):
                if expected == key:
                    # Anything before it was lost to a failed write long ago (the table went
                    # on); only the tail after the last match is the crash window.
                    del pending[: index + 1]
                    break
            return False
        if kind not in EVENT_TYPES:
            return False
        fields = {k: v for k, v in record.fields.items() if k not in JOURNAL_FIELDS}
        try:
            event = parse_event(fields)
        except EventFormatError as exc:  # a journal we wrote ourselves: should never happen
            log.error("journal_event_unreadable", seq=record.seq, error=str(exc))
            return False
        self._replaying = record.seq
        error = self._holds.get(record.seq)
        if error is not None:  # the engine raised here in an earlier pass: held from here
            self._latches.track(engine_fault(error, event.type, event.ts))
        self._latches.track(event)
        # As in play: held by an engine_error, only a void reaches the engine (runner.hold).
        for output in apply_held(engine, self._latches, event):
            out = output_record(output, event.ts)
            pending.append((output_key(out), out))
        scan.record(record, engine.current_round)
        return True

    def _restore(self, seq: int, state: RecoveryState, *, fresh: Engine) -> int:
        """Restore a loaded checkpoint's state; the ``seq`` to replay after. Raises when the
        state is not the shape of the current code's (:meth:`recover` then discards it)."""
        # Same code, table, game and rules: the fingerprint says so; and the state's shape, in
        # case the fingerprint is wrong (issue 25: an empty digest made every version "same").
        mismatch = state_mismatch(state, fresh)
        if mismatch is not None:
            raise CheckpointIgnoredError(mismatch)
        self._state.engine = state.engine
        self._state.scan = state.scan
        self._latches.restore(state.latched)
        return seq

    def _probe_restored(self) -> None:
        """Read the restored state as :meth:`power_on` and the runner will, so that a state
        which loads but cannot be used fails here, where :meth:`recover` can still replay in
        full, and not in ``power_on``."""
        engine, scan = self._state.engine, self._state.scan
        snapshot = engine.snapshot()
        Interrupted.of(snapshot, engine.game, scan, self._clock.now())
        _ = (engine.current_round, scan.previous, self._latches.journaled)

    # --- checkpoints -----------------------------------------------------------------------

    def checkpoint(self) -> None:
        """Save the state as of the journal's newest record (all its conclusions journaled)."""
        if self.checkpoints is not None and self._journal.last_seq > self.checkpoints.seq:
            self._save_checkpoint(self._journal.last_seq, self._journal.last_hash)

    async def checkpoint_if_due(self) -> None:
        """:meth:`checkpoint` once ``checkpoint_every`` records came after the last one, its
        file written on the journal's thread (two fsyncs that must not hold the event loop);
        the state is taken here, between batches, where it matches the journal."""
        checkpoints = self.checkpoints
        if checkpoints is None or self._journal.last_seq - checkpoints.seq < self._checkpoint_every:
            return
        seq, record_hash = self._journal.last_seq, self._journal.last_hash
        state = RecoveryState(self._state.engine, self._state.scan, self._latches.copy())
        payload = checkpoints.encode(seq, state)
        if payload is None:
            return
        write = self._journal.in_writer(
            functools.partial(checkpoints.write, seq, record_hash, payload)
        )
        try:
            await asyncio.wrap_future(write)
        except asyncio.CancelledError:
            # The table stops: power_off's own checkpoint must not write the same file while
            # this one still does (on the journal's thread).
            with contextlib.suppress(BaseException):
                write.result()
            raise

    def _save_checkpoint(self, seq: int, record_hash: str) -> None:
        assert self.checkpoints is not None
        state = RecoveryState(self._state.engine, self._state.scan, self._latches.copy())
        self.checkpoints.save(seq, record_hash, state)

    # --- power records ---------------------------------------------------------------------

    def power_on(self) -> JournalRecord:
        """Journal ``power_on`` (after :meth:`recover`) and set up the restart gate.

        The record says how the last run ended (``previous``: ``power_off``, ``unclean`` or
        ``none``), which round was interrupted, and the faults still latched (R18). A decision that
        needs no device (a coup dealt through a long outage, a round awaiting a supervisor) is
        journaled at once; otherwise the first device reports decide (see :meth:`admits`), or
        the window's end (:meth:`deadline`). Raises :class:`JournalError` when the journal
        cannot be written: a table that cannot journal must not start.
        """
        watch = self._clock_watch
        if watch is not None:
            # Before anything is stamped with it: has the clock stepped since the last run?
            step = watch.at_start(watch.restore(self._journal))
            if step is not None:
                self._committer.journal_records([step], raising=True)
        now = self._clock.now()
        engine, scan = self._state.engine, self._state.scan
        interrupted = Interrupted.of(engine.snapshot(), engine.game, scan, now)
        latched = self._latches.journaled
        record: dict[str, Any] = {
            "type": POWER_ON,
            "ts": format_ts(now),
            "previous": scan.previous,
            "interrupted": None
            if interrupted is None
            else {
                "round": interrupted.round,
                "phase": interrupted.phase,
                "spin": interrupted.spin,
                "outage_s": None if interrupted.outage is None else round(interrupted.outage, 3),
                "confirm_within_s": self._restart_window,
            },
            "latched": {d: sorted(codes) for d, codes in sorted(latched.items()) if codes},
        }
        if watch is not None:
            record["clock"] = watch.reading()
        stored = self._committer.journal_records([record], raising=True)[0]
        self._views.clock_changed()
        # Retention once the clock is checked (never when the journal opens): a suspect clock
        # holds it (clock_changed set the hold).
        self._journal.prune()
        log.info(
            "power_on",
            previous=record["previous"],
            interrupted=interrupted.round if interrupted else None,
        )
        self.gate = RestartGate(
            interrupted,
            devices=self._devices,
            now=now,
            window=self._restart_window,
            card_outage_limit=self._card_outage_limit,
        )
        answer = self.gate.at_start()
        if answer is not None:
            for event in self._gate_decision(answer):
                self._committer.handle(event)
        return stored

    def power_off(self, reason: str) -> None:
        """Journal ``power_off``: an orderly stop (R21). Never raises (the stop goes on)."""
        engine = self._state.engine
        snapshot = engine.snapshot()
        record = {
            "type": POWER_OFF,
            "ts": format_ts(self._clock.now()),
            "reason": reason,
            "round": engine.current_round,
            "phase": snapshot.get("phase"),
        }
        if self._clock_watch is not None:
            # A step since the watch last looked (once a second) is journaled first: this
            # reading is the next start's reference and must not vouch for a stepped clock.
            step = self._clock_watch.check()
            if step is not None:
                self._committer.journal_records([step], raising=False)
            record["clock"] = self._clock_watch.reading()
        self._refusals.flush(force=True)
        self._committer.journal_records([record], raising=False)
        self.checkpoint()
        log.info("power_off", reason=reason, round=self._state.engine.current_round)

    # --- the restart gate ------------------------------------------------------------------

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
                "ts": format_ts(self._clock.now()),
                "round": it.round,
                **answer.detail,
            }
            self._committer.journal_records([record], raising=False)
            return []
        log.warning("round_not_resumed", round=it.round, **answer.detail)
        return [Void(ts=format_ts(self._clock.now()), reason=CONTROLLER_RESTART, by="controller")]

    def admits(self, device_event: dev.DeviceEvent, event: TableEvent) -> bool:
        """Feed the restart gate one device event; queue its void first if it decided one."""
        gate = self.gate
        if gate is None or not gate.active:
            return True
        if gate.pending and self._round_moved_on(gate):
            return True
        spin = getattr(device_event, "spin", None)
        answer = gate.on_event(event, spin if isinstance(spin, int) else None, self._clock.now())
        for decided in self._gate_decision(answer):
            self._queue.enqueue(decided)
        return answer.forward

    def _round_moved_on(self, gate: RestartGate) -> bool:
        """The interrupted round ended without the gate (a supervisor, a fault): stand down."""
        it = gate.interrupted
        if it is not None and self._state.engine.current_round != it.round:
            gate.round_ended()
            return True
        return False

    def next_look(self) -> float | None:
        """Seconds until :meth:`look` (the table's scheduler); ``None`` once nothing waits for
        the gate. Short steps: the deadline is on the injected (wall) clock."""
        gate = self.gate
        if gate is None or not gate.pending:
            return None
        return min(0.25, max(0.0, gate.deadline - self._clock.now()) + 0.01)

    async def look(self) -> float | None:
        """Void the interrupted round when no device confirmed it within the window."""
        gate = self.gate
        if gate is None or not gate.pending or self._round_moved_on(gate):
            return None
        answer = gate.expire(self._clock.now())
        if answer is not None:
            for decided in self._gate_decision(answer):
                self._queue.enqueue(decided)
        return self.next_look()
