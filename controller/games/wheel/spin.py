"""One spin of a money wheel, judged and turned into the round's result: why a spin is re-spun
(:func:`check_spin`), what landing on a label means (:func:`kind`), the settled ``result``
(:func:`spin_result`) and, for wheels numbered like a roulette layout, the facts their bets settle
on (:func:`number_facts`). Rule ids in the package docstring. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Direction, Segment
from tablectl.controller.games.wheel.rules import WheelRules, is_number

Kind: TypeAlias = Literal["number", "symbol", "multiplier", "bonus"]

# Re-spin reasons (``data.reason`` of a ``respin`` verdict; docs/games/wheels.md).
RESPIN_ON_DIVIDER: Final = "on_divider"
RESPIN_WRONG_DIRECTION: Final = "wrong_direction"
RESPIN_DIRECTION_UNKNOWN: Final = "direction_unknown"
RESPIN_MIN_REVOLUTIONS: Final = "min_revolutions"
RESPIN_REVOLUTIONS_UNKNOWN: Final = "revolutions_unknown"


def kind(rules: WheelRules, label: str) -> Kind:
    """What landing on ``label`` means: a chain spin, a bonus game, a number or another symbol."""
    if label in rules.multipliers:
        return "multiplier"
    if label in rules.bonus:
        return "bonus"
    return "number" if is_number(label) else "symbol"


def number_of(label: str) -> int | str | None:
    """An int, but ``"00"`` keeps its spelling (contracts §4.3, as roulette's; seed-001 L4345);
    ``None`` for a label that is no number."""
    if not is_number(label):
        return None
    value = int(label)
    return value if str(value) == label else label


def number_facts(number: int | str | None) -> dict[str, Any]:
    """Wheelbet (L4349–4389) and Spin & Win (L3971–3977) layout facts: parity, dozen (L4363, L3975),
    row (L4385); 0 and 00 are none of them (L4389; Spin & Win's 0 read the same)."""
    if not isinstance(number, int) or number == 0:
        return {"parity": None, "dozen": None, "row": None}
    return {
        "parity": "odd" if number % 2 else "even",
        "dozen": (number - 1) // 12 + 1 if number <= 36 else None,
        "row": (number - 1) % 3 + 1 if number <= 36 else None,
    }


def check_spin(
    rules: WheelRules, segment: Segment, spin_direction: Direction | None = None
) -> str | None:
    """Why this spin must be repeated, or ``None``; the index is already known to be on the wheel.

    1. ``on_divider``: on a pin (L2091, C6) with ``divider_respin``. 2. ``wrong_direction`` /
    ``direction_unknown`` (L2471). 3. ``min_revolutions`` / ``revolutions_unknown`` (L2471: "at
    least 3 full spins clockwise")."""
    if segment.on_divider and rules.divider_respin:
        return RESPIN_ON_DIVIDER
    if rules.direction is not None:
        direction = segment.direction or spin_direction
        if direction is None:
            return RESPIN_DIRECTION_UNKNOWN
        if direction != rules.direction:
            return RESPIN_WRONG_DIRECTION
    if rules.min_revolutions:
        if segment.revolutions is None:
            return RESPIN_REVOLUTIONS_UNKNOWN
        if segment.revolutions < rules.min_revolutions:
            return RESPIN_MIN_REVOLUTIONS
    return None


def spin_result(
    rules: WheelRules, spins: Sequence[Mapping[str, Any]], *, respins: int = 0
) -> dict[str, Any]:
    """The ``result`` of a settled round (contracts §4.3, extended): every spin before the last is a
    chain segment, and ``multiplier`` their product (Dream Catcher L1754)."""
    if not spins:
        raise RuleError("a result needs at least one spin")
    multiplier = 1
    for i, spin in enumerate(spins):
        index, label = spin["index"], spin["segment"]
        if not 0 <= index < rules.size or rules.segments[index] != label:
            raise RuleError(f"spin {i + 1}: index {index} is not segment {label!r}")
        if i < len(spins) - 1:
            if label not in rules.multipliers:
                raise RuleError(f"spin {i + 1}: {label!r} is not a multiplier segment")
            multiplier *= rules.multipliers[label]
    last = spins[-1]
    label = last["segment"]
    result: dict[str, Any] = {
        "segment": label,
        "index": last["index"],
        "kind": kind(rules, label),
        "number": number_of(label),
        "multiplier": multiplier,
        "spins": [dict(s) for s in spins],
        "respins": respins,
    }
    if rules.colors is not None:
        result["color"] = rules.colors.get(label)
    if rules.number_facts:
        result |= number_facts(result["number"])
    return result
