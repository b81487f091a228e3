"""Community-card poker against the dealer: Ultimate Texas Hold'em, Casino Hold'em, Texas Hold'em.

One shape: two hole cards per hand and the dealer, five community cards between decision windows,
best five of seven (UTH-H1 §11; seed-001 L579, L621). Shared logic :class:`HoldemGame`
(:mod:`.base`) and :mod:`.settle`; each game (:mod:`.ultimate`, :mod:`.casino`, :mod:`.texas`) gives
its script, qualifying hand and bet facts. Rule ids: seed-000 (PKH-, UTH-, GEN-, §14), seed-001
(``L…``, ``C…``); readings as tables: ``docs/games/holdem.md``.

- ``ultimate_texas_holdem`` (seed-000 §6): up to 5 boxes (6 in a "special game", UTH-B1), hole
  cards down in rotation (PKH-09), windows pre-flop §5, flop §7, river §9; dealer qualifies with
  a pair (UTH-H2 §12; ``"two_pair"`` is §17's reading, §14 item 1).
- ``casino_holdem`` (seed-001 §3.14 L563–617): player 2 up, dealer 2 down, flop up (L569–573), one
  window (L571), dealer qualifies with fours (L587).
- ``texas_holdem`` (§3.15 L619–679): Casino Hold'em (L621) with three windows (L625–633), Blind and
  Trips (L623, L637), dealer qualifies with a pair (L645).

Community cards are face up and dealt when opened (UTH §6, §8; L571, L573). Outcomes carry facts,
never money (paytables are configuration, PKH-17): per hand its result and each bet's "win", "push",
"lose" or "paytable" (:func:`paytable_hand`). Pure: no I/O.
"""

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
