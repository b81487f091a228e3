"""Blackjack as the card engine runs it: one round's hands (:class:`BlackjackRound`) and the game
(:class:`Blackjack`); values and ``[rules]`` are in ``blackjack_rules``.

Boxes: ``bets_closed``'s, else all (seed-000 BJ-B4). Settles after the last card the rules call
for (seed-002-004 BJ 4.4) or on the dealer's blackjack after insurance (BJ 3.7). A scanned hole
card is only in the settled outcome (seed-002-004 A.2.5, seed-000 L79); cards dealt with no round
are carried (seed-000 BJ-I1)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, cast, get_args

from tablectl.controller.core.events import BetsClosed, Decision
from tablectl.controller.games.cards.blackjack_rules import (
    DECISION_NOT_BLACKJACK,
    DECISION_OUT_OF_TURN,
    DOUBLE_NOT_ALLOWED,
    EVEN_MONEY_NOT_ALLOWED,
    EXTRA_CARD,
    INSURANCE_NOT_ALLOWED,
    SPLIT_NOT_ALLOWED,
    SURRENDER_NOT_ALLOWED,
    UNKNOWN_BOX,
    Action,
    BlackjackRules,
    card_value,
    dealer_draws,
    hand_value,
    initial_deal_order,
    is_blackjack,
    settle_hand,
)
from tablectl.controller.games.cards.deal import (
    BOXES,
    BaseGame,
    Deal,
    DealScript,
    Slot,
    Step,
    box_name,
)
from tablectl.controller.games.cards.shoe import ShoeRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

DEALER = "dealer"


@dataclass
class _Hand:
    cards: list[Card] = field(default_factory=list)
    from_split: bool = False
    split_aces: bool = False
    doubled: bool = False
    stood: bool = False
    surrendered: bool = False
    acted: bool = False

    def natural(self) -> bool:
        return is_blackjack(self.cards, from_split=self.from_split)

    def done(self, rules: BlackjackRules) -> bool:
        """No more card may go to this hand."""
        if len(self.cards) < 2:
            return False
        value = hand_value(self.cards).total
        return (
            self.stood
            or self.surrendered
            or value >= 21  # BJ-V4: 21 (soft too) stands; BJ-V5: over 21 is bust
            or (self.doubled and len(self.cards) >= 3)  # BJ-O2: exactly one card
            or (self.split_aces and rules.split_aces_one_card)  # BJ-O1: one card per split ace
        )


@dataclass
class _Box:
    number: int
    hands: list[_Hand] = field(default_factory=lambda: [_Hand()])
    splits: int = 0
    insured: bool = False
    even_money: bool = False


class BlackjackRound:
    """One round, fed cards in dealing order and decisions. A hit needs no decision (the scanner is
    the authority, seed-000 BJ-I1); a stand does (seed-002-004 BJ 3.5: without a signal the
    dealer does not move on). ``boxes``: those with a bet, in dealing order (BJ-B4)."""

    def __init__(self, rules: BlackjackRules, boxes: Sequence[int]) -> None:
        self._rules = rules
        self._boxes = [_Box(n) for n in boxes]
        self._by_number = {b.number: b for b in self._boxes}
        self._queue: list[int | None] = initial_deal_order(
            [b.number for b in self._boxes], rules.hole_card == "scanned"
        )
        self._dealer: list[Card] = []
        # Ace up, scanned hole: the insurance window is over (never open without insurance).
        self._peeked = not rules.insurance

    # -- the deal -------------------------------------------------------------------------------

    @property
    def boxes(self) -> list[int]:
        return [b.number for b in self._boxes]

    def _scanned(self) -> bool:
        return self._rules.hole_card == "scanned"

    def _up(self) -> Card | None:
        return self._dealer[0] if self._dealer else None

    def _dealer_peek_blackjack(self) -> bool:
        """Ace up, a scanned hole card, the insurance window over, dealer blackjack: the round
        ends now (seed-002-004 BJ 3.7: the dealer checks the hole card after insurance)."""
        up = self._up()
        return (
            self._scanned()
            and self._peeked
            and up is not None
            and up.rank == "A"
            and is_blackjack(self._dealer[:2])
        )

    def _current(self) -> tuple[_Box, _Hand] | None:
        for box in self._boxes:
            if box.even_money:
                continue
            for hand in box.hands:
                if not hand.done(self._rules):
                    return box, hand
        return None

    def _live_hands(self) -> list[_Hand]:
        return [
            h
            for b in self._boxes
            if not b.even_money
            for h in b.hands
            if not h.surrendered and hand_value(h.cards).total <= 21
        ]

    def _dealer_needs_card(self) -> bool:
        live = self._live_hands()
        if not live:
            return False  # seed-002-004 BJ 4.4: nothing the dealer draws changes an outcome
        if len(self._dealer) >= 2 and is_blackjack(self._dealer[:2]):
            return False
        if all(h.natural() for h in live):
            # Only a dealer blackjack matters: the second card, if it could make one.
            up = self._dealer[0]
            return len(self._dealer) < 2 and card_value(up) in (1, 10)
        return dealer_draws(self._dealer, self._rules.hit_soft_17)

    def expects_card(self) -> bool:
        if self._queue:
            return True
        if self._dealer_peek_blackjack():
            return False
        return self._current() is not None or self._dealer_needs_card()

    def next_position(self) -> str | None:
        """Where the next card goes (``"dealer"`` or ``"boxN"``); ``None`` when none is called
        for."""
        if self._queue:
            target = self._queue[0]
            return DEALER if target is None else box_name(target)
        if not self.expects_card():
            return None
        current = self._current()
        return DEALER if current is None else box_name(current[0].number)

    def next_hidden(self) -> bool:
        """The next card is the face-down hole card (the last of the initial deal)."""
        return self._scanned() and len(self._queue) == 1

    def place(self, card: Card) -> Finding | None:
        """With an ace up and a scanned hole card, a card after the dealer's blackjack was not
        called for: carried (``extra_card``, BJ-I1)."""
        if self._queue:
            target = self._queue.pop(0)
            if target is None:
                self._dealer.append(card)
            else:
                self._by_number[target].hands[0].cards.append(card)
            return None
        self._peeked = True
        if self._dealer_peek_blackjack():
            return Finding(
                EXTRA_CARD,
                "BJ-I1",
                f"{card.code} came out after the dealer's blackjack: first card of the next round",
                severity="carry",
            )
        current = self._current()
        if current is not None:
            _box, hand = current
            hand.cards.append(card)
            hand.acted = hand.acted or len(hand.cards) > 2
        else:
            self._dealer.append(card)
        return None

    # -- decisions ------------------------------------------------------------------------------

    def decide(self, box: int, action: Action, hand: int | None = None) -> Finding | None:
        """A finding (nothing changes) when the rules refuse it; ``hand``: 1-based, of a split
        box."""
        target = self._by_number.get(box)
        if target is None:
            return Finding(UNKNOWN_BOX, "V-BJ-1", f"box {box} has no bet this round")
        if self._queue:
            return Finding(DECISION_OUT_OF_TURN, "V-BJ-1", "the initial deal is not complete")
        if action in ("insurance", "even_money"):
            return self._insure(target, action)
        self._peeked = True
        if self._dealer_peek_blackjack():
            return None  # the round is over: the dealer's blackjack settles every box
        current = self._current()
        if current is None or current[0] is not target:
            return Finding(
                DECISION_OUT_OF_TURN, "V-BJ-3", f"box {box} is not the box in play (seed-000 §15)"
            )
        in_play = current[1]
        if hand is not None and (hand < 1 or hand > len(target.hands)):
            return Finding(DECISION_OUT_OF_TURN, "V-BJ-3", f"box {box} has no hand {hand}")
        if hand is not None and target.hands[hand - 1] is not in_play:
            return Finding(
                DECISION_OUT_OF_TURN, "V-BJ-3", f"hand {hand} of box {box} is not in play"
            )
        if len(in_play.cards) < 2:
            return Finding(DECISION_OUT_OF_TURN, "BJ-O1", "a split hand gets its second card first")
        if action == "hit":
            return None
        if action == "stand":
            in_play.stood = True
            return None
        if action == "double":
            return self._double(in_play)
        if action == "split":
            return self._split(target, in_play)
        return self._surrender(in_play)

    def _insure(self, box: _Box, action: Action) -> Finding | None:
        up = self._up()
        first = box.hands[0]
        code, rule = (
            (INSURANCE_NOT_ALLOWED, "BJ-O3")
            if action == "insurance"
            else (EVEN_MONEY_NOT_ALLOWED, "BJ-O3")
        )
        if not self._rules.insurance:
            return Finding(code, rule, f"{action} is not offered at this table")
        if up is None or up.rank != "A":
            return Finding(code, rule, f"{action} only against a dealer ace (V-BJ-8)")
        if self._peeked or len(box.hands) > 1 or first.acted or first.doubled:
            return Finding(code, rule, f"{action} only before the box acts (V-BJ-8)")
        if box.insured or box.even_money:
            return Finding(code, rule, f"box {box.number} already took insurance or even money")
        if action == "insurance":
            if first.natural():
                return Finding(code, rule, "blackjack cannot be insured: even money (BJ §16)")
            box.insured = True
            return None
        if not first.natural():
            return Finding(code, "BJ §12", "even money is offered on a blackjack only")
        box.even_money = True
        return None

    def _double(self, hand: _Hand) -> Finding | None:
        rules = self._rules
        why = None
        if len(hand.cards) != 2 or hand.acted:
            why = "only on the first two cards of a hand (V-BJ-5)"
        elif hand.natural():
            why = "not on a blackjack (BJ-O2)"
        elif hand.from_split and not rules.double_after_split:
            why = "no double after a split at this table"
        elif hand.split_aces and rules.split_aces_one_card:
            why = "a split ace takes one card only (BJ-O1)"
        if why is not None:
            return Finding(DOUBLE_NOT_ALLOWED, "BJ-O2", f"double refused: {why}")
        hand.doubled = True
        hand.acted = True
        return None

    def _split(self, box: _Box, hand: _Hand) -> Finding | None:
        rules = self._rules
        why = None
        if len(hand.cards) != 2 or hand.acted:
            why = "only a hand of two cards can be split"
        elif card_value(hand.cards[0]) != card_value(hand.cards[1]):
            why = "the two cards differ in value (BJ-O1: same point value)"
        elif rules.max_splits is not None and box.splits >= rules.max_splits:
            why = f"box {box.number} already split {box.splits} times (max {rules.max_splits})"
        elif hand.split_aces and not rules.resplit_aces:
            why = "aces can only be split once (BJ-O1)"
        if why is not None:
            return Finding(SPLIT_NOT_ALLOWED, "V-BJ-4", f"split refused: {why}")
        aces = hand.cards[0].rank == "A"
        second = _Hand(cards=[hand.cards[1]], from_split=True, split_aces=aces)
        hand.cards = [hand.cards[0]]
        hand.from_split = True
        hand.split_aces = aces
        box.hands.insert(box.hands.index(hand) + 1, second)
        box.splits += 1
        return None

    def _surrender(self, hand: _Hand) -> Finding | None:
        rules = self._rules
        up = self._up()
        why = None
        if not rules.surrender:
            why = "not offered at this table"
        elif len(hand.cards) != 2 or hand.acted:
            why = "only with the first two cards"
        elif up is not None and up.rank == "A" and not rules.surrender_vs_ace:
            why = "not against the dealer's ace (seed-000 §33)"
        elif hand.split_aces:
            why = "a split ace cannot be surrendered (seed-000 §34)"
        if why is not None:
            return Finding(SURRENDER_NOT_ALLOWED, "V-BJ-9", f"surrender refused: {why}")
        hand.surrendered = True
        return None

    def confirm(self) -> bool:
        """The software's "insurance closed, check the hole card" signal (seed-002-004 BJ 3.7);
        ``False`` when there is no such window now."""
        up = self._up()
        if self._queue or self._peeked or up is None or up.rank != "A" or not self._scanned():
            return False
        self._peeked = True
        return True

    # -- the end --------------------------------------------------------------------------------

    def complete(self) -> bool:
        """With an ace up and a scanned hole card it waits for insurance to close (BJ 3.7), so no
        outcome reveals the dealer's blackjack while insurance is offered."""
        up = self._up()
        if self._scanned() and up is not None and up.rank == "A" and not self._peeked:
            return False
        return not self._queue and not self.expects_card()

    def result(self) -> dict[str, Any]:
        """The settled result; the only place the hole card appears."""
        dealer_value = hand_value(self._dealer)
        dealer_bj = is_blackjack(self._dealer[:2]) and len(self._dealer) >= 2
        boxes: list[dict[str, Any]] = []
        for box in self._boxes:
            hands = []
            for hand in box.hands:
                value = hand_value(hand.cards)
                if hand.surrendered:
                    verdict: str = "surrender"
                elif box.even_money:
                    verdict = "even_money"
                else:
                    verdict = settle_hand(hand.cards, self._dealer, from_split=hand.from_split)
                hands.append(
                    {
                        "cards": [c.code for c in hand.cards],
                        "total": value.total,
                        "soft": value.soft,
                        "blackjack": hand.natural(),
                        "bust": value.total > 21,
                        "doubled": hand.doubled,
                        "split": hand.from_split,
                        "surrendered": hand.surrendered,
                        "result": verdict,
                    }
                )
            boxes.append(
                {
                    "box": box.number,
                    "insurance": ("win" if dealer_bj else "lose") if box.insured else None,
                    "even_money": box.even_money,
                    "hands": hands,
                }
            )
        return {
            "dealer": {
                "cards": [c.code for c in self._dealer],
                "total": dealer_value.total,
                "soft": dealer_value.soft,
                "blackjack": dealer_bj,
                "bust": dealer_value.total > 21,
            },
            "boxes": boxes,
        }

    def public(self) -> dict[str, Any]:
        """Face-up cards only: the dealer's hole card is never here (seed-002-004 BJ 3.7)."""
        dealer = [c.code for c in self._dealer]
        hole = self._scanned() and len(self._dealer) >= 2
        if hole:
            dealer = [dealer[0], *dealer[2:]]
        return {
            "dealer": {"cards": dealer, "hole_card": "down" if hole else None},
            "boxes": {
                str(b.number): [[c.code for c in h.cards] for h in b.hands] for b in self._boxes
            },
        }


class Blackjack(BaseGame):
    """Blackjack (seed-000 §2, seed-001 §3.4, seed-002-004 A.2): the European deal (seed-000 §2.3
    §9, V-BJ-1), then :class:`BlackjackRound` sends every card (:meth:`next_slot`)."""

    name: ClassVar[str] = "blackjack"
    script = DealScript((Step((BOXES,)), Step((DEALER,)), Step((BOXES,))), reshuffle="shoe")
    rules_model: ClassVar[type[ShoeRules]] = BlackjackRules
    decision_actions: ClassVar[frozenset[str]] = frozenset(get_args(Action))
    procedure = "shoe"
    composition_rule: ClassVar[str] = "V-BJ-2"  # seed-000: ≤ decks of each (rank, suit)
    rules: BlackjackRules

    @staticmethod
    def round_of(deal: Deal) -> BlackjackRound:
        rnd = deal.notes["round"]
        assert isinstance(rnd, BlackjackRound)
        return rnd

    def playing_boxes(self, bets_closed: BetsClosed | None) -> tuple[int, ...]:
        """The named boxes that exist (possibly none), else every box (seed-000 BJ-B4)."""
        boxes = bets_closed.boxes if bets_closed is not None else None
        if boxes:
            return tuple(sorted({b for b in boxes if 1 <= b <= self.rules.boxes}))
        return tuple(range(1, self.rules.boxes + 1))

    def begin(self, deal: Deal, bets_closed: BetsClosed | None) -> None:
        del bets_closed
        deal.notes["round"] = BlackjackRound(self.rules, deal.boxes)

    def next_slot(self, deal: Deal) -> Slot | None:
        rnd = self.round_of(deal)
        position = rnd.next_position()
        if position is None:
            return None
        return Slot(position, "down" if rnd.next_hidden() else "up")

    def ready(self, deal: Deal) -> bool:
        return self.round_of(deal).complete()

    def admit(self, deal: Deal, decision: Decision) -> Finding | None:
        del deal
        if decision.action not in self.decision_actions:
            return Finding(
                DECISION_NOT_BLACKJACK,
                "seed-000 §2.5",
                f"{decision.action!r} is not a blackjack decision",
            )
        return None  # the box and the turn are the round's to judge

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        action = cast(Action, decision.action)
        refused = self.round_of(deal).decide(decision.box, action, decision.hand)
        return [] if refused is None else refused

    def confirm(self, deal: Deal) -> bool:
        return self.round_of(deal).confirm()

    def check(self, deal: Deal, slot: Slot, card: Card) -> Finding | None:
        del slot
        return self.round_of(deal).place(card)

    def outcome(self, deal: Deal) -> dict[str, Any]:
        return self.round_of(deal).result()

    def public(self, deal: Deal) -> dict[str, Any]:
        return self.round_of(deal).public()
