"""Monopoly Live's dice bonus as pure rules: how many rolls, where Mr. Monopoly goes, when it ends.

Rule ids: seed-001 §5.2, §7.4: two dice (L1897); a double rolls again (L1899) except out of Jail
(L1919, taken as automatic); Jail without a double ends the bonus (L1921). The board is not in
the book (L1901, L1907 [GAP]): :class:`Board` assumes the standard one. Money (L1909–1917) is the
back office's. Readings: docs/verdicts.md "Monopoly's dice bonus"."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal, TypeAlias

from tablectl.controller.core.dice_events import DIE_FACES
from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.findings import Finding

DICE_PER_ROLL: Final = 2
"""L1897: "2 dice, each marked with 1 to 6 dots"."""

GO: Final = 0
"""The board is numbered from GO (the assumption of :class:`Board`)."""

# Verdict code (docs/verdicts.md "Monopoly's dice bonus"; the dice tables' too: games/dice.md).
WRONG_DICE_COUNT: Final = "wrong_dice_count"

RULE_DICE: Final = "seed-001 §5.2 L1897, §7.4"
RULE_REROLL: Final = "seed-001 §7 [GAP] (no re-roll rule: bets stand, as a wheel's re-spin)"

JailStep: TypeAlias = Literal["sent", "stayed", "released"]
"""What a roll did about Jail: landed on Go to Jail (``sent``), failed to leave with no double
(``stayed``: the bonus ends, L1921) or left with a double (``released``: no extra roll, L1919)."""

End: TypeAlias = Literal["rolls", "jail"]


@dataclass(frozen=True, slots=True)
class Board:
    """An assumption, the book gives no board: the standard 40 squares from GO = 0, configurable."""

    squares: int = 40
    jail: int = 10
    go_to_jail: int = 30

    def __post_init__(self) -> None:
        if self.squares < 2:
            raise RuleError(f"board: {self.squares} squares: at least 2")
        for name, square in (("jail", self.jail), ("go_to_jail", self.go_to_jail)):
            if not GO < square < self.squares:
                raise RuleError(f"board: {name} {square} is not a square 1..{self.squares - 1}")
        if self.jail == self.go_to_jail:
            raise RuleError("board: jail and go_to_jail are the same square")

    def to_dict(self) -> dict[str, int]:
        return {"squares": self.squares, "go": GO, "jail": self.jail, "go_to_jail": self.go_to_jail}


@dataclass(frozen=True, slots=True)
class Roll:
    """One counted roll of the bonus and what it did."""

    dice: tuple[int, int]
    start: int
    """The square Mr. Monopoly stood on before the roll."""
    square: int
    """The square he landed on (Go to Jail itself when ``jail == "sent"``; Jail when he stayed)."""
    passed_go: bool
    """He moved over or onto GO."""
    jail: JailStep | None
    extra_roll: bool
    """This roll granted an additional roll (a double, not the one that left Jail)."""
    remaining: int
    """Rolls still due after this one."""

    @property
    def double(self) -> bool:
        return self.dice[0] == self.dice[1]

    def to_dict(self) -> dict[str, Any]:
        return {
            "dice": list(self.dice),
            "sum": sum(self.dice),
            "double": self.double,
            "extra_roll": self.extra_roll,
            "remaining": self.remaining,
            "from": self.start,
            "square": self.square,
            "passed_go": self.passed_go,
            "jail": self.jail,
        }


@dataclass(frozen=True, slots=True)
class DiceBonus:
    """A bonus in play or ended: the segment that started it and the rolls so far."""

    segment: str
    due: int
    """The rolls the segment gives (L1897: 2 or 4)."""
    board: Board
    rolls: tuple[Roll, ...] = ()
    extra_rolls: int = 0
    """Additional rolls granted by doubles (L1899)."""
    rerolls: int = 0
    """Rolls the reader (or the dealer) said give no result: rolled again, nothing counted."""
    position: int = GO
    in_jail: bool = False
    jailed: bool = False
    """Mr. Monopoly went to Jail during this bonus."""
    end: End | None = None
    unused_rolls: int = 0
    """Rolls forfeited when Jail ended the bonus (L1921)."""

    @property
    def remaining(self) -> int:
        """Rolls still due (0 once the bonus has ended)."""
        if self.end is not None:
            return 0
        return self.due + self.extra_rolls - len(self.rolls)

    @property
    def done(self) -> bool:
        return self.end is not None


def start_bonus(segment: str, rolls: int, board: Board | None = None) -> DiceBonus:
    """The bonus the wheel's ``segment`` starts: ``rolls`` rolls due, Mr. Monopoly on GO."""
    if rolls < 1:
        raise RuleError(f"a dice bonus needs at least 1 roll, got {rolls}")
    return DiceBonus(segment=segment, due=rolls, board=board or Board())


def check_roll(dice: Sequence[int]) -> Finding | None:
    """``wrong_dice_count``, or ``None`` (faces were checked when the event was parsed)."""
    if len(dice) == DICE_PER_ROLL:
        return None
    return Finding(
        WRONG_DICE_COUNT,
        RULE_DICE,
        f"{len(dice)} dice read: the bonus rolls {DICE_PER_ROLL}; not counted",
        {"dice": list(dice), "expected": DICE_PER_ROLL},
    )


def reroll(bonus: DiceBonus) -> DiceBonus:
    """A roll that gives no result (``roll_invalid``): it is rolled again, nothing else changes."""
    return replace(bonus, rerolls=bonus.rerolls + 1)


def roll(bonus: DiceBonus, dice: Sequence[int]) -> DiceBonus:
    """The bonus after one roll: a double adds a roll (L1899) unless it leaves Jail (L1919); in Jail
    a non-double ends it (L1921); leaving Jail moves by the sum (assumed). Call
    :func:`check_roll` first: a wrong reading is a verdict, not this ``RuleError``."""
    if bonus.done:
        raise RuleError("the bonus has ended: no more rolls")
    if len(dice) != DICE_PER_ROLL or not all(d in DIE_FACES for d in dice):
        raise RuleError(f"not a roll of two dice 1-6: {list(dice)}")
    pair = (dice[0], dice[1])
    double = pair[0] == pair[1]
    board = bonus.board
    start = bonus.position
    if bonus.in_jail and not double:
        # L1921: no pair after the roll → the bonus ends; the rolls left are forfeited.
        left = bonus.remaining - 1
        step = Roll(pair, start, start, False, "stayed", extra_roll=False, remaining=0)
        return replace(bonus, rolls=(*bonus.rolls, step), end="jail", unused_rolls=left)
    released = bonus.in_jail
    extra = double and not released
    target = start + sum(pair)
    square = target % board.squares
    jail: JailStep | None = "released" if released else None
    position, in_jail = square, False
    if square == board.go_to_jail:
        jail, position, in_jail = "sent", board.jail, True
    extra_rolls = bonus.extra_rolls + extra
    remaining = bonus.due + extra_rolls - len(bonus.rolls) - 1
    step = Roll(pair, start, square, target >= board.squares, jail, extra, remaining)
    return replace(
        bonus,
        rolls=(*bonus.rolls, step),
        extra_rolls=extra_rolls,
        position=position,
        in_jail=in_jail,
        jailed=bonus.jailed or in_jail,
        end="rolls" if remaining == 0 else None,
    )


def bonus_result(bonus: DiceBonus) -> dict[str, Any]:
    """The outcome's ``bonus`` (docs/verdicts.md "Monopoly's dice bonus"), JSON-ready."""
    return {
        "segment": bonus.segment,
        "rolls_due": bonus.due,
        "rolls": [r.to_dict() for r in bonus.rolls],
        "extra_rolls": bonus.extra_rolls,
        "rerolls": bonus.rerolls,
        "remaining": bonus.remaining,
        "position": bonus.position,
        "in_jail": bonus.in_jail,
        "jailed": bonus.jailed,
        "end": bonus.end,
        "unused_rolls": bonus.unused_rolls,
        "board": bonus.board.to_dict(),
    }
