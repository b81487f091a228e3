"""RNG overlays on money wheels: a pick made before the wheel decides changes what the result pays.

seed-001 §2.2 (d): committed before the physical result, one ``rng_draw`` with one pick. Mega
Lucky Number (§5.5 L3959–3963, "up to" x500, so the RNG commits the odds); Music Wheel's bonus
sector (§5.7 L4339–4341; ``rng_single``: C26, our reading); Crazy Time's Top Slot (§5.3
L2051–2057, opt-in). Book quotes: ``docs/games/wheels.md``. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from tablectl.controller.core.events import RngPick
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.rng import (
    RNG_AFTER_SPIN,
    RNG_BEFORE_BETS_CLOSED,
    RNG_DUPLICATE,
    RNG_NOT_EXPECTED,
    RNG_PICK_INVALID,
    RNG_VALUE_OUT_OF_RANGE,
    Stage,
    picks_data,
    rng_order,
)
from tablectl.controller.games.wheel.rules import WheelRules

RULES: Final = {
    "none": "seed-001 §2.2 (d)",
    "lucky_number": "seed-001 §5.5 L3959-3963, §2.2 (d)",
    "bonus_sector": "seed-001 §5.7 L4339, C26, §2.2 (d)",
    "top_slot": "seed-001 §5.3 L2051-2057, §2.2 (d)",
}
"""Each overlay's rule id (verdicts cite it)."""

NAMES: Final = {
    "none": "RNG pick",
    "lucky_number": "Mega Lucky Number",
    "bonus_sector": "bonus sector",
    "top_slot": "Top Slot",
}


@dataclass(frozen=True)
class Overlay:
    """A round's checked draw: the label it names, the one sector it names (``None``: every
    sector of the label), and its multiplier (``None``: the paytable's, or a Top Slot miss)."""

    kind: Literal["lucky_number", "bonus_sector", "top_slot"]
    segment: str
    index: int | None
    multiplier: int | None

    def applies(self, label: str, index: int) -> bool:
        """Whether the draw pays on the segment the wheel stopped on."""
        hit = label == self.segment if self.index is None else index == self.index
        return hit and (self.kind != "top_slot" or self.multiplier is not None)


def draw_order(rules: WheelRules, stage: Stage, *, drawn: bool) -> tuple[str, str] | None:
    """Why an ``rng_draw`` comes at the wrong time, or ``None``: the shared order
    (:func:`tablectl.controller.games.rng.rng_order`), before the spin for Music Wheel (L4339),
    before the stop for Mega Wheel (L3959) and Top Slot."""
    refused = rng_order(expected=rules.rng != "none", stage=stage, drawn=drawn)
    if refused is None:
        return None
    code = refused[0]
    name = NAMES[rules.rng]
    message = {
        RNG_NOT_EXPECTED: "this wheel has no RNG draw",
        RNG_BEFORE_BETS_CLOSED: f"the {name} is drawn after betting closes",
        RNG_AFTER_SPIN: f"the {name} came after the wheel was set spinning (due before the spin)",
        RNG_DUPLICATE: f"this round's {name} is already drawn",
    }.get(code)
    if message is None:  # rng_after_result: the round ended, or the wheel stopped
        late = "after the round's end" if stage == "ended" else "after the wheel stopped"
        message = f"the {name} came {late}"
    return code, message


def _invalid(rules: WheelRules, picks: Sequence[RngPick], message: str, **data: Any) -> Finding:
    return Finding(
        RNG_PICK_INVALID, RULES[rules.rng], message, {**data, "numbers": picks_data(picks)}
    )


def _index(value: object, size: int) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size:
        return value
    return None


def check_overlay(rules: WheelRules, picks: Sequence[RngPick]) -> Overlay | Finding:
    """The round's overlay, or the first finding: one pick (L3959, L4339, L2051), a label or sector
    of the wheel, odds for a lucky number, at most ``rng_max_multiplier`` (L3963)."""
    assert rules.rng != "none", "only a wheel with an overlay checks picks"
    if len(picks) != 1:
        return _invalid(
            rules, picks, f"the {NAMES[rules.rng]} is one pick, got {len(picks)}",
            reason="count", count=len(picks),
        )  # fmt: skip
    pick = picks[0]
    by_index = rules.rng == "bonus_sector" or rules.rng_scope == "segment"
    index: int | None
    if by_index:
        index = _index(pick.value, rules.size)
        label = rules.segments[index] if index is not None else None
        span = f"a sector index 0-{rules.size - 1}"
    else:
        index = None
        value = pick.value
        named = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
        label = named if isinstance(named, str) and named in rules.segments else None
        span = "a segment of this wheel"
    if label is None:
        return Finding(
            RNG_VALUE_OUT_OF_RANGE,
            RULES[rules.rng],
            f"the {NAMES[rules.rng]} must be {span}, got {pick.value!r}",
            {"values": [pick.value], "numbers": picks_data(picks)},
        )
    if rules.rng == "bonus_sector" and rules.rng_scope == "label" and label not in rules.rng_single:
        index = None  # L4339: "applied to each of the 2, 4, 6, 12, 24 sectors"
    multiplier = pick.multiplier
    if rules.rng == "lucky_number" and multiplier is None:
        return _invalid(
            rules, picks, "a Mega Lucky Number without its odds (L3963: up to x500)",
            reason="no_multiplier", values=[pick.value],
        )  # fmt: skip
    top = rules.rng_max_multiplier
    if multiplier is not None and top is not None and multiplier > top:
        return _invalid(
            rules, picks, f"multiplier {multiplier} is above the game's {top}",
            reason="multiplier", multipliers=[multiplier],
        )  # fmt: skip
    assert rules.rng in ("lucky_number", "bonus_sector", "top_slot")
    return Overlay(rules.rng, label, index, multiplier)


def overlay_data(overlay: Overlay, landed: tuple[str, int] | None = None) -> dict[str, Any]:
    """The overlay as outcome and ``state`` carry it; ``applies`` on ``landed``, ``null`` before the
    stop."""
    return {
        "kind": overlay.kind,
        "segment": overlay.segment,
        "index": overlay.index,
        "multiplier": overlay.multiplier,
        "applies": None if landed is None else overlay.applies(*landed),
    }
