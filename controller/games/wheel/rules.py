"""The ``[rules]`` of a money-wheel table, validated strictly; readings in the package docstring and
``docs/games/wheels.md``. Pure."""

from __future__ import annotations

from collections import Counter
from typing import Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Direction
from tablectl.controller.games.monopoly_bonus import Board

WheelVariant: TypeAlias = Literal[
    "dream_catcher",
    "wheel_of_fortune",
    "crazy_time",
    "monopoly",
    "mega_wheel",
    "wheelbet",
    "spin_and_win",
    "music_wheel",
]
OverlayKind: TypeAlias = Literal["none", "lucky_number", "bonus_sector", "top_slot"]


def is_number(label: str) -> bool:
    """Whether a segment label is a number (``"10"``, ``"0"``, Wheelbet's ``"00"``)."""
    return label.isdigit()


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
    """Label → colour, when bets need it (the 19-sector wheel's grey/red/black, not given: C37;
    Wheelbet's and Spin & Win's red/black/green, not mapped by the book)."""

    color_counts: dict[str, int] | None = None
    """The rule book's sectors per colour (Wheelbet L4345: 18 red, 18 black, 0 and 00 green):
    every segment needs a colour and ``colors`` over the layout must give exactly these counts
    (``None``: unchecked)."""

    number_facts: bool = False
    """The result adds ``parity``, ``dozen`` and ``row`` of a number (a wheel numbered like a
    roulette layout: Wheelbet L4349–4389, Spin & Win L3971–3977); 0 and 00 are none of them
    (L4389). Every label must then be a number."""

    direction: Direction | None = None
    """The direction a valid spin turns (seen from the sensor); ``None``: any."""

    min_revolutions: int = pydantic.Field(default=0, ge=0)
    """Full revolutions (in ``direction``) for a valid spin; 0: unchecked (no rule but L2471)."""

    divider_respin: bool = True
    """The pointer on a divider pin → re-spin (L2091, C6)."""

    on_fault: Literal["void", "decide"] = "decide"
    """A fault after bets closed: ``void`` (bets returned) or hold for a supervisor."""

    rng: OverlayKind = "none"
    """One ``rng_draw`` after bets close: Mega Wheel (L3959), Music Wheel (L4339), Top Slot (L2051,
    where it reports to the table)."""

    rng_before: Literal["spin", "stop"] = "stop"
    """The draw's deadline: before the spin starts (Music Wheel L4339 "before start of the spin")
    or before the wheel stops (Mega Wheel L3959 "before the wheel stops"; Top Slot L2051)."""

    rng_scope: Literal["label", "segment"] = "label"
    """A number (Mega Wheel L3959 "one number") or a sector index (the industry's); Music Wheel's
    pick is always an index, ``label`` widening its bonus except ``rng_single`` (C26)."""

    rng_single: list[str] = pydantic.Field(default_factory=list)
    """Music Wheel: labels whose bonus applies to the one lit sector only (L4339: "in the case of
    16 and 48 - only for one sector", C26)."""

    rng_max_multiplier: int | None = pydantic.Field(default=None, ge=1)
    """The highest multiplier a pick may carry (Mega Wheel L3963: "odds up to x500")."""

    on_rng_missing: Literal["void", "hold"] = "void"
    """A result with no draw (``rng_missing``): void the round (G1, G3: stakes back), or hold it
    for a supervisor (``confirm`` settles it without the overlay, ``void`` voids)."""

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
            ("rng_single", self.rng_single),
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
        self._check_numbers()
        self._check_overlay()
        if loose := sorted(set(self.bonus_rolls) - set(self.bonus)):
            raise RuleError(f"bonus_rolls: not bonus segments: {loose}")
        if bad := sorted(k for k, v in self.bonus_rolls.items() if v < 1):
            raise RuleError(f"bonus_rolls: at least 1 roll: {bad}")
        if self.dice_bonus and not self.bonus_rolls:
            raise RuleError("dice_bonus needs bonus_rolls (the segments that start it)")
        _ = self.board  # the board's own checks (squares on it, distinct)
        return self

    def _check_numbers(self) -> None:
        """Colour counts (Wheelbet L4345) and the number facts' labels (L4349–4389)."""
        if self.color_counts is not None:
            colors = self.colors or {}
            if missing := sorted({s for s in self.segments if s not in colors}):
                raise RuleError(f"colors: segments without a colour: {missing}")
            have = Counter(colors[s] for s in self.segments)
            want = Counter({k: v for k, v in self.color_counts.items() if v})
            if have != want:
                raise RuleError(
                    f"colors do not match color_counts: {dict(sorted(have.items()))} "
                    f"(rule book {dict(sorted(want.items()))})"
                )
        words = sorted(s for s in set(self.segments) if not is_number(s))
        if self.number_facts and words:
            raise RuleError(f"number_facts: labels that are not numbers: {words}")

    def _check_overlay(self) -> None:
        """An RNG overlay's parameters fit the wheel (seed-001 §2.2 (d))."""
        if self.rng_single and self.rng != "bonus_sector":
            raise RuleError("rng_single: only a bonus_sector overlay has single-sector labels")
        if self.rng == "top_slot" and self.rng_scope != "label":
            # L2051–2057: the Top Slot's left reel shows a bet spot, i.e. a label.
            raise RuleError('rng_scope: a top_slot names a segment label ("label")')
        if self.rng != "none" and self.dice_bonus:
            raise RuleError("rng: an RNG overlay and the dice bonus on one wheel: no such game")
