"""The money-wheel round engine: the strict machine of :mod:`.machine` around the pure rules of
:mod:`tablectl.controller.games.wheel`.

- A spin against the wheel's rules is a ``respin`` verdict, bets standing (seed-001 §5.4 L2471,
  L2091, C6, C37).
- Multiplier segments chain (Dream Catcher L1754); ``on_fault = "void"`` per L1768, L2097.
- A ``segment`` may come without a ``wheel_spin`` (sensors that report stops only).
- RNG overlays: one ``rng_draw`` before the spin or stop (seed-001 §2.2 (d), L3959, L4339).
- Monopoly's dice bonus keeps the round open for the ``dice`` (:mod:`.bonus`).

Pure; :meth:`WheelEngine.apply` never raises."""

from __future__ import annotations

from typing import Any

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    Dice,
    Direction,
    Fault,
    NoSpin,
    RngDraw,
    Segment,
    TableEvent,
    WheelSpin,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome
from tablectl.controller.engines.base import IDLE, OPEN, FaultAnswer
from tablectl.controller.engines.wheel.bonus import BonusRounds
from tablectl.controller.engines.wheel.machine import (
    AFTER_BETS,
    BONUS_HELD,
    CHAINED,
    HELD,
    IN_PLAY,
    MACHINE,
    RESPIN,
    RULE_DIVIDER,
    RULE_SPIN,
    SEGMENT_OUT_OF_RANGE,
    VOID_RESULT_BEFORE_BETS_CLOSED,
)
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.monopoly_bonus import (
    DiceBonus,
    bonus_result,
    start_bonus,
)
from tablectl.controller.games.rng import RNG_AFTER_RESULT, RNG_MISSING, Stage, picks_data
from tablectl.controller.games.wheel import (
    RESPIN_ON_DIVIDER,
    Overlay,
    WheelRules,
    check_overlay,
    check_spin,
    draw_order,
    overlay_data,
    spin_result,
)
from tablectl.controller.games.wheel.overlay import NAMES, RULES


class WheelEngine(BonusRounds):
    """One money-wheel table's rounds, built as :class:`~tablectl.controller.engines.EngineClass`
    says (``game``: the rules' variant)."""

    _FAULT_IN_PLAY = IN_PLAY
    _HELD = (HELD, BONUS_HELD)
    _WAITING = "the spin"

    def __init__(
        self,
        table_id: str,
        rules: WheelRules,
        *,
        game: str | None = None,
        next_round: int = 1,
    ) -> None:
        super().__init__(
            table_id,
            game or rules.variant or "wheel",
            MACHINE,
            handlers={
                "wheel_spin": self._wheel_spin,
                "segment": self._segment,
                "no_spin": self._no_spin,
                "confirm": self._confirm,
                "dice": self._dice,
                "roll_started": self._roll_started,
                "roll_invalid": self._roll_invalid,
                "rng_draw": self._rng_draw,
            },
            family="wheel",
            next_round=next_round,
        )
        self._rules = rules
        self._spins: list[dict[str, Any]] = []
        self._respins = 0
        self._spin_direction: Direction | None = None
        self._fault_hold = False
        self._held_segment: Segment | None = None
        self._last: dict[str, Any] | None = None
        self._bonus: DiceBonus | None = None
        self._held_roll: tuple[tuple[int, ...], str | None] | None = None
        self._overlay: Overlay | None = None
        """The round's RNG draw (``[rules] rng``), once checked."""
        self._spun = False
        """The wheel was set spinning (or stopped) since bets closed: a draw due before the spin
        is late (Music Wheel L4339)."""
        self._stopped = False
        """A stop was reported this round: its segment is known, a draw is late (L3959)."""
        self._rng_hold = False
        """Held because the result came without the draw (``on_rng_missing = "hold"``)."""
        self._last_round: str | None = None

    @property
    def rules(self) -> WheelRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """``bonus`` and ``rng`` appear only where the table has them, so every other wheel's state
        stays as it was."""
        snap = self._state(
            spins=[dict(s) for s in self._spins],
            multiplier=self._multiplier(),
            respins=self._respins,
            held=self._fault_hold or self._rng_hold,
            last=dict(self._last) if self._last is not None else None,
        )
        if self._rules.dice_bonus:
            snap["bonus"] = bonus_result(self._bonus) if self._bonus is not None else None
        if self._rules.rng != "none":
            snap["rng"] = overlay_data(self._overlay) if self._overlay is not None else None
        return snap

    # -- handlers ---------------------------------------------------------------------------------

    def _wheel_spin(self, event: WheelSpin) -> list[EngineOutput]:
        betting = self.phase == OPEN
        self._machine.fire("wheel_spin")
        self._spun = self._spun or not betting
        # The 19-sector wheel turns "counterclockwise, then clockwise" (L2471): the last counts.
        self._spin_direction = event.direction
        return []

    def _segment(self, event: Segment) -> list[EngineOutput]:
        phase = self.phase
        if phase == OPEN:
            # A result is valid only after bets close (as roulette's seed-000 V-RL-3).
            self._machine.fire("void")
            reported = {"index": event.index, "segment": self._label(event.index)}
            return [self._end("void", VOID_RESULT_BEFORE_BETS_CLOSED, event, reported)]
        if phase not in (*AFTER_BETS, HELD):
            self._machine.fire("segment")  # idle, bonus: refused
        if not 0 <= event.index < self._rules.size:
            return [
                self._verdict(
                    SEGMENT_OUT_OF_RANGE,
                    f"segment index {event.index} is not on a {self._rules.size}-segment wheel",
                    event,
                    "seed-001 §5 (layout from config)",
                    index=event.index,
                )
            ]
        if phase == HELD and self._rng_hold:
            return [
                self._decision_pending(
                    event, "segment refused: the round's result waits for a supervisor"
                )
            ]
        self._spun = self._stopped = True
        if phase == HELD:
            self._machine.fire("held_segment")
            self._held_segment = event
            return []
        return self._land(event)

    def _no_spin(self, event: NoSpin) -> list[EngineOutput]:
        if self.phase not in AFTER_BETS:
            self._machine.fire("no_spin")  # refused
        self._respins += 1
        self._spin_direction = None
        self._machine.fire("respin_chain" if self._spins else "respin")
        self._spun = True
        reason = event.reason.strip() or "no_spin"
        return [
            self._verdict(
                RESPIN, f"spin repeated ({reason}): bets stand", event, RULE_SPIN, reason=reason
            )
        ]

    def _confirm(self, event: TableEvent) -> list[EngineOutput]:
        phase = self.phase
        if phase == CHAINED and not (
            self._spins and self._spins[-1]["segment"] in self._rules.open_chain
        ):
            raise TransitionNotAllowedError("wheel: confirm ends only an open chain (C25)")
        self._machine.fire("confirm")
        if self._rng_hold:
            # The organizer settles the result without the overlay (G4): the base odds pay.
            self._rng_hold = False
            self._machine.fire("settle")
            return [self._settle(event)]
        if phase == CHAINED:
            # Monopoly Chance with a cash card: no further spin, the round ends here (C25).
            self._machine.fire("settle")
            return [self._settle(event)]
        self._fault_hold = False
        if phase == BONUS_HELD:
            held_roll, self._held_roll = self._held_roll, None
            return self._roll(Dice(dice=held_roll[0], ts=held_roll[1])) if held_roll else []
        held, self._held_segment = self._held_segment, None
        # Back to where the fault came (a chain, or the first spin), then judge the held segment.
        self._machine.fire("resume_chain" if self._spins else "resume")
        return self._land(held) if held is not None else []

    def _on_fault(self, event: Fault, phase: str) -> FaultAnswer:
        if self._rules.on_fault == "void":
            # Dream Catcher L1768, Crazy Time L2097: "Any malfunction cancels the game round …
            # Bets are returned"; seed-001 G1.
            return "void"
        self._fault_hold = True
        self._machine.fire("hold")
        return "hold"

    # -- the RNG overlay (games/wheel/overlay.py, games/rng.py) ------------------------------------

    def _rng_draw(self, event: RngDraw) -> list[EngineOutput]:
        refused = draw_order(self._rules, self._rng_stage(), drawn=self._overlay is not None)
        rule = RULES[self._rules.rng]
        if refused is not None:
            code, message = refused
            data: dict[str, Any] = {"numbers": picks_data(event.numbers)}
            if code == RNG_AFTER_RESULT and self.phase == IDLE:
                data["last_round"] = self._last_round
            return [self._verdict(code, message, event, rule, **data)]
        self._machine.fire("rng_draw")  # idle before any round, bonus: refused
        checked = check_overlay(self._rules, event.numbers)
        if isinstance(checked, Finding):
            return [self._finding(checked, event)]
        self._overlay = checked
        return []

    def _rng_stage(self) -> Stage:
        """A stop makes any draw late (L3959 "before the wheel stops"), a spin one due before the
        spin (L4339)."""
        if self.phase == OPEN:
            return "betting"
        if self.phase == IDLE:
            return "ended" if self._last_round is not None else "none"
        if self._stopped:
            return "result"
        return "spinning" if self._spun and self._rules.rng_before == "spin" else "closed"

    def _rng_missing(self, event: Segment) -> list[EngineOutput]:
        """The round's result came without its draw: void, or hold for a supervisor."""
        name = NAMES[self._rules.rng]
        missing = self._verdict(
            RNG_MISSING, f"a result with no {name} drawn", event, RULES[self._rules.rng],
            index=event.index, segment=self._spins[-1]["segment"],
        )  # fmt: skip
        if self._rules.on_rng_missing == "void":
            self._machine.fire("void")
            return [missing, self._end("void", RNG_MISSING, event, self._partial())]
        self._machine.fire("hold")
        self._rng_hold = True
        return [missing]

    # -- helpers ----------------------------------------------------------------------------------

    def _land(self, event: Segment) -> list[EngineOutput]:
        """Judge where the wheel stopped (the index is on the wheel; the machine allows it)."""
        reason = check_spin(self._rules, event, self._spin_direction)
        direction = event.direction or self._spin_direction
        self._spin_direction = None
        if reason is not None:
            self._respins += 1
            self._machine.fire("respin_chain" if self._spins else "respin")
            return [
                self._verdict(
                    RESPIN,
                    f"spin repeated ({reason}): bets stand",
                    event,
                    RULE_DIVIDER if reason == RESPIN_ON_DIVIDER else RULE_SPIN,
                    reason=reason,
                    index=event.index,
                    revolutions=event.revolutions,
                    direction=direction,
                )
            ]
        label = self._rules.segments[event.index]
        self._spins.append(
            {
                "segment": label,
                "index": event.index,
                "revolutions": event.revolutions,
                "direction": direction,
            }
        )
        if label in self._rules.multipliers:
            # Dream Catcher L1754: bets stay, no new bets, the wheel is spun again.
            self._machine.fire("chain")
            return []
        if self._rules.rng != "none" and self._overlay is None:
            return self._rng_missing(event)  # seed-001 §2.2 (d): committed before the result
        if self._rules.dice_bonus and label in self._rules.bonus_rolls:
            # Monopoly L1897: the round goes on with the bonus's 2 or 4 rolls of the dice.
            self._machine.fire("bonus")
            self._bonus = start_bonus(label, self._rules.bonus_rolls[label], self._rules.board)
            return []
        self._machine.fire("settle")
        return [self._settle(event)]

    def _settle(self, event: TableEvent) -> Outcome:
        result = spin_result(self._rules, self._spins, respins=self._respins)
        if self._bonus is not None:
            result["bonus"] = bonus_result(self._bonus)
        if self._rules.rng != "none":
            landed = (result["segment"], result["index"])
            overlay = self._overlay
            result["rng"] = overlay_data(overlay, landed) if overlay is not None else None
        self._last = {"segment": result["segment"], "multiplier": result["multiplier"]}
        return self._end("settled", None, event, result)

    def _multiplier(self) -> int:
        product = 1
        for spin in self._spins:
            product *= self._rules.multipliers.get(spin["segment"], 1)
        return product

    def _label(self, index: int) -> str | None:
        return self._rules.segments[index] if 0 <= index < self._rules.size else None

    def _partial(self) -> dict[str, Any] | None:
        if not self._spins and not self._respins and self._overlay is None:
            return None
        partial = {"spins": [dict(s) for s in self._spins], "respins": self._respins}
        if self._bonus is not None:
            partial["bonus"] = bonus_result(self._bonus)
        if self._overlay is not None:
            partial["rng"] = overlay_data(self._overlay)
        return partial

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        self._overlay, self._spun, self._stopped, self._rng_hold = None, False, False, False
        self._spins = []
        self._respins = 0
        self._spin_direction = None
        self._fault_hold = False
        self._held_segment = None
        self._bonus = None
        self._held_roll = None
