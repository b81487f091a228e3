"""The "card poker" family (seed-001 §3.9–§3.12) as one class, :class:`CardPoker`, its variant set
by the preset (readings: the package docstring). Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.card_poker.dealer import (
    DEALER,
    FOLD,
    TIE,
    DealerPoker,
    box_of,
    combination_class,
    refuse,
    settle,
)
from tablectl.controller.games.cards.deal import (
    MISDEAL,
    REFUND,
    REFUND_PLUS_HALF_ANTE,
    Deal,
    GameRules,
    Remedy,
    Slot,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.poker import (
    Minimum,
    qualifies,
    summary,
)
from tablectl.controller.games.findings import Finding

Variant: TypeAlias = Literal[
    "card_poker", "card_poker_exchange", "six_card_poker", "poker_with_joker"
]
Irregularities: TypeAlias = Literal["l335", "refund"]
"""``l335``: the card-poker remedies of seed-001 L335/L391; ``refund``: any deal error voids the
round and returns the bets (seed-001 G3 L79, the fallback where a game states none, §2.2)."""


class CardPokerRules(GameRules):
    """Defaults are seed-001's reading: one deck (L291, L455); a joker only in Poker with Joker
    (§3.0 validator (4)); ``boxes`` (L333). ``irregularities``: ``l335`` (L335, L391; six-card by
    C21) or ``refund`` for Poker with Joker (§3.12 [GAP]: G3, L79). ``bonus_minimum`` (L397–403,
    L513–515; §3.9, §3.11 name none, L343–347, L447–451 [GAP])."""

    variant: Variant = "card_poker"
    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=1)
    irregularities: Irregularities = "l335"
    bonus_minimum: Minimum = "flush"

    @pydantic.model_validator(mode="before")
    @classmethod
    def _variant_defaults(cls, data: Any) -> Any:
        """Keys left out → the variant's own (the joker deck, its irregularity fallback)."""
        if isinstance(data, Mapping):
            joker = data.get("variant") == "poker_with_joker"
            defaults: dict[str, Any] = {
                "jokers_per_deck": 1 if joker else 0,
                "irregularities": "refund" if joker else "l335",
            }
            return {**defaults, **data}
        return data

    @pydantic.model_validator(mode="after")
    def _joker_deck(self) -> CardPokerRules:
        joker = self.variant == "poker_with_joker"
        if self.jokers_per_deck != (1 if joker else 0):
            raise RuleError(
                "jokers_per_deck must be 1 for poker_with_joker (53-card deck, seed-001 L455) "
                "and 0 for the other card poker games (seed-001 §3.0 validator (4))"
            )
        return self


_FAMILY_RULE: Final[dict[str, str]] = {
    "card_poker": "seed-001 L312–316",
    "card_poker_exchange": "seed-001 L366–372",
    "six_card_poker": "seed-001 L420–424",
    "poker_with_joker": "seed-001 L477–483",
}
_IRREGULARITY_RULE: Final[dict[str, str]] = {
    "card_poker": "seed-001 L335",
    "card_poker_exchange": "seed-001 L391",
    "six_card_poker": "seed-001 L335 (C21)",
    "poker_with_joker": "seed-001 L335 (§3.12 GAP)",
}


class CardPoker(DealerPoker):
    """Card poker, with exchange, six-card poker and Poker with Joker (seed-001 §3.9–§3.12); the
    result's shape is in docs/games/card_poker.md. ``dealer_no_game`` pays per L318–320, ``void``
    per L335; ``paytable_class`` per §3.9–§3.12, L430–439; the Bonus on the five first dealt,
    lost on an exchange or sixth card (L397–403, L513–515, L447–451)."""

    name: ClassVar[str] = "card_poker"
    rules_model: ClassVar[type[GameRules]] = CardPokerRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({FOLD, "play", "exchange", "sixth_card"})
    rules: CardPokerRules

    def __init__(self, rules: GameRules) -> None:
        super().__init__(rules)
        self.variant: Variant = self.rules.variant
        self.decision_rule = _FAMILY_RULE[self.variant]
        self.jokers = "wild" if self.variant == "poker_with_joker" else "forbid"

    @property
    def minimum(self) -> Minimum:
        """The dealer's qualifying hand: ace-king (L318–320, L374 C20, L426), a pair (L485)."""
        return "pair" if self.variant == "poker_with_joker" else "ace_king"

    def waiting(self, deal: Deal) -> bool:
        """The decision window is open until the dealer closes it (one ``confirm``), unless no
        box is left to decide."""
        return deal.windows_closed < 1 and bool(self.live_boxes(deal))

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        refused = self.check_box(deal, decision)
        if refused is not None:
            return refused
        rule = self.decision_rule
        position = box_name(decision.box)
        if deal.windows_closed >= 1:
            return refuse(rule, "the decision window is closed")
        if deal.decided(decision.box, "play"):
            return refuse(rule, f"{position} has already raised")
        action = decision.action
        if action in (FOLD, "play"):
            return []
        if action == "exchange":
            if self.variant not in ("card_poker_exchange", "poker_with_joker"):
                return refuse(rule, f"{self.variant} has no card exchange")
            if deal.decided(decision.box, "exchange"):
                return refuse(rule, f"{position} has already exchanged a card (one card, L366)")
            given = self.cards_given_back(deal, decision, range(1, 2))
            if isinstance(given, Finding):
                return given
            self.give_back(deal, decision.box, given)
            # "The dealer immediately … gives the player a new card instead" (L366–372).
            return [Slot(position, "down", deal.windows_closed)]
        # sixth_card
        if self.variant != "six_card_poker":
            return refuse(rule, f"{self.variant} has no sixth card")
        if deal.decided(decision.box, "sixth_card"):
            return refuse(rule, f"{position} already has its sixth card")
        # The player "evaluates the best 5-card combination made out of his 6 cards and makes
        # decision N1 or N2" (L422–424): the card comes at once.
        return [Slot(position, "down", deal.windows_closed)]

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """seed-001 L335 (L391; six-card poker by C21): a box's wrong count puts that box out, a
        dealer with four cards takes one more, any other misdeal annuls; bets back plus half the
        Ante. Poker with Joker (§3.12 [GAP]) and ``"refund"``: void, bets returned (G3, L79). The
        dealer's "one more" is his scripted fifth, already due; a report that disagrees with the
        deal as read is "any other"."""
        if self.rules.irregularities == "refund":
            return Remedy("void", "seed-001 L79", MISDEAL, REFUND)
        rule = _IRREGULARITY_RULE[self.variant]
        box = box_of(error.position or "")
        if error.kind == "wrong_count" and box is not None and box in deal.boxes:
            return Remedy("void_position", rule, remedy=REFUND_PLUS_HALF_ANTE)
        if (
            error.kind == "wrong_count"
            and error.position == DEALER
            and error.cards == 4
            and len(deal.hand(DEALER)) == 4
        ):
            return Remedy("deal_more", rule)
        return Remedy("void", rule, MISDEAL, REFUND_PLUS_HALF_ANTE)

    def _classes(self) -> tuple[str | None, str]:
        if self.variant == "poker_with_joker":
            return None, "one_pair"  # L461–473: the table starts at One Pair
        return "ak_or_pair", "ak_or_pair"  # "One Pair or lower (Ace and King)", L299–300, C32

    def outcome(self, deal: Deal) -> dict[str, Any]:
        dealer_cards = deal.hand(DEALER)
        dealer = self.value(dealer_cards)
        dealer_qualifies = qualifies(dealer, self.minimum)
        ace_king, pair = self._classes()
        boxes: dict[str, Any] = {}
        for box in deal.boxes:
            position = box_name(box)
            if position in deal.void_positions:
                boxes[position] = self.void_box(deal, box)
                continue
            hand = self.value(deal.hand(position))
            first_five = self.dealt(deal, position)[:5]
            bonus = self.value(first_five)
            changed = deal.decided(box, "exchange") or deal.decided(box, "sixth_card")
            result = (
                FOLD
                if self.folded(deal, box)
                else settle(hand, dealer, dealer_qualifies=dealer_qualifies, tie=TIE)
            )
            boxes[position] = {
                **self.box_base(deal, box),
                **summary(hand),
                "result": result,
                "paytable_class": combination_class(hand, ace_king=ace_king, pair=pair),
                "bonus": {
                    "cards": hand_codes(first_five),
                    **summary(bonus),
                    "eligible": not changed and qualifies(bonus, self.rules.bonus_minimum),
                },
            }
        return {
            "variant": self.variant,
            "dealer": {
                "cards": hand_codes(dealer_cards),
                "up_card": dealer_cards[4].code,
                **summary(dealer),
                "qualifies": dealer_qualifies,
            },
            "dealer_no_game": not dealer_qualifies,
            "boxes": boxes,
        }
