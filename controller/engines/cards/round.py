"""One round of a card game: its deal script dealt position by position, the game's hooks asked for
what the script cannot say statically. The n-th card read goes to the n-th slot due: the queue
first (script, ``more``, decisions, remedies), then the game's ``next_slot``. Pure."""

from __future__ import annotations

from collections import deque
from typing import Any

from tablectl.controller.core.events import BetsClosed, Decision
from tablectl.controller.games.cards.deal import (
    CARD_BEFORE_DECISIONS,
    BaseGame,
    Deal,
    Remedy,
    Slot,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card


class ScriptRound:
    """One round of ``game`` (see the module docstring)."""

    def __init__(self, game: BaseGame, bets_closed: BetsClosed | None) -> None:
        self._game = game
        self.deal = Deal(game.playing_boxes(bets_closed))
        game.begin(self.deal, bets_closed)
        self._queue: deque[Slot] = deque(game.script.slots(self.deal.boxes))
        self._early: list[Card] = []
        """Cards read while a decision window that may add cards was open (Top Card's war
        decision): they fill the slots the decision calls for, or stay unplayed."""
        self._closed: list[Finding] = []
        """What the last window's close proved (the game's ``closed``), for the engine."""

    def _refill(self) -> None:
        if not self._queue:
            self._queue.extend(self._game.more(self.deal))

    def due(self) -> Slot | None:
        """The slot the next card goes to (``None``: no card is called for)."""
        self._refill()
        if self._queue:
            return self._queue[0]
        return self._game.next_slot(self.deal)

    def pending(self) -> int:
        """Cards still due before the next decision window."""
        window = self.deal.windows_closed
        return sum(1 for slot in self._queue if slot.stage <= window)

    def expects_card(self) -> bool:
        """Whether the rules call for (or accept) another card now."""
        return self.due() is not None or self._waiting()

    def place(self, card: Card) -> Finding | None:
        """Put the next card where the deal sends it (only when :meth:`expects_card`); a finding
        when the card breaks a rule (the card is placed anyway)."""
        slot = self.due()
        if slot is None:
            # Only while the game waits for a decision (expects_card): too early to place.
            self._early.append(card)
            return Finding(
                CARD_BEFORE_DECISIONS,
                self._game.window_rule,
                "a card came before the decision that calls for it",
                severity="hold",
            )
        if self._queue:
            self._queue.popleft()
        finding = self._put(slot, card)
        if slot.stage > self.deal.windows_closed:
            early = self._game.early(self.deal, slot)
            if early is not None:
                return early  # the game's own reading; its window stays open
            # The card is out: its window is over whatever the supervisor decides (go on or void).
            self.deal.windows_closed = slot.stage
            return Finding(
                CARD_BEFORE_DECISIONS,
                self._game.window_rule,
                f"a card for {slot.position} came before decision window {slot.stage} was closed",
                severity="hold",
            )
        return finding

    def _put(self, slot: Slot, card: Card) -> Finding | None:
        deal = self.deal
        deal.hands.setdefault(slot.position, []).append(card)
        deal.order.append((slot.position, card, slot.face))
        return self._game.check(deal, slot, card)

    def _take_early(self) -> None:
        """Cards read early fill the slots that are now due, in order."""
        while self._early and self.due() is not None:
            slot = self.due()
            assert slot is not None
            if self._queue:
                self._queue.popleft()
            self._put(slot, self._early.pop(0))

    def next_hidden(self) -> bool:
        """Whether the next card is dealt face down: findings about it must not name it."""
        slot = self.due()
        return slot is not None and slot.face == "down"

    def decide(self, decision: Decision) -> Finding | None:
        """A player's decision; a finding when the rules refuse it (nothing changes then)."""
        refused = self._game.admit(self.deal, decision)
        if refused is not None:
            return refused
        taken = self._game.decide(self.deal, decision)
        if isinstance(taken, Finding):
            return taken
        self.deal.decisions.append(decision)
        if taken:
            # Later windows' cards stay behind the ones this decision calls for.
            queue = sorted([*self._queue, *taken], key=lambda s: s.stage)
            self._queue = deque(queue)
        self._take_early()
        return None

    def remedy(self, remedy: Remedy, position: str | None, what: str) -> str:
        """A remedy that keeps the round: a voided position gets no more cards, or the cards it
        calls for are due next (both L335)."""
        if remedy.action == "void_position" and position is not None:
            self.deal.void_positions[position] = remedy.remedy
            self._queue = deque(s for s in self._queue if s.position != position)
            return f"{what}: {position} is out of the round ({remedy.remedy})"
        self._queue.extendleft(reversed(remedy.slots))
        return f"{what}: {len(remedy.slots)} more card(s) to {position}"

    def confirm(self) -> bool:
        """A ``confirm`` while dealing closes a window or is the game's; ``False``: nothing to
        confirm."""
        slot = self.due()
        opens = slot is not None and slot.stage > self.deal.windows_closed
        if opens or (slot is None and self._waiting()):
            self.deal.windows_closed += 1
            self._take_early()
        elif not self._game.confirm(self.deal):
            return False
        self._closed = list(self._game.closed(self.deal))
        return True

    def closed_findings(self) -> list[Finding]:
        """What the last :meth:`confirm` proved (the game's ``closed``), once."""
        found, self._closed = self._closed, []
        return found

    def complete(self) -> bool:
        """Whether the round has all the cards it needs: the outcome is due now."""
        return self.due() is None and not self._waiting() and self._ready()

    def _waiting(self) -> bool:
        """The game's ``waiting`` hook; a hand its evaluator refuses (a duplicate or foreign card
        a supervisor let through) waits for nothing: the round ends, unsettled (:meth:`result`)."""
        try:
            return self._game.waiting(self.deal)
        except ValueError:
            return False

    def _ready(self) -> bool:
        """The game's ``ready`` hook, refused hands as in :meth:`_waiting`."""
        try:
            return self._game.ready(self.deal)
        except ValueError:
            return True

    def result(self) -> dict[str, Any]:
        """The settled result (only when :meth:`complete`)."""
        deal = self.deal
        try:
            result = self._game.outcome(deal)
        except ValueError as exc:
            # A hand the evaluator refuses (a foreign card a supervisor let through): the cards
            # as dealt, and why no settlement facts can be given; never an exception.
            cards = {p: [c.code for c in hand] for p, hand in deal.hands.items()}
            result = {"cards": cards, "unsettled": str(exc)}
        if deal.void_positions:
            result["void_positions"] = dict(deal.void_positions)
        if self._early:
            result["unplayed"] = [card.code for card in self._early]
        return result

    def public(self) -> dict[str, Any]:
        """The face-up cards so far, for snapshots and void results: never a hidden card."""
        return self._game.public(self.deal)

    def prompt(self) -> dict[str, Any]:
        """Where the deal stands, for the dealer screen: the boxes, the position the next card
        goes to, and whether the dealer must first close a decision window (``confirm``)."""
        due = self.due()
        window = self.deal.windows_closed
        return {
            "boxes": list(self.deal.boxes),
            "next": None if due is None else due.position,
            "windows_closed": window,
            "awaits_confirm": (due is not None and due.stage > window)
            or (due is None and self._waiting()),
        }
