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
    """A number label as the outcome's ``number``: an int, except a label with a leading zero,
    which keeps its spelling — Wheelbet's ``"00"`` is the string ``"00"``, never 0 (contracts §4.3,
    as roulette's 00; seed-001 L4345). ``None`` for a label that is not a number."""
    if not is_number(label):
        return None
    value = int(label)
    return value if str(value) == label else label


def number_facts(number: int | str | None) -> dict[str, Any]:
    """The facts a roulette-style layout's bets settle on (Wheelbet L4349–4389, Spin & Win
    L3971–3977): ``parity`` (``"even"``/``"odd"``), ``dozen`` (1–12 → 1, 13–24 → 2, 25–36 → 3:
    L4363, L3975) and ``row`` (row I 1, 4, 7 … 34 → 1, II → 2, III → 3: L4385). 0 and 00 are
    none of them: "the numbers 0 and 00 are not considered even or odd numbers" (L4389), and no
    range or row lists them; Spin & Win's 0 is read the same way (roulette's, industry)."""
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
    """Why this spin must be repeated (a re-spin reason), or ``None`` if it counts.

    The index must already be known to be on the wheel. Checked in this order:

    1. ``on_divider``: the pointer rests on a pin (L2091, C6) and ``divider_respin``.
    2. ``wrong_direction`` / ``direction_unknown``: the wheel's direction (the segment's, else the
       spin's) is not ``rules.direction`` / not known while one is required (L2471).
    3. ``min_revolutions`` / ``revolutions_unknown``: fewer full turns than ``min_revolutions``,
       or no count while one is required (L2471: "at least 3 full spins clockwise").
    """
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
    """The ``result`` of a settled wheel round (contracts §4.3 ``{"segment": "10", "index": n}``,
    extended).

    ``spins`` are the counted spins in order (``{"segment", "index", ...}``); the last is the
    result and every one before it a chain segment. ``multiplier`` is the product of their
    factors (Dream Catcher L1754: 2x, 7x, then 5 → 14); ``number`` is the label as a number
    (:func:`number_of`: ``"00"`` stays the string ``"00"``); ``color`` with a colour map, and
    ``parity``, ``dozen``, ``row`` with ``number_facts`` (:func:`number_facts`).

    Raises:
        ValueError: no spins, an index off the wheel or not matching its label, or a chain that is
            not made of multiplier segments.
    """
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
