"""Community-card poker against the dealer: Ultimate Texas Hold'em, Casino Hold'em, Texas Hold'em.

Issue 8, Deliver 2. Three games, one shape: each player hand and the dealer get two hole cards,
five community cards (flop 3, turn 1, river 1) come out between decision windows, and every hand
is the best five of its seven cards (UTH-H1 §11; seed-001 L579, L621). The shared logic is
:class:`HoldemGame`; the games differ in their deal script (how many windows, how the hole cards
lie), the dealer's qualifying hand and the facts their bets need. Rule ids point into
``../shared/rules/``: seed-000 (``seed-000-bombay-player-guide.md``: PKH-, UTH-, GEN-, §14) and
seed-001 (``seed-001-live-casino-regulations.md``: ``L…`` source lines, ``C…`` contradictions).
``docs/games/holdem.md`` has the same readings in table form.

- ``ultimate_texas_holdem`` (:class:`UltimateTexasHoldem`, seed-000 §6): up to 5 boxes (6 in a
  "special game", UTH-B1), hole cards face down to the boxes and the dealer in rotation (PKH-09),
  three decision windows (pre-flop §5, flop §7, river §9), dealer qualifies with a pair (UTH-H2
  §12; ``dealer_qualifies = "two_pair"`` is §17's reading, seed-000 §14 item 1).
- ``casino_holdem`` (:class:`CasinoHoldem`, seed-001 §3.14 L563–617): one player hand, player 2
  up, dealer 2 down, flop 3 up (L569–573), one window (Call or Fold, L571), turn and river,
  dealer qualifies with a pair of fours (L587).
- ``texas_holdem`` (:class:`TexasHoldemVsDealer`, seed-001 §3.15 L619–679): Casino Hold'em
  (L621) with three windows (L625–633), Blind and Trips (L623, L637), dealer qualifies with a
  pair (L645).

Community cards are face up: the rule books open them after each window (UTH §6, §8; L571,
L573), and a shoe reader sees a card when it is dealt, so a community card is dealt when it is
opened. Outcomes carry facts, never money (paytables are table configuration, PKH-17): for each
hand its result against the dealer and what each bet does ("win", "push", "lose", "paytable" =
pays by the hand's :func:`paytable_hand` on the table's paytable).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal, TypeAlias, cast

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    DECISION_REFUSED,
    MISDEAL,
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
from tablectl.controller.games.cards.poker import HandValue, best_of, evaluate5, qualifies, summary
from tablectl.controller.games.cards.shoe import OnFault
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import RANKS, Card

__all__ = [
    "MISDEAL",
    "RESHUFFLE_BETS_STAND",
    "CasinoHoldem",
    "CasinoHoldemRules",
    "HoldemGame",
    "HoldemRules",
    "TexasHoldemRules",
    "TexasHoldemVsDealer",
    "UltimateTexasHoldem",
    "UltimateTexasHoldemRules",
    "Versus",
    "paytable_hand",
    "versus_bets",
]

Versus: TypeAlias = Literal["win", "lose", "tie"]
"""A player hand against the dealer's: higher, lower, or the same five-card value (UTH-H1)."""

_PUSH_IF_TIE: Final[dict[str, str]] = {"win": "win", "lose": "lose", "tie": "push"}
_WINNER: Final[dict[str, str]] = {"win": "player", "lose": "dealer", "tie": "tie"}


# --- rules ---------------------------------------------------------------------------------------


class HoldemRules(GameRules):
    """``[rules]`` keys every Hold'em table shares: one standard 52-card deck, shuffled for every
    round (PKH-01; seed-001 L563, L569 "The cards are mixed up after each round"). A second deck,
    jokers or a short deck would put impossible hands on the table, so they are config errors."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)

    @pydantic.field_validator("ranks")
    @classmethod
    def _full_deck(cls, value: str) -> str:
        if sorted(value) != sorted(RANKS):
            raise RuleError(f"a Hold'em deck has every rank {RANKS!r} (PKH-01), got {value!r}")
        return value


class UltimateTexasHoldemRules(HoldemRules):
    """Ultimate Texas Hold'em (seed-000 §6).

    ``boxes``: 5 in the standard game, 6 in a "special game" (UTH-B1 §1–2).
    ``dealer_qualifies``: UTH-H2 §12 "The dealer's game starts with a pair of twos" (``"pair"``,
    the default; the §19 example agrees) against §17 "(at least two pairs)" (``"two_pair"``):
    seed-000 §14 item 1, V-UTH-4.
    ``on_fault``: a device fault once cards are out waits for the Floor or Casino Manager
    (GEN-11, GEN-12 "cancelled at the discretion of the Floor Manager"); before the first card
    the engine cancels the hand (PKH-22).
    """

    boxes: int = pydantic.Field(default=5, ge=1, le=6)
    dealer_qualifies: Literal["pair", "two_pair"] = "pair"
    on_fault: OnFault = "decide"


class CasinoHoldemRules(HoldemRules):
    """Casino Hold'em (seed-001 §3.14): one player hand (``boxes`` is 1).

    ``unqualified_dealer``: what the Ante does when the dealer has less than a pair of fours. The
    rule book does not say (L587–589, C35 [GAP]); the Call is a push either way. ``"ante_pays"``
    (the default, the industry rule): the Ante pays by its paytable (L589–615);
    ``"ante_push"``: the Ante is returned, as Texas Hold'em's "draw" (L647).
    """

    boxes: int = pydantic.Field(default=1, ge=1, le=1)
    unqualified_dealer: Literal["ante_pays", "ante_push"] = "ante_pays"


class TexasHoldemRules(HoldemRules):
    """Texas Hold'em against the dealer (seed-001 §3.15): one player hand (``boxes`` is 1)."""

    boxes: int = pydantic.Field(default=1, ge=1, le=1)


# --- pure settlement facts -----------------------------------------------------------------------


def paytable_hand(hand: HandValue) -> str:
    """The paytable line a hand pays on: its category, and ``"royal_flush"`` for the ace-high
    straight flush, which every Hold'em paytable lists on its own line (UTH §19/§20 per
    seed-000 §6.4; seed-001 L589–615, L657–677)."""
    return "royal_flush" if hand.is_royal else hand.category.name.lower()


def _versus(player: HandValue, dealer: HandValue) -> Versus:
    """UTH-H1 §11: the best five cards decide; "If the cards are of equal value, a tie is
    declared and the remaining two cards are not taken into account" (seed-001 L579 likewise)."""
    if player > dealer:
        return "win"
    if player < dealer:
        return "lose"
    return "tie"


def versus_bets(
    player: HandValue, dealer: HandValue, *, dealer_qualifies: bool, folded: bool
) -> dict[str, str]:
    """ANTE, PLAY, BLIND and TRIPS of Ultimate Texas Hold'em (seed-000 §6.4) and Texas Hold'em
    against the dealer (seed-001 L645–677), which settle alike.

    - ``versus``: the hand against the dealer's (UTH-H1; L579).
    - ``ante``: ``"push"`` when the dealer does not qualify (UTH §17 "remains untouched"; L647
      "considered a draw") or on a tie (UTH §11); else the comparison (§15, §16; L645).
    - ``play``: the comparison whether or not the dealer qualifies (UTH §16, §18.1–18.3; L647
      "Play pays 1:1 regardless"). UTH §17's "paid out according to the player's combination"
      (seed-000 §14 item 19) is read with §18: the comparison still decides.
    - ``blind``: ``"lose"`` when the dealer wins (§19 "the BLIND Bet is lost"), ``"push"`` on a
      tie, ``"paytable"`` when the hand wins with a straight or better, ``"push"`` when it wins
      with less (§19 "remains untouched"; L657–666 "bet returned").
    - ``trips``: the hand's :func:`paytable_hand` when it is three of a kind or better, else
      ``"lose"``, whatever the dealer holds (UTH §20; L668–677).
    - A folded hand loses ANTE, BLIND and PLAY (UTH §9–10; GEN-09.2.2 "The Ante and Blind bets
      are collected"; L631 "Fold loses Ante and Blind"); TRIPS is still settled on the cards
      (GEN-09.2.2 "collected or paid out according to the outcome of the game").
    """
    versus = _versus(player, dealer)
    trips = paytable_hand(player) if qualifies(player, "three_of_a_kind") else "lose"
    if folded:
        return {"versus": versus, "ante": "lose", "play": "lose", "blind": "lose", "trips": trips}
    ante = _PUSH_IF_TIE[versus] if dealer_qualifies else "push"
    if versus == "win":
        blind = "paytable" if qualifies(player, "straight") else "push"
    else:
        blind = _PUSH_IF_TIE[versus]
    return {
        "versus": versus,
        "ante": ante,
        "play": _PUSH_IF_TIE[versus],
        "blind": blind,
        "trips": trips,
    }


def _hand(cards: Sequence[Card], value: HandValue) -> dict[str, Any]:
    """A hand as the outcome shows it: its own cards in deal order and its best five of seven
    (UTH §14: the cards that form the combination)."""
    return {"cards": hand_codes(cards), **summary(value), "paytable_hand": paytable_hand(value)}


def _duplicates(cards: Sequence[Card]) -> list[str]:
    counts = Counter(card.code for card in cards)
    return sorted(code for code, n in counts.items() if n > 1)


# --- the shared game -----------------------------------------------------------------------------


class HoldemGame(BaseGame):
    """What the three Hold'em games share: positions, decision windows, decisions, evaluation and
    the outcome's frame. A game sets ``name``, ``script``, ``rules_model``, ``streets`` (the name
    of each decision window, in order), ``fold_from`` (the first window a fold is taken in),
    ``multi_box``, and writes :meth:`qualifier` and :meth:`bets`.

    Decision windows: the dealer closes window *k* with a ``confirm``; the community cards of
    stage *k* are due after it. A window after the river (UTH §9, L631) holds the round open
    (:meth:`waiting`) until the dealer closes it; then the round settles.
    """

    decision_actions: ClassVar[frozenset[str]] = frozenset({"fold", "play"})
    streets: ClassVar[tuple[str, ...]]
    fold_from: ClassVar[int] = 0
    decision_rule: ClassVar[str] = "UTH §5–§10"
    """The rule a refused decision cites."""
    multi_box: ClassVar[bool] = False

    # -- positions ------------------------------------------------------------------------------

    def position(self, box: int) -> str:
        """The position a box's decisions are about: ``box2``, or the single ``player`` hand of
        the seed-001 games (its decisions come as box 1)."""
        return box_name(box) if self.multi_box else "player"

    def player_hands(self, deal: Deal) -> list[tuple[int, str]]:
        """(box, position) of every player hand of the round, in deal order."""
        return [(box, self.position(box)) for box in deal.boxes]

    # -- decision windows -----------------------------------------------------------------------

    @property
    def windows(self) -> int:
        return len(self.streets)

    def waiting(self, deal: Deal) -> bool:
        """The last window (UTH §9 river decision; L631 "After Turn and River: Play 1x or Fold")
        stays open after the last card until the dealer closes it."""
        return deal.windows_closed < self.windows

    def _cards_due_by(self, deal: Deal, window: int) -> int:
        return sum(1 for slot in self.script.slots(deal.boxes) if slot.stage <= window)

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """``fold`` and ``play`` (a PLAY bet, Casino Hold'em's Call), one of them per hand.

        Refused (``decision_refused``, citing :attr:`decision_rule`): before the window's cards
        are all out (PKH-10: cards are looked at once all are dealt; UTH §5–§9, L571, L625–631:
        each decision follows its cards); after the last window; a second PLAY (V-UTH-2 "At
        most one PLAY per box"; L633 "The player may raise once"); a fold after a PLAY (the PLAY
        is the alternative to checking and folding, UTH §5, §7, §9; L571) or after a fold; a
        fold before the game's fold window (:attr:`fold_from`: L631 folds "After Turn and
        River" only).
        """
        window = deal.windows_closed
        box = decision.box
        where = self.position(box)
        if window >= self.windows:
            return self._refuse("the last decision window is closed")
        if len(deal.order) < self._cards_due_by(deal, window):
            return self._refuse(f"the cards of decision window {window + 1} are not all out")
        if deal.decided(box, "fold"):
            return self._refuse(f"{where} has folded")
        if decision.action == "play":
            if deal.decided(box, "play"):
                return self._refuse(f"{where} has made its PLAY already")
            deal.notes.setdefault("play_street", {})[box] = self.streets[window]
            return []
        if deal.decided(box, "play"):
            return self._refuse(f"{where} has made its PLAY and cannot fold")
        if window < self.fold_from:
            street = self.streets[self.fold_from]
            return self._refuse(f"a fold is taken at the {street} decision only")
        return []

    def _refuse(self, message: str) -> Finding:
        return Finding(DECISION_REFUSED, self.decision_rule, message)

    # -- the outcome ----------------------------------------------------------------------------

    def qualifier(self) -> str:
        """The dealer's lowest qualifying hand (a
        :func:`tablectl.controller.games.cards.poker.qualifies` minimum)."""
        raise NotImplementedError

    def bets(
        self,
        deal: Deal,
        position: str,
        *,
        player: HandValue,
        dealer: HandValue,
        dealer_qualifies: bool,
        folded: bool,
    ) -> dict[str, Any]:
        """The facts the hand's bets are settled on (beside ``folded`` and ``play_street``):
        ANTE, PLAY, BLIND and TRIPS by :func:`versus_bets` (Ultimate Texas Hold'em, Texas
        Hold'em); Casino Hold'em overrides it."""
        del deal, position
        return versus_bets(player, dealer, dealer_qualifies=dealer_qualifies, folded=folded)

    @staticmethod
    def board(deal: Deal) -> list[Card]:
        """The five community cards in deal order: flop, turn, river."""
        return [*deal.hand("flop"), *deal.hand("turn"), *deal.hand("river")]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The settled round (see ``docs/games/holdem.md`` for every field).

        ``{"dealer": {"cards", "hand", "category", "best", "paytable_hand", "qualifies"},
        "qualifier": "pair", "board": {"flop", "turn", "river"}, "boxes": {"box1": {...}}}``
        (Ultimate Texas Hold'em) or ``"player": {...}, "winner": "player"|"dealer"|"tie"``
        (the seed-001 games). A deal with a card twice (a foul deck, PKH-01, held for the
        supervisor by the shoe's ``composition_exceeded``) cannot be ranked: its result lists
        the cards and ``"foul_cards"`` and no settlement facts.
        """
        board = self.board(deal)
        frame: dict[str, Any] = {
            "board": {p: hand_codes(deal.hand(p)) for p in ("flop", "turn", "river")}
        }
        hands = self.player_hands(deal)
        every = [*deal.hand("dealer"), *board, *(c for _, p in hands for c in deal.hand(p))]
        foul = _duplicates(every)
        if foul:
            held = {p: hand_codes(deal.hand(p)) for p in ("dealer", *(p for _, p in hands))}
            return {**held, **frame, "foul_cards": foul}
        dealer_cards = deal.hand("dealer")
        dealer = best_of([*dealer_cards, *board])
        dealer_qualifies = qualifies(dealer, self.qualifier())
        frame["dealer"] = {**_hand(dealer_cards, dealer), "qualifies": dealer_qualifies}
        frame["qualifier"] = self.qualifier()
        plays: dict[int, str] = deal.notes.get("play_street", {})
        results: dict[str, dict[str, Any]] = {}
        for box, position in hands:
            cards = deal.hand(position)
            player = best_of([*cards, *board])
            folded = deal.decided(box, "fold")
            results[position] = {
                **_hand(cards, player),
                "folded": folded,
                "play_street": plays.get(box),
                **self.bets(
                    deal,
                    position,
                    player=player,
                    dealer=dealer,
                    dealer_qualifies=dealer_qualifies,
                    folded=folded,
                ),
            }
        if self.multi_box:
            return {**frame, "boxes": results}
        hand = results["player"]
        return {**frame, "player": hand, "winner": _WINNER[hand["versus"]]}


# --- the games -----------------------------------------------------------------------------------


class UltimateTexasHoldem(HoldemGame):
    """Ultimate Texas Hold'em (seed-000 §6, L352–376; house-banked poker rules §5, L326–350).

    Deal (PKH-09 "to all playing Boxes and to himself. All cards are dealt face down"): two hole
    cards to each playing box and the dealer, one at a time in rotation, face down (withheld
    until the outcome; PKH-15 the dealer opens his cards, then the boxes'). Window 1: the
    pre-flop decision (§5, PLAY 3×/4× or check). The flop, 3 cards face up (§6 "the dealer opens
    the Flop"). Window 2: the flop decision (§7, PLAY 2× or check). Turn and river, face up (§8
    "reveals the last 2 community cards"). Window 3: the river decision (§9, PLAY 1× or fold).
    Then the round settles (§11–§20).

    A fold is taken in any window (§9–10 at the river; an absent player's box is folded whenever
    it is found absent, GEN-09.2.2). A deal error (wrong number of cards, a card face up) voids
    the round: "all cards will be reshuffled and Bets will remain untouched" (PKH-21).
    """

    name: ClassVar[str] = "ultimate_texas_holdem"
    script = DealScript(
        (
            Step((BOXES, "dealer"), count=2, face="down"),  # PKH-09
            Step(("flop",), count=3, face="up", stage=1, rotate=False),  # UTH §6
            Step(("turn", "river"), count=1, face="up", stage=2),  # UTH §8
        ),
        reshuffle="every_round",  # PKH-01/02: one 52-card deck, shuffled (or cut) each deal
    )
    rules_model: ClassVar[type[GameRules]] = UltimateTexasHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("preflop", "flop", "river")
    multi_box: ClassVar[bool] = True
    deal_error_rule: ClassVar[str] = "PKH-21"

    @property
    def uth_rules(self) -> UltimateTexasHoldemRules:
        return cast(UltimateTexasHoldemRules, self.rules)

    def qualifier(self) -> str:
        """UTH-H2 §12 "pair of twos" or §17 "two pairs" (``[rules] dealer_qualifies``)."""
        return self.uth_rules.dealer_qualifies

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """PKH-21: the wrong number of cards or a card face up → misdeal, reshuffle, bets stand.
        seed-000 §6.5 leaves an early community card uncovered; PKH-21 is read for it too."""
        del deal, error
        return Remedy("void", "PKH-21", MISDEAL, RESHUFFLE_BETS_STAND)


class TexasHoldemVsDealer(HoldemGame):
    """Texas Hold'em against the dealer (seed-001 §3.15, L619–679).

    "Casino Holdem rules apply except as follows" (L621): so the player's two cards are dealt
    open, then the dealer's two closed (L571, not changed by §3.15), one deck shuffled for each
    round (L569). Window 1 after the hole cards (Play 4x / 3x or Check, L627), the flop, window 2
    (Play 2x or Check, L629), turn and river, window 3 (Play 1x or Fold, L631), then the dealer
    "opens all his cards and announces the result" (L639). A fold is taken at the last window
    only (L631). Dealer qualifies with a pair (L645). Bets settle as Ultimate Texas Hold'em's
    (:func:`versus_bets`, L645–677). A technical bug voids the round, bets returned (L679).
    """

    name: ClassVar[str] = "texas_holdem"
    script = DealScript(
        (
            Step(("player",), count=2, face="up"),  # L571 (via L621)
            Step(("dealer",), count=2, face="down"),  # L571
            Step(("flop",), count=3, face="up", stage=1, rotate=False),  # L629
            Step(("turn", "river"), count=1, face="up", stage=2),  # L631
        ),
        reshuffle="every_round",  # L569 via L621
    )
    rules_model: ClassVar[type[GameRules]] = TexasHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("preflop", "flop", "river")
    fold_from: ClassVar[int] = 2
    decision_rule: ClassVar[str] = "seed-001 L625–633"
    deal_error_rule: ClassVar[str] = "seed-001 L679"

    def qualifier(self) -> str:
        """L645: "at least a pair"."""
        return "pair"


class CasinoHoldem(HoldemGame):
    """Casino Hold'em (seed-001 §3.14, L563–617).

    Deal (L569–573): "The player is dealt two open cards, after which the dealer is dealt two
    closed cards. Three common open cards are put on the table." Window 1: Call (2 × Ante,
    decision ``play``) or Fold (L571). "The dealer deals Turn and River and opens his 2 cards"
    (L573), then the round settles; a fold does not stop the deal (the Bonus, L571, and every
    other seat of a live table play on). "The cards are mixed up after each round" (L569). A
    technical bug voids the round, bets returned (L617).

    Facts: the comparison (best 5 of 7, L579); the dealer qualifies with a pair of fours (L587);
    ``ante``: ``"paytable"`` (by the player's :func:`paytable_hand`, L589–615) when the player
    wins, ``"lose"``/``"push"`` on a loss/tie ("In case of winning, both the 'Call' and 'Ante'
    bets win"; a tie is not stated [GAP]: push), ``[rules] unqualified_dealer`` when the dealer
    does not qualify (C35 [GAP]); ``call``: ``"win"``/``"lose"``/``"push"``, a push when the
    dealer does not qualify; a fold loses both. ``bonus``: the first five cards (player 2 + flop,
    L579) pay from a pair of aces (L589–615), whatever the Call or Fold (L571).
    """

    name: ClassVar[str] = "casino_holdem"
    script = DealScript(
        (
            Step(("player",), count=2, face="up"),  # L571
            Step(("dealer",), count=2, face="down"),  # L571
            Step(("flop",), count=3, face="up", rotate=False),  # L571
            Step(("turn", "river"), count=1, face="up", stage=1),  # L573
        ),
        reshuffle="every_round",  # L569
    )
    rules_model: ClassVar[type[GameRules]] = CasinoHoldemRules
    streets: ClassVar[tuple[str, ...]] = ("flop",)
    decision_rule: ClassVar[str] = "seed-001 L571"
    deal_error_rule: ClassVar[str] = "seed-001 L617"

    @property
    def casino_rules(self) -> CasinoHoldemRules:
        return cast(CasinoHoldemRules, self.rules)

    def qualifier(self) -> str:
        """L587: "The dealer should have at least a pair of 4's"."""
        return "pair_of_fours"

    def bets(
        self,
        deal: Deal,
        position: str,
        *,
        player: HandValue,
        dealer: HandValue,
        dealer_qualifies: bool,
        folded: bool,
    ) -> dict[str, Any]:
        versus = _versus(player, dealer)
        first_five = [*deal.hand(position), *deal.hand("flop")]
        bonus = evaluate5(first_five)
        bonus_pays = qualifies(bonus, "pair_of_aces")
        facts: dict[str, Any] = {"versus": versus}
        if folded:
            ante, call = "lose", "lose"  # L571 "Fold (lose the Ante)"
        elif not dealer_qualifies:
            pays = self.casino_rules.unqualified_dealer == "ante_pays"
            ante, call = ("paytable" if pays else "push"), "push"
        elif versus == "win":
            ante, call = "paytable", "win"  # L589–615
        else:
            ante = call = _PUSH_IF_TIE[versus]
        facts["ante"] = ante
        facts["call"] = call
        facts["bonus"] = {
            **_hand(first_five, bonus),
            "qualifies": bonus_pays,
            "result": paytable_hand(bonus) if bonus_pays else "lose",
        }
        return facts
