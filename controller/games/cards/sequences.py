"""Card-sequence games of seed-001: Andar Bahar (§3.8a), Side Bet City (§3.18), Speedy 7 (§3.19).

All three deal one 52-card deck face up, shuffled every round (L3543, L3423, L2515; Speedy 7's
shuffle is a §3.19 [GAP]); the shoe refuses a repeated card (§3.0 (1)). No irregularity rule or
void clause exists (§2.2), so a ``deal_error`` or device fault voids with bets returned (§2 G1
L59, G3 L79). Outcomes are facts, never money (seed-000 PKH-17). Readings and gaps:
``docs/games/sequences.md``."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal, Self, TypeAlias

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import BetsClosed
from tablectl.controller.games.cards.deal import (
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Slot,
    Step,
    hand_codes,
)
from tablectl.controller.games.cards.poker import (
    HandCategory,
    HandValue,
    ThreeCardCategory,
    best_of,
    evaluate3,
    evaluate5,
    summary,
)
from tablectl.drivers.cards import Card

Side: TypeAlias = Literal["andar", "bahar"]
Colour: TypeAlias = Literal["red", "black"]
AceRank: TypeAlias = Literal["high", "low"]

ANDAR: Final = "andar"
BAHAR: Final = "bahar"
SIDES: Final[tuple[Side, Side]] = ("andar", "bahar")
JOKER: Final = "joker"
"""Andar Bahar's first card, the "Joker Card" (L3543): an ordinary card, not a joker."""
BOARD: Final = "board"
"""Side Bet City's seven cards (L3427)."""
CARDS: Final = "cards"
"""Speedy 7's seven cards (L2515)."""

RED: Final = "red"
BLACK: Final = "black"

SUIT_NAMES: Final[dict[str, str]] = {"H": "hearts", "S": "spades", "D": "diamonds", "C": "clubs"}
"""The Joker suit side bets, as the rule book names them (L3577–3583)."""

RULE_BOOK_BRACKETS: Final[tuple[int, ...]] = (1, 6, 11, 16, 26, 31, 36, 41)
"""Andar Bahar's "Number of dealt cards" side bets as lower bounds (L3553–3567): 1–5, 6–10,
11–15, 16–25 (10 wide: seed-001 C19), 26–30, 31–35, 36–40, "41 and more"."""

MAX_AFTER_JOKER: Final = 49
"""One deck: after the joker 48 cards of other ranks and 3 of its rank remain, so the match is
at most the 49th card after the joker (seed-001 §3.8a [DERIVED])."""

_RED_SUITS: Final = frozenset("HD")
_PIP: Final[dict[str, int]] = {"T": 10, "J": 11, "Q": 12, "K": 13}


def colour(card: Card) -> Colour:
    """``red`` for ♦ ♥, ``black`` for ♠ ♣ (Speedy 7 L2515; Andar Bahar L3569–3575)."""
    return "red" if card.suit in _RED_SUITS else "black"


def _rank_value(card: Card, ace: AceRank) -> int:
    if card.rank == "A":
        return 14 if ace == "high" else 1
    return _PIP.get(card.rank) or int(card.rank)


def compare_rank(card: Card, pivot: int, ace: AceRank = "high") -> str:
    """``lower``/``equal``/``higher`` than ``pivot`` (7 or 8): the Joker Card's "LOWER than 7 /
    7 / HIGHER than 7" and "… 8" side bets (L3585–3595). Where the ace stands is not stated
    [GAP]: ``ace`` (the rule book lists the deck "from 2 to an Ace", L3543, so high)."""
    value = _rank_value(card, ace)
    return "lower" if value < pivot else "equal" if value == pivot else "higher"


def bracket_label(count: int, brackets: Sequence[int] = RULE_BOOK_BRACKETS) -> str:
    """The "Number of dealt cards" side bet ``count`` falls in (L3553–3567): ``"1-5"``,
    ``"16-25"``, ``"41+"``. ``brackets`` are lower bounds, increasing, the first 1; the last is
    open-ended ("41 and more").

    Raises:
        ValueError: ``count`` below the first bracket.
    """
    if not brackets or count < brackets[0]:
        raise RuleError(f"{count} cards fall in no bracket of {list(brackets)}")
    for low, high in itertools.pairwise(brackets):
        if low <= count < high:
            return f"{low}-{high - 1}"
    return f"{brackets[-1]}+"


def runs(colours: Sequence[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for c in colours:
        if out and out[-1]["colour"] == c:
            out[-1]["length"] += 1
        else:
            out.append({"colour": c, "length": 1})
    return out


class _SequenceRules(GameRules):
    """One 52-card deck per round, no jokers (L3543, L3423, L2515); faults void (§2 G1 L59, G3
    L79)."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    """One deck (L3543, L3423, L2515): more would break the single-deck checks (§3.0 (1))."""
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    """No joker: Andar Bahar's "Joker Card" is an ordinary card (L3543); §3.0 (4)."""
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    """The full 52-card deck, "from 2 to an Ace of each of the 4 suits" (L3543, L2515, L3423)."""


# --- Andar Bahar (seed-001 §3.8a, L3539–3597) -----------------------------------------------------


class AndarBaharRules(_SequenceRules):
    """Andar Bahar's ``[rules]`` (seed-001 §3.8a); each key's reading is in docs/games/sequences.md.

    ``first_side``: L3543 "determined randomly" [GAP], the fallback when ``bets_closed`` has
    none. ``ace``: for the 7/8 side bets (L3585–3595) [GAP]; high, as the deck runs "from 2 to an
    Ace". ``count_brackets``: lower bounds (L3553–3567); the default keeps the 10-wide 16–25
    (C19)."""

    first_side: Side = "andar"
    ace: AceRank = "high"
    count_brackets: list[int] = pydantic.Field(
        default_factory=lambda: list(RULE_BOOK_BRACKETS), min_length=1
    )

    @pydantic.model_validator(mode="after")
    def _check_brackets(self) -> Self:
        b = self.count_brackets
        if b[0] != 1:
            raise RuleError(f"count_brackets must start at 1 (the first card after the joker): {b}")
        if any(low >= high for low, high in itertools.pairwise(b)):
            raise RuleError(f"count_brackets must increase: {b}")
        if b[-1] > MAX_AFTER_JOKER:
            raise RuleError(
                f"count_brackets: {b[-1]} cannot be reached, the match is at most the "
                f"{MAX_AFTER_JOKER}th card after the joker"
            )
        return self


class AndarBahar(BaseGame):
    """Andar Bahar (seed-001 §3.8a, L3539–3597).

    The script holds the joker only; :meth:`more` calls one card at a time, alternating sides
    from ``first_side`` (L3543), until the joker's rank comes. The reader cannot see sides, so
    the controller assigns them; a wrong side is the dealer's ``deal_error``. A card after the
    match is ``extra_card`` (§3.8a [DERIVED]); a 50th card is a repeat (``composition_exceeded``,
    §3.0 (1))."""

    name: ClassVar[str] = "andar_bahar"
    script = DealScript((Step((JOKER,)),), reshuffle="every_round")
    rules_model: ClassVar[type[GameRules]] = AndarBaharRules
    deal_error_rule: ClassVar[str] = "seed-001 G1 L59"
    rules: AndarBaharRules

    def begin(self, deal: Deal, bets_closed: BetsClosed | None) -> None:
        """The RNG's draw on ``bets_closed`` (L3543 "determined randomly"; committed before the
        cards, §2.2 (d)), else ``[rules] first_side``."""
        drawn = bets_closed.first_side if bets_closed is not None else None
        deal.notes["first_side"] = drawn or self.rules.first_side

    @staticmethod
    def _first_side(deal: Deal) -> Side:
        first: Side = deal.notes["first_side"]
        return first

    def _side(self, deal: Deal, index: int) -> Side:
        first = self._first_side(deal)
        other: Side = "bahar" if first == "andar" else "andar"
        return first if index % 2 == 0 else other

    @staticmethod
    def _after_joker(deal: Deal) -> list[tuple[str, Card]]:
        return [(position, card) for position, card, _ in deal.order if position in SIDES]

    def more(self, deal: Deal) -> Sequence[Slot]:
        """L3543: until a card of the joker's rank."""
        joker = deal.hand(JOKER)
        if not joker:
            return []
        after = self._after_joker(deal)
        if after and after[-1][1].rank == joker[0].rank:
            return []
        return [Slot(self._side(deal, len(after)))]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """Winner L3543; joker side bets L3573–3595; winning card L3569–3571; brackets
        L3549–3567."""
        rules = self.rules
        joker = deal.hand(JOKER)[0]
        after = self._after_joker(deal)
        side, match = after[-1]
        return {
            "joker": {
                "card": joker.code,
                "colour": colour(joker),
                "suit": SUIT_NAMES[joker.suit],
                "vs_7": compare_rank(joker, 7, rules.ace),
                "vs_8": compare_rank(joker, 8, rules.ace),
            },
            "first_side": self._first_side(deal),
            "andar": {"cards": hand_codes(deal.hand(ANDAR))},
            "bahar": {"cards": hand_codes(deal.hand(BAHAR))},
            "after_joker": [card.code for _, card in after],
            "winner": side,
            "winning_card": {"card": match.code, "colour": colour(match)},
            "cards_dealt": len(after),
            "cards_bracket": bracket_label(len(after), rules.count_brackets),
        }


# --- Side Bet City (seed-001 §3.18, L3419–3493) ---------------------------------------------------

_THREE_LINES: Final[dict[ThreeCardCategory, str]] = {
    ThreeCardCategory.STRAIGHT_FLUSH: "straight_flush",
    ThreeCardCategory.THREE_OF_A_KIND: "three_of_a_kind",
    ThreeCardCategory.STRAIGHT: "straight",
    ThreeCardCategory.FLUSH: "flush",
    ThreeCardCategory.PAIR: "any_pair",
}
_FIVE_LINES: Final[dict[HandCategory, str]] = {
    HandCategory.STRAIGHT_FLUSH: "straight_flush",
    HandCategory.FOUR_OF_A_KIND: "four_of_a_kind",
    HandCategory.FULL_HOUSE: "full_house",
    HandCategory.FLUSH: "flush",
    HandCategory.STRAIGHT: "straight",
    HandCategory.THREE_OF_A_KIND: "three_of_a_kind",
    HandCategory.TWO_PAIR: "two_pairs",
}
_JACK: Final = 11


def three_card_line(hand: HandValue) -> str | None:
    """The 3 Card Hand's paying line (L3445–3457, L3481–3491); a straight beats a flush
    (L3453–3455)."""
    if hand.is_royal:
        return "royal_flush"
    return _THREE_LINES.get(ThreeCardCategory(int(hand.category)))


def five_card_line(hand: HandValue) -> str | None:
    """The 5 Card Hand's line (L3459–3477, L3481–3490); a pair pays only from jacks (L3477)."""
    if hand.is_royal:
        return "royal_flush"
    category = HandCategory(int(hand.category))
    if category == HandCategory.PAIR:
        return "pair_jj_aa" if hand.ranks[0] >= _JACK else None
    return _FIVE_LINES.get(category)


def seven_card_line(hand: HandValue) -> str | None:
    """The 7 Card Hand's line, best 5 of 7 (L3427, L3459–3473); pairs are "5 Card Hand only"
    (L3475–3477)."""
    if hand.is_royal:
        return "royal_flush"
    category = HandCategory(int(hand.category))
    if category in (HandCategory.TWO_PAIR, HandCategory.PAIR):
        return None
    return _FIVE_LINES.get(category)


def _distinct(cards: Sequence[Card]) -> list[Card]:
    """Repeats told apart, so the evaluator (which refuses a duplicate, PKH-01) can rank a hand a
    supervisor settles after a ``composition_exceeded`` hold."""
    seen: Counter[Card] = Counter()
    out: list[Card] = []
    for card in cards:
        seen[card] += 1
        n = seen[card]
        out.append(card if n == 1 else Card(card.rank, card.suit, f"#{n}"))
    return out


class SideBetCityRules(_SequenceRules):
    """One fresh deck per game (L3423)."""


class SideBetCity(BaseGame):
    """Side Bet City (seed-001 §3.18, L3419–3493).

    Seven cards to ``board`` (L3427) in three stages, 3/2/2 (L3431–3435); the dealer's
    ``confirm`` closes each stage's window (L3433). Hands of 3, 5 and best 5 of 7 (L3427) with
    their paying lines (L3481–3491); ``all_lose`` when none wins (L3437)."""

    name: ClassVar[str] = "side_bet_city"
    script = DealScript(
        (Step((BOARD,), 3), Step((BOARD,), 2, stage=1), Step((BOARD,), 2, stage=2)),
        reshuffle="every_round",
    )
    rules_model: ClassVar[type[GameRules]] = SideBetCityRules
    deal_error_rule: ClassVar[str] = "seed-001 G1 L59"

    def outcome(self, deal: Deal) -> dict[str, Any]:
        cards = deal.hand(BOARD)
        ranked = _distinct(cards)
        three = evaluate3(ranked[:3])
        five = evaluate5(ranked[:5])
        seven = best_of(ranked, 5)
        hands: dict[str, tuple[list[Card], HandValue, str | None]] = {
            "three_card": (cards[:3], three, three_card_line(three)),
            "five_card": (cards[:5], five, five_card_line(five)),
            "seven_card": (cards, seven, seven_card_line(seven)),
        }
        result: dict[str, Any] = {BOARD: {"cards": hand_codes(cards)}}
        for key, (dealt, value, line) in hands.items():
            result[key] = {
                "cards": hand_codes(dealt),
                **summary(value),
                "paying_hand": line,
                "wins": line is not None,
            }
        result["all_lose"] = all(line is None for _, _, line in hands.values())
        return result


# --- Speedy 7 (seed-001 §3.19, L2513–2533) --------------------------------------------------------

SPEEDY_CARDS: Final = 7
"""Seven cards, one per betting round (L2515 "the game consisting of 7 rounds")."""


class Speedy7Rules(_SequenceRules):
    """One deck (L2515); the per-game shuffle is a §3.19 [GAP], read as every round."""


class Speedy7(BaseGame):
    """Speedy 7 (seed-001 §3.19, L2513–2533).

    Seven cards to ``cards``, one per betting round (L2515, L2517): card *k* ≥ 2 waits for the
    dealer's ``confirm`` of window *k*−1. L2519 lists six later rounds (C22); the game has seven.
    Cash-out and "no action" (L2519–2525) are bets, not deal decisions. The outcome's colours,
    counts and runs settle the colour bets and streak bonuses (L2531–2533)."""

    name: ClassVar[str] = "speedy7"
    script = DealScript(
        tuple(Step((CARDS,), stage=k) for k in range(SPEEDY_CARDS)), reshuffle="every_round"
    )
    rules_model: ClassVar[type[GameRules]] = Speedy7Rules
    deal_error_rule: ClassVar[str] = "seed-001 G1 L59"

    def outcome(self, deal: Deal) -> dict[str, Any]:
        cards = deal.hand(CARDS)
        colours: list[str] = [colour(c) for c in cards]
        streaks = runs(colours)
        longest = max(streaks, key=lambda r: int(r["length"]))
        return {
            "cards": hand_codes(cards),
            "colours": colours,
            "counts": {RED: colours.count(RED), BLACK: colours.count(BLACK)},
            "runs": streaks,
            "longest_run": dict(longest),
        }
