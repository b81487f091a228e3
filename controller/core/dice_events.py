"""Normalized events of dice tables, of a studio RNG's picks and of Fan Tan's bead count (DESIGN
§4.4, extended).

A dice table has a shaker or tower (``roll_started`` when it shakes or drops the dice) and a
result reader (``dice`` once the dice are at rest, or ``roll_invalid`` when it cannot give a
result that counts). A studio's RNG commits its picks to the table before the physical result
(``rng_draw``: Lightning Dice's lightning numbers, seed-001 L3067; Lightning Roulette's numbers and
the lightning card games' multiplier cards). A Fan Tan table reports its bead count (``beads``:
seed-001 L3985–3989), as a dice reader reports faces: a count at rest, read by a counter or keyed
in by the dealer. Which of these a game accepts, and when, is the game's rule
(``controller/games/dice``, ``controller/games/fan_tan.py``), not the event's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Final, Literal, TypeAlias, get_args

import pydantic

from tablectl.controller.core.event_base import STRICT, EventBase
from tablectl.drivers.events import RollInvalidCode

DIE_FACES: Final = range(1, 7)
"""The upper face of a six-sided die."""

Face: TypeAlias = Annotated[int, pydantic.Field(ge=1, le=6)]

ROLL_INVALID_CODES: Final[tuple[RollInvalidCode, ...]] = get_args(RollInvalidCode)
"""Why a reader (or the dealer) says a roll gives no result: a die leaning on another or on the
rim (cocked), a die off the table or out of the tower's tray, faces the reader cannot read, dice
still moving, a throw that did not hit the wall where the table requires it. Stable codes (one
definition: :data:`tablectl.drivers.events.RollInvalidCode`); the game's rule turns each into a
re-roll with bets standing (``docs/games/dice.md``)."""


@dataclass(frozen=True, kw_only=True)
class RollStarted(EventBase):
    """The shaker started shaking, the tower dropped the dice, or the dealer threw them.

    The engine times the tumble from here: a result sooner than the table's minimum is suspect,
    as a wheel's too few revolutions are.
    """

    type: Literal["roll_started"] = "roll_started"


@dataclass(frozen=True, kw_only=True)
class Dice(EventBase):
    """The dice at rest: upper faces 1–6 in the table's fixed order.

    ``colors`` names each die where the dice are told apart (Dice Duel's red and blue, seed-001
    L2681); ``reader`` is the reader's own id (a camera, a sensor plate) and ``confidence`` its
    certainty 0–1, where it gives them.
    """

    type: Literal["dice"] = "dice"
    dice: Annotated[tuple[Face, ...], pydantic.Field(min_length=1, max_length=6)]
    colors: tuple[str, ...] | None = None
    reader: str | None = None
    confidence: Annotated[float, pydantic.Field(ge=0, le=1)] | None = None


@dataclass(frozen=True, kw_only=True)
class RollInvalid(EventBase):
    """The reader (or the dealer) says this roll gives no result: see :data:`RollInvalidCode`."""

    type: Literal["roll_invalid"] = "roll_invalid"
    code: RollInvalidCode
    detail: str | None = None


@dataclass(frozen=True)
class RngPick:
    """One pick of a studio RNG: a number (or a card, ``"KH"``) and its multiplier."""

    __pydantic_config__ = STRICT

    value: int | str
    multiplier: Annotated[int, pydantic.Field(ge=1)] | None = None


@dataclass(frozen=True, kw_only=True)
class RngDraw(EventBase):
    """An RNG's picks, committed to the table after ``bets_closed`` and before the result.

    ``{"type":"rng_draw","numbers":[{"value":11,"multiplier":100}, …]}``. One after the result,
    or a second one in a round, is a verdict (the game's rule).
    """

    type: Literal["rng_draw"] = "rng_draw"
    numbers: Annotated[tuple[RngPick, ...], pydantic.Field(min_length=1, max_length=64)]


@dataclass(frozen=True, kw_only=True)
class Beads(EventBase):
    """Fan Tan's bead count: ``{"type":"beads","count":27}`` (seed-001 L3985–3989).

    ``count`` is the beads the dealer separated with the cup (a counter device's reading), or only
    the last line the dealer laid out (1–4, keyed in by hand): the result, the remainder of the
    count divided into lines of four, is the same either way. A count of 0 (an empty cup, or a
    counter that saw nothing) is the game's verdict, not a format error.
    """

    type: Literal["beads"] = "beads"
    count: Annotated[int, pydantic.Field(ge=0)]
