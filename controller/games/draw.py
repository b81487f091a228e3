"""Ball draws (lotto, keno, bingo drums) as pure rules: parameters, the draw, the result.

Rule ids: seed-001 §6 (no duplicates; re-insertion only between rounds, 1 Bet L3323), §10, §12;
regulatory R16. Read order (Lucky 7 L2319, Mega Ball L2859) or receiver position (Lucky 5 L2123;
Lucky 6/60 L2537); extra balls flagged (L2319); a short draw did not take place (L2319, C38);
Fruitrace's panel (§6.12 L2907–2927); Cash or Crash's ladder (§6.13 L4399–4407). Readings:
docs/games/drum_games.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError

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
    "fruitrace",
    "cash_or_crash",
]


class DrawRules(pydantic.BaseModel):
    """The ``[rules]`` of a ball-draw table: a preset with the table's keys on top, validated
    strictly."""

    # strict: a TOML ``draw = "7"`` is a config mistake, not a 7.
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True, strict=True)

    variant: DrawVariant | None = None
    """The preset these started from; a table may pick another (seed-001 C40: two games are "LUCKY
    6")."""

    balls: int = pydantic.Field(ge=1, le=1000)
    """n: balls in the drum."""

    lowest: int = pydantic.Field(default=1, ge=0)
    """The lowest ball number (1 Bet numbers its balls 0–36, L3325)."""

    draw: int = pydantic.Field(ge=1)
    """k: balls that make the result. A crash draw (``crash_color``): the top level, where the
    draw ends if no crash ended it first (Cash or Crash: 20, one per green or golden ball)."""

    bonus: int = pydantic.Field(default=0, ge=0)
    """Extra balls drawn from the remaining ones after the k (lotto 5/35: 1, L4579; Mega Ball:
    the Mega Ball(s), L2863)."""

    bonus_min: int | None = pydantic.Field(default=None, ge=0)
    """Mega Ball's "one or two" (L2863): the fewest bonus balls, enough once the drum reports
    ``tube_full``."""

    order: Literal["read", "position"] = "read"
    """``read``: the order of reading (tube order); ``position``: by receiver position (each read
    must carry its 1-based ``position``)."""

    extras: Literal["ignore", "flag"] = "flag"
    """Balls after the count never enter the result; ``flag`` reports each as a verdict."""

    min_mixing_seconds: float = pydantic.Field(default=0.0, ge=0)
    """Mixing before the first ball: no figure in the source [GAP], R16 requires mixing; 0
    disables."""

    min_quality: int = pydantic.Field(default=50, ge=0, le=100)
    """A read whose reader ``quality`` (0–100) is below this is held for a re-read. The source
    has no figure [GAP]; reads without a quality, and manual entries, are trusted."""

    on_fault: Literal["decide", "void"] = "decide"
    """No ball game has a malfunction clause (seed-001 §2.2, §6), so G3/G4 and C42 apply: ``decide``
    holds for a supervisor; ``void`` voids ``device_fault`` (G1)."""

    colors: dict[str, list[int]] | None = None
    """Colour → its balls; when set, every ball has exactly one colour. Lucky 5 (L2123) and Lucky 7
    (L2319) give the colour sizes but not the map [GAP]: configure the drum's own."""

    values: list[int] | None = None
    """Face values where a ball's face is not its id (Lucky 6/60's digits, L2537, C39)."""

    zones: list[str] | None = None
    """Receiver zones, left to right (Lucky 6/60: A, B, C, L2537); each zone's faces form a
    number."""

    prefix_sums: list[int] = pydantic.Field(default_factory=list)
    """Sums of the first N balls the bets need (Lucky 6/48: "sum of the first 5 balls", L3031;
    Super Six C27)."""

    panel: list[str] | None = None
    """Fruitrace's panel colours by tube position (§6.12 L2907); their order is not given [GAP]."""

    panel_min_matches: int = pydantic.Field(default=4, ge=1)
    """The fewest matches that win (L2909: "in case of 4 or more matches")."""

    panel_solo: str | None = None
    """A colour whose match wins alone, with no other match (L2909, L2911: "if only '7'-ball
    aligns … just one pure match of '7'-ball, without any other matches")."""

    crash_color: str | None = None
    """A ball of this colour ends the draw unless a shield stands (§6.13 L4407); others climb
    (L4401, L4405)."""

    shield_color: str | None = None
    """Raises the blimp and takes the next crash ball (§6.13 L4405); one shield at a time (the
    book's drum has one golden ball)."""

    @property
    def slots(self) -> int:
        """The most balls that count: k plus every bonus ball (a crash draw: the top level plus
        the crash balls its shields can take)."""
        if self.crash_color is not None:
            return self.draw + min(self._count(self.shield_color), self._count(self.crash_color))
        return self.draw + self.bonus

    def _count(self, colour: str | None) -> int:
        return len((self.colors or {}).get(colour or "", []))

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
        self._check_panel()
        self._check_ladder()
        return self

    def _colour(self, key: str, colour: str | None) -> None:
        if colour is not None and colour not in (self.colors or {}):
            raise RuleError(f"{key}: {colour!r} is not a colour of colors (a colour map is needed)")

    def _check_panel(self) -> None:
        """Fruitrace: one panel colour per tube position, each a colour of the drum."""
        if self.panel is None:
            if self.panel_solo is not None:
                raise RuleError("panel_solo needs a panel")
            return
        if len(self.panel) != self.draw:
            raise RuleError(f"panel: {len(self.panel)} positions for a draw of {self.draw}")
        for colour in self.panel:
            self._colour("panel", colour)
        self._colour("panel_solo", self.panel_solo)

    def _check_ladder(self) -> None:
        """Cash or Crash: a colour map with the crash (and shield) colour, read in draw order."""
        if self.crash_color is None:
            if self.shield_color is not None:
                raise RuleError("shield_color needs a crash_color")
            return
        self._colour("crash_color", self.crash_color)
        self._colour("shield_color", self.shield_color)
        if self.shield_color == self.crash_color:
            raise RuleError("shield_color and crash_color are the same colour")
        if self.order != "read" or self.bonus or self.panel is not None:
            raise RuleError("a crash draw is read in draw order, with no bonus balls and no panel")
        climbing = self.balls - self._count(self.crash_color)
        if self.draw > climbing:
            raise RuleError(
                f"draw (the top level, {self.draw}) exceeds the balls that raise the blimp "
                f"({climbing})"
            )


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


def ladder_end(rules: DrawRules, balls: Sequence[int]) -> int | None:
    """How many balls a crash draw takes, ``None`` while it goes on (§6.13 L4401–4407)."""
    level, shield = 0, False
    for taken, ball in enumerate(balls, 1):
        colour = color_of(rules, ball)
        if colour == rules.crash_color:
            if not shield:
                return taken
            shield = False
            continue
        level += 1
        shield = shield or colour == rules.shield_color
        if level >= rules.draw:
            return taken
    return None


def _ladder_facts(rules: DrawRules, balls: Sequence[int]) -> dict[str, Any]:
    """Cash or Crash's levels (the cash-out decisions, L4403), crash and shields."""
    levels: list[int] = []
    shielded: list[int] = []
    level, shield, crashed = 0, False, False
    for position, ball in enumerate(balls, 1):
        colour = color_of(rules, ball)
        if colour == rules.crash_color:
            if shield:
                shield = False
                shielded.append(position)
            else:
                crashed = True
        else:
            level += 1
            shield = shield or colour == rules.shield_color
        levels.append(level)
    return {
        "levels": levels,
        "level": level,
        "crashed": crashed,
        "top": level >= rules.draw,
        "shield": shield,
        "shielded": shielded,
    }


def _panel_facts(rules: DrawRules, balls: Sequence[int]) -> dict[str, Any]:
    """Fruitrace's matches and the class the bets pay (§6.12 L2909–2927)."""
    panel = rules.panel or []
    matched = [
        position
        for position, (ball, colour) in enumerate(zip(balls, panel, strict=True), 1)
        if color_of(rules, ball) == colour
    ]
    by_colour = {c: 0 for c in dict.fromkeys(panel)}
    for position in matched:
        by_colour[panel[position - 1]] += 1
    solo = (
        len(matched) == 1
        and rules.panel_solo is not None
        and panel[matched[0] - 1] == rules.panel_solo
    )
    winning = (
        "solo" if solo else str(len(matched)) if len(matched) >= rules.panel_min_matches else None
    )
    return {
        "matches": len(matched),
        "matched": matched,
        "matched_colors": by_colour,
        "match_class": winning,
    }


def _face(rules: DrawRules, ball: int) -> int:
    return ball if rules.values is None else rules.values[ball - rules.lowest]


def draw_result(
    rules: DrawRules, balls: Sequence[int], bonus: Sequence[int] = ()
) -> dict[str, Any]:
    """The ``result`` of a settled draw (contracts §4.3, extended by the facts seed-001's bets
    settle on: Lucky 5/7, Lucky 7 L2321–2465, Lucky 6/48, Super Six, MEGA 6, Lucky 6/60). Bonus
    balls enter no fact. A draw that broke the rules raises: it is never a result."""
    everything = [*balls, *bonus]
    if rules.crash_color is None and len(balls) != rules.draw:
        raise RuleError(f"a result has {rules.draw} balls, got {len(balls)}")
    if bad := [b for b in everything if not in_range(rules, b)]:
        raise RuleError(f"balls out of range: {bad}")
    if len(set(everything)) != len(everything):
        raise RuleError(f"a ball repeats: {everything}")
    if rules.crash_color is not None and (not balls or ladder_end(rules, balls) != len(balls)):
        raise RuleError(f"the crash draw does not end with its last ball: {list(balls)}")
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
    if rules.panel is not None:
        result.update(_panel_facts(rules, balls))
    if rules.crash_color is not None:
        result.update(_ladder_facts(rules, balls))
    return result
