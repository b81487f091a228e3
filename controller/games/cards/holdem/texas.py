"""Texas Hold'em against the dealer (seed-001 §3.15), a Hold'em game. Pure."""

from __future__ import annotations

from typing import ClassVar

import pydantic

from tablectl.controller.games.cards.deal import DealScript, GameRules, Step
from tablectl.controller.games.cards.holdem.base import HoldemGame, HoldemRules


class TexasHoldemRules(HoldemRules):
    """Texas Hold'em against the dealer (seed-001 §3.15): one player hand (``boxes`` is 1)."""

    boxes: int = pydantic.Field(default=1, ge=1, le=1)


class TexasHoldemVsDealer(HoldemGame):
    """Texas Hold'em against the dealer (seed-001 §3.15, L619–679): Casino Hold'em's rules (L621;
    L569, L571) with three windows (L627, L629, L631; a fold only at the last), a pair qualifies
    (L645), bets as UTH's (:func:`~.settle.versus_bets`, L645–677), a technical bug voids (L679)."""

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
