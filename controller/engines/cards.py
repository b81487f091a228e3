"""The shoe-game engine that baccarat, dragon tiger and blackjack share.

:class:`CardEngine` owns what every shoe game has: the shoe's life (shuffle, reconciliation, burn,
cut card, composition, removal, exhaustion), the round's life (open, bets closed, cards, supervisor
decisions, voids) and the irregularities of the card stream. What a round's cards mean is a
:class:`RoundModel` per game: :class:`BaccaratCoup` here, the dragon tiger and blackjack models in
their modules. Pure: no asyncio, no I/O, no clock; an outcome's ``ts`` is its last event's.

Phases (the machine's states)::

                      shuffle_completed (ok)                      round_open
    shuffling ───────────────────────────────▶ [burn] ──▶ idle ───────────▶ open
        ▲   shuffle_completed (count wrong) ─▶ shoe_end      ▲                │ bets_closed
        │                                        │  ▲        │ settle / void  ▼
        └──────────── shuffle_started ───────────┘  └────────┴──────────── dealing ◀─┐
                                                    settle_last / void_last   │ hold │ confirm
                                                    (cut card's last coup,    ▼      │ (resume)
                                                     shoe empty)       pending_decision

- ``idle`` is the only phase in which a round may open (the betting timer opens rounds there).
  The initial phase is ``idle`` with a shoe of unknown history: a stream that begins mid-shoe
  (DESIGN §4.4) validates from its first ``round_open``, counting composition from a full shoe and
  expecting no burn.
- The engine decides from device events alone when a coup is complete: the outcome is published
  right after the last card the rules call for.
- ``pending_decision`` holds a round for a supervisor (seed-000 GEN-10/11/12, BAC-I4): a device
  fault once the deal has begun (``[rules] on_fault = "decide"``; during betting a fault only
  latches and bets cannot close), a card that proves the shoe holds a foreign card, or an empty
  shoe mid-coup. Cards keep being tracked; ``confirm`` settles a complete coup (or lets the deal go
  on) and ``void`` voids it.
- Faults are latched beside the phase (``fault`` → ``fault_cleared`` with the same code;
  ``shoe_removed`` latches the code ``shoe_removed``). No round opens while any is latched
  (regulatory R14, R18, R21).

Irregularities of the card stream (codes in ``docs/verdicts.md``, "Card games"):

- a card while betting is open → the round is void ``misdeal`` (seed-002-004 BAC 2.1.6 / BJ
  2.1.3, regulatory R10); the card is burned (R7: cards are burned after a misdeal);
- a card when no card is due right after a coup → verdict ``extra_card``: it becomes the first card
  of the next coup (seed-000 BAC-I1, BAC-I2; blackjack BJ-I1 "all cards are played");
- more cards while idle → baccarat/dragon tiger: verdict ``deal_without_bets``, the coup is played
  to the end without bets and reported as verdict ``no_action_coup`` with its result (BAC-I3; no
  outcome, since no round was opened and nothing may be settled); blackjack: each is carried too;
- a ``read_error`` → verdict ``read_error``; the coup waits for a rescan or a manual ``card``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, Protocol

from tablectl.controller.core.errors import TransitionNotAllowedError
from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    CutCard,
    Decision,
    Fault,
    ReadError,
    RoundOpen,
    ShoeEmpty,
    ShoeRemoved,
    ShuffleCompleted,
    TableEvent,
    Void,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, ShoeReport, Verdict
from tablectl.controller.core.statemachine import MachineDefinition, StateMachine, Transition
from tablectl.controller.engines.base import FAULT_LATCHED, NOT_FOR_THIS_GAME, EngineBase, RoundIds
from tablectl.controller.games.cards import shoe as shoe_rules
from tablectl.controller.games.cards.shoe import (
    Burn,
    Shoe,
    ShoeRules,
    check_cut_card,
    check_shuffle,
)
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card as PlayingCard

__all__ = [
    "BURNING",
    "DEALING",
    "IDLE",
    "NOT_FOR_THIS_GAME",
    "OPEN",
    "PENDING_DECISION",
    "SHOE_END",
    "SHUFFLING",
    "CardEngine",
    "RoundModel",
]

IDLE: Final = "idle"
OPEN: Final = "open"
DEALING: Final = "dealing"
PENDING_DECISION: Final = "pending_decision"
BURNING: Final = "burn"
SHUFFLING: Final = "shuffling"
SHOE_END: Final = "shoe_end"

# Void reasons produced by the engine.
VOID_MISDEAL: Final = "misdeal"
VOID_DEVICE_FAULT: Final = "device_fault"
VOID_ROUND_ABANDONED: Final = "round_abandoned"
VOID_SHOE_EXHAUSTED: Final = "shoe_exhausted"
VOID_SUPERVISOR_DEFAULT: Final = "supervisor_void"

# Verdict codes (the shoe's own are in tablectl.controller.games.cards.shoe).
EXTRA_CARD: Final = "extra_card"
DEAL_WITHOUT_BETS: Final = "deal_without_bets"
NO_ACTION_COUP: Final = "no_action_coup"
COUP_ABANDONED: Final = "coup_abandoned"
READ_ERROR: Final = "read_error"
DECISION_PENDING: Final = "decision_pending"
BURN_INCOMPLETE: Final = "burn_incomplete"
SHUFFLE_REQUIRED: Final = "shuffle_required"
CUT_CARD_REPEATED: Final = "cut_card_repeated"
SHOE_EXHAUSTED: Final = "shoe_exhausted"
SHOE_REMOVED: Final = "shoe_removed"
PENDING_FAULT: Final = "device_fault"

_OTHER_GAMES: Final = frozenset(
    {"ball_launched", "winning_number", "no_spin", "ball_drawn", "segment"}
)


class RoundModel(Protocol):
    """What a game's rules make of one round's cards. Built at ``bets_closed`` (or for a deal
    without bets) and fed the carried cards first."""

    def expects_card(self) -> bool:
        """Whether the rules call for (or accept) another card now."""
        ...

    def place(self, card: PlayingCard) -> Finding | None:
        """Put the next card where the rules send it (only when :meth:`expects_card`); a finding
        when the card breaks a rule (the card is placed anyway)."""
        ...

    def next_hidden(self) -> bool:
        """Whether the next card is dealt face down (blackjack's scanned hole card): findings
        about it must not name it."""
        ...

    def decide(self, decision: Decision) -> Finding | None:
        """A player's decision; a finding when the rules refuse it (nothing changes then)."""
        ...

    def confirm(self) -> bool:
        """A ``confirm`` while dealing (blackjack: the insurance window is over); ``False`` when
        the game has nothing to confirm then (the engine refuses the event)."""
        ...

    def complete(self) -> bool:
        """Whether the round has all the cards it needs: the outcome is due now."""
        ...

    def result(self) -> dict[str, Any]:
        """The settled result (only when :meth:`complete`)."""
        ...

    def public(self) -> dict[str, Any]:
        """The face-up cards so far, for snapshots and void results: never a hidden card."""
        ...


ModelFactory = Callable[[BetsClosed | None], RoundModel]


def _definition(name: str) -> MachineDefinition:
    """The shoe-game machine (same for every card game; games differ in their round model)."""
    t: list[Transition] = []

    def add(source: str, event: str, target: str) -> None:
        t.append(Transition(source, event, target))

    shoe_loaded = (
        ("shuffle_started", SHUFFLING),
        ("shoe_ok", IDLE),
        ("shoe_burn", BURNING),
        ("shoe_rejected", SHOE_END),
    )
    latches = ("fault", "fault_cleared", "shoe_removed", "read_error")
    # idle: between coups.
    for event, target in (
        ("round_open", OPEN),
        ("card", IDLE),
        ("idle_last", SHOE_END),
        ("cut_card", IDLE),
        ("shoe_empty", SHOE_END),
        *shoe_loaded,
    ):
        add(IDLE, event, target)
    # In a round: the ends, and what keeps it where it is.
    ends = (("settle", IDLE), ("settle_last", SHOE_END), ("void", IDLE), ("void_last", SHOE_END))
    for phase in (OPEN, DEALING, PENDING_DECISION):
        for event, target in ends:
            if phase == OPEN and event.startswith("settle"):
                continue
            add(phase, event, target)
        for event in ("cut_card", "fault_cleared", "read_error", "card"):
            if phase != OPEN or event != "card":
                add(phase, event, phase)
        if phase != OPEN:
            add(phase, "hold", PENDING_DECISION)
    add(OPEN, "bets_closed", DEALING)
    add(OPEN, "fault", OPEN)
    add(OPEN, "shoe_removed", OPEN)
    add(OPEN, "round_open", OPEN)
    add(OPEN, "misdeal", IDLE)
    add(OPEN, "misdeal_last", SHOE_END)
    add(DEALING, "round_open", OPEN)
    add(DEALING, "decision", DEALING)
    add(DEALING, "confirm", DEALING)
    add(PENDING_DECISION, "decision", PENDING_DECISION)
    add(PENDING_DECISION, "resume", DEALING)
    # burn: the procedure of a new shoe; a supervisor may accept it as done (confirm).
    for event, target in (
        ("card", BURNING),
        ("burn_done", IDLE),
        ("confirm", IDLE),
        ("cut_card", BURNING),
        ("shoe_empty", SHOE_END),
        *shoe_loaded,
    ):
        add(BURNING, event, target)
    for event, target in shoe_loaded:
        add(SHUFFLING, event, target)
    for event, target in (("card", SHOE_END), ("shoe_empty", SHOE_END), *shoe_loaded):
        add(SHOE_END, event, target)
    for phase in (IDLE, BURNING, SHUFFLING, SHOE_END):
        for event in latches:
            add(phase, event, phase)
    return MachineDefinition(
        name,
        states=(IDLE, OPEN, DEALING, PENDING_DECISION, BURNING, SHUFFLING, SHOE_END),
        initial=IDLE,
        transitions=t,
    )


# Built (and so validated) at import.
_MACHINE: Final = _definition("card_table")


class CardEngine(EngineBase):
    """One shoe-game table's shoes and rounds (see the module docstring).

    Args:
        table_id: round ids are ``f"{table_id}-{n:06d}"``.
        game: the registry key put into every outcome.
        rules: the shoe keys (decks, burn, cut card, last coup, on_fault).
        new_round: builds the game's :class:`RoundModel` for a round (given its ``bets_closed``)
            or for a deal without bets (``None``).
        no_bets_deal: whether cards dealt with no round form a coup played to the end without
            bets (baccarat BAC-I3); otherwise every such card is carried to the next round (BJ-I1).
        unique_barcodes: each physical card has its own barcode (war of bets): a barcode read
            twice in a shoe is a ``duplicate_barcode`` hold.
        decisions: whether players decide (blackjack); otherwise ``decision`` events are
            ``not_for_this_game``.
        coups_per_shoe: rounds a shoe deals before it must be shuffled again (``1``: a deck
            shuffled for every round, the single-deck games); ``None``: until the cut card.
        deal_errors: whether the game takes ``deal_error`` reports (the scripted games);
            otherwise they are ``not_for_this_game``.
        next_round: ``n`` of the first round id.

    Raises:
        ValueError: ``next_round`` is below 1.
    """

    _family = "card"

    def __init__(
        self,
        table_id: str,
        game: str,
        rules: ShoeRules,
        new_round: ModelFactory,
        *,
        no_bets_deal: bool = True,
        unique_barcodes: bool = False,
        decisions: bool = False,
        coups_per_shoe: int | None = None,
        deal_errors: bool = False,
        next_round: int = 1,
    ) -> None:
        self._ids = RoundIds(table_id, next_round)
        self._table = table_id
        self._game = game
        self._shoe_rules = rules
        self._new_round = new_round
        self._no_bets_deal = no_bets_deal
        self._unique_barcodes = unique_barcodes
        other = _OTHER_GAMES if decisions else _OTHER_GAMES | {"decision"}
        self._other_games = other if deal_errors else other | {"deal_error"}
        self._coups_per_shoe = coups_per_shoe
        self._machine = StateMachine(_MACHINE)
        self._rounds = 0
        self._shoe_rounds = 0
        """Rounds opened in the current shoe (reported at the shoe's end)."""
        self._round: str | None = None
        self._faults: set[str] = set()
        self._pending: set[str] = set()
        self._model: RoundModel | None = None
        self._carry: list[PlayingCard] = []
        self._no_bets: RoundModel | None = None
        self._shoe = Shoe(
            rules.decks, jokers_per_deck=rules.jokers_per_deck, known=False, ranks=rules.ranks
        )
        self._shoe_state: Literal["unknown", "ready", "rejected", "ended"] = "unknown"
        self._burn: Burn | None = None
        self._barcodes: set[str] = set()
        self._cut_card = False
        self._coups_left: int | None = coups_per_shoe
        self._handlers: Mapping[str, Callable[[Any], list[EngineOutput]]] = {
            "round_open": self._round_open,
            "bets_closed": self._bets_closed,
            "card": self._card,
            "decision": self._decision,
            "confirm": self._confirm,
            "void": self._void,
            "fault": self._fault,
            "shoe_removed": self._fault,
            "fault_cleared": self._fault_cleared,
            "cut_card": self._cut,
            "shuffle_started": self._shuffle_started,
            "shuffle_completed": self._shuffle_completed,
            "shoe_empty": self._shoe_empty,
            "read_error": self._read_error,
        }

    # -- public surface -------------------------------------------------------------------------

    @property
    def game(self) -> str:
        return self._game

    def conceals(self, event: TableEvent) -> bool:
        """Whether ``event``, applied next, is a card dealt face down, which must not be published
        before it is revealed: the blackjack hole card read by the scanner (seed-002-004 BJ 3.7),
        burned cards ("burned without anyone seeing them", seed-000 BAC-E6), and generally no
        card before its reveal (seed-000 L79). The runner asks before journaling the event."""
        if not isinstance(event, Card):
            return False
        phase = self.phase
        if phase in (DEALING, PENDING_DECISION):
            return (
                self._model is not None
                and self._model.expects_card()
                and (self._model.next_hidden())
            )
        if phase == BURNING:
            return self._burn is not None and self._burn.shown is not None
        return False

    @property
    def shoe(self) -> Shoe:
        """The shoe in use (composition counters; never the order of undealt cards)."""
        return self._shoe

    def snapshot(self) -> dict[str, Any]:
        """Table state for the retained ``state`` topic.

        Never an undealt, burned or face-down card (seed-000 L79, §11 item 10): the shoe appears
        as counters only, the round as its face-up cards.
        """
        shoe = self._shoe
        return {
            "phase": self.phase,
            "round": self._round,
            "rounds": self._rounds,
            "faults": sorted(self._faults),
            "pending": sorted(self._pending),
            "shoe": {
                "state": self._shoe_state,
                "decks": shoe.decks,
                "size": shoe.size,
                "dealt": shoe.dealt,
                "remaining": shoe.remaining if shoe.known else None,
                "shuffler_count": shoe.counted,
                "cut_card_seen": self._cut_card,
                "coups_left": self._coups_left,
                "burn": None if self._burn is None else self._burn.summary(),
            },
            "coup": None if self._model is None else self._model.public(),
            "carried": len(self._carry),
            "deal_without_bets": self._no_bets is not None,
        }

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        """Feed one event, get what it concludes. Never raises for a bad sequence."""
        return self._dispatch(event)

    def _refusal(self, exc: TransitionNotAllowedError, event: TableEvent) -> str:
        # The machine may have been fired with an internal name (settle_last, shoe_burn…): the
        # verdict names the event as it came.
        allowed = self._accepted()
        detail = str(exc) if "latched" in str(exc) else f"allowed: {allowed}"
        return f"{event.type!r} is not allowed in phase {self.phase!r} ({detail})"

    def _accepted(self) -> str:
        """The event types the current phase takes (for verdict messages)."""
        moves = set(self._machine.definition.allowed(self.phase))
        aliases = {"shuffle_completed": "shoe_ok", "confirm": "resume", "void": "void_last"}
        names = {t for t in self._handlers if t in moves or aliases.get(t) in moves}
        return ", ".join(sorted(names)) or "none"

    # -- round lifecycle ------------------------------------------------------------------------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        phase = self.phase
        refusal = {
            PENDING_DECISION: (DECISION_PENDING, "a round waits for a supervisor", "GEN-11"),
            BURNING: (BURN_INCOMPLETE, "the burn of the new shoe is not complete", "BAC-E6"),
            SHUFFLING: (SHUFFLE_REQUIRED, "the shoe is being shuffled", "seed-004 BAC 3.5.4"),
            SHOE_END: (
                SHUFFLE_REQUIRED,
                "no round before the shoe is shuffled",
                "seed-004 BAC 3.5.4",
            ),
        }.get(phase)
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
        if self._no_bets is not None:
            outputs.append(
                self._verdict(
                    COUP_ABANDONED,
                    "a deal without bets was left unfinished; its cards stay counted",
                    event,
                    "BAC-I3",
                )
            )
            self._no_bets = None
        self._round = self._ids.take(event.round)
        self._rounds += 1
        self._shoe_rounds += 1
        return outputs

    def _bets_closed(self, event: BetsClosed) -> list[EngineOutput]:
        if self._faults and self.phase == OPEN:
            faults = ", ".join(sorted(self._faults))
            return [
                self._verdict(
                    FAULT_LATCHED, f"no deal while faults are latched ({faults})", event, "R14"
                )
            ]
        self._machine.fire("bets_closed")
        self._model = self._new_round(event)
        outputs: list[EngineOutput] = []
        model = self._model
        while self._carry and model.expects_card():
            # BAC-I1/BAC-I2, BJ-I1: the carried card is the next card played.
            outputs += self._place(self._carry.pop(0), event)
        return outputs + self._maybe_settle(event)

    def _decision(self, event: Decision) -> list[EngineOutput]:
        self._machine.fire("decision")
        assert self._model is not None
        finding = self._model.decide(event)
        if finding is not None:
            return [self._finding(finding, event)]
        return self._maybe_settle(event)

    def _confirm(self, event: TableEvent) -> list[EngineOutput]:
        if self.phase == PENDING_DECISION:
            assert self._model is not None
            if self._model.complete():
                return [self._settle(event)]
            self._machine.fire("resume")
            self._pending.clear()
            return []
        if self.phase == DEALING:
            assert self._model is not None
            if not self._model.confirm():
                raise TransitionNotAllowedError("nothing to confirm in this deal")
            self._machine.fire("confirm")
            return self._maybe_settle(event)
        # burn: the supervisor accepts the burn as done (e.g. burned cards were not scanned).
        self._machine.fire("confirm")
        self._shoe_state = "ready"
        return []

    def _void(self, event: Void) -> list[EngineOutput]:
        reason = event.reason.strip() or VOID_SUPERVISOR_DEFAULT
        self._machine.fire(self._end_event("void"))
        return [self._end_round("void", reason, event)]

    # -- cards ----------------------------------------------------------------------------------

    def _card(self, event: Card) -> list[EngineOutput]:
        parsed = shoe_rules.read_card(event.card)
        if isinstance(parsed, Finding):
            self._machine.fire("read_error")  # same effect as a read error: nothing moves
            return [self._finding(parsed, event)]
        phase = self.phase
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

    def _card_in_round(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        assert self._model is not None
        if not self._model.expects_card():
            # Past the last card the rules call for (only while pending: dealing settles first).
            return self._deal_from_shoe(card, event, hidden=False) + self._carry_card(card, event)
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
                self._carry.append(card)
            elif finding.severity == "hold" and self.phase == DEALING:
                outputs += self._hold(finding.code, event)
        return outputs

    def _deal_from_shoe(
        self, card: PlayingCard, event: TableEvent, *, hidden: bool
    ) -> list[EngineOutput]:
        """Count ``card`` out of the shoe; verdicts (and a hold, in a round) for what it proves."""
        findings: list[Finding] = []
        found = self._shoe.deal(card)
        if found is not None:
            findings.append(found)
        barcode = event.barcode if isinstance(event, Card) else None
        if self._unique_barcodes and barcode is not None:
            if barcode in self._barcodes:
                findings.append(
                    Finding(
                        shoe_rules.DUPLICATE_BARCODE,
                        "seed-001 §3.8",
                        f"barcode {barcode!r} was already read in this shoe",
                        severity="hold",
                    )
                )
            self._barcodes.add(barcode)
        outputs: list[EngineOutput] = []
        for finding in findings:
            message = finding.message
            if hidden:
                message = f"{finding.code}: the face-down card breaks the shoe's composition"
            outputs.append(self._finding(Finding(finding.code, finding.rule, message), event))
            if finding.severity == "hold" and self.phase in (DEALING, PENDING_DECISION):
                outputs += self._hold(finding.code, event)
        return outputs

    def _idle_card(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        """A card with no round in progress (BAC-I1/I2/I3, BJ-I1)."""
        if card.is_joker:
            return []
        if self._no_bets is not None:
            self._no_bets.place(card)
            return self._maybe_finish_no_bets(event)
        if self._carry and self._no_bets_deal:
            # BAC-I3: cards dealt with no bets in the boxes; the deal is played to the end.
            model = self._new_round(None)
            self._no_bets = model
            self._carry.append(card)
            while self._carry and model.expects_card():
                model.place(self._carry.pop(0))
            started = self._verdict(
                DEAL_WITHOUT_BETS,
                "cards dealt with no round open: the coup is played to the end without bets",
                event,
                "BAC-I3",
            )
            return [started, *self._maybe_finish_no_bets(event)]
        return self._carry_card(card, event)

    def _carry_card(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        self._carry.append(card)
        rule = "BAC-I2" if self._no_bets_deal else "BJ-I1"
        return [
            self._verdict(
                EXTRA_CARD,
                f"{card.code} was not called for: it is the first card of the next coup",
                event,
                rule,
            )
        ]

    def _maybe_finish_no_bets(self, event: TableEvent) -> list[EngineOutput]:
        model = self._no_bets
        assert model is not None
        if not model.complete():
            return []
        self._no_bets = None
        verdict = Verdict(
            code=NO_ACTION_COUP,
            message="coup dealt without bets completed (no action)",
            round=None,
            rule="BAC-I3",
            ts=event.ts,
            data={"event": event.type, "phase": self.phase, "result": model.result()},
        )
        if self._count_down_coup() and self.phase == IDLE:
            self._machine.fire("idle_last")
        return [verdict]

    def _misdeal(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        """seed-002-004 BAC 2.1.6 / BJ 2.1.3, R10: no card before "no more bets"."""
        self._machine.fire(self._end_event("misdeal"))
        outputs = self._deal_from_shoe(card, event, hidden=False)
        # R7: the card is burned; the round is void.
        outputs.append(self._end_round("void", VOID_MISDEAL, event, extra={"card": card.code}))
        return outputs

    # -- the shoe -------------------------------------------------------------------------------

    def _burn_card(self, card: PlayingCard, event: Card) -> list[EngineOutput]:
        assert self._burn is not None
        hidden = self._burn.shown is not None  # burned cards are never shown
        outputs = self._deal_from_shoe(card, event, hidden=hidden)
        if self._burn.take(card):
            self._machine.fire("burn_done")
            self._shoe_state = "ready"
        return outputs

    def _cut(self, event: CutCard) -> list[EngineOutput]:
        if self._cut_card:
            return [self._verdict(CUT_CARD_REPEATED, "the cut card is already out", event)]
        self._machine.fire("cut_card")
        self._cut_card = True
        # The coup in progress (or the next one, if none) is the last, plus one with "next".
        self._coups_left = 1 + (1 if self._shoe_rules.last_coup == "next" else 0)
        finding = check_cut_card(self._shoe, self._shoe_rules.cut_card_min_behind)
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
        )
        if finding is not None:
            self._machine.fire("shoe_rejected")
            self._forget_shoe()
            self._shoe_state = "rejected"
            return [self._finding(finding, event)]
        self._machine.fire("shoe_burn" if rules.burn else "shoe_ok")
        self._forget_shoe()
        self._shoe = Shoe(
            rules.decks,
            jokers_per_deck=rules.jokers_per_deck,
            known=True,
            counted=event.cards,
            ranks=rules.ranks,
        )
        self._burn = Burn() if rules.burn else None
        self._shoe_state = "ready"
        self._coups_left = self._coups_per_shoe
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
        outputs: list[EngineOutput] = []
        finding = self._shoe.empty()
        if finding is not None:
            outputs.append(self._finding(finding, event))
        outputs.append(
            ShoeReport(
                cards_read=self._shoe.dealt,
                expected=self._shoe.counted if self._shoe.counted is not None else self._shoe.size,
                shuffler_count=self._shoe.counted,
                reconciled=(finding is None) if self._shoe.known else None,
                rounds=self._shoe_rounds,
                ts=event.ts,
            )
        )
        self._shoe_state = "ended"
        self._coups_left = 1 if in_round else 0
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
        self._carry = []
        self._no_bets = None
        self._cut_card = False
        self._coups_left = None
        self._barcodes = set()
        self._burn = None
        self._shoe_rounds = 0

    # -- faults ---------------------------------------------------------------------------------

    def _fault(self, event: Fault | ShoeRemoved) -> list[EngineOutput]:
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

    def _maybe_settle(self, event: TableEvent) -> list[EngineOutput]:
        if self.phase != DEALING or not self._model_complete():
            return []
        return [self._settle(event)]

    def _settle(self, event: TableEvent) -> Outcome:
        self._machine.fire(self._end_event("settle"))
        return self._end_round("settled", None, event)

    def _end_event(self, kind: str) -> str:
        """``kind`` or ``kind_last``: whether the round ending now is the shoe's last."""
        last = self._coups_left is not None and self._coups_left <= 1
        return f"{kind}_last" if last else kind

    def _count_down_coup(self) -> bool:
        """One more coup of the shoe is over; whether it was the last."""
        if self._coups_left is None:
            return False
        self._coups_left = max(self._coups_left - 1, 0)
        return self._coups_left == 0

    def _end_round(
        self,
        status: Literal["settled", "void"],
        reason: str | None,
        event: TableEvent,
        *,
        extra: dict[str, Any] | None = None,
    ) -> Outcome:
        assert self._round is not None, "only a round in progress can end"
        model = self._model
        if status == "settled":
            assert model is not None
            result: dict[str, Any] | None = model.result()
        elif model is not None or extra:
            result = {**({"cards": model.public()} if model is not None else {}), **(extra or {})}
        else:
            result = None
        outcome_ = Outcome(
            table=self._table,
            game=self._game,
            round=self._round,
            status=status,
            reason=reason,
            result=result,
            ts=event.ts,
        )
        self._ids.ended(self._round)
        self._round = None
        self._model = None
        self._pending.clear()
        if self._count_down_coup():
            self._shoe_state = "ended"
        return outcome_

    def _finding(self, finding: Finding, event: TableEvent) -> Verdict:
        return self._verdict(finding.code, finding.message, event, finding.rule)
