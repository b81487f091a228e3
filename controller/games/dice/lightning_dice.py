"""Lightning Dice as a pure rule: three dice, a total, and the RNG's lightning numbers.

Seed-001 §7.3 (L3067–3069): "three dice with dots from 1 to 6"; bets on "numbers from 3 to 18";
"After betting time has expired, the 'lightning strikes' to select one or more random 'Lightning
numbers' (from 3 to 18), each of which is given a random multiplier. Then the dealer drops the
dice through the 'Lightning Tower,' and once the dice have stopped tumbling and come to rest, the
player sees the numbers on their upper faces." A total that is a lightning number pays its
multiplier, any other total "the corresponding odds". Neither the odds nor the multipliers' range
is given [GAP]: the result carries the multipliers as drawn.

The lightning numbers arrive as one ``rng_draw`` event: after ``bets_closed``, before the drop,
once a round (:func:`rng_order`; seed-001 §2.2 (d): an RNG's picks are committed before the
physical result is known), with picks that can be lightning numbers (:func:`check_picks`). Both
checks, and their codes, are :mod:`tablectl.controller.games.rng`'s (every game with an RNG draw
shares them); they are re-exported here under the names the dice engine has always used.

Pure: no I/O, no clock.
"""

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
    """An ``rng_draw``'s picks as the round's lightning numbers, or why they cannot be
    (:func:`tablectl.controller.games.rng.check_picks`).

    - ``rng_value_out_of_range``: a value that is not a total of three dice, 3–18 (an int; a
      card code or ``"11"`` is no total);
    - ``rng_pick_invalid``: a value picked twice, or a pick without a multiplier ("each of which
      is given a random multiplier"). The book gives neither the multipliers nor how many
      numbers are drawn [GAP]: neither is checked.
    """
    return rng.check_picks(picks, valid=_is_total, span="totals 3-18", rule=RULE)


def lightning_data(lightning: Lightning) -> list[dict[str, int]]:
    """The lightning numbers as published: ``[{"value": 11, "multiplier": 100}, …]``."""
    return [{"value": value, "multiplier": m} for value, m in lightning]


def lightning_result(dice: Sequence[int], lightning: Lightning) -> dict[str, Any]:
    """The Lightning Dice outcome: the dice, the total, the lightning numbers and the multiplier
    of the total (``None`` when the total is not a lightning number: "the corresponding odds").

    ``lightning`` are the round's checked numbers (:func:`check_picks`); ``()`` only when a
    supervisor settled a round whose RNG draw never came (``on_rng_missing = "hold"``).

    Raises:
        ValueError: not three dice of 1–6.
    """
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
