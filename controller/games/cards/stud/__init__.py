"""Three-card and five-card stud against the dealer: Three Card Poker / Teen Patti, Caribbean Stud.

Two games of :mod:`tablectl.controller.games.cards.deal`, run by
:class:`tablectl.controller.engines.cards.CardEngine`. Rule ids: seed 000 (PKH-, TCP-, §14), seed
001 (``L…``, ``C…``); readings as tables: ``docs/games/stud.md``.

Stud: every card is dealt before the only decision (play or fold), nothing is drawn, each box is
settled against a qualifying dealer. The shared part (:func:`showdown`, the base class) is in
:mod:`.base`; each game (:mod:`.three_card`, :mod:`.caribbean`) adds script, dealer minimum and
bonus hands.

- **Three Card Poker** (``three_card_poker``; ``teen_patti`` under the same rules, L519, C41):
  ``form = "table"`` (seed 000 §7: up to six boxes, TCP-B1; PKH-21 misdeals) or ``"live"`` (seed
  001 §3.13: one hand, L521; L561 "technical bug" refund). Three cards each, face down, in rotation
  (PKH-09; TCP §6; L521); dealer qualifies with queen high (TCP §10; L527).
- **Caribbean Stud** (seed 001 §3.17, L714–773): five cards each, boxes up, dealer down but one
  (L718); dealer qualifies with ace-king (L741).

Boxes are ``box1``…``boxN`` in both forms (live is a one-box table), so one outcome schema serves
every size: ``{"dealer": {...}, "boxes": {"box1": {...}}}``. Pure: no I/O.
"""

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
