"""The ball-draw round engine: a strict state machine around
:class:`tablectl.controller.games.draw_round.Draw`.

Phases (the machine's states)::

idle ─round_open─▶ open ─bets_closed─▶ closed ─ball─▶ drawing ─settle─▶ drawn ─round_open─▶ … │
│  ╲            │   ▲              │ │                    │   hold        hold resume        └
ball: extra_ball │                    │     ╲         ▼   │ └── void ◀───────────┴────── held
───────┘   (held: confirm / void)

Rule anchors: Cash or Crash ends per seed-001 §6.13 L4407; extra balls are ignored (L2319); no
round while a fault is latched (R14, R18, R21); mixing timed by ``ts`` (R16). Codes:
docs/verdicts.md, "Ball draws". Never raises."""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.events import BallDrawn, Fault, Mixing, RoundOpen, TableEvent
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.core.time import seconds_between
from tablectl.controller.engines.base import (
    IDLE,
    OPEN,
    FaultAnswer,
    RoundEngine,
)
from tablectl.controller.games.draw import DrawRules
from tablectl.controller.games.draw_round import Draw

CLOSED: Final = "closed"
DRAWING: Final = "drawing"
HELD: Final = "held"
DRAWN: Final = "drawn"

# Void reasons.
BALL_BEFORE_BETS_CLOSED: Final = "ball_before_bets_closed"
MIXING_TOO_SHORT: Final = "mixing_too_short"
DRAW_NOT_TAKEN_PLACE: Final = "draw_not_taken_place"

# Verdict codes (the read findings are in tablectl.controller.games.draw).
EXTRA_BALL: Final = "extra_ball"

_IN_DRAW: Final = (CLOSED, DRAWING, HELD)


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(source: str, event: str, target: str) -> None:
        t.append(Transition(source, event, target))

    every = (IDLE, OPEN, CLOSED, DRAWING, HELD, DRAWN)
    for phase in every:
        # Latches and drum state sit beside the phase.
        for event in ("fault", "fault_cleared", "mixing", "tube_full"):
            add(phase, event, phase)
    for phase in (IDLE, DRAWN, OPEN, CLOSED, DRAWING):
        # From a round in progress, round_open abandons it (void round_abandoned).
        add(phase, "round_open", OPEN)
    add(OPEN, "bets_closed", CLOSED)
    for phase in (OPEN, *_IN_DRAW):
        add(phase, "void", IDLE)
    for phase in (CLOSED, DRAWING):
        add(phase, "ball", DRAWING)
    for phase in _IN_DRAW:
        add(phase, "hold", HELD)
        add(phase, "settle", DRAWN)
    add(HELD, "confirm", HELD)
    add(HELD, "resume", DRAWING)
    add(DRAWN, "extra", DRAWN)
    return MachineDefinition("draw", states=every, initial=IDLE, transitions=t)


_MACHINE: Final = _definition()


class DrawEngine(RoundEngine):
    """One ball-draw table's rounds, built as :class:`~tablectl.controller.engines.EngineClass`
    says (``game``: the rules' variant)."""

    _FAULT_IN_PLAY = _IN_DRAW
    _FAULT_WHEN = "during the draw"
    _HELD = (HELD,)
    _WAITING = "the draw"

    def __init__(
        self,
        table_id: str,
        rules: DrawRules,
        *,
        game: str | None = None,
        next_round: int = 1,
    ) -> None:
        super().__init__(
            table_id,
            game or rules.variant or "draw",
            _MACHINE,
            handlers={
                "mixing": self._mixing,
                "ball_drawn": self._ball_drawn,
                "tube_full": self._tube_full,
                "confirm": self._confirm,
            },
            family="draw",
            next_round=next_round,
        )
        self._rules = rules
        self._draw = Draw(rules)
        self._first_ball = True
        self._fault_hold = False
        self._ended = False
        self._mixing_since: str | None = None
        self._mixing_until: str | None = None
        self._mixing_on = False
        self._last_round: str | None = None
        self._last_balls: list[int] = []

    @property
    def rules(self) -> DrawRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic (drawn balls are public)."""
        return self._state(
            mixing=self._mixing_on,
            balls=self._draw.balls() if self._round is not None else [],
            held=self._held_for(),
            last_round=self._last_round,
            last_balls=list(self._last_balls),
        )

    # -- handlers ---------------------------------------------------------------------------------

    def _round_opened(self, event: RoundOpen) -> None:
        self._draw = Draw(self._rules)
        self._first_ball = True
        self._fault_hold = False
        self._ended = False

    def _abandoned(self) -> dict[str, Any] | None:
        return None  # an abandoned draw's void shows no balls (its supervisor void does)

    def _mixing(self, event: Mixing) -> list[EngineOutput]:
        self._machine.fire("mixing")
        if event.on and not self._mixing_on:
            self._mixing_since, self._mixing_until = event.ts, None
        elif not event.on and self._mixing_on:
            self._mixing_until = event.ts
        self._mixing_on = event.on
        return []

    def _ball_drawn(self, event: BallDrawn) -> list[EngineOutput]:
        phase = self.phase
        if phase == OPEN:
            # Bets close before the first ball (seed-001 L2859 "Once the betting time is over …
            # balls are drawn"; contracts §6; as roulette's seed-000 V-RL-3).
            self._machine.fire("void")
            return [self._end("void", BALL_BEFORE_BETS_CLOSED, event, {"ball": event.ball})]
        if phase == DRAWN:
            return self._extra(event)
        if phase not in _IN_DRAW:
            self._machine.fire("ball")  # idle: refused (unexpected_event)
        first, self._first_ball = self._first_ball, False
        if first and self._mixing_short(event):
            # The first ball out of the drum, whatever becomes of its read, ends the mixing.
            self._machine.fire("void")
            return [self._end("void", MIXING_TOO_SHORT, event, {"ball": event.ball})]
        outputs: list[EngineOutput] = [self._finding(f, event) for f in self._draw.read(event)]
        return outputs + self._progress(event)

    def _tube_full(self, event: TableEvent) -> list[EngineOutput]:
        phase = self.phase
        self._machine.fire("tube_full")
        if phase not in _IN_DRAW:
            return []
        # The drum says the draw is over (tube/cylinders full).
        self._ended = True
        return self._progress(event)

    def _confirm(self, event: TableEvent) -> list[EngineOutput]:
        self._machine.fire("confirm")  # only while held
        if self._fault_hold:
            # seed-001 G3 / C42: the supervisor judges the fault did not affect the draw.
            self._fault_hold = False
        else:
            self._draw.confirm()
        return self._progress(event)

    def _on_fault(self, event: Fault, phase: str) -> FaultAnswer:
        if self._rules.on_fault == "void":
            return "void"  # seed-001 G1 (technical shortcomings → refund)
        self._fault_hold = True
        if phase != HELD:
            self._machine.fire("hold")
        return "hold"

    # -- helpers ----------------------------------------------------------------------------------

    def _progress(self, event: TableEvent) -> list[EngineOutput]:
        """Move the machine to where the draw now stands; settle or void when it is over."""
        if self._fault_hold or self._draw.held:
            if self.phase != HELD:
                self._machine.fire("hold")
            return []
        if self._draw.complete(ended=self._ended):
            self._machine.fire("settle")
            return self._settle(event)
        if self._ended:
            # seed-001 §6.2 L2319: "The draw is deemed to have taken place when at least 7 balls
            # have been drawn"; fewer has no stated remedy (C38): void, stakes returned (G1).
            self._machine.fire("void")
            partial = self._partial() or {}
            partial["expected"] = self._rules.slots_min
            return [self._end("void", DRAW_NOT_TAKEN_PLACE, event, partial)]
        if self.phase == HELD:
            self._machine.fire("resume")
        elif self.phase == CLOSED:
            self._machine.fire("ball")
        return []

    def _settle(self, event: TableEvent) -> list[EngineOutput]:
        result, extras = self._draw.result()
        self._last_balls = [*result["balls"], *result["bonus"]]
        outputs: list[EngineOutput] = [self._end("settled", None, event, result)]
        if self._rules.extras == "flag":
            outputs += [
                self._verdict(
                    EXTRA_BALL,
                    f"ball {ball} is past the count: ignored",
                    event,
                    "seed-001 §6.2 L2319",
                    ball=ball,
                    round=self._last_round,
                )
                for ball in extras
            ]
        return outputs

    def _extra(self, event: BallDrawn) -> list[EngineOutput]:
        self._machine.fire("extra")
        if self._rules.extras == "ignore":
            return []
        data = {"ball": event.ball, "position": event.position, "round": self._last_round}
        if event.ball in self._last_balls:
            return [
                self._verdict(
                    "duplicate_ball",
                    f"ball {event.ball} is already in the draw of {self._last_round}",
                    event,
                    "contracts §6",
                    **data,
                )
            ]
        return [
            self._verdict(
                EXTRA_BALL,
                f"ball {event.ball} is past the count: ignored (the outcome stands)",
                event,
                "seed-001 §6.2 L2319",
                **data,
            )
        ]

    def _mixing_short(self, event: BallDrawn) -> bool:
        """Whether the mixing before this first ball was shorter than the minimum (R16)."""
        minimum = self._rules.min_mixing_seconds
        if minimum <= 0:
            return False
        if self._mixing_since is None:
            return True
        end = self._mixing_until if not self._mixing_on else event.ts
        seconds = seconds_between(self._mixing_since, end)
        # An unknown duration cannot show the minimum was met: void rather than guess.
        return seconds is None or seconds < minimum

    def _held_for(self) -> list[dict[str, Any]]:
        held = self._draw.pending() if self._round is not None else []
        if self._fault_hold:
            held = [{"reason": "device_fault"}, *held]
        return held

    def _partial(self) -> dict[str, Any] | None:
        balls = self._draw.balls()
        return {"balls": balls} if balls else None

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        if outcome.status == "void":
            self._last_balls = []
        self._fault_hold = False
        self._ended = False

    def _verdict(
        self, code: str, message: str, event: TableEvent, rule: str | None = None, **data: Any
    ) -> Verdict:
        # A verdict may name another round than the one in progress (extra balls: the last one).
        round_id = data.pop("round", None) or self._round
        return Verdict(
            code=code,
            message=message,
            round=round_id,
            rule=rule,
            ts=event.ts,
            data={"event": event.type, "phase": self.phase, **data},
        )
