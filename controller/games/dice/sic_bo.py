"""Sic Bo as a pure rule: three dice → the facts its bets are settled on.

Seed-001 names Sic Bo (with Super Sic Bo and Mega Sic Bo) at L5 and gives **no rules** for it
(§7.4). What is here is the industry game, the one every Sic Bo layout carries:

- three dice; ``total`` is their sum (3–18);
- ``triple``: all three dice show the same value;
- ``double``: the values shown on **at least two** dice, ascending — ``[]``, or one value (three
  dice cannot show two pairs). A triple's value counts (``6-6-6`` → ``[6]``): the industry's
  "specific double" bet on 6s wins on a triple of 6s, since two of its dice show 6;
- ``big``: total 11–17 and not a triple; ``small``: total 4–10 and not a triple — both lose on
  any triple, which is what makes them even-money bets (3 and 18 are triples, so they are neither);
- ``odd``: the **parity of the total**, triple or not (``1-1-1`` → ``odd``). The industry's
  Odd/Even bets, where a table offers them, lose on any triple as Big/Small do; a settling system
  pays Odd on ``odd and not triple`` and Even on ``not odd and not triple``. ``odd`` itself stays a
  fact about the dice, so that Even is never read as ``not odd`` of a bet that already excludes
  triples.

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from tablectl.controller.core.errors import RuleError

DICE: Final = 3
SMALL: Final = range(4, 11)
"""Totals a Small bet covers (a triple loses whatever the total)."""
BIG: Final = range(11, 18)
"""Totals a Big bet covers (a triple loses whatever the total)."""


def sic_bo_result(dice: Sequence[int]) -> dict[str, Any]:
    """The Sic Bo facts of three dice (in the table's order, as read).

    Raises:
        ValueError: not three dice of 1–6 (the engine checks the count before it asks).
    """
    if len(dice) != DICE or any(not 1 <= d <= 6 for d in dice):
        raise RuleError(f"sic bo needs three dice of 1-6, got {list(dice)}")
    total = sum(dice)
    counts = Counter(dice)
    triple = len(counts) == 1
    return {
        "dice": list(dice),
        "total": total,
        "triple": triple,
        "double": sorted(value for value, n in counts.items() if n >= 2),
        "big": total in BIG and not triple,
        "small": total in SMALL and not triple,
        "odd": total % 2 == 1,
    }
