"""Community-card poker against the dealer: Ultimate Texas Hold'em, Casino Hold'em, Texas Hold'em.

Two hole cards, five community cards between windows, best five of seven (UTH-H1 §11; seed-001
L579, L621): :mod:`.base` and :mod:`.settle` are shared, each game's module gives its script,
qualifier and bets. Rule ids: seed-000 (PKH-, UTH-, GEN-, §14), seed-001 (``L…``, ``C…``);
readings: ``docs/games/holdem.md``. Outcomes carry facts, never money (PKH-17)."""

from __future__ import annotations

from tablectl.controller.games.cards.deal import MISDEAL, RESHUFFLE_BETS_STAND
from tablectl.controller.games.cards.holdem.base import HoldemGame, HoldemRules
from tablectl.controller.games.cards.holdem.casino import CasinoHoldem, CasinoHoldemRules
from tablectl.controller.games.cards.holdem.settle import Versus, paytable_hand, versus_bets
from tablectl.controller.games.cards.holdem.texas import TexasHoldemRules, TexasHoldemVsDealer
from tablectl.controller.games.cards.holdem.ultimate import (
    UltimateTexasHoldem,
    UltimateTexasHoldemRules,
)

__all__ = [
    "MISDEAL",
    "RESHUFFLE_BETS_STAND",
    "CasinoHoldem",
    "CasinoHoldemRules",
    "HoldemGame",
    "HoldemRules",
    "TexasHoldemRules",
    "TexasHoldemVsDealer",
    "UltimateTexasHoldem",
    "UltimateTexasHoldemRules",
    "Versus",
    "paytable_hand",
    "versus_bets",
]
