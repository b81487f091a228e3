"""Lightning Dice (seed-001 §7.3, L3067–3069) as a pure rule: three dice, a total, and the RNG's
lightning numbers, drawn after betting and before the drop (§2.2 (d)).

Neither the odds nor the multipliers' range is given [GAP]: the result carries the multipliers as
drawn. The draw's checks are :mod:`tablectl.controller.games.rng`'s, re-exported under the names
the dice engine has always used."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, TypeAlias, TypeGuard

from tablectl.controller.core.dice_events import RngPick
from tablectl.controller.core.errors import RuleError
from tablectl.controller.games import rng
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.rng import (
    RNG_AFTER_RESULT,
    RNG_AFTER_ROLL,
    RNG_BEFORE_BETS_CLOSED,
    RNG_DUPLICATE,
    RNG_NOT_EXPECTED,
    RNG_PICK_INVALID,
    RNG_VALUE_OUT_OF_RANGE,
    Stage,
    rng_order,
)

__all__ = [
    "DICE",
    "RNG_AFTER_RESULT",
    "RNG_AFTER_ROLL",
    "RNG_BEFORE_BETS_CLOSED",
    "RNG_DUPLICATE",
    "RNG_NOT_EXPECTED",
    "RNG_PICK_INVALID",
    "RNG_VALUE_OUT_OF_RANGE",
    "RULE",
    "TOTALS",
    "Lightning",
    "Stage",
    "check_picks",
    "lightning_data",
    "lightning_result",
    "rng_order",
]

DICE: Final = 3
TOTALS: Final = range(3, 19)
"""Totals of three dice, and so the lightning numbers (L3069: "from 3 to 18")."""
RULE: Final = "seed-001 §7.3 L3069, §2.2 (d)"

Lightning: TypeAlias = tuple[tuple[int, int], ...]
"""A round's lightning numbers, checked: ``(value, multiplier)`` pairs in the RNG's order."""


def _is_total(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value in TOTALS


def check_picks(picks: Sequence[RngPick]) -> Lightning | Finding:
    """The picks as lightning numbers, totals 3–18, each with a multiplier (L3069); their
    multipliers and count are not given [GAP], so not checked."""
    return rng.check_picks(picks, valid=_is_total, span="totals 3-18", rule=RULE)


def lightning_data(lightning: Lightning) -> list[dict[str, int]]:
    """The lightning numbers as published: ``[{"value": 11, "multiplier": 100}, …]``."""
    return [{"value": value, "multiplier": m} for value, m in lightning]


def lightning_result(dice: Sequence[int], lightning: Lightning) -> dict[str, Any]:
    """The outcome; ``multiplier`` is ``None`` when the total is no lightning number ("the
    corresponding odds"). ``lightning`` is ``()`` only for a round a supervisor settled without
    its draw."""
    if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
        raise RuleError(f"lightning dice needs three dice of 1-6, got {list(dice)}")
    total = sum(dice)
    multiplier = next((m for value, m in lightning if value == total), None)
    return {
        "dice": list(dice),
        "total": total,
        "lightning": lightning_data(lightning),
        "multiplier": multiplier,
    }
