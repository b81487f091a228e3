"""What the three Hold'em games share: the ``[rules]`` of a 52-card deck and :class:`HoldemGame`;
each game's module adds its script, its dealer's qualifier and, where they differ, its bets."""

from __future__ import annotations

from typing import Any, ClassVar, Final

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import Decision
from tablectl.controller.games.cards.deal import (
    DECISION_REFUSED,
    BaseGame,
    Deal,
    GameRules,
    Slot,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.holdem.settle import duplicate_codes, hand_facts, versus_bets
from tablectl.controller.games.cards.poker import HandValue, best_of, qualifies
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import RANKS, Card

_WINNER: Final[dict[str, str]] = {"win": "player", "lose": "dealer", "tie": "tie"}


class HoldemRules(GameRules):
    """One 52-card deck shuffled every round (PKH-01; seed-001 L563, L569); anything else would put
    impossible hands on the table."""

    decks: int = pydantic.Field(default=1, ge=1, le=1)
    jokers_per_deck: int = pydantic.Field(default=0, ge=0, le=0)

    @pydantic.field_validator("ranks")
    @classmethod
    def _full_deck(cls, value: str) -> str:
        if sorted(value) != sorted(RANKS):
            raise RuleError(f"a Hold'em deck has every rank {RANKS!r} (PKH-01), got {value!r}")
        return value


class HoldemGame(BaseGame):
    """Positions, windows, decisions, evaluation and the outcome's frame. The community cards of
    stage *k* are due after the dealer's ``confirm`` of window *k*; a window after the river (UTH
    §9, L631) holds the round open (:meth:`waiting`)."""

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
        """``fold`` and ``play``, one each per hand; refused (``decision_refused``) before the
        window's cards are out (PKH-10; UTH §5–§9, L571, L625–631), after the last window, on a
        second PLAY (V-UTH-2; L633), a fold after a PLAY or a fold (UTH §5, §7, §9; L571), or
        before :attr:`fold_from` (L631)."""
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
        """The facts the bets settle on, by :func:`versus_bets`; Casino Hold'em overrides it."""
        del deal, position
        return versus_bets(player, dealer, dealer_qualifies=dealer_qualifies, folded=folded)

    @staticmethod
    def board(deal: Deal) -> list[Card]:
        """The five community cards in deal order: flop, turn, river."""
        return [*deal.hand("flop"), *deal.hand("turn"), *deal.hand("river")]

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The settled round (docs/games/holdem.md has every field). A foul deck (PKH-01, held by
        ``composition_exceeded``) cannot be ranked: only the cards and ``"foul_cards"``."""
        board = self.board(deal)
        frame: dict[str, Any] = {
            "board": {p: hand_codes(deal.hand(p)) for p in ("flop", "turn", "river")}
        }
        hands = self.player_hands(deal)
        every = [*deal.hand("dealer"), *board, *(c for _, p in hands for c in deal.hand(p))]
        foul = duplicate_codes(every)
        if foul:
            held = {p: hand_codes(deal.hand(p)) for p in ("dealer", *(p for _, p in hands))}
            return {**held, **frame, "foul_cards": foul}
        dealer_cards = deal.hand("dealer")
        dealer = best_of([*dealer_cards, *board])
        dealer_qualifies = qualifies(dealer, self.qualifier())
        frame["dealer"] = {**hand_facts(dealer_cards, dealer), "qualifies": dealer_qualifies}
        frame["qualifier"] = self.qualifier()
        plays: dict[int, str] = deal.notes.get("play_street", {})
        results: dict[str, dict[str, Any]] = {}
        for box, position in hands:
            cards = deal.hand(position)
            player = best_of([*cards, *board])
            folded = deal.decided(box, "fold")
            results[position] = {
                **hand_facts(cards, player),
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
