"""The dice round engine (sic_bo, craps, dice_duel, lightning_dice): a strict state machine around
the pure rules of :mod:`tablectl.controller.games.dice`.

Phases (the machine's states)::

idle ─round_open─▶ open ─bets_closed─▶ closed ─roll_started─▶ rolling │                  ▲  │
rng_draw (lightning)  │ │                  │  └──────── dice ─────────┴─▶ idle (settled) │
└──── re-roll, bets stand ──┘ └── void; dice: void result_before_bets_closed ──▶ idle

``held`` waits for ``confirm`` or ``void``. Results only at rest after a real tumble (seed-001
L2683, L2757, L3069); Lightning's draw stands through re-rolls (L3069, §2.2 (d)); the craps point
is engine state across rounds (L2751–2757); faults latch (R14). Pure; never raises."""

from __future__ import annotations

import dataclasses
from typing import Any, Final, Literal

from tablectl.controller.core.events import Dice, Fault, RngDraw, RollInvalid, TableEvent
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import (
    DEVICE_FAULT,
    IDLE,
    OPEN,
    FaultAnswer,
    RoundEngine,
)
from tablectl.controller.games.dice import (
    CrapsState,
    DiceRules,
    check_picks,
    check_tumble,
    read_dice,
    roll_result,
    tumble_seconds,
)
from tablectl.controller.games.dice.lightning_dice import (
    RNG_AFTER_RESULT,
    RULE,
    Lightning,
    Stage,
    lightning_data,
    rng_order,
)
from tablectl.controller.games.dice.rules import RULE_AT_REST
from tablectl.controller.games.findings import Finding

CLOSED: Final = "closed"
ROLLING: Final = "rolling"
HELD: Final = "held"

# Void reasons (also: a roll_invalid's code with on_roll_invalid = "void", RNG_MISSING).
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"

# Verdict codes (the re-roll and read codes are in tablectl.controller.games.dice).
DUPLICATE_RESULT: Final = "duplicate_result"
RESULT_OUTSIDE_ROUND: Final = "result_outside_round"
ROLL_BEFORE_BETS_CLOSED: Final = "roll_before_bets_closed"
RNG_MISSING: Final = "rng_missing"

RULE_ORDER: Final = "contracts §4.4; R15"

_ROLL: Final = (CLOSED, ROLLING)
"""Bets closed, the result due: a roll may be under way."""


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(sources: tuple[str, ...], event: str, target: str | None = None) -> None:
        t.extend(Transition(s, event, target or s) for s in sources)

    every = (IDLE, OPEN, CLOSED, ROLLING, HELD)
    add(every, "fault")
    add(every, "fault_cleared")
    add((IDLE, OPEN, *_ROLL), "round_open", OPEN)
    add((OPEN,), "bets_closed", CLOSED)
    add((CLOSED,), "rng_draw")
    # Between rounds a roll is only noted: the next stray result is not a repeat of the last one.
    add((IDLE,), "roll_started")
    add(_ROLL, "roll_started", ROLLING)
    add(_ROLL, "reroll", CLOSED)
    add((*_ROLL, HELD), "settle", IDLE)
    add((OPEN, *_ROLL, HELD), "void", IDLE)
    add(_ROLL, "hold", HELD)
    add((HELD,), "held_result")
    add((HELD,), "confirm")
    add((HELD,), "resume", CLOSED)
    return MachineDefinition("dice", states=every, initial=IDLE, transitions=t)


_MACHINE: Final = _definition()


class DiceEngine(RoundEngine):
    """One dice table's rounds (a craps table's rolls), built as
    :class:`~tablectl.controller.engines.EngineClass` says (``game``: the rules' variant)."""

    _FAULT_IN_PLAY = _ROLL
    _HELD = (HELD,)
    _WAITING = "the roll"

    def __init__(
        self, table_id: str, rules: DiceRules, *, game: str | None = None, next_round: int = 1
    ) -> None:
        super().__init__(
            table_id,
            game or rules.variant,
            _MACHINE,
            handlers={
                "rng_draw": self._rng_draw,
                "roll_started": self._roll_started,
                "dice": self._dice,
                "roll_invalid": self._roll_invalid,
                "confirm": self._confirm,
            },
            family="dice",
            next_round=next_round,
        )
        self._rules = rules
        self._craps = CrapsState()
        """Craps: the state the next roll is thrown in (kept across rounds)."""
        self._lightning: Lightning | None = None
        self._rerolls = 0
        self._roll_ts: str | None = None
        self._rolled = False
        """A ``roll_started`` since bets closed or the last re-roll (the roll under way)."""
        self._last_read: tuple[int, ...] | None = None
        """The dice of the last accepted read (a repeat of it between rounds is a duplicate)."""
        self._rolled_since_read = False
        self._hold: Literal["device_fault", "rng_missing"] | None = None
        self._held: tuple[tuple[int, ...], str | None] | None = None
        """A result read while held: the dice in the table's order, and when they came to rest."""
        self._last: dict[str, Any] | None = None
        self._last_round: str | None = None

    @property
    def rules(self) -> DiceRules:
        return self._rules

    @property
    def craps(self) -> CrapsState:
        """The state the next craps roll is thrown in (come out for the other games)."""
        return self._craps

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic."""
        state = self._state(
            rerolls=self._rerolls,
            rolling=self._rolled,
            held=self._hold,
            lightning=self._picks(),
            last=dict(self._last) if self._last is not None else None,
        )
        if self._rules.variant == "craps":
            state["craps"] = self._craps.to_dict()
        return state

    # -- handlers ---------------------------------------------------------------------------------

    def _rng_draw(self, event: RngDraw) -> list[EngineOutput]:
        phase = self.phase
        rolled = self._rolled or self._held is not None
        stage: Stage = (
            "betting" if phase == OPEN
            else "rolling" if phase == ROLLING or (phase == HELD and rolled)
            else "closed" if phase in (CLOSED, HELD)
            else "ended" if self._last_round is not None
            else "none"
        )  # fmt: skip
        drawn = self._lightning is not None
        refused = rng_order(expected=self._rules.rng_draw, stage=stage, drawn=drawn)
        if refused is not None:
            code, message = refused
            data: dict[str, Any] = {"numbers": [dataclasses.asdict(p) for p in event.numbers]}
            if code == RNG_AFTER_RESULT:
                data["last_round"] = self._last_round
            return [self._verdict(code, message, event, RULE, **data)]
        self._machine.fire("rng_draw")  # idle before any round, held: refused
        checked = check_picks(event.numbers)
        if isinstance(checked, Finding):
            return [self._finding(checked, event)]
        self._lightning = checked
        return []

    def _roll_started(self, event: TableEvent) -> list[EngineOutput]:
        if self.phase == OPEN:
            # Bets are taken "until the next dice roll" (L2757), and the lightning strikes first
            # (L3069): a throw while betting is open does not count.
            message = "a roll while betting is open does not count"
            return [self._verdict(ROLL_BEFORE_BETS_CLOSED, message, event, "seed-001 L2757, L3069")]
        if self.phase in _ROLL and self._faults:
            return [self._latched(event, "the roll does not count")]  # on_fault = "reroll"
        self._machine.fire("roll_started")
        self._rolled_since_read = True
        if self._round is not None:
            # A second start (the shaker started again) times the tumble from the last one.
            self._rolled, self._roll_ts = True, event.ts
        return []

    def _dice(self, event: Dice) -> list[EngineOutput]:
        phase = self.phase
        read = read_dice(self._rules, event.dice, event.colors, event.confidence)
        if phase == IDLE:
            return [self._outside_round(event, read)]
        if phase == OPEN:
            # The result is known while bets may still be placed (as roulette's V-RL-3).
            self._machine.fire("void")
            dice = read if isinstance(read, tuple) else event.dice
            self._last_read, self._rolled_since_read = dice, False
            return [self._end("void", VOID_RESULT_BEFORE_BETS_CLOSED, event, self._with(dice))]
        if isinstance(read, Finding):
            return [self._finding(read, event)]
        if phase in _ROLL and self._faults:
            return [self._latched(event, "the result does not count")]  # on_fault = "reroll"
        if self._hold == "rng_missing":  # the result is known: it is not replaced
            return [self._decision_pending(event, "the round's result waits for a supervisor")]
        self._last_read, self._rolled_since_read = read, False
        if phase == HELD:
            self._machine.fire("held_result")
            self._held = (read, event.ts)
            return []
        return self._land(event, read, event.ts)

    def _roll_invalid(self, event: RollInvalid) -> list[EngineOutput]:
        if self.phase not in _ROLL:
            self._machine.fire("roll_invalid")  # refused
        if self._rules.on_roll_invalid == "void":
            self._machine.fire("void")
            return [self._end("void", event.code, event, self._partial())]
        detail = f": {event.detail}" if event.detail else ""
        message = f"roll invalid ({event.code}{detail}): roll again (bets stand)"
        return self._reroll(
            Finding(event.code, RULE_AT_REST, message, {"detail": event.detail}), event
        )

    def _confirm(self, event: TableEvent) -> list[EngineOutput]:
        self._machine.fire("confirm")
        hold, held = self._hold, self._held
        self._hold, self._held = None, None
        if hold == "rng_missing" and held is not None:
            # The organizer settles without lightning numbers (G4): the base odds pay.
            self._machine.fire("settle")
            return [self._settle(event, held[0], (), self._tumble(held[1]))]
        self._machine.fire("resume")
        if held is not None:
            return self._land(event, *held)  # judged as if it came now
        self._rolled, self._roll_ts = False, None  # the dice are rolled again
        return []

    def _on_fault(self, event: Fault, phase: str) -> FaultAnswer:
        if self._rules.on_fault == "void":
            # No dice game has a malfunction clause (§2.2): G1 (L59) "technical shortcomings" →
            # odds of 1, the stake back; G3 (L79).
            return "void"
        if self._rules.on_fault == "reroll":
            # G3 (L79): no result was taken, so the fault cannot affect it: roll again once the
            # device reports it cleared (the roll and its result wait for that: R14).
            message = f"fault {event.code!r} during the roll: roll again once it is cleared"
            found = Finding(DEVICE_FAULT, "seed-001 G3", message, {"fault": event.code})
            return self._reroll(found, event)
        self._hold = "device_fault"
        self._machine.fire("hold")
        return "hold"

    # -- helpers ----------------------------------------------------------------------------------

    def _land(
        self, event: TableEvent, dice: tuple[int, ...], at_rest: str | None
    ) -> list[EngineOutput]:
        """Judge dice at rest (in the table's order) in a round whose bets are closed."""
        seconds = self._tumble(at_rest)
        finding = check_tumble(self._rules, rolled=self._rolled, seconds=seconds)
        if finding is not None:
            return self._reroll(finding, event, dice=list(dice))
        if self._rules.rng_draw and self._lightning is None:
            missing = self._verdict(
                RNG_MISSING, "a result with no lightning numbers drawn", event, RULE,
                dice=list(dice),
            )  # fmt: skip
            if self._rules.on_rng_missing == "void":
                self._machine.fire("void")
                return [missing, self._end("void", RNG_MISSING, event, self._with(dice))]
            self._machine.fire("hold")
            self._hold, self._held = "rng_missing", (dice, at_rest)
            return [missing]
        self._machine.fire("settle")
        return [self._settle(event, dice, self._lightning or (), seconds)]

    def _tumble(self, at_rest: str | None) -> float | None:
        """Seconds from the roll's start to ``at_rest`` (``None``: no roll seen, or no times)."""
        return tumble_seconds(self._roll_ts, at_rest) if self._rolled else None

    def _settle(
        self, event: TableEvent, dice: tuple[int, ...], lightning: Lightning, seconds: float | None
    ) -> Outcome:
        result, self._craps = roll_result(self._rules, dice, craps=self._craps, lightning=lightning)
        result |= {"rerolls": self._rerolls, "tumble_seconds": seconds}
        outcome = self._end("settled", None, event, result)
        self._last = {"round": outcome.round, "dice": list(dice), "total": sum(dice)}
        return outcome

    def _reroll(self, finding: Finding, event: TableEvent, **data: Any) -> list[EngineOutput]:
        """No result: the dice are rolled again in the same round, the bets standing."""
        data = {**finding.data, **data, "reroll": True, "rerolls": self._rerolls + 1}
        verdict = self._verdict(finding.code, finding.message, event, finding.rule, **data)
        self._machine.fire("reroll")
        self._rerolls += 1
        self._rolled, self._roll_ts = False, None
        return [verdict]

    def _outside_round(self, event: Dice, read: tuple[int, ...] | Finding) -> Verdict:
        dice = read if isinstance(read, tuple) else event.dice
        if dice == self._last_read and not self._rolled_since_read:
            message = f"the result of {self._last_round} again, with no roll since: ignored"
            code, data = DUPLICATE_RESULT, {"last_round": self._last_round}
        else:
            code, message, data = RESULT_OUTSIDE_ROUND, "no round in play: ignored", {}
        return self._verdict(code, message, event, RULE_ORDER, dice=list(dice), **data)

    def _picks(self) -> list[dict[str, int]] | None:
        return None if self._lightning is None else lightning_data(self._lightning)

    def _with(self, dice: tuple[int, ...]) -> dict[str, Any]:
        """A void's ``result`` with the dice that came: the round so far and those dice."""
        return {"dice": list(dice), "total": sum(dice), **(self._partial() or {})}

    def _partial(self) -> dict[str, Any] | None:
        """What a void's ``result`` says of the round so far (``None``: nothing)."""
        out: dict[str, Any] = {}
        if self._held is not None:
            out |= {"dice": list(self._held[0]), "total": sum(self._held[0])}
        if self._rerolls:
            out["rerolls"] = self._rerolls
        if self._lightning is not None:
            out["lightning"] = self._picks()
        if self._rules.variant == "craps":
            out |= self._craps.to_dict()  # the point stands: a void roll does not count
        return out or None

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        self._lightning = None
        self._rerolls = 0
        self._rolled, self._roll_ts = False, None
        self._hold, self._held = None, None
