"""The bead-count round engine (fan_tan): a strict state machine around the pure rules of
:mod:`tablectl.controller.games.fan_tan`.

Phases (the machine's states)::

idle ─round_open─▶ open ─bets_closed─▶ closed ─beads (a count that counts)─▶ idle │
│  ╲ │                    │   beads: no_beads, beads_out_of_range, │                    │
fault_latched (waits for a recount or void) └── void; beads: void result_before_bets_closed ──▶
idle

The dealer counts by hand (seed-001 L3985–3989): ``beads`` is keyed in with ``cmd/event``. The
count comes after ``bets_closed`` (L3987). No malfunction clause (§2.2): a latched fault (R14)
voids nothing on its own. Never raises."""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.events import Beads
from tablectl.controller.core.outcomes import EngineOutput, Outcome
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import IDLE, OPEN, RoundEngine
from tablectl.controller.games.fan_tan import FanTanRules, check_count, fan_tan_result

CLOSED: Final = "closed"

VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"
"""The void reason of a count while betting is open (the dice's and the wheels' code)."""


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(sources: tuple[str, ...], event: str, target: str | None = None) -> None:
        t.extend(Transition(s, event, target or s) for s in sources)

    every = (IDLE, OPEN, CLOSED)
    add(every, "fault")
    add(every, "fault_cleared")
    add(every, "round_open", OPEN)
    add((OPEN,), "bets_closed", CLOSED)
    add((CLOSED,), "beads")
    add((CLOSED,), "settle", IDLE)
    add((OPEN, CLOSED), "void", IDLE)
    return MachineDefinition("beads", states=every, initial=IDLE, transitions=t)


_MACHINE: Final = _definition()


class BeadEngine(RoundEngine):
    """One Fan Tan table's rounds, built as :class:`~tablectl.controller.engines.EngineClass`
    says."""

    def __init__(
        self, table_id: str, rules: FanTanRules, *, game: str = "fan_tan", next_round: int = 1
    ) -> None:
        super().__init__(
            table_id,
            game,
            _MACHINE,
            handlers={"beads": self._beads},
            family="beads",
            next_round=next_round,
        )
        self._rules = rules
        self._recounts = 0
        self._last: dict[str, Any] | None = None
        self._last_round: str | None = None

    @property
    def rules(self) -> FanTanRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic."""
        return self._state(
            recounts=self._recounts,
            last_round=self._last_round,
            last=dict(self._last) if self._last is not None else None,
        )

    # -- handlers ---------------------------------------------------------------------------------

    def _beads(self, event: Beads) -> list[EngineOutput]:
        if self.phase == OPEN:
            # L3987: the beads stay under the cup while bets are placed.
            self._machine.fire("void")
            result = {"count": event.count}
            return [self._end("void", VOID_RESULT_BEFORE_BETS_CLOSED, event, result)]
        self._machine.fire("beads")  # only in closed (idle: unexpected_event)
        if self._faults:
            return [self._latched(event, "the count waits")]
        finding = check_count(self._rules, event.count)
        if finding is not None:
            self._recounts += 1
            return [self._finding(finding, event)]
        self._machine.fire("settle")
        result = {**fan_tan_result(event.count), "recounts": self._recounts}
        return [self._end("settled", None, event, result)]

    # -- helpers ----------------------------------------------------------------------------------

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        self._last = outcome.result if outcome.status == "settled" else None
        self._recounts = 0
