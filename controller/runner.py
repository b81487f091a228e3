"""TableRunner: the only async glue of one table.

Device events and commands are funnelled through one queue, so the table sees a single ordered
stream. For each event: journal it (fsync'd) → apply the game engine → journal what the engine
concluded → wake the publisher. Nothing is acted on before it is in the journal (DESIGN §3).
Under load this is a group commit: the events that queued up meanwhile are journaled in one
transaction, then applied in order, then their conclusions journaled in a second one.

On start the runner replays the journal through a fresh engine to rebuild the table state (round
counter, phase, latched faults), and journals any conclusion that a crash between "event
journaled" and "outcome journaled" left out, so nothing the engine decided is lost.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import structlog

from controller.betting import BettingConfig, BettingTimer
from controller.engines import Engine
from controller.errors import EventFormatError, JournalError
from controller.events import (
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
from controller.journal import Journal, canonical_json
from controller.mapping import SHOE_REMOVED, iso_ts, to_table_event
from controller.outcomes import EngineOutput, Outcome, ShoeReport, Verdict
from drivers import events as dev
from drivers.base import Driver

__all__ = ["Sink", "TableRunner", "output_record"]

log = structlog.get_logger("tablectl.runner")

Sink = Callable[[], None]
"""Called after records were journaled (wakes the publisher's outbox drain)."""
RetainedSink = Callable[[str, Mapping[str, Any]], None]
"""Publishes a retained latest-value topic (suffix under the table, payload)."""

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
        clock: Callable[[], float],
        betting: BettingConfig | None = None,
        listeners: Sequence[Callable[[Mapping[str, Any]], None]] = (),
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
        self._clock = clock
        self._queue: asyncio.Queue[tuple[TableEvent, asyncio.Future[list[dict[str, Any]]] | None]]
        self._queue = asyncio.Queue()
        self.latched: dict[str, set[str]] = {d.device_id: set() for d in self.drivers}
        # What the queue will have latched once processed (filters repeated raises and clears).
        self._pending_latches: dict[str, set[str]] = {d.device_id: set() for d in self.drivers}
        self.device_seen: set[str] = set()

    # --- recovery --------------------------------------------------------------------------

    def recover(self) -> int:
        """Rebuild engine state from the journal; returns the number of events replayed.

        Conclusions are matched to the journal by content, in order: a group commit stores a
        batch's events first and their conclusions after them, so an output record need not
        follow its own event directly. What the engine concludes again but the journal lacks
        after the last matched conclusion is journaled now (the crash window).
        """
        pending: list[tuple[str, dict[str, Any]]] = []
        replayed = 0
        for record in self.journal.records():
            kind = record.get("type")
            if kind in _OUTPUT_TYPES:
                key = _output_key(record)
                for index, (expected, _) in enumerate(pending):
                    if expected == key:
                        # Anything before it was lost to a failed write long ago (the table
                        # went on); only the tail after the last match is the crash window.
                        del pending[: index + 1]
                        break
                continue
            if kind not in EVENT_TYPES:
                continue
            fields = {k: v for k, v in record.items() if k not in _JOURNAL_FIELDS}
            try:
                event = parse_event(fields)
            except EventFormatError as exc:  # a journal we wrote ourselves: should never happen
                log.error("journal_event_unreadable", seq=record.get("seq"), error=str(exc))
                continue
            self._track_faults(event)
            for output in self.engine.apply(event):
                out = output_record(output, event.ts)
                pending.append((_output_key(out), out))
            replayed += 1
        if pending:
            # The crash came after the events were journaled and before their outcomes were.
            log.warning("recovering_missing_outputs", count=len(pending))
            self.journal.append([out for _, out in pending])
            self._on_journaled()
        return replayed

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
            timer = BettingTimer(self.betting, self.engine.snapshot, self.submit)
            group.create_task(timer.run(), name="table:betting")

    async def _pump_driver(self, driver: Driver) -> None:
        # Each pump is its own task: the binding stays scoped to this device's log lines.
        structlog.contextvars.bind_contextvars(device=driver.device_id)
        async for device_event in driver.events():
            if isinstance(device_event, dev.DeviceAvailable):
                self.device_seen.add(driver.device_id)
            event = to_table_event(device_event)
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
        last_seq = self.journal.last_seq
        try:
            results = self.handle_batch([event for event, _ in batch])
        except (JournalError, ValueError) as exc:
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
        out_records = [
            output_record(o, event.ts)
            for event, outputs in zip(events, decided, strict=True)
            for o in outputs
        ]
        stored_outputs = self.journal.append(out_records) if out_records else []
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
        ``event``, journaled as manual: a scanner failed and the dealer keys it in),
        ``clear_fault`` (``code``, ``device``), ``status``.
        """
        try:
            request = json.loads(payload) if payload else {}
        except (ValueError, UnicodeDecodeError) as exc:
            return _reply(None, error=f"payload is not JSON: {exc}")
        if not isinstance(request, dict):
            return _reply(None, error="payload must be a JSON object")
        corr = request.get("id")
        try:
            event = self._command_event(verb, request)
        except EventFormatError as exc:
            return _reply(corr, error=str(exc))
        if event is None:
            return _reply(corr, ok=True, state=dict(self.engine.snapshot()))
        try:
            records = await asyncio.wait_for(self.submit(event), timeout=10)
        except (JournalError, TimeoutError) as exc:
            return _reply(corr, error=f"not journaled: {exc}")
        outputs = [r for r in records if r.get("type") in _OUTPUT_TYPES]
        return _reply(corr, ok=True, seq=records[0]["seq"], outputs=outputs)

    def _command_event(self, verb: str, request: Mapping[str, Any]) -> TableEvent | None:
        ts = iso_ts(self._clock())
        if verb == "status":
            return None
        if verb == "void":
            reason = request.get("reason")
            by = request.get("by")
            if not isinstance(reason, str) or not reason:
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
        raise EventFormatError(
            f"unknown command {verb!r} (known: clear_fault, event, status, void)"
        )


_JOURNAL_FIELDS = frozenset({"schema", "table", "seq", "hash", "prev_hash"})

_MAX_BATCH = 256
"""Events per group commit at most (bounds how long one batch holds the event loop)."""


def _output_key(record: Mapping[str, Any]) -> str:
    """An output record's content without what the journal adds, for matching in recovery."""
    return canonical_json({k: v for k, v in record.items() if k not in _JOURNAL_FIELDS})


def _reply(
    corr: object, *, ok: bool = False, error: str | None = None, **extra: Any
) -> dict[str, Any]:
    reply: dict[str, Any] = {"schema": 1, "id": corr, "ok": ok and error is None}
    if error is not None:
        reply["error"] = error
    reply.update(extra)
    return reply
