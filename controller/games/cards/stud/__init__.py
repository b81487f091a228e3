"""Three-card and five-card stud against the dealer: Three Card Poker / Teen Patti, Caribbean Stud.

Every card before the only decision, each box against a qualifying dealer; :mod:`.base` is the
shared part, :mod:`.three_card` and :mod:`.caribbean` add script, dealer minimum and bonus hands.
Rule ids: seed 000 (PKH-, TCP-, §14), seed 001 (``L…``, ``C…``); readings:
``docs/games/stud.md``. A live table is a one-box table, so one outcome schema serves every size."""

from __future__ import annotations

from tablectl.controller.games.cards.deal import MISDEAL, REFUND, RESHUFFLE_BETS_STAND
from tablectl.controller.games.cards.stud.base import (
    BetResult,
    BonusOnFold,
    NotQualified,
    Result,
    Showdown,
    StudGame,
    StudRules,
    Undecided,
    showdown,
)
from tablectl.controller.games.cards.stud.caribbean import CaribbeanStud, CaribbeanStudRules
from tablectl.controller.games.cards.stud.three_card import (
    Form,
    TeenPatti,
    ThreeCardPoker,
    ThreeCardPokerRules,
)

__all__ = [
    "MISDEAL",
    "REFUND",
    "RESHUFFLE_BETS_STAND",
    "BetResult",
    "BonusOnFold",
    "CaribbeanStud",
    "CaribbeanStudRules",
    "Form",
    "NotQualified",
    "Result",
    "Showdown",
    "StudGame",
    "StudRules",
    "TeenPatti",
    "ThreeCardPoker",
    "ThreeCardPokerRules",
    "Undecided",
    "showdown",
]
