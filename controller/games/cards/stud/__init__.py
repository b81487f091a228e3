"""Three-card and five-card stud against the dealer: Three Card Poker / Teen Patti, Caribbean Stud.

Issue 8, Deliver 2: two games of :mod:`tablectl.controller.games.cards.deal`, run by
:class:`tablectl.controller.engines.cards.CardEngine`. Rule ids point into
``../shared/rules/``: seed 000 (``seed-000-bombay-player-guide.md``: PKH-, TCP-, §14 ambiguities)
and seed 001 (``seed-001-live-casino-regulations.md``: ``L…`` source lines, ``C…`` §12
contradictions). ``docs/games/stud.md`` has the same readings in table form.

Both games are "stud" games: every card is dealt before the only decision (play or fold), nothing
is drawn, and each box is settled against the dealer's hand once he qualifies. That shared part is
one helper, :func:`showdown`, and one base class (decisions, the decision window, the per-box
outcome), in :mod:`.base`; each game adds its deal script, its dealer minimum and its bonus hands,
in its own module (:mod:`.three_card`, :mod:`.caribbean`).

- **Three Card Poker** (``three_card_poker``, and ``teen_patti``, which seed 001 runs under the
  same rules: "hereinafter all together 'Game' or 'Three Card Poker'", L519, C41). Two forms:
  ``form = "table"`` (seed 000 §7: up to six boxes, TCP-B1; PKH-21 misdeal remedy) and
  ``form = "live"`` (seed 001 §3.13: one hand, L521; the L561 "technical bug" refund).
  Three cards to each playing box and to the dealer, face down, in rotation (PKH-09; TCP §6;
  L521). The dealer qualifies with queen high (TCP §10; L527).
- **Caribbean Stud** (``caribbean_stud``, seed 001 §3.17, L714–773). Five cards to each box,
  face up, and five to the dealer, face down except one (L718); the dealer qualifies with ace-king
  (L741).

Boxes are ``box1``…``boxN`` in both forms (the live single hand is ``box1`` of a one-box table),
so one outcome schema serves every table size: ``{"dealer": {...}, "boxes": {"box1": {...}}}``.

Pure: no I/O. The games import from the package, which re-exports every public name.
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
