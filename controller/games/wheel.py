"""Money wheels (Dream Catcher, the 19-sector wheel, Crazy Time, Monopoly, Mega Wheel) as pure
rules: layouts, spin validity, multiplier chains, the result.

One family, a preset per rule-book game; ``[rules]`` overrides its parameters. Rule ids point into
``../shared/rules/seed-001-live-casino-regulations.md`` §5 (wheels), §10, §12:

- **Layouts are configuration.** The rule book gives segment counts (Dream Catcher L1758–1766,
  Monopoly L1865, Crazy Time L2049, the 19-sector wheel L2471) but never the physical order
  (§5.1 [GAP]); each preset (:data:`tablectl.controller.games.catalog.WHEEL_PRESETS`) has a
  *documented default order* (the counts spread evenly by
  :func:`~tablectl.controller.games.catalog.spread`) so a table runs out of the box, and a real
  table sets ``segments`` to its wheel's order, index 0 first, in the direction the sensor
  counts. When the rule book gives the counts, a configured layout must have exactly them
  (``counts``).
- **Spin validity.** The 19-sector wheel: "The round is considered succeeded if the wheel made at
  least 3 full spins clockwise" and "the spin must be repeated" otherwise (L2471, C37) →
  ``direction = "cw"``, ``min_revolutions = 3``; a spin that fails is a re-spin with the same bets,
  never a result. The pointer on a divider → re-spin (Crazy Time L2091 "If the wheel stops on the
  border of the segments … the wheel is spun again"; C6: applied to every wheel, configurable).
- **Multiplier chains.** Dream Catcher's 2x/7x (L1754): "all bets remain in place and new bets
  won't be allowed. The wheel is spun again … the multipliers stack" until a number; "2x, then …
  7x, and … 5 … (5 to 1) x 2 x 7". Monopoly's Chance (L1875–1887) chains the same way with the
  card's multiplier (the card is not the wheel's: the wheel factor is 1), and a cash card may end
  the round there (C25: ``open_chain``, closed by a supervisor ``confirm``).
- **Malfunction.** Dream Catcher L1768 and Crazy Time L2097: "Any malfunction cancels the game
  round … Bets are returned" → ``on_fault = "void"``. Monopoly, the 19-sector wheel and Mega Wheel
  have no clause (§2.2) → ``"decide"`` (seed-001 G3/G4, C42).
- **Monopoly's dice bonus** (L1891–1921). Whether its dice are physical is not stated (§5.2 [GAP]),
  so it is a switch: ``dice_bonus = true`` keeps the round open after "2 rolls"/"4 rolls" for the
  bonus's rolls (:mod:`tablectl.controller.games.monopoly_bonus`); ``false`` (the default: a
  table with no dice reader, or a virtual bonus) ends the round on the segment as before.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Direction, Segment
from tablectl.controller.games.monopoly_bonus import Board

__all__ = [
    "RESPIN_DIRECTION_UNKNOWN",
    "RESPIN_MIN_REVOLUTIONS",
    "RESPIN_ON_DIVIDER",
    "RESPIN_REVOLUTIONS_UNKNOWN",
    "RESPIN_WRONG_DIRECTION",
    "WheelRules",
    "WheelVariant",
    "check_spin",
    "kind",
    "spin_result",
]

WheelVariant: TypeAlias = Literal[
    "dream_catcher", "wheel_of_fortune", "crazy_time", "monopoly", "mega_wheel"
]
Kind: TypeAlias = Literal["number", "symbol", "multiplier", "bonus"]

# Re-spin reasons (``data.reason`` of a ``respin`` verdict; docs/verdicts.md "Money wheels").
RESPIN_ON_DIVIDER: Final = "on_divider"
RESPIN_WRONG_DIRECTION: Final = "wrong_direction"
RESPIN_DIRECTION_UNKNOWN: Final = "direction_unknown"
RESPIN_MIN_REVOLUTIONS: Final = "min_revolutions"
RESPIN_REVOLUTIONS_UNKNOWN: Final = "revolutions_unknown"


class WheelRules(pydantic.BaseModel):
    """The ``[rules]`` of a money-wheel table, validated strictly."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    variant: WheelVariant | None = None
    """The preset these parameters started from."""

    segments: list[str] = pydantic.Field(min_length=2)
    """Segment labels in physical order: index 0 is the segment the sensor reports as 0."""

    counts: dict[str, int] | None = None
    """The rule book's count per label; the layout must match it exactly (``None``: unchecked,
    e.g. Mega Wheel, whose counts the rule book does not give)."""

    multipliers: dict[str, int] = pydantic.Field(default_factory=dict)
    """Chain segments: label → factor. Landing on one keeps the bets and spins again in the same
    round; the factors multiply (Dream Catcher 2x, 7x: L1754)."""

    open_chain: list[str] = pydantic.Field(default_factory=list)
    """Chain segments a supervisor ``confirm`` may end the round on (Monopoly Chance with a cash
    card, C25)."""

    bonus: list[str] = pydantic.Field(default_factory=list)
    """Labels that start a bonus game: a result (the bonus game is not the wheel's)."""

    colors: dict[str, str] | None = None
    """Label → colour, when bets need it (the 19-sector wheel's grey/red/black, not given: C37)."""

    direction: Direction | None = None
    """The direction a valid spin turns (seen from the sensor); ``None``: any."""

    min_revolutions: int = pydantic.Field(default=0, ge=0)
    """Full revolutions (in ``direction``) for a valid spin; 0: unchecked (no rule but L2471)."""

    divider_respin: bool = True
    """The pointer on a divider pin → re-spin (L2091, C6)."""

    on_fault: Literal["void", "decide"] = "decide"
    """A fault after bets closed: ``void`` (bets returned) or hold for a supervisor."""

    dice_bonus: bool = False
    """A ``bonus_rolls`` segment opens a bonus played with physical dice in the same round (the
    round ends when its rolls are done). Off by default: the rule book does not say the dice are
    physical (§5.2 [GAP]), and a table without a dice reader must not wait for rolls."""

    bonus_rolls: dict[str, int] = pydantic.Field(default_factory=dict)
    """Bonus segment → the rolls it gives (Monopoly "2 rolls" 2, "4 rolls" 4: L1897)."""

    board_squares: int = pydantic.Field(default=40, ge=2)
    """The dice bonus's board (not in the rule book: the standard board is assumed)."""

    board_jail: int = 10
    """Jail's square, counted from GO = 0 (the assumed standard board)."""

    board_go_to_jail: int = 30
    """Go to Jail's square: landing there sends Mr. Monopoly to Jail (L1921)."""

    @property
    def size(self) -> int:
        return len(self.segments)

    @property
    def board(self) -> Board:
        """The dice bonus's board (see :class:`~tablectl.controller.games.monopoly_bonus.Board`)."""
        return Board(self.board_squares, self.board_jail, self.board_go_to_jail)

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> WheelRules:
        labels = set(self.segments)
        if any(not s.strip() for s in self.segments):
            raise RuleError("segments: a label is empty")
        if self.counts is not None:
            have = Counter(self.segments)
            want = Counter({k: v for k, v in self.counts.items() if v})
            if have != want:
                diff = sorted(
                    f"{label}: {have.get(label, 0)} (rule book {want.get(label, 0)})"
                    for label in set(have) | set(want)
                    if have.get(label, 0) != want.get(label, 0)
                )
                raise RuleError("segments do not match counts: " + ", ".join(diff))
        for name, group in (
            ("multipliers", list(self.multipliers)),
            ("open_chain", self.open_chain),
            ("bonus", self.bonus),
        ):
            if unknown := sorted(set(group) - labels):
                raise RuleError(f"{name}: not segments of this wheel: {unknown}")
        if bad := sorted(k for k, v in self.multipliers.items() if v < 1):
            raise RuleError(f"multipliers: factors must be >= 1: {bad}")
        if both := sorted(set(self.multipliers) & set(self.bonus)):
            raise RuleError(f"both a multiplier and a bonus: {both}")
        if loose := sorted(set(self.open_chain) - set(self.multipliers)):
            raise RuleError(f"open_chain: not multiplier segments: {loose}")
        if self.min_revolutions and self.direction is None:
            # "at least 3 full spins clockwise" (L2471): revolutions count in one direction.
            raise RuleError("min_revolutions needs a direction")
        if self.colors is not None and (unknown := sorted(set(self.colors) - labels)):
            raise RuleError(f"colors: not segments of this wheel: {unknown}")
        if loose := sorted(set(self.bonus_rolls) - set(self.bonus)):
            raise RuleError(f"bonus_rolls: not bonus segments: {loose}")
        if bad := sorted(k for k, v in self.bonus_rolls.items() if v < 1):
            raise RuleError(f"bonus_rolls: at least 1 roll: {bad}")
        if self.dice_bonus and not self.bonus_rolls:
            raise RuleError("dice_bonus needs bonus_rolls (the segments that start it)")
        _ = self.board  # the board's own checks (squares on it, distinct)
        return self


def kind(rules: WheelRules, label: str) -> Kind:
    """What landing on ``label`` means: a chain spin, a bonus game, a number or another symbol."""
    if label in rules.multipliers:
        return "multiplier"
    if label in rules.bonus:
        return "bonus"
    return "number" if label.isdigit() else "symbol"


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
    """The ``result`` of a settled wheel round (DESIGN §4.3 ``{"segment": "10", "index": n}``,
    extended).

    ``spins`` are the counted spins in order (``{"segment", "index", ...}``); the last is the
    result and every one before it a chain segment. ``multiplier`` is the product of their
    factors (Dream Catcher L1754: 2x, 7x, then 5 → 14); ``number`` is the label as an int when it
    is a number.

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
        "number": int(label) if label.isdigit() else None,
        "multiplier": multiplier,
        "spins": [dict(s) for s in spins],
        "respins": respins,
    }
    if rules.colors is not None:
        result["color"] = rules.colors.get(label)
    return result
