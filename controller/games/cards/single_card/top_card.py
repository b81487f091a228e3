"""Top Card Trump (seed-001 §3.23, L1597–1599): one card each to player and dealer from a 6-deck
shoe, A high; on a tie the player folds or goes to war (:meth:`TopCard.decide`)."""

from __future__ import annotations

from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    DECISION_REFUSED,
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Slot,
    Step,
    hand_codes,
)
from tablectl.controller.games.cards.shoe import LastCoup, OnFault
from tablectl.controller.games.cards.single_card.irregularities import DEAL_ERROR_RULE
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

_TOP_CARD_RANKS: Final = "23456789TJQKA"
"""L1599: "A is highest, 2 lowest"; suits do not rank [GAP: not stated; as War of Bets, L2619]."""

TOP_CARD_ORDER: Final = ("player", "dealer")
"""The player first [GAP], as in War of Bets (L2621); L1599's war sentence names who gets a card,
not an order, and the order does not change the result."""


def top_card_value(card: Card) -> int:
    """A card's rank, 2 = 2 … A = 14 (L1599)."""
    if card.is_joker:
        raise RuleError("a joker has no rank in Top Card")
    return _TOP_CARD_RANKS.index(card.rank) + 2


class TopCardRules(GameRules):
    """Six decks (L1599); a round takes at most 7 cards (2, then 3 burned and 2 in a war), so 7
    behind the cut card (derived; no cut-card rule). One position (a "Deal button" game, L1599)."""

    decks: int = pydantic.Field(default=6, ge=1, le=16)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    boxes: int = pydantic.Field(default=1, ge=1, le=1)
    cut_card_min_behind: int = pydantic.Field(default=7, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"
    war_burn: int = pydantic.Field(default=3, ge=0, le=5)
    """Cards burned face down before the war cards: "The dealer deals 3 cards face down" (L1599)."""


class TopCard(BaseGame):
    """Top Card Trump. The dealer's ``confirm`` with no decision closes a tie's window as a fold: a
    war cannot be played without the raise (L1599 "War (raise = main bet)")."""

    name: ClassVar[str] = "top_card"
    script = DealScript((Step(TOP_CARD_ORDER),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = TopCardRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"war", "fold"})
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE

    def __init__(self, rules: GameRules) -> None:
        super().__init__(rules)
        assert isinstance(rules, TopCardRules)
        self._burn = rules.war_burn

    @staticmethod
    def _tie(deal: Deal) -> bool:
        player, dealer = deal.hand("player"), deal.hand("dealer")
        return (
            len(player) == 1
            and len(dealer) == 1
            and top_card_value(player[0]) == top_card_value(dealer[0])
        )

    def waiting(self, deal: Deal) -> bool:
        """A tie waits for the player's war or fold, or the dealer's ``confirm`` (L1599)."""
        return self._tie(deal) and not deal.decisions and deal.windows_closed == 0

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``war``: the burned cards and one card each (L1599); ``fold``: nothing more. Either only
        once, on a tie, before the dealer closed the window."""
        if not self._tie(deal):
            return Finding(
                DECISION_REFUSED, "seed-001 L1599", f"{decision.action!r} is only taken on a tie"
            )
        if deal.decisions or deal.windows_closed:
            return Finding(DECISION_REFUSED, "seed-001 L1599", "the tie is already decided")
        if decision.action == "fold":
            return []
        burn = [Slot("burn", "down") for _ in range(self._burn)]
        return [*burn, *(Slot(f"war_{p}") for p in TOP_CARD_ORDER)]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The cards, the winner and, on a tie, the decision and the war, with the book's remedy as
        ``settlement`` (L1599). The war's face-down cards are revealed here (seed-000 L79)."""
        (player,) = deal.hand("player")
        (dealer,) = deal.hand("dealer")
        p, d = top_card_value(player), top_card_value(dealer)
        result: dict[str, Any] = {
            "player": {"cards": [player.code]},
            "dealer": {"cards": [dealer.code]},
            "tie": p == d,
            "decision": None,
            "war": None,
            "winner": "player" if p > d else "dealer" if d > p else None,
            "settlement": None,
        }
        if p != d:
            return result
        war = any(x.action == "war" for x in deal.decisions)
        result["decision"] = "war" if war else "fold"
        if not war:
            result["fold_by"] = "decision" if deal.decisions else "confirm"
            result["settlement"] = "half_bet_to_dealer"
            return result
        (war_player,) = deal.hand("war_player")
        (war_dealer,) = deal.hand("war_dealer")
        wp, wd = top_card_value(war_player), top_card_value(war_dealer)
        winner = "player" if wp >= wd else "dealer"
        result["war"] = {
            "burned": len(deal.hand("burn")),
            "burn": {"cards": hand_codes(deal.hand("burn"))},
            "player": {"cards": [war_player.code]},
            "dealer": {"cards": [war_dealer.code]},
            "tie": wp == wd,
            "winner": winner,
        }
        result["winner"] = winner
        result["settlement"] = (
            "raise_even_money_main_refunded" if winner == "player" else "all_bets_lost"
        )
        return result
