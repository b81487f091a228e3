"""Monopoly Live's dice bonus as pure rules: how many rolls, where Mr. Monopoly goes, when it ends.

The wheel engine (:mod:`tablectl.controller.engines.wheel`) keeps a Monopoly round open after the
wheel stops on "2 rolls" or "4 rolls" when the table plays the bonus with physical dice
(``[rules] dice_bonus = true``), and feeds each roll through :func:`roll`. Rule ids point into
``../shared/seeds/`` seed-001 (digest: ``../shared/rules/seed-001-live-casino-regulations.md``
§5.2, §7.4):

- **Dice** (L1897): "2 dice, each marked with 1 to 6 dots"; "2 rolls" rolls them twice, "4 rolls"
  four times (``bonus_rolls``). A reading of another number of dice is no roll (a verdict).
- **Doubles** (L1899, L1919): "If a pair of dice … is rolled … it means an additional roll",
  "except if the pair is used to get out of the Jail". L1919's "option" is taken as automatic: the
  roll is one for every bonus player, nobody chooses.
- **Jail** (L1921): after landing on Go to Jail "a pair on the dices is needed after the roll,
  otherwise the Bonus game ends" (the rolls left are forfeited; prior winnings are kept, which is
  the back office's business).
- **The board is not in the rule book.** L1907 names the kinds of field and L1901 says Mr.
  Monopoly moves by the sum of the dots, but neither the number of squares nor their order is
  given [GAP]. The jail rule needs to know where Go to Jail is, so the position is tracked on a
  documented assumption (:class:`Board`): the standard 40-square board numbered from GO = 0, Jail
  at 10, Go to Jail at 30, every one of them configurable. Also assumed (not stated): each bonus
  starts on GO; a double out of Jail moves Mr. Monopoly by its sum. The book's Chance and
  Community Chest fields give cash (L1913), never a move, so the dice alone fix the position.
- **Money is not ours.** Multipliers, buildings and hotels (L1909–1911, "randomly": RNG), cards,
  taxes and GO's doubling (L1913–1917) are the back office's: the outcome reports the rolls and the
  squares, not winnings.

Pure: no I/O, no clock. Values are immutable; :func:`roll` returns the next state.
"""

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
    """Where the squares that decide anything are: an assumption, the book gives no board.

    The defaults are the standard 40-square board numbered from GO = 0 (``[rules]
    board_squares``, ``board_jail``, ``board_go_to_jail``).
    """

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
    """Why a reading is not a roll of this bonus (``wrong_dice_count``), or ``None``.

    Faces are 1–6 already (the ``dice`` event is validated when parsed).
    """
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
    """The bonus after one counted roll of two dice.

    Every roll uses one of the rolls due. A double adds one (L1899) unless it is the double that
    leaves Jail (L1919). In Jail, a roll that is no double ends the bonus (L1921); a double leaves
    Jail and moves by its sum (assumed). Landing on Go to Jail moves to Jail; with no roll left the
    bonus simply ends there.

    Raises:
        RuleError: the bonus has ended, or ``dice`` is not two faces 1–6 (:func:`check_roll`
            first: a wrong reading is a verdict, not this).
    """
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
    """The ``bonus`` of a Monopoly outcome's ``result`` (docs/verdicts.md "Monopoly's dice
    bonus"): every roll, the extra rolls granted, Jail, and the board assumption the squares are
    counted on. JSON-ready."""
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
