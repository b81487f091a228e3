"""Lightning Roulette as a pure rule: a roulette spin plus the studio RNG's lightning numbers.

Seed-001 §4.2 (L113–115): roulette, plus one or more lucky numbers drawn at the close of betting,
paying 29:1 to 499:1 instead of 35:1. Seed-000 §4 (L245–265): straight up 29:1, one to five numbers
(L255), multipliers 50 to 500 (L256–265). Quotes: ``docs/games/roulette.md``.

Readings (C4 of the seed-001 digest; configurable in ``[rules]``):

- **How many**: one to five (seed-000 L255); ``lightning_min`` / ``lightning_max``.
- **Which multipliers**: seed-000's list (L256–265); seed-001's "29:1 to 499:1" is the same draw
  less the stake. ``lightning_multipliers``; the outcome carries the multiplier as drawn, and
  whether it means m:1 or m x is the paytable's.
- **Which pockets**: any, zero and "00" included (the book does not exclude them).

The numbers are one ``rng_draw`` between ``bets_closed`` and the winning number
(:func:`tablectl.controller.games.rng.rng_order`; seed-001 §2.2 (d)); a result without them is
``rng_missing`` (``on_rng_missing``: void by default, or hold for a supervisor, who may settle at
the base odds). Pure: no I/O, no clock.
"""

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
    """An ``rng_draw``'s picks as the round's lightning numbers, or why they cannot be.

    ``rng_value_out_of_range``: not a pocket of the wheel (37, ``"17"``, ``true``);
    ``rng_pick_invalid``: a number twice, one without a multiplier, a multiplier not in
    ``multipliers`` (seed-000 L256–265), or fewer or more numbers than ``count`` (L255).
    """

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
    """A settled spin's ``result`` plus ``lightning`` (the round's numbers) and ``multiplier``:
    the winning number's, when it is a lightning number, else ``None`` (straight-up bets pay the
    base odds: 29:1 in seed-000 L248).

    ``lightning`` is ``()`` only when a supervisor settled a round whose draw never came
    (``on_rng_missing = "hold"``, then ``confirm``).
    """
    number = result["number"]
    multiplier = next(
        (m for value, m in lightning if type(value) is type(number) and value == number), None
    )
    return {**result, "lightning": lightning_data(lightning), "multiplier": multiplier}
