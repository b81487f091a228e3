"""21 Bet, Jokerbet, Top Card, Red Dog, Draw Hi-Lo and Rock, Paper, Scissors: the scripted games
of seed-001 that are not poker hands.

Issue 8, Deliver 2, and issue 14. Games of ``../shared/rules/seed-001-live-casino-regulations.md``
(``L…`` = source line, ``C…`` = a §12 contradiction), each a
:class:`~tablectl.controller.games.cards.deal.BaseGame` run by
:class:`~tablectl.controller.engines.cards.CardEngine`.
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
- :class:`RedDog` (``red_dog``, §3.24, L1589–1591): two open cards from an 8-deck shoe, then
  (by their spread) a Ride/Stand window and the third card.
- :class:`DrawHiLo` (``draw_hi_lo``, §3.25, L1593–1595): a base card, a Higher/Lower window,
  the next card, from one deck dealt through.
- :class:`RockPaperScissors` (``rock_paper_scissors``, §3.22, L2869–2903): one symbol card to
  the Silver zone, one to the Gold zone, from a symbol deck (``RK``, ``PA``, ``SC``).

Red Dog, Draw Hi-Lo and Top Card are the book's "press the Deal button" games (L1591, L1595,
L1599): the button is the dealer's, and the cards come out of the table's shoe.

One module per game (:mod:`.bet21`, :mod:`.jokerbet`, :mod:`.top_card`, :mod:`.red_dog`,
:mod:`.draw_hi_lo`, :mod:`.rock_paper_scissors`): they share no rule, only the names of their
irregularities (:mod:`.irregularities`). Pure: no I/O. The games import from
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
from tablectl.controller.games.cards.single_card.draw_hi_lo import (
    DrawHiLo,
    DrawHiLoRules,
    hi_lo_direction,
    hi_lo_value,
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
from tablectl.controller.games.cards.single_card.red_dog import (
    RED_DOG_ORDER,
    RedDog,
    RedDogRules,
    red_dog_kind,
    red_dog_value,
)
from tablectl.controller.games.cards.single_card.rock_paper_scissors import (
    BEATS,
    RPS_ZONES,
    RockPaperScissors,
    RockPaperScissorsRules,
    rps_zone,
)
from tablectl.controller.games.cards.single_card.top_card import (
    TOP_CARD_ORDER,
    TopCard,
    TopCardRules,
    top_card_value,
)

__all__ = [
    "BEATS",
    "BET21_POSITIONS",
    "FOREIGN_CARD",
    "JOKER_UNIDENTIFIED",
    "RED_DOG_ORDER",
    "RPS_ZONES",
    "TOP_CARD_ORDER",
    "Bet21",
    "Bet21Rules",
    "DrawHiLo",
    "DrawHiLoRules",
    "Jokerbet",
    "JokerbetRules",
    "RedDog",
    "RedDogRules",
    "RockPaperScissors",
    "RockPaperScissorsRules",
    "TopCard",
    "TopCardRules",
    "bet21_next",
    "bet21_points",
    "golden_point",
    "hi_lo_direction",
    "hi_lo_value",
    "jokerbet_facts",
    "red_dog_kind",
    "red_dog_value",
    "rps_zone",
    "top_card_value",
]
