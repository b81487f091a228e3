"""What a table says besides its journal: the retained views, the status, the alarm.

The runner builds these payloads and hands them to its :class:`TableOutputs` (in the service,
the publisher's :class:`tablectl.controller.mqtt.outbound.Outbound`); the journal's records do
not pass through here, the publisher drains them from the journal itself.

* ``state`` (retained): the engine's snapshot, the journal's ``seq``, every device's latched
  faults, whether the table is locked (a latched fault, or a journal outage), and the outbox's
  backlog (``outbox.pending``: records journaled before this state's batch that the broker has
  not acknowledged yet; 0 while the publisher keeps up);
* ``devices/{id}`` (retained): one device's link, faults and counters;
* the extra fields of the retained ``status``: locked by a journal outage or not;
* what the betting timer sees: the snapshot, and the lock of an outage.

Pure: the runner passes the time in (as ISO text).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from tablectl.controller.engines import Engine
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE, JournalOutage
from tablectl.controller.service.runner.hold import ENGINE_DEVICE, ENGINE_ERROR
from tablectl.drivers.base import Driver

__all__ = [
    "NO_OUTPUTS",
    "NoOutputs",
    "TableOutputs",
    "device_view",
    "state_view",
    "status_view",
    "timer_view",
]


class TableOutputs(Protocol):
    """Where a runner says what is not a journal record (the publisher's side of a table)."""

    def notify(self) -> None:
        """Records were journaled: wake the outbox drain (cheap, called after each append)."""

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        """Set a retained latest-value topic under the table (``state``, ``devices/{id}``)."""

    def alarm(self, payload: Mapping[str, Any]) -> None:
        """Publish an alarm the journal cannot take yet (a journal outage's raise and clear)."""

    def set_status(self, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` (:func:`status_view`) into the retained ``status``."""

    def republish(self, records: Sequence[tuple[str, bytes]]) -> bool:
        """Publish ``(type, stored body)`` journal records again on ``events`` (``cmd/resend``);
        ``False`` when nothing can be sent (no broker connection)."""


class NoOutputs:
    """:class:`TableOutputs` that say nothing: a runner without a publisher (tests, tools)."""

    def notify(self) -> None:
        pass

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        pass

    def alarm(self, payload: Mapping[str, Any]) -> None:
        pass

    def set_status(self, extra: Mapping[str, Any]) -> None:
        pass

    def republish(self, records: Sequence[tuple[str, bytes]]) -> bool:
        return False


NO_OUTPUTS: TableOutputs = NoOutputs()


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


def timer_view(engine: Engine, outage: JournalOutage | None) -> Mapping[str, Any]:
    """What the betting timer sees: the engine's snapshot, and the lock of an outage."""
    snapshot = engine.snapshot()
    if outage is None:
        return snapshot
    return {**snapshot, "locked": True}
