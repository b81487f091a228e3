"""Rock, Paper, Scissors (seed-001 §3.22, L2869–2903): one open symbol card each to the Silver and
Gold zones (L2871); each zone's bets play against its card (L2873–2875, L2879–2903).

A symbol deck (``RK``, ``PA``, ``SC``; contracts §4.1 extended, decoded where the device says
``symbol_deck``). Its size [GAP] is ``[rules] cards_per_symbol``; it is dealt through
(``reshuffle = "shoe"``; the shuffle is not stated [GAP]). The outcome names the winning, drawing
and losing pick per zone; the back office settles."""

from __future__ import annotations

from typing import Any, ClassVar, Final

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, GameRules, Step
from tablectl.controller.games.cards.shoe import LastCoup, OnFault
from tablectl.controller.games.cards.single_card.irregularities import DEAL_ERROR_RULE
from tablectl.drivers.cards import SYMBOL_NAMES, Card

RPS_ZONES: Final = ("silver", "gold")
"""The zones in deal order: "the first card … for the Silver zone … the second card … for the
Golden zone" (L2871)."""

BEATS: Final = {"rock": "scissors", "paper": "rock", "scissors": "paper"}
"""What each symbol beats (L2879–2903: stone beats scissors, paper beats stone, scissors beat
paper)."""
_BEATEN_BY: Final = {loser: winner for winner, loser in BEATS.items()}


def rps_zone(card: Card) -> dict[str, str]:
    """One zone's card and the pick that wins, draws (bet returned) and loses against it
    (L2879–2903)."""
    if not card.is_symbol:
        raise RuleError(f"{card.code} is not a rock, paper or scissors card")
    symbol = SYMBOL_NAMES[card.code]
    return {
        "card": card.code,
        "symbol": symbol,
        "wins": _BEATEN_BY[symbol],
        "draws": symbol,
        "loses": BEATS[symbol],
    }


class RockPaperScissorsRules(GameRules):
    """One symbol deck (L2871), ``cards_per_symbol`` [GAP]; a round takes 2 cards. One position: the
    zones are bets, not seats (L2873–2875)."""

    decks: int = pydantic.Field(default=1, ge=1, le=8)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    boxes: int = pydantic.Field(default=1, ge=1, le=1)
    cut_card_min_behind: int = pydantic.Field(default=2, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"
    cards_per_symbol: int = pydantic.Field(default=18, ge=1, le=100)
    """Cards of each symbol in one deck (not given, L2871 [GAP])."""


class RockPaperScissors(BaseGame):
    """Rock, Paper, Scissors (seed-001 §3.22): one symbol card face up to Silver, then to Gold
    (L2871); see the module docstring."""

    name: ClassVar[str] = "rock_paper_scissors"
    script = DealScript((Step(RPS_ZONES),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = RockPaperScissorsRules
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE
    rules: RockPaperScissorsRules

    @property
    def symbols_per_deck(self) -> int:
        return self.rules.cards_per_symbol

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """``{"silver": {…}, "gold": {…}}`` (:func:`rps_zone` of each zone's card)."""
        return {zone: rps_zone(deal.hand(zone)[0]) for zone in RPS_ZONES}
