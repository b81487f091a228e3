"""The "card poker" family (seed-001 §3.9–§3.12) and Bombay Poker (seed-000 §8): 5-card poker
against the dealer with an exchange, a sixth card, a joker or a bought dealer game. Readings as
tables: ``docs/games/card_poker.md``.

- Variants: §3.9 (L289–347), §3.10 (L349–403), §3.11 (L405–451), §3.12 (L453–515); one deck
  (L455; §3.0 validator (1)).
- Deal in rotations (L295); one window after it (L312–316; exchange L366–372, L477–483; sixth
  card L422–424); reveal (L318).
- Dealer qualifies with ace-king (L318–320, L374 C20, L426), Poker with Joker with a pair (L485);
  joker per L461–475.
- Irregularities L335, L391.
- Bombay: BMP-B1, §6, §7–10, §15, §21–24, BMP-H1/H3/H5, PKH-21."""

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
