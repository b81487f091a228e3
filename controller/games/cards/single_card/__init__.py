"""21 Bet, Jokerbet and Top Card: the scripted games of seed-001 that are not poker hands.

Issue 8, Deliver 2. Three games of ``../shared/rules/seed-001-live-casino-regulations.md`` (``L…`` =
source line, ``C…`` = a §12 contradiction), each a :class:`~tablectl.controller.games.cards.deal.
BaseGame` run by :class:`~tablectl.controller.engines.cards.CardEngine`.
``docs/games/single_card.md`` has the same readings in table form.

- :class:`Bet21` (``bet21``, §3.21, L3495–3537): two "conditional players" (``player1``,
  ``player2``) dealt two cards each from a 36-card deck (6 to A, L3499), then one card a round to
  each player still below 17 (L3497), within the dealing limits of C23. The draws are the
  :meth:`Bet21.more` hook, one card at a time, so that a bust ends the deal at once.
- :class:`Jokerbet` (``jokerbet``, §3.20, L3153–3319): one card a round, face up, from a 54-card
  deck (52 + a red and a black joker, L3155) dealt through to its end (reshuffle ``"shoe"``:
  "When one color-backed deck is finished, it is replaced by a deck of the other color", L3157).
  The result names every outcome item the card wins (L3161–3311).
- :class:`TopCard` (``top_card``, §3.23, L1597–1599, "Top Card Trump"): one card to the player and
  one to the dealer from a 6-deck shoe, A high, 2 low; on a tie the player folds or goes to war
  (:meth:`TopCard.decide`): three cards burned face down, then one card each.

One module per game (:mod:`.bet21`, :mod:`.jokerbet`, :mod:`.top_card`): they share no rule, only
the names of their irregularities (:mod:`.irregularities`). Pure: no I/O. The games import from
the package, which re-exports every public name.

What the framework cannot do yet (see the doc's "Framework changes"): a game cannot refuse a card
as it is placed (Jokerbet's unnumbered ``JK``), the shoe counts jokers by rank (a second ``JK1``
in one Jokerbet deck passes), and a card read while a decision window is open but no card is
queued is the engine's ``extra_card`` (Top Card's war card before the decision).
"""

from __future__ import annotations

from tablectl.controller.games.cards.single_card.bet21 import (
    BET21_POSITIONS,
    Bet21,
    Bet21Rules,
    bet21_next,
    bet21_points,
    golden_point,
)
from tablectl.controller.games.cards.single_card.irregularities import (
    FOREIGN_CARD,
    JOKER_UNIDENTIFIED,
)
from tablectl.controller.games.cards.single_card.jokerbet import (
    Jokerbet,
    JokerbetRules,
    jokerbet_facts,
)
from tablectl.controller.games.cards.single_card.top_card import (
    TOP_CARD_ORDER,
    TopCard,
    TopCardRules,
    top_card_value,
)

__all__ = [
    "BET21_POSITIONS",
    "FOREIGN_CARD",
    "JOKER_UNIDENTIFIED",
    "TOP_CARD_ORDER",
    "Bet21",
    "Bet21Rules",
    "Jokerbet",
    "JokerbetRules",
    "TopCard",
    "TopCardRules",
    "bet21_next",
    "bet21_points",
    "golden_point",
    "jokerbet_facts",
    "top_card_value",
]
