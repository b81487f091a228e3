"""Ball draws (lotto, keno, bingo drums) as pure rules: parameters, the draw, the result.

One family, a preset per rule-book game (:data:`tablectl.controller.games.catalog.DRAW_PRESETS`;
DESIGN §4.2: a rule book's game is a preset of its family's engine; ``[rules]`` overrides its
parameters). Rule ids point into
``../shared/rules/seed-001-live-casino-regulations.md`` (§6 ball drums, §10 parameter table, §12
contradictions) and ``regulatory.md`` (R16 mechanical mixing, ball integrity):

- A draw is ``draw`` (k) distinct balls out of ``balls`` (n), numbered ``lowest`` … ``lowest+n-1``,
  then ``bonus`` further balls drawn from the remaining ones (§6 general: no duplicates within a
  draw unless the game re-inserts balls; re-insertion happens *between* rounds only, 1 Bet L3323).
- The order is the read order (tube order: Lucky 7 L2319, Mega Ball L2859 "one after the other")
  or the receiver position (Lucky 5 L2123 "cylinders from left to right"; Lucky 6/60 L2537 zones).
- Balls after the count are ignored, flagged by default (Lucky 7 L2319: "the first 7 balls are
  counted, and the other balls are ignored"). The source has no other extra-ball rule [GAP].
- "The draw is deemed to have taken place when at least 7 balls have been drawn" (L2319): a draw
  that ends short has not taken place (C38: no remedy stated; the engine voids it).
- A read is trusted only when it cannot contradict the physical drum: one round's reads are
  :class:`tablectl.controller.games.draw_round.Draw`.

No I/O, no clock: the engine (:mod:`tablectl.controller.engines.draw`) owns the round and calls
these.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError

__all__ = [
    "DrawRules",
    "DrawVariant",
    "color_of",
    "draw_result",
    "in_range",
]

DrawVariant: TypeAlias = Literal[
    "lucky5",
    "lucky7",
    "lucky6",
    "lucky6_60",
    "super_six",
    "mega6",
    "mega_ball",
    "lotto_5_35",
    "bingo37",
    "bingo38",
    "one_bet",
    "keno",
    "keno_express",
]


class DrawRules(pydantic.BaseModel):
    """The ``[rules]`` of a ball-draw table, validated strictly (unknown keys are errors).

    Built from a game's preset (:data:`tablectl.controller.games.catalog.DRAW_PRESETS`) with the
    table's overrides on top by :func:`tablectl.controller.engines.load_rules` (errors name the
    key and the file).
    """

    # strict: a TOML ``draw = "7"`` is a config mistake, not a 7.
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    variant: DrawVariant | None = None
    """The preset these parameters started from (a table may pick another preset than its game
    key, e.g. ``game = "lucky6"`` with ``variant = "lucky6_60"``; seed-001 C40: two games share
    the title "LUCKY 6")."""

    balls: int = pydantic.Field(ge=1, le=1000)
    """n: balls in the drum."""

    lowest: int = pydantic.Field(default=1, ge=0)
    """The lowest ball number (1 Bet numbers its balls 0–36, L3325)."""

    draw: int = pydantic.Field(ge=1)
    """k: balls that make the result."""

    bonus: int = pydantic.Field(default=0, ge=0)
    """Extra balls drawn from the remaining ones after the k (lotto 5/35: 1, L4579; Mega Ball:
    the Mega Ball(s), L2863)."""

    bonus_min: int | None = pydantic.Field(default=None, ge=0)
    """When the number of bonus balls varies per round (Mega Ball: "one or two", L2863): the
    fewest. The draw then ends after ``bonus`` bonus balls, or after at least ``bonus_min`` when
    the drum reports ``tube_full``. ``None``: always exactly ``bonus``."""

    order: Literal["read", "position"] = "read"
    """``read``: the order of reading (tube order); ``position``: by receiver position (each read
    must carry its 1-based ``position``)."""

    extras: Literal["ignore", "flag"] = "flag"
    """Balls after the count never enter the result; ``flag`` reports each as a verdict."""

    min_mixing_seconds: float = pydantic.Field(default=0.0, ge=0)
    """Mixing (blower on) before the first ball, timed from the events' ``ts``. The source gives
    no figure (§2.1 lists every timing it has) [GAP]; regulatory R16 requires mechanical mixing.
    0 disables the check."""

    min_quality: int = pydantic.Field(default=50, ge=0, le=100)
    """A read whose reader ``quality`` (0–100) is below this is held for a re-read. The source
    has no figure [GAP]; reads without a quality, and manual entries, are trusted."""

    on_fault: Literal["decide", "void"] = "decide"
    """A device fault once the draw has begun: ``decide`` holds the round for a supervisor
    (``confirm`` goes on, ``void`` voids): no ball game has a malfunction clause (seed-001 §2.2,
    §6), so G3/G4 and C42 apply (a fault that does not affect the result lets it stand, with
    manual confirmation). ``void`` voids it ``device_fault`` (G1)."""

    colors: dict[str, list[int]] | None = None
    """Colour → its balls; when set, every ball has exactly one colour. Lucky 5 (L2123) and Lucky 7
    (L2319) give the colour sizes but not the map [GAP]: configure the drum's own."""

    values: list[int] | None = None
    """Face value of each ball, ``values[i]`` for ball ``lowest + i``, when the printed face is not
    the ball's id (Lucky 6/60: 60 physical balls carry digits 0–9, L2537, C39). Sums, parity and
    zones then use the faces."""

    zones: list[str] | None = None
    """Receiver zones, left to right, splitting the k balls evenly (Lucky 6/60: A, B, C of 2 balls
    each, L2537); each zone's faces form a number ("the numbers of the balls dropped out in A
    zone will make the selected number (00,…,99)")."""

    prefix_sums: list[int] = pydantic.Field(default_factory=list)
    """Sums of the first N balls the bets need (Lucky 6/48: "sum of the first 5 balls", L3031;
    Super Six C27)."""

    @property
    def slots(self) -> int:
        """The most balls that count: k plus every bonus ball."""
        return self.draw + self.bonus

    @property
    def slots_min(self) -> int:
        """The fewest balls for a draw that has taken place."""
        return self.draw + (self.bonus if self.bonus_min is None else self.bonus_min)

    @property
    def highest(self) -> int:
        return self.lowest + self.balls - 1

    @pydantic.model_validator(mode="after")
    def _consistent(self) -> DrawRules:
        if self.slots > self.balls:
            raise RuleError(
                f"draw + bonus ({self.slots}) exceeds the balls in the drum ({self.balls})"
            )
        if self.bonus_min is not None and self.bonus_min > self.bonus:
            raise RuleError(f"bonus_min ({self.bonus_min}) exceeds bonus ({self.bonus})")
        numbers = range(self.lowest, self.highest + 1)
        if self.colors is not None:
            seen: dict[int, str] = {}
            for colour, members in self.colors.items():
                for ball in members:
                    if ball not in numbers:
                        raise RuleError(f"colors.{colour}: ball {ball} is not in the drum")
                    if ball in seen:
                        raise RuleError(f"ball {ball} is both {seen[ball]} and {colour}")
                    seen[ball] = colour
            missing = [b for b in numbers if b not in seen]
            if missing:
                raise RuleError(f"colors: balls without a colour: {missing[:10]}")
        if self.values is not None and len(self.values) != self.balls:
            raise RuleError(f"values: {len(self.values)} faces for {self.balls} balls")
        if self.zones is not None:
            if not self.zones or self.draw % len(self.zones):
                raise RuleError(f"zones: {len(self.zones)} zones cannot split {self.draw} balls")
            if self.values is None:
                raise RuleError(
                    "zones read the faces of the balls: configure values (face per ball; "
                    "seed-001 C39: the digit of each physical ball is not in the rule book)"
                )
        for n in self.prefix_sums:
            if not 1 <= n <= self.draw:
                raise RuleError(f"prefix_sums: {n} is not between 1 and draw ({self.draw})")
        return self


def in_range(rules: DrawRules, ball: object) -> bool:
    """Whether ``ball`` is a ball of this drum (strict: ``True`` is not 1)."""
    return (
        isinstance(ball, int)
        and not isinstance(ball, bool)
        and (rules.lowest <= ball <= rules.highest)
    )


def color_of(rules: DrawRules, ball: int) -> str | None:
    """The ball's colour, when the table has a colour map."""
    if rules.colors is None:
        return None
    for colour, members in rules.colors.items():
        if ball in members:
            return colour
    return None


def _face(rules: DrawRules, ball: int) -> int:
    return ball if rules.values is None else rules.values[ball - rules.lowest]


def draw_result(
    rules: DrawRules, balls: Sequence[int], bonus: Sequence[int] = ()
) -> dict[str, Any]:
    """The ``result`` of a settled draw (DESIGN §4.3 ``{"balls": [...]}``, extended).

    The derived facts are what seed-001's bets settle on: sum, odd/even counts (Lucky 5/7 "more
    odd or more even", "sum odd/even"), first/last ball (Lucky 7 L2321–2465, Lucky 6/48, Super
    Six), colour counts and sums (Lucky 5 per-colour bets, Lucky 7 "yellow sum", MEGA 6 "white
    sum"), prefix sums (Lucky 6/48 "first 5 balls") and zones (Lucky 6/60). Sums and parity are
    over the faces when ``values`` is configured; ``bonus`` balls are reported apart and enter
    none of the facts.

    Raises:
        ValueError: a ball out of range, a repeated ball or the wrong count (a draw that broke
            the rules is never a result).
    """
    everything = [*balls, *bonus]
    if len(balls) != rules.draw:
        raise RuleError(f"a result has {rules.draw} balls, got {len(balls)}")
    if bad := [b for b in everything if not in_range(rules, b)]:
        raise RuleError(f"balls out of range: {bad}")
    if len(set(everything)) != len(everything):
        raise RuleError(f"a ball repeats: {everything}")
    faces = [_face(rules, b) for b in balls]
    odd = sum(1 for f in faces if f % 2)
    result: dict[str, Any] = {
        "balls": list(balls),
        "bonus": list(bonus),
        "sum": sum(faces),
        "odd": odd,
        "even": len(faces) - odd,
        "first": balls[0],
        "last": balls[-1],
    }
    if rules.values is not None:
        result["values"] = faces
    if rules.colors is not None:
        per_ball = [color_of(rules, b) for b in balls]
        result["ball_colors"] = per_ball
        result["colors"] = {c: per_ball.count(c) for c in rules.colors}
        result["color_sums"] = {
            c: sum(f for f, pc in zip(faces, per_ball, strict=True) if pc == c)
            for c in rules.colors
        }
        if bonus:
            result["bonus_colors"] = [color_of(rules, b) for b in bonus]
    if rules.prefix_sums:
        result["prefix_sums"] = {str(n): sum(faces[:n]) for n in rules.prefix_sums}
    if rules.zones:
        size = rules.draw // len(rules.zones)
        zones: dict[str, Any] = {}
        for i, name in enumerate(rules.zones):
            part = faces[i * size : (i + 1) * size]
            zones[name] = {
                "values": part,
                "number": "".join(str(f) for f in part),
                "sum": sum(part),
            }
        result["zones"] = zones
    return result
