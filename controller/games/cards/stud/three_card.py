"""Three Card Poker and Teen Patti (seed 000 §7 TCP; seed 001 §3.13 L517–561): three cards each,
face down, in rotation (PKH-09; TCP §6; L521); queen high qualifies (TCP §10; L527). Forms:
:data:`Form`. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import DealError
from tablectl.controller.games.cards.deal import (
    BOXES,
    MISDEAL,
    REFUND,
    RESHUFFLE_BETS_STAND,
    Deal,
    DealScript,
    GameRules,
    Remedy,
    Step,
)
from tablectl.controller.games.cards.poker import (
    HandValue,
    ThreeCardCategory,
    ThreeCardRanking,
    evaluate3,
)
from tablectl.controller.games.cards.shoe import COMPOSITION_RULE
from tablectl.controller.games.cards.stud.base import (
    DEALER,
    BonusOnFold,
    StudGame,
    StudRules,
    paytable_line,
    six_card_bonus,
)
from tablectl.drivers.cards import Card

Form: TypeAlias = Literal["table", "live"]
"""Three Card Poker's rule book: ``table`` = seed 000 §7 (multi-box, PKH-21), ``live`` = seed 001
§3.13 (one hand, L561)."""


class ThreeCardPokerRules(StudRules):
    """Defaults follow ``form``, itself ``live`` for Teen Patti (only seed 001 has it, L517–519):
    ``boxes`` 6 (TCP-B1) or 1 (L521); ``bonus_on_fold`` ``lost`` (TCP §7, V-TCP-3) or ``settled``
    (L531)."""

    ranking: ThreeCardRanking = "three_card_poker"
    form: Form = "table"
    boxes: int = pydantic.Field(default=6, ge=1, le=9)
    bonus_on_fold: BonusOnFold = "lost"
    ante_bonus: Literal["straight_flush", "flush"] = "straight_flush"
    """TCP §14 lists straight, three of a kind and "a flush" (seed 000 §14 item 17): the
    standard reading (and seed 001's Ante Bonus table, L533–538) is straight flush; ``flush``
    takes the text as written and adds the flush (a straight flush still pays)."""

    @pydantic.model_validator(mode="before")
    @classmethod
    def _form_defaults(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        filled = dict(data)
        if "form" not in filled:
            filled["form"] = "live" if filled.get("ranking") == "teen_patti" else "table"
        if filled["form"] == "live":
            filled.setdefault("boxes", 1)
            filled.setdefault("bonus_on_fold", "settled")
        return filled


_ANTE_BONUS: Final = frozenset(
    {
        ThreeCardCategory.STRAIGHT,
        ThreeCardCategory.THREE_OF_A_KIND,
        ThreeCardCategory.STRAIGHT_FLUSH,
    }
)


class ThreeCardPoker(StudGame):
    """Three Card Poker and Teen Patti: ``pair_plus`` (TCP §12, L531, L540–548), ``ante_bonus`` (TCP
    §14, L533–538; needs the play bet) and ``six_card`` (L550–559, C41)."""

    name = "three_card_poker"
    rules_model = ThreeCardPokerRules
    # PKH-09, TCP §6, L521: three cards each, face down, to the boxes and the dealer in rotation.
    script = DealScript((Step(to=(BOXES, DEALER), count=3, face="down"),), "every_round")
    hand_size = 3
    minimum = "queen_high"  # TCP §10, §13; L527 "at least a Queen"
    composition_rule = "PKH-01"  # seed-000 §5: a duplicate means the deck is foul
    raise_name = "play"

    def __new__(cls, rules: GameRules) -> ThreeCardPoker:
        """``ranking = "teen_patti"`` (the catalog's ``teen_patti`` preset) makes a
        :class:`TeenPatti`: the same rules (L519, C41), published under its own game key."""
        if cls is ThreeCardPoker and getattr(rules, "ranking", None) == "teen_patti":
            return super().__new__(TeenPatti)
        return super().__new__(cls)

    def __getnewargs__(self) -> tuple[GameRules]:
        """Pickling (recovery checkpoints) calls ``__new__`` with the rules, as built."""
        return (self._tcp,)

    def __init__(self, rules: GameRules) -> None:
        if not isinstance(rules, ThreeCardPokerRules):
            raise TypeError("ThreeCardPoker needs ThreeCardPokerRules")
        super().__init__(rules)
        self._tcp = rules

    def evaluate(self, cards: Sequence[Card]) -> HandValue:
        return evaluate3(cards, ranking=self._tcp.ranking)

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """Table form: PKH-21, reshuffle with bets standing (V-TCP-1). Live form: L561, bets
        back."""
        del deal, error
        if self._tcp.form == "table":
            return Remedy("void", "PKH-21", MISDEAL, RESHUFFLE_BETS_STAND)
        return Remedy("void", "seed-001 L561", MISDEAL, REFUND)

    def box_facts(
        self,
        cards: Sequence[Card],
        hand: HandValue,
        dealer_cards: Sequence[Card],
        folded: bool,
        bonuses_lost: bool,
    ) -> dict[str, Any]:
        ante_bonus_hands = set(_ANTE_BONUS)
        if self._tcp.ante_bonus == "flush":
            ante_bonus_hands.add(ThreeCardCategory.FLUSH)  # TCP §14 as written (§14 item 17)
        pair_plus = None
        six_card: dict[str, Any] | None = None
        if not bonuses_lost:
            if hand.category >= ThreeCardCategory.PAIR:
                pair_plus = paytable_line(hand, "mini_royal")
            six_card = six_card_bonus([*cards, *dealer_cards])
        ante_bonus = None
        if not folded and hand.category in ante_bonus_hands:
            ante_bonus = hand.category.name.lower()
        return {"pair_plus": pair_plus, "ante_bonus": ante_bonus, "six_card": six_card}

    def round_facts(self) -> dict[str, Any]:
        return {"ranking": self._tcp.ranking, "form": self._tcp.form}


class TeenPatti(ThreeCardPoker):
    """Teen Patti: Three Card Poker's rules under the ``teen_patti`` game key (seed 001 L519:
    "Three Card Poker / Teen Patti … hereinafter all together 'Game'"; C41: no differences).
    Built by :class:`ThreeCardPoker` when ``ranking = "teen_patti"``."""

    name = "teen_patti"
    composition_rule = COMPOSITION_RULE  # seed-001 §3.0 (1): Teen Patti is seed-001's game
