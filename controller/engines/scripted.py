"""The one engine that runs every deal script: house-banked poker and the single-deck card games.

Issue 8, Deliver 2. The shoe and round lifecycle is the shared
:class:`~tablectl.controller.engines.cards.CardEngine`; a round is :class:`ScriptRound`, which deals
the game's :class:`~tablectl.controller.games.cards.deal.DealScript` position by position and asks
the game's hooks for what the script cannot say statically (see
:mod:`tablectl.controller.games.cards.deal`). The game itself is chosen by ``[table] game`` through
:data:`tablectl.controller.games.catalog.GAMES`.

What this engine adds to the shoe games' rules (codes in ``docs/verdicts.md``):

- ``reshuffle = "every_round"``: each round is the last of its deck; the next round needs a new
  ``shuffle_completed`` (``shuffle_required`` until then). A card read after a complete deal is
  ``extra_card`` and takes no part (seed-001 §3.0 validator (2); Andar Bahar "any card after the
  match", §3.8a).
- A card of a later stage read before the dealer closed the decision window (``confirm``) holds
  the round for a supervisor: ``card_before_decisions`` (seed-000 PR-8.2/8.3 by analogy).
- A ``confirm`` while cards of the current stage are still due is refused:
  ``wrong_card_count`` (seed-000 PKH-21, seed-001 §3.0 validator (2)).
- A ``deal_error`` (card exposed / wrong count, reported by the dealer) gets the game's remedy.
- A device fault before the first card is dealt cancels the hand: void ``hand_cancelled``
  (seed-000 PKH-22: "If the mechanical Card shuffler stops working before the dealer has dealt
  the cards, the hand is cancelled").
"""

from __future__ import annotations

import functools
import importlib
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from tablectl.controller.config import validate_section
from tablectl.controller.core.errors import ConfigError, TransitionNotAllowedError
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    DealError,
    Decision,
    Fault,
    ShoeRemoved,
)
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.engines.cards import (
    DEALING,
    EXTRA_CARD,
    OPEN,
    PENDING_DECISION,
    SHOE_END,
    CardEngine,
)
from tablectl.controller.games.cards.deal import (
    CARD_BEFORE_DECISIONS,
    DECISION_REFUSED,
    WRONG_CARD_COUNT,
    BaseGame,
    Deal,
    Slot,
)
from tablectl.controller.games.catalog import GAMES
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card as PlayingCard

__all__ = ["DEAL_ERROR_NOTED", "HAND_CANCELLED", "ScriptEngine", "ScriptRound", "load_game"]

HAND_CANCELLED: Final = "hand_cancelled"
DEAL_ERROR_NOTED: Final = "deal_error_noted"
"""A reported deal error the game's rules let the round survive (a card exposed that lies face
up anyway): journaled as a verdict, the round goes on."""


def load_game(game: str, rules: Mapping[str, Any], *, source: str) -> BaseGame:
    """Build the game ``game`` with its ``[rules]`` validated (the catalog's preset first).

    Raises:
        ConfigError: unknown game, or ``[rules]`` the game's model rejects.
    """
    try:
        module_name, class_name, preset = GAMES[game]
    except KeyError:
        raise ConfigError(f"{source}: {game!r} is not a scripted card game") from None
    cls: type[BaseGame] = getattr(importlib.import_module(module_name), class_name)
    parsed = validate_section(cls.rules_model, {**preset, **rules}, source=source, section="rules")
    return cls(parsed)


class ScriptRound:
    """One round of a scripted game (the engine's round model)."""

    def __init__(self, game: BaseGame, bets_closed: BetsClosed | None) -> None:
        self._game = game
        self.deal = Deal(game.playing_boxes(bets_closed))
        game.begin(self.deal, bets_closed)
        self._queue: deque[Slot] = deque(game.script.slots(self.deal.boxes))
        self._early: list[PlayingCard] = []
        """Cards read while a decision window that may add cards was open (Top Card's war
        decision): they fill the slots the decision calls for, or stay unplayed."""

    def _refill(self) -> None:
        if not self._queue:
            self._queue.extend(self._game.more(self.deal))

    def due(self) -> Slot | None:
        """The slot the next card goes to (``None``: no card is called for)."""
        self._refill()
        return self._queue[0] if self._queue else None

    def pending(self) -> int:
        """Cards still due before the next decision window."""
        window = self.deal.windows_closed
        return sum(1 for slot in self._queue if slot.stage <= window)

    def expects_card(self) -> bool:
        return self.due() is not None or self._game.waiting(self.deal)

    def place(self, card: PlayingCard) -> Finding | None:
        if self.due() is None:
            # Only while the game waits for a decision (expects_card): too early to place.
            self._early.append(card)
            return Finding(
                CARD_BEFORE_DECISIONS,
                "seed-000 PR-8.2",
                "a card came before the decision that calls for it",
                severity="hold",
            )
        slot = self._queue.popleft()
        finding = self._put(slot, card)
        if slot.stage > self.deal.windows_closed:
            # The card is out: its window is over whatever the supervisor decides (go on or void).
            self.deal.windows_closed = slot.stage
            return Finding(
                CARD_BEFORE_DECISIONS,
                "seed-000 PR-8.2",
                f"a card for {slot.position} came before decision window {slot.stage} was closed",
                severity="hold",
            )
        return finding

    def _put(self, slot: Slot, card: PlayingCard) -> Finding | None:
        deal = self.deal
        deal.hands.setdefault(slot.position, []).append(card)
        deal.order.append((slot.position, card, slot.face))
        return self._game.check(deal, slot, card)

    def _take_early(self) -> None:
        """Cards read early fill the slots that are now due, in order."""
        while self._early and self.due() is not None:
            self._put(self._queue.popleft(), self._early.pop(0))

    def next_hidden(self) -> bool:
        slot = self.due()
        return slot is not None and slot.face == "down"

    def decide(self, decision: Decision) -> Finding | None:
        if decision.action not in self._game.decision_actions:
            allowed = ", ".join(sorted(self._game.decision_actions)) or "none"
            return Finding(
                DECISION_REFUSED,
                "DESIGN §4.4",
                f"{self._game.name} takes no {decision.action!r} decision (takes: {allowed})",
            )
        if decision.box not in self.deal.boxes:
            return Finding(DECISION_REFUSED, "DESIGN §4.4", f"box {decision.box} is not playing")
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

    def add(self, slots: tuple[Slot, ...]) -> None:
        """Cards a remedy calls for (the dealer's fifth card, L335): due next."""
        self._queue.extendleft(reversed(slots))

    def drop_position(self, position: str) -> None:
        """A voided position gets no more cards."""
        self._queue = deque(s for s in self._queue if s.position != position)

    def confirm(self) -> bool:
        """The dealer closes a decision window: allowed when the next card waits for it, or the
        game holds a window open."""
        slot = self.due()
        opens = slot is not None and slot.stage > self.deal.windows_closed
        if opens or (slot is None and self._game.waiting(self.deal)):
            self.deal.windows_closed += 1
            self._take_early()
            return True
        return False

    def complete(self) -> bool:
        return self.due() is None and not self._game.waiting(self.deal)

    def result(self) -> dict[str, Any]:
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
        """Face-up cards by position; a face-down card appears as ``None`` (never its face)."""
        out: dict[str, list[str | None]] = {}
        for position, card, face in self.deal.order:
            if card not in self.deal.hand(position):
                continue  # exchanged away
            out.setdefault(position, []).append(card.code if face == "up" else None)
        return out


class ScriptEngine(CardEngine):
    """A table of one scripted card game (see the module docstring)."""

    def __init__(
        self, table_id: str, game: BaseGame, *, key: str | None = None, next_round: int = 1
    ) -> None:
        self._game_rules = game
        every_round = game.script.reshuffle == "every_round"

        super().__init__(
            table_id,
            key or game.name,
            game.rules,
            # A partial, not a closure: the engine is pickled into recovery checkpoints.
            functools.partial(ScriptRound, game),
            no_bets_deal=False,
            decisions=bool(game.decision_actions),
            coups_per_shoe=1 if every_round else None,
            deal_errors=True,
            next_round=next_round,
        )
        self._every_round = every_round
        self._handlers = {
            **self._handlers,
            "deal_error": self._deal_error,
            "card": self._scripted_card,
            "confirm": self._scripted_confirm,
            "fault": self._scripted_fault,
            "shoe_removed": self._scripted_fault,
        }

    @classmethod
    def from_preset(
        cls,
        table_id: str,
        game: str,
        rules: Mapping[str, Any],
        *,
        source: str,
        next_round: int = 1,
    ) -> ScriptEngine:
        loaded = load_game(game, rules, source=source)
        return cls(table_id, loaded, key=game, next_round=next_round)

    @property
    def game_rules(self) -> BaseGame:
        return self._game_rules

    def snapshot(self) -> dict[str, Any]:
        """The shoe games' state plus where the deal stands (the dealer screen's prompt): the
        position the next card goes to, and whether the dealer must first close a decision
        window (``confirm``). Never a face-down card's face."""
        state = super().snapshot()
        model = self._script_round()
        if model is None:
            state["deal"] = None
            return state
        due = model.due()
        window = model.deal.windows_closed
        state["deal"] = {
            "boxes": list(model.deal.boxes),
            "next": None if due is None else due.position,
            "windows_closed": window,
            "awaits_confirm": (due is not None and due.stage > window)
            or (due is None and self._game_rules.waiting(model.deal)),
        }
        return state

    def _script_round(self) -> ScriptRound | None:
        model = self._model
        return model if isinstance(model, ScriptRound) else None

    def _scripted_card(self, event: Card) -> list[EngineOutput]:
        after_deal = self.phase == SHOE_END and self._every_round
        outputs = self._card(event)
        if after_deal and not any(getattr(o, "code", None) == "not_a_card" for o in outputs):
            outputs.append(
                self._verdict(
                    EXTRA_CARD,
                    f"{event.card} came after the round's deal was complete: it is not played",
                    event,
                    "seed-001 §3.0 (2)",
                )
            )
        return outputs

    def _scripted_confirm(self, event: Any) -> list[EngineOutput]:
        model = self._script_round()
        if self.phase == DEALING and model is not None and model.pending():
            return [
                self._verdict(
                    WRONG_CARD_COUNT,
                    f"the decision window cannot close: {model.pending()} card(s) of this stage "
                    "are still due",
                    event,
                    "PKH-21",
                )
            ]
        return self._confirm(event)

    def _scripted_fault(self, event: Fault | ShoeRemoved) -> list[EngineOutput]:
        model = self._script_round()
        no_card_yet = self.phase == OPEN or (
            self.phase == DEALING and model is not None and not model.deal.order
        )
        if not no_card_yet:
            return self._fault(event)
        code = event.code if isinstance(event, Fault) else "shoe_removed"
        self._machine.fire(self._end_event("void"))
        self._faults.add(code)
        return [self._end_round("void", HAND_CANCELLED, event, extra={"rule": "PKH-22"})]

    def _deal_error(self, event: DealError) -> list[EngineOutput]:
        model = self._script_round()
        if self.phase not in (DEALING, PENDING_DECISION) or model is None:
            raise TransitionNotAllowedError("no deal in progress")
        remedy = self._game_rules.deal_error(model.deal, event)
        where = f" at {event.position}" if event.position else ""
        what = f"{event.kind.replace('_', ' ')}{where}"
        if remedy.action == "void":
            self._machine.fire(self._end_event("void"))
            return [
                self._end_round(
                    "void",
                    remedy.reason,
                    event,
                    extra={"remedy": remedy.remedy, "rule": remedy.rule, "error": what},
                )
            ]
        self._machine.fire("decision")  # stays in its phase
        if remedy.action == "note":
            message = f"{what}: noted, the round goes on ({remedy.remedy})"
            return [self._verdict(DEAL_ERROR_NOTED, message, event, remedy.rule)]
        if remedy.action == "void_position" and event.position is not None:
            model.deal.void_positions[event.position] = remedy.remedy
            model.drop_position(event.position)
            message = f"{what}: {event.position} is out of the round ({remedy.remedy})"
        else:
            model.add(remedy.slots)
            message = f"{what}: {len(remedy.slots)} more card(s) to {event.position}"
        verdict = self._verdict(WRONG_CARD_COUNT, message, event, remedy.rule)
        return [verdict, *self._maybe_settle(event)]
