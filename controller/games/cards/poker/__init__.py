"""Poker hand evaluation for the house-banked card games: pure, table-driven, exact ties.

A :class:`HandValue`'s ordering is the rule book's, so ``max()`` picks the winner and ``==`` is a
push. Rule ids: seed 000 (PKH-, UTH-, TCP-, BMP-) and seed 001 (§3.9–§3.21, ``L…``, ``C…``);
readings: ``docs/poker.md``. No low evaluator: low rankings exist only in the player-vs-player
poker room (seed 000 §9.3). Modules in a hand's order: :mod:`.evaluate`, :mod:`.value`,
:mod:`.qualify`, :mod:`.describe`."""

from __future__ import annotations

from tablectl.controller.games.cards.poker.describe import describe, summary
from tablectl.controller.games.cards.poker.evaluate import best_of, evaluate3, evaluate5
from tablectl.controller.games.cards.poker.qualify import MINIMUMS, Minimum, qualifies
from tablectl.controller.games.cards.poker.value import (
    HandCategory,
    HandValue,
    JokerMode,
    ThreeCardCategory,
    ThreeCardRanking,
)

__all__ = [
    "MINIMUMS",
    "HandCategory",
    "HandValue",
    "JokerMode",
    "Minimum",
    "ThreeCardCategory",
    "ThreeCardRanking",
    "best_of",
    "describe",
    "evaluate3",
    "evaluate5",
    "qualifies",
    "summary",
]
