"""What goes wrong in 21 Bet, Jokerbet and Top Card, named once for the three games.

The result flags are stable like verdict codes (``docs/games/single_card.md``), and the deal-error
rule is the same general rule for every game of :mod:`tablectl.controller.games.cards.single_card`.
Pure data.
"""

from __future__ import annotations

from typing import Final

# Result flags (``result["irregular"]``), stable like verdict codes (docs/games/single_card.md).
FOREIGN_CARD: Final = "foreign_card"
"""21 Bet: a 2, 3, 4 or 5 was dealt, which a 36-card deck does not hold (L3499). The shoe holds
the round for it (``rank_not_in_deck``); if the supervisor lets it settle (``confirm``), the
result has no winner and carries this flag."""
JOKER_UNIDENTIFIED: Final = "joker_unidentified"
"""Jokerbet: a joker read as plain ``JK``, so its colour (red ``JK1`` / black ``JK2``) and the
colour bets it settles are unknown (L3155, items 67–68, 73–74)."""

# The rule book's remedy for a deal irregularity in these games: none of them states one
# (§10: "none"), so the general rule applies: "In case of communication failure or other technical
# shortcomings, the bet is calculated with the odds of 1 (one)" (seed-001 G1 L59) = refund.
DEAL_ERROR_RULE: Final = "seed-001 G1 L59"
