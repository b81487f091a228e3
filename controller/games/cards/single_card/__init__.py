"""21 Bet, Jokerbet, Top Card, Red Dog, Draw Hi-Lo and Rock, Paper, Scissors: the scripted games of
seed-001 that are not poker hands.

Each a :class:`~tablectl.controller.games.cards.deal.BaseGame` run by
:class:`~tablectl.controller.engines.cards.CardEngine` (``L…`` = seed-001 line, ``C…`` = §12
contradiction). Readings as tables: ``docs/games/single_card.md``.

- :class:`Bet21` (§3.21, L3495–3537): two "conditional players" get two cards from a 36-card deck
  (L3499), then one a round while below 17 (L3497), within C23's limits; draws come one at a time
  (:meth:`Bet21.more`) so a bust ends the deal at once.
- :class:`Jokerbet` (§3.20, L3153–3319): one card a round from 52 + 2 jokers (L3155), dealt
  through (reshuffle ``"shoe"``, L3157); the result names every item the card wins (L3161–3311).
- :class:`TopCard` (§3.23, L1597–1599): one card each, A high; on a tie fold or war
  (:meth:`TopCard.decide`): three burned, one each.
- :class:`RedDog` (§3.24, L1589–1591): two open cards, a Ride/Stand window, the third card.
- :class:`DrawHiLo` (§3.25, L1593–1595): base card, Higher/Lower window, next card.
- :class:`RockPaperScissors` (§3.22, L2869–2903): one symbol card each to Silver and Gold.

Red Dog, Draw Hi-Lo and Top Card are "press the Deal button" games (L1591, L1595, L1599): the button
is the dealer's, the cards come from the table's shoe. One module per game; they share only the
names of their irregularities (:mod:`.irregularities`). Pure: no I/O.

Framework limits (docs' "Framework changes"): no refusal of a card as placed (Jokerbet's ``JK``),
jokers counted by rank (a second ``JK1`` passes), and Top Card's war card read before the decision
is the engine's ``extra_card``.
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
