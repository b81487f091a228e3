"""Rock, Paper, Scissors (seed-001 §3.22, L2869–2903), a game of
:mod:`tablectl.controller.games.cards.single_card`.

"The dealer deals one open card each to the Silver and Gold zones. The dealer takes the first card
from the top of the deck (the deck consists of cards containing the symbols of stone, paper and
scissors) and puts it open (face up) on the table in a special area for the Silver zone. The
dealer then takes the second card from the deck and places it open (face up) in a special area
for the Golden zone." (L2871). Bets are placed before the deal, one per zone: a symbol and an
amount (L2873–2875); each zone's bet plays against that zone's card: rock beats scissors, paper
beats rock, scissors beat paper, the same symbol is a draw and the bet is returned
(L2879–2903).

A symbol deck: its cards are ``RK`` (the book's stone), ``PA`` and ``SC`` in the card notation
(:data:`tablectl.drivers.cards.SYMBOLS`, contracts §4.1 extended; the shoe decodes them where its
``[[devices]]`` entry says ``symbol_deck = "rock_paper_scissors"``). How many cards of each
symbol the deck has is not given [GAP]: ``[rules] cards_per_symbol`` (default 18, a deck of 54 like
a standard deck with its jokers), the shoe's composition check and the shuffle count follow it.
The deck is dealt from its top through to its end (``reshuffle = "shoe"``; when it is shuffled
is not stated [GAP]). The outcome names, for each zone, the pick that wins against its card,
the pick that draws and the pick that loses: the back office settles each bet on it.

Pure: no I/O.
"""

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
    """One zone's card and how each player's pick fares against it (L2879–2903): ``wins`` is
    the pick that beats the card, ``draws`` the same symbol (the bet is returned), ``loses`` the
    pick the card beats.

    Raises:
        ValueError: not a symbol card.
    """
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
    """The ``[rules]`` of a Rock, Paper, Scissors table; defaults are seed-001's reading.

    One symbol deck (L2871: "the deck"), ``cards_per_symbol`` of each symbol [GAP]; no jokers, no
    ranks (``ranks`` is not used by a symbol deck); a round takes 2 cards, so a cut card must
    leave 2 behind it. One player position: the zones are the bets, not seats (L2873–2875).
    """

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

    def __init__(self, rules: GameRules) -> None:
        assert isinstance(rules, RockPaperScissorsRules)
        super().__init__(rules)
        self.rules = rules

    @property
    def symbols_per_deck(self) -> int:
        return self.rules.cards_per_symbol

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """``{"silver": {…}, "gold": {…}}`` (:func:`rps_zone` of each zone's card)."""
        return {zone: rps_zone(deal.hand(zone)[0]) for zone in RPS_ZONES}
