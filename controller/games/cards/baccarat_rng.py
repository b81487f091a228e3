"""Golden Wealth and Lightning Baccarat: baccarat with a studio RNG's multiplier cards.

Seed-001 §3.2 (L4005–4101) and §3.3 (L4103–4191). The deal is
:class:`~tablectl.controller.games.cards.baccarat.Baccarat`'s (§3.1; C12: Lightning inherits its
incomplete tableau); they add an RNG round:

- Five cards from a virtual deck get multipliers (Gold 2x/3x/5x/8x, L4021; Lightning
  2x/3x/4x/5x/8x, L4119), before the deal (L4025, L4123): one ``rng_draw``
  (``{"value": "KH", "multiplier": 5}`` each) between ``bets_closed`` and the first card; other
  timings are refused (seed-001 §2.2 (d); :mod:`tablectl.controller.games.rng`), none is
  ``rng_missing`` (``on_rng_missing``).
- A winning bet's hand holding drawn cards multiplies their multipliers (L4021–4023,
  L4119–4121).

Facts, not money: drawn cards, dealt cards matching one (rank and suit, [DERIVED]), and the product
per main bet (:func:`overlay`). Where the book is silent:

- **Tie** [GAP]: a winning Tie takes both hands' cards (the industry reading).
- **A drawn card dealt twice** [GAP, digest §3.2]: ``repeats = "each"`` counts it per card dealt
  (industry), ``"once"`` per drawn card.

Pure: no I/O.
"""

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
    """The ``[rules]`` both games share; defaults are seed-001's reading.

    Seed-001 has no burn rule (§3.0) and no cut-card rule: no burn, and 7 cards behind the cut
    card (a coup takes at most 6: seed-002-004 BAC 1.3.1's studio reading). §3.2 and §3.3 have no
    malfunction clause; their deal is §3.1's, whose "Any malfunction cancels the round … The bets
    are refunded" (L1587) is taken for them: ``on_fault = "void"``.
    """

    burn: bool = False
    cut_card_min_behind: int = pydantic.Field(default=7, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"

    rng_cards: int = pydantic.Field(default=5, ge=1, le=52)
    """Cards the RNG selects a round: "five random cards" (L4021, L4119)."""
    multipliers: list[int] = pydantic.Field(default_factory=list)
    """The multipliers a drawn card may carry (the game's own by default)."""
    on_rng_missing: RngMissing = "void"
    """The first card with no draw: void (G1 L59 "technical shortcomings": odds of 1, the bets
    back; as Lightning Dice), or ``"hold"`` for a supervisor (``confirm``: settled without the
    overlay)."""
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
    """The overlay's part of the result (``key``: ``"gold"`` or ``"lightning"``).

    ``{key: [{"card", "multiplier"}…]}`` the drawn cards (``[]`` when a supervisor settled a round
    whose draw never came, ``rng_missing`` then ``true``); ``{key}_cards``: the dealt cards of
    each hand that are drawn cards; ``multipliers``: for each main bet, the product of their
    multipliers (1: none; the Tie bet takes both hands'); ``multiplier``: the winning bet's.
    """
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

    def __init__(self, rules: ShoeRules) -> None:
        assert isinstance(rules, OverlayRules)
        super().__init__(rules)
        self.rules = rules

    @property
    def on_rng_missing(self) -> RngMissing:
        return self.rules.on_rng_missing

    def check_rng(self, picks: Sequence[RngPick]) -> RngOverlay | Finding:
        """Five distinct cards of a 52-card deck, each with one of the game's multipliers
        (L4021, L4119); anything else is refused (``rng_value_out_of_range``,
        ``rng_pick_invalid``)."""
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
