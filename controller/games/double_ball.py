"""Double Ball Roulette as a pure rule: two balls, two winning numbers, and the facts its bets are
settled on.

Seed-001 §4.3 (L117–177): roulette with two balls (L119). Each ball is judged as a spin; one bad
ball voids the spin (L97's remedy applied to both [GAP]). Facts, all in :func:`pair_result`:

- **Internal bets** (L121–133) win once or twice by how many balls hit: ``numbers``.
- **External bets** (L135–159) win only if both balls share the property: ``both_column`` (L137),
  ``both_dozen`` (L139), ``both_color`` (L141, L143), ``both_parity`` (L147, L149),
  ``both_range`` (L151, L153), each ``None`` otherwise (zero has none). "Red or Black" (L145,
  L171) is one red, one black (``red_and_black``; C5, the industry's reading: the literal one
  would pay on almost every spin).
- **Two balls on any / the selected number** (L155, L176; L157, L177): ``same_number``.

No other bet is derived. Balls are numbered in report order (``winning_number.ball``); no bet
depends on which is which. Pure: no I/O, no clock.
"""

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
    """Which ball a winning number is: its own ``ball``, else the lowest one not yet reported.

    ``no_such_ball``: a ball the wheel does not have (ball 2 on a one-ball wheel);
    ``ball_already_reported``: that ball's number is in (a second reading of one ball is no
    second ball: R15, sequential inputs must not give invalid results).
    """
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
    """The Double Ball outcome from the two balls' spin results
    (:func:`tablectl.controller.games.roulette.spin_result`, ball 1 then ball 2).

    ``balls`` is not used as a key (draw results own it): the per-ball results are ``per_ball``.
    """
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
