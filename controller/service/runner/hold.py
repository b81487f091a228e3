"""What reaches the engine: an engine that raised holds the round; a void only for its round.

Engines return irregularities as verdicts (contracts §6), so an exception from :meth:`Engine.apply`
is a defect. It costs neither the event nor the process, only the round: a ``fault`` of
:data:`ENGINE_DEVICE` / :data:`ENGINE_ERROR` is journaled *before* the event, and the table is held
(events journaled, not applied, except a supervisor's ``void``) until ``cmd/clear_fault``. Fault
first, so a replay holds at the same place whatever a later engine would make of the event. A void
that reaches the engine after its round ended gets a ``wrong_round`` verdict and is not applied.
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
