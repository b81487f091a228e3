"""The money-wheel round engine (dream catcher, the 19-sector wheel, crazy time, monopoly, mega
wheel): a strict state machine around the pure rules of :mod:`tablectl.controller.games.wheel`.

Phases (the machine's states)::

    idle ─round_open─▶ open ─bets_closed─▶ closed ─wheel_spin─▶ spinning ─segment─▶ idle (settled)
                        │                    ▲  ▲                 │  │ respin (bets stand)
                        │                    │  └─────────────────┘  │ chain (2x, 7x: no betting)
                        │                    │                       ▼
                        │                    │                   chained ─wheel_spin─▶ spinning …
                        └─ void / segment (result_before_bets_closed) ─▶ idle
    spinning / chained ─segment "2 rolls"/"4 rolls" (dice_bonus)─▶ bonus ─dice … last roll─▶ idle

- A spin that breaks the wheel's rules (pointer on a divider, wrong direction, too few full
  revolutions) is a ``respin`` verdict: the round stays, bets stand, the next spin decides
  (seed-001 §5.4 L2471, L2091, C6, C37). It is never a result.
- A multiplier segment chains the next spin into the same round (Dream Catcher L1754); the round
  ends on a number or bonus segment with the product of the multipliers.
- ``held`` (``on_fault = "decide"``): a fault after bets closed waits for a supervisor; a segment
  reported meanwhile is kept and judged on ``confirm``; ``void`` voids. With ``on_fault = "void"``
  (Dream Catcher L1768, Crazy Time L2097) the round is void ``device_fault``, bets returned.
- A ``segment`` may come without a ``wheel_spin`` (a sensor that reports stops only).
- ``bonus`` (Monopoly, ``dice_bonus = true``): the round stays open for the bonus's ``dice``
  (:mod:`tablectl.controller.games.monopoly_bonus`) and settles on its last roll, the result
  gaining ``bonus``. A ``roll_invalid`` is a re-roll (its code; nothing counted). A fault voids
  or holds it as any spin after bets closed (``bonus_held``: a roll read meanwhile is judged on
  ``confirm``). Dice when no bonus is in play are ``dice_without_bonus``.

Pure: no asyncio, no I/O, no clock. :meth:`WheelEngine.apply` never raises for an event sequence.
"""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    Dice,
    Direction,
    Fault,
    NoSpin,
    RollInvalid,
    RoundOpen,
    Segment,
    TableEvent,
    Void,
    WheelSpin,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import (
    FAULT_LATCHED,
    VOID_ROUND_ABANDONED,
    VOID_SUPERVISOR_DEFAULT,
    RoundEngine,
)
from tablectl.controller.games.monopoly_bonus import (
    RULE_REROLL,
    DiceBonus,
    bonus_result,
    check_roll,
    reroll,
    roll,
    start_bonus,
)
from tablectl.controller.games.wheel import (
    RESPIN_ON_DIVIDER,
    WheelRules,
    check_spin,
    spin_result,
)

__all__ = [
    "DICE_WITHOUT_BONUS",
    "RESPIN",
    "SEGMENT_OUT_OF_RANGE",
    "VOID_RESULT_BEFORE_BETS_CLOSED",
    "WheelEngine",
]

IDLE: Final = "idle"
OPEN: Final = "open"
CLOSED: Final = "closed"
SPINNING: Final = "spinning"
CHAINED: Final = "chained"
HELD: Final = "held"
BONUS: Final = "bonus"
BONUS_HELD: Final = "bonus_held"

# Void reasons.
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"
VOID_DEVICE_FAULT: Final = "device_fault"

# Verdict codes.
RESPIN: Final = "respin"
SEGMENT_OUT_OF_RANGE: Final = "segment_out_of_range"
HOLD_DEVICE_FAULT: Final = "device_fault"
DECISION_PENDING: Final = "decision_pending"
DICE_WITHOUT_BONUS: Final = "dice_without_bonus"

RULE_SPIN: Final = "seed-001 §5.4 L2471, C37"
RULE_DIVIDER: Final = "seed-001 §5.3 L2091, C6"
RULE_BONUS: Final = "seed-001 §5.2 L1891, §7.4"

_OTHER_GAMES: Final = frozenset(
    {
        "card",
        "cut_card",
        "shuffle_started",
        "shuffle_completed",
        "ball_launched",
        "winning_number",
        "ball_drawn",
        "mixing",
        "tube_full",
        "read_error",
        "shoe_removed",
        "shoe_empty",
        "decision",
        "deal_error",
    }
)
_AFTER_BETS: Final = (CLOSED, SPINNING, CHAINED)
_IN_PLAY: Final = (*_AFTER_BETS, BONUS)


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(sources: tuple[str, ...], event: str, target: str | None = None) -> None:
        t.extend(Transition(s, event, target or s) for s in sources)

    every = (IDLE, OPEN, CLOSED, SPINNING, CHAINED, HELD, BONUS, BONUS_HELD)
    add(every, "fault")
    add(every, "fault_cleared")
    add((IDLE, OPEN, *_IN_PLAY), "round_open", OPEN)
    add((OPEN,), "bets_closed", CLOSED)
    add((OPEN, HELD), "wheel_spin")
    add((CLOSED, SPINNING, CHAINED), "wheel_spin", SPINNING)
    add((OPEN, *_IN_PLAY, HELD, BONUS_HELD), "void", IDLE)
    # A landing: the round's result, a re-spin (bets stand), a chained spin, or the dice bonus.
    add((*_IN_PLAY, HELD), "settle", IDLE)
    add((CLOSED, SPINNING, HELD), "respin", CLOSED)
    add((SPINNING, CHAINED, HELD), "respin_chain", CHAINED)
    add((*_AFTER_BETS, HELD), "chain", CHAINED)
    add(_AFTER_BETS, "hold", HELD)
    add((HELD,), "held_segment")
    add((HELD, CHAINED), "confirm")
    add((HELD,), "resume", CLOSED)
    add((HELD,), "resume_chain", CHAINED)
    # Monopoly's dice bonus: its own held state, so that a held bonus takes only dice (and held
    # wheel rounds keep exactly their transitions).
    add(_AFTER_BETS, "bonus", BONUS)
    add((BONUS,), "roll")
    add((BONUS, BONUS_HELD), "roll_started")
    add((BONUS, BONUS_HELD), "roll_invalid")
    add((BONUS,), "hold", BONUS_HELD)
    add((BONUS_HELD,), "held_roll")
    add((BONUS_HELD,), "confirm", BONUS)
    return MachineDefinition("wheel", states=every, initial=IDLE, transitions=t)


_MACHINE: Final = _definition()


class WheelEngine(RoundEngine):
    """One money-wheel table's rounds.

    Args:
        table_id: the table id; round ids are ``f"{table_id}-{n:06d}"``.
        rules: the validated rules (:func:`tablectl.controller.engines.load_rules` builds them
            from a game key and a raw ``[rules]``).
        game: the registry key published in every outcome (default: the rules' variant).
        next_round: ``n`` of the first round id.

    Raises:
        ValueError: ``next_round`` is below 1.
    """

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
            _MACHINE,
            handlers={
                "round_open": self._round_open,
                "bets_closed": self._bets_closed,
                "wheel_spin": self._wheel_spin,
                "segment": self._segment,
                "no_spin": self._no_spin,
                "confirm": self._confirm,
                "void": self._void,
                "fault": self._fault,
                "dice": self._dice,
                "roll_started": self._roll_started,
                "roll_invalid": self._roll_invalid,
            },
            other_games=_OTHER_GAMES,
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
        # A roll read while held, judged on confirm: its faces and time, not the Dice event (whose
        # module the checkpoint's restricted unpickler does not load).
        self._held_roll: tuple[tuple[int, ...], str | None] | None = None

    @property
    def rules(self) -> WheelRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic (``bonus`` only on a dice-bonus table, so
        every other wheel's state stays as it was)."""
        snap = {
            "phase": self.phase,
            "round": self._round,
            "rounds": self._rounds,
            "faults": sorted(self._faults),
            "spins": [dict(s) for s in self._spins],
            "multiplier": self._multiplier(),
            "respins": self._respins,
            "held": self._fault_hold,
            "last": dict(self._last) if self._last is not None else None,
        }
        if self._rules.dice_bonus:
            snap["bonus"] = bonus_result(self._bonus) if self._bonus is not None else None
        return snap

    # -- handlers ---------------------------------------------------------------------------------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        if self.phase in (HELD, BONUS_HELD):
            return [
                self._verdict(
                    DECISION_PENDING, "round not opened: the spin waits for a supervisor", event,
                    "seed-001 G4, C42",
                )
            ]  # fmt: skip
        refused = self._open_refused(event)
        if refused is not None:
            return [refused]
        self._machine.fire("round_open")
        outputs: list[EngineOutput] = []
        if self._round is not None:
            outputs.append(self._end("void", VOID_ROUND_ABANDONED, event, self._partial()))
        self._take_round(event)
        return outputs

    def _bets_closed(self, event: TableEvent) -> list[EngineOutput]:
        if self.phase == OPEN and self._faults:
            faults = ", ".join(sorted(self._faults))
            return [
                self._verdict(
                    FAULT_LATCHED, f"bets stay open: faults latched ({faults})", event, "R14"
                )
            ]
        self._machine.fire("bets_closed")
        return []

    def _wheel_spin(self, event: WheelSpin) -> list[EngineOutput]:
        self._machine.fire("wheel_spin")
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
        if phase not in (*_AFTER_BETS, HELD):
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
        if phase == HELD:
            self._machine.fire("held_segment")
            self._held_segment = event
            return []
        return self._land(event)

    def _no_spin(self, event: NoSpin) -> list[EngineOutput]:
        if self.phase not in _AFTER_BETS:
            self._machine.fire("no_spin")  # refused
        self._respins += 1
        self._spin_direction = None
        self._machine.fire("respin_chain" if self._spins else "respin")
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

    def _void(self, event: Void) -> list[EngineOutput]:
        self._machine.fire("void")
        reason = event.reason.strip() or VOID_SUPERVISOR_DEFAULT
        return [self._end("void", reason, event, self._partial())]

    def _fault(self, event: Fault) -> list[EngineOutput]:
        phase = self.phase
        self._machine.fire("fault")
        self._faults.add(event.code)
        if phase not in _IN_PLAY:
            return []  # betting, between rounds, or already held: latched only
        if self._rules.on_fault == "void":
            # Dream Catcher L1768, Crazy Time L2097: "Any malfunction cancels the game round …
            # Bets are returned"; seed-001 G1.
            self._machine.fire("void")
            return [self._end("void", VOID_DEVICE_FAULT, event, self._partial())]
        self._fault_hold = True
        self._machine.fire("hold")
        return [
            self._verdict(
                HOLD_DEVICE_FAULT,
                f"fault {event.code!r} after bets closed: confirm to go on, or void",
                event,
                "seed-001 G3, G4, C42",
                fault=event.code,
            )
        ]

    # -- Monopoly's dice bonus (games/monopoly_bonus.py) -------------------------------------------

    def _dice(self, event: Dice) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        finding = check_roll(event.dice)
        if finding is not None:
            return [self._finding(finding, event)]  # not counted; a corrected reading may follow
        if self.phase == BONUS_HELD:
            # As a held segment: kept, and counted only if a supervisor confirms (G3, G4).
            self._machine.fire("held_roll")
            self._held_roll = (event.dice, event.ts)
            return []
        return self._roll(event)

    def _roll_started(self, event: TableEvent) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        self._machine.fire("roll_started")
        return []

    def _roll_invalid(self, event: RollInvalid) -> list[EngineOutput]:
        if self._bonus is None:
            return [self._no_bonus(event)]
        self._machine.fire("roll_invalid")
        # The dice are rolled again: a roll kept while held is replaced by the re-roll.
        self._bonus, self._held_roll = reroll(self._bonus), None
        # Coded as a dice table's re-roll (docs/games/dice.md): the reader's code, data.reroll.
        message = f"roll gives no result ({event.code}): rolled again, bets stand"
        data = {"reroll": True, "rerolls": self._bonus.rerolls, "detail": event.detail}
        return [self._verdict(event.code, message, event, RULE_REROLL, **data)]

    def _roll(self, event: Dice) -> list[EngineOutput]:
        """Count one roll of two dice; the last one due settles the round."""
        assert self._bonus is not None, "only a bonus in play rolls"
        after = roll(self._bonus, event.dice)
        self._machine.fire("settle" if after.done else "roll")
        self._bonus = after
        return [self._settle(event)] if after.done else []

    def _no_bonus(self, event: TableEvent) -> Verdict:
        """A dice table's event with no bonus in play: refused, the round (if any) unchanged."""
        why = "no dice bonus in play" if self._rules.dice_bonus else "no dice bonus at this table"
        return self._verdict(
            DICE_WITHOUT_BONUS, f"{event.type!r} refused: {why}", event, RULE_BONUS,
            dice_bonus=self._rules.dice_bonus,
        )  # fmt: skip

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
        if not self._spins and not self._respins:
            return None
        partial = {"spins": [dict(s) for s in self._spins], "respins": self._respins}
        if self._bonus is not None:
            partial["bonus"] = bonus_result(self._bonus)
        return partial

    def _round_ended(self, outcome: Outcome) -> None:
        del outcome
        self._spins = []
        self._respins = 0
        self._spin_direction = None
        self._fault_hold = False
        self._held_segment = None
        self._bonus = None
        self._held_roll = None
