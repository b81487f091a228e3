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
physical result is known), with picks that can be lightning numbers (:func:`check_picks`).

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias

from tablectl.controller.core.dice_events import RngPick
from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.findings import Finding

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

# Verdict codes (docs/verdicts.md "Dice"): the draw is refused, the round goes on.
RNG_NOT_EXPECTED: Final = "rng_not_expected"
RNG_BEFORE_BETS_CLOSED: Final = "rng_before_bets_closed"
RNG_AFTER_ROLL: Final = "rng_after_roll"
RNG_AFTER_RESULT: Final = "rng_after_result"
RNG_DUPLICATE: Final = "rng_duplicate"
RNG_VALUE_OUT_OF_RANGE: Final = "rng_value_out_of_range"
RNG_PICK_INVALID: Final = "rng_pick_invalid"

Stage: TypeAlias = Literal["betting", "closed", "rolling", "ended", "none"]
"""Where a round is when an ``rng_draw`` arrives: betting open; bets closed, no roll under way;
the dice dropped; the last round ended (no round in play); no round yet."""


def rng_order(*, expected: bool, stage: Stage, drawn: bool) -> tuple[str, str] | None:
    """Why an ``rng_draw`` comes at the wrong time (code, message), or ``None``.

    ``expected``: the game has an RNG draw (Lightning Dice); ``drawn``: this round's lightning
    numbers are already in. L3069: "After betting time has expired, the 'lightning strikes' …
    Then the dealer drops the dice" — one draw, between the two.
    """
    if not expected:
        return RNG_NOT_EXPECTED, "this game has no RNG draw"
    if stage == "betting":
        return RNG_BEFORE_BETS_CLOSED, "lightning strikes after betting time has expired"
    if stage == "rolling":
        return RNG_AFTER_ROLL, "lightning numbers after the dice were dropped"
    if stage == "ended":
        return RNG_AFTER_RESULT, "lightning numbers after the round's end"
    if drawn:
        return RNG_DUPLICATE, "this round's lightning numbers are already drawn"
    return None


Lightning: TypeAlias = tuple[tuple[int, int], ...]
"""A round's lightning numbers, checked: ``(value, multiplier)`` pairs in the RNG's order."""


def _is_total(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in TOTALS


def _picks_data(picks: Sequence[RngPick]) -> list[dict[str, Any]]:
    return [{"value": p.value, "multiplier": p.multiplier} for p in picks]


def check_picks(picks: Sequence[RngPick]) -> Lightning | Finding:
    """An ``rng_draw``'s picks as the round's lightning numbers, or why they cannot be.

    - ``rng_value_out_of_range``: a value that is not a total of three dice, 3–18 (an int; a
      card code or ``"11"`` is no total);
    - ``rng_pick_invalid``: a value picked twice, or a pick without a multiplier ("each of which
      is given a random multiplier").
    """
    numbers = [
        (p.value, p.multiplier) for p in picks if isinstance(p.value, int) and _is_total(p.value)
    ]
    if len(numbers) != len(picks):
        bad = [p.value for p in picks if not _is_total(p.value)]
        return Finding(
            RNG_VALUE_OUT_OF_RANGE,
            RULE,
            f"lightning numbers are totals 3-18, got {bad}",
            {"values": bad, "numbers": _picks_data(picks)},
        )
    values = [value for value, _ in numbers]
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1})
        return Finding(
            RNG_PICK_INVALID,
            RULE,
            f"a lightning number is picked twice: {repeated}",
            {"reason": "repeated", "values": repeated, "numbers": _picks_data(picks)},
        )
    checked = tuple((value, m) for value, m in numbers if m is not None)
    if len(checked) != len(numbers):
        missing = [value for value, m in numbers if m is None]
        return Finding(
            RNG_PICK_INVALID,
            RULE,
            f"lightning numbers without a multiplier: {missing}",
            {"reason": "no_multiplier", "values": missing, "numbers": _picks_data(picks)},
        )
    return checked


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
