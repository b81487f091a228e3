"""Blackjack rules as pure functions and one pure round model (:class:`BlackjackRound`).

No events, no I/O, no clock: the engine (:mod:`tablectl.controller.engines.blackjack`) feeds cards
and decisions in and publishes :meth:`BlackjackRound.result`. Rule-book ids (``../shared/rules/``):

- seed-000 §2 (Bombay Club): BJ-E1 (6 decks), BJ-E5 (no burn), §2.3 (European no-hole-card deal:
  boxes, dealer up, boxes), BJ-V1..V8 (values, blackjack, 21 auto-stands, bust, dealer blackjack,
  payouts), BJ-O1..O4 (split, double, insurance, surrender), BJ-I1 (an exposed card is the next
  card played), V-BJ-1..11;
- seed-001 §3.4 (L189–287: S17 on a two-card soft 17, C14; surrender regardless of the up card);
- seed-002-004 A.2 (BJ 1.2.1 ≤ 7 seats; BJ 3.4 deal with a face-down hole card read by the
  scanner, kept secret, BJ 3.7; BJ 2.5 insurance on an ace; BJ 2.6 one card on a double; BJ 2.7
  one split, split aces one card each and A+10 = 21; BJ 4.4 the dealer stands on hard or soft 17
  and draws nothing when it cannot change an outcome).

The hole card (``hole_card = "scanned"``) is known to this model from the moment it is dealt; only
:meth:`BlackjackRound.result` (the final outcome) ever contains it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.games.cards.shoe import LastCoup, OnFault, ShoeRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

__all__ = [
    "DECISION_OUT_OF_TURN",
    "DOUBLE_NOT_ALLOWED",
    "EVEN_MONEY_NOT_ALLOWED",
    "INSURANCE_NOT_ALLOWED",
    "SPLIT_NOT_ALLOWED",
    "SURRENDER_NOT_ALLOWED",
    "UNKNOWN_BOX",
    "Action",
    "BlackjackRound",
    "BlackjackRules",
    "HandValue",
    "card_value",
    "dealer_draws",
    "hand_value",
    "initial_deal_order",
    "is_blackjack",
    "settle_hand",
]

Action: TypeAlias = Literal[
    "hit", "stand", "double", "split", "insurance", "even_money", "surrender"
]
HoleCard: TypeAlias = Literal["none", "scanned"]

# Stable verdict codes of refused decisions (docs/verdicts.md, "Blackjack").
DECISION_OUT_OF_TURN: Final = "decision_out_of_turn"
DOUBLE_NOT_ALLOWED: Final = "double_not_allowed"
SPLIT_NOT_ALLOWED: Final = "split_not_allowed"
INSURANCE_NOT_ALLOWED: Final = "insurance_not_allowed"
EVEN_MONEY_NOT_ALLOWED: Final = "even_money_not_allowed"
SURRENDER_NOT_ALLOWED: Final = "surrender_not_allowed"
UNKNOWN_BOX: Final = "unknown_box"
EXTRA_CARD: Final = "extra_card"


class BlackjackRules(ShoeRules):
    """The ``[rules]`` of a blackjack table; defaults are seed-000's reading (European).

    seed-002-004 (live studio) tables set ``hole_card = "scanned"``, ``max_splits = 1``; seed-001
    tables ``decks = 8`` and ``surrender_vs_ace = true``.
    """

    decks: int = pydantic.Field(default=6, ge=1, le=16)
    """seed-000 BJ-E1: six decks unless the table says otherwise."""
    burn: bool = False
    """seed-000 BJ-E5: no burn card in blackjack."""
    cut_card_min_behind: int = pydantic.Field(default=0, ge=0)
    """Not checked by default: seed-000 BJ-E3 says "approximately 52 cards", seed-002-004 BJ 3.3
    "4 decks from the back"; set e.g. 52 to flag a cut card that comes out too deep."""
    last_coup: LastCoup = "current"
    """seed-002-004 BJ 3.2; seed-000 V-BJ-11 and §13 gap 4: finish the round, then shuffle."""
    on_fault: OnFault = "decide"
    """seed-000 BJ-I6 (the deal is finished by hand) and GEN-12: a manager decides."""

    boxes: int = pydantic.Field(default=7, ge=1, le=7)
    """Boxes on the layout (seed-002-004 BJ 1.2.1: at most seven seats)."""
    hole_card: HoleCard = "none"
    """``none``: European, the dealer's second card comes after the boxes (seed-000 §2.3 §9,
    seed-001 L203). ``scanned``: a face-down hole card in the initial deal, read by the scanner
    and kept secret (seed-002-004 BJ 3.4, 3.7, A.2.5)."""
    hit_soft_17: bool = False
    """The dealer stands on every 17 by default (seed-000 BJ §22, seed-001 L209 C14,
    seed-002-004 BJ 4.4)."""
    max_splits: int | None = pydantic.Field(default=4, ge=0)
    """Splits per box: seed-000 BJ-O1 "up to four times" (``None``: unlimited, the promotion);
    seed-002-004 BJ 2.7 "not … more than once" → 1."""
    resplit_aces: bool = False
    """seed-000 BJ-O1: "Aces can only be Split once"."""
    split_aces_one_card: bool = True
    """seed-000 BJ-O1 "only one card can be added to each Split ace" (seed-004: at discretion)."""
    double_after_split: bool = True
    """seed-000 BJ-O2: "It is also possible to Double down on a Split Bet"."""
    surrender: bool = False
    """seed-000 BJ-O4: only where the casino offers it."""
    surrender_vs_ace: bool = False
    """seed-000 §33: not against the dealer's open ace; seed-001 L219: "regardless"."""


def card_value(card: Card) -> int:
    """A = 1 (or 11, see :func:`hand_value`), 2–9 face value, T/J/Q/K = 10 (seed-000 BJ-V1).

    Raises:
        ValueError: a joker.
    """
    if card.is_joker:
        raise ValueError("a joker has no blackjack value")
    if card.rank == "A":
        return 1
    if card.rank in "TJQK":
        return 10
    return int(card.rank)


@dataclass(frozen=True, slots=True)
class HandValue:
    """A hand's best total; ``soft`` when an ace counts 11 in it."""

    total: int
    soft: bool


def hand_value(cards: Sequence[Card]) -> HandValue:
    """The best total ≤ 21 if there is one (an ace counts 11 when that does not bust)."""
    hard = sum(card_value(c) for c in cards)
    if any(c.rank == "A" for c in cards) and hard + 10 <= 21:
        return HandValue(hard + 10, True)
    return HandValue(hard, False)


def is_blackjack(cards: Sequence[Card], *, from_split: bool = False) -> bool:
    """Ace and a ten-value card as the first two cards (seed-000 BJ-V2); never after a split
    (BJ-V3, seed-002-004 BJ 2.7: "21, not Blackjack")."""
    return not from_split and len(cards) == 2 and hand_value(cards).total == 21


def dealer_draws(cards: Sequence[Card], hit_soft_17: bool = False) -> bool:
    """The dealer draws on 16 or less and stands on 17 or more (seed-000 BJ §22, seed-002-004
    BJ 4.4); with ``hit_soft_17`` the dealer also draws on a soft 17."""
    value = hand_value(cards)
    return value.total < 17 or (value.total == 17 and value.soft and hit_soft_17)


def initial_deal_order(boxes: Sequence[int], hole_card: bool) -> list[int | None]:
    """The initial deal, box numbers and ``None`` for the dealer: box1..boxN, dealer up,
    box1..boxN, then the hole card if dealt (seed-000 §2.3 §9, V-BJ-1; seed-002-004 BJ 3.4)."""
    order: list[int | None] = [*boxes, None, *boxes]
    if hole_card:
        order.append(None)
    return order


def settle_hand(
    cards: Sequence[Card], dealer: Sequence[Card], *, from_split: bool = False
) -> Literal["win", "lose", "push", "blackjack"]:
    """One finished hand against the dealer's finished hand (seed-000 BJ-V3..V8).

    Bust loses even if the dealer busts (BJ-V5, seed-002-004 C-A5); blackjack pushes a dealer
    blackjack and otherwise pays 3:2 (BJ-V6, V7); a dealer blackjack beats every other hand,
    a split 21 included (BJ-V3, V6); a dealer bust pays every standing hand; equal totals push
    (BJ-V8).
    """
    mine = hand_value(cards)
    if mine.total > 21:
        return "lose"
    dealer_bj = is_blackjack(dealer)
    if is_blackjack(cards, from_split=from_split):
        return "push" if dealer_bj else "blackjack"
    if dealer_bj:
        return "lose"
    theirs = hand_value(dealer).total
    if theirs > 21 or mine.total > theirs:
        return "win"
    return "push" if mine.total == theirs else "lose"


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
    """One blackjack round, fed cards in dealing order and the players' decisions.

    Cards go where the rules send the next card: the initial deal (:func:`initial_deal_order`),
    then the first unfinished hand, box by box (a split hand first gets its second card), then the
    dealer until :func:`dealer_draws` says stop. A hit needs no decision (the scanner is the
    authority: seed-000 BJ-I1, an opened card "is treated as the next card to be played"); a
    stand does (seed-002-004 BJ 3.5: without a signal the dealer does not move on).

    Args:
        rules: the table's rules.
        boxes: the boxes with a bet, in dealing order (seed-000 BJ-B4).
    """

    def __init__(self, rules: BlackjackRules, boxes: Sequence[int]) -> None:
        self._rules = rules
        self._boxes = [_Box(n) for n in boxes]
        self._by_number = {b.number: b for b in self._boxes}
        self._queue: list[int | None] = initial_deal_order(
            [b.number for b in self._boxes], rules.hole_card == "scanned"
        )
        self._dealer: list[Card] = []
        self._peeked = False  # ace up, scanned hole: the insurance window is over

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

    def next_hidden(self) -> bool:
        """The next card is the face-down hole card (the last of the initial deal)."""
        return self._scanned() and len(self._queue) == 1

    def place(self, card: Card) -> Finding | None:
        """Put the next card where the deal sends it. With an ace up and a scanned hole card a
        card also closes the insurance window: if the dealer then has blackjack, the card was not
        called for and is carried to the next round (``extra_card``, BJ-I1)."""
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
        """Apply a player's decision; a finding (nothing changes) when the rules refuse it.

        ``hand`` is the 1-based hand of a split box (``None``: the hand in play).
        """
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
        """All cards are in. With an ace up and a scanned hole card the round also waits for the
        insurance window to close (``confirm`` or a box's first other decision; BJ 3.7), so an
        outcome never reveals the dealer's blackjack while insurance is still offered."""
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
