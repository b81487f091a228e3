"""The money-wheel round machine: phases, codes and strict transitions.

Phases (the machine's states)::

idle ─round_open─▶ open ─bets_closed─▶ closed ─wheel_spin─▶ spinning ─segment─▶ idle (settled) │
▲  ▲                 │  │ respin (bets stand) │                    │  └─────────────────┘  │
chain (2x, 7x: no betting) │                    │                       ▼ │                    │
chained ─wheel_spin─▶ spinning … └─ void / segment (result_before_bets_closed) ─▶ idle closed /
spinning ─rng_draw (an RNG overlay: Mega Wheel, Music Wheel, Top Slot)─▶ itself spinning /
chained ─segment "2 rolls"/"4 rolls" (dice_bonus)─▶ bonus ─dice … last roll─▶ idle

``held`` and ``bonus_held`` wait for a supervisor. Pure."""

from __future__ import annotations

from typing import Final

from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import IDLE, OPEN

CLOSED: Final = "closed"
SPINNING: Final = "spinning"
CHAINED: Final = "chained"
HELD: Final = "held"
BONUS: Final = "bonus"
BONUS_HELD: Final = "bonus_held"

# Void reasons (also the shared ``rng_missing`` with on_rng_missing = "void", and the template's
# ``device_fault``).
VOID_RESULT_BEFORE_BETS_CLOSED: Final = "result_before_bets_closed"

# Verdict codes (the RNG overlay's are the shared ones of tablectl.controller.games.rng, and the
# template's device_fault and decision_pending).
RESPIN: Final = "respin"
SEGMENT_OUT_OF_RANGE: Final = "segment_out_of_range"
DICE_WITHOUT_BONUS: Final = "dice_without_bonus"

RULE_SPIN: Final = "seed-001 §5.4 L2471, C37"
RULE_DIVIDER: Final = "seed-001 §5.3 L2091, C6"
RULE_BONUS: Final = "seed-001 §5.2 L1891, §7.4"

AFTER_BETS: Final = (CLOSED, SPINNING, CHAINED)
"""Bets closed, a spin due or under way."""
IN_PLAY: Final = (*AFTER_BETS, BONUS)


def _definition() -> MachineDefinition:
    t: list[Transition] = []

    def add(sources: tuple[str, ...], event: str, target: str | None = None) -> None:
        t.extend(Transition(s, event, target or s) for s in sources)

    every = (IDLE, OPEN, CLOSED, SPINNING, CHAINED, HELD, BONUS, BONUS_HELD)
    add(every, "fault")
    add(every, "fault_cleared")
    add((IDLE, OPEN, *IN_PLAY), "round_open", OPEN)
    add((OPEN,), "bets_closed", CLOSED)
    add((OPEN, HELD), "wheel_spin")
    add((CLOSED, SPINNING, CHAINED), "wheel_spin", SPINNING)
    add((OPEN, *IN_PLAY, HELD, BONUS_HELD), "void", IDLE)
    # A landing: the round's result, a re-spin (bets stand), a chained spin, or the dice bonus.
    add((*IN_PLAY, HELD), "settle", IDLE)
    add((CLOSED, SPINNING, HELD), "respin", CLOSED)
    add((SPINNING, CHAINED, HELD), "respin_chain", CHAINED)
    add((*AFTER_BETS, HELD), "chain", CHAINED)
    add(AFTER_BETS, "hold", HELD)
    add((HELD,), "held_segment")
    add((HELD, CHAINED), "confirm")
    add((HELD,), "resume", CLOSED)
    add((HELD,), "resume_chain", CHAINED)
    # An RNG overlay's draw (seed-001 §2.2 (d)): after bets close, before the stop; a round held
    # for a fault before any stop still takes it (the result is not known yet).
    add((CLOSED, SPINNING, HELD), "rng_draw")
    # Monopoly's dice bonus: its own held state, so that a held bonus takes only dice (and held
    # wheel rounds keep exactly their transitions).
    add(AFTER_BETS, "bonus", BONUS)
    add((BONUS,), "roll")
    add((BONUS, BONUS_HELD), "roll_started")
    add((BONUS, BONUS_HELD), "roll_invalid")
    add((BONUS,), "hold", BONUS_HELD)
    add((BONUS_HELD,), "held_roll")
    add((BONUS_HELD,), "confirm", BONUS)
    return MachineDefinition("wheel", states=every, initial=IDLE, transitions=t)


MACHINE: Final = _definition()
"""The wheel's strict round machine (validated when it is built, at import)."""
