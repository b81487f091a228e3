"""The roulette round machines: one per flavour of the family, built and validated at import.

Phases (the machine's states)::

idle --round_open--> open --bets_closed--> closed --winning_number--> idle (settled | void) |
|   | |                      |   +--hold--> held --void----------------> idle |
|             (R22)  --manual winning_number--> +--- no_spin / void / fault (void_on_fault) /
winning_number ---> idle

Lightning adds ``rng_draw`` (seed-001 L115) and ``confirm`` from ``held`` (G4); Double Ball adds
``ball`` (L119). Pure data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, Literal, TypeAlias, get_args

from tablectl.controller.core.statemachine import MachineDefinition, Transition
from tablectl.controller.engines.base import IDLE, OPEN

__all__ = ["CLOSED", "HELD", "IDLE", "MACHINES", "OPEN", "Flavour"]

CLOSED: Final = "closed"
HELD: Final = "held"

Flavour: TypeAlias = Literal["roulette", "lightning", "double_ball"]
"""Which of the family's machines a table runs."""


def _definition(void_on_fault: bool, flavour: Flavour = "roulette") -> MachineDefinition:
    """Plain roulette's machine stays exactly what it was: its refusals list the allowed events, and
    must read the same in every journal and replay."""
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
    transitions += [
        # R22: the wheel's two readings disagree and the table holds for a supervisor.
        Transition(CLOSED, "hold", HELD),
        Transition(HELD, "hold", HELD),
        # seed-000 GEN-11: the supervisor's void, or the number entered by hand.
        Transition(HELD, "void", IDLE),
        Transition(HELD, "winning_number", IDLE),
        # Held is already stopped: a fault only latches (R14), whatever void_on_fault says.
        Transition(HELD, "fault", HELD),
        Transition(HELD, "fault_cleared", HELD),
    ]
    if flavour == "lightning":
        transitions += [
            # seed-001 L115: the lightning numbers come "at the end of the time of betting".
            Transition(CLOSED, "rng_draw", CLOSED),
            # seed-001 G4: the supervisor settles a round whose draw never came (base odds).
            Transition(HELD, "confirm", IDLE),
        ]
    if flavour == "double_ball":
        # seed-001 L119: "one ball always follows another": the first result waits for the other.
        transitions.append(Transition(CLOSED, "ball", CLOSED))
    return MachineDefinition(
        "roulette", states=(IDLE, OPEN, CLOSED, HELD), initial=IDLE, transitions=transitions
    )


# Every machine is built (and so validated) at import, not when the first table starts.
MACHINES: Final[Mapping[tuple[bool, Flavour], MachineDefinition]] = {
    (void_on_fault, flavour): _definition(void_on_fault, flavour)
    for void_on_fault in (True, False)
    for flavour in get_args(Flavour)
}
