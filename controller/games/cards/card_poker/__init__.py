"""The "card poker" family (seed-001 §3.9–§3.12) and Bombay Poker (seed-000 §8): 5-card poker
against the dealer with an exchange, a sixth card, a joker or a bought dealer game.

Issue 8, Deliver 2. Both games are deal scripts (:mod:`tablectl.controller.games.cards.deal`) for
the card engine; the evaluation is
:mod:`tablectl.controller.games.cards.poker`. Rule ids: seed-001 =
``../shared/rules/seed-001-live-casino-regulations.md`` (``L…`` source lines, ``C…`` contradictions
of its §12); seed-000 = ``seed-000-bombay-player-guide.md`` (PKH-, BMP-, V-BMP-, §14 ambiguities).
``docs/games/card_poker.md`` has the same readings as tables.

**CardPoker** (``[rules] variant``, set by the catalog presets):

- ``card_poker`` §3.9 (L289–347), ``card_poker_exchange`` §3.10 (L349–403), ``six_card_poker``
  §3.11 (L405–451), ``poker_with_joker`` §3.12 (L453–515). One 52-card deck (53 with the joker,
  L455), shuffled for every round (seed-001 §3.0 validator (1): no duplicate in a round).
- Deal (L295): "5 cards face down … to each of the players including him clockwise except one
  card that is put face up": five rotations box1 … boxN, dealer; the dealer's **fifth (last)**
  card is the face-up one (the reading of §3.9; the source does not say which).
- One decision window after the deal (L312–316): ``fold``; ``play`` (the Raise, 2 × Ante);
  ``exchange`` (card_poker_exchange, poker_with_joker: exactly one card given back, its
  replacement dealt at once, face down — "The dealer immediately takes … gives the player a new
  card", L366–372, L477–483); ``sixth_card`` (six_card_poker: the box's sixth card, dealt at once,
  best 5 of 6, L422–424). The dealer's ``confirm`` closes the window; his four face-down cards
  are revealed in the outcome (L318). Nothing may be decided before the deal is over ("Until the
  end of the deal none of the players has right to touch the cards", L295).
- The dealer qualifies with ace-king (L318–320, L374 C20, L426); Poker with Joker with a pair
  (L485). Joker wild, five of a kind ("Poker") tops the ranking (L461–473), natural beats
  joker-made on an otherwise equal hand (L475).
- Irregularities (L335, L391; §3.9 derived encoding): a box with the wrong number of cards is out
  (``refund_plus_half_ante``); the dealer with four cards takes his fifth; any other dealer
  misdeal or an exposed card voids the round (``refund_plus_half_ante``).

**BombayPoker** (seed-000 §8): at most 3 boxes (BMP-B1), 5 cards each and the dealer, the
dealer's last card face up (§6); draw window (exchange 1–5 / sixth card / fold, §7–9), play window
(§10, closed by "insurance closed", §15), the dealer's reveal, a "buy a game" window when he has no
game (§21–24), two combinations per box (BMP-H1/H3), ties push (BMP-H5), PKH-21 misdeals.

Both games settle every box against the dealer through :func:`~.dealer.settle` (one helper).
Modules: :mod:`.dealer` (what both share), :mod:`.variants` (:class:`CardPoker`), :mod:`.bombay`
(:class:`BombayPoker`).
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
