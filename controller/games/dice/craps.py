"""Craps as a pure rule: a roll of two dice, thrown in the state the previous rolls left.

Seed-001 §7.2 (L2745–2805) — the only dice game in the book whose state spans rounds:

- **Phases** (L2751–2757): "The game starts with Come Out roll"; "when during Come Out roll a
  total result of 4, 5, 6, 8, 9 or 10 is rolled, that result is called Point and the game
  continues in the Point phase", which lasts "until a total result of 7 or with the result of
  value number [the Point] is rolled". The puck "shows which roll type will be the next": black
  ``OFF`` for Come Out, white ``ON`` for Point.
- **Come-out decisions** (Pass Line, L2789): 7 or 11 ``natural``; 2, 3 or 12 ``craps`` ("the game
  ends and a new roll of Come Out is started"); 4, 5, 6, 8, 9, 10 ``point_set``.
- **Point-phase decisions** (L2787, L2789): the point again ``point_made``; 7 ``seven_out``; both
  return the game to Come Out. Any other total decides no multi-roll bet (``None``); one-roll bets
  (L2767–2783) are settled on every roll from ``total`` alone.
- **Don't Pass** (L2791) reads "7, 11, or any other number (4, 5, 6, 8, 9 or 10), then the player
  loses" — conflict C31: in the standard game a point number sets the point and Don't Pass wins
  on ``seven_out``. The state here is the standard one (the book's own L2757 and Pass Line text);
  which Don't Pass reading pays is the settling system's (``docs/games/dice.md``).

A roll's ``phase``/``point``/``puck`` are the state it was **thrown in** (what the bets on it were
placed against); ``next_phase``/``next_point`` the state it leaves for the next roll.

Pure: no I/O, no clock.
"""

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
    """The roll's decision and the state it leaves (L2757, L2787–2789).

    Raises:
        ValueError: ``total`` is not 2–12.
    """
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
    """The outcome of one roll thrown in ``state``, and the state for the next roll.

    Besides the decision, the facts the one-roll bets (L2767–2783) and Hardways (L2805) need:
    ``field``, and ``hardway`` (a pair totalling 4, 6, 8 or 10).

    Raises:
        ValueError: not two dice of 1–6.
    """
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
