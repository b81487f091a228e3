"""The "card poker" family (seed-001 §3.9–§3.12) and Bombay Poker (seed-000 §8): 5-card poker
against the dealer with an exchange, a sixth card, a joker or a bought dealer game.

Issue 8, Deliver 2. Both games are scripts for
:class:`tablectl.controller.engines.scripted.ScriptEngine` (see
:mod:`tablectl.controller.games.cards.deal`); the evaluation is
:mod:`tablectl.controller.games.cards.poker`. Rule ids: seed-001 =
``../shared/rules/seed-001-live-casino-regulations.md`` (``L…`` source lines, ``C…`` contradictions
of its §12); seed-000 = ``seed-000-bombay-player-guide.md`` (PKH-, BMP-, V-BMP-, §14 ambiguities).
``docs/games/card_poker.md`` has the same readings as tables.

**CardPoker** (``[rules] variant``, set by the catalog presets):

- ``card_poker`` §3.9 (L289–347), ``card_poker_exchange`` §3.10 (L349–403), ``six_card_poker``
  §3.11 (L405–451), ``poker_with_joker`` §3.12 (L453–515). One 52-card deck (53 with the joker,
  L455), shuffled for every round (seed-001 §3.0 validator (1): no duplicate in a round).
- Deal (L295): "5 cards face down … to each of the players including him clockwise except one
  card that is put face up": five rotations box1 … boxN, dealer; the dealer's **fifth (last)**
  card is the face-up one (the reading of §3.9; the source does not say which).
- One decision window after the deal (L312–316): ``fold``; ``play`` (the Raise, 2 × Ante);
  ``exchange`` (card_poker_exchange, poker_with_joker: exactly one card given back, its
  replacement dealt at once, face down — "The dealer immediately takes … gives the player a new
  card", L366–372, L477–483); ``sixth_card`` (six_card_poker: the box's sixth card, dealt at once,
  best 5 of 6, L422–424). The dealer's ``confirm`` closes the window; his four face-down cards
  are revealed in the outcome (L318). Nothing may be decided before the deal is over ("Until the
  end of the deal none of the players has right to touch the cards", L295).
- The dealer qualifies with ace-king (L318–320, L374 C20, L426); Poker with Joker with a pair
  (L485). Joker wild, five of a kind ("Poker") tops the ranking (L461–473), natural beats
  joker-made on an otherwise equal hand (L475).
- Irregularities (L335, L391; §3.9 derived encoding): a box with the wrong number of cards is out
  (``refund_plus_half_ante``); the dealer with four cards takes his fifth; any other dealer
  misdeal or an exposed card voids the round (``refund_plus_half_ante``).

**BombayPoker** (seed-000 §8): at most 3 boxes (BMP-B1), 5 cards each and the dealer, the
dealer's last card face up (§6); draw window (exchange 1–5 / sixth card / fold, §7–9), play window
(§10, closed by "insurance closed", §15), the dealer's reveal, a "buy a game" window when he has no
game (§21–24), two combinations per box (BMP-H1/H3), ties push (BMP-H5), PKH-21 misdeals.

Both games settle every box against the dealer through :func:`settle` (one helper).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, Literal, TypeAlias

import pydantic

from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    DECISION_REFUSED,
    MISDEAL,
    REFUND,
    REFUND_PLUS_HALF_ANTE,
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
    JokerMode,
    Minimum,
    best_of,
    evaluate5,
    qualifies,
    summary,
)
from tablectl.controller.games.cards.shoe import OnFault
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card, parse_card

__all__ = [
    "DEALER",
    "DEALER_NO_GAME",
    "FACE_UP_ANYWAY",
    "FOLD",
    "LOSE",
    "MISDEAL",
    "NO_GAME_AFTER_BUY",
    "PUSH",
    "REFUND",
    "REFUND_PLUS_HALF_ANTE",
    "RESHUFFLE_BETS_STAND",
    "TIE",
    "VOID",
    "WIN",
    "BombayPoker",
    "BombayRules",
    "CardPoker",
    "CardPokerRules",
    "Irregularities",
    "Variant",
    "bombay_combinations",
    "combination_cards",
    "combination_class",
    "settle",
]

Variant: TypeAlias = Literal[
    "card_poker", "card_poker_exchange", "six_card_poker", "poker_with_joker"
]
Irregularities: TypeAlias = Literal["l335", "refund"]
"""``l335``: the card-poker remedies of seed-001 L335/L391; ``refund``: any deal error voids the
round and returns the bets (seed-001 G3 L79, the fallback where a game states none, §2.2)."""

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
    """One box against the dealer, both games (seed-001 L318–320; seed-000 §18–20, BMP-H5).

    A dealer without a qualifying hand has no game (:data:`DEALER_NO_GAME`); otherwise the
    higher hand wins, combination first, then the cards outside it high to low ("the highest
    cards that are out of the combinations are compared", L318–320; "by the higher card and then
    the next", BMP-H5) — the order of :class:`HandValue`, which also ranks a natural hand above
    an otherwise equal joker-made one (L475). Equal hands give ``tie`` (:data:`TIE` or
    :data:`PUSH`). Suits never count (PKH-18).
    """
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
    """The paytable line a 5-card hand is paid on (the back office holds the multipliers,
    seed-000 PKH-17): ``ace_king`` names the ace-king high class (``None``: it pays nothing),
    ``pair`` the one-pair class; the rest are ``two_pair`` … ``straight_flush``,
    ``royal_flush`` (the ace-high straight flush, listed apart in L299–310, L461–473) and
    ``poker`` (five of a kind with the joker, L461–473). Any other high card: ``None``.
    """
    category = hand.category
    if category == HandCategory.HIGH_CARD:
        return ace_king if _is_ace_king(hand) else None
    if category == HandCategory.PAIR:
        return pair
    if category == HandCategory.STRAIGHT_FLUSH and hand.is_royal:
        return "royal_flush"
    return _CLASS_NAMES[HandCategory(category)]


def _value(card: Card) -> int:
    return _VALUES[card.rank]


def combination_cards(hand: HandValue) -> tuple[Card, ...]:
    """The cards that form ``hand``'s combination, without its kickers (BMP-H3: "at least one
    card from the second combination is not included in the first combination").

    A pair, two pair, trips or quads: the grouped cards. Ace-king high: the ace and the king.
    Any other high card: none (it is no combination). Straights, flushes, full houses and
    better use all five cards. A joker counts as a card of its hand's combination.
    """
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
        return tuple(c for c in cards if c.is_joker or _value(c) in grouped)
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
    """A Bombay box's first and second combination (BMP-H1–H3), from 5 or 6 cards.

    The first is the best 5-card hand, if it is a combination at all (ace-king or better; it is
    the one compared with the dealer, BMP-H2, BMP-H5). The second is the best other combination
    of any five of the cards (ace-king beside a pair, two pair, trips or quads, BMP-H1; with six
    cards any 5-card hand, BMP-H2: Q-Q-Q-Q-8-8 is four queens, then the full house Q-Q-Q-8-8)
    that has at least one card outside the first combination's cards (BMP-H3; kickers are not
    part of a combination, which is what lets ace-king play beside a pair). ``(None, None)``:
    the box has no combination.
    """
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


def _refuse(rule: str, message: str) -> Finding:
    return Finding(DECISION_REFUSED, rule, message)


def _box_of(position: str) -> int | None:
    if position.startswith("box") and position[3:].isdigit():
        return int(position[3:])
    return None


class _DealerPoker(BaseGame):
    """What both games share: the five-card deal with the dealer's last card up, the box states,
    the card-giving-back check and the box-against-dealer settling."""

    script: ClassVar[DealScript] = DealScript(
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
            return _refuse(self.decision_rule, f"{position} is out of the round")
        if not self.initial_deal_over(deal):
            return _refuse(
                "seed-001 L295",
                "no decision before the end of the deal ('Until the end of the deal none of the "
                "players has right to touch the cards')",
            )
        if self.folded(deal, decision.box):
            return _refuse(self.decision_rule, f"{position} has folded")
        return None

    def cards_given_back(
        self, deal: Deal, decision: Decision, counts: range
    ) -> list[Card] | Finding:
        """The cards an ``exchange`` gives back: ``counts`` of them, distinct, all in the hand.

        Messages never name a card: the box's hand is face down (seed-000 L79).
        """
        position = box_name(decision.box)
        named = decision.cards or ()
        if len(named) not in counts:
            want = f"{counts.start}" if len(counts) == 1 else f"{counts.start}–{counts[-1]}"
            return _refuse(
                self.decision_rule,
                f"an exchange gives back {want} card(s); {position} named {len(named)}",
            )
        hand = list(deal.hand(position))
        chosen: list[Card] = []
        for text in named:
            try:
                card = parse_card(text)
            except ValueError:
                return _refuse(self.decision_rule, "a card given back is not a card")
            match = next(
                (
                    c
                    for c in hand
                    if c not in chosen and (c == card or (c.is_joker and card.is_joker))
                ),
                None,
            )
            if match is None:
                return _refuse(
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


# --- Card poker (seed-001 §3.9–§3.12) ----------------------------------------------------------


class CardPokerRules(GameRules):
    """The ``[rules]`` of a card-poker family table; defaults are seed-001's reading.

    ``variant`` comes from the catalog preset. ``decks`` is 1: "52-card deck" (L291), "53-card
    deck … and a Joker" (L455). ``jokers_per_deck`` left out is 1 for ``poker_with_joker`` and 0
    otherwise (seed-001 §3.0 validator (4): jokers only in Poker with Joker); any other value is
    a config error. ``boxes``: "The number of players is limited to the number of Ante fields"
    (L333), default 1. ``irregularities`` left out: ``l335`` for the 5-card and exchange games
    (L335, L391) and for six-card poker (no rule of its own; C21 "Inherit from §3.9"); ``refund``
    for Poker with Joker, which states no deal or wrong-count rule (§3.12 [GAP]), so the general
    G3 (L79) applies. ``bonus_minimum``: the lowest hand of the Bonus bet, "Flush, Full House …"
    (L397–403, L513–515); §3.9 and §3.11 name no bonus hands (L343–347, L447–451 [GAP]), so the
    same minimum is the default there.
    """

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
            raise ValueError(
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


class CardPoker(_DealerPoker):
    """Card poker, with exchange, six-card poker and Poker with Joker (seed-001 §3.9–§3.12).

    See the module docstring for the deal and windows. The result::

        {"variant": "card_poker_exchange",
         "dealer": {"cards": [...5], "up_card": "7C", **summary, "qualifies": true},
         "dealer_no_game": false,
         "boxes": {"box1": {"cards": [...], "given_back": ["3D"], "sixth_card": false,
                            "folded": false, **summary, "result": "win",
                            "paytable_class": "two_pair",
                            "bonus": {"cards": [...5], **summary, "eligible": false}}}}

    ``result``: ``win``/``lose``/``tie`` against a qualifying dealer, ``dealer_no_game``
    (Ante and Raise back plus 1 × Ante, L318–320), ``fold``, or ``void`` (with ``remedy``, L335).
    ``paytable_class``: the line of the Raise multiplier tables (§3.9–§3.12; L430–439):
    ``ak_or_pair`` (Poker with Joker: ``one_pair``; ace-king pays nothing there) … ``poker``;
    ``None`` below the lowest line. ``bonus``: the five cards first dealt, and whether the Bonus
    bet pays (at least ``bonus_minimum`` "without having to exchange", L397–403; lost on an
    exchange, L397–403, L513–515, or a sixth card, L447–451 "no exchange").
    """

    name: ClassVar[str] = "card_poker"
    rules_model: ClassVar[type[GameRules]] = CardPokerRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({FOLD, "play", "exchange", "sixth_card"})
    rules: CardPokerRules

    def __init__(self, rules: GameRules) -> None:
        assert isinstance(rules, CardPokerRules)
        super().__init__(rules)
        self.rules = rules
        self.variant: Variant = rules.variant
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
            return _refuse(rule, "the decision window is closed")
        if deal.decided(decision.box, "play"):
            return _refuse(rule, f"{position} has already raised")
        action = decision.action
        if action in (FOLD, "play"):
            return []
        if action == "exchange":
            if self.variant not in ("card_poker_exchange", "poker_with_joker"):
                return _refuse(rule, f"{self.variant} has no card exchange")
            if deal.decided(decision.box, "exchange"):
                return _refuse(rule, f"{position} has already exchanged a card (one card, L366)")
            given = self.cards_given_back(deal, decision, range(1, 2))
            if isinstance(given, Finding):
                return given
            self.give_back(deal, decision.box, given)
            # "The dealer immediately … gives the player a new card instead" (L366–372).
            return [Slot(position, "down", deal.windows_closed)]
        # sixth_card
        if self.variant != "six_card_poker":
            return _refuse(rule, f"{self.variant} has no sixth card")
        if deal.decided(decision.box, "sixth_card"):
            return _refuse(rule, f"{position} already has its sixth card")
        # The player "evaluates the best 5-card combination made out of his 6 cards and makes
        # decision N1 or N2" (L422–424): the card comes at once.
        return [Slot(position, "down", deal.windows_closed)]

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """seed-001 L335 (L391; six-card poker by C21): a box's wrong count puts that box out;
        the dealer with four cards takes one more; any other dealer misdeal or an exposed card
        annuls the round. Each with the bets back plus half the Ante. Poker with Joker (no rule,
        §3.12 [GAP]) and ``irregularities = "refund"``: void, bets returned (G3, L79).

        "The dealer … takes one more card": his fifth card is the deal's last (the script), so
        when he holds four the card he takes is that scripted one, already due; no extra slot
        is added. A report of four while the controller has given him five (or fewer than
        four) disagrees with the deal as read: that is "any other wrong deal".
        """
        if self.rules.irregularities == "refund":
            return Remedy("void", "seed-001 L79", MISDEAL, REFUND)
        rule = _IRREGULARITY_RULE[self.variant]
        box = _box_of(error.position or "")
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


# --- Bombay Poker (seed-000 §8) ----------------------------------------------------------------


class BombayRules(GameRules):
    """The ``[rules]`` of a Bombay Poker table; defaults are seed-000's reading.

    ``boxes`` ≤ 3, default 3 (BMP-B1). One 52-card deck, no jokers (PKH-01), shuffled for every
    round. ``on_fault = "decide"``: a shuffler fault once the deal has begun is cancelled "at the
    discretion of the Floor Manager" (GEN-12; before the deal the engine cancels the hand,
    PKH-22). ``bonus_on_sixth_card``: §32 "The bonus Bet is paid out before the sixth card is
    purchased" against §33 "If the Player buys a sixth card … the bonus Bet is lost" (§14 item
    18): ``lost`` (default, §33, as for an exchange) or ``paid`` (the bonus on the five dealt
    cards stands when the sixth card is bought).
    """

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    boxes: int = pydantic.Field(default=3, ge=1, le=3)
    on_fault: OnFault = "decide"
    bonus_on_sixth_card: Literal["lost", "paid"] = "lost"


_DRAW: Final = 0
"""Windows, by how many the dealer has closed: 0 the draw (§7–9), 1 play/fold and insurance
(§10–15, closed by "insurance closed"), 2 buy a game (§21–24, only when the dealer has none)."""
_PLAY: Final = 1
_BUY: Final = 2


class BombayPoker(_DealerPoker):
    """Bombay Poker (seed-000 §8).

    Windows (each closed by the dealer's ``confirm``):

    1. Draw (§7–9): ``exchange`` (1–5 cards given back, ``cards`` names them), ``sixth_card``,
       ``fold``; no decision = keep the cards. One draw decision per box. The new cards are
       dealt once the window is closed, box by box left to right (§9: "Only after all Players
       have made their decision will the dealer begin to exchange cards from left to right"),
       face down.
    2. Play (§10): ``play`` (the BET) or ``fold``; insurance is a money bet (§11–15); the
       dealer's ``confirm`` is "insurance closed" (§15), then he reveals (PKH-15).
    3. Buy a game, only if the dealer has no game (§21–24): ``buy_game``. After the ``confirm``,
       if any box bought, the dealer's highest card goes to the card corner and the next card
       replaces it, face up; a card of the removed card's rank is put aside and replaced again,
       without limit, "unless the selected cards form a combination, such as a flush" (§23,
       V-BMP-4): read as "unless, with that card, the dealer has a game". Only one highest card
       is replaced (§24: still no game → nothing paid).

    The result::

        {"dealer": {"cards": [...], "up_card": "9S", **summary, "qualifies": false,
                    "dealt": [...5], "replacement": {"removed": "QS", "discarded": ["QH"],
                    "bought_by": ["box1"]} | None},
         "dealer_no_game": true,
         "boxes": {"box1": {"cards": [...], "given_back": [...], "sixth_card": false,
                            "folded": false, **summary, "result": "win", "bought_game": true,
                            "combinations": [{**summary, "class": "pair"},
                                             {**summary, "class": "ace_king"}],
                            "second_combination_paid": true, "insurable": false,
                            "bonus": {"cards": [...5], **summary, "eligible": false}}}}
    """

    name: ClassVar[str] = "bombay_poker"
    rules_model: ClassVar[type[GameRules]] = BombayRules
    decision_actions: ClassVar[frozenset[str]] = frozenset(
        {FOLD, "play", "exchange", "sixth_card", "buy_game"}
    )
    decision_rule = "seed-000 BMP §7–10"
    rules: BombayRules

    def __init__(self, rules: GameRules) -> None:
        assert isinstance(rules, BombayRules)
        super().__init__(rules)
        self.rules = rules

    # -- the dealer ------------------------------------------------------------------------------

    def dealer_dealt(self, deal: Deal) -> list[Card]:
        return self.dealt(deal, DEALER)[:5]

    def dealer_has_game(self, deal: Deal) -> bool:
        """ "at least an ace-king combination" (§18), on the five cards dealt."""
        return qualifies(self.value(self.dealer_dealt(deal)), "ace_king")

    def buyers(self, deal: Deal) -> list[int]:
        return [b for b in self.live_boxes(deal) if deal.decided(b, "buy_game")]

    # -- hooks -----------------------------------------------------------------------------------

    def waiting(self, deal: Deal) -> bool:
        if not self.live_boxes(deal):
            return False
        window = deal.windows_closed
        if window < _BUY:
            return True  # the draw, then play/insurance ("insurance closed", §15)
        return window == _BUY and not self.dealer_has_game(deal)

    def more(self, deal: Deal) -> Sequence[Slot]:
        """The draw cards once the draw window is closed (left to right, §9), and the dealer's
        replacement loop once the buy window is closed (§23, V-BMP-4)."""
        notes = deal.notes
        if deal.windows_closed > _DRAW and not notes.get("draw_dealt"):
            notes["draw_dealt"] = True
            slots: list[Slot] = []
            for box in deal.boxes:  # box order: box1 is the dealer's left (PKH-09, §9)
                if box_name(box) in deal.void_positions:
                    continue
                if deal.decided(box, "exchange"):
                    n = len(self.given_back(deal, box))
                elif deal.decided(box, "sixth_card"):
                    n = 1
                else:
                    continue
                slots += [Slot(box_name(box), "down", _PLAY)] * n
            if slots:
                return slots
        if deal.windows_closed > _BUY and self.buyers(deal):
            return self._replace(deal)
        return []

    def _replace(self, deal: Deal) -> list[Slot]:
        """One step of the dealer's card replacement (§23–24, V-BMP-4)."""
        notes = deal.notes
        hand = deal.hands[DEALER]
        replacement: dict[str, Any] | None = notes.get("replacement")
        slot = [Slot(DEALER, "up", _BUY + 1)]
        if replacement is None:
            # No game means five different ranks, so the highest card is one card.
            highest = max(hand, key=_value)
            hand.remove(highest)
            notes["replacement"] = {"removed": highest, "discarded": [], "done": False}
            return slot
        if replacement["done"]:
            return []
        removed: Card = replacement["removed"]
        new = hand[-1]
        if new.rank == removed.rank and not qualifies(self.value(hand), "ace_king"):
            # "they eliminate that card and take a new one (unless the selected cards form a
            # combination …) … with no limit to the number of replacements" (§23).
            hand.remove(new)
            replacement["discarded"].append(new)
            return slot
        replacement["done"] = True
        return []

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        refused = self.check_box(deal, decision)
        if refused is not None:
            return refused
        box, action = decision.box, decision.action
        position = box_name(box)
        window = deal.windows_closed
        if action == "buy_game":
            if window != _BUY or self.dealer_has_game(deal):
                return _refuse(
                    "seed-000 BMP §21", "a game is bought only when the dealer has none (§21)"
                )
            if deal.decided(box, "buy_game"):
                return _refuse("seed-000 BMP §21", f"{position} has already bought the game")
            return []
        drew = deal.decided(box, "exchange") or deal.decided(box, "sixth_card")
        if action == FOLD:
            if window > _PLAY:
                return _refuse("seed-000 BMP §10", "the dealer has revealed: no more folds")
            if window == _DRAW:
                if drew:
                    return _refuse("seed-000 BMP §7", f"{position} has already drawn (one choice)")
                # "the Player's immediate surrender": the bonus is not checked (§34).
                deal.notes.setdefault("surrendered", set()).add(box)
            return []
        if action == "play":
            if window != _PLAY or deal.decided(box, "play"):
                return _refuse(
                    "seed-000 BMP §10", "the BET is placed once, after the exchange (§10)"
                )
            return []
        # exchange or sixth card: the draw window only, one draw decision per box (§7).
        if window != _DRAW:
            return _refuse("seed-000 BMP §9", "the draw window is closed")
        if drew:
            return _refuse("seed-000 BMP §7", f"{position} has already drawn (one choice)")
        if action == "exchange":
            given = self.cards_given_back(deal, decision, range(1, 6))
            if isinstance(given, Finding):
                return given
            self.give_back(deal, box, given)
        return []  # the cards come after the window (see :meth:`more`)

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """PKH-21: "If the dealer deals the wrong number of cards or deals any cards face up, all
        cards will be reshuffled and Bets will remain untouched".

        Once the dealer has revealed ("insurance closed" confirmed, PKH-15: he opens his cards,
        then the players'), every card lies open and the dealer's replacement cards are dealt
        face up: a card exposed then is only noted (:data:`FACE_UP_ANYWAY`).
        """
        if error.kind == "card_exposed" and deal.windows_closed >= _BUY:
            return Remedy("note", "PKH-15", remedy=FACE_UP_ANYWAY)
        return Remedy("void", "PKH-21", MISDEAL, RESHUFFLE_BETS_STAND)

    # -- outcome ---------------------------------------------------------------------------------

    def outcome(self, deal: Deal) -> dict[str, Any]:
        dealt = self.dealer_dealt(deal)
        initial = self.value(dealt)
        has_game = qualifies(initial, "ace_king")
        final_cards = deal.hand(DEALER)
        final = self.value(final_cards)
        final_game = qualifies(final, "ace_king")
        replacement: dict[str, Any] | None = deal.notes.get("replacement")
        boxes: dict[str, Any] = {}
        for box in deal.boxes:
            position = box_name(box)
            if position in deal.void_positions:  # never by PKH-21; kept for completeness
                boxes[position] = self.void_box(deal, box)
                continue
            cards = deal.hand(position)
            hand = self.value(cards)
            bought = deal.decided(box, "buy_game")
            if self.folded(deal, box):
                result = FOLD
            elif has_game:
                result = settle(hand, initial, dealer_qualifies=True, tie=PUSH)
            elif not bought:
                result = DEALER_NO_GAME  # the box takes the ANTE (§21)
            else:
                result = settle(hand, final, dealer_qualifies=final_game, tie=PUSH)
                if result == DEALER_NO_GAME:
                    result = NO_GAME_AFTER_BUY  # §24
            first, second = bombay_combinations(cards)
            combos = [c for c in (first, second) if c is not None]
            boxes[position] = {
                **self.box_base(deal, box),
                **summary(hand),
                "result": result,
                "bought_game": bought,
                "combinations": [_combination_summary(c) for c in combos],
                # BMP-H3: both paid "if one combination is higher than the dealer's".
                "second_combination_paid": second is not None and result == WIN,
                # §11: insurance "with Three of a Kind or better".
                "insurable": qualifies(hand, "three_of_a_kind"),
                "bonus": self._bonus(deal, box),
            }
        return {
            "dealer": {
                "cards": hand_codes(final_cards),
                "up_card": dealt[4].code,
                **summary(final),
                "qualifies": final_game,
                "dealt": hand_codes(dealt),
                "replacement": None
                if replacement is None
                else {
                    "removed": replacement["removed"].code,
                    "discarded": hand_codes(replacement["discarded"]),
                    "bought_by": [box_name(b) for b in self.buyers(deal)],
                },
            },
            "dealer_no_game": not final_game,
            "boxes": boxes,
        }

    def _bonus(self, deal: Deal, box: int) -> dict[str, Any]:
        """The Bonus bet "starts from a straight" (§31) on the five cards dealt; "If the Player
        buys a sixth card or exchanges cards, the bonus Bet is lost" (§33; the sixth card by
        ``bonus_on_sixth_card``), and the cards are not checked on "the Player's immediate
        surrender" (§34): a fold in the draw window."""
        first_five = self.dealt(deal, box_name(box))[:5]
        hand = self.value(first_five)
        lost = deal.decided(box, "exchange") or (
            deal.decided(box, "sixth_card") and self.rules.bonus_on_sixth_card == "lost"
        )
        surrendered = box in deal.notes.get("surrendered", set())
        return {
            "cards": hand_codes(first_five),
            **summary(hand),
            "eligible": qualifies(hand, "straight") and not lost and not surrendered,
        }


def _combination_summary(hand: HandValue) -> dict[str, Any]:
    """A Bombay combination: its summary, paytable line and the cards that form it (BMP-H3)."""
    described = {**summary(hand), "hand": "ace-king"} if _is_ace_king(hand) else summary(hand)
    return {
        **described,
        "class": combination_class(hand, ace_king="ace_king", pair="pair"),
        "combination_cards": hand_codes(combination_cards(hand)),
    }
