"""Dice games as pure rules (seed-001 §7): Sic Bo, Craps, Dice Duel, Lightning Dice.

One module per game (the facts its bets are settled on) and :mod:`.rules` (the family's
``[rules]`` model and the checks every dice game shares). The round engine around them is
:mod:`tablectl.controller.engines.dice`; the games, their sources and every code are in
``docs/games/dice.md``.
"""

from __future__ import annotations

from tablectl.controller.games.dice.craps import CrapsState, craps_result, decide
from tablectl.controller.games.dice.dice_duel import dice_duel_result
from tablectl.controller.games.dice.lightning_dice import check_picks, lightning_result
from tablectl.controller.games.dice.rules import (
    GAME_DICE,
    DiceRules,
    DiceVariant,
    check_tumble,
    read_dice,
    roll_result,
    tumble_seconds,
)
from tablectl.controller.games.dice.sic_bo import sic_bo_result

__all__ = [
    "GAME_DICE",
    "CrapsState",
    "DiceRules",
    "DiceVariant",
    "check_picks",
    "check_tumble",
    "craps_result",
    "decide",
    "dice_duel_result",
    "lightning_result",
    "read_dice",
    "roll_result",
    "sic_bo_result",
    "tumble_seconds",
]
