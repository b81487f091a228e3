"""Baccarat (Punto Banco): points, the third-card tableau, the result, and :class:`Baccarat`.

Rule ids: seed-000 §4 (BAC-E1, BAC-E3, BAC-E6, §4.3, §4.4, V-BAC-1..6); seed-001 §3.1
(L1497–1587, C7 → the standard tableau); seed-002-004 A.1 (BAC 1.3.1, 3.4.3, 3.5.1, 3.2.2 /
3.5.4)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import BetsClosed
from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, Slot, Step
from tablectl.controller.games.cards.shoe import LastCoup, OnFault, ShoeRules
from tablectl.drivers.cards import Card

Hand: TypeAlias = Literal["player", "banker"]

MAX_CARDS: Final = 6
"""A coup uses 4 to 6 cards (seed-000 §4.3 item 7; seed-002-004 A.1.2 [D])."""


class BaccaratRules(ShoeRules):
    """Defaults are seed-000's; seed-004 tables set ``cut_card_min_behind = 7`` and ``burn = false``
    (C-A2), seed-001 tables ``on_fault = "void"`` (L1587)."""

    decks: int = pydantic.Field(default=8, ge=1, le=16)
    """seed-000 BAC-E1, seed-001 L1499, seed-002-004 BAC 1.3.1: eight decks."""

    burn: bool = True
    """seed-000 BAC-E6, V-BAC-1: show the first card, burn its value (A=1, T/J/Q/K=10)."""

    cut_card_min_behind: int = pydantic.Field(default=13, ge=0)
    """seed-000 BAC-E3, V-BAC-6: at least 13 cards (the stricter reading; seed-004 uses 7)."""

    last_coup: LastCoup = "current"
    """seed-002-004 BAC 3.2.2 / 3.5.4 (the only rule book with a last-coup rule)."""

    on_fault: OnFault = "decide"
    """seed-000 BAC-I4, GEN-12: a shuffler failure mid-hand goes to the floor manager."""

    commission: bool = True
    """Banker wins pay 0.95:1 (seed-000 §4.4 §19, seed-002-004 BAC 2.2); false: no-commission
    baccarat, where a Banker win with 6 pays half (seed-000 §19) — see ``banker_six``."""


def point(card: Card) -> int:
    """A = 1, 2–9 face value, T/J/Q/K = 0 (seed-000 §4.3 §10, seed-001 L1501–1505, seed-002-004 BAC
    1.3.2)."""
    if card.is_joker:
        raise RuleError("a joker has no baccarat value")
    if card.rank == "A":
        return 1
    if card.rank in "TJQK":
        return 0
    return int(card.rank)


def total(cards: Sequence[Card]) -> int:
    """A hand's total: the sum of points mod 10 (seed-000 §4.3 §10 "tens are subtracted")."""
    return sum(point(c) for c in cards) % 10


def is_natural(cards: Sequence[Card]) -> bool:
    """8 or 9 with the first two cards (seed-000 §4.3 §11, seed-002-004 BAC 1.1)."""
    return len(cards) == 2 and total(cards) >= 8


def banker_draws(banker_total: int, player_third: Card | None) -> bool:
    """The Banker's draw: on 0–5 when the Player stood (seed-000 §4.3 §17; seed-002-004 BAC 3.5.1),
    else the tableau of seed-000 §4.3 (§16)."""
    if player_third is None:
        return banker_total <= 5
    p3 = point(player_third)
    if banker_total <= 2:
        return True
    if banker_total == 3:
        return p3 != 8
    if banker_total == 4:
        return 2 <= p3 <= 7
    if banker_total == 5:
        return 4 <= p3 <= 7
    if banker_total == 6:
        return p3 in (6, 7)
    return False


def next_expected(player_cards: Sequence[Card], banker_cards: Sequence[Card]) -> Hand | None:
    """The hand the next card goes to, ``None`` when complete: P1 B1 P2 B2 (seed-002-004 BAC 3.4.3;
    seed-000 §4.3 item 2); a natural stops (§11, V-BAC-3; BAC 3.5.1); Player on 0–5 (§13–14),
    then Banker (§12)."""
    p, b = len(player_cards), len(banker_cards)
    initial: dict[tuple[int, int], Hand] = {
        (0, 0): "player",
        (1, 0): "banker",
        (1, 1): "player",
        (2, 1): "banker",
    }
    if (p, b) in initial:
        return initial[(p, b)]
    if (p, b) == (2, 2):
        if is_natural(player_cards) or is_natural(banker_cards):
            return None
        if total(player_cards) <= 5:
            return "player"
        return "banker" if banker_draws(total(banker_cards), None) else None
    if (p, b) == (3, 2):
        if is_natural(player_cards[:2]) or is_natural(banker_cards):
            raise RuleError("the Player drew a third card against a natural")
        if total(player_cards[:2]) > 5:
            raise RuleError("the Player drew a third card on 6 or 7")
        return "banker" if banker_draws(total(banker_cards), player_cards[2]) else None
    if (p, b) in ((2, 3), (3, 3)):
        return None
    raise RuleError(f"no legal coup has {p} Player and {b} Banker cards")


def outcome(
    player_cards: Sequence[Card], banker_cards: Sequence[Card], *, commission: bool = True
) -> dict[str, Any]:
    """The contracts §4.3 result of a complete coup: ``winner`` (seed-000 §4.4, BAC 3.5.2); a pair
    is the same rank (seed-000 leaves it undefined); ``banker_six`` for the no-commission half
    pay (§19) and Bombay Six (§27)."""
    if len(player_cards) < 2 or len(banker_cards) < 2:
        raise RuleError("a coup needs two cards per hand")
    if next_expected(player_cards, banker_cards) is not None:
        raise RuleError("the coup is not complete")
    p_total, b_total = total(player_cards), total(banker_cards)
    winner = "player" if p_total > b_total else "banker" if b_total > p_total else "tie"
    return {
        "winner": winner,
        "player": {"cards": [c.code for c in player_cards], "total": p_total},
        "banker": {"cards": [c.code for c in banker_cards], "total": b_total},
        "natural": is_natural(player_cards[:2]) or is_natural(banker_cards[:2]),
        "player_pair": player_cards[0].rank == player_cards[1].rank,
        "banker_pair": banker_cards[0].rank == banker_cards[1].rank,
        "banker_six": len(banker_cards) if winner == "banker" and b_total == 6 else None,
        "commission": commission,
    }


class Baccarat(BaseGame):
    """Baccarat as the card engine runs it: no boxes, no decisions, every card face up (seed-002-004
    BAC 3.4.3); cards dealt with no round open are a coup without bets (seed-000 BAC-I3)."""

    name: ClassVar[str] = "baccarat"
    script = DealScript((Step(("player", "banker"), count=2),), reshuffle="shoe")
    rules_model: ClassVar[type[ShoeRules]] = BaccaratRules
    procedure = "shoe"
    no_bets_deal = True
    composition_rule: ClassVar[str] = "V-BAC-6"
    """seed-000 V-BAC-6 (BAC-E1): at most 8 copies of each (rank, suit) per shoe."""
    rules: BaccaratRules

    def playing_boxes(self, bets_closed: BetsClosed | None) -> tuple[int, ...]:
        del bets_closed
        return ()

    def more(self, deal: Deal) -> list[Slot]:
        """The tableau's next card (:func:`next_expected`), once P1 B1 P2 B2 are out."""
        hand = next_expected(deal.hand("player"), deal.hand("banker"))
        return [] if hand is None else [Slot(hand)]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        return outcome(deal.hand("player"), deal.hand("banker"), commission=self.rules.commission)

    def public(self, deal: Deal) -> dict[str, Any]:
        return {hand: [c.code for c in deal.hand(hand)] for hand in ("player", "banker")}
