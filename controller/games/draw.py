"""Ball draws (lotto, keno, bingo drums) as pure rules: parameters, presets, the draw, the result.

One family, a preset per rule-book game (DESIGN §4.2: a rule book's game is a preset of its
family's engine; ``[rules]`` overrides its parameters). Rule ids point into
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
- A read is trusted only when it cannot contradict the physical drum: in range, not a ball already
  drawn, agreeing with earlier reads of its receiver position, of sufficient reader quality.
  Anything else is held for a re-read or a supervisor (DESIGN §6 "a ball read twice → re-read";
  §6 [GAP]: "no re-draw, ball-stuck, ball-jump, misread or machine-failure rules").

:class:`Draw` is one round's draw: reads in, findings out, a ball never placed twice. No I/O, no
clock: the engine (:mod:`tablectl.controller.engines.draw`) owns the round and calls these.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import BallDrawn
from tablectl.controller.games.findings import Finding

__all__ = [
    "BALL_OUT_OF_RANGE",
    "DUPLICATE_BALL",
    "PRESETS",
    "REREAD_REQUIRED",
    "VARIANTS",
    "Draw",
    "DrawRules",
    "DrawVariant",
    "color_of",
    "draw_result",
    "in_range",
    "preset_rules",
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

# Finding codes (docs/verdicts.md, "Ball draws"). Strings: they travel in JSON as they are.
BALL_OUT_OF_RANGE: Final = "ball_out_of_range"
DUPLICATE_BALL: Final = "duplicate_ball"
REREAD_REQUIRED: Final = "reread_required"
POSITION_MISSING: Final = "position_missing"
POSITION_OUT_OF_RANGE: Final = "position_out_of_range"

# Why a read is held (``data.reason`` of a ``reread_required`` verdict).
LOW_QUALITY: Final = "low_quality"
DISAGREEMENT: Final = "disagreement"
OUT_OF_RANGE: Final = "out_of_range"
REPEATED: Final = "repeated"

RULE_GENERAL: Final = "seed-001 §6 (general), DESIGN §6"
RULE_REREAD: Final = "DESIGN §6 (a ball read twice → re-read); seed-001 §6 [GAP]"


class DrawRules(pydantic.BaseModel):
    """The ``[rules]`` of a ball-draw table, validated strictly (unknown keys are errors).

    Build one from a game's preset and the table's overrides with :func:`preset_rules` (the
    engine does this through ``validate_section``, so errors name the key and the file).
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
            raise ValueError(
                f"draw + bonus ({self.slots}) exceeds the balls in the drum ({self.balls})"
            )
        if self.bonus_min is not None and self.bonus_min > self.bonus:
            raise ValueError(f"bonus_min ({self.bonus_min}) exceeds bonus ({self.bonus})")
        numbers = range(self.lowest, self.highest + 1)
        if self.colors is not None:
            seen: dict[int, str] = {}
            for colour, members in self.colors.items():
                for ball in members:
                    if ball not in numbers:
                        raise ValueError(f"colors.{colour}: ball {ball} is not in the drum")
                    if ball in seen:
                        raise ValueError(f"ball {ball} is both {seen[ball]} and {colour}")
                    seen[ball] = colour
            missing = [b for b in numbers if b not in seen]
            if missing:
                raise ValueError(f"colors: balls without a colour: {missing[:10]}")
        if self.values is not None and len(self.values) != self.balls:
            raise ValueError(f"values: {len(self.values)} faces for {self.balls} balls")
        if self.zones is not None:
            if not self.zones or self.draw % len(self.zones):
                raise ValueError(f"zones: {len(self.zones)} zones cannot split {self.draw} balls")
            if self.values is None:
                raise ValueError(
                    "zones read the faces of the balls: configure values (face per ball; "
                    "seed-001 C39: the digit of each physical ball is not in the rule book)"
                )
        for n in self.prefix_sums:
            if not 1 <= n <= self.draw:
                raise ValueError(f"prefix_sums: {n} is not between 1 and draw ({self.draw})")
        return self


def _cycle_colors(names: Sequence[str], balls: int, lowest: int = 1) -> dict[str, list[int]]:
    """Colour by ``(n - lowest) mod len(names)`` (Lucky 6/48 L2945–2965; MEGA 6 by parity)."""
    return {
        name: list(range(lowest + i, lowest + balls, len(names))) for i, name in enumerate(names)
    }


# seed-001 L3325: 1 Bet's red set (the standard roulette red set), black the rest, 0 green.
_ONE_BET_RED: Final = (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)

_PRESETS: dict[str, dict[str, Any]] = {
    # §6.1 L2123: "5 winning balls out of 36 (9 balls for each color: white, blue, green and red)
    # … drawn into the cylinders. The order … is determined by the cylinders from left to
    # right". Colour map not given [GAP].
    "lucky5": {"balls": 36, "draw": 5, "order": "position"},
    # §6.2 L2319: "7 winning balls out of 42 (21 … black and yellow) … fall into the tube";
    # "more than 7 balls in the tube, the first 7 balls are counted, the other balls are ignored".
    # Colour map not given [GAP, C38].
    "lucky7": {"balls": 42, "draw": 7, "order": "read", "extras": "flag"},
    # §6.4 L2945–2965: 35 of 48, 8 colours by (n−1) mod 8; "sum of the first 5 balls" (L3031).
    "lucky6": {
        "balls": 48,
        "draw": 35,
        "colors": _cycle_colors(
            ("green", "blue", "red", "purple", "yellow", "orange", "brown", "black"), 48
        ),
        "prefix_sums": [5],
    },
    # §6.3 L2537: 6 of 60 digit balls in zones A-2, B-2, C-2 left to right. The digit (and colour)
    # of each physical ball is not given (C39): values are required config.
    "lucky6_60": {"balls": 60, "draw": 6, "order": "position", "zones": ["A", "B", "C"]},
    # §6.5 L4253: 35 of 48, 8 colours of 6; the map is probably §6.4's [GAP]; C27: the 122.5
    # sum bet read as the first-5 sum.
    "super_six": {
        "balls": 48,
        "draw": 35,
        "colors": _cycle_colors(
            ("green", "blue", "red", "purple", "yellow", "orange", "brown", "black"), 48
        ),
        "prefix_sums": [5],
    },
    # §6.6 L4195: 6 of 49, odd white, even pink, "displayed in the result tube".
    "mega6": {"balls": 49, "draw": 6, "colors": _cycle_colors(("white", "pink"), 49)},
    # §6.7 L2859, L2863: 20 of 51 "one after the other", then "one or two Mega Ball Bonus rounds",
    # each "A ball is drawn from the lottery drum" (from the remaining 31: [GAP], the engine keeps
    # every ball of a round distinct). The 5x–100x multiplier is RNG, not the drum's.
    "mega_ball": {"balls": 51, "draw": 20, "bonus": 2, "bonus_min": 1},
    # §6.8 L4575, L4579: 5 of 35, then "The 6th ball falls out of the remaining 30 balls".
    "lotto_5_35": {"balls": 35, "draw": 5, "bonus": 1},
    # §6.9 L4587: "37 balls … numbered from 1 to 37 … randomly selects one".
    "bingo37": {"balls": 37, "draw": 1},
    # §6.10 L4615: the same with 38 balls.
    "bingo38": {"balls": 38, "draw": 1},
    # §6.11 L3323–3325: one of 37 balls 0–36, returned after the round; roulette colours.
    "one_bet": {
        "balls": 37,
        "lowest": 0,
        "draw": 1,
        "colors": {
            "green": [0],
            "red": list(_ONE_BET_RED),
            "black": [n for n in range(1, 37) if n not in _ONE_BET_RED],
        },
    },
    # Not seed-001: classic keno, 20 of 80 (DESIGN §4.2's example "balls = 80, draw = 20").
    "keno": {"balls": 80, "draw": 20},
    # §6.14 L2101: one number 1–100 "drawn from the lottery drum" — but predetermined "minimum 2
    # rounds in advance" (L2117, C30: RNG). For a table that does draw it physically.
    "keno_express": {"balls": 100, "draw": 1},
}

PRESETS: Final[Mapping[str, Mapping[str, Any]]] = MappingProxyType(
    {name: MappingProxyType(params) for name, params in _PRESETS.items()}
)
"""Each rule-book game's parameters, as a ``[rules]`` mapping (sources in the comments above)."""

VARIANTS: Final[tuple[str, ...]] = tuple(PRESETS)


def preset_rules(variant: str, overrides: Mapping[str, Any] | None = None) -> DrawRules:
    """The preset's parameters with ``overrides`` (a table's ``[rules]``) on top.

    Raises:
        KeyError: no such preset.
        pydantic.ValidationError: the merged parameters are invalid.
    """
    params = {**PRESETS[variant], "variant": variant, **(overrides or {})}
    return DrawRules.model_validate(params)


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
        raise ValueError(f"a result has {rules.draw} balls, got {len(balls)}")
    if bad := [b for b in everything if not in_range(rules, b)]:
        raise ValueError(f"balls out of range: {bad}")
    if len(set(everything)) != len(everything):
        raise ValueError(f"a ball repeats: {everything}")
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


@dataclass(slots=True)
class _Entry:
    seq: int
    """Which read of the round first claimed this slot (the read order)."""
    position: int | None
    ball: int


@dataclass(slots=True)
class _Pending:
    """A slot whose read is not trusted yet."""

    seq: int
    position: int | None
    reason: str
    trusted: set[int]
    """Good reads of this slot that disagree; a re-read must agree with one of them (empty: any
    good read settles it)."""
    candidate: int | None
    """What ``confirm`` places (the latest valid read); ``None``: confirm drops the read."""


class Draw:
    """One round's draw: reads in, findings out.

    Invariant: the placed balls are in range and pairwise distinct, whatever reads arrive (a read
    that would break that is held or refused, never placed). A held slot blocks completion until
    a re-read, a manual entry or a supervisor ``confirm`` settles it.
    """

    def __init__(self, rules: DrawRules) -> None:
        self._rules = rules
        self._entries: list[_Entry] = []
        self._pending: list[_Pending] = []
        self._reads = 0

    @property
    def reads(self) -> int:
        """Reads that claimed a new slot so far (re-reads of a held slot not counted)."""
        return self._reads

    @property
    def held(self) -> bool:
        """Whether some read waits for a re-read or a supervisor."""
        return bool(self._pending)

    def balls(self) -> list[int]:
        """The placed balls in draw order."""
        return [e.ball for e in self._ordered()]

    def pending(self) -> list[dict[str, Any]]:
        """The held slots, for snapshots: position (or read number) and reason."""
        return [
            {"position": p.position, "read": p.seq + 1, "reason": p.reason} for p in self._pending
        ]

    def read(self, event: BallDrawn) -> list[Finding]:
        """Take one ball read. A read of a held slot (same position, or, without positions, the
        next read) is its re-read; any other read claims a new slot."""
        rules = self._rules
        pos = event.position
        if rules.order == "position":
            if pos is None:
                return [
                    self._finding(
                        POSITION_MISSING, "seed-001 §6.1 L2123", "a positional draw needs "
                        "the receiver position of each ball", event,
                    )
                ]  # fmt: skip
            if not 1 <= pos <= rules.slots:
                return [
                    self._finding(
                        POSITION_OUT_OF_RANGE, "seed-001 §6.1 L2123",
                        f"position {pos} is not a receiver (1..{rules.slots})", event,
                    )
                ]  # fmt: skip
        elif pos is not None and pos < 1:
            return [
                self._finding(POSITION_OUT_OF_RANGE, RULE_GENERAL, f"position {pos} < 1", event)
            ]
        target = self._pending_for(pos)
        if target is not None:
            return self._reread(target, event)
        seq = self._reads
        self._reads += 1
        return self._claim(seq, event)

    def confirm(self) -> bool:
        """A supervisor accepts the oldest held read as the device gave it: a valid ball is
        placed; a repeated or out-of-range number is dropped (the same ball read twice, or no
        ball). ``False`` when nothing is held."""
        if not self._pending:
            return False
        held = self._pending.pop(0)
        ball = held.candidate
        if ball is not None and in_range(self._rules, ball) and self._holder(ball) is None:
            self._entries.append(_Entry(held.seq, held.position, ball))
        return True

    def complete(self, *, ended: bool = False) -> bool:
        """Whether the draw has its balls (nothing held). ``ended``: the drum says the draw is
        over, so a variable bonus (``bonus_min``) counts as complete with its fewest balls."""
        if self._pending:
            return False
        need = self._rules.slots_min if ended else self._rules.slots
        if self._rules.order == "position":
            filled = {e.position for e in self._entries}
            return all(p in filled for p in range(1, need + 1))
        return len(self._entries) >= need

    def result(self) -> tuple[dict[str, Any], list[int]]:
        """The settled result and the balls past the count (extras, in order). Only when
        :meth:`complete`."""
        ordered = self.balls()
        used = ordered[: self._rules.slots]
        k = self._rules.draw
        return draw_result(self._rules, used[:k], used[k:]), ordered[self._rules.slots :]

    # -- internals --------------------------------------------------------------------------------

    def _ordered(self) -> list[_Entry]:
        if self._rules.order == "position":
            return sorted(self._entries, key=lambda e: (e.position or 0, e.seq))
        return sorted(self._entries, key=lambda e: e.seq)

    def _pending_for(self, pos: int | None) -> _Pending | None:
        for p in self._pending:
            if p.position == pos:
                return p
        return None

    def _holder(self, ball: int) -> _Entry | None:
        for e in self._entries:
            if e.ball == ball:
                return e
        return None

    def _at(self, pos: int | None) -> _Entry | None:
        if pos is None:
            return None
        for e in self._entries:
            if e.position == pos:
                return e
        return None

    def _good(self, event: BallDrawn) -> bool:
        return event.manual or event.quality is None or event.quality >= self._rules.min_quality

    def _claim(self, seq: int, event: BallDrawn) -> list[Finding]:
        ball, pos = event.ball, event.position
        if not in_range(self._rules, ball):
            self._hold(seq, pos, OUT_OF_RANGE, set(), None)
            return [
                self._finding(
                    BALL_OUT_OF_RANGE, RULE_GENERAL,
                    f"ball {ball} is not in {self._rules.lowest}..{self._rules.highest}", event,
                ),
                self._reread_finding(OUT_OF_RANGE, event),
            ]  # fmt: skip
        here = self._at(pos)
        holder = self._holder(ball)
        if here is not None and here.ball == ball:
            # The reader reported the ball at its own receiver again: the reading agrees.
            return [self._duplicate(event, here, held=False)]
        if here is not None:
            # Two reads of one receiver disagree: neither is trusted until one is confirmed.
            self._entries.remove(here)
            trusted = {here.ball}
            candidate: int | None = None
            if holder is None and self._good(event):
                trusted.add(ball)
                candidate = ball
            self._hold(here.seq, pos, DISAGREEMENT, trusted, candidate)
            findings = [self._duplicate(event, holder, held=True)] if holder is not None else []
            return [*findings, self._reread_finding(DISAGREEMENT, event, was=here.ball)]
        if holder is not None:
            # A drawn ball read again elsewhere, or with no position to tell: either the same
            # ball read twice or a different ball misread. Never placed twice; re-read.
            self._hold(seq, pos, REPEATED, set(), None)
            return [
                self._duplicate(event, holder, held=True),
                self._reread_finding(REPEATED, event),
            ]
        if not self._good(event):
            self._hold(seq, pos, LOW_QUALITY, set(), ball)
            return [self._reread_finding(LOW_QUALITY, event)]
        self._entries.append(_Entry(seq, pos, ball))
        return []

    def _reread(self, held: _Pending, event: BallDrawn) -> list[Finding]:
        ball = event.ball
        if not in_range(self._rules, ball):
            return [
                self._finding(
                    BALL_OUT_OF_RANGE, RULE_GENERAL,
                    f"ball {ball} is not in {self._rules.lowest}..{self._rules.highest}", event,
                ),
                self._reread_finding(held.reason, event),
            ]  # fmt: skip
        holder = self._holder(ball)
        if holder is not None:
            return [
                self._duplicate(event, holder, held=True),
                self._reread_finding(held.reason, event),
            ]
        if event.manual:
            # A supervisor's hand entry is the authority on the held slot.
            return self._settle(held, ball)
        if not self._good(event):
            held.candidate = ball
            return [self._reread_finding(held.reason, event)]
        if held.trusted and ball not in held.trusted:
            held.trusted.add(ball)
            held.candidate = ball
            return [self._reread_finding(held.reason, event)]
        return self._settle(held, ball)

    def _settle(self, held: _Pending, ball: int) -> list[Finding]:
        self._pending.remove(held)
        self._entries.append(_Entry(held.seq, held.position, ball))
        return []

    def _hold(
        self, seq: int, pos: int | None, reason: str, trusted: set[int], candidate: int | None
    ) -> None:
        self._pending.append(_Pending(seq, pos, reason, trusted, candidate))

    def _duplicate(self, event: BallDrawn, holder: _Entry, *, held: bool) -> Finding:
        where = f"position {holder.position}" if holder.position is not None else "the draw"
        return self._finding(
            DUPLICATE_BALL,
            RULE_REREAD,
            f"ball {event.ball} is already in {where}: never placed twice"
            + ("; held for a re-read" if held else ""),
            event,
            held=held,
        )

    def _reread_finding(self, reason: str, event: BallDrawn, **extra: Any) -> Finding:
        return self._finding(
            REREAD_REQUIRED,
            RULE_REREAD,
            f"read of ball {event.ball} held ({reason}): re-read, enter by hand, confirm or void",
            event,
            reason=reason,
            **extra,
        )

    def _finding(
        self, code: str, rule: str, message: str, event: BallDrawn, **extra: Any
    ) -> Finding:
        data: dict[str, Any] = {"ball": event.ball, "position": event.position}
        if event.reader is not None:
            data["reader"] = event.reader
        if event.quality is not None:
            data["quality"] = event.quality
        data.update(extra)
        return Finding(code, rule, message, data)
