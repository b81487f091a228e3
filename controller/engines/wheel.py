"""The money-wheel round engine (dream catcher, the 19-sector wheel, crazy time, monopoly, mega
wheel): a strict state machine around the pure rules of :mod:`tablectl.controller.games.wheel`.

Phases (the machine's states)::

    idle ─round_open─▶ open ─bets_closed─▶ closed ─wheel_spin─▶ spinning ─segment─▶ idle (settled)
                        │                    ▲  ▲                 │  │ respin (bets stand)
                        │                    │  └─────────────────┘  │ chain (2x, 7x: no betting)
                        │                    │                       ▼
                        │                    │                   chained ─wheel_spin─▶ spinning …
                        └─ void / segment (result_before_bets_closed) ─▶ idle

- A spin that breaks the wheel's rules (pointer on a divider, wrong direction, too few full
  revolutions) is a ``respin`` verdict: the round stays, bets stand, the next spin decides
  (seed-001 §5.4 L2471, L2091, C6, C37). It is never a result.
- A multiplier segment chains the next spin into the same round (Dream Catcher L1754); the round
  ends on a number or bonus segment with the product of the multipliers.
- ``held`` (``on_fault = "decide"``): a fault after bets closed waits for a supervisor; a segment
  reported meanwhile is kept and judged on ``confirm``; ``void`` voids. With ``on_fault = "void"``
  (Dream Catcher L1768, Crazy Time L2097) the round is void ``device_fault``, bets returned.
- A ``segment`` may come without a ``wheel_spin`` (a sensor that reports stops only).

Pure: no asyncio, no I/O, no clock. :meth:`WheelEngine.apply` never raises for an event sequence.
"""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    Direction,
    Fault,
    NoSpin,
    RoundOpen,
    Segment,
    TableEvent,
    Void,
    WheelSpin,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome
from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import (
    FAULT_LATCHED,
    VOID_ROUND_ABANDONED,
    VOID_SUPERVISOR_DEFAULT,
    RoundEngine,
)
from tablectl.controller.games.wheel import (
    RESPIN_ON_DIVIDER,
    WheelRules,
    check_spin,
    spin_result,
)

__all__ = [
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

# Void reasons.
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"
VOID_DEVICE_FAULT: Final = "device_fault"

# Verdict codes.
RESPIN: Final = "respin"
SEGMENT_OUT_OF_RANGE: Final = "segment_out_of_range"
HOLD_DEVICE_FAULT: Final = "device_fault"
DECISION_PENDING: Final = "decision_pending"

RULE_SPIN: Final = "seed-001 §5.4 L2471, C37"
RULE_DIVIDER: Final = "seed-001 §5.3 L2091, C6"

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


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(sources: tuple[str, ...], event: str, target: str | None = None) -> None:
        t.extend(Transition(s, event, target or s) for s in sources)

    every = (IDLE, OPEN, CLOSED, SPINNING, CHAINED, HELD)
    add(every, "fault")
    add(every, "fault_cleared")
    add((IDLE, OPEN, *_AFTER_BETS), "round_open", OPEN)
    add((OPEN,), "bets_closed", CLOSED)
    add((OPEN, HELD), "wheel_spin")
    add((CLOSED, SPINNING, CHAINED), "wheel_spin", SPINNING)
    add((OPEN, *_AFTER_BETS, HELD), "void", IDLE)
    # A landing: the round's result, a re-spin (bets stand), or a chained spin.
    add((*_AFTER_BETS, HELD), "settle", IDLE)
    add((CLOSED, SPINNING, HELD), "respin", CLOSED)
    add((SPINNING, CHAINED, HELD), "respin_chain", CHAINED)
    add((*_AFTER_BETS, HELD), "chain", CHAINED)
    add(_AFTER_BETS, "hold", HELD)
    add((HELD,), "held_segment")
    add((HELD, CHAINED), "confirm")
    add((HELD,), "resume", CLOSED)
    add((HELD,), "resume_chain", CHAINED)
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

    @property
    def rules(self) -> WheelRules:
        return self._rules

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic."""
        return {
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

    # -- handlers ---------------------------------------------------------------------------------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        if self.phase == HELD:
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
            self._machine.fire("segment")  # idle: refused
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
        held, self._held_segment = self._held_segment, None
        if held is not None:
            return self._land(held)
        self._machine.fire("resume_chain" if self._spins else "resume")
        return []

    def _void(self, event: Void) -> list[EngineOutput]:
        self._machine.fire("void")
        reason = event.reason.strip() or VOID_SUPERVISOR_DEFAULT
        return [self._end("void", reason, event, self._partial())]

    def _fault(self, event: Fault) -> list[EngineOutput]:
        phase = self.phase
        self._machine.fire("fault")
        self._faults.add(event.code)
        if phase not in _AFTER_BETS:
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
        self._machine.fire("settle")
        return [self._settle(event)]

    def _settle(self, event: TableEvent) -> Outcome:
        result = spin_result(self._rules, self._spins, respins=self._respins)
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
        return {"spins": [dict(s) for s in self._spins], "respins": self._respins}

    def _round_ended(self, outcome: Outcome) -> None:
        del outcome
        self._spins = []
        self._respins = 0
        self._spin_direction = None
        self._fault_hold = False
        self._held_segment = None
