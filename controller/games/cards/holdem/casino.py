"""Casino Hold'em (seed-001 §3.14), a Hold'em game. Pure."""

from __future__ import annotations

from typing import Any, ClassVar, Literal, cast

import pydantic

from tablectl.controller.games.cards.deal import Deal, DealScript, GameRules, Step
from tablectl.controller.games.cards.holdem.base import HoldemGame, HoldemRules
from tablectl.controller.games.cards.holdem.settle import (
    PUSH_IF_TIE,
    compare_hands,
    hand_facts,
    paytable_hand,
)
from tablectl.controller.games.cards.poker import HandValue, evaluate5, qualifies


class CasinoHoldemRules(HoldemRules):
    """One player hand. ``unqualified_dealer``: the Ante when the dealer has less than a pair of
    fours is not stated (L587–589, C35 [GAP]): ``"ante_pays"`` (industry, L589–615) or
    ``"ante_push"`` (as Texas Hold'em's "draw", L647)."""

    boxes: int = pydantic.Field(default=1, ge=1, le=1)
    unqualified_dealer: Literal["ante_pays", "ante_push"] = "ante_pays"


class CasinoHoldem(HoldemGame):
    """Casino Hold'em (seed-001 §3.14, L563–617).

    Deal L569–573; one window, Call or Fold (L571); a fold does not stop the deal (the Bonus and
    other seats play on); a technical bug voids (L617). Facts: best 5 of 7 (L579), a pair of
    fours qualifies (L587); the Ante pays by its paytable (L589–615), a tie is a push [GAP], an
    unqualified dealer per C35 [GAP]; the Bonus on the first five cards from a pair of aces
    (L571, L579, L589–615)."""

    name: ClassVar[str] = "casino_holdem"
    script = DealScript(
        (
            Step(("player",), count=2, face="up"),  # L571
            Step(("dealer",), count=2, face="down"),  # L571
            Step(("flop",), count=3, face="up", rotate=False),  # L571
            Step(("turn", "river"), count=1, face="up", stage=1),  # L573
        ),
        reshuffle="every_round",  # L569
    )
    rules_model: ClassVar[type[GameRules]] = CasinoHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("flop",)
    decision_rule: ClassVar[str] = "seed-001 L571"
    deal_error_rule: ClassVar[str] = "seed-001 L617"

    @property
    def casino_rules(self) -> CasinoHoldemRules:
        return cast(CasinoHoldemRules, self.rules)

    def qualifier(self) -> str:
        """L587: "The dealer should have at least a pair of 4's"."""
        return "pair_of_fours"

    def bets(
        self,
        deal: Deal,
        position: str,
        *,
        player: HandValue,
        dealer: HandValue,
        dealer_qualifies: bool,
        folded: bool,
    ) -> dict[str, Any]:
        versus = compare_hands(player, dealer)
        first_five = [*deal.hand(position), *deal.hand("flop")]
        bonus = evaluate5(first_five)
        bonus_pays = qualifies(bonus, "pair_of_aces")
        facts: dict[str, Any] = {"versus": versus}
        if folded:
            ante, call = "lose", "lose"  # L571 "Fold (lose the Ante)"
        elif not dealer_qualifies:
            pays = self.casino_rules.unqualified_dealer == "ante_pays"
            ante, call = ("paytable" if pays else "push"), "push"
        elif versus == "win":
            ante, call = "paytable", "win"  # L589–615
        else:
            ante = call = PUSH_IF_TIE[versus]
        facts["ante"] = ante
        facts["call"] = call
        facts["bonus"] = {
            **hand_facts(first_five, bonus),
            "qualifies": bonus_pays,
            "result": paytable_hand(bonus) if bonus_pays else "lose",
        }
        return facts
