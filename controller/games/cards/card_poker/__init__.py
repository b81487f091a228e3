"""The "card poker" family (seed-001 §3.9–§3.12) and Bombay Poker (seed-000 §8): 5-card poker
against the dealer with an exchange, a sixth card, a joker or a bought dealer game.

Deal scripts (:mod:`tablectl.controller.games.cards.deal`), evaluated by
:mod:`tablectl.controller.games.cards.poker`. Rule ids: seed-001 (``L…`` lines, ``C…`` §12
contradictions), seed-000 (PKH-, BMP-, V-BMP-, §14). Readings as tables:
``docs/games/card_poker.md``.

**CardPoker** (``[rules] variant``):

- ``card_poker`` §3.9 (L289–347), ``card_poker_exchange`` §3.10 (L349–403), ``six_card_poker``
  §3.11 (L405–451), ``poker_with_joker`` §3.12 (L453–515). One deck (53 with the joker, L455),
  shuffled every round (seed-001 §3.0 validator (1)).
- Deal (L295): five rotations box1 … boxN, dealer; the dealer's fifth card is face up (our
  reading of §3.9).
- One decision window after the deal (L312–316): ``fold``, ``play``, ``exchange`` (one card,
  replaced at once, L366–372, L477–483), ``sixth_card`` (best 5 of 6, L422–424). ``confirm``
  closes it; the dealer's cards are revealed in the outcome (L318). No decision before the deal
  ends (L295).
- Dealer qualifies with ace-king (L318–320, L374 C20, L426), Poker with Joker with a pair (L485).
  Joker wild, five of a kind tops (L461–473), natural beats joker-made (L475).
- Irregularities (L335, L391): a box with the wrong card count is out
  (``refund_plus_half_ante``); a dealer with four cards takes his fifth; any other dealer misdeal
  or exposed card voids the round.

**BombayPoker** (seed-000 §8): ≤ 3 boxes (BMP-B1), dealer's last card up (§6); draw window (§7–9),
play window (§10, closed by "insurance closed", §15), reveal, "buy a game" (§21–24), two
combinations per box (BMP-H1/H3), ties push (BMP-H5), PKH-21 misdeals.

Both settle every box through :func:`~.dealer.settle`. Modules: :mod:`.dealer`, :mod:`.variants`,
:mod:`.bombay`.
"""

from __future__ import annotations

from tablectl.controller.games.cards.card_poker.bombay import BombayPoker, BombayRules
from tablectl.controller.games.cards.card_poker.dealer import (
    DEALER,
    DEALER_NO_GAME,
    FACE_UP_ANYWAY,
    FOLD,
    LOSE,
    NO_GAME_AFTER_BUY,
    PUSH,
    TIE,
    VOID,
    WIN,
    bombay_combinations,
    combination_cards,
    combination_class,
    settle,
)
from tablectl.controller.games.cards.card_poker.variants import (
    CardPoker,
    CardPokerRules,
    Irregularities,
    Variant,
)
from tablectl.controller.games.cards.deal import (
    MISDEAL,
    REFUND,
    REFUND_PLUS_HALF_ANTE,
    RESHUFFLE_BETS_STAND,
)

__all__ = [
    "DEALER",
    "DEALER_NO_GAME",
    "FACE_UP_ANYWAY",
    "FOLD",
    "LOSE",
    "MISDEAL",
    "NO_GAME_AFTER_BUY",
    "PUSH",
    "REFUND",
    "REFUND_PLUS_HALF_ANTE",
    "RESHUFFLE_BETS_STAND",
    "TIE",
    "VOID",
    "WIN",
    "BombayPoker",
    "BombayRules",
    "CardPoker",
    "CardPokerRules",
    "Irregularities",
    "Variant",
    "bombay_combinations",
    "combination_cards",
    "combination_class",
    "settle",
]
