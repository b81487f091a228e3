"""Poker hand evaluation for the house-banked card games: pure, table-driven, exact ties.

Every poker-family game of the rule books (issue 8, Deliver 1) settles on one of two rankings:
the standard 5-card ranking (best 5 of 5–7 cards) or the 3-card ranking. This package turns cards
into a :class:`HandValue` whose ordering *is* the rule book's ordering, so ``max()`` picks the
winner and ``==`` means a tie (push). Rule ids point into ``../shared/rules/``: seed 000
(``seed-000-bombay-player-guide.md``: PKH-, UTH-, TCP-, BMP-) and seed 001
(``seed-001-live-casino-regulations.md``: §3.9–§3.21 with source lines ``L…``, contradictions
``C…`` in §12). ``docs/poker.md`` has the same readings in table form.

Low hands: no house-banked game of seed 000 §5–§8 or seed 001 §3.9–§3.21 ranks a low hand; low
rankings (Razz, 2-7, hi/lo 8-or-better) exist only in the player-vs-player poker room (seed 000
§9.3), which is out of scope, so there is no low evaluator.

The games import from the package; each module has one job, in the order a hand goes through:

- :mod:`.evaluate` — cards → value: :func:`evaluate5`, :func:`evaluate3`, :func:`best_of`
  (straights, wild jokers, the 5-card cache);
- :mod:`.value` — :class:`HandValue` and the categories of both rankings, in rule-book order;
- :mod:`.qualify` — :func:`qualifies`, against the games' minimums (:data:`MINIMUMS`);
- :mod:`.describe` — :func:`describe` and :func:`summary`: a hand as the outcome names it.
"""

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
