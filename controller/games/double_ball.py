"""Double Ball Roulette (seed-001 §4.3, L117–177) as a pure rule: two balls (L119), two winning
numbers, and the facts its bets settle on (:func:`pair_result`).

One bad ball voids the spin (L97 applied to both [GAP]). Internal bets L121–133; external bets
L135–159 win only when both balls share the property (L137–153); "Red or Black" (L145, L171) is
one of each (C5, the industry's reading); two balls on a number L155–157, L176–177. Balls are
numbered in report order: no bet depends on which is which."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from tablectl.controller.games.findings import Finding

BALLS: Final = 2
"""L119: "two balls are used at the same time"."""
RULE: Final = "seed-001 L117-177"

# Verdict codes: the winning number is refused, the round goes on (docs/verdicts.md).
BALL_ALREADY_REPORTED: Final = "ball_already_reported"
NO_SUCH_BALL: Final = "no_such_ball"


def place_ball(reported: Mapping[int, object], ball: int | None, *, balls: int) -> int | Finding:
    """Its own ``ball``, else the lowest not yet reported. A second reading of one ball is no second
    ball (R15: sequential inputs must not give invalid results)."""
    if ball is None:
        free = [n for n in range(1, balls + 1) if n not in reported]
        if free:
            return free[0]
        ball = balls
    if not 1 <= ball <= balls:
        return Finding(
            NO_SUCH_BALL,
            RULE if balls == BALLS else "seed-001 L87-111",
            f"ball {ball} reported, but the wheel plays {balls} ball{'s' if balls > 1 else ''}",
            {"ball": ball, "balls": balls},
        )
    if ball in reported:
        return Finding(
            BALL_ALREADY_REPORTED,
            f"{RULE}; R15",
            f"ball {ball}'s number is already in ({reported[ball]!r}): not a second ball",
            {"ball": ball, "reported": reported[ball]},
        )
    return ball


def _shared(first: Mapping[str, Any], second: Mapping[str, Any], key: str) -> Any:
    """The value both balls have for ``key`` (``None`` when they differ or have none)."""
    value = first.get(key)
    return value if value is not None and value == second.get(key) else None


def pair_result(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome from the two balls' spin results; ``per_ball``, since draw results own
    ``balls``."""
    colors = {first["color"], second["color"]}
    both_color = _shared(first, second, "color")
    return {
        "numbers": [first["number"], second["number"]],
        "same_number": type(first["number"]) is type(second["number"])
        and first["number"] == second["number"],
        "both_color": both_color if both_color in ("red", "black") else None,
        "red_and_black": colors == {"red", "black"},
        "both_parity": _shared(first, second, "parity"),
        "both_range": _shared(first, second, "range"),
        "both_dozen": _shared(first, second, "dozen"),
        "both_column": _shared(first, second, "column"),
        "per_ball": [dict(first), dict(second)],
        "variant": first["variant"],
    }
