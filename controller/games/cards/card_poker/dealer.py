"""What the "card poker" family and Bombay Poker share: a box against the dealer, the combination
classes, and :class:`DealerPoker` (readings: the package docstring). Pure."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any, Final

from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    DECISION_REFUSED,
    BaseGame,
    Deal,
    DealScript,
    Step,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.poker import (
    HandCategory,
    HandValue,
    JokerMode,
    best_of,
    evaluate5,
    summary,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card, parse_card

DEALER: Final = "dealer"

# Per-box results (``boxes.<box>.result``).
WIN: Final = "win"
LOSE: Final = "lose"
TIE: Final = "tie"
"""Card poker: same hand, same kickers: Ante and Raise returned (L318–320; C33 "the game is
restarted" read as a push)."""
PUSH: Final = "push"
"""Bombay Poker: "A tie is a push" (BMP-H5)."""
DEALER_NO_GAME: Final = "dealer_no_game"
"""The dealer does not qualify: card poker Ante and Raise back plus 1 × Ante (L318–320, L374,
L485); Bombay the box takes the ANTE (§18, §21)."""
NO_GAME_AFTER_BUY: Final = "no_game_after_buy"
"""Bombay: the box bought the dealer a game and he still has none: "neither the ANTE nor the BET
Bets are paid out" (§24)."""
FOLD: Final = "fold"
VOID: Final = "void"
"""The box is out of the round (card poker wrong count, L335): see its ``remedy``."""

# A remedy of Bombay's (the shared void reason and remedies are
# tablectl.controller.games.cards.deal's).
FACE_UP_ANYWAY: Final = "face_up_anyway"
"""Bombay: a card exposed after the dealer's reveal (PKH-15) is noted, the round goes on."""

_GROUPED: Final = frozenset(
    {
        HandCategory.PAIR,
        HandCategory.TWO_PAIR,
        HandCategory.THREE_OF_A_KIND,
        HandCategory.FOUR_OF_A_KIND,
    }
)
"""The combinations BMP-H1 lets ace-king play beside ("a pair, two pairs, three of a kind or four
of a kind"); also the categories whose combination is a group of equal ranks."""

_CLASS_NAMES: Final = {
    HandCategory.TWO_PAIR: "two_pair",
    HandCategory.THREE_OF_A_KIND: "three_of_a_kind",
    HandCategory.STRAIGHT: "straight",
    HandCategory.FLUSH: "flush",
    HandCategory.FULL_HOUSE: "full_house",
    HandCategory.FOUR_OF_A_KIND: "four_of_a_kind",
    HandCategory.STRAIGHT_FLUSH: "straight_flush",
    HandCategory.FIVE_OF_A_KIND: "poker",
}
_ACE_KING: Final = (14, 13)
_VALUES: Final = {r: (14 if r == "A" else "A23456789TJQK".index(r) + 1) for r in "A23456789TJQK"}


# --- shared settling ---------------------------------------------------------------------------


def settle(box: HandValue, dealer: HandValue, *, dealer_qualifies: bool, tie: str) -> str:
    """One box against the dealer (seed-001 L318–320; seed-000 §18–20, BMP-H5): no qualifying hand
    is no game; else :class:`HandValue` order decides (kickers high to low, natural over
    joker-made, L475); suits never count (PKH-18)."""
    if not dealer_qualifies:
        return DEALER_NO_GAME
    if box > dealer:
        return WIN
    if box < dealer:
        return LOSE
    return tie


def _is_ace_king(hand: HandValue) -> bool:
    return hand.category == HandCategory.HIGH_CARD and hand.ranks[:2] == _ACE_KING


def combination_class(hand: HandValue, *, ace_king: str | None, pair: str | None) -> str | None:
    """The paytable line (seed-000 PKH-17: the multipliers are the back office's); royal flush and
    ``poker`` (five of a kind) per L299–310, L461–473."""
    category = hand.category
    if category == HandCategory.HIGH_CARD:
        return ace_king if _is_ace_king(hand) else None
    if category == HandCategory.PAIR:
        return pair
    if category == HandCategory.STRAIGHT_FLUSH and hand.is_royal:
        return "royal_flush"
    return _CLASS_NAMES[HandCategory(category)]


def rank_value(card: Card) -> int:
    """A card's rank, ace high (A = 14, K = 13 … 2 = 2)."""
    return _VALUES[card.rank]


def combination_cards(hand: HandValue) -> tuple[Card, ...]:
    """The cards of ``hand``'s combination without kickers (BMP-H3); a joker counts as one of
    them."""
    cards = hand.cards
    if hand.category == HandCategory.HIGH_CARD:
        if not _is_ace_king(hand):
            return ()
        ace = next(c for c in cards if c.rank == "A")
        king = next(c for c in cards if c.rank == "K")
        return (ace, king)
    if hand.category in _GROUPED:
        groups = 2 if hand.category == HandCategory.TWO_PAIR else 1
        grouped = set(hand.ranks[:groups])
        return tuple(c for c in cards if c.is_joker or rank_value(c) in grouped)
    return tuple(cards)


def _ace_king_value(cards: Iterable[Card]) -> HandValue | None:
    """Ace-king as a combination of its own (BMP-H1), or ``None`` without an ace and a king."""
    cards = list(cards)
    ace = next((c for c in cards if c.rank == "A"), None)
    king = next((c for c in cards if c.rank == "K"), None)
    if ace is None or king is None:
        return None
    return HandValue(HandCategory.HIGH_CARD, _ACE_KING, (ace, king))


def _combinations_of(five: Sequence[Card]) -> list[HandValue]:
    """The paying combinations five cards hold: their hand when it is at least ace-king, and
    ace-king beside a pair, two pair, trips or quads (BMP-H1)."""
    hand = evaluate5(five)
    found: list[HandValue] = []
    if hand.category == HandCategory.HIGH_CARD:
        ace_king = _ace_king_value(five) if _is_ace_king(hand) else None
        return [ace_king] if ace_king is not None else []
    found.append(hand)
    if hand.category in _GROUPED:
        ace_king = _ace_king_value(five)
        if ace_king is not None:
            found.append(ace_king)
    return found


def bombay_combinations(cards: Sequence[Card]) -> tuple[HandValue | None, HandValue | None]:
    """A Bombay box's first and second combination (BMP-H1–H3). The second needs a card outside the
    first's (BMP-H3); kickers are no part of a combination, so ace-king may play beside a pair.
    With six cards, Q-Q-Q-Q-8-8 is four queens, then Q-Q-Q-8-8 (BMP-H2)."""
    first = best_of(cards)
    if first.category == HandCategory.HIGH_CARD:
        if not _is_ace_king(first):
            return None, None
        first = _ace_king_value(first.cards) or first
    inside = set(combination_cards(first))
    candidates = [
        combo
        for five in itertools.combinations(cards, 5)
        for combo in _combinations_of(five)
        if set(combination_cards(combo)) - inside
    ]
    return first, max(candidates, default=None)


# --- shared game logic -------------------------------------------------------------------------


def refuse(rule: str, message: str) -> Finding:
    """A refused decision (``decision_refused``) citing ``rule``."""
    return Finding(DECISION_REFUSED, rule, message)


def box_of(position: str) -> int | None:
    """The box number of a position (``"box2"`` → 2), ``None`` for the dealer."""
    if position.startswith("box") and position[3:].isdigit():
        return int(position[3:])
    return None


class DealerPoker(BaseGame):
    """What both games share: the five-card deal with the dealer's last card up, the box states,
    the card-giving-back check and the box-against-dealer settling."""

    script = DealScript(
        (
            # seed-001 L295 / seed-000 BMP §6: five rotations; the dealer is last in each, so
            # his fifth card, the face-up one, is the deal's last card.
            Step(to=(BOXES, DEALER), count=4, face="down"),
            Step(to=(BOXES,), count=1, face="down"),
            Step(to=(DEALER,), count=1, face="up"),
        ),
        reshuffle="every_round",
    )
    decision_rule: str = ""
    """The rule id refusals cite."""
    jokers: JokerMode = "forbid"

    # -- deal state ------------------------------------------------------------------------------

    @staticmethod
    def dealt(deal: Deal, position: str) -> list[Card]:
        """Every card dealt to ``position`` in order, including those given back or discarded."""
        return [card for pos, card, _ in deal.order if pos == position]

    def initial_deal_over(self, deal: Deal) -> bool:
        """The dealer's fifth card is the deal's last (see :attr:`script`)."""
        return len(self.dealt(deal, DEALER)) >= 5

    @staticmethod
    def folded(deal: Deal, box: int) -> bool:
        return deal.decided(box, FOLD)

    def live_boxes(self, deal: Deal) -> list[int]:
        """Boxes still in the round: not out by a deal error, not folded (box order)."""
        return [
            b
            for b in deal.boxes
            if box_name(b) not in deal.void_positions and not self.folded(deal, b)
        ]

    def given_back(self, deal: Deal, box: int) -> list[Card]:
        """The cards box ``box`` gave back in exchanges (kept in ``deal.notes``)."""
        given: dict[int, list[Card]] = deal.notes.setdefault("given_back", {})
        return given.setdefault(box, [])

    def value(self, cards: Sequence[Card]) -> HandValue:
        """The best 5 of the box's or the dealer's 5–6 cards."""
        return best_of(cards, jokers=self.jokers)

    def check_box(self, deal: Deal, decision: Decision) -> Finding | None:
        """Refusals every decision shares: the deal is not over, the box is out or folded."""
        position = box_name(decision.box)
        if position in deal.void_positions:
            return refuse(self.decision_rule, f"{position} is out of the round")
        if not self.initial_deal_over(deal):
            return refuse(
                "seed-001 L295",
                "no decision before the end of the deal ('Until the end of the deal none of the "
                "players has right to touch the cards')",
            )
        if self.folded(deal, decision.box):
            return refuse(self.decision_rule, f"{position} has folded")
        return None

    def cards_given_back(
        self, deal: Deal, decision: Decision, counts: range
    ) -> list[Card] | Finding:
        """Messages never name a card: the box's hand is face down (seed-000 L79)."""
        position = box_name(decision.box)
        named = decision.cards or ()
        if len(named) not in counts:
            want = f"{counts.start}" if len(counts) == 1 else f"{counts.start}–{counts[-1]}"
            return refuse(
                self.decision_rule,
                f"an exchange gives back {want} card(s); {position} named {len(named)}",
            )
        hand = list(deal.hand(position))
        chosen: list[Card] = []
        for text in named:
            try:
                card = parse_card(text)
            except ValueError:
                return refuse(self.decision_rule, "a card given back is not a card")
            match = next(
                (
                    c
                    for c in hand
                    if c not in chosen and (c == card or (c.is_joker and card.is_joker))
                ),
                None,
            )
            if match is None:
                return refuse(
                    self.decision_rule, f"a card given back is not (or no longer) in {position}"
                )
            chosen.append(match)
        return chosen

    def give_back(self, deal: Deal, box: int, cards: Iterable[Card]) -> None:
        """The cards leave the hand (``Deal.hands``: exchanged cards removed)."""
        hand = deal.hands[box_name(box)]
        for card in cards:
            hand.remove(card)
            self.given_back(deal, box).append(card)

    # -- outcome pieces --------------------------------------------------------------------------

    def box_base(self, deal: Deal, box: int) -> dict[str, Any]:
        """The facts every box reports: its cards, what it gave back, how it decided."""
        return {
            "cards": hand_codes(deal.hand(box_name(box))),
            "given_back": hand_codes(self.given_back(deal, box)),
            "sixth_card": deal.decided(box, "sixth_card"),
            "folded": self.folded(deal, box),
        }

    def void_box(self, deal: Deal, box: int) -> dict[str, Any]:
        position = box_name(box)
        return {
            "cards": hand_codes(deal.hand(position)),
            "result": VOID,
            "remedy": deal.void_positions[position],
        }


def combination_summary(hand: HandValue) -> dict[str, Any]:
    """A Bombay combination: its summary, paytable line and the cards that form it (BMP-H3)."""
    described = {**summary(hand), "hand": "ace-king"} if _is_ace_king(hand) else summary(hand)
    return {
        **described,
        "class": combination_class(hand, ace_king="ace_king", pair="pair"),
        "combination_cards": hand_codes(combination_cards(hand)),
    }
