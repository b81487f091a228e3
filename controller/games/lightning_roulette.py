"""Lightning Roulette as a pure rule: a roulette spin plus the studio RNG's lightning numbers.

seed-001 §4.2 (L113–115) and seed-000 §4 (L245–265): one to five numbers (L255), multipliers 50
to 500 (L256–265; seed-001's "29:1 to 499:1" less the stake), any pocket. Readings (digest C4,
configurable): ``docs/games/roulette.md``. One ``rng_draw`` before the winning number (§2.2 (d))."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, TypeAlias, TypeGuard

from tablectl.controller.core.dice_events import RngPick
from tablectl.controller.games import rng
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.roulette import Pocket, Variant, validate_number

RULE: Final = "seed-001 L113-115, §2.2 (d); seed-000 L255-265"

DEFAULT_MULTIPLIERS: Final[tuple[int, ...]] = (50, 100, 150, 200, 250, 300, 350, 400, 500)
"""Seed-000 L256–265: the multipliers drawn for straight-up bets (listed there as 500:1 … 50:1)."""

LightningNumbers: TypeAlias = tuple[tuple[Pocket, int], ...]
"""A round's lightning numbers, checked: ``(pocket, multiplier)`` in the RNG's order."""


def check_lightning(
    picks: Sequence[RngPick],
    *,
    variant: Variant,
    multipliers: Sequence[int],
    count: tuple[int, int],
) -> LightningNumbers | Finding:
    """The picks as lightning numbers: pockets of the wheel, each once, with a multiplier from
    ``multipliers`` (seed-000 L256–265), ``count`` of them (L255)."""

    def pocket(value: object) -> TypeGuard[Pocket]:
        return validate_number(variant, value)

    span = "pockets 0-36" if variant != "american" else "pockets 0-36 and 00"
    return rng.check_picks(
        picks,
        valid=pocket,
        span=span,
        rule=RULE,
        multipliers=frozenset(multipliers),
        count=count,
    )


def lightning_data(lightning: LightningNumbers) -> list[dict[str, Any]]:
    """The lightning numbers as published: ``[{"value": 17, "multiplier": 300}, …]``."""
    return [{"value": value, "multiplier": m} for value, m in lightning]


def with_lightning(result: Mapping[str, Any], lightning: LightningNumbers) -> dict[str, Any]:
    """The spin's ``result`` plus ``lightning`` and the winning number's ``multiplier`` (``None``:
    base odds, seed-000 L248); ``lightning`` is ``()`` only for a round a supervisor settled
    without it."""
    number = result["number"]
    multiplier = next(
        (m for value, m in lightning if type(value) is type(number) and value == number), None
    )
    return {**result, "lightning": lightning_data(lightning), "multiplier": multiplier}
