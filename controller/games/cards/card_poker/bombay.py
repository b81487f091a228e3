"""Bombay Poker (seed-000 §8): :class:`BombayPoker`, its windows and its dealer's card replacement
(the package's docstring has the rule book's readings). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.card_poker.dealer import (
    DEALER,
    DEALER_NO_GAME,
    FACE_UP_ANYWAY,
    FOLD,
    NO_GAME_AFTER_BUY,
    PUSH,
    WIN,
    DealerPoker,
    bombay_combinations,
    combination_summary,
    rank_value,
    refuse,
    settle,
)
from tablectl.controller.games.cards.deal import (
    MISDEAL,
    RESHUFFLE_BETS_STAND,
    Deal,
    GameRules,
    Remedy,
    Slot,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.poker import (
    qualifies,
    summary,
)
from tablectl.controller.games.cards.shoe import OnFault
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card


class BombayRules(GameRules):
    """Bombay Poker's ``[rules]`` (seed-000's reading): ``boxes`` ≤ 3 (BMP-B1); one deck (PKH-01);
    ``on_fault = "decide"`` (GEN-12; before the deal, PKH-22). ``bonus_on_sixth_card``: §32
    against §33 (§14 item 18), ``lost`` by default as for an exchange."""

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


class BombayPoker(DealerPoker):
    """Bombay Poker (seed-000 §8); the result's shape is in docs/games/card_poker.md.

    Windows, each closed by the dealer's ``confirm``:

    1. Draw (§7–9): ``exchange``, ``sixth_card`` or ``fold``, one per box; new cards face down,
    box by box left to right after the window (§9). 2. Play (§10): ``play`` or ``fold``; the
    ``confirm`` is "insurance closed" (§11–15), then the dealer reveals (PKH-15). 3. Buy a game
    (§21–24), only if the dealer has none: his highest card is replaced face up, a card of its
    rank again without limit "unless the selected cards form a combination" (§23, V-BMP-4), read
    as "unless the dealer then has a game"; only one card is replaced (§24)."""

    name: ClassVar[str] = "bombay_poker"
    composition_rule: ClassVar[str] = "PKH-01"  # seed-000 §5 covers Bombay Poker
    rules_model: ClassVar[type[GameRules]] = BombayRules
    decision_actions: ClassVar[frozenset[str]] = frozenset(
        {FOLD, "play", "exchange", "sixth_card", "buy_game"}
    )
    decision_rule = "seed-000 BMP §7–10"
    rules: BombayRules

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
            highest = max(hand, key=rank_value)
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
                return refuse(
                    "seed-000 BMP §21", "a game is bought only when the dealer has none (§21)"
                )
            if deal.decided(box, "buy_game"):
                return refuse("seed-000 BMP §21", f"{position} has already bought the game")
            return []
        drew = deal.decided(box, "exchange") or deal.decided(box, "sixth_card")
        if action == FOLD:
            if window > _PLAY:
                return refuse("seed-000 BMP §10", "the dealer has revealed: no more folds")
            if window == _DRAW:
                if drew:
                    return refuse("seed-000 BMP §7", f"{position} has already drawn (one choice)")
                # "the Player's immediate surrender": the bonus is not checked (§34).
                deal.notes.setdefault("surrendered", set()).add(box)
            return []
        if action == "play":
            if window != _PLAY or deal.decided(box, "play"):
                return refuse(
                    "seed-000 BMP §10", "the BET is placed once, after the exchange (§10)"
                )
            return []
        # exchange or sixth card: the draw window only, one draw decision per box (§7).
        if window != _DRAW:
            return refuse("seed-000 BMP §9", "the draw window is closed")
        if drew:
            return refuse("seed-000 BMP §7", f"{position} has already drawn (one choice)")
        if action == "exchange":
            given = self.cards_given_back(deal, decision, range(1, 6))
            if isinstance(given, Finding):
                return given
            self.give_back(deal, box, given)
        return []  # the cards come after the window (see :meth:`more`)

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """PKH-21: a wrong card count or a card face up reshuffles, bets stand. After the reveal
        (PKH-15) every card lies open, so an exposed card is only noted (:data:`FACE_UP_ANYWAY`)."""
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
                "combinations": [combination_summary(c) for c in combos],
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
        """The Bonus "starts from a straight" (§31) on the five dealt cards; lost on a sixth card or
        an exchange (§33, ``bonus_on_sixth_card``); not checked on a fold (§34)."""
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
