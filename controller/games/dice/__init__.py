"""Dice games as pure rules (seed-001 §7): Sic Bo, Craps, Dice Duel, Lightning Dice; the engine is
:mod:`tablectl.controller.engines.dice`, codes and sources ``docs/games/dice.md``."""

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
