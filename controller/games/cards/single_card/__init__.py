"""21 Bet, Jokerbet, Top Card, Red Dog, Draw Hi-Lo and Rock, Paper, Scissors: seed-001's scripted
games that are not poker hands (§3.20–§3.25), one module each, sharing only their irregularity
names. Readings and framework limits: ``docs/games/single_card.md``. Red Dog, Draw Hi-Lo and Top
Card are "Deal button" games (L1591, L1595, L1599): the button is the dealer's."""

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
