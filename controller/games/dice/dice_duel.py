"""Dice Duel as a pure rule: a red die against a blue one.

Seed-001 §7.1 (L2681–2743). L2683: "the dealer places two dice of different colors (red and blue)
in a cup …, shakes them and throws them on the table. The result … is … the number of dots on the
upper face when the dice are stopped after the roll. The winning dice is the one with the highest
number of dots …. If the number of dots … is the same, a draw is registered."

The result carries, besides ``red``, ``blue`` and ``winner``, the facts the book's 28 bets
(L2689–2743) are settled on, so a consumer needs no dice arithmetic of its own:

- bets 1–3, L2689–2693: ``winner``; 4–6, L2695–2699: ``red``, ``blue`` and the pair of them;
- 7–12, L2701–2711: ``red_odd``, ``blue_odd``, ``total_odd`` ("the number of dots on two dice");
  even is ``not …_odd`` (no exception here, unlike Sic Bo's triples);
- 13–16, L2713–2719: ``red_over``, ``blue_over`` (over 3.5, i.e. 4–6; under is ``not …_over``);
- 17–28, L2721–2743: ``total`` (under/over 4.5 … 9.5: compare it with the line; no total
  equals a line).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from typing import Any, Final, Literal

from tablectl.controller.core.errors import RuleError

RED: Final = "red"
BLUE: Final = "blue"
COLORS: Final = (RED, BLUE)
"""The two dice of L2683; a table configures the order its reader reports them in."""


def dice_duel_result(red: int, blue: int) -> dict[str, Any]:
    """The Dice Duel facts of a red and a blue die.

    Raises:
        ValueError: a value outside 1–6.
    """
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
