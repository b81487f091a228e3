"""The poker room's dealer assist: Hold'em and Omaha ring games as a deal script, flagging the
misdeals a shoe can see; no bank. Readings: ``docs/games/poker_room.md``.

Sources: seed-002 G 33 "Misdeal" (L81–87; seed-002-004 B.3, M1–M6), seed-000 PR-8 (L586–613),
burns per seed-000 §9.2; ``box1`` is the small blind (B.2 [X]; CG 6). Anchors: an extra hole card
(G 33 M6 L87, PR-8.5 L596, PR-8.9.5 L609), a ``confirm`` with hole cards due (M5 L86), a
``four_card_flop`` (PR-8.4.1 L593), ``missing_burn`` (PR-8.4.2 L594), short streets (PR-8.9.4
L608), early board cards (PR-8.2 L590, PR-8.3 L591). A misdeal is the floor's call (G 33,
PR-8.9): reports are flags only. No winner (G 29–G 32); hole cards and burns are never revealed
(T 35)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Final, Literal

import pydantic

from tablectl.controller.core.errors import RuleError
from tablectl.controller.core.events import DealError, Decision
from tablectl.controller.games.cards.deal import (
    BOXES,
    CARD_BEFORE_DECISIONS,
    DECISION_REFUSED,
    WRONG_CARD_COUNT,
    BaseGame,
    Deal,
    DealScript,
    Remedy,
    Slot,
    Step,
    box_name,
    hand_codes,
)
from tablectl.controller.games.cards.holdem.base import HoldemRules
from tablectl.controller.games.cards.shoe import OnFault, ShoeRules
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

# Verdict codes (docs/games/poker_room.md); the others are the card engine's.
FOUR_CARD_FLOP: Final = "four_card_flop"
MISSING_BURN: Final = "missing_burn"
CARD_EXPOSED: Final = "card_exposed"
EXTRA_CARD: Final = "extra_card"
"""The card engine's code for a card past the deal (``engines/cards/phases.py``), used here for a
card after the river."""

# Remedies a flag names (in the verdict's message): what the rule says the floor does.
MISDEAL: Final = "misdeal"
REPLACE_WITH_BURN: Final = "replace_with_burn"
PLAY_ON: Final = "play_on"
DEAD_HAND: Final = "dead_hand"

G33: Final = "seed-002 G 33"
_PLAN: Final[tuple[tuple[str, Literal["up", "down"], int], ...]] = (
    ("burn", "down", 1), ("flop", "up", 1), ("flop", "up", 1), ("flop", "up", 1),
    ("burn", "down", 2), ("turn", "up", 2),
    ("burn", "down", 3), ("river", "up", 3),
)  # fmt: skip
"""The board as dealt: (position, face, the betting rounds closed before it is due)."""
_STREETS: Final = {1: ("flop", 0, 4), 2: ("turn", 4, 2), 3: ("river", 6, 2)}
"""Betting rounds closed → (street, its first index in :data:`_PLAN`, its cards)."""
_ROUNDS: Final = 4
"""Betting rounds of a hand: pre-flop, flop, turn, river."""
_BOARD: Final = frozenset({"burn", "flop", "turn", "river"})


class PokerRoomRules(HoldemRules):
    """``[rules]`` of a poker-room table: one 52-card deck shuffled for every hand (a hand
    "starts once the riffle shuffle begins", seed-000 Tourn. 11.4)."""

    boxes: int = pydantic.Field(default=9, ge=2, le=10)
    """Seats at the table: Hold'em 10, Omaha 9 (seed-002 G 2); a cash game 9, or 10 for No-Limit
    Hold'em (CG 5). ``bets_closed.boxes`` names the seats dealt in."""
    hole_cards: int = pydantic.Field(default=2, ge=2, le=6)
    """Hold'em 2, Omaha 4 (5 and 6 Card Omaha: 5, 6; seed-002-004 B.1 [X])."""
    wrong_count: Literal["misdeal", "dead_hand"] = MISDEAL
    """Flag a misdeal for the floor (seed-002 G 33 M5/M6) or void the seat's hand (seed-000 PR-8.5
    L596)."""
    on_fault: OnFault = "decide"
    """A device fault in a hand: a supervisor decides; the cards are on the table, nothing is
    refunded (``"void"``: the hand is void, as a misdeal)."""

    @pydantic.model_validator(mode="after")
    def _deck_holds_the_hand(self) -> PokerRoomRules:
        # seed-000 PR-8.8 L603: "The last card of the deck is never dealt": every seat's hole
        # cards, 3 burns and 5 board cards come out of 51 (B.1's deck-capacity arithmetic).
        needed = self.boxes * self.hole_cards + 8
        if needed > 51:
            raise RuleError(
                f"{self.boxes} seats × {self.hole_cards} hole cards + 8 = {needed} cards: more "
                "than a 52-card deck deals (PR-8.8: never its last card)"
            )
        return self


class PokerRoom(BaseGame):
    """A poker room's Hold'em or Omaha hand (see the module docstring)."""

    name: ClassVar[str] = "poker_room"
    rules_model: ClassVar[type[ShoeRules]] = PokerRoomRules
    decision_actions: ClassVar[frozenset[str]] = frozenset({"fold"})
    deal_error_rule: ClassVar[str] = G33
    reveals: ClassVar[bool] = False

    def __init__(self, rules: ShoeRules) -> None:
        super().__init__(rules)
        hole = rules.hole_cards if isinstance(rules, PokerRoomRules) else 2
        self.script = DealScript((Step((BOXES,), count=hole, face="down"),))

    @property
    def _rules(self) -> PokerRoomRules:
        assert isinstance(self.rules, PokerRoomRules)
        return self.rules

    # -- where the next card goes ---------------------------------------------------------------

    def next_slot(self, deal: Deal) -> Slot | None:
        """The board card due next (the hole cards are the script's): its stage is the betting
        rounds that close before it, so the dealer screen asks for the ``confirm`` first."""
        if self._over(deal):
            return None
        pos = deal.notes.get("pos", 0)
        if pos < len(_PLAN):
            position, face, stage = _PLAN[pos]
            return Slot(position, face, stage)
        return Slot("extra", "down", _ROUNDS)

    def check(self, deal: Deal, slot: Slot, card: Card) -> Finding | None:
        """A board card takes its place in the plan (whatever :meth:`early` then says of it),
        noting the betting round it came in."""
        del card
        if slot.position in _BOARD:
            pos = deal.notes.get("pos", 0)
            deal.notes.setdefault("came_in", {})[pos] = deal.windows_closed
            deal.notes["pos"] = pos + 1
        return None

    def early(self, deal: Deal, slot: Slot) -> Finding:
        """A card before the betting round it waits for ended (see the module docstring)."""
        rounds = deal.windows_closed
        if slot.position == "extra":
            return self._flag(
                EXTRA_CARD, "seed-000 PR-8.3 (L591)",
                "a card after the river while its betting round is open: not part of the hand",
            )  # fmt: skip
        index = deal.notes["pos"] - 1
        if index == _STREETS[rounds + 1][1]:
            # The next street's first card: a burn, kept as one.
            if rounds == 0:
                return self._flag(
                    WRONG_CARD_COUNT, f"{G33} M6 (L87); seed-000 PR-8.5 (L596), PR-8.9.5 (L609)",
                    "a card after the hole cards before the pre-flop betting ended: one card too "
                    "many (misdeal, unless the Button's, taken back as the burn)",
                )  # fmt: skip
            if rounds == 1:
                return self._flag(
                    FOUR_CARD_FLOP, "seed-000 PR-8.4.1 (L593)",
                    "a fourth card on the flop: the floor scrambles the four, one is the next "
                    "burn and three are the flop",
                )  # fmt: skip
            return self._flag(
                CARD_BEFORE_DECISIONS, "seed-000 PR-8.3 (L591)",
                "the river's burn before the turn's betting ended",
            )  # fmt: skip
        # A board card before its betting round: "reshuffled" into the stub and dealt again.
        position = slot.position
        hand = deal.hands[position]
        hand.pop()
        deal.notes["pos"] = index
        del deal.notes["came_in"][index]
        deal.notes["returned"] = deal.notes.get("returned", 0) + 1
        rule = "seed-000 PR-8.2 (L590)" if position == "flop" else "seed-000 PR-8.3 (L591)"
        return self._flag(
            CARD_BEFORE_DECISIONS, rule,
            f"a {position} card before the betting round ended: reshuffled, dealt again after "
            "the betting",
        )  # fmt: skip

    # -- the dealer closes a betting round ------------------------------------------------------

    def confirm(self, deal: Deal) -> bool:
        """The betting round closes on a street dealt short (its next card is still due): the
        round closes anyway, and :meth:`closed` says what the street lacked."""
        rounds = deal.windows_closed
        if self._over(deal) or rounds not in _STREETS:
            return False
        street, start, size = _STREETS[rounds]
        dealt = deal.notes.get("pos", 0) - start
        # A burn that came in an earlier round (the extra hole card, a 4-card flop's fourth) is
        # this street's burn already: only the street's own cards are missing then.
        early = int(deal.notes.get("came_in", {}).get(start, rounds) < rounds)
        if dealt == size - 1 and not early:
            self._burn_was_the_street(deal, street)
            found = self._flag(
                MISSING_BURN, "seed-000 PR-8.4.2 (L594)",
                f"no burn before the {street}: play proceeds with the cards dealt"
                + ("; one card is burned for the turn" if street == "flop" else ""),
            )  # fmt: skip
        else:
            found = self._flag(
                WRONG_CARD_COUNT, "seed-000 PR-8.9.4 (L608)",
                f"the {street} street closed with {dealt - early} of its {size - early} cards",
            )  # fmt: skip
        deal.notes["pos"] = start + size
        deal.notes["closing"] = [found]
        deal.windows_closed += 1
        return True

    def closed(self, deal: Deal) -> Sequence[Finding]:
        found: list[Finding] = deal.notes.pop("closing", [])
        return found

    @staticmethod
    def _burn_was_the_street(deal: Deal, street: str) -> None:
        """The street's first card, dealt as its burn, is the street's card (PR-8.4.2)."""
        card = deal.hands["burn"].pop()
        deal.hands.setdefault(street, []).insert(0, card)
        for i in range(len(deal.order) - 1, -1, -1):
            if deal.order[i][:2] == ("burn", card):
                deal.order[i] = (street, card, "up")
                break

    # -- folds and the end of the hand ----------------------------------------------------------

    def decide(self, deal: Deal, decision: Decision) -> Finding | list[Slot]:
        """A fold (the fold line's sensor, G 15, or the dealer screen): refused before the hole
        cards are all out or for a seat already out; the hand ends when one seat is left."""
        hole = self._rules.hole_cards
        if any(len(deal.hand(box_name(b))) < hole for b in deal.boxes):
            return Finding(DECISION_REFUSED, "seed-002 G 15", "the hole cards are not all out")
        if deal.decided(decision.box, "fold"):
            return Finding(DECISION_REFUSED, "seed-002 G 15", f"box{decision.box} has folded")
        live = [b for b in deal.boxes if b != decision.box and not deal.decided(b, "fold")]
        if len(live) <= 1:
            deal.notes["over"] = True
        return []

    @staticmethod
    def _over(deal: Deal) -> bool:
        return bool(deal.notes.get("over")) or deal.windows_closed >= _ROUNDS

    # -- reported deal errors -------------------------------------------------------------------

    def deal_error(self, deal: Deal, error: DealError) -> Remedy:
        """A flag for the floor, by the rule books (the module docstring)."""
        if error.kind == "wrong_count":
            if self._rules.wrong_count == DEAD_HAND and error.position is not None:
                return Remedy("void_position", "seed-000 PR-8.5 (L596–597)", remedy=DEAD_HAND)
            rule = f"{G33} M5/M6 (L86–87); seed-000 PR-8.9.5 (L609)"
            return Remedy("note", rule, remedy=MISDEAL, code=WRONG_CARD_COUNT)
        if deal.windows_closed > 0 or deal.notes.get("pos", 0) > 0:
            # Past the initial deal neither book names a remedy [GAP]; G 26 keeps a player's own
            # exposed cards face up in play, and so does this reading.
            return Remedy("note", "seed-002 G 26 (by analogy)", remedy=PLAY_ON, code=CARD_EXPOSED)
        deal.notes["exposed"] = exposed = deal.notes.get("exposed", 0) + 1
        blinds = {box_name(b) for b in deal.boxes[:2]}
        if exposed > 1:
            rule = f"{G33} M2 (L83); seed-000 PR-8.6 (L599), PR-8.9.2 (L606)"
            return Remedy("note", rule, remedy=MISDEAL, code=CARD_EXPOSED)
        if error.position in blinds:
            rule = f"{G33} M1 (L82); seed-000 PR-8.9.1 (L605)"
            return Remedy("note", rule, remedy=MISDEAL, code=CARD_EXPOSED)
        return Remedy("note", "seed-000 PR-8.6 (L599)", remedy=REPLACE_WITH_BURN, code=CARD_EXPOSED)

    # -- the record -----------------------------------------------------------------------------

    def outcome(self, deal: Deal) -> dict[str, Any]:
        """The hand's record (no winner; no hole card or burn is named)."""
        return {
            "seats": list(deal.boxes),
            "hole_cards": {box_name(b): len(deal.hand(box_name(b))) for b in deal.boxes},
            "board": {
                street: hand_codes(deal.hand(street)) for street in ("flop", "turn", "river")
            },
            "burns": len(deal.hand("burn")),
            "folded": [b for b in deal.boxes if deal.decided(b, "fold")],
            "returned": deal.notes.get("returned", 0),
            "extra": len(deal.hand("extra")),
        }

    @staticmethod
    def _flag(code: str, rule: str, message: str) -> Finding:
        return Finding(code, rule, message)
