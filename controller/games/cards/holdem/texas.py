"""Texas Hold'em against the dealer (seed-001 §3.15), a Hold'em game of
:mod:`tablectl.controller.games.cards.holdem`.

Pure: no I/O.
"""

from __future__ import annotations

from typing import ClassVar

import pydantic

from tablectl.controller.games.cards.deal import DealScript, GameRules, Step
from tablectl.controller.games.cards.holdem.base import HoldemGame, HoldemRules


class TexasHoldemRules(HoldemRules):
    """Texas Hold'em against the dealer (seed-001 §3.15): one player hand (``boxes`` is 1)."""

    boxes: int = pydantic.Field(default=1, ge=1, le=1)


class TexasHoldemVsDealer(HoldemGame):
    """Texas Hold'em against the dealer (seed-001 §3.15, L619–679).

    "Casino Holdem rules apply except as follows" (L621): so the player's two cards are dealt
    open, then the dealer's two closed (L571, not changed by §3.15), one deck shuffled for each
    round (L569). Window 1 after the hole cards (Play 4x / 3x or Check, L627), the flop, window 2
    (Play 2x or Check, L629), turn and river, window 3 (Play 1x or Fold, L631), then the dealer
    "opens all his cards and announces the result" (L639). A fold is taken at the last window
    only (L631). Dealer qualifies with a pair (L645). Bets settle as Ultimate Texas Hold'em's
    (:func:`~.settle.versus_bets`, L645–677). A technical bug voids the round, bets returned (L679).
    """

    name: ClassVar[str] = "texas_holdem"
    script = DealScript(
        (
            Step(("player",), count=2, face="up"),  # L571 (via L621)
            Step(("dealer",), count=2, face="down"),  # L571
            Step(("flop",), count=3, face="up", stage=1, rotate=False),  # L629
            Step(("turn", "river"), count=1, face="up", stage=2),  # L631
        ),
        reshuffle="every_round",  # L569 via L621
    )
    rules_model: ClassVar[type[GameRules]] = TexasHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("preflop", "flop", "river")
    fold_from: ClassVar[int] = 2
    decision_rule: ClassVar[str] = "seed-001 L625–633"
    deal_error_rule: ClassVar[str] = "seed-001 L679"

    def qualifier(self) -> str:
        """L645: "at least a pair"."""
        return "pair"
