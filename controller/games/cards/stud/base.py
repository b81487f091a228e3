"""What both stud games share: :func:`showdown` and :class:`StudGame`, so each game's module is only
its deal script, its dealer minimum and its bonus hands. Pure."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    DECISION_REFUSED,
    BaseGame,
    Deal,
    GameRules,
    Slot,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.poker import HandValue, best_of, qualifies, summary
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

Result: TypeAlias = Literal["win", "lose", "tie"]
"""A box's hand against the dealer's (the hands alone, whatever the qualification)."""
BetResult: TypeAlias = Literal["win", "lose", "push"]
"""How one main bet (ante, play/call) settles; the amount is the table's paytable (PKH-17)."""
NotQualified: TypeAlias = Literal["ante_wins", "push"]
"""A non-qualifying dealer: ``ante_wins`` = ante 1:1, play/call push (TCP §13; C35's industry
rule for L527–529 and L741); ``push`` = every main bet pushes."""
BonusOnFold: TypeAlias = Literal["lost", "settled"]
"""A folded box's bonuses: ``lost`` (TCP §7, V-TCP-3) or ``settled`` (seed 001 L531)."""
Undecided: TypeAlias = Literal["play", "fold"]
"""A box with no decision when the dealer closes the decision window."""

DEALER: Final = "dealer"
_DECISION_RULE: Final = "PKH-10"
"""Players look at their cards (and so decide) only once every card is dealt (seed 000 PKH-10;
seed 001 L521, L735)."""


# --- the shared showdown ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Showdown:
    """A box against the dealer; ``result`` and ``raised`` are ``None`` for a folded box."""

    result: Result | None
    ante: BetResult
    raised: BetResult | None


def showdown(
    hand: HandValue,
    dealer: HandValue,
    *,
    dealer_qualifies: bool,
    folded: bool,
    not_qualified: NotQualified = "ante_wins",
) -> Showdown:
    """One box's main bets against the dealer.

    - Folded: the ante is lost (TCP §7; seed 001 L521, L735).
    - No qualifying dealer: ``not_qualified`` (TCP §13; seed 001 silent, C35, L527–529, L741).
    - Else the higher hand wins (TCP §10–§11, §15; L529, L745–758, L771); equal hands push (TCP
      §16)."""
    if folded:
        return Showdown(None, "lose", None)
    result: Result = "win" if hand > dealer else "lose" if hand < dealer else "tie"
    if not dealer_qualifies:
        return Showdown(result, "win" if not_qualified == "ante_wins" else "push", "push")
    bet: BetResult = "push" if result == "tie" else result
    return Showdown(result, bet, bet)


def paytable_line(hand: HandValue, royal: str) -> str:
    """A hand's paytable line: its category, or ``royal`` for the ace-high straight flush."""
    return royal if hand.is_royal else hand.category.name.lower()


def six_card_bonus(cards: Sequence[Card]) -> dict[str, Any]:
    """The best 5 of a box's cards and the dealer's shown ones, with its bonus line from three of a
    kind up: Caribbean Stud's 5+1 (L739, L760–769) and Three Card Poker's 6 Card (L550–559, C41)."""
    six = best_of(cards, 5)
    bonus = paytable_line(six, "royal_flush") if qualifies(six, "three_of_a_kind") else None
    return {**summary(six), "bonus": bonus}


def _foul(deal: Deal) -> list[str]:
    """Cards dealt twice in this round (a foul deck, PKH-01), as codes."""
    counts = Counter(card.code for cards in deal.hands.values() for card in cards)
    return sorted(code for code, n in counts.items() if n > 1)


# --- rules --------------------------------------------------------------------------------------


class StudRules(GameRules):
    """One 52-card deck, no jokers, shuffled every round (PKH-01; seed 001 gives no count, C41)."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    undecided: Undecided = "play"
    """A box with no decision: ``play`` (a fold is an act, TCP §8; TCP-B4; V-TCP-2) or ``fold`` (a
    timeout table; seed 001 has no rule, G13 varies)."""
    not_qualified: NotQualified = "ante_wins"
    """A non-qualifying dealer (:data:`NotQualified`): TCP §13 states ante 1:1, BET untouched;
    seed 001 is silent for both games (C35), so the same industry rule is the default."""
    bonus_on_fold: BonusOnFold = "settled"
    """The dealer-independent bonuses of a folded box (:data:`BonusOnFold`); each game sets its
    rule book's reading."""


# --- the shared game ----------------------------------------------------------------------------


class StudGame(BaseGame):
    """Decisions, the decision window, irregularities and the per-box outcome of both games."""

    hand_size: ClassVar[int]
    minimum: ClassVar[str]
    """The dealer's qualifying minimum (:func:`tablectl.controller.games.cards.poker.qualifies`)."""
    raise_name: ClassVar[str]
    """The outcome key of the second main bet: ``play`` or ``call``."""
    decision_actions: ClassVar[frozenset[str]] = frozenset({"fold", "play"})

    def __init__(self, rules: GameRules) -> None:
        if not isinstance(rules, StudRules):
            raise TypeError(f"{type(self).__name__} needs its own rules model")
        super().__init__(rules)
        self._stud = rules

    # -- hooks ---------------------------------------------------------------------------------

    def waiting(self, deal: Deal) -> bool:
        """The one decision window stays open until the dealer closes it (``confirm``): "When the
        time for making a decision is over, the dealer shows the rest" (L735; TCP §7–§9)."""
        return deal.windows_closed == 0

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``play`` (TCP §7 BET; L521 "Play"; L735 "Call") or ``fold`` (TCP §7; "Surrender",
        L521; "Fold", L735): one per box, once every card is dealt. Nothing more is dealt."""
        dealt = len(deal.order)
        due = self.hand_size * (len(deal.boxes) + 1)
        if dealt < due:
            return Finding(
                DECISION_REFUSED,
                _DECISION_RULE,
                f"box {decision.box} cannot decide before every card is dealt ({dealt} of {due})",
            )
        if any(d.box == decision.box for d in deal.decisions):
            return Finding(
                DECISION_REFUSED,
                "TCP §7; seed-001 L521, L735",
                f"box {decision.box} has already decided",
            )
        return []

    def decision(self, deal: Deal, box: int) -> tuple[str, bool]:
        """The box's decision and whether it was made (else :attr:`StudRules.undecided`)."""
        for d in deal.decisions:
            if d.box == box:
                return d.action, True
        return self._stud.undecided, False

    # -- outcome -------------------------------------------------------------------------------

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The settled round: the dealer's hand and qualification, and per box its hand, its
        decision, the showdown facts (:func:`showdown`) and its bonus hands."""
        foul = _foul(deal)
        if foul:
            return self._foul_outcome(deal, foul)
        dealer_cards = deal.hand(DEALER)
        dealer = self.evaluate(dealer_cards)
        dealer_qualifies = qualifies(dealer, self.minimum)
        boxes: dict[str, Any] = {}
        for box in deal.boxes:
            position = box_name(box)
            cards = deal.hand(position)
            hand = self.evaluate(cards)
            action, decided = self.decision(deal, box)
            folded = action == "fold"
            settled = showdown(
                hand,
                dealer,
                dealer_qualifies=dealer_qualifies,
                folded=folded,
                not_qualified=self._stud.not_qualified,
            )
            bonuses_lost = folded and self._stud.bonus_on_fold == "lost"
            boxes[position] = {
                "cards": hand_codes(cards),
                **summary(hand),
                "decision": action,
                "decided": decided,
                "result": settled.result,
                "ante": settled.ante,
                self.raise_name: settled.raised,
                **self.box_facts(cards, hand, dealer_cards, folded, bonuses_lost),
            }
        return {
            DEALER: {
                "cards": hand_codes(dealer_cards),
                **summary(dealer),
                "qualifies": dealer_qualifies,
                **self.dealer_facts(dealer_cards),
            },
            BOXES: boxes,
            **self.round_facts(),
        }

    def _foul_outcome(self, deal: Deal, foul: list[str]) -> dict[str, Any]:
        """A round with a card dealt twice that a supervisor let go on cannot be ranked (PKH-01)."""
        return {
            DEALER: {"cards": hand_codes(deal.hand(DEALER))},
            BOXES: {box_name(b): {"cards": hand_codes(deal.hand(box_name(b)))} for b in deal.boxes},
            "foul_deck": foul,
            **self.round_facts(),
        }

    # -- per game ------------------------------------------------------------------------------

    def evaluate(self, cards: Sequence[Card]) -> HandValue:
        raise NotImplementedError

    def box_facts(
        self,
        cards: Sequence[Card],
        hand: HandValue,
        dealer_cards: Sequence[Card],
        folded: bool,
        bonuses_lost: bool,
    ) -> dict[str, Any]:
        raise NotImplementedError

    def dealer_facts(self, dealer_cards: Sequence[Card]) -> dict[str, Any]:
        del dealer_cards
        return {}

    def round_facts(self) -> dict[str, Any]:
        return {}
