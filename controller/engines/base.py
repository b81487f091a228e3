"""The round-engine template: what every engine does the same way.

:meth:`RoundEngine.apply` routes an event and turns a transition the strict machine refuses into
``unexpected_event`` (a template method, like python-can's ``BusABC.recv``). The template owns
the shared events, the round ids, the fault latches (R14) and the one round ending
(:meth:`_end`); an engine gives its machine, its handlers, :meth:`snapshot`, :meth:`_round_ended`
and the hooks it needs. Pure: no asyncio, no I/O, no clock."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Final, Literal, cast

from tablectl.controller.core.crew import NO_DEALER, Crew
from tablectl.controller.core.errors import RuleError, TransitionNotAllowedError
from tablectl.controller.core.events import (
    EVENT_TYPES,
    BetsClosed,
    Fault,
    FaultCleared,
    RoundOpen,
    StaffOff,
    StaffOn,
    TableEvent,
    Void,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.core.statemachine import MachineDefinition, StateMachine
from tablectl.controller.games.findings import Finding

# Verdict codes every engine uses: the event was refused, the round (if any) goes on unchanged.
UNEXPECTED_EVENT: Final = "unexpected_event"
NOT_FOR_THIS_GAME: Final = "not_for_this_game"
FAULT_LATCHED: Final = "fault_latched"
DUPLICATE_ROUND: Final = "duplicate_round"
DECISION_PENDING: Final = "decision_pending"
"""The round waits for a supervisor's ``confirm`` or ``void``: the event changes nothing."""

# Void reasons every engine uses.
VOID_ROUND_ABANDONED: Final = "round_abandoned"
VOID_SUPERVISOR_DEFAULT: Final = "supervisor_void"
DEVICE_FAULT: Final = "device_fault"
"""A fault in play: the void reason (``on_fault = "void"``) and the verdict code of a hold."""

# Every engine's betting phase and its phase between rounds (the betting timer and the restart
# gate read them).
IDLE: Final = "idle"
OPEN: Final = "open"

RULE_SUPERVISOR: Final = "seed-001 G4, C42"
"""The organizer decides a round the table cannot (a hold's refusals)."""

# How many recent round ids are remembered to refuse a reused one: enough for any re-sent or
# replayed round_open, bounded so a table running for months does not grow without limit.
RECENT_ROUNDS: Final = 1024

Handler = Callable[[Any], list[EngineOutput]]
"""An engine's handler of one event type (it fires the machine before changing anything)."""

FaultAnswer = Literal["void", "hold"] | list[EngineOutput]
"""What :meth:`RoundEngine._on_fault` decides (see there)."""

# -- event routing -----------------------------------------------------------------------------

SHARED_EVENTS: Final = frozenset(
    {
        "round_open",
        "bets_closed",
        "void",
        "confirm",
        "fault",
        "fault_cleared",
        "staff_on",
        "staff_off",
    }
)
"""The table's and the supervisor's events: never another game's (an engine without a handler
of one refuses it through its machine, ``unexpected_event``)."""

_REFUSED_NOT_FOREIGN: Final[Mapping[str, frozenset[str]]] = {
    "roulette": frozenset({
        "read_error", "shoe_removed", "shoe_empty", "decision", "mixing", "tube_full",
        "wheel_spin", "roll_started", "dice", "roll_invalid", "beads",
    }),
    "dice": frozenset({"beads"}),
    "draw": frozenset({"roll_started", "dice", "roll_invalid", "rng_draw"}),
    "wheel": frozenset({"beads"}),
    "card": frozenset({
        "mixing", "tube_full", "wheel_spin", "roll_started", "dice", "roll_invalid", "rng_draw",
        "beads",
    }),
}  # fmt: skip
"""Other families' event types a machine refuses (``unexpected_event``) rather than calling them
another game's: they came after each family's list was written, and journals and replays keep the
verdicts so."""


def foreign_events(
    family: str, handled: frozenset[str], unplayed: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The types a ``family`` engine answers ``not_for_this_game``: known types it neither handles
    nor shares, and ``unplayed``."""
    unhandled = frozenset(EVENT_TYPES) - SHARED_EVENTS - handled
    return unhandled - _REFUSED_NOT_FOREIGN.get(family, frozenset()) | unplayed


class RoundIds:
    """A table's round ids (``f"{table_id}-{n:06d}"``, ``n`` from ``next_round`` ≥ 1) and the recent
    ones."""

    def __init__(self, table_id: str, next_round: int) -> None:
        if next_round < 1:
            raise RuleError(f"next_round must be >= 1, got {next_round}")
        self._table = table_id
        self._next = next_round
        # An insertion-ordered set (a dict): each round opening asks whether its automatic id
        # is in it, which on a deque was a scan of up to RECENT_ROUNDS ids (~20 µs a round).
        self._recent: dict[str, None] = {}

    def used(self, round_id: str | None, current: str | None) -> bool:
        """Whether a hand-given ``round_id`` is the round in progress or a recently ended one."""
        return round_id is not None and (round_id == current or round_id in self._recent)

    def take(self, given: str | None) -> str:
        """The id of the round opening now: ``given``, or the next automatic one."""
        round_id = given if given is not None else self._auto()
        self._next += 1
        return round_id

    def ended(self, round_id: str) -> None:
        """Remember ``round_id`` as used (the oldest is forgotten past RECENT_ROUNDS)."""
        self._recent.pop(round_id, None)
        self._recent[round_id] = None
        if len(self._recent) > RECENT_ROUNDS:
            del self._recent[next(iter(self._recent))]

    def __getstate__(self) -> tuple[str, int, str | list[str]]:
        """The recent ids as one string: the runner pickles the engine before every batch, and 1,024
        ids one by one cost ~60 µs of ~90; a list if an id holds a newline (a hand-given id may)."""
        recent = list(self._recent)
        joined = "\n".join(recent)
        if joined and joined.count("\n") == len(recent) - 1:
            return self._table, self._next, joined
        return self._table, self._next, recent

    def __setstate__(self, state: object) -> None:
        if isinstance(state, dict):
            # Written before __getstate__ existed: the a857d59 entries of tests/compat, which the
            # claimed-fingerprint test loads (read faithfully, then refused by state_mismatch).
            self.__dict__.update(state)
            return
        table, next_round, recent = cast("tuple[str, int, str | list[str]]", state)
        self._table = table
        self._next = next_round
        self._recent = dict.fromkeys(recent.split("\n") if isinstance(recent, str) else recent)

    def _auto(self) -> str:
        while True:
            candidate = f"{self._table}-{self._next:06d}"
            if candidate not in self._recent:
                return candidate
            # A hand-given id took this one; skip ahead rather than publish a round id twice.
            self._next += 1


class RoundEngine(ABC):
    """One table's rounds (see the module docstring). ``handlers`` override the template's for the
    shared events; a type without one is refused by the machine or is another game's."""

    _FAULT_IN_PLAY: ClassVar[tuple[str, ...]] = ()
    """The phases in which a fault touches the round (:meth:`_on_fault` decides); in the others
    it only latches (R14: no round opens and no bets close until it is cleared)."""
    _FAULT_WHEN: ClassVar[str] = "after bets closed"
    """Where the round was, in a fault hold's verdict message."""
    _BETS_LATCHED: ClassVar[str | None] = "bets stay open: faults latched ({faults})"
    """The ``fault_latched`` message of a ``bets_closed`` while faults are latched (R14); ``None``:
    bets close whatever is latched."""
    _HELD: ClassVar[tuple[str, ...]] = ()
    """The phases in which the round waits for a supervisor: no round opens."""
    _WAITING: ClassVar[str] = "the round"
    """What waits for the supervisor, in the ``decision_pending`` message of a ``round_open``."""

    def __init__(
        self,
        table_id: str,
        game: str,
        machine: MachineDefinition,
        *,
        handlers: Mapping[str, Handler],
        family: str,
        unplayed: frozenset[str] = frozenset(),
        next_round: int = 1,
    ) -> None:
        self._ids = RoundIds(table_id, next_round)
        self._table = table_id
        self._game = game
        self._machine = StateMachine(machine)
        self._family = family
        self._round: str | None = None
        self._rounds = 0
        """Rounds opened by this engine (the snapshot's ``rounds``)."""
        self._faults: set[str] = set()
        self._handlers: Mapping[str, Handler] = {
            "fault_cleared": self._fault_cleared,
            "round_open": self._round_open,
            "bets_closed": self._bets_closed,
            "void": self._void,
            "fault": self._fault,
            **handlers,
        }
        self._other_games = foreign_events(family, frozenset(self._handlers), unplayed)
        self.crew = Crew()
        """Who is on duty (docs/station.md): kept here so a replay knows every round's dealer."""
        self.dealer_required = False
        """``[staff] dealer_required``: no round opens without a dealer on duty."""
        self._round_dealer: str | None = None

    # -- the public surface (the runner's Engine protocol) --------------------------------------

    @property
    def game(self) -> str:
        """The registry key, e.g. ``"roulette"`` (goes into every outcome)."""
        return self._game

    @property
    def phase(self) -> str:
        """The round machine's state."""
        return self._machine.state

    @property
    def current_round(self) -> str | None:
        return self._round

    @property
    def faults(self) -> frozenset[str]:
        """The latched fault codes."""
        return frozenset(self._faults)

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        """Feed one event, get what it concludes. Never raises for a bad sequence."""
        if isinstance(event, StaffOn | StaffOff):
            return self._staff(event)
        answered = self._intercept(event)
        if answered is not None:
            return answered
        if event.type in self._other_games:
            message = f"{event.type!r} is not a {self._family} event"
            return [self._verdict(NOT_FOR_THIS_GAME, message, event)]
        handler = self._handlers.get(event.type, self._not_declared)
        try:
            return handler(event)
        except TransitionNotAllowedError as exc:
            # Handlers fire the machine before changing anything, so the state is intact here.
            return [self._verdict(UNEXPECTED_EVENT, self._refusal(exc, event), event)]

    @abstractmethod
    def snapshot(self) -> dict[str, Any]:
        """JSON-ready table state for the retained ``state`` topic."""

    def conceals(self, event: TableEvent) -> bool:
        """Whether ``event``, applied next, is a card dealt face down (default: nothing is)."""
        del event
        return False

    # -- hooks ----------------------------------------------------------------------------------

    def _intercept(self, event: TableEvent) -> list[EngineOutput] | None:
        """What the engine answers before any handler (``None``: dispatch as usual)."""
        del event
        return None

    def _refusal(self, exc: TransitionNotAllowedError, event: TableEvent) -> str:
        """The message of the ``unexpected_event`` verdict for a refused ``event``."""
        del event
        return str(exc)

    @abstractmethod
    def _round_ended(self, outcome: Outcome) -> None:
        """Clear what belonged to the round that ``outcome`` ends (called by :meth:`_end`)."""

    def _partial(self) -> dict[str, Any] | None:
        """What the round in progress has shown so far, for the outcome of a void (``None``: the
        game has nothing to show before its result)."""
        return None

    def _abandoned(self) -> dict[str, Any] | None:
        """The ``result`` of a round a new ``round_open`` abandons (default: :meth:`_partial`)."""
        return self._partial()

    def _round_opened(self, event: RoundOpen) -> None:
        """What the engine starts with the round that just opened (default: nothing)."""
        del event

    def _bets_now_closed(self, event: BetsClosed) -> list[EngineOutput]:
        """What the engine starts once bets are closed (default: nothing)."""
        del event
        return []

    def _dealer_changed(self, event: StaffOn) -> list[EngineOutput]:
        """A new dealer took over from another (R7: a card table owes a burn; default: nothing)."""
        del event
        return []

    def _on_fault(self, event: Fault, phase: str) -> FaultAnswer:
        """A latched fault in play: ``"void"`` (``device_fault``, seed-001 G1: stakes returned),
        ``"hold"`` (before a supervisor, seed-001 G3, G4, C42) or the engine's own outputs."""
        del event, phase
        return []

    # -- the shared events ----------------------------------------------------------------------

    def _round_open(self, event: RoundOpen) -> list[EngineOutput]:
        """A new round; one in progress is abandoned (void ``round_abandoned``, R15)."""
        refused = self._open_refused(event)
        if refused is not None:
            return [refused]
        self._machine.fire("round_open")
        outputs: list[EngineOutput] = []
        if self._round is not None:
            outputs.append(self._end("void", VOID_ROUND_ABANDONED, event, self._abandoned()))
        self._take_round(event)
        self._round_opened(event)
        return outputs

    def _bets_closed(self, event: BetsClosed) -> list[EngineOutput]:
        if self.phase == OPEN and self._faults and self._BETS_LATCHED is not None:
            message = self._BETS_LATCHED.format(faults=", ".join(sorted(self._faults)))
            return [self._verdict(FAULT_LATCHED, message, event, "R14")]
        self._machine.fire("bets_closed")
        return self._bets_now_closed(event)

    def _void(self, event: Void) -> list[EngineOutput]:
        """A supervisor's void (seed-000 V-RL-5 / GEN-11): the round ends with its reason code,
        or ``supervisor_void`` without one. The machine says in which phases it may."""
        self._machine.fire(self._end_event("void"))
        reason = event.reason.strip() or VOID_SUPERVISOR_DEFAULT
        return [self._end("void", reason, event, self._partial())]

    def _fault(self, event: Fault) -> list[EngineOutput]:
        """Latch the fault (R14); in play, the engine's :meth:`_on_fault` policy."""
        phase = self.phase
        self._machine.fire("fault")
        self._faults.add(event.code)
        if phase not in self._FAULT_IN_PLAY:
            return []  # betting, between rounds, or already held: latched only
        answer = self._on_fault(event, phase)
        if answer == "void":
            self._machine.fire("void")
            return [self._end("void", DEVICE_FAULT, event, self._partial())]
        if answer == "hold":
            message = f"fault {event.code!r} {self._FAULT_WHEN}: confirm to go on, or void"
            rule = "seed-001 G3, G4, C42"
            return [self._verdict(DEVICE_FAULT, message, event, rule, fault=event.code)]
        return answer

    def _fault_cleared(self, event: FaultCleared) -> list[EngineOutput]:
        if event.code not in self._faults:
            raise TransitionNotAllowedError(f"fault {event.code!r} is not latched")
        self._machine.fire("fault_cleared")
        self._faults.discard(event.code)
        return []

    def _not_declared(self, event: TableEvent) -> list[EngineOutput]:
        # Any type without a handler (e.g. a future one): the machine refuses it.
        self._machine.fire(event.type)
        return []

    # -- what the template owns -----------------------------------------------------------------

    def _staff(self, event: StaffOn | StaffOff) -> list[EngineOutput]:
        """Who goes on or off duty; a dealer change in a round needs a supervisor."""
        in_round = self._round is not None
        if isinstance(event, StaffOff):
            refused = self.crew.sign_off(event, in_round=in_round)
            return [] if refused is None else [self._verdict(refused.code, refused.message, event)]
        before = self.crew.last_dealer
        refused = self.crew.sign_on(event, in_round=in_round)
        if refused is not None:
            return [self._verdict(refused.code, refused.message, event)]
        if event.role == "dealer" and before not in (None, event.person):
            return self._dealer_changed(event)
        return []

    def _open_refused(self, event: RoundOpen) -> Verdict | None:
        """A held round, a latched fault (regulatory R14/R18/R21: locked until every fault is
        cleared) or a reused id."""
        if self.phase in self._HELD:
            return self._decision_pending(
                event, f"round not opened: {self._WAITING} waits for a supervisor"
            )
        if self._faults:
            return self._latched(event, "round not opened")
        if self.dealer_required and self.crew.dealer is None:
            message = "round not opened: no dealer on duty (a dealer signs on at the station)"
            return self._verdict(NO_DEALER, message, event, "R17")
        if self._ids.used(event.round, self._round):
            return self._verdict(
                DUPLICATE_ROUND, f"round id {event.round!r} was already used", event
            )
        return None

    def _take_round(self, event: RoundOpen) -> None:
        """The round opening now gets its id (the event's, or the next automatic one)."""
        self._round = self._ids.take(event.round)
        self._rounds += 1
        dealer = self.crew.dealer
        self._round_dealer = None if dealer is None else dealer.person

    def _end_event(self, kind: str) -> str:
        """The machine's event that ends a round as ``kind`` (a card shoe's last coup has its
        own)."""
        return kind

    def _end(
        self,
        status: Literal["settled", "void"],
        reason: str | None,
        event: TableEvent,
        result: dict[str, Any] | None = None,
    ) -> Outcome:
        """End the round in progress: its outcome (``ts`` is the ending event's)."""
        assert self._round is not None, "only a round in progress can end"
        outcome = Outcome(
            table=self._table,
            game=self._game,
            round=self._round,
            status=status,
            reason=reason,
            result=result,
            ts=event.ts,
            dealer=self._round_dealer,
        )
        self._ids.ended(self._round)
        self._round = None
        self._round_ended(outcome)
        return outcome

    def _state(self, **more: Any) -> dict[str, Any]:
        """The snapshot: the keys every table has, then ``more``."""
        return {
            "phase": self.phase,
            "round": self._round,
            "rounds": self._rounds,
            "faults": sorted(self._faults),
            **more,
            **({"staff": self.crew.view()} if self.crew.people else {}),
        }

    def _verdict(
        self, code: str, message: str, event: TableEvent, rule: str | None = None, **data: Any
    ) -> Verdict:
        return Verdict(
            code=code,
            message=message,
            round=self._round,
            rule=rule,
            ts=event.ts,
            data={"event": event.type, "phase": self.phase, **data},
        )

    def _finding(self, finding: Finding, event: TableEvent) -> Verdict:
        """The verdict of a rule's finding (its code, message, rule id and data)."""
        return self._verdict(finding.code, finding.message, event, finding.rule, **finding.data)

    def _latched(self, event: TableEvent, what: str) -> Verdict:
        """``fault_latched``: ``what`` does not happen while faults are latched (R14)."""
        faults = ", ".join(sorted(self._faults))
        return self._verdict(FAULT_LATCHED, f"{what}: faults latched ({faults})", event, "R14")

    def _decision_pending(self, event: TableEvent, message: str) -> Verdict:
        """``decision_pending``: the round waits for a supervisor (seed-001 G4, C42)."""
        return self._verdict(DECISION_PENDING, message, event, RULE_SUPERVISOR)
