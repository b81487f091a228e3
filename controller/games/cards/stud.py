"""Three-card and five-card stud against the dealer: Three Card Poker / Teen Patti, Caribbean Stud.

Issue 8, Deliver 2: two games of :mod:`tablectl.controller.games.cards.deal`, run by
:class:`tablectl.controller.engines.cards.CardEngine`. Rule ids point into
``../shared/rules/``: seed 000 (``seed-000-bombay-player-guide.md``: PKH-, TCP-, §14 ambiguities)
and seed 001 (``seed-001-live-casino-regulations.md``: ``L…`` source lines, ``C…`` §12
contradictions). ``docs/games/stud.md`` has the same readings in table form.

Both games are "stud" games: every card is dealt before the only decision (play or fold), nothing
is drawn, and each box is settled against the dealer's hand once he qualifies. That shared part is
one helper, :func:`showdown`, and one base class (decisions, the decision window, the per-box
outcome); each game adds its deal script, its dealer minimum and its bonus hands.

- **Three Card Poker** (``three_card_poker``, and ``teen_patti``, which seed 001 runs under the
  same rules: "hereinafter all together 'Game' or 'Three Card Poker'", L519, C41). Two forms:
  ``form = "table"`` (seed 000 §7: up to six boxes, TCP-B1; PKH-21 misdeal remedy) and
  ``form = "live"`` (seed 001 §3.13: one hand, L521; the L561 "technical bug" refund).
  Three cards to each playing box and to the dealer, face down, in rotation (PKH-09; TCP §6;
  L521). The dealer qualifies with queen high (TCP §10; L527).
- **Caribbean Stud** (``caribbean_stud``, seed 001 §3.17, L714–773). Five cards to each box,
  face up, and five to the dealer, face down except one (L718); the dealer qualifies with ace-king
  (L741).

Boxes are ``box1``…``boxN`` in both forms (the live single hand is ``box1`` of a one-box table),
so one outcome schema serves every table size: ``{"dealer": {...}, "boxes": {"box1": {...}}}``.

Pure: no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    DECISION_REFUSED,
    MISDEAL,
    REFUND,
    RESHUFFLE_BETS_STAND,
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Remedy,
    Slot,
    Step,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.poker import (
    HandCategory,
    HandValue,
    ThreeCardCategory,
    ThreeCardRanking,
    best_of,
    evaluate3,
    evaluate5,
    qualifies,
    summary,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

__all__ = [
    "MISDEAL",
    "REFUND",
    "RESHUFFLE_BETS_STAND",
    "BetResult",
    "BonusOnFold",
    "CaribbeanStud",
    "CaribbeanStudRules",
    "Form",
    "NotQualified",
    "Result",
    "Showdown",
    "StudRules",
    "TeenPatti",
    "ThreeCardPoker",
    "ThreeCardPokerRules",
    "Undecided",
    "showdown",
]

Form: TypeAlias = Literal["table", "live"]
"""Three Card Poker's rule book: ``table`` = seed 000 §7 (multi-box, PKH-21), ``live`` = seed 001
§3.13 (one hand, L561)."""
Result: TypeAlias = Literal["win", "lose", "tie"]
"""A box's hand against the dealer's (the hands alone, whatever the qualification)."""
BetResult: TypeAlias = Literal["win", "lose", "push"]
"""How one main bet (ante, play/call) settles; the amount is the table's paytable (PKH-17)."""
NotQualified: TypeAlias = Literal["ante_wins", "push"]
"""A non-qualifying dealer: ``ante_wins`` = ante 1:1, play/call push (TCP §13; C35's industry
rule for L527–529 and L741); ``push`` = every main bet pushes."""
BonusOnFold: TypeAlias = Literal["lost", "settled"]
"""The dealer-independent bonuses of a folded box: ``lost`` (TCP §7, V-TCP-3: no bonus
evaluation) or ``settled`` (seed 001 L531: "Plus a pair" wins "even if he chooses the
Surrender")."""
Undecided: TypeAlias = Literal["play", "fold"]
"""A box with no decision when the dealer closes the decision window."""

_DEALER: Final = "dealer"
_DECISION_RULE: Final = "PKH-10"
"""Players look at their cards (and so decide) only once every card is dealt (seed 000 PKH-10;
seed 001 L521, L735)."""


# --- the shared showdown ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Showdown:
    """A box against the dealer: the hand comparison and how the two main bets settle.

    ``result`` is ``None`` for a folded box (its hand is not compared); ``raised`` is the play
    (Three Card Poker) or call (Caribbean Stud) bet, ``None`` when the box folded (never made).
    """

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
    """Settle one box's main bets against the dealer (both games).

    - Folded: the ante is lost, no raise was made (TCP §7; seed 001 L521 "Surrender", L735 Fold
      loses the Ante).
    - The dealer does not qualify: ``not_qualified`` (TCP §13: ante 1:1, BET "remains untouched";
      seed 001 states nothing, C35, for Three Card Poker L527–529 and Caribbean Stud L741).
    - Otherwise the higher hand wins both bets (TCP §10–§11; L529 "'Ante' and 'Play' will be paid
      1:1"; L745–758, L771); the same combination is decided by the higher card, then the next
      (TCP §15: :class:`HandValue` ordering); fully equal hands push (TCP §16).
    """
    if folded:
        return Showdown(None, "lose", None)
    result: Result = "win" if hand > dealer else "lose" if hand < dealer else "tie"
    if not dealer_qualifies:
        return Showdown(result, "win" if not_qualified == "ante_wins" else "push", "push")
    bet: BetResult = "push" if result == "tie" else result
    return Showdown(result, bet, bet)


def _line(hand: HandValue, royal: str) -> str:
    """A hand's paytable line: its category, or ``royal`` for the ace-high straight flush."""
    return royal if hand.is_royal else hand.category.name.lower()


def _foul(deal: Deal) -> list[str]:
    """Cards dealt twice in this round (a foul deck, PKH-01), as codes."""
    counts = Counter(card.code for cards in deal.hands.values() for card in cards)
    return sorted(code for code, n in counts.items() if n > 1)


# --- rules --------------------------------------------------------------------------------------


class StudRules(GameRules):
    """``[rules]`` keys both stud games share.

    One 52-card deck (PKH-01; seed 001 gives no deck count for Three Card Poker, C41, and a
    single-deck game ranks no duplicate card), no jokers, shuffled for every round.
    """

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    undecided: Undecided = "play"
    """A box with no decision when the window closes. ``play``: a fold is an act the dealer
    records (TCP §8 "telling the dealer or by hand signal"); blind hands have their BET placed
    before the deal (TCP-B4) and a Pair-Plus-only box "makes no decision" (V-TCP-2). ``fold``: a
    live table whose timeout folds (seed 001 states no timeout rule; G13 varies by game)."""
    not_qualified: NotQualified = "ante_wins"
    """A non-qualifying dealer (:data:`NotQualified`): TCP §13 states ante 1:1, BET untouched;
    seed 001 is silent for both games (C35), so the same industry rule is the default."""
    bonus_on_fold: BonusOnFold = "settled"
    """The dealer-independent bonuses of a folded box (:data:`BonusOnFold`); each game sets its
    rule book's reading."""


class ThreeCardPokerRules(StudRules):
    """Three Card Poker / Teen Patti ``[rules]``; defaults follow ``form`` (see :data:`Form`).

    ``form`` left out: ``live`` when ``ranking = "teen_patti"`` (only seed 001 has Teen Patti,
    L517–519), else ``table``. ``boxes`` left out: 6 at a table (TCP-B1), 1 live (L521).
    ``bonus_on_fold`` left out: ``lost`` at a table (TCP §7, V-TCP-3), ``settled`` live (L531).
    """

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


class CaribbeanStudRules(StudRules):
    """Caribbean Stud ``[rules]``: one box by default (the online single hand, L718 "each of those
    sitting": more are configurable); the 5+1 bonus of a folded box is settled, as seed 001's
    other side bets (L531; Casino Hold'em "does not affect the 'Bonus'", §3.14) — a GAP."""

    boxes: int = pydantic.Field(default=1, ge=1, le=9)


# --- the shared game ----------------------------------------------------------------------------


class _StudGame(BaseGame):
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
        dealer_cards = deal.hand(_DEALER)
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
            _DEALER: {
                "cards": hand_codes(dealer_cards),
                **summary(dealer),
                "qualifies": dealer_qualifies,
                **self.dealer_facts(dealer_cards),
            },
            BOXES: boxes,
            **self.round_facts(),
        }

    def _foul_outcome(self, deal: Deal, foul: list[str]) -> dict[str, Any]:
        """A supervisor let a round with a card dealt twice go on (the shoe's hold): its hands
        cannot be ranked (PKH-01 "a standard deck of 52 cards"), so the outcome gives the cards
        and ``foul_deck``, no facts to settle on."""
        return {
            _DEALER: {"cards": hand_codes(deal.hand(_DEALER))},
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


# --- Three Card Poker / Teen Patti --------------------------------------------------------------

_ANTE_BONUS: Final = frozenset(
    {
        ThreeCardCategory.STRAIGHT,
        ThreeCardCategory.THREE_OF_A_KIND,
        ThreeCardCategory.STRAIGHT_FLUSH,
    }
)


class ThreeCardPoker(_StudGame):
    """Three Card Poker and Teen Patti (seed 000 §7 TCP; seed 001 §3.13 L517–561).

    Per box, beside the showdown: ``pair_plus`` (the "BONUS (Pair Plus)" / "Plus a pair" line,
    pair or better, independent of the dealer: TCP §12, L531, L540–548; ``mini_royal`` is its
    own line), ``ante_bonus`` (straight, three of a kind, straight flush "regardless of the
    dealer's hand", TCP §14, L533–538; needs the play bet, so none for a folded box) and
    ``six_card`` (best 5 of the box's 3 and the dealer's 3, L550–559, C41: its ``bonus`` line
    from three of a kind up).
    """

    name = "three_card_poker"
    rules_model = ThreeCardPokerRules
    # PKH-09, TCP §6, L521: three cards each, face down, to the boxes and the dealer in rotation.
    script = DealScript((Step(to=(BOXES, _DEALER), count=3, face="down"),), "every_round")
    hand_size = 3
    minimum = "queen_high"  # TCP §10, §13; L527 "at least a Queen"
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
        """The table form: PKH-21 "If the dealer deals the wrong number of cards or deals any
        cards face up, all cards will be reshuffled and Bets will remain untouched" (V-TCP-1).
        The live form: L561 "Any technical bug cancels the round … the player gets back his
        bet"."""
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
                pair_plus = _line(hand, "mini_royal")
            six = best_of([*cards, *dealer_cards], 5)
            bonus = _line(six, "royal_flush") if qualifies(six, "three_of_a_kind") else None
            six_card = {**summary(six), "bonus": bonus}
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


# --- Caribbean Stud -----------------------------------------------------------------------------

_UP_CARD: Final = 5
"""Which of the dealer's cards is face up. L718 says only "one of the dealer's cards": we take
the last one dealt (the usual Caribbean Stud procedure), documented in docs/games/stud.md."""


def _caribbean_script() -> DealScript:
    """L718: "the dealer deals 5 cards to each of those sitting clockwise and himself – face up
    for the players and face down for himself except for one of the dealer's cards which is put
    face up": five rounds of one card to each box, then one to the dealer (L295's "clockwise …
    including him"); the dealer's fifth card is the face-up one."""
    steps: list[Step] = []
    for n in range(1, 6):
        steps.append(Step(to=(BOXES,), count=1, face="up"))
        steps.append(Step(to=(_DEALER,), count=1, face="up" if n == _UP_CARD else "down"))
    return DealScript(tuple(steps), "every_round")


class CaribbeanStud(_StudGame):
    """Caribbean Stud (seed 001 §3.17, L714–773).

    Per box, beside the showdown: ``call_hand`` (the Call paytable line, L745–758:
    ``royal_flush`` … ``two_pair``, and ``pair_or_ace_king`` for "Pair or AK"; ``None`` below
    ace-king or for a folded box) and ``five_plus_one`` (best 5 of the box's 5 and the dealer's
    face-up card, its ``bonus`` line from three of a kind up, L739, L760–769). The dealer's
    ``up_card`` is in the dealer's facts.
    """

    name = "caribbean_stud"
    rules_model = CaribbeanStudRules
    script = _caribbean_script()
    hand_size = 5
    minimum = "ace_king"  # L741 "at least an Ace and a King"
    raise_name = "call"
    deal_error_rule = "seed-001 L773"

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """A box card reported exposed is no irregularity: box cards are dealt face up (L718);
        anything else is L773's technical bug (void, bets returned)."""
        position = error.position or ""
        if error.kind == "card_exposed" and position.startswith("box"):
            return Remedy("note", "seed-001 L718", remedy="box_cards_are_face_up")
        return super().deal_error(deal, error)

    """L773 "Any technical bug cancels the round …" (truncated; C34: a refund)."""

    def evaluate(self, cards: Sequence[Card]) -> HandValue:
        return evaluate5(cards)

    def box_facts(
        self,
        cards: Sequence[Card],
        hand: HandValue,
        dealer_cards: Sequence[Card],
        folded: bool,
        bonuses_lost: bool,
    ) -> dict[str, Any]:
        call_hand = None
        if not folded and qualifies(hand, "ace_king"):
            call_hand = (
                "pair_or_ace_king"
                if hand.category <= HandCategory.PAIR
                else _line(hand, "royal_flush")
            )
        five_plus_one: dict[str, Any] | None = None
        if not bonuses_lost:
            six = best_of([*cards, dealer_cards[_UP_CARD - 1]], 5)
            bonus = _line(six, "royal_flush") if qualifies(six, "three_of_a_kind") else None
            five_plus_one = {**summary(six), "bonus": bonus}
        return {"call_hand": call_hand, "five_plus_one": five_plus_one}

    def dealer_facts(self, dealer_cards: Sequence[Card]) -> dict[str, Any]:
        return {"up_card": dealer_cards[_UP_CARD - 1].code}
