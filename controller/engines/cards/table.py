"""The card table under every deal: the shoe, the devices and the end of a round.

What a round's cards and decisions mean is the game's deal script (:class:`~.engine.CardEngine`);
what a shoe or a device reports means the same at every card table, so it lives here. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    Card,
    CutCard,
    Fault,
    ReadError,
    ShoeEmpty,
    ShoeRemoved,
    ShuffleCompleted,
    TableEvent,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome
from tablectl.controller.engines.base import Handler, RoundEngine
from tablectl.controller.engines.cards.idle import IdleCards
from tablectl.controller.engines.cards.phases import (
    CUT_CARD_REPEATED,
    DEALING,
    HAND_CANCELLED,
    MACHINE,
    OPEN,
    PENDING_DECISION,
    READ_ERROR,
    SHOE_EXHAUSTED,
    SHOE_REMOVED,
    VOID_DEVICE_FAULT,
    VOID_SHOE_EXHAUSTED,
    accepted,
)
from tablectl.controller.engines.cards.round import ScriptRound
from tablectl.controller.engines.cards.shoe import ShoeLife
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.games.cards.shoe import Shoe, ShoeRules, check_shuffle
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card as PlayingCard


class CardTable(RoundEngine):
    """One card table's shoe, devices and round ends; ``handlers`` are the engine's whole table."""

    def __init__(
        self,
        table_id: str,
        card_game: BaseGame,
        *,
        game: str | None,
        next_round: int,
        handlers: Mapping[str, Handler],
    ) -> None:
        screen = card_game.procedure == "dealer_screen"
        # Every card table handles these (its refusals list them); a game that does not play
        # them calls them another game's.
        played = {"decision": bool(card_game.decision_actions), "deal_error": screen}
        super().__init__(
            table_id,
            game or card_game.name,
            MACHINE,
            handlers=handlers,
            family="card",
            unplayed=frozenset(name for name, yes in played.items() if not yes),
            next_round=next_round,
        )
        self._game_rules = card_game
        self._shoe_rules: ShoeRules = card_game.rules
        self._screen = screen
        self._prompts = screen or any(step.stage for step in card_game.script.steps)
        """The snapshot shows the deal's prompt (``deal``): the dealer-screen games, and a shoe
        game with a window in its deal (war of bets' second betting round)."""
        self._symbols = card_game.symbols_per_deck > 0
        self._every_round = card_game.script.reshuffle == "every_round"
        self._life = ShoeLife(
            card_game.rules,
            coups_per_shoe=1 if self._every_round else None,
            unique_barcodes=card_game.unique_barcodes,
            symbols=card_game.symbols_per_deck,
            composition_rule=card_game.composition_rule,
        )
        self._idle = IdleCards(card_game)
        self._pending: set[str] = set()
        self._model: ScriptRound | None = None

    # -- public surface -------------------------------------------------------------------------

    @property
    def game_rules(self) -> BaseGame:
        """The game this table plays."""
        return self._game_rules

    @property
    def rules(self) -> ShoeRules:
        """The table's validated ``[rules]``."""
        return self._shoe_rules

    @property
    def shoe(self) -> Shoe:
        """The shoe in use (composition counters; never the order of undealt cards)."""
        return self._life.shoe

    def _refusal(self, exc: TransitionNotAllowedError, event: TableEvent) -> str:
        # The machine may have been fired with an internal name (settle_last, shoe_burn…): the
        # verdict names the event as it came.
        allowed = accepted(self.phase, self._handlers)
        detail = str(exc) if "latched" in str(exc) else f"allowed: {allowed}"
        return f"{event.type!r} is not allowed in phase {self.phase!r} ({detail})"

    # -- the shoe -------------------------------------------------------------------------------

    def _deal_from_shoe(
        self, card: PlayingCard, event: TableEvent, *, hidden: bool
    ) -> list[EngineOutput]:
        """Count ``card`` out of the shoe; verdicts (and a hold, in a round) for what it proves."""
        barcode = event.barcode if isinstance(event, Card) else None
        outputs: list[EngineOutput] = []
        for finding in self._life.deal(card, barcode):
            message = finding.message
            if hidden:
                message = f"{finding.code}: the face-down card breaks the shoe's composition"
            outputs.append(self._finding(Finding(finding.code, finding.rule, message), event))
            if finding.severity == "hold" and self.phase in (DEALING, PENDING_DECISION):
                outputs += self._hold(finding.code, event)
        return outputs

    def _burn_card(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        outputs = self._deal_from_shoe(card, event, hidden=self._life.burn_hidden)
        if self._life.take_burn(card):
            self._machine.fire("burn_done")
        return outputs

    def _cut(self, event: CutCard) -> list[EngineOutput]:
        if self._life.cut_card:
            return [self._verdict(CUT_CARD_REPEATED, "the cut card is already out", event)]
        self._machine.fire("cut_card")
        finding = self._life.cut()
        return [] if finding is None else [self._finding(finding, event)]

    def _shuffle_started(self, event: TableEvent) -> list[EngineOutput]:
        self._machine.fire("shuffle_started")
        self._forget_shoe()
        return []

    def _shuffle_completed(self, event: ShuffleCompleted) -> list[EngineOutput]:
        rules = self._shoe_rules
        finding = check_shuffle(
            rules.decks,
            event.cards,
            event.missing,
            event.extra,
            jokers_per_deck=rules.jokers_per_deck,
            ranks=rules.ranks,
            symbols=self._game_rules.symbols_per_deck,
        )
        if finding is not None:
            self._machine.fire("shoe_rejected")
            self._forget_shoe()
            self._life.rejected()
            return [self._finding(finding, event)]
        self._machine.fire("shoe_burn" if rules.burn else "shoe_ok")
        self._forget_shoe()
        self._life.loaded(event.cards)
        return []

    def _shoe_empty(self, event: ShoeEmpty) -> list[EngineOutput]:
        """The shoe reports no card left: the shoe ends with the round in progress (if any)."""
        phase = self.phase
        in_round = phase in (DEALING, PENDING_DECISION)
        needs_cards = in_round and not self._model_complete()
        if phase == OPEN:
            self._machine.fire("void_last")
        elif needs_cards:
            self._machine.fire("hold")
        elif not in_round:
            self._machine.fire("shoe_empty")
        finding, report = self._life.emptied(in_round=in_round, ts=event.ts)
        outputs: list[EngineOutput] = [] if finding is None else [self._finding(finding, event)]
        outputs.append(report)
        if phase == OPEN:
            outputs.append(self._end_round("void", VOID_SHOE_EXHAUSTED, event))
        elif needs_cards:
            # seed-000 BJ-I5.3 (cards run out mid-deal) and BAC-I4 by analogy: a manager decides;
            # confirm lets the deal be finished (by hand-entered cards), void voids it.
            self._pending.add(SHOE_EXHAUSTED)
            outputs.append(
                self._verdict(
                    SHOE_EXHAUSTED,
                    "the shoe is empty and the coup needs more cards: supervisor decision",
                    event,
                    "BJ-I5.3",
                )
            )
        return outputs

    def _forget_shoe(self) -> None:
        """A new shoe is coming: whatever the old one left outside a round is gone."""
        self._idle.forget()
        self._life.forget()

    # -- faults ---------------------------------------------------------------------------------

    def _fault_event(self, event: Fault | ShoeRemoved) -> list[EngineOutput]:
        model = self._model
        no_card_yet = self.phase == OPEN or (
            self.phase == DEALING and model is not None and not model.deal.order
        )
        if self._screen and no_card_yet:
            # seed-000 PKH-22: the shuffler stops before the cards are dealt: no hand.
            code = event.code if isinstance(event, Fault) else SHOE_REMOVED
            self._machine.fire(self._end_event("void"))
            self._faults.add(code)
            return [self._end_round("void", HAND_CANCELLED, event, extra={"rule": "PKH-22"})]
        return self._latch(event)

    def _latch(self, event: Fault | ShoeRemoved) -> list[EngineOutput]:
        """Not the template's ``fault`` (the card machine takes a fault in a deal as a hold)."""
        code = event.code if isinstance(event, Fault) else SHOE_REMOVED
        phase = self.phase
        outputs: list[EngineOutput] = []
        if phase in (OPEN, DEALING, PENDING_DECISION):
            if self._shoe_rules.on_fault == "void" and phase != PENDING_DECISION:
                self._machine.fire(self._end_event("void"))
                self._faults.add(code)
                return [self._end_round("void", VOID_DEVICE_FAULT, event)]
            if phase == OPEN:
                # No card is out yet: nothing to decide; bets cannot close until it is cleared.
                self._machine.fire(event.type)
            else:
                outputs += self._hold(code, event)
        else:
            self._machine.fire(event.type)
        self._faults.add(code)
        return outputs

    def _read_error(self, event: ReadError) -> list[EngineOutput]:
        self._machine.fire("read_error")
        waiting = self._model is not None
        where = "the coup waits for a rescan or a manual card" if waiting else "no card counted"
        return [
            self._verdict(
                READ_ERROR, f"card not read ({event.reason}): {where}", event, "seed-004 BAC 2.1.7"
            )
        ]

    def _hold(self, reason: str, event: TableEvent) -> list[EngineOutput]:
        """Put the round before a supervisor (seed-000 GEN-11/12, BAC-I4)."""
        self._machine.fire("hold")
        self._pending.add(reason)
        return []

    # -- ends -----------------------------------------------------------------------------------

    def _model_complete(self) -> bool:
        return self._model is not None and self._model.complete()

    def _end_event(self, kind: str) -> str:
        """``kind`` or ``kind_last``: whether the round ending now is the shoe's last."""
        return f"{kind}_last" if self._life.last_coup else kind

    def _partial(self) -> dict[str, Any] | None:
        """A void's face-up cards so far."""
        return None if self._model is None else {"cards": self._model.public()}

    def _end_round(
        self,
        status: Literal["settled", "void"],
        reason: str | None,
        event: TableEvent,
        *,
        extra: dict[str, Any] | None = None,
    ) -> Outcome:
        """End the round with its result: the settled one, or a void's face-up cards so far."""
        if status == "settled":
            assert self._model is not None
            result: dict[str, Any] | None = self._model.result()
        else:
            result = {**(self._partial() or {}), **(extra or {})} or None
        return self._end(status, reason, event, result)

    def _round_ended(self, outcome: Outcome) -> None:
        del outcome
        self._model = None
        self._pending.clear()
        self._life.round_over()
