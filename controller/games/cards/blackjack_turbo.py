"""Blackjack Turbo (seed-001 §3.5, L3071–3095): blackjack with the cards shuffled for every game.

The game is :class:`~tablectl.controller.games.cards.blackjack.Blackjack` (the same values,
decisions and dealer rule) with Turbo's readings as its defaults (:class:`BlackjackTurboRules`)
and one rule of its own: "Card should be shuffled at the start of each game" (L3075). The deal
script is blackjack's with ``reshuffle = "every_round"``: each round is the last of its shoe, so
the next round needs a new ``shuffle_completed`` (``shuffle_required`` otherwise) and a card read
after the round's deal is complete is ``extra_card``, not played. Plain ``blackjack`` keeps its
shoe dealt to the cut card and refuses a ``[rules] reshuffle`` key (an unknown key); here the key
may also say ``"shoe"`` for a table whose shuffler is not reloaded every game.

Pure: no I/O.
"""

from __future__ import annotations

from typing import ClassVar

import pydantic

from tablectl.controller.games.cards.blackjack import Blackjack
from tablectl.controller.games.cards.blackjack_rules import BlackjackRules, HoleCard
from tablectl.controller.games.cards.deal import DealScript, Reshuffle
from tablectl.controller.games.cards.shoe import COMPOSITION_RULE, OnFault, ShoeRules


class BlackjackTurboRules(BlackjackRules):
    """The ``[rules]`` of a Blackjack Turbo table; defaults are seed-001 §3.5's reading.

    - ``decks = 6``: "6 deck of 52 cards with the Jokers removed" (L3073);
    - ``reshuffle = "every_round"``: "shuffled at the start of each game" (L3075);
    - ``boxes = 1``: "The dealer deals two cards to the player and two to himself" (L3075) — one
      hand, as every "Deal button" game of seed-001; a table with seats sets more;
    - ``hole_card = "scanned"``: the dealer's second card is dealt with the initial deal (L3075),
      after the player's second card [GAP: the order is not stated; the studio order of
      seed-002-004 BJ 3.4], face down until the outcome;
    - ``insurance = false``, ``surrender = false``: the options are Hit, Stand, Double Down and
      Split (L3077–3085), nothing else;
    - ``max_splits = 1``: "Hand can be Split up only one time" (L3085);
    - ``double_after_split = false``: double "is available only on the player's two-card
      starting hand" (L3083);
    - ``hit_soft_17 = false``: the dealer "must … Stand if the total is 17 to 21" (L3087);
    - ``on_fault = "void"``: no malfunction clause [GAP]; seed-001's general rule, "In case of
      communication failure or other technical shortcomings, the bet is calculated with the odds
      of 1" (G1 L59): the bets back.
    """

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
        assert isinstance(rules, BlackjackTurboRules)
        super().__init__(rules)
        self.rules = rules
        self.script = DealScript(Blackjack.script.steps, reshuffle=rules.reshuffle)
