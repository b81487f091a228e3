"""Dragon Tiger and its one-card-each relatives as pure functions: rank order, deal order, result.

One family, three presets chosen by ``[rules] variant`` (contracts §4.2: a rule book's game is a
preset of its family's engine). Rule-book ids point into ``../shared/rules/seed-001-...md``:

- ``dragon_tiger`` (§3.6): 8 decks (L1803); dragon then tiger (order not stated [GAP]; contracts §6
  "dragon tiger D,T"); A low … K high (L1807); equal ranks ``tie``, and ``suited_tie`` when the
  suits match too (L1809–1821).
- ``football_studio`` (§3.7): 8 decks (L1778); home then away (order not stated [GAP]; as
  listed, L1782); 2 low … A high (L1780); equal ranks ``draw``, no suited distinction.
- ``war_of_bets`` (§3.8): 6 decks (L2619); player then dealer ("The first card is always placed
  on the 'Player' section", L2621); 2 low … A high (L2619); equal ranks ``war``; every physical
  card has a unique barcode (L2619), so a barcode read twice in a shoe proves a re-scan or a
  re-inserted card; and a second betting round between the two cards: "Bets on the second draw
  can be made when the 'Player' receives the first card, and the odds are updated" (L2625).
  The deal has a window there, as the dealer-screen games' decision windows: the dealer card is
  due once a ``confirm`` closes the second betting round (``[rules] second_bets``); a dealer card
  before it is ``card_before_decisions`` and the round waits for a supervisor.

Suits never rank (L1807). A coup is exactly two cards (seed-001 §10 parameter table):
:class:`DragonTiger` is the game the card engine runs, its deal script one face-up card to each
position in deal order ("a single face-up card", L1809, L1782, L2621).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import BetsClosed
from tablectl.controller.games.cards.deal import BaseGame, Deal, DealScript, Step
from tablectl.controller.games.cards.shoe import LastCoup, OnFault, ShoeRules
from tablectl.drivers.cards import Card

Variant: TypeAlias = Literal["dragon_tiger", "football_studio", "war_of_bets"]


@dataclass(frozen=True, slots=True)
class Preset:
    """What a variant's rule book fixes."""

    positions: tuple[str, str]
    """The two hands, in deal order."""
    rank_order: str
    """Ranks from lowest to highest."""
    tie: str
    """The winner value when ranks are equal."""
    suited_tie: bool
    """Whether the result reports a suited tie (same rank and suit)."""
    decks: int
    unique_barcodes: bool
    """Whether each physical card carries its own barcode, so a repeat proves a re-scan or a
    re-inserted card."""
    second_bets: bool = False
    """Whether betting reopens between the first and the second card (war of bets, L2625)."""


PRESETS: Final[dict[Variant, Preset]] = {
    # seed-001 §3.6 L1803, L1807, L1809–1821.
    "dragon_tiger": Preset(("dragon", "tiger"), "A23456789TJQK", "tie", True, 8, False),
    # seed-001 §3.7 L1778–1791.
    "football_studio": Preset(("home", "away"), "23456789TJQKA", "draw", False, 8, False),
    # seed-001 §3.8 L2619–2625.
    "war_of_bets": Preset(("player", "dealer"), "23456789TJQKA", "war", False, 6, True, True),
}


class DragonTigerRules(ShoeRules):
    """The ``[rules]`` of a dragon tiger family table; defaults are seed-001's reading.

    ``decks`` defaults to the variant's (8, 8, 6). No burn (seed-001 §3.0: no burn rule in any
    game). ``on_fault = "void"``: "Any malfunction voids the game round" (L1823, L1793).
    """

    variant: Variant = "dragon_tiger"
    decks: int = pydantic.Field(default=8, ge=1, le=16)
    """Left out: the variant's deck count (see :data:`PRESETS`)."""
    burn: bool = False
    cut_card_min_behind: int = pydantic.Field(default=2, ge=0)
    """A coup needs two cards, so the last coup can always be finished (seed-001 has no cut-card
    rule; derived like seed-002-004 BAC 3.2.2's 7-card reserve)."""
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"
    second_bets: bool = False
    """A second betting round after the first card, closed by ``confirm`` before the second
    card. Left out: the variant's own (war of bets: on, L2625; the others: off)."""

    @pydantic.model_validator(mode="before")
    @classmethod
    def _variant_decks(cls, data: Any) -> Any:
        """``decks`` and ``second_bets`` left out → the variant's own (war of bets: 6 decks,
        L2619, and the second betting round, L2625)."""
        if isinstance(data, dict):
            variant = data.get("variant", "dragon_tiger")
            if isinstance(variant, str) and variant in PRESETS:
                preset = PRESETS[variant]
                defaults = {"decks": preset.decks, "second_bets": preset.second_bets}
                return {**defaults, **data}
        return data

    @property
    def preset(self) -> Preset:
        return PRESETS[self.variant]


def rank_value(card: Card, variant: Variant = "dragon_tiger") -> int:
    """A card's rank in the variant's order, 1 = lowest (suits do not rank, L1807).

    Raises:
        ValueError: a joker.
    """
    if card.is_joker:
        raise RuleError("a joker has no rank here")
    return PRESETS[variant].rank_order.index(card.rank) + 1


def next_expected(cards: Sequence[Card], variant: Variant = "dragon_tiger") -> str | None:
    """The position the next card goes to (first position first), ``None`` after two cards."""
    positions = PRESETS[variant].positions
    return positions[len(cards)] if len(cards) < 2 else None


def outcome(first: Card, second: Card, variant: Variant = "dragon_tiger") -> dict[str, Any]:
    """The result of a coup: ``first`` is the card of the first position in deal order.

    dragon_tiger: ``{"winner": "dragon"|"tiger"|"tie", "dragon": "KH", "tiger": "2C",
    "suited_tie": bool}`` (contracts §4.3). football_studio: ``{"winner": "home"|"away"|"draw",
    "home": .., "away": ..}``. war_of_bets: ``{"winner": "player"|"dealer"|"war", "player": ..,
    "dealer": ..}``.
    """
    preset = PRESETS[variant]
    a, b = preset.positions
    va, vb = rank_value(first, variant), rank_value(second, variant)
    winner = a if va > vb else b if vb > va else preset.tie
    result: dict[str, Any] = {"winner": winner, a: first.code, b: second.code}
    if preset.suited_tie:
        result["suited_tie"] = va == vb and first.suit == second.suit
    return result


class DragonTiger(BaseGame):
    """The dragon tiger family as the card engine runs it (the variant names the positions).

    Irregularities follow the baccarat remedies by analogy, since seed-001 gives none but "any
    malfunction voids the game round" (L1823, L1793): an extra card is the first card of the next
    coup (seed-000 BAC-I1/I2), cards dealt with no round form a coup without bets (BAC-I3). War of
    bets adds the barcode rule (``duplicate_barcode``, L2619).
    """

    name: ClassVar[str] = "dragon_tiger"
    rules_model: ClassVar[type[ShoeRules]] = DragonTigerRules
    procedure = "shoe"
    no_bets_deal = True
    window_rule: ClassVar[str] = "seed-001 L2625"  # war of bets' second betting round
    rules: DragonTigerRules

    def __init__(self, rules: ShoeRules) -> None:
        assert isinstance(rules, DragonTigerRules)
        super().__init__(rules)
        self.rules = rules
        first, second = rules.preset.positions
        # L2625: with a second betting round the second card waits for its close (a window).
        steps = (
            (Step((first,)), Step((second,), stage=1))
            if rules.second_bets
            else (Step(rules.preset.positions),)
        )
        self.script = DealScript(steps, reshuffle="shoe")

    @property
    def unique_barcodes(self) -> bool:
        return self.rules.preset.unique_barcodes

    def playing_boxes(self, bets_closed: BetsClosed | None) -> tuple[int, ...]:
        del bets_closed
        return ()

    def outcome(self, deal: Deal) -> dict[str, Any]:
        first, second = self.rules.preset.positions
        return outcome(deal.hand(first)[0], deal.hand(second)[0], self.rules.variant)

    def public(self, deal: Deal) -> dict[str, Any]:
        return {
            position: (deal.hand(position)[0].code if deal.hand(position) else None)
            for position in self.rules.preset.positions
        }
