"""What reaches the engine: an engine that raised holds the round; a void only for its round.

Engines return irregularities as verdicts and never raise for a bad sequence (contracts §6); an
exception out of :meth:`Engine.apply` is therefore a defect of the engine or of its rules (a
configuration the game cannot play, a state an upgrade left behind). It must cost neither the
event — the device reported it, so the journal keeps it — nor the table process. What it costs is
the round: the runner journals a ``fault`` of the pseudo-device :data:`ENGINE_DEVICE` with code
:data:`ENGINE_ERROR` (the exception's type and message in ``detail``) *before* the event the
engine could not take, and from then on the table is held: events are journaled but not applied,
except a supervisor's ``void``, until ``cmd/clear_fault`` clears ``engine_error`` on ``engine``.

The fault comes first so that a replay of the journal (recovery) holds the table before it
reaches the event, with the same rule (:func:`apply_held`), whatever a later version of the engine
would make of that event: live play and replay feed the engine exactly the same events.

A supervisor's void names its round (:attr:`Void.round`); one that reaches the engine after that
round ended is journaled with a ``wrong_round`` verdict and not applied.
"""

from __future__ import annotations

from typing import Final

from tablectl.controller.core.errors import ControllerError
from tablectl.controller.core.events import Fault, TableEvent, Void
from tablectl.controller.core.outcomes import EngineOutput, Verdict
from tablectl.controller.engines import Engine
from tablectl.controller.service.runner.latches import Latches
from tablectl.controller.service.runner.records import MAX_REASON, clip

ENGINE_DEVICE: Final = "engine"
"""The pseudo-device whose latched fault holds the table (not a driver: no ``devices/`` view)."""

WRONG_ROUND: Final = "wrong_round"
"""A void naming a round other than the one in play (refusal and verdict code)."""

ENGINE_ERROR: Final = "engine_error"
"""The fault code of an exception raised by the engine (stable, docs/verdicts.md)."""


class EngineFailedError(ControllerError):
    """The engine raised on an event (internal to the runner: becomes an ``engine_error``).

    Args:
        index: the event's position in the batch being decided.
        error: what the engine raised.
    """

    def __init__(self, index: int, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.index = index
        self.error = error


def is_held(latches: Latches) -> bool:
    """Whether a journaled ``engine_error`` holds the table."""
    return ENGINE_ERROR in latches.journaled.get(ENGINE_DEVICE, ())


def apply_held(
    engine: Engine, latches: Latches, event: TableEvent, index: int = 0
) -> list[EngineOutput]:
    """Apply ``event`` (already tracked by ``latches``) unless the table is held.

    The engine's own fault and its clearing are about the engine, not for it; while held, only a
    supervisor's void reaches the engine. Raises :class:`EngineFailedError` (``index`` in it)
    for whatever the engine raises: the caller puts the engine back as it was before the event.
    """
    if event.device == ENGINE_DEVICE:
        return []
    if isinstance(event, Void) and event.round is not None and event.round != engine.current_round:
        # Refused at the command desk already; here for a void queued behind the round's end.
        return [
            Verdict(
                code=WRONG_ROUND,
                message=f"void for round {event.round} not applied: the round in play is "
                f"{engine.current_round}",
                round=event.round,
                ts=event.ts,
            )
        ]
    if is_held(latches) and not isinstance(event, Void):
        return []
    try:
        return engine.apply(event)
    except Exception as exc:  # any type: an engine defect is a fault, never a dead table
        raise EngineFailedError(index, exc) from exc


def engine_fault(error: BaseException, event_type: str, ts: str | None) -> Fault:
    """The fault journaled before the event (of ``event_type``) the engine raised ``error`` on."""
    what = clip(f"{type(error).__name__}: {error}", MAX_REASON - 40)
    return Fault(
        ts=ts,
        device=ENGINE_DEVICE,
        code=ENGINE_ERROR,
        detail=f"{what} (on the next event: {event_type})",
    )
