"""The card engine: one engine for every card game, each a deal script with hooks
(docs/card-games.md).

The engine owns the round's life, the shoe's (:class:`~.shoe.ShoeLife`) and cards between rounds
(:class:`~.idle.IdleCards`); the game owns where cards go. Rule anchors: a stream that begins
mid-shoe (contracts §4.4); ``pending_decision`` for a supervisor (seed-000 GEN-10/11/12, BAC-I4);
no round while a fault is latched (regulatory R14, R18, R21); one ``rng_draw`` before the first
card (seed-001 §2.2 (d); L4025, L4123). Pure; an outcome's ``ts`` is its last event's."""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    DealError,
    Decision,
    RngDraw,
    RoundOpen,
    StaffOn,
    TableEvent,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome
from tablectl.controller.engines.base import IDLE, VOID_ROUND_ABANDONED
from tablectl.controller.engines.cards.phases import (
    BURNING,
    DEAL_ERROR_NOTED,
    DEALING,
    EXTRA_CARD,
    NO_OPEN,
    OPEN,
    PENDING_DECISION,
    SHOE_END,
    SHUFFLE_REQUIRED,
    VOID_MISDEAL,
)
from tablectl.controller.engines.cards.round import ScriptRound
from tablectl.controller.engines.cards.table import CardTable
from tablectl.controller.games.cards import shoe as shoe_rules
from tablectl.controller.games.cards.deal import WRONG_CARD_COUNT, BaseGame
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.rng import (
    RNG_AFTER_RESULT,
    RNG_MISSING,
    Stage,
    picks_data,
    rng_order,
)
from tablectl.drivers.cards import Card as PlayingCard

BURN_MISSED: Final = "burn_missed"
"""A card dealt into a round before the burn a dealer change owes (R7)."""


class CardEngine(CardTable):
    """One card table's shoes and rounds, built as :class:`~tablectl.controller.engines.EngineClass`
    says."""

    _BETS_LATCHED = "no deal while faults are latched ({faults})"

    def __init__(
        self,
        table_id: str,
        card_game: BaseGame,
        *,
        game: str | None = None,
        next_round: int = 1,
    ) -> None:
        # The whole handler table in one place: the round's events here, the shoe's and the
        # devices' in :class:`~.table.CardTable`.
        super().__init__(
            table_id,
            card_game,
            game=game,
            next_round=next_round,
            handlers={
                "card": self._card_event,
                "decision": self._decision,
                "confirm": self._confirm_event,
                "fault": self._fault_event,
                "shoe_removed": self._fault_event,
                "cut_card": self._cut,
                "shuffle_started": self._shuffle_started,
                "shuffle_completed": self._shuffle_completed,
                "shoe_empty": self._shoe_empty,
                "read_error": self._read_error,
                "deal_error": self._deal_error,
                # Only a game with an RNG takes the draw; the others refuse it as before.
                **({"rng_draw": self._rng_draw} if card_game.rng_draw else {}),
            },
        )
        self._last_round: str | None = None
        self._read_in_round = 0
        """Cards read in the round in progress (not the carried ones it began with): an RNG's
        draw is too late once the first is out."""
        self._burn_owed = 0
        """Cards still to burn after a dealer change (R7, ``burn_after_dealer_change``)."""

    # -- public surface -------------------------------------------------------------------------

    def conceals(self, event: TableEvent) -> bool:
        """Whether ``event`` is a card that must not be published yet: a face-down card
        (seed-002-004 BJ 3.7), a burned card (seed-000 BAC-E6), no card before its reveal
        (seed-000 L79). Asked before journaling."""
        if not isinstance(event, Card):
            return False
        phase = self.phase
        if phase in (DEALING, PENDING_DECISION):
            model = self._model
            return model is not None and model.expects_card() and model.next_hidden()
        if phase == BURNING:
            return self._life.burn_hidden
        return self._burns_now()

    def _burns_now(self) -> bool:
        """The next card is a dealer change's burn: owed, and no card of a round is due yet."""
        return self._burn_owed > 0 and self.phase in (IDLE, OPEN)

    def snapshot(self) -> dict[str, Any]:
        """Table state for the ``state`` topic: never an undealt, burned or face-down card (seed-000
        L79, §11 item 10); with the dealer screen, ``deal`` is its prompt."""
        state = self._state(
            pending=sorted(self._pending),
            shoe=self._life.summary(),
            coup=None if self._model is None else self._model.public(),
            carried=len(self._idle.carried),
            deal_without_bets=self._idle.no_bets is not None,
        )
        if self._prompts:
            state["deal"] = None if self._model is None else self._model.prompt()
        if self._game_rules.rng_draw:
            state["rng"] = self._rng_state()
        if self._burn_owed:
            state["dealer_burn"] = self._burn_owed
        return state

    def _dealer_changed(self, event: StaffOn) -> list[EngineOutput]:
        """R7: cards are burned after a dealer change (``[rules] burn_after_dealer_change``)."""
        del event
        self._burn_owed = self._shoe_rules.burn_after_dealer_change
        return []

    # -- round lifecycle ------------------------------------------------------------------------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        refusal = NO_OPEN.get(self.phase)
        if refusal is not None:
            code, why, rule = refusal
            return [self._verdict(code, f"round not opened: {why}", event, rule)]
        refused = self._open_refused(event)
        if refused is not None:
            return [refused]
        outputs: list[EngineOutput] = []
        if self._round is not None and self._end_event("void") == "void_last":
            # The abandoned round was the shoe's last: it is void and no new one opens.
            self._machine.fire("void_last")
            return [
                self._end_round("void", VOID_ROUND_ABANDONED, event),
                self._verdict(
                    SHUFFLE_REQUIRED, "round not opened: the shoe's last coup is over", event
                ),
            ]
        self._machine.fire("round_open")
        if self._round is not None:
            # Regulatory R15: a new round while one is in progress voids the old one.
            outputs.append(self._end_round("void", VOID_ROUND_ABANDONED, event))
        abandoned = self._idle.abandon()
        if abandoned is not None:
            outputs.append(self._finding(abandoned, event))
        self._take_round(event)
        self._life.rounds += 1
        return outputs

    def _bets_now_closed(self, event: BetsClosed) -> list[EngineOutput]:
        self._model = model = ScriptRound(self._game_rules, event)
        self._read_in_round = 0
        outputs: list[EngineOutput] = []
        while (carried := self._idle.next_for(model)) is not None:
            # BAC-I1/BAC-I2, BJ-I1: the carried card is the next card played.
            outputs += self._place(carried, event)
        return outputs + self._maybe_settle(event)

    def _decision(self, event: Decision) -> list[EngineOutput]:
        self._machine.fire("decision")
        assert self._model is not None
        finding = self._model.decide(event)
        if finding is not None:
            return [self._finding(finding, event)]
        return self._maybe_settle(event)

    def _confirm_event(self, event: TableEvent) -> list[EngineOutput]:
        model = self._model
        if self._screen and self.phase == DEALING and model is not None and model.pending():
            return [
                self._verdict(
                    WRONG_CARD_COUNT,
                    f"the decision window cannot close: {model.pending()} card(s) of this stage "
                    "are still due",
                    event,
                    "PKH-21",
                )
            ]
        if self.phase == PENDING_DECISION:
            assert model is not None
            if model.complete():
                return [self._settle(event)]
            self._machine.fire("resume")
            self._pending.clear()
            return []
        if self.phase == DEALING:
            assert model is not None
            if not model.confirm():
                raise TransitionNotAllowedError("nothing to confirm in this deal")
            self._machine.fire("confirm")
            closed = [self._finding(f, event) for f in model.closed_findings()]
            return [*closed, *self._maybe_settle(event)]
        # burn: the supervisor accepts the burn as done (e.g. burned cards were not scanned).
        self._machine.fire("confirm")
        self._life.accept_burn()
        return []

    def _deal_error(self, event: DealError) -> list[EngineOutput]:
        model = self._model
        if self.phase not in (DEALING, PENDING_DECISION) or model is None:
            raise TransitionNotAllowedError("no deal in progress")
        remedy = self._game_rules.deal_error(model.deal, event)
        where = f" at {event.position}" if event.position else ""
        what = f"{event.kind.replace('_', ' ')}{where}"
        if remedy.action == "void":
            self._machine.fire(self._end_event("void"))
            extra = {"remedy": remedy.remedy, "rule": remedy.rule, "error": what}
            return [self._end_round("void", remedy.reason, event, extra=extra)]
        self._machine.fire("decision")  # stays in its phase
        if remedy.action == "note":
            message = f"{what}: noted, the round goes on ({remedy.remedy})"
            code = remedy.code or DEAL_ERROR_NOTED
            return [self._verdict(code, message, event, remedy.rule)]
        message = model.remedy(remedy, event.position, what)
        verdict = self._verdict(WRONG_CARD_COUNT, message, event, remedy.rule)
        return [verdict, *self._maybe_settle(event)]

    # -- the studio RNG -------------------------------------------------------------------------

    def _rng_draw(self, event: RngDraw) -> list[EngineOutput]:
        """The RNG's picks: after ``bets_closed``, before the first card, once (seed-001 §2.2
        (d), L4019–4025, L4117–4123); anything else is a verdict and the round goes on."""
        model, phase = self._model, self.phase
        dealt = self._read_in_round > 0
        stage: Stage = (
            "betting" if phase == OPEN
            else ("dealing" if dealt else "closed") if phase in (DEALING, PENDING_DECISION)
            else "ended" if self._last_round is not None
            else "none"
        )  # fmt: skip
        drawn = model is not None and model.deal.rng is not None
        refused = rng_order(expected=True, stage=stage, drawn=drawn)
        if refused is not None:
            code, message = refused
            data: dict[str, Any] = {"numbers": picks_data(event.numbers)}
            if code == RNG_AFTER_RESULT:
                data["last_round"] = self._last_round
            return [self._verdict(code, message, event, self._game_rules.rng_rule, **data)]
        self._machine.fire("rng_committed")  # no round in play yet: refused
        assert model is not None
        checked = self._game_rules.check_rng(event.numbers)
        if isinstance(checked, Finding):
            return [self._finding(checked, event)]
        model.deal.rng = checked
        return []

    def _rng_missing(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        """The round's first card with no RNG draw: its multipliers can no longer be drawn blind
        (§2.2 (d)); void, or held for a supervisor, by the game's ``on_rng_missing``."""
        message = f"{card.code} is the round's first card and the RNG's draw has not come"
        missing = self._verdict(RNG_MISSING, message, event, self._game_rules.rng_rule)
        if self._game_rules.on_rng_missing == "void":
            self._machine.fire(self._end_event("void"))
            outputs = self._deal_from_shoe(card, event, hidden=False)
            extra = {"card": card.code}
            return [missing, *outputs, self._end_round("void", RNG_MISSING, event, extra=extra)]
        outputs = [missing, *self._place(card, event)]
        if self.phase == DEALING:
            outputs += self._hold(RNG_MISSING, event)
        return outputs

    def _rng_state(self) -> dict[str, Any]:
        """The snapshot's ``rng``: whether the deal waits for the RNG (bets closed, no card, no
        draw: the dealer screen says "wait"), and the round's picks once drawn."""
        model = self._model
        rng = None if model is None else model.deal.rng
        awaits = self.phase == DEALING and model is not None and not self._read_in_round
        return {
            "awaits": awaits and rng is None,
            "picks": None if rng is None else [{"card": c, "multiplier": m} for c, m in rng],
        }

    # -- cards ----------------------------------------------------------------------------------

    def _card_event(self, event: Card) -> list[EngineOutput]:
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

    def _card(self, event: Card) -> list[EngineOutput]:
        parsed = shoe_rules.read_card(event.card, symbols=self._symbols)
        if isinstance(parsed, Finding):
            self._machine.fire("read_error")  # same effect as a read error: nothing moves
            return [self._finding(parsed, event)]
        phase = self.phase
        if self._burn_owed:
            burned = self._dealer_burn(parsed, event)
            if burned is not None:
                return burned
        if phase == OPEN:
            return self._misdeal(parsed, event)
        if phase in (DEALING, PENDING_DECISION):
            self._machine.fire("card")
            return self._card_in_round(parsed, event)
        if phase == BURNING:
            self._machine.fire("card")
            return self._burn_card(parsed, event)
        self._machine.fire("card")  # idle or shoe_end (anything else is refused here)
        outputs = self._deal_from_shoe(parsed, event, hidden=False)
        if phase == SHOE_END:
            # After the last coup (seed-004 BAC 3.5.4) the stub is counted out through the reader
            # (R10: the dealer counts the stub); the shoe_empty that follows reconciles (R6).
            return outputs
        return outputs + self._idle_card(parsed, event)

    def _dealer_burn(self, card: PlayingCard, event: Card) -> list[EngineOutput] | None:
        """R7: between rounds (or while bets are open) the card is burned unseen; dealt into a
        round instead, it is ``burn_missed`` and the round is void. ``None``: not a burn's."""
        if self._burns_now():
            self._burn_owed -= 1
            return self._deal_from_shoe(card, event, hidden=True)
        if self.phase not in (DEALING, PENDING_DECISION) or self._round is None:
            return None
        self._burn_owed = 0
        message = f"{card.code} was dealt before the burn a dealer change owes"
        verdict = self._verdict(BURN_MISSED, message, event, "R7")
        self._machine.fire(self._end_event("void"))
        outputs = self._deal_from_shoe(card, event, hidden=False)
        return [verdict, *outputs, self._end_round("void", BURN_MISSED, event)]

    def _card_in_round(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        assert self._model is not None
        if not self._model.expects_card():
            # Past the last card the rules call for (only while pending: dealing settles first).
            outputs = self._deal_from_shoe(card, event, hidden=False)
            return [*outputs, self._finding(self._idle.carry(card), event)]
        if self._game_rules.rng_draw and self._model.deal.rng is None and not self._read_in_round:
            self._read_in_round += 1
            return self._rng_missing(card, event)
        self._read_in_round += 1
        return self._place(card, event) + self._maybe_settle(event)

    def _place(self, card: PlayingCard, event: TableEvent) -> list[EngineOutput]:
        """Deal ``card`` into the round in progress; hold the round on a foreign card."""
        assert self._model is not None
        hidden = self._model.next_hidden()
        outputs = self._deal_from_shoe(card, event, hidden=hidden)
        if card.is_joker and not self._shoe_rules.jokers_per_deck:
            return outputs  # refused by the shoe (a hold); it takes no place in a hand
        finding = self._model.place(card)
        if finding is not None:
            outputs.append(self._finding(finding, event))
            if finding.severity == "carry":
                self._idle.carried.append(card)
            elif finding.severity == "hold" and self.phase == DEALING:
                outputs += self._hold(finding.code, event)
        return outputs

    def _idle_card(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        """A card with no round in progress (BAC-I1/I2/I3, BJ-I1)."""
        findings, coup_over = self._idle.card(card)
        outputs: list[EngineOutput] = [self._finding(f, event) for f in findings]
        if coup_over and self._life.count_down():
            self._machine.fire("idle_last")  # the coup without bets was the shoe's last
        return outputs

    def _misdeal(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        """seed-002-004 BAC 2.1.6 / BJ 2.1.3, R10: no card before "no more bets"."""
        self._machine.fire(self._end_event("misdeal"))
        outputs = self._deal_from_shoe(card, event, hidden=False)
        # R7: the card is burned; the round is void.
        outputs.append(self._end_round("void", VOID_MISDEAL, event, extra={"card": card.code}))
        return outputs

    # -- ends -----------------------------------------------------------------------------------

    def _maybe_settle(self, event: TableEvent) -> list[EngineOutput]:
        if self.phase != DEALING or not self._model_complete():
            return []
        return [self._settle(event)]

    def _settle(self, event: TableEvent) -> Outcome:
        self._machine.fire(self._end_event("settle"))
        return self._end_round("settled", None, event)

    def _round_ended(self, outcome: Outcome) -> None:
        self._last_round = outcome.round
        super()._round_ended(outcome)
