"""21 Bet, Jokerbet and Top Card: the scripted games of seed-001 that are not poker hands.

Issue 8, Deliver 2. Three games of ``../shared/rules/seed-001-live-casino-regulations.md`` (``L…`` =
source line, ``C…`` = a §12 contradiction), each a :class:`~tablectl.controller.games.cards.deal.
BaseGame` run by :class:`~tablectl.controller.engines.cards.CardEngine`.
``docs/games/single_card.md`` has the same readings in table form.

- :class:`Bet21` (``bet21``, §3.21, L3495–3537): two "conditional players" (``player1``,
  ``player2``) dealt two cards each from a 36-card deck (6 to A, L3499), then one card a round to
  each player still below 17 (L3497), within the dealing limits of C23. The draws are the
  :meth:`Bet21.more` hook, one card at a time, so that a bust ends the deal at once.
- :class:`Jokerbet` (``jokerbet``, §3.20, L3153–3319): one card a round, face up, from a 54-card
  deck (52 + a red and a black joker, L3155) dealt through to its end (reshuffle ``"shoe"``:
  "When one color-backed deck is finished, it is replaced by a deck of the other color", L3157).
  The result names every outcome item the card wins (L3161–3311).
- :class:`TopCard` (``top_card``, §3.23, L1597–1599, "Top Card Trump"): one card to the player and
  one to the dealer from a 6-deck shoe, A high, 2 low; on a tie the player folds or goes to war
  (:meth:`TopCard.decide`): three cards burned face down, then one card each.

What the framework cannot do yet (see the doc's "Framework changes"): a game cannot refuse a card
as it is placed (Jokerbet's unnumbered ``JK``), the shoe counts jokers by rank (a second ``JK1``
in one Jokerbet deck passes), and a card read while a decision window is open but no card is
queued is the engine's ``extra_card`` (Top Card's war card before the decision).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    DECISION_REFUSED,
    BaseGame,
    Deal,
    DealScript,
    GameRules,
    Slot,
    Step,
    hand_codes,
)
from tablectl.controller.games.cards.shoe import LastCoup, OnFault
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

__all__ = [
    "BET21_POSITIONS",
    "FOREIGN_CARD",
    "JOKER_UNIDENTIFIED",
    "TOP_CARD_ORDER",
    "Bet21",
    "Bet21Rules",
    "Jokerbet",
    "JokerbetRules",
    "TopCard",
    "TopCardRules",
    "bet21_next",
    "bet21_points",
    "golden_point",
    "jokerbet_facts",
    "top_card_value",
]

# Result flags (``result["irregular"]``), stable like verdict codes (docs/games/single_card.md).
FOREIGN_CARD: Final = "foreign_card"
"""21 Bet: a 2, 3, 4 or 5 was dealt, which a 36-card deck does not hold (L3499). The shoe holds
the round for it (``rank_not_in_deck``); if the supervisor lets it settle (``confirm``), the
result has no winner and carries this flag."""
JOKER_UNIDENTIFIED: Final = "joker_unidentified"
"""Jokerbet: a joker read as plain ``JK``, so its colour (red ``JK1`` / black ``JK2``) and the
colour bets it settles are unknown (L3155, items 67–68, 73–74)."""

# The rule book's remedy for a deal irregularity in these games: none of them states one
# (§10: "none"), so the general rule applies: "In case of communication failure or other technical
# shortcomings, the bet is calculated with the odds of 1 (one)" (seed-001 G1 L59) = refund.
_DEAL_ERROR_RULE: Final = "seed-001 G1 L59"


# -- 21 Bet (seed-001 §3.21) ---------------------------------------------------------------------

BET21_POSITIONS: Final = ("player1", "player2")
"""The two conditional players "to the right and left of the dealer", dealt in this order
(L3497: "first deals two cards to Player 1 and two cards to Player 2")."""

_BET21_RANKS: Final = frozenset("6789TJQKA")
"""The 36-card deck: "from Six to Ace of each of the four suits" (L3499)."""
_BET21_VALUES: Final = {"J": 2, "Q": 3, "K": 4, "T": 10, "A": 1}
"""L3499: 6–10 face value; J = 2, Q = 3, K = 4, A = 1 or 11 (the 11 is added in
:func:`bet21_points`)."""
_STAND: Final = 17
"""L3497: "The dealer cannot add cards to either of players if they already have 17 or more"."""


def _bet21_value(card: Card) -> int:
    """A card's value with A = 1; a 2–5 (not in the 36-card deck) at face value, so that a foreign
    card the supervisor let through still gives a total (the result flags it,
    :data:`FOREIGN_CARD`)."""
    if card.is_joker:
        raise RuleError("a joker has no value in 21 Bet")
    return _BET21_VALUES.get(card.rank) or int(card.rank)


def bet21_points(cards: Sequence[Card]) -> int:
    """The points of a 21 Bet hand: the best total, one ace counting 11 when that stays within 21
    (L3499 "A = 1 or 11"). Two aces count 12 (they are a golden point all the same,
    :func:`golden_point`).

    Raises:
        ValueError: a joker.
    """
    total = sum(_bet21_value(c) for c in cards)
    if any(c.rank == "A" for c in cards) and total + 10 <= 21:
        total += 10
    return total


def golden_point(cards: Sequence[Card]) -> bool:
    """A golden point: 21 with the first two cards, or two aces ("two Aces are considered a
    winning combination", L3497). Only the deal's two cards make one ("collected … at once")."""
    if len(cards) != 2:
        return False
    return bet21_points(cards) == 21 or all(c.rank == "A" for c in cards)


def _foreign(cards: Sequence[Card]) -> list[Card]:
    return [c for c in cards if c.rank not in _BET21_RANKS]


def bet21_next(
    hand1: Sequence[Card],
    hand2: Sequence[Card],
    *,
    dealing_rounds: int = 4,
    max_extra_cards: int = 3,
) -> Literal["player1", "player2"] | None:
    """The player due the next draw card, or ``None`` when the deal is over (L3497).

    The deal's two cards each are dealing round 1. Then, unless a player has a golden point, each
    draw round gives one card to player 1 and then one to player 2, each only while below 17 ("the
    dealer adds a card to both players one by one each possible round … cannot add cards … if
    they already have 17 or more"). The deal stops at once when a player busts ("until either of
    them … gets busted": the opponent wins, nothing is left to decide), and after
    ``dealing_rounds`` rounds or ``max_extra_cards`` draw cards to a player (C23). A card the
    36-card deck does not hold stops the deal too (:data:`FOREIGN_CARD`).

    The answer depends on the hands alone (replayed from their first draw card), so the
    :meth:`Bet21.more` hook is a pure function of the deal.
    """
    hands = (list(hand1), list(hand2))
    if len(hands[0]) < 2 or len(hands[1]) < 2:
        return None
    if _foreign(hands[0] + hands[1]):
        return None
    if golden_point(hands[0][:2]) or golden_point(hands[1][:2]):
        return None
    dealt = [2, 2]
    for _ in range(dealing_rounds - 1):
        for p in (0, 1):
            if any(bet21_points(hands[q][: dealt[q]]) > 21 for q in (0, 1)):
                return None
            if bet21_points(hands[p][: dealt[p]]) >= _STAND or dealt[p] - 2 >= max_extra_cards:
                continue
            if dealt[p] < len(hands[p]):
                dealt[p] += 1
            else:
                return BET21_POSITIONS[p]
    return None


class Bet21Rules(GameRules):
    """The ``[rules]`` of a 21 Bet table; defaults are seed-001's reading (§3.21).

    One 36-card deck (L3499) shuffled for every round ("Per-round reshuffle is not stated" [GAP];
    a round takes at most 10 of its 36 cards, and §10 "no duplicates within a round"). C23: "The
    maximum game duration is 4 rounds of card dealing. Additionally, no more than three cards can
    be dealt to each player to determine the winner", while the outcomes include "Win with (4)
    cards" and "(5) cards" (L3515–3517). Read together: the deal (2 + 2) is round 1, at most three
    draw rounds follow, and "three cards" are the draw cards, so a hand holds at most 5 cards.
    """

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    ranks: Literal["6789TJQKA"] = "6789TJQKA"
    """The 36-card deck, "from Six to Ace of each of the four suits" (L3499): the shoe refuses a
    2–5 (``rank_not_in_deck``, a hold) and expects the shuffler to count 36 cards."""
    dealing_rounds: int = pydantic.Field(default=4, ge=1, le=8)
    """Dealing rounds including the deal of two cards each (L3497, C23)."""
    max_extra_cards: int = pydantic.Field(default=3, ge=0, le=7)
    """Draw cards a player may take beyond the two of the deal (L3497, C23); 1 is the other
    reading of "no more than three cards" (three cards in all)."""


class Bet21(BaseGame):
    """21 Bet (seed-001 §3.21, L3495–3537): see the module docstring and :func:`bet21_next`."""

    name: ClassVar[str] = "bet21"
    script = DealScript((Step(BET21_POSITIONS, count=2, rotate=False),), reshuffle="every_round")
    rules_model: ClassVar[type[GameRules]] = Bet21Rules
    deal_error_rule: ClassVar[str] = _DEAL_ERROR_RULE

    @property
    def _rules(self) -> Bet21Rules:
        assert isinstance(self.rules, Bet21Rules)
        return self.rules

    def more(self, deal: Deal) -> Sequence[Slot]:
        position = bet21_next(
            deal.hand("player1"),
            deal.hand("player2"),
            dealing_rounds=self._rules.dealing_rounds,
            max_extra_cards=self._rules.max_extra_cards,
        )
        return [] if position is None else [Slot(position)]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The facts of the 15 outcome items (L3505–3533): the winner (P1 / P2 / draw), the
        winner's card count (2–5) and points (17–21), bust / no bust, golden point.

        Winner: a golden point on the deal wins (both: draw); else a bust loses ("Bust → the
        opponent wins"); else the points closest to 21 win, equal points are a draw (L3497). A
        deal stopped by the limits with a player below 17 is judged the same way
        (``limit_reached``; the rule book is silent [GAP]). A foreign card leaves no winner:
        ``irregular = "foreign_card"`` (the bets cannot be settled on a wrong deck).
        """
        hands = {p: deal.hand(p) for p in BET21_POSITIONS}
        foreign = _foreign(hands["player1"] + hands["player2"])
        points = {p: bet21_points(h) for p, h in hands.items()}
        golden = {p: golden_point(h) for p, h in hands.items()}
        bust = {p: points[p] > 21 for p in BET21_POSITIONS}
        winner: str | None
        if foreign:
            winner = None
        elif golden["player1"] != golden["player2"]:
            winner = "player1" if golden["player1"] else "player2"
        elif golden["player1"]:
            winner = "draw"
        elif bust["player1"] or bust["player2"]:
            winner = "player2" if bust["player1"] else "player1"
        elif points["player1"] == points["player2"]:
            winner = "draw"
        else:
            winner = "player1" if points["player1"] > points["player2"] else "player2"
        won = winner in hands
        extra = [len(h) - 2 for h in hands.values()]
        limit_reached = (
            winner is not None
            and not any(golden.values())
            and not any(bust.values())
            and any(points[p] < _STAND for p in BET21_POSITIONS)
        )
        return {
            **{
                p: {
                    "cards": hand_codes(hands[p]),
                    "points": points[p],
                    "bust": bust[p],
                    "golden_point": golden[p],
                }
                for p in BET21_POSITIONS
            },
            "winner": winner,
            "winner_cards": len(hands[winner]) if won and winner else None,
            "winner_points": points[winner] if won and winner else None,
            "golden_point": bool(won and winner and golden[winner]),
            "bust": any(bust.values()),
            "draw_rounds": max(extra),
            "limit_reached": limit_reached,
            "foreign_cards": hand_codes(foreign),
            "irregular": FOREIGN_CARD if foreign else None,
        }


# -- Jokerbet (seed-001 §3.20) -------------------------------------------------------------------

_RED_SUITS: Final = frozenset("HD")
"""Items 73–74: "black card (♠, ♣, black joker)", "red card (♦, ♥, red joker)" (L3161–3311)."""
_JOKER_COLOURS: Final = {"1": "red", "2": "black"}
"""The two jokers, "red and black" (L3155): the scanner reports the red one as ``JK1`` and the
black one as ``JK2`` (a convention of this controller; the rule book names no codes)."""
_DIGITAL: Final = frozenset("23456789T")
"""Item 76 "digital" (2–10); item 75 "non-digital" is J, Q, K, A and the jokers (L3161–3311)."""


def jokerbet_facts(card: Card) -> dict[str, Any]:
    """What one Jokerbet card settles (the 76 items of L3161–3311), as named facts.

    ``winning_items`` names every item the card wins: ``rank:<r>`` (items 1–13, 2…A), ``joker``
    (14), ``card:<code>`` (15–66), ``joker:red`` / ``joker:black`` (67–68), ``suit:<s>``
    (69–72), ``colour:black`` / ``colour:red`` (73–74), ``non_digital`` (75), ``digital`` (76).
    A plain ``JK`` wins ``joker`` and ``non_digital`` only; its colour items are unresolved
    (:data:`JOKER_UNIDENTIFIED`).
    """
    if card.is_joker:
        colour = _JOKER_COLOURS.get(card.joker_id)
        items = ["joker", *([f"joker:{colour}", f"colour:{colour}"] if colour else [])]
        return {
            "card": card.code,
            "rank": None,
            "suit": None,
            "joker": True,
            "joker_colour": colour,
            "colour": colour,
            "digital": False,
            "winning_items": [*items, "non_digital"],
            "irregular": None if colour else JOKER_UNIDENTIFIED,
        }
    colour = "red" if card.suit in _RED_SUITS else "black"
    digital = card.rank in _DIGITAL
    return {
        "card": card.code,
        "rank": card.rank,
        "suit": card.suit,
        "joker": False,
        "joker_colour": None,
        "colour": colour,
        "digital": digital,
        "winning_items": [
            f"rank:{card.rank}",
            f"card:{card.code}",
            f"suit:{card.suit}",
            f"colour:{colour}",
            "digital" if digital else "non_digital",
        ],
        "irregular": None,
    }


class JokerbetRules(GameRules):
    """The ``[rules]`` of a Jokerbet table; defaults are seed-001's reading (§3.20).

    One deck of 54 cards: "52 + two jokers – red and black" (L3155), dealt one card a round to its
    end, then replaced (L3157): the shoe's composition check refuses a card seen twice in one
    deck. ``decks``, ``jokers_per_deck`` and ``ranks`` are pinned to that deck. The back colour
    alternation (L3157) is not visible to the controller [GAP].
    """

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=2, ge=2, le=2)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    cut_card_min_behind: int = pydantic.Field(default=0, ge=0)


class Jokerbet(BaseGame):
    """Jokerbet (seed-001 §3.20, L3153–3319): "Only one card is drawn and placed face-up in each
    draw" (L3155) from the card shoe, which runs through its 54-card deck (reshuffle ``"shoe"``)."""

    name: ClassVar[str] = "jokerbet"
    script = DealScript((Step(("card",)),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = JokerbetRules
    deal_error_rule: ClassVar[str] = _DEAL_ERROR_RULE

    def check(self, deal: Deal, slot: Slot, card: Card) -> Finding | None:
        """A joker read without its colour leaves the Red/Black Joker and colour items (L3161–3311)
        undecided: the round waits for a supervisor, who confirms (settled as unidentified) or
        voids."""
        del deal, slot
        if card.is_joker and not card.joker_id:
            return Finding(
                JOKER_UNIDENTIFIED,
                "seed-001 L3157",
                "a joker without its colour (JK1 red, JK2 black): supervisor decision",
                severity="hold",
            )
        return None

    def outcome(self, deal: Deal) -> dict[str, Any]:
        (card,) = deal.hand("card")
        return jokerbet_facts(card)


# -- Top Card Trump (seed-001 §3.23) -------------------------------------------------------------

_TOP_CARD_RANKS: Final = "23456789TJQKA"
"""L1599: "A is highest, 2 lowest"; suits do not rank [GAP: not stated; as War of Bets, L2619]."""

TOP_CARD_ORDER: Final = ("player", "dealer")
"""Who gets the first card, in the deal and in a war. Not stated [GAP]: the player first, as in
its sibling War of Bets ("The first card is always placed on the 'Player' section", L2621). The
war sentence "1 card face up to himself and the player" (L1599) lists the dealer first, but it
names who gets a card, not an order; a deal order does not change the result (two cards, one
each, both face up)."""


def top_card_value(card: Card) -> int:
    """A card's rank, 2 = 2 … A = 14 (L1599).

    Raises:
        ValueError: a joker.
    """
    if card.is_joker:
        raise RuleError("a joker has no rank in Top Card")
    return _TOP_CARD_RANKS.index(card.rank) + 2


class TopCardRules(GameRules):
    """The ``[rules]`` of a Top Card Trump table; defaults are seed-001's reading (§3.23).

    "6 decks" (L1599) in a shoe dealt to its cut card. A round takes at most 7 cards (2, then 3
    burned and 2 in a war), so the cut card must leave 7 behind it (derived like dragon tiger's
    2; the rule book has no cut-card rule). One player position (a "Deal button" game, L1599).
    """

    decks: int = pydantic.Field(default=6, ge=1, le=16)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)
    ranks: Literal["A23456789TJQK"] = "A23456789TJQK"
    boxes: int = pydantic.Field(default=1, ge=1, le=1)
    cut_card_min_behind: int = pydantic.Field(default=7, ge=0)
    last_coup: LastCoup = "current"
    on_fault: OnFault = "void"
    war_burn: int = pydantic.Field(default=3, ge=0, le=5)
    """Cards burned face down before the war cards: "The dealer deals 3 cards face down" (L1599)."""


class TopCard(BaseGame):
    """Top Card Trump (seed-001 §3.23, L1597–1599).

    The deal is one card face up to the player, then one to the dealer (:data:`TOP_CARD_ORDER`).
    A tie opens the player's decision (:meth:`waiting`): ``war`` (raise = the main bet) deals
    ``war_burn`` cards face down to ``burn`` and one card each to ``war_player`` and
    ``war_dealer``; ``fold`` ends the round ("dealer takes the half of the bet"). The dealer's
    ``confirm`` with no decision closes the window as a fold: the player did not raise, and a war
    cannot be played without the raise (L1599 "War (raise = main bet)").
    """

    name: ClassVar[str] = "top_card"
    script = DealScript((Step(TOP_CARD_ORDER),), reshuffle="shoe")
    rules_model: ClassVar[type[GameRules]] = TopCardRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"war", "fold"})
    deal_error_rule: ClassVar[str] = _DEAL_ERROR_RULE

    def __init__(self, rules: GameRules) -> None:
        super().__init__(rules)
        assert isinstance(rules, TopCardRules)
        self._burn = rules.war_burn

    @staticmethod
    def _tie(deal: Deal) -> bool:
        player, dealer = deal.hand("player"), deal.hand("dealer")
        return (
            len(player) == 1
            and len(dealer) == 1
            and top_card_value(player[0]) == top_card_value(dealer[0])
        )

    def waiting(self, deal: Deal) -> bool:
        """A tie waits for the player's war or fold, or the dealer's ``confirm`` (L1599)."""
        return self._tie(deal) and not deal.decisions and deal.windows_closed == 0

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``war``: the burned cards and one card each (L1599); ``fold``: nothing more. Either only
        once, on a tie, before the dealer closed the window."""
        if not self._tie(deal):
            return Finding(
                DECISION_REFUSED, "seed-001 L1599", f"{decision.action!r} is only taken on a tie"
            )
        if deal.decisions or deal.windows_closed:
            return Finding(DECISION_REFUSED, "seed-001 L1599", "the tie is already decided")
        if decision.action == "fold":
            return []
        burn = [Slot("burn", "down") for _ in range(self._burn)]
        return [*burn, *(Slot(f"war_{p}") for p in TOP_CARD_ORDER)]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The cards, the winner and, on a tie, the decision and the war (L1599).

        ``winner`` is ``"player"`` / ``"dealer"``, or ``None`` on a fold. ``settlement`` names the
        rule book's remedy where the tie changes the bets: fold → ``half_bet_to_dealer``; war won
        (a war tie "passes to the player") → ``raise_even_money_main_refunded`` ("wins even money
        on the raise only and the main bet is subject to refund"); war lost → ``all_bets_lost``.
        The war's face-down cards are withheld while the round runs and revealed here, like every
        face-down card of a scripted game (seed-000 L79), under ``war.burn``.
        """
        (player,) = deal.hand("player")
        (dealer,) = deal.hand("dealer")
        p, d = top_card_value(player), top_card_value(dealer)
        result: dict[str, Any] = {
            "player": {"cards": [player.code]},
            "dealer": {"cards": [dealer.code]},
            "tie": p == d,
            "decision": None,
            "war": None,
            "winner": "player" if p > d else "dealer" if d > p else None,
            "settlement": None,
        }
        if p != d:
            return result
        war = any(x.action == "war" for x in deal.decisions)
        result["decision"] = "war" if war else "fold"
        if not war:
            result["fold_by"] = "decision" if deal.decisions else "confirm"
            result["settlement"] = "half_bet_to_dealer"
            return result
        (war_player,) = deal.hand("war_player")
        (war_dealer,) = deal.hand("war_dealer")
        wp, wd = top_card_value(war_player), top_card_value(war_dealer)
        winner = "player" if wp >= wd else "dealer"
        result["war"] = {
            "burned": len(deal.hand("burn")),
            "burn": {"cards": hand_codes(deal.hand("burn"))},
            "player": {"cards": [war_player.code]},
            "dealer": {"cards": [war_dealer.code]},
            "tie": wp == wd,
            "winner": winner,
        }
        result["winner"] = winner
        result["settlement"] = (
            "raise_even_money_main_refunded" if winner == "player" else "all_bets_lost"
        )
        return result
