"""21 Bet (seed-001 §3.21, L3495–3537): two players, two cards each from a 36-card deck (L3499),
then one card a round below 17 (L3497) within C23's limits. Draws come one at a time from
:meth:`Bet21.more`, so a bust ends the deal at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.games.cards.deal import (
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Slot,
    Step,
    hand_codes,
)
from tablectl.controller.games.cards.single_card.irregularities import (
    DEAL_ERROR_RULE,
    FOREIGN_CARD,
)
from tablectl.drivers.cards import Card

BET21_POSITIONS: Final = ("player1", "player2")
"""The two conditional players "to the right and left of the dealer", dealt in this order
(L3497: "first deals two cards to Player 1 and two cards to Player 2")."""

_BET21_RANKS: Final = frozenset("6789TJQKA")
"""The 36-card deck: "from Six to Ace of each of the four suits" (L3499)."""
_BET21_VALUES: Final = {"J": 2, "Q": 3, "K": 4, "T": 10, "A": 1}
"""L3499: 6–10 face value; J = 2, Q = 3, K = 4, A = 1 or 11 (the 11 is added in
:func:`bet21_points`)."""
_STAND: Final = 17
"""L3497: "The dealer cannot add cards to either of players if they already have 17 or more"."""


def _bet21_value(card: Card) -> int:
    """A = 1; a 2–5 (no card of this deck) at face value, so a foreign card the supervisor let
    through still gives a total (flagged :data:`FOREIGN_CARD`)."""
    if card.is_joker:
        raise RuleError("a joker has no value in 21 Bet")
    return _BET21_VALUES.get(card.rank) or int(card.rank)


def bet21_points(cards: Sequence[Card]) -> int:
    """The best total, one ace counting 11 within 21 (L3499); two aces are 12 (still a golden
    point)."""
    total = sum(_bet21_value(c) for c in cards)
    if any(c.rank == "A" for c in cards) and total + 10 <= 21:
        total += 10
    return total


def golden_point(cards: Sequence[Card]) -> bool:
    """A golden point: 21 with the first two cards, or two aces ("two Aces are considered a
    winning combination", L3497). Only the deal's two cards make one ("collected … at once")."""
    if len(cards) != 2:
        return False
    return bet21_points(cards) == 21 or all(c.rank == "A" for c in cards)


def _foreign(cards: Sequence[Card]) -> list[Card]:
    return [c for c in cards if c.rank not in _BET21_RANKS]


def bet21_next(
    hand1: Sequence[Card],
    hand2: Sequence[Card],
    *,
    dealing_rounds: int = 4,
    max_extra_cards: int = 3,
) -> Literal["player1", "player2"] | None:
    """The player due the next draw card, ``None`` when the deal is over (L3497): each round one
    card to player 1 then player 2 while below 17; a bust stops at once; so do C23's limits and a
    foreign card. It depends on the hands alone, so :meth:`Bet21.more` is a pure function of the
    deal."""
    hands = (list(hand1), list(hand2))
    if len(hands[0]) < 2 or len(hands[1]) < 2:
        return None
    if _foreign(hands[0] + hands[1]):
        return None
    if golden_point(hands[0][:2]) or golden_point(hands[1][:2]):
        return None
    dealt = [2, 2]
    for _ in range(dealing_rounds - 1):
        for p in (0, 1):
            if any(bet21_points(hands[q][: dealt[q]]) > 21 for q in (0, 1)):
                return None
            if bet21_points(hands[p][: dealt[p]]) >= _STAND or dealt[p] - 2 >= max_extra_cards:
                continue
            if dealt[p] < len(hands[p]):
                dealt[p] += 1
            else:
                return BET21_POSITIONS[p]
    return None


class Bet21Rules(GameRules):
    """Defaults are seed-001's reading (§3.21): one 36-card deck (L3499) shuffled every round [GAP].
    C23 ("4 rounds of card dealing", "no more than three cards") against "Win with (5) cards"
    (L3515–3517): the deal is round 1, at most three draw rounds follow, so a hand holds at most
    5."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    ranks: Literal["6789TJQKA"] = "6789TJQKA"
    """The 36-card deck, "from Six to Ace of each of the four suits" (L3499): the shoe refuses a
    2–5 (``rank_not_in_deck``, a hold) and expects the shuffler to count 36 cards."""
    dealing_rounds: int = pydantic.Field(default=4, ge=1, le=8)
    """Dealing rounds including the deal of two cards each (L3497, C23)."""
    max_extra_cards: int = pydantic.Field(default=3, ge=0, le=7)
    """Draw cards a player may take beyond the two of the deal (L3497, C23); 1 is the other
    reading of "no more than three cards" (three cards in all)."""


class Bet21(BaseGame):
    """21 Bet (seed-001 §3.21, L3495–3537): see the module docstring and :func:`bet21_next`."""

    name: ClassVar[str] = "bet21"
    script = DealScript((Step(BET21_POSITIONS, count=2, rotate=False),), reshuffle="every_round")
    rules_model: ClassVar[type[GameRules]] = Bet21Rules
    deal_error_rule: ClassVar[str] = DEAL_ERROR_RULE

    @property
    def _rules(self) -> Bet21Rules:
        assert isinstance(self.rules, Bet21Rules)
        return self.rules

    def more(self, deal: Deal) -> Sequence[Slot]:
        position = bet21_next(
            deal.hand("player1"),
            deal.hand("player2"),
            dealing_rounds=self._rules.dealing_rounds,
            max_extra_cards=self._rules.max_extra_cards,
        )
        return [] if position is None else [Slot(position)]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The facts of the 15 outcome items (L3505–3533). A golden point on the deal wins, else a
        bust loses, else the nearer to 21 (L3497); a deal stopped by the limits is judged the
        same [GAP]; a foreign card leaves no winner (the bets cannot be settled on a wrong deck)."""
        hands = {p: deal.hand(p) for p in BET21_POSITIONS}
        foreign = _foreign(hands["player1"] + hands["player2"])
        points = {p: bet21_points(h) for p, h in hands.items()}
        golden = {p: golden_point(h) for p, h in hands.items()}
        bust = {p: points[p] > 21 for p in BET21_POSITIONS}
        winner: str | None
        if foreign:
            winner = None
        elif golden["player1"] != golden["player2"]:
            winner = "player1" if golden["player1"] else "player2"
        elif golden["player1"]:
            winner = "draw"
        elif bust["player1"] or bust["player2"]:
            winner = "player2" if bust["player1"] else "player1"
        elif points["player1"] == points["player2"]:
            winner = "draw"
        else:
            winner = "player1" if points["player1"] > points["player2"] else "player2"
        won = winner in hands
        extra = [len(h) - 2 for h in hands.values()]
        limit_reached = (
            winner is not None
            and not any(golden.values())
            and not any(bust.values())
            and any(points[p] < _STAND for p in BET21_POSITIONS)
        )
        return {
            **{
                p: {
                    "cards": hand_codes(hands[p]),
                    "points": points[p],
                    "bust": bust[p],
                    "golden_point": golden[p],
                }
                for p in BET21_POSITIONS
            },
            "winner": winner,
            "winner_cards": len(hands[winner]) if won and winner else None,
            "winner_points": points[winner] if won and winner else None,
            "golden_point": bool(won and winner and golden[winner]),
            "bust": any(bust.values()),
            "draw_rounds": max(extra),
            "limit_reached": limit_reached,
            "foreign_cards": hand_codes(foreign),
            "irregular": FOREIGN_CARD if foreign else None,
        }
