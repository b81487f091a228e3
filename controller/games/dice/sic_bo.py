"""Sic Bo as a pure rule: three dice → the facts its bets are settled on.

seed-001 names Sic Bo at L5 but gives no rules (§7.4): this is the industry game
(docs/games/dice.md). ``odd`` is the total's parity even on a triple, so a settler never reads
Even as ``not odd`` of a bet that already excludes triples."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from tablectl.controller.core.errors import RuleError

DICE: Final = 3
SMALL: Final = range(4, 11)
"""Totals a Small bet covers (a triple loses whatever the total)."""
BIG: Final = range(11, 18)
"""Totals a Big bet covers (a triple loses whatever the total)."""


def sic_bo_result(dice: Sequence[int]) -> dict[str, Any]:
    """The Sic Bo facts of three dice in the table's order."""
    if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
        raise RuleError(f"sic bo needs three dice of 1-6, got {list(dice)}")
    total = sum(dice)
    counts = Counter(dice)
    triple = len(counts) == 1
    return {
        "dice": list(dice),
        "total": total,
        "triple": triple,
        "double": sorted(value for value, n in counts.items() if n >= 2),
        "big": total in BIG and not triple,
        "small": total in SMALL and not triple,
        "odd": total % 2 == 1,
    }
