"""Community-card poker against the dealer: Ultimate Texas Hold'em, Casino Hold'em, Texas Hold'em.

Issue 8, Deliver 2. Three games, one shape: each player hand and the dealer get two hole cards,
five community cards (flop 3, turn 1, river 1) come out between decision windows, and every hand
is the best five of its seven cards (UTH-H1 §11; seed-001 L579, L621). The shared logic is
:class:`HoldemGame` (:mod:`.base`), with the pure settlement facts in :mod:`.settle`; the games
differ in their deal script (how many windows, how the hole cards lie), the dealer's qualifying
hand and the facts their bets need, each in its own module (:mod:`.ultimate`, :mod:`.casino`,
:mod:`.texas`). Rule ids point into ``../shared/rules/``: seed-000
(``seed-000-bombay-player-guide.md``: PKH-, UTH-, GEN-, §14) and seed-001
(``seed-001-live-casino-regulations.md``: ``L…`` source lines, ``C…`` contradictions).
``docs/games/holdem.md`` has the same readings in table form.

- ``ultimate_texas_holdem`` (:class:`UltimateTexasHoldem`, seed-000 §6): up to 5 boxes (6 in a
  "special game", UTH-B1), hole cards face down to the boxes and the dealer in rotation (PKH-09),
  three decision windows (pre-flop §5, flop §7, river §9), dealer qualifies with a pair (UTH-H2
  §12; ``dealer_qualifies = "two_pair"`` is §17's reading, seed-000 §14 item 1).
- ``casino_holdem`` (:class:`CasinoHoldem`, seed-001 §3.14 L563–617): one player hand, player 2
  up, dealer 2 down, flop 3 up (L569–573), one window (Call or Fold, L571), turn and river,
  dealer qualifies with a pair of fours (L587).
- ``texas_holdem`` (:class:`TexasHoldemVsDealer`, seed-001 §3.15 L619–679): Casino Hold'em
  (L621) with three windows (L625–633), Blind and Trips (L623, L637), dealer qualifies with a
  pair (L645).

Community cards are face up: the rule books open them after each window (UTH §6, §8; L571,
L573), and a shoe reader sees a card when it is dealt, so a community card is dealt when it is
opened. Outcomes carry facts, never money (paytables are table configuration, PKH-17): for each
hand its result against the dealer and what each bet does ("win", "push", "lose", "paytable" =
pays by the hand's :func:`paytable_hand` on the table's paytable).

Pure: no I/O. The games import from the package, which re-exports every public name.
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
