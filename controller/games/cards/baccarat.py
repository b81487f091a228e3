"""Baccarat (Punto Banco) rules as pure functions: points, the deal order with the third-card
tableau, and the published result; :class:`Baccarat` is the game the card engine
(:mod:`tablectl.controller.engines.cards`) runs: its deal script P1, B1, P2, B2, then the tableau.

Rule-book ids (``../shared/rules/``):

- seed-000 §4 (Bombay Club): BAC-E1 (8 decks), BAC-E3 (≥ 13 cards behind the cut card), BAC-E6
  (burn), §4.3 (deal, naturals, the third-card tableau, card values), §4.4 (payouts: commission,
  no-commission Banker 6, pairs, Bombay Six), V-BAC-1..6;
- seed-001 §3.1 (L1497–1587: values, mod 10, tableau gaps C7 → standard Punto Banco tableau);
- seed-002-004 A.1 (BAC 1.3.1 cut card seven from the end, BAC 3.4.3 deal order P1 B1 P2 B2,
  BAC 3.5.1 drawing rules, BAC 3.2.2 / 3.5.4 last coup).
"""

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
    """The ``[rules]`` section of a baccarat table; defaults are seed-000's reading.

    seed-004 (live studio) tables set ``cut_card_min_behind = 7`` and ``burn = false`` (it has no
    burn rule, C-A2); seed-001 tables set ``on_fault = "void"`` (L1587).
    """

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
    """A card's baccarat value: A = 1, 2–9 face value, T/J/Q/K = 0 (seed-000 §4.3 §10, seed-001
    L1501–1505, seed-002-004 BAC 1.3.2).

    Raises:
        ValueError: a joker.
    """
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
    """Whether the Banker draws, after the Player's two-card decision (no natural on either side).

    ``player_third`` is ``None`` when the Player stood (6 or 7): the Banker then draws on 0–5
    (seed-000 §4.3 §17; seed-002-004 BAC 3.5.1). Otherwise the tableau of seed-000 §4.3 (§16):
    0–2 always; 3 unless P3 = 8; 4 on P3 2–7; 5 on P3 4–7; 6 on P3 6–7; 7 never.
    """
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
    """The hand the next card goes to, or ``None`` when the coup is complete.

    Deal order P1, B1, P2, B2 (seed-002-004 BAC 3.4.3; seed-000 §4.3 item 2), then: a natural on
    either hand stops all drawing (seed-000 §4.3 §11, V-BAC-3; BAC 3.5.1 "no exceptions"); the
    Player draws on 0–5 and stands on 6–7 (§13–14); then the Banker per :func:`banker_draws`
    (§12: "First, a card is drawn for the Player, and then for the Banker").

    Raises:
        ValueError: card counts no legal coup can have (e.g. a Banker card before the Player's).
    """
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
    """The contracts §4.3 baccarat result of a complete coup.

    ``winner``: the higher total, ``tie`` when equal (seed-000 §4.4, seed-002-004 BAC 3.5.2).
    ``natural``: either hand has 8/9 with two cards. ``player_pair``/``banker_pair``: the hand's
    first two cards have the same rank (seed-000 §4.4: "pair" is undefined there; same rank is the
    usual reading). ``banker_six``: 2 or 3 when the Banker wins with a total of 6 using that many
    cards (no-commission half pay, seed-000 §19; Bombay Six 12:1 / 20:1, §27), else ``None``.
    ``commission``: the table's variant flag, for the settler.

    Raises:
        ValueError: the coup is not complete (the tableau still calls for a card).
    """
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

    def __init__(self, rules: ShoeRules) -> None:
        assert isinstance(rules, BaccaratRules)
        super().__init__(rules)
        self.rules = rules

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
