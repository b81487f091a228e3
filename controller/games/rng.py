"""A studio RNG's picks as pure rules: when an ``rng_draw`` may come and whether its picks can be
the round's lightning numbers; one place, so every RNG game refuses a bad draw with the same
codes.

seed-001 §2.2 (d): committed before the physical result is known; L3069 (Lightning Dice) and L115
(Lightning Roulette): after betting time. The codes are verdicts (docs/verdicts.md): the draw is
refused, the round goes on."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any, Final, Literal, TypeAlias, TypeGuard, TypeVar

from tablectl.controller.core.dice_events import RngPick
from tablectl.controller.games.findings import Finding

# Verdict codes: the draw is refused, the round goes on.
RNG_NOT_EXPECTED: Final = "rng_not_expected"
RNG_BEFORE_BETS_CLOSED: Final = "rng_before_bets_closed"
RNG_AFTER_ROLL: Final = "rng_after_roll"
# A money wheel whose book wants the draw before the spin starts (Music Wheel, L4339).
RNG_AFTER_SPIN: Final = "rng_after_spin"
RNG_AFTER_RESULT: Final = "rng_after_result"
# A card game whose multiplier cards come before the deal (Golden Wealth / Lightning Baccarat,
# L4025, L4123: "After the end of the … Round, the dealer deals").
RNG_AFTER_FIRST_CARD: Final = "rng_after_first_card"
RNG_DUPLICATE: Final = "rng_duplicate"
RNG_VALUE_OUT_OF_RANGE: Final = "rng_value_out_of_range"
RNG_PICK_INVALID: Final = "rng_pick_invalid"
# A result with no draw: a verdict, then the round's void reason (or a hold) by the game's rules.
RNG_MISSING: Final = "rng_missing"

Stage: TypeAlias = Literal[
    "betting", "closed", "rolling", "spinning", "dealing", "result", "ended", "none"
]
"""Where a round is when an ``rng_draw`` arrives."""

_V = TypeVar("_V")


def rng_order(*, expected: bool, stage: Stage, drawn: bool) -> tuple[str, str] | None:
    """Why an ``rng_draw`` comes at the wrong time, or ``None``: one draw, after betting time and
    before the result (seed-001 §2.2 (d), L115, L3069)."""
    if not expected:
        return RNG_NOT_EXPECTED, "this game has no RNG draw"
    if stage == "betting":
        return RNG_BEFORE_BETS_CLOSED, "lightning strikes after betting time has expired"
    if stage == "rolling":
        return RNG_AFTER_ROLL, "lightning numbers after the dice were dropped"
    if stage == "spinning":
        return RNG_AFTER_SPIN, "the RNG's pick after the wheel was set spinning"
    if stage == "dealing":
        return RNG_AFTER_FIRST_CARD, "the RNG's cards after the first card was dealt"
    if stage == "result":
        return RNG_AFTER_RESULT, "lightning numbers after the round's result was known"
    if stage == "ended":
        return RNG_AFTER_RESULT, "lightning numbers after the round's end"
    if drawn:
        return RNG_DUPLICATE, "this round's lightning numbers are already drawn"
    return None


def _order(value: object) -> tuple[bool, int, str]:
    # Numbers in numeric order, then words ("00"): picks of one draw may mix the two.
    if isinstance(value, int):
        return False, value, ""
    return True, 0, str(value)


def picks_data(picks: Sequence[RngPick]) -> list[dict[str, Any]]:
    """An ``rng_draw``'s picks as a verdict's data carries them."""
    return [{"value": p.value, "multiplier": p.multiplier} for p in picks]


def check_picks(
    picks: Sequence[RngPick],
    *,
    valid: Callable[[object], TypeGuard[_V]],
    span: str,
    rule: str,
    multipliers: Collection[int] | None = None,
    count: tuple[int, int] | None = None,
) -> tuple[tuple[_V, int], ...] | Finding:
    """The picks as ``(value, multiplier)`` in the RNG's order, or the first finding:
    ``rng_value_out_of_range``, then ``rng_pick_invalid`` (``repeated``, ``no_multiplier``,
    ``multiplier``, ``count``). ``multipliers`` and ``count`` are the book's, ``None`` where it
    lists none."""
    numbers = [(p.value, p.multiplier) for p in picks if valid(p.value)]
    if len(numbers) != len(picks):
        bad = [p.value for p in picks if not valid(p.value)]
        return Finding(
            RNG_VALUE_OUT_OF_RANGE,
            rule,
            f"lightning numbers are {span}, got {bad}",
            {"values": bad, "numbers": picks_data(picks)},
        )
    values = [value for value, _ in numbers]
    if len(set(values)) != len(values):
        repeated = sorted({v for v in values if values.count(v) > 1}, key=_order)
        return Finding(
            RNG_PICK_INVALID,
            rule,
            f"a lightning number is picked twice: {repeated}",
            {"reason": "repeated", "values": repeated, "numbers": picks_data(picks)},
        )
    checked = tuple((value, m) for value, m in numbers if m is not None)
    if len(checked) != len(numbers):
        missing = [value for value, m in numbers if m is None]
        return Finding(
            RNG_PICK_INVALID,
            rule,
            f"lightning numbers without a multiplier: {missing}",
            {"reason": "no_multiplier", "values": missing, "numbers": picks_data(picks)},
        )
    if multipliers is not None:
        foreign = [m for _, m in checked if m not in multipliers]
        if foreign:
            allowed = ", ".join(str(m) for m in sorted(multipliers))
            return Finding(
                RNG_PICK_INVALID,
                rule,
                f"multipliers {foreign} are not the game's ({allowed})",
                {"reason": "multiplier", "multipliers": foreign, "numbers": picks_data(picks)},
            )
    if count is not None and not count[0] <= len(checked) <= count[1]:
        low, high = count
        return Finding(
            RNG_PICK_INVALID,
            rule,
            f"{len(checked)} lightning numbers drawn: the game draws {low} to {high}",
            {"reason": "count", "count": len(checked), "numbers": picks_data(picks)},
        )
    return checked
