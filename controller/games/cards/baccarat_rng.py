"""Golden Wealth and Lightning Baccarat (seed-001 §3.2 L4005–4101, §3.3 L4103–4191): baccarat's deal
(§3.1; C12) with a studio RNG's multiplier cards.

One ``rng_draw`` of five cards (L4021, L4119) between ``bets_closed`` and the first card (L4025,
L4123; §2.2 (d)); a winning hand's drawn cards multiply (L4021–4023, L4119–4121). Facts, not
money; a match is rank and suit [DERIVED]. Gaps: a winning Tie takes both hands' cards; a drawn
card dealt twice counts per ``repeats`` (digest §3.2)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from math import prod
from typing import Any, ClassVar, Final, Literal, TypeGuard

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import RngPick
from tablectl.controller.games import rng
from tablectl.controller.games.cards.baccarat import Baccarat, BaccaratRules, outcome
from tablectl.controller.games.cards.deal import Deal, RngMissing, RngOverlay
from tablectl.controller.games.cards.shoe import COMPOSITION_RULE, LastCoup, OnFault, ShoeRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card, parse_card

Repeats = Literal["each", "once"]

_MAIN_BETS: Final = ("player", "banker", "tie")


def is_deck_card(value: object) -> TypeGuard[str]:
    """Whether ``value`` is a card of a 52-card deck in canonical notation (``"KH"``): what a
    virtual deck of 52 cards can give (L4021, L4119); no joker, no other spelling."""
    if not isinstance(value, str):
        return False
    try:
        card = parse_card(value)
    except ValueError:
        return False
    return not card.is_joker and card.code == value


class OverlayRules(BaccaratRules):
    """Defaults are seed-001's: no burn (§3.0), 7 cards behind the cut card (seed-002-004 BAC
    1.3.1), and §3.1's "Any malfunction cancels the round" (L1587) taken for both: ``on_fault =
    "void"``."""

    burn: bool = False
    cut_card_min_behind: int = pydantic.Field(default=7, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"

    rng_cards: int = pydantic.Field(default=5, ge=1, le=52)
    """Cards the RNG selects a round: "five random cards" (L4021, L4119)."""
    multipliers: list[int] = pydantic.Field(default_factory=list)
    """The multipliers a drawn card may carry (the game's own by default)."""
    on_rng_missing: RngMissing = "void"
    """No draw by the first card: void (G1 L59, as Lightning Dice), or hold for a supervisor."""
    repeats: Repeats = "each"
    """A drawn card dealt twice in a hand: multiplies each time, or once (see the module)."""

    @pydantic.field_validator("multipliers")
    @classmethod
    def _distinct(cls, value: list[int]) -> list[int]:
        if len(set(value)) != len(value) or any(m < 2 for m in value):
            raise RuleError(f"multipliers must be distinct and at least 2, got {value}")
        return value


class GoldenWealthRules(OverlayRules):
    """Golden Wealth Baccarat (§3.2): Gold multipliers "2x, 3x, 5x or 8x" (L4021)."""

    multipliers: list[int] = pydantic.Field(default_factory=lambda: [2, 3, 5, 8])


class LightningRules(OverlayRules):
    """Lightning Baccarat (§3.3): Lightning multipliers "2x, 3x, 4x, 5x or 8x" (L4119)."""

    multipliers: list[int] = pydantic.Field(default_factory=lambda: [2, 3, 4, 5, 8])


def _lit(cards: Iterable[Card], drawn: dict[str, int], repeats: Repeats) -> list[str]:
    """The dealt cards that are drawn cards, in deal order (``once``: each drawn card once)."""
    lit = [c.code for c in cards if c.code in drawn]
    return list(dict.fromkeys(lit)) if repeats == "once" else lit


def overlay(
    player: Sequence[Card],
    banker: Sequence[Card],
    picks: RngOverlay | None,
    *,
    key: str,
    repeats: Repeats = "each",
) -> dict[str, Any]:
    """The overlay's part of the result (``key``: ``"gold"`` or ``"lightning"``); ``multipliers``
    per main bet, 1 when none."""
    drawn = dict(picks or ())
    hands = {"player": _lit(player, drawn, repeats), "banker": _lit(banker, drawn, repeats)}
    both = _lit([*player, *banker], drawn, repeats)
    multipliers = {hand: prod(drawn[c] for c in lit) for hand, lit in hands.items()}
    multipliers["tie"] = prod(drawn[c] for c in both)
    return {
        key: [{"card": c, "multiplier": m} for c, m in (picks or ())],
        f"{key}_cards": hands,
        "multipliers": {bet: multipliers[bet] for bet in _MAIN_BETS},
        "rng_missing": picks is None,
    }


class _OverlayBaccarat(Baccarat):
    """Baccarat with an RNG's multiplier cards drawn between the close of bets and the deal."""

    rules_model: ClassVar[type[ShoeRules]] = OverlayRules
    composition_rule: ClassVar[str] = COMPOSITION_RULE
    rng_draw: ClassVar[bool] = True
    key: ClassVar[str]
    """The overlay's name in the result: ``"gold"``, ``"lightning"``."""
    rules: OverlayRules

    @property
    def on_rng_missing(self) -> RngMissing:
        return self.rules.on_rng_missing

    def check_rng(self, picks: Sequence[RngPick]) -> RngOverlay | Finding:
        """Five distinct cards, each with one of the game's multipliers (L4021, L4119)."""
        count = self.rules.rng_cards
        return rng.check_picks(
            picks,
            valid=is_deck_card,
            span="cards of a 52-card deck (e.g. KH)",
            rule=self.rng_rule,
            multipliers=self.rules.multipliers,
            count=(count, count),
        )

    def outcome(self, deal: Deal) -> dict[str, Any]:
        player, banker = deal.hand("player"), deal.hand("banker")
        result = outcome(player, banker, commission=self.rules.commission)
        result |= overlay(player, banker, deal.rng, key=self.key, repeats=self.rules.repeats)
        result["multiplier"] = result["multipliers"][result["winner"]]
        return result


class GoldenWealthBaccarat(_OverlayBaccarat):
    """Golden Wealth Baccarat (seed-001 §3.2, L4005–4101)."""

    name: ClassVar[str] = "golden_wealth_baccarat"
    rules_model: ClassVar[type[ShoeRules]] = GoldenWealthRules
    rng_rule: ClassVar[str] = "seed-001 L4019-4025, §2.2 (d)"
    key: ClassVar[str] = "gold"


class LightningBaccarat(_OverlayBaccarat):
    """Lightning Baccarat (seed-001 §3.3, L4103–4191)."""

    name: ClassVar[str] = "lightning_baccarat"
    rules_model: ClassVar[type[ShoeRules]] = LightningRules
    rng_rule: ClassVar[str] = "seed-001 L4117-4123, §2.2 (d)"
    key: ClassVar[str] = "lightning"
