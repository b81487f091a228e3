"""Ultimate Texas Hold'em (seed-000 §6), a Hold'em game of
:mod:`tablectl.controller.games.cards.holdem`.

Pure: no I/O.
"""

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
    """Ultimate Texas Hold'em (seed-000 §6).

    ``boxes``: 5 in the standard game, 6 in a "special game" (UTH-B1 §1–2).
    ``dealer_qualifies``: UTH-H2 §12 "The dealer's game starts with a pair of twos" (``"pair"``,
    the default; the §19 example agrees) against §17 "(at least two pairs)" (``"two_pair"``):
    seed-000 §14 item 1, V-UTH-4.
    ``on_fault``: a device fault once cards are out waits for the Floor or Casino Manager
    (GEN-11, GEN-12 "cancelled at the discretion of the Floor Manager"); before the first card
    the engine cancels the hand (PKH-22).
    """

    boxes: int = pydantic.Field(default=5, ge=1, le=6)
    dealer_qualifies: Literal["pair", "two_pair"] = "pair"
    on_fault: OnFault = "decide"


class UltimateTexasHoldem(HoldemGame):
    """Ultimate Texas Hold'em (seed-000 §6, L352–376; house-banked poker rules §5, L326–350).

    Deal (PKH-09 "to all playing Boxes and to himself. All cards are dealt face down"): two hole
    cards to each playing box and the dealer, one at a time in rotation, face down (withheld
    until the outcome; PKH-15 the dealer opens his cards, then the boxes'). Window 1: the
    pre-flop decision (§5, PLAY 3×/4× or check). The flop, 3 cards face up (§6 "the dealer opens
    the Flop"). Window 2: the flop decision (§7, PLAY 2× or check). Turn and river, face up (§8
    "reveals the last 2 community cards"). Window 3: the river decision (§9, PLAY 1× or fold).
    Then the round settles (§11–§20).

    A fold is taken in any window (§9–10 at the river; an absent player's box is folded whenever
    it is found absent, GEN-09.2.2). A deal error (wrong number of cards, a card face up) voids
    the round: "all cards will be reshuffled and Bets will remain untouched" (PKH-21).
    """

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
