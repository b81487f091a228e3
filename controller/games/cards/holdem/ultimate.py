"""Ultimate Texas Hold'em (seed-000 §6), a Hold'em game. Pure."""

from __future__ import annotations

from typing import ClassVar, Literal, cast

import pydantic

from tablectl.controller.core.events import DealError
from tablectl.controller.games.cards.deal import (
    BOXES,
    MISDEAL,
    RESHUFFLE_BETS_STAND,
    Deal,
    DealScript,
    GameRules,
    Remedy,
    Step,
)
from tablectl.controller.games.cards.holdem.base import HoldemGame, HoldemRules
from tablectl.controller.games.cards.shoe import OnFault


class UltimateTexasHoldemRules(HoldemRules):
    """``boxes``: 5, or 6 in a "special game" (UTH-B1 §1–2). ``dealer_qualifies``: UTH-H2 §12
    ``"pair"`` (the §19 example agrees) against §17 ``"two_pair"`` (seed-000 §14 item 1,
    V-UTH-4). ``on_fault``: after the first card the manager decides (GEN-11, GEN-12); before it,
    PKH-22."""

    boxes: int = pydantic.Field(default=5, ge=1, le=6)
    dealer_qualifies: Literal["pair", "two_pair"] = "pair"
    on_fault: OnFault = "decide"


class UltimateTexasHoldem(HoldemGame):
    """Ultimate Texas Hold'em (seed-000 §6, L352–376; §5, L326–350).

    Hole cards face down in rotation (PKH-09; revealed per PKH-15); windows pre-flop (§5), flop
    (§6, §7), river (§8, §9); settles per §11–§20. A fold is taken in any window (§9–10;
    GEN-09.2.2: an absent player's box). A deal error reshuffles, bets stand (PKH-21)."""

    name: ClassVar[str] = "ultimate_texas_holdem"
    script = DealScript(
        (
            Step((BOXES, "dealer"), count=2, face="down"),  # PKH-09
            Step(("flop",), count=3, face="up", stage=1, rotate=False),  # UTH §6
            Step(("turn", "river"), count=1, face="up", stage=2),  # UTH §8
        ),
        reshuffle="every_round",  # PKH-01/02: one 52-card deck, shuffled (or cut) each deal
    )
    rules_model: ClassVar[type[GameRules]] = UltimateTexasHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("preflop", "flop", "river")
    multi_box: ClassVar[bool] = True
    deal_error_rule: ClassVar[str] = "PKH-21"
    composition_rule: ClassVar[str] = "PKH-01"  # a duplicate means the deck is foul

    @property
    def uth_rules(self) -> UltimateTexasHoldemRules:
        return cast(UltimateTexasHoldemRules, self.rules)

    def qualifier(self) -> str:
        """UTH-H2 §12 "pair of twos" or §17 "two pairs" (``[rules] dealer_qualifies``)."""
        return self.uth_rules.dealer_qualifies

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """PKH-21: the wrong number of cards or a card face up → misdeal, reshuffle, bets stand.
        seed-000 §6.5 leaves an early community card uncovered; PKH-21 is read for it too."""
        del deal, error
        return Remedy("void", "PKH-21", MISDEAL, RESHUFFLE_BETS_STAND)
