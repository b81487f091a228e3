"""The roulette round engine: a strict state machine around the pure rules of
:mod:`controller.games.roulette`.

Phases (the machine's states)::

    idle --round_open--> open --bets_closed--> closed --winning_number--> idle (settled | void)
                          |                      |
                          +--- no_spin / void / fault (void_on_fault) / winning_number ---> idle

``ball_launched`` is accepted while ``open`` (the SS2 launches before "no more bets", seed-002-004
C-A11) and while ``closed``; it only sets ``ball_in_play``. ``round_open`` during a round abandons
it. Faults are latched in a set outside the phase: a fault is orthogonal to where the round is.

Pure: no asyncio, no I/O, no clock; an outcome's ``ts`` is the ``ts`` of the event that ended the
round. :meth:`RouletteEngine.apply` never raises for an event sequence, however wrong: whatever the
machine refuses becomes a :class:`~controller.outcomes.Verdict` (codes in ``docs/verdicts.md``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from controller.config import validate_section
from controller.engines.base import (
    FAULT_LATCHED,
    NOT_FOR_THIS_GAME,
    UNEXPECTED_EVENT,
    EngineBase,
    RoundIds,
)
from controller.events import (
    BallLaunched,
    Fault,
    NoSpin,
    RoundOpen,
    TableEvent,
    Void,
    WinningNumber,
)
from controller.games.roulette import Pocket, RouletteRules, check_spin, spin_result
from controller.outcomes import EngineOutput, Outcome
from controller.statemachine import MachineDefinition, StateMachine, Transition

__all__ = [
    "FAULT_LATCHED",
    "NOT_FOR_THIS_GAME",
    "UNEXPECTED_EVENT",
    "VOID_DEVICE_FAULT",
    "VOID_RESULT_BEFORE_BETS_CLOSED",
    "VOID_ROUND_ABANDONED",
    "RouletteEngine",
]

IDLE: Final = "idle"
OPEN: Final = "open"
CLOSED: Final = "closed"

# Void reasons produced by the engine itself (the spin checks are in controller.games.roulette).
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"
VOID_DEVICE_FAULT: Final = "device_fault"
VOID_ROUND_ABANDONED: Final = "round_abandoned"
# Used when a no_spin / void event carries an empty reason: a void always has a code.
VOID_NO_SPIN_DEFAULT: Final = "no_spin"
VOID_SUPERVISOR_DEFAULT: Final = "supervisor_void"

# Events of other game families: well-formed, just not roulette's.
_OTHER_GAMES: Final = frozenset(
    {
        "card",
        "cut_card",
        "shuffle_started",
        "shuffle_completed",
        "ball_drawn",
        "segment",
        "deal_error",
    }
)


def _definition(void_on_fault: bool) -> MachineDefinition:
    """The roulette round machine; ``void_on_fault`` decides where a fault mid-round leads."""
    in_round = (OPEN, CLOSED)
    transitions = [
        Transition(IDLE, "round_open", OPEN),
        Transition(OPEN, "bets_closed", CLOSED),
        # Faults may come and go in any phase; they are latched beside the phase.
        Transition(IDLE, "fault", IDLE),
        Transition(IDLE, "fault_cleared", IDLE),
    ]
    for phase in in_round:
        transitions += [
            # A new round while one is in progress abandons it (void round_abandoned).
            Transition(phase, "round_open", OPEN),
            # SS2 state 3 may come before or after "no more bets" (seed-002-004 C-A11).
            Transition(phase, "ball_launched", phase),
            # closed: the result; open: void result_before_bets_closed (seed-000 V-RL-3).
            Transition(phase, "winning_number", IDLE),
            # "No spin" (seed-000 RL-I1/RL-I2, regulatory R2) and the supervisor (V-RL-5).
            Transition(phase, "no_spin", IDLE),
            Transition(phase, "void", IDLE),
            # seed-001 G1/G3, seed-004 ROU 2.1.6: a malfunction cancels the round; regulatory
            # R23 (operator terms) keeps it in play instead; the table's rules choose.
            Transition(phase, "fault", IDLE if void_on_fault else phase),
            Transition(phase, "fault_cleared", phase),
        ]
    return MachineDefinition(
        "roulette", states=(IDLE, OPEN, CLOSED), initial=IDLE, transitions=transitions
    )


# Both variants are built (and so validated) at import, not when the first table starts.
_MACHINES: Final = {True: _definition(True), False: _definition(False)}


class RouletteEngine(EngineBase):
    """One roulette table's rounds.

    Args:
        table_id: the table id; round ids are ``f"{table_id}-{n:06d}"``.
        rules: the validated ``[rules]`` (see :meth:`from_rules` for a raw mapping).
        next_round: ``n`` of the first round id; ``n`` goes up by one per opened round.

    Raises:
        ValueError: ``next_round`` is below 1.
    """

    game: Final = "roulette"
    _family = "roulette"
    _other_games = _OTHER_GAMES

    def __init__(
        self, table_id: str, rules: RouletteRules | None = None, *, next_round: int = 1
    ) -> None:
        self._ids = RoundIds(table_id, next_round)
        self._table = table_id
        self._rules = rules if rules is not None else RouletteRules()
        self._machine = StateMachine(_MACHINES[self._rules.void_on_fault])
        self._rounds = 0
        self._round: str | None = None
        self._ball_in_play = False
        self._launch: BallLaunched | None = None
        self._faults: set[str] = set()
        self._last_number: Pocket | None = None
        self._handlers: Mapping[str, Callable[[Any], list[EngineOutput]]] = {
            "round_open": self._round_open,
            "bets_closed": self._bets_closed,
            "ball_launched": self._ball_launched,
            "winning_number": self._winning_number,
            "no_spin": self._no_spin,
            "void": self._void,
            "fault": self._fault,
            "fault_cleared": self._fault_cleared,
        }

    @classmethod
    def from_rules(
        cls, table_id: str, rules: Mapping[str, Any], *, source: str, next_round: int = 1
    ) -> RouletteEngine:
        """Build from a raw ``[rules]`` mapping (raises ConfigError naming key and file)."""
        parsed = validate_section(RouletteRules, rules, source=source, section="rules")
        return cls(table_id, parsed, next_round=next_round)

    @property
    def rules(self) -> RouletteRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic.

        ``rounds`` counts rounds opened by this engine; ``last_number`` is the last *settled*
        number (a void's number was never a result).
        """
        return {
            "phase": self.phase,
            "round": self._round,
            "rounds": self._rounds,
            "faults": sorted(self._faults),
            "ball_in_play": self._ball_in_play,
            "last_number": self._last_number,
        }

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        """Feed one event, get what it concludes: at most one void of an abandoned round, then
        at most one outcome or verdict for the event itself. Never raises for a bad sequence."""
        return self._dispatch(event)

    # -- handlers (each fires the machine first: a refusal must leave no partial change) -------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        refused = self._open_refused(event)
        if refused is not None:
            return [refused]
        self._machine.fire("round_open")
        outputs: list[EngineOutput] = []
        if self._round is not None:
            outputs.append(self._end("void", VOID_ROUND_ABANDONED, None, event))
        self._round = self._ids.take(event.round)
        self._rounds += 1
        return outputs

    def _bets_closed(self, event: TableEvent) -> list[EngineOutput]:
        self._machine.fire("bets_closed")
        return []

    def _ball_launched(self, event: BallLaunched) -> list[EngineOutput]:
        # A second launch in one round is the wheel retrying (SS2 warn 8): the last one counts.
        self._machine.fire("ball_launched")
        self._ball_in_play = True
        self._launch = event
        return []

    def _winning_number(self, event: WinningNumber) -> list[EngineOutput]:
        was = self.phase
        self._machine.fire("winning_number")
        reported = {"number": event.number}
        if was == OPEN:
            # seed-000 V-RL-3, seed-004 ROU 2.1.1: a result is valid only after "no more bets".
            return [self._end("void", VOID_RESULT_BEFORE_BETS_CLOSED, reported, event)]
        spin = self._with_launch_data(event)
        code = check_spin(self._rules, spin)
        if code is not None:
            return [self._end("void", code, reported, event)]
        result = spin_result(
            self._rules.variant,
            spin.number,
            spin.revolutions,
            ball_direction=spin.ball_direction,
            rotor_direction=spin.rotor_direction,
            spin=spin.spin,
        )
        self._last_number = spin.number
        return [self._end("settled", None, result, event)]

    def _no_spin(self, event: NoSpin) -> list[EngineOutput]:
        # seed-000 RL-I1/RL-I2, regulatory R2: "no spin", no payouts, a new spin follows.
        self._machine.fire("no_spin")
        return [self._end("void", event.reason.strip() or VOID_NO_SPIN_DEFAULT, None, event)]

    def _void(self, event: Void) -> list[EngineOutput]:
        # seed-000 V-RL-5 / GEN-11: a supervisor's decision, with its reason code.
        self._machine.fire("void")
        return [self._end("void", event.reason.strip() or VOID_SUPERVISOR_DEFAULT, None, event)]

    def _fault(self, event: Fault) -> list[EngineOutput]:
        was = self.phase
        now = self._machine.fire("fault")
        self._faults.add(event.code)
        if was != IDLE and now == IDLE:
            # seed-001 G1/G3, seed-004 ROU 2.1.6 (void_on_fault); regulatory R14 latches it.
            return [self._end("void", VOID_DEVICE_FAULT, None, event)]
        return []

    # -- helpers --------------------------------------------------------------------------------

    def _with_launch_data(self, event: WinningNumber) -> WinningNumber:
        """Fill the rotor direction and spin number from this round's launch when the result
        lacks them: the rotor cannot reverse mid-spin (seed-001 §4.1 L95), so the direction
        seen at launch still holds for the direction check."""
        launch = self._launch
        if launch is None:
            return event
        return dataclasses.replace(
            event,
            rotor_direction=event.rotor_direction or launch.rotor_direction,
            spin=event.spin if event.spin is not None else launch.spin,
        )

    def _end(
        self,
        status: Literal["settled", "void"],
        reason: str | None,
        result: dict[str, Any] | None,
        event: TableEvent,
    ) -> Outcome:
        assert self._round is not None, "only a round in progress can end"
        outcome = Outcome(
            table=self._table,
            game=self.game,
            round=self._round,
            status=status,
            reason=reason,
            result=result,
            ts=event.ts,
        )
        self._ids.ended(self._round)
        self._round = None
        self._ball_in_play = False
        self._launch = None
        return outcome
