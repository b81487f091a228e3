"""What a table says besides its journal: the retained views, the status, the alarm.

:class:`TableViews` builds these payloads and hands them to the table's :class:`TableOutputs`
(in the service, the publisher's :class:`tablectl.controller.mqtt.outbound.Outbound`), which
also takes the journal's records as they are committed (:meth:`TableOutputs.committed`).

* ``state`` (retained): the engine's snapshot, the journal's ``seq``, every device's latched
  faults, whether the table is locked (a latched fault, or a journal outage), and the outbox's
  backlog (``outbox.pending``: records journaled before this state's batch that the broker has
  not acknowledged yet; 0 while the publisher keeps up);
* ``devices/{id}`` (retained): one device's link, faults and counters;
* the extra fields of the retained ``status``: locked by a journal outage or not;
* what the betting timer sees: the phase, and whether play is held.

The builders are pure (the time is passed in as ISO text); :class:`TableViews` reads the
table's state and clock for them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Protocol

import structlog

from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import Engine
from tablectl.controller.journal import Committed, Journal
from tablectl.controller.service.clock import ClockWatch
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE, JournalOutage
from tablectl.controller.service.runner.hold import ENGINE_DEVICE, ENGINE_ERROR
from tablectl.controller.service.runner.records import MAX_REASON, clip
from tablectl.controller.service.runner.state import TableState
from tablectl.drivers.base import Driver
from tablectl.drivers.clock import Clock


class TableOutputs(Protocol):
    """Where a runner says what is not a journal record (the publisher's side of a table)."""

    key: bytes | None
    """The journal's key: what is published withheld carries its MAC (``withheld_auth``)."""

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        """Hand the outbox what a commit wrote (cheap, after each commit); ``withheld``: the
        positions of the records it publishes withheld (cards dealt face down)."""

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        """Set a retained latest-value topic under the table (``state``, ``devices/{id}``)."""

    def alarm(self, payload: Mapping[str, Any]) -> None:
        """Publish an alarm the journal cannot take yet (a journal outage's raise and clear)."""

    def set_status(self, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` (:func:`status_view`) into the retained ``status``."""

    def republish(self, payloads: Sequence[bytes]) -> bool:
        """Publish journal records again, as published the first time, on ``events``
        (``cmd/resend``); ``False`` when nothing can be sent (no broker connection)."""


class NoOutputs:
    """:class:`TableOutputs` that say nothing: a runner without a publisher (tests, tools)."""

    key: bytes | None = None

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        pass

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        pass

    def alarm(self, payload: Mapping[str, Any]) -> None:
        pass

    def set_status(self, extra: Mapping[str, Any]) -> None:
        pass

    def republish(self, payloads: Sequence[bytes]) -> bool:
        return False


NO_OUTPUTS: TableOutputs = NoOutputs()

log = structlog.get_logger("tablectl.runner")


class TableViews:
    """Says what one table's state is on its outputs: ``state``, ``devices/{id}``, and a journal
    outage's lock (alarm, ``status``), which it also begins and ends in the state.
    """

    def __init__(
        self,
        *,
        table_id: str,
        state: TableState,
        journal: Journal,
        drivers: Sequence[Driver],
        outputs: TableOutputs,
        clock: Clock,
        clock_watch: ClockWatch | None,
    ) -> None:
        self.table_id = table_id
        self._state = state
        self._journal = journal
        self._drivers = drivers
        self._outputs = outputs
        self._clock = clock
        self.clock_watch = clock_watch
        self._state_seq = journal.last_seq
        self._staff: Mapping[str, Any] | None = None
        """The journal's last ``seq`` when ``state`` was last built (the outbox backlog's edge)."""

    def publish_state(self) -> None:
        """The retained ``state``; none while a batch's commit is in flight (its conclusions are
        not durable yet: the end of the commit publishes the state)."""
        state = self._state
        if state.committing:
            return
        view = state_view(
            table_id=self.table_id,
            engine=state.engine,
            seq=self._journal.last_seq,
            latched=state.latches.journaled,
            outage=state.outage,
            ts=format_ts(self._clock.now()),
            outbox_pending=self._outbox_pending(),
            clock_suspect=self.clock_suspect(),
        )
        self._outputs.set_view("state", view)
        self._publish_staff(view.get("staff"), view["ts"])

    def _publish_staff(self, staff: Mapping[str, Any] | None, ts: str) -> None:
        """The retained ``staff`` (docs/station.md) when who is on duty changed; never on a table
        that has had nobody on duty (its topics stay as they were)."""
        if staff == self._staff:
            return
        self._staff = staff
        body = staff or {"dealer": None, "supervisors": [], "technicians": []}
        self._outputs.set_view("staff", {"schema": 1, "table": self.table_id, "ts": ts, **body})

    def _outbox_pending(self) -> int:
        """Records journaled before this batch (up to the last ``state``'s ``seq``) that the broker
        has not acknowledged yet: the outbox's backlog, 0 while the publisher keeps up. The batch
        just journaled is not counted: it is always unpublished at this point. No query: the
        journal keeps its acknowledged ``seq`` in memory (none may wait on the loop for a disk).
        """
        counted, self._state_seq = self._state_seq, self._journal.last_seq
        return max(counted - self._journal.acknowledged_seq, 0)

    def publish_devices(self, devices: Collection[str] | None = None) -> None:
        """The retained ``devices/{id}`` of ``devices`` (every device when ``None``)."""
        for driver in self._drivers:
            if devices is None or driver.device_id in devices:
                self.publish_device(driver)

    def publish_device(self, driver: Driver) -> None:
        """The retained ``devices/{id}`` of one device."""
        view = device_view(
            table_id=self.table_id,
            driver=driver,
            latched=self._state.latches.journaled,
            ts=format_ts(self._clock.now()),
        )
        self._outputs.set_view(f"devices/{driver.device_id}", view)

    # --- the wall clock (tablectl.controller.service.clock) --------------------------------

    def clock_suspect(self) -> str | None:
        """One line while the clock is suspect (a step not confirmed), else ``None``."""
        return self.clock_watch.describe() if self.clock_watch is not None else None

    def clock_changed(self) -> None:
        """A step, a return or a confirmation: retention follows, ``state`` says so."""
        self._journal.retention_hold = self.clock_suspect()
        self.publish_state()

    # --- journal outage (tablectl.controller.service.outage) -------------------------------

    def begin_outage(self, exc: BaseException) -> JournalOutage:
        """The journal refused a write: lock the table and say so everywhere it can be said."""
        state = self._state
        if state.outage is not None:
            return state.outage
        outage = JournalOutage(
            started_ts=format_ts(self._clock.now()),
            error=clip(str(exc) or type(exc).__name__, MAX_REASON),
            round=state.engine.current_round,
        )
        state.outage = outage
        state.outages += 1
        log.error(
            "journal_outage_started",
            error=outage.error,
            round=outage.round,
            code=JOURNAL_UNAVAILABLE,
        )
        self._outputs.alarm(outage.alarm(self.table_id))
        self.locked()
        return outage

    def locked(self) -> None:
        """The outage's counts on ``status`` and ``state`` (the publisher coalesces them)."""
        self._outputs.set_status(status_view(self._state.outage))
        self.publish_state()

    def end_outage(self, now_ts: str, *, voided: bool) -> None:
        """The journal took what the outage owed: unlock the table and say so."""
        outage, self._state.outage = self._state.outage, None
        if outage is None:
            return
        log.warning(
            "journal_outage_ended",
            since=outage.started_ts,
            until=now_ts,
            events_not_journaled=outage.not_journaled,
            dropped=dict(outage.dropped),
            voided=outage.round if voided else None,
        )
        self._outputs.alarm(outage.alarm(self.table_id, cleared_ts=now_ts))
        self.locked()


def state_view(
    *,
    table_id: str,
    engine: Engine,
    seq: int,
    latched: Mapping[str, set[str]],
    outage: JournalOutage | None,
    ts: str,
    outbox_pending: int | None = None,
    clock_suspect: str | None = None,
) -> dict[str, Any]:
    """The retained ``state``: the engine's snapshot, what locks the table (a journal outage, a
    fault, an engine error holding the round), the outbox's backlog (``None``: the journal could
    not say; left out), and ``clock`` while the wall clock is suspect (a step not confirmed)."""
    snapshot = dict(engine.snapshot())
    outbox = {} if outbox_pending is None else {"outbox": {"pending": outbox_pending}}
    clock = {} if clock_suspect is None else {"clock": {"suspect": True, "why": clock_suspect}}
    held = ENGINE_ERROR in latched.get(ENGINE_DEVICE, ())
    return {
        "schema": 1,
        "table": table_id,
        "game": engine.game,
        "ts": ts,
        "seq": seq,
        **snapshot,
        "devices": {device: {"faults": sorted(codes)} for device, codes in latched.items()},
        "locked": outage is not None or held or bool(snapshot.get("faults")),
        "journal": {"available": True} if outage is None else {"available": False, **outage.view()},
        **outbox,
        **clock,
    }


def device_view(
    *, table_id: str, driver: Driver, latched: Mapping[str, set[str]], ts: str
) -> dict[str, Any]:
    """The retained ``devices/{id}``: the link, the latched faults and the driver's counters."""
    return {
        "schema": 1,
        "table": table_id,
        "device": driver.device_id,
        "available": driver.available,
        "faults": sorted(latched.get(driver.device_id, ())),
        "counters": dict(driver.counters),
        "ts": ts,
    }


def status_view(outage: JournalOutage | None) -> dict[str, Any]:
    """The extra fields of the retained ``status``: locked by a journal outage or not."""
    if outage is None:
        return {"locked": False, "faults": []}
    return {"locked": True, "faults": [JOURNAL_UNAVAILABLE], "journal": outage.view()}


def betting_view(engine: Engine, outage: JournalOutage | None) -> tuple[str | None, bool]:
    """What the betting timer sees, ten times a second: the engine's ``phase``, and whether
    play is held (a fault the engine latched, a journal outage). No snapshot is built for it.
    """
    return engine.phase, bool(engine.faults) or outage is not None
