"""Blackjack Turbo (seed-001 §3.5, L3071–3095): blackjack, shuffled for every game (L3075).

Each round is the last of its shoe, so the next needs a ``shuffle_completed`` and a card after
the deal is ``extra_card``. Unlike plain ``blackjack``, ``[rules] reshuffle`` may say ``"shoe"``
for a table whose shuffler is not reloaded every game."""

from __future__ import annotations

from typing import ClassVar

import pydantic

from tablectl.controller.games.cards.blackjack import Blackjack
from tablectl.controller.games.cards.blackjack_rules import BlackjackRules, HoleCard
from tablectl.controller.games.cards.deal import DealScript, Reshuffle
from tablectl.controller.games.cards.shoe import COMPOSITION_RULE, OnFault, ShoeRules


class BlackjackTurboRules(BlackjackRules):
    """Defaults are seed-001 §3.5's reading:

    - ``decks = 6`` (L3073); ``reshuffle = "every_round"`` (L3075); ``boxes = 1`` (L3075, a "Deal
      button" game);
    - ``hole_card = "scanned"`` (L3075; its order is a [GAP], seed-002-004 BJ 3.4's studio
      order);
    - Hit, Stand, Double, Split only (L3077–3085): no insurance, no surrender; one split (L3085);
      no double after it (L3083); S17 (L3087);
    - ``on_fault = "void"``: no clause [GAP], so G1 L59, the bets back."""

    decks: int = pydantic.Field(default=6, ge=1, le=16)
    boxes: int = pydantic.Field(default=1, ge=1, le=7)
    hole_card: HoleCard = "scanned"
    insurance: bool = False
    max_splits: int | None = pydantic.Field(default=1, ge=0)
    double_after_split: bool = False
    on_fault: OnFault = "void"
    reshuffle: Reshuffle = "every_round"
    """``every_round``: a shuffle before every game (L3075); ``shoe``: dealt to the cut card."""


class BlackjackTurbo(Blackjack):
    """Blackjack Turbo: blackjack's deal, shuffled before every game by default (L3075)."""

    name: ClassVar[str] = "blackjack_turbo"
    rules_model: ClassVar[type[ShoeRules]] = BlackjackTurboRules
    composition_rule: ClassVar[str] = COMPOSITION_RULE  # seed-001 §3.0 (1): six of each
    rules: BlackjackTurboRules

    def __init__(self, rules: ShoeRules) -> None:
        super().__init__(rules)
        self.script = DealScript(Blackjack.script.steps, reshuffle=self.rules.reshuffle)
