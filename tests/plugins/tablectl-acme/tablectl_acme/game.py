"""High Card, the ACME way: a card game added to tablectl as a deal script, without a fork.

One card face up to the player, one to the dealer; the higher rank wins (A high), equal ranks are
a tie. ``[table] game = "acme_high_card"`` (the ``tablectl.games`` entry point in this package's
``pyproject.toml``). The card engine does the rest: the shoe, burn and cut card, betting, misdeals,
the dealer's ``confirm``, journaling and replay.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, Step

__all__ = ["HighCard"]

_RANKS = "23456789TJQKA"


class HighCard(BaseGame):
    """Player against dealer, one card each (the operator's rule book, ACME-HC-1)."""

    name: ClassVar[str] = "acme_high_card"
    script = DealScript((Step(("player", "dealer")),), reshuffle="shoe")

    def outcome(self, deal: Deal) -> dict[str, Any]:
        (player,) = deal.hand("player")
        (dealer,) = deal.hand("dealer")
        p, d = _RANKS.index(player.code[0]), _RANKS.index(dealer.code[0])
        return {
            "player": player.code,
            "dealer": dealer.code,
            "winner": "player" if p > d else "dealer" if d > p else "tie",
        }
