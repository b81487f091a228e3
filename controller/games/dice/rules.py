"""The ``[rules]`` of a dice table and the checks every dice game shares. Pure: times come inside
the events.

Rule ids, seed-001 §7: dice counts and colours (L3069, L2747, L2683); results at rest (L2683,
L2757, L3069); invalid rolls are a §7 [GAP], re-rolled with bets standing (industry); a short
tumble re-rolls like a wheel with too few turns (L2471, R16). No dice game has a void clause
(§2.2): faults per G1 (L59), G3 (L79), G4, C42."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.time import seconds_between
from tablectl.controller.games.dice.craps import CrapsState, craps_result
from tablectl.controller.games.dice.dice_duel import COLORS, dice_duel_result
from tablectl.controller.games.dice.lightning_dice import Lightning, lightning_result
from tablectl.controller.games.dice.sic_bo import sic_bo_result
from tablectl.controller.games.findings import Finding

DiceVariant: TypeAlias = Literal["sic_bo", "craps", "dice_duel", "lightning_dice"]

GAME_DICE: Final[Mapping[str, int]] = {
    "sic_bo": 3,  # L5: named, no rules; the industry game has three
    "craps": 2,  # L2747
    "dice_duel": 2,  # L2683
    "lightning_dice": 3,  # L3069
}
"""How many dice each game is played with."""

# Re-roll codes (verdicts: the round stays, the bets stand; docs/verdicts.md "Dice").
SHORT_TUMBLE: Final = "short_tumble"
ROLL_NOT_SEEN: Final = "roll_not_seen"
# A read refused (the round waits for a re-read, a manual entry or a roll_invalid).
WRONG_DICE_COUNT: Final = "wrong_dice_count"
WRONG_COLORS: Final = "wrong_colors"
LOW_CONFIDENCE: Final = "low_confidence"

RULE_AT_REST: Final = "seed-001 §7 [GAP]: L2683, L2757, L3069 (dice at rest)"
_RULE_DICE: Final = {
    "sic_bo": "seed-001 L5 (industry Sic Bo)",
    "craps": "seed-001 §7.2 L2747",
    "dice_duel": "seed-001 §7.1 L2683",
    "lightning_dice": "seed-001 §7.3 L3069",
}


class DiceRules(pydantic.BaseModel):
    """The ``[rules]`` of a dice table, validated strictly (unknown keys are errors)."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    variant: DiceVariant
    """The game these rules are (the preset they started from)."""

    dice: int = pydantic.Field(ge=1, le=6)
    """How many dice a roll shows: the game's count (:data:`GAME_DICE`), written out so a table's
    config says it."""

    colors: list[str] | None = None
    """The dice's colours in the order the reader reports them (Dice Duel: red and blue, L2683).
    A ``dice`` event with ``colors`` is put in this order; one without is taken in it."""

    min_tumble_seconds: float = pydantic.Field(default=0.0, ge=0)
    """A result sooner than this after ``roll_started`` is re-rolled (``short_tumble``). The book
    gives no figure [GAP]: the presets' are assumptions to tune per table. 0: unchecked."""

    require_roll_started: bool = False
    """For shakers and towers that report the start; without it the tumble is not timed."""

    min_confidence: float = pydantic.Field(default=0.0, ge=0, le=1)
    """A read whose reader gives a lower ``confidence`` is refused (``low_confidence``): the
    reader reads again, or the dealer enters the dice by hand. 0: unchecked."""

    on_roll_invalid: Literal["reroll", "void"] = "reroll"
    """A ``roll_invalid`` (a cocked die, a die off the table …): roll again with the bets standing,
    or void the round with its code. The book has no rule (§7 [GAP]); re-roll is the industry's."""

    on_fault: Literal["void", "decide", "reroll"] = "void"
    """``void`` (G1, G3), ``decide`` (G4, C42), or ``reroll`` once cleared (G3: no result was taken;
    for shakers that re-home after a motion fault)."""

    on_rng_missing: Literal["void", "hold"] = "void"
    """Lightning Dice: a result with no lightning numbers drawn (``rng_missing``): void the round,
    or hold it for a supervisor (``confirm`` settles it at the base odds, ``void`` voids)."""

    @property
    def rng_draw(self) -> bool:
        """Whether the round has an RNG draw between bets closed and the roll (L3069)."""
        return self.variant == "lightning_dice"

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> DiceRules:
        want = GAME_DICE[self.variant]
        if self.dice != want:
            raise RuleError(f"dice: {self.variant} is played with {want} dice, not {self.dice}")
        if self.colors is not None:
            if len(self.colors) != self.dice:
                raise RuleError(f"colors: {len(self.colors)} colours for {self.dice} dice")
            if len(set(self.colors)) != len(self.colors) or any(not c for c in self.colors):
                raise RuleError("colors: each die needs its own colour")
        if self.variant == "dice_duel" and sorted(self.colors or ()) != sorted(COLORS):
            raise RuleError('colors: dice duel is played with a "red" and a "blue" die (L2683)')
        return self


def read_dice(
    rules: DiceRules,
    dice: Sequence[int],
    colors: Sequence[str] | None,
    confidence: float | None,
) -> tuple[int, ...] | Finding:
    """A reader's dice in the table's order, or why they are refused."""
    data: dict[str, Any] = {"dice": list(dice), "colors": list(colors) if colors else None}
    if len(dice) != rules.dice:
        return Finding(
            WRONG_DICE_COUNT,
            _RULE_DICE[rules.variant],
            f"{len(dice)} dice read; {rules.variant} is played with {rules.dice}",
            data,
        )
    if colors is not None and (
        len(colors) != len(dice)
        or (rules.colors is not None and sorted(colors) != sorted(rules.colors))
    ):
        want = rules.colors if rules.colors is not None else f"one per die ({rules.dice})"
        return Finding(
            WRONG_COLORS,
            _RULE_DICE[rules.variant],
            f"dice colours {list(colors)}: this table's are {want}",
            data,
        )
    if confidence is not None and confidence < rules.min_confidence:
        return Finding(
            LOW_CONFIDENCE,
            RULE_AT_REST,
            f"reader confidence {confidence} is below {rules.min_confidence}: read again",
            {**data, "confidence": confidence},
        )
    if colors is None or rules.colors is None:
        return tuple(dice)
    by_color = dict(zip(colors, dice, strict=True))
    return tuple(by_color[c] for c in rules.colors)


def tumble_seconds(started: str | None, at_rest: str | None) -> float | None:
    """Seconds from ``roll_started`` to the result (the events' ``ts``); ``None`` if unknown."""
    return seconds_between(started, at_rest)


def check_tumble(rules: DiceRules, *, rolled: bool, seconds: float | None) -> Finding | None:
    """Why a result must be rolled again, or ``None``. ``seconds`` is ``None`` only in a
    hand-written stream (the runner stamps every event): not timed."""
    if not rolled:
        if rules.require_roll_started:
            return Finding(
                ROLL_NOT_SEEN,
                RULE_AT_REST,
                "no roll_started before this result: roll again (bets stand)",
                {"reroll": True},
            )
        return None
    if rules.min_tumble_seconds and seconds is not None and seconds < rules.min_tumble_seconds:
        return Finding(
            SHORT_TUMBLE,
            RULE_AT_REST,
            f"dice at rest {seconds} s after the roll started (minimum "
            f"{rules.min_tumble_seconds} s): roll again (bets stand)",
            {"reroll": True, "tumble_seconds": seconds},
        )
    return None


def roll_result(
    rules: DiceRules,
    dice: Sequence[int],
    *,
    craps: CrapsState,
    lightning: Lightning = (),
) -> tuple[dict[str, Any], CrapsState]:
    """The ``result`` of a counted roll and the craps state of the next (only craps changes it)."""
    if rules.variant == "sic_bo":
        return sic_bo_result(dice), craps
    if rules.variant == "craps":
        return craps_result(craps, dice)
    if rules.variant == "dice_duel":
        colors = rules.colors or list(COLORS)
        by_color = dict(zip(colors, dice, strict=True))
        return dice_duel_result(by_color["red"], by_color["blue"]), craps
    return lightning_result(dice, lightning), craps
