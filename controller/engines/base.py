"""What every round engine does the same way: round ids, the latches, verdicts, refused events.

:class:`RoundIds` allocates round ids (``f"{table_id}-{n:06d}"``) and remembers the recent ones, so
that a re-sent or replayed ``round_open`` cannot reuse one. :class:`EngineBase` is the mixin the
engines share: the ``phase`` / ``current_round`` / ``faults`` properties, the verdict builder, the
refusals before a round opens, the ``fault_cleared`` latch and the dispatch that turns a refused
event (:class:`~tablectl.controller.core.errors.TransitionNotAllowedError`) into a verdict.

Pure: no asyncio, no I/O, no clock.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, TypeVar

import pydantic

from tablectl.controller.config import validate_section
from tablectl.controller.core.errors import ConfigError, TransitionNotAllowedError
from tablectl.controller.core.events import FaultCleared, RoundOpen, TableEvent
from tablectl.controller.core.outcomes import EngineOutput, Verdict
from tablectl.controller.core.statemachine import StateMachine

__all__ = [
    "DUPLICATE_ROUND",
    "FAULT_LATCHED",
    "NOT_FOR_THIS_GAME",
    "RECENT_ROUNDS",
    "UNEXPECTED_EVENT",
    "EngineBase",
    "RoundIds",
    "preset_rules",
]

# Verdict codes every engine uses: the event was refused, the round (if any) goes on unchanged.
UNEXPECTED_EVENT: Final = "unexpected_event"
NOT_FOR_THIS_GAME: Final = "not_for_this_game"
FAULT_LATCHED: Final = "fault_latched"
DUPLICATE_ROUND: Final = "duplicate_round"

# How many recent round ids are remembered to refuse a reused one: enough for any re-sent or
# replayed round_open, bounded so a table running for months does not grow without limit.
RECENT_ROUNDS: Final = 1024


class RoundIds:
    """A table's round ids: the next automatic one, and the recently ended ones.

    Args:
        table_id: round ids are ``f"{table_id}-{n:06d}"``.
        next_round: ``n`` of the first round id; ``n`` goes up by one per opened round.

    Raises:
        ValueError: ``next_round`` is below 1.
    """

    def __init__(self, table_id: str, next_round: int) -> None:
        if next_round < 1:
            raise ValueError(f"next_round must be >= 1, got {next_round}")
        self._table = table_id
        self._next = next_round
        self._recent: deque[str] = deque(maxlen=RECENT_ROUNDS)

    def used(self, round_id: str | None, current: str | None) -> bool:
        """Whether a hand-given ``round_id`` is the round in progress or a recently ended one."""
        return round_id is not None and (round_id == current or round_id in self._recent)

    def take(self, given: str | None) -> str:
        """The id of the round opening now: ``given``, or the next automatic one."""
        round_id = given if given is not None else self._auto()
        self._next += 1
        return round_id

    def ended(self, round_id: str) -> None:
        """Remember ``round_id`` as used."""
        self._recent.append(round_id)

    def _auto(self) -> str:
        while True:
            candidate = f"{self._table}-{self._next:06d}"
            if candidate not in self._recent:
                return candidate
            # A hand-given id took this one; skip ahead rather than publish a round id twice.
            self._next += 1


class EngineBase:
    """The parts of a round engine that do not depend on the game (a mixin).

    The engine sets ``_machine``, ``_round``, ``_faults``, ``_ids``, ``_handlers`` and
    ``_other_games``, and names its family in ``_family`` (for ``not_for_this_game`` messages).
    """

    _family: ClassVar[str]
    _machine: StateMachine
    _round: str | None
    _faults: set[str]
    _ids: RoundIds
    _handlers: Mapping[str, Callable[[Any], list[EngineOutput]]]
    _other_games: frozenset[str]

    @property
    def phase(self) -> str:
        """The round machine's state."""
        return self._machine.state

    @property
    def current_round(self) -> str | None:
        return self._round

    @property
    def faults(self) -> frozenset[str]:
        """The latched fault codes."""
        return frozenset(self._faults)

    def conceals(self, event: TableEvent) -> bool:
        """Nothing on this table is dealt face down."""
        del event
        return False

    def _dispatch(self, event: TableEvent) -> list[EngineOutput]:
        """Run the event's handler; a refused event becomes an ``unexpected_event`` verdict."""
        if event.type in self._other_games:
            message = f"{event.type!r} is not a {self._family} event"
            return [self._verdict(NOT_FOR_THIS_GAME, message, event)]
        handler = self._handlers.get(event.type, self._not_declared)
        try:
            return handler(event)
        except TransitionNotAllowedError as exc:
            # Handlers fire the machine before changing anything, so the state is intact here.
            return [self._verdict(UNEXPECTED_EVENT, self._refusal(exc, event), event)]

    def _refusal(self, exc: TransitionNotAllowedError, event: TableEvent) -> str:
        """The message of the ``unexpected_event`` verdict for a refused ``event``."""
        del event
        return str(exc)

    def _open_refused(self, event: RoundOpen) -> Verdict | None:
        """Why a ``round_open`` may not open a round whatever the phase: a latched fault
        (regulatory R14/R18/R21: play stays locked until every fault is cleared) or a reused id."""
        if self._faults:
            faults = ", ".join(sorted(self._faults))
            return self._verdict(
                FAULT_LATCHED, f"round not opened: faults latched ({faults})", event, "R14"
            )
        if self._ids.used(event.round, self._round):
            return self._verdict(
                DUPLICATE_ROUND, f"round id {event.round!r} was already used", event
            )
        return None

    def _fault_cleared(self, event: FaultCleared) -> list[EngineOutput]:
        if event.code not in self._faults:
            raise TransitionNotAllowedError(f"fault {event.code!r} is not latched")
        self._machine.fire("fault_cleared")
        self._faults.discard(event.code)
        return []

    def _not_declared(self, event: TableEvent) -> list[EngineOutput]:
        # Any type without a handler (e.g. a future one): the machine refuses it.
        self._machine.fire(event.type)
        return []

    def _verdict(
        self, code: str, message: str, event: TableEvent, rule: str | None = None, **data: Any
    ) -> Verdict:
        return Verdict(
            code=code,
            message=message,
            round=self._round,
            rule=rule,
            ts=event.ts,
            data={"event": event.type, "phase": self.phase, **data},
        )


Model = TypeVar("Model", bound=pydantic.BaseModel)


def preset_rules(
    model: type[Model],
    presets: Mapping[str, Mapping[str, Any]],
    game: str,
    rules: Mapping[str, Any],
    *,
    family: str,
    source: str,
) -> Model:
    """The rule book's preset for ``game`` (or ``[rules] variant``) with the table's ``rules`` on
    top, validated strictly: the shared step of the families whose one engine serves many games.

    Raises:
        ConfigError: an unknown preset (naming where it came from), or ``[rules]`` the model
            rejects (key and file named).
    """
    variant = rules.get("variant", game)
    if not isinstance(variant, str) or variant not in presets:
        known = ", ".join(presets)
        where = "rules.variant" if "variant" in rules else "table.game"
        raise ConfigError(f"{source}: {where}: no {family} preset {variant!r} (known: {known})")
    merged = {**presets[variant], "variant": variant, **rules}
    return validate_section(model, merged, source=source, section="rules")
