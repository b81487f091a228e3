"""Dice Duel (seed-001 §7.1, L2681–2743) as a pure rule: a red die against a blue one (L2683).

The result carries the facts of the book's 28 bets (L2689–2743), so a consumer needs no dice
arithmetic: ``winner`` (1–3), the dice (4–6), ``*_odd`` (7–12), ``*_over`` 3.5 (13–16), ``total``
(17–28; no total equals a line)."""

from __future__ import annotations

from typing import Any, Final, Literal

from tablectl.controller.core.errors import RuleError

RED: Final = "red"
BLUE: Final = "blue"
COLORS: Final = (RED, BLUE)
"""The two dice of L2683; a table configures the order its reader reports them in."""


def dice_duel_result(red: int, blue: int) -> dict[str, Any]:
    """The Dice Duel facts of a red and a blue die."""
    if not (1 <= red <= 6 and 1 <= blue <= 6):
        raise RuleError(f"dice duel dice are 1-6, got red {red}, blue {blue}")
    winner: Literal["red", "blue", "draw"] = (
        "red" if red > blue else "blue" if blue > red else "draw"
    )
    total = red + blue
    return {
        "red": red,
        "blue": blue,
        "winner": winner,
        "total": total,
        "red_odd": red % 2 == 1,
        "blue_odd": blue % 2 == 1,
        "total_odd": total % 2 == 1,
        "red_over": red > 3,  # "over 3.5" (L2715)
        "blue_over": blue > 3,  # "over 3.5" (L2719)
    }
