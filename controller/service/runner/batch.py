"""A batch decided before its commit: events and conclusions in one transaction (one fsync).

Why this is no weaker than committing the events first: docs/architecture.md "One commit per batch".
A commit that fails must move the engine back: :class:`Before` restores it from a pickle taken
before the batch (cheaper than the fsync it saves) and the latches' journaled view.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from tablectl.controller.core.events import Card, TableEvent
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.core.time import not_before
from tablectl.controller.engines import Engine
from tablectl.controller.journal import JournalRecord
from tablectl.controller.mqtt.outbound import withholds
from tablectl.controller.service.runner.hold import (
    EngineFailedError,
    apply_held,
    engine_fault,
    is_held,
)
from tablectl.controller.service.runner.latches import Latches
from tablectl.controller.service.runner.records import event_record, output_record


@dataclass(frozen=True, slots=True)
class Before:
    """The engine and the latches' journaled view as they were before a batch."""

    engine: bytes
    latched: dict[str, set[str]]

    @classmethod
    def take(cls, engine: Engine, latches: Latches) -> Before:
        return cls(pickle.dumps(engine, protocol=pickle.HIGHEST_PROTOCOL), latches.copy())

    def restore(self, latches: Latches) -> Engine:
        """The engine as it was (a new object), with ``latches``' journaled view put back; the
        queue's view keeps what was queued."""
        latches.journaled.clear()
        latches.journaled.update(self.latched)
        # Our own bytes from take(), never read from outside the process.
        engine: Engine = pickle.loads(self.engine)  # noqa: S301
        return engine


@dataclass(frozen=True, slots=True)
class Batch:
    """Events applied to the engine, with the records to journal for them in one commit.

    ``records`` holds each event's record followed by its conclusions' records, so the ``seq``
    the engine was given for an event (``after_seq`` + its position) is the one the journal
    assigns — the commit passes ``after_seq`` and the journal refuses it if another write came
    first (:class:`~tablectl.controller.core.errors.JournalConflictError`).
    """

    events: list[TableEvent]
    """The events as journaled (stamped, cards dealt face down marked so), each with its
    ``seq``; an ``engine_error`` fault stands before an event the engine raised on."""
    outputs: list[list[EngineOutput]]
    """What the engine concluded for each journaled event."""
    rounds: list[str | None]
    """The engine's round in play after each journaled event (the restart scan's view)."""
    records: list[dict[str, object]]
    """What the commit appends: event, its conclusions, next event, …"""
    after_seq: int
    """The journal's newest ``seq`` when the batch was decided."""
    before: Before
    """What a failed commit restores."""
    owners: list[int]
    """For each journaled event, the index of the given event it was journaled for."""
    withheld: list[int]
    """The positions in :attr:`records` of the cards dealt face down: published withheld
    (decided here, once, and carried to the outbox: :meth:`Outbound.committed`)."""

    @classmethod
    def decide(
        cls,
        events: Sequence[TableEvent],
        *,
        engine: Engine,
        latches: Latches,
        before: Before,
        after_seq: int,
        ts: Callable[[], str],
        failed: Mapping[int, BaseException] | None = None,
        floor: str | None = None,
    ) -> Batch:
        """Apply ``events`` to ``engine`` (which changes) and say what to journal.

        ``ts`` stamps the events that have no time yet; none is stamped before ``floor`` (the
        journal's newest time) or the event before it: journal times never go backwards.
        Whether a card goes face down depends on every event before it, and here the engine has
        applied those: it is asked per card, and the batch says which records the outbox
        withholds (:attr:`withheld`).
        ``failed`` names the given events the engine raised on in an earlier attempt: each is
        journaled after an ``engine_error`` fault and not applied (:mod:`.hold`). Raises
        :class:`~tablectl.controller.service.runner.hold.EngineFailedError` for a new one, and
        what a record raises, with ``engine`` half-applied: the caller restores it from
        :attr:`before`, which it took (so it has it then too).
        """
        failed = failed or {}
        now = ts() if failed or any(e.ts is None for e in events) else None
        stamped: list[TableEvent] = []
        outputs: list[list[EngineOutput]] = []
        rounds: list[str | None] = []
        records: list[dict[str, object]] = []
        owners: list[int] = []
        withheld: list[int] = []
        seq = after_seq
        for index, given in enumerate(events):
            error = failed.get(index)
            todo = [given] if error is None else [engine_fault(error, given.type, now), given]
            for item in todo:
                seq += 1
                # One copy per event (dataclasses.replace is the costliest step here): its time
                # and the seq the journal will give it (the record leaves seq to the journal).
                floor = not_before(item.ts or now or "", floor)
                event = replace(item, ts=floor, seq=seq)
                if isinstance(event, Card) and _conceals(engine, latches, event, index):
                    event = replace(event, face_down=True)
                latches.track(event)
                decided = apply_held(engine, latches, event, index)
                record = event_record(event)
                if withholds(event.type, record):
                    withheld.append(len(records))
                stamped.append(event)
                outputs.append(decided)
                rounds.append(engine.current_round)
                records.append(record)
                records.extend(output_record(o, event.ts) for o in decided)
                owners.append(index)
                seq += len(decided)
        return cls(stamped, outputs, rounds, records, after_seq, before, owners, withheld)

    def split(self, stored: list[JournalRecord]) -> list[list[JournalRecord]]:
        """The committed records per journaled event: its own, then its conclusions."""
        results: list[list[JournalRecord]] = []
        taken = 0
        for decided in self.outputs:
            end = taken + 1 + len(decided)
            results.append(stored[taken:end])
            taken = end
        return results

    def by_given(self, per_event: list[list[JournalRecord]]) -> list[list[JournalRecord]]:
        """:meth:`split`'s lists per given event: its own record first (a command's reply
        names its ``seq``), then an ``engine_error`` fault journaled before it, if any."""
        results: list[list[JournalRecord]] = []
        for owner, records in zip(self.owners, per_event, strict=True):
            if owner < len(results):
                results[owner] = records + results[owner]
            else:
                results.append(records)
        return results


def _conceals(engine: Engine, latches: Latches, card: Card, index: int) -> bool:
    """Whether the engine deals ``card`` face down (never asked while the table is held)."""
    if is_held(latches):
        return False
    try:
        return engine.conceals(card)
    except Exception as exc:  # as apply_held: an engine defect, never a dead table
        raise EngineFailedError(index, exc) from exc
