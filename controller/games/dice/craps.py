"""Craps as a pure rule: a roll of two dice, thrown in the state the previous rolls left.

seed-001 §7.2 (L2745–2805), the only dice game whose state spans rounds: Come Out and Point
phases and the puck (L2751–2757); Pass Line decisions (L2787, L2789); one-roll bets settle on
``total`` alone (L2767–2783). Don't Pass (L2791) contradicts the standard game (C31): the state
here is the standard one, which reading pays is the settler's (docs/games/dice.md). A roll's
``phase``/``point``/``puck`` are the state it was thrown in, which its bets were placed against."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeAlias

from tablectl.controller.core.errors import RuleError

DICE: Final = 2
POINTS: Final = frozenset({4, 5, 6, 8, 9, 10})
"""Come-out totals that become the point (L2757)."""
NATURALS: Final = frozenset({7, 11})
"""Come-out totals that win the Pass Line (L2789)."""
CRAPS: Final = frozenset({2, 3, 12})
"""Come-out totals that lose the Pass Line (L2789); the Craps one-roll bet (L2775)."""
FIELD: Final = frozenset({2, 3, 4, 9, 10, 11, 12})
"""The Field one-roll bet (L2769)."""
HARDWAYS: Final = frozenset({4, 6, 8, 10})
"""Totals with a Hardways bet: 2+2, 3+3, 4+4, 5+5 (L2805)."""

CrapsPhase: TypeAlias = Literal["come_out", "point"]
Decision: TypeAlias = Literal["natural", "craps", "point_set", "point_made", "seven_out"]


@dataclass(frozen=True, slots=True)
class CrapsState:
    """What the table carries between rolls: the point, or ``None`` on the come out."""

    point: int | None = None

    def __post_init__(self) -> None:
        if self.point is not None and self.point not in POINTS:
            raise RuleError(f"a craps point is one of 4, 5, 6, 8, 9, 10, not {self.point}")

    @property
    def phase(self) -> CrapsPhase:
        return "come_out" if self.point is None else "point"

    @property
    def puck(self) -> Literal["on", "off"]:
        """L2757: black "OFF" on the come out, white "ON" in the point phase."""
        return "off" if self.point is None else "on"

    def to_dict(self) -> dict[str, Any]:
        """The state as the ``state`` topic shows it."""
        return {"phase": self.phase, "point": self.point, "puck": self.puck}


def decide(state: CrapsState, total: int) -> tuple[Decision | None, CrapsState]:
    """The roll's decision and the state it leaves (L2757, L2787–2789)."""
    if not 2 <= total <= 12:  # two dice
        raise RuleError(f"two dice total 2-12, not {total}")
    if state.point is None:
        if total in NATURALS:
            return "natural", state
        if total in CRAPS:
            return "craps", state
        return "point_set", CrapsState(total)
    if total == state.point:
        return "point_made", CrapsState()
    if total == 7:  # the seven
        return "seven_out", CrapsState()
    return None, state


def craps_result(state: CrapsState, dice: Sequence[int]) -> tuple[dict[str, Any], CrapsState]:
    """One roll thrown in ``state`` and the next state, with ``field`` and ``hardway`` for the
    one-roll bets (L2767–2783) and Hardways (L2805)."""
    if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
        raise RuleError(f"craps needs two dice of 1-6, got {list(dice)}")
    total = sum(dice)
    decision, after = decide(state, total)
    result = {
        "dice": list(dice),
        "total": total,
        "phase": state.phase,
        "point": state.point,
        "puck": state.puck,
        "decision": decision,
        "next_phase": after.phase,
        "next_point": after.point,
        "field": total in FIELD,
        "hardway": dice[0] == dice[1] and total in HARDWAYS,
    }
    return result, after
