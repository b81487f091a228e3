"""Dragon Tiger and its one-card-each relatives: rank order, deal order, result.

Presets by ``[rules] variant`` (contracts §4.2), seed-001:

- ``dragon_tiger`` (§3.6): 8 decks (L1803), dragon first [GAP; contracts §6], A low (L1807),
  ``suited_tie`` (L1809–1821).
- ``football_studio`` (§3.7): 8 decks (L1778), home first [GAP; L1782], A high (L1780).
- ``war_of_bets`` (§3.8): 6 decks, A high, unique barcodes (L2619), player first (L2621), a
  second betting round before the dealer's card (L2625, ``[rules] second_bets``).

Suits never rank (L1807); a coup is two face-up cards (§10; L1809, L1782, L2621)."""

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
    """Defaults are seed-001's: decks by variant, no burn (§3.0), ``on_fault = "void"`` (L1823,
    L1793)."""

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
    """1 = lowest in the variant's order (suits do not rank, L1807)."""
    if card.is_joker:
        raise RuleError("a joker has no rank here")
    return PRESETS[variant].rank_order.index(card.rank) + 1


def next_expected(cards: Sequence[Card], variant: Variant = "dragon_tiger") -> str | None:
    """The position the next card goes to (first position first), ``None`` after two cards."""
    positions = PRESETS[variant].positions
    return positions[len(cards)] if len(cards) < 2 else None


def outcome(first: Card, second: Card, variant: Variant = "dragon_tiger") -> dict[str, Any]:
    """The coup's result (contracts §4.3), keyed by the variant's positions."""
    preset = PRESETS[variant]
    a, b = preset.positions
    va, vb = rank_value(first, variant), rank_value(second, variant)
    winner = a if va > vb else b if vb > va else preset.tie
    result: dict[str, Any] = {"winner": winner, a: first.code, b: second.code}
    if preset.suited_tie:
        result["suited_tie"] = va == vb and first.suit == second.suit
    return result


class DragonTiger(BaseGame):
    """The dragon tiger family. seed-001 gives only "any malfunction voids" (L1823, L1793), so the
    baccarat remedies apply by analogy (seed-000 BAC-I1/I2, BAC-I3); war of bets adds
    ``duplicate_barcode`` (L2619)."""

    name: ClassVar[str] = "dragon_tiger"
    rules_model: ClassVar[type[ShoeRules]] = DragonTigerRules
    procedure = "shoe"
    no_bets_deal = True
    window_rule: ClassVar[str] = "seed-001 L2625"  # war of bets' second betting round
    rules: DragonTigerRules

    def __init__(self, rules: ShoeRules) -> None:
        super().__init__(rules)
        first, second = self.rules.preset.positions
        # L2625: with a second betting round the second card waits for its close (a window).
        steps = (
            (Step((first,)), Step((second,), stage=1))
            if self.rules.second_bets
            else (Step(self.rules.preset.positions),)
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
