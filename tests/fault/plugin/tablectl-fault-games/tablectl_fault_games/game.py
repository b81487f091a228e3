"""High Card with a typo: the engine defect the fault suite's engine-error lane needs.

One card face up to the player, one to the dealer; the higher rank wins. The rank table lacks the
queen, a slip of the kind a game's own tests can miss: the first round that deals a queen raises
``KeyError: 'Q'`` out of :meth:`FaultyHighCard.outcome`, inside the card engine — an engine error
as an operator would meet one, from an integrator's package. (A ``ValueError`` would not do: the
card engine reads it as a hand the evaluator refuses and ends the round unsettled, by design.)
"""

from __future__ import annotations

from typing import Any, ClassVar

from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, Step

__all__ = ["FaultyHighCard"]

_RANK = {rank: value for value, rank in enumerate("23456789TJKA")}  # the planted defect: no "Q"


class FaultyHighCard(BaseGame):
    """Player against dealer, one card each; raises on a queen (see the module docstring)."""

    name: ClassVar[str] = "fault_high_card"
    script = DealScript((Step(("player", "dealer")),), reshuffle="shoe")

    def outcome(self, deal: Deal) -> dict[str, Any]:
        (player,) = deal.hand("player")
        (dealer,) = deal.hand("dealer")
        p, d = _RANK[player.code[0]], _RANK[dealer.code[0]]
        return {
            "player": player.code,
            "dealer": dealer.code,
            "winner": "player" if p > d else "dealer" if d > p else "tie",
        }
