"""Restart recovery: what a restart records, and whether an interrupted round may resume.

Power records (R20, R21): ``power_on`` at every start, ``power_off`` at every orderly stop. An
interrupted round (contracts §3, R12) resumes only on the devices' word that nothing happened
meanwhile, else it is voided :data:`CONTROLLER_RESTART` (seed-001 G1, G3):

* wheel games: the first spin-carrying report shows the spin the journal knows (any other, or an
  unknown one, ends it);
* card and dice tables: every device back within the window after a short outage
  (``card_outage_limit``); a round with a supervisor stays with the supervisor;
* money wheels, ball draws, Fan Tan: a round still betting resumes; one under way is not gated;
* no confirmation within :data:`CONFIRM_SECONDS`: the round ends.

Latched faults are restored by the replay (R18). Pure (``now`` is passed in).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from tablectl.controller.core.events import (
    BetsClosed,
    Fault,
    NoSpin,
    RoundOpen,
    TableEvent,
    WinningNumber,
)
from tablectl.controller.core.mapping import SHOE_REMOVED
from tablectl.controller.core.statemachine import MachineDefinition, StateMachine, Transition
from tablectl.controller.core.time import is_canonical, parse_ts, parse_ts_seconds
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.journal import ANCHOR, JournalRecord

POWER_ON: Final = "power_on"
POWER_OFF: Final = "power_off"
ROUND_RESUMED: Final = "round_resumed"
POWER_RECORDS: Final = frozenset({POWER_ON, POWER_OFF, ROUND_RESUMED})
"""Record types this module adds to the journal (none of them is fed to an engine)."""

CONTROLLER_RESTART: Final = "controller_restart"
"""The void reason of a round the restart could not vouch for (seed-001 G1/G3)."""

CONFIRM_SECONDS: Final = 5.0
"""How long an interrupted round waits for its devices after start-up. Ten SS2 status periods
(the vendor's own patience for a missing ball, "ignore for at least 5 s (10 status lines)"): a
wheel that is there answers in one period once its port is open, and cold start is ≤ 1 s. Waiting
longer only keeps players waiting on a round that will most likely be voided anyway."""

CARD_OUTAGE_LIMIT: Final = 5.0
"""Card tables: the longest outage (last journaled record → power-on) after which a coup being
dealt may resume. A restart under systemd takes about a second; an outage longer than a few
seconds is long enough for a dealer to have drawn a card nobody read."""

_UNAVAILABLE: Final = "device_unavailable"
"""The fault code the runner journals while a device link is down
(tablectl.controller.core.mapping)."""

_IN_PLAY: Final[Mapping[str, frozenset[str]]] = {
    "roulette": frozenset({"open", "closed"}),
    "cards": frozenset({"open", "dealing", "pending_decision"}),
    # A dice round: betting, bets closed (the RNG's picks, the shake), the dice rolling, or held
    # for a supervisor after a fault.
    "dice": frozenset({"open", "closed", "rolling", "held"}),
    # Money wheels and ball draws: only a round still betting is gated (as before the families
    # were told apart); once under way their round goes on with the next report.
    "wheel": frozenset({"open"}),
    "draw": frozenset({"open"}),
    # Fan Tan: as the draws (the count is keyed in or read once the beads are laid out).
    "beads": frozenset({"open"}),
}
"""Per engine family, the snapshot phases in which a round is in play (the gate's business)."""

_FAULT_CLEARED: Final = "fault_cleared"
_LATCH_TYPES: Final = frozenset({"fault", _FAULT_CLEARED, SHOE_REMOVED})
"""Records that latch or clear a fault (:attr:`JournalScan.latched_since`)."""

_UNDER_WAY: Final = frozenset({"dealing", "closed", "rolling"})
"""Past the betting, the result due: a device may have gone on without us, so only a short
outage (``card_outage_limit``) may resume. (Roulette's ``closed`` has the wheel's spin check.)"""

_WITH_SUPERVISOR: Final = frozenset({"pending_decision", "held"})
"""Already waiting for a supervisor: stays with the supervisor."""


@dataclass
class JournalScan:
    """What the replay learns beside the engine state: how the last run ended, the spin of the
    round in play. Fed every record in order by :meth:`Restart.recover`."""

    last_type: str | None = None
    """Type of the newest record (``power_off`` after an orderly stop)."""
    newest_ts: str | None = None
    """The ``ts`` of the newest record with a readable one, as written: read as a time only
    where the outage is measured (:meth:`Interrupted.of`), not for every record replayed. A
    text in :func:`~tablectl.controller.core.time.format_ts`'s form is taken as read (the
    journal's own records); any other is parsed at once, and kept only if it is a time."""
    power_ons: int = 0
    spin: int | None = None
    """Wheel spin number of the round in play, when a journaled record told it."""
    latched_since: dict[tuple[str, str], float] = field(default_factory=dict, repr=False)
    """Epoch seconds at which each latched fault ``(device, code)`` was journaled: the ``ts``
    of its ``fault`` (or ``shoe_removed``) record, dropped at its ``fault_cleared`` (metrics:
    ``tablectl_fault_latched_since_seconds``; kept with the scan in a checkpoint)."""
    _round: str | None = field(default=None, repr=False)

    def record(self, record: JournalRecord, current_round: str | None) -> None:
        """One journal record, with the engine's round in play after applying it (if it is an
        event). A change of round forgets the spin: spin numbers are per round. Keyed anchors
        are skipped: the journal's own bookkeeping, which may follow a ``power_off``."""
        kind = record.type
        if kind == ANCHOR:
            return
        self.last_type = kind
        text = record.ts
        if is_canonical(text) or parse_ts(text) is not None:
            self.newest_ts = text
        if kind == POWER_ON:
            self.power_ons += 1
        if kind in _LATCH_TYPES:
            self._latch(record, parse_ts_seconds(text))
        if current_round != self._round:
            self._round = current_round
            self.spin = None
        spin = record.get("spin")
        if (
            current_round is not None
            and isinstance(spin, int)
            and not isinstance(spin, bool)
            and (kind != ROUND_RESUMED or record.get("round") == current_round)
        ):
            self.spin = spin

    def _latch(self, record: JournalRecord, ts: float | None) -> None:
        """A fault latched or cleared, as the runner's latches track it: the time of a latch
        (its ``since`` when it was journaled late, else its ``ts``) is kept until its clear."""
        device = record.get("device")
        code = SHOE_REMOVED if record.type == SHOE_REMOVED else record.get("code")
        if not isinstance(device, str) or not isinstance(code, str):
            return
        if record.type == _FAULT_CLEARED:
            self.latched_since.pop((device, code), None)
            return
        began = parse_ts_seconds(record.get("since"))
        latched_at = began if began is not None else ts
        if latched_at is not None:
            self.latched_since.setdefault((device, code), latched_at)

    @property
    def previous(self) -> Literal["power_off", "unclean", "none"]:
        """How the last run ended, as ``power_on`` records it."""
        if self.last_type is None:
            return "none"
        return "power_off" if self.last_type == POWER_OFF else "unclean"


@dataclass(frozen=True)
class Interrupted:
    """A round that was in play when the controller stopped."""

    round: str
    game: str
    phase: str
    spin: int | None
    outage: float | None
    """Seconds from the last journaled record to this start (``None``: unknown)."""

    @classmethod
    def of(
        cls, snapshot: Mapping[str, Any], game: str, scan: JournalScan, now: float
    ) -> Interrupted | None:
        """The round in play per the rebuilt engine's snapshot, or ``None`` between rounds."""
        round_id, phase = snapshot.get("round"), snapshot.get("phase")
        if not isinstance(round_id, str) or not isinstance(phase, str):
            return None
        entry = CATALOG.get(game)
        in_play = _IN_PLAY.get(entry.family, frozenset()) if entry is not None else frozenset()
        if phase not in in_play:
            return None
        newest = parse_ts(scan.newest_ts)
        outage = None if newest is None else max(0.0, now - newest.timestamp())
        return cls(round=round_id, game=game, phase=phase, spin=scan.spin, outage=outage)


@dataclass(frozen=True)
class GateAnswer:
    """What the runner does with one device event while a restart is being confirmed: ``decision``
    ``"resume"``, ``"void"`` or ``None``; ``forward`` ``False`` for a catch-up milestone the resumed
    round already has."""

    decision: Literal["resume", "void"] | None = None
    forward: bool = True
    detail: Mapping[str, Any] = field(default_factory=dict)


_PASS: Final = GateAnswer()


PENDING: Final = "pending"
RESUMED: Final = "resumed"
DONE: Final = "done"

GATE_MACHINE: Final = MachineDefinition(
    "restart gate",
    states=(PENDING, RESUMED, DONE),
    initial=PENDING,
    transitions=(
        # The device confirmed the interrupted round: a wheel's catch-up burst is filtered next.
        Transition(PENDING, "confirmed", RESUMED),
        # Resumed without a catch-up to filter (card tables), or voided.
        Transition(PENDING, "decided", DONE),
        # The resumed wheel moved on (its result, or another spin).
        Transition(RESUMED, "caught_up", DONE),
        # The round ended some other way (a supervisor's void, a device fault).
        Transition(PENDING, "stand_down", DONE),
        Transition(RESUMED, "stand_down", DONE),
    ),
    final=(DONE,),
)
"""Whether an interrupted round resumes: validated at import like the engines' machines."""


class RestartGate:
    """Decides whether the interrupted round resumes: ``pending``, then ``resumed`` (still filtering
    a wheel's catch-up burst) or ``done`` (:data:`GATE_MACHINE`)."""

    def __init__(
        self,
        interrupted: Interrupted | None,
        *,
        devices: Collection[str],
        now: float,
        window: float = CONFIRM_SECONDS,
        card_outage_limit: float = CARD_OUTAGE_LIMIT,
    ) -> None:
        self.interrupted = interrupted
        self.deadline = now + window
        self._machine = StateMachine(GATE_MACHINE, PENDING if interrupted is not None else DONE)
        self._devices = frozenset(devices)
        self._available: set[str] = set()
        self._card_outage_limit = card_outage_limit
        self._bets_closed = interrupted is not None and interrupted.phase != "open"

    @property
    def state(self) -> str:
        """``pending``, ``resumed`` or ``done`` (see :data:`GATE_MACHINE`)."""
        return self._machine.state

    @property
    def pending(self) -> bool:
        return self.state == PENDING

    @property
    def active(self) -> bool:
        """Still looking at device events (pending, or filtering a resumed wheel's catch-up)."""
        return self.state != DONE

    def at_start(self) -> GateAnswer | None:
        """A decision that needs no device: returned once at start-up, else ``None``."""
        it = self.interrupted
        if it is None or not self.pending:
            return None
        if _wheel(it.game):
            if not self._devices:
                return self._void("no wheel configured to confirm the spin")
            return None
        if it.phase in _WITH_SUPERVISOR:
            return self._resume({"confirmed_by": "supervisor", "note": "awaits a supervisor"})
        if it.phase in _UNDER_WAY and (it.outage is None or it.outage > self._card_outage_limit):
            return self._void(f"outage {_seconds(it.outage)} exceeds {self._card_outage_limit} s")
        if not self._devices:
            return self._resume({"confirmed_by": "no devices", "outage": it.outage})
        return None

    def round_ended(self) -> None:
        """The round ended some other way (a supervisor's void, a device fault): stand down."""
        if self.active:
            self._machine.fire("stand_down")

    def expire(self, now: float) -> GateAnswer | None:
        """The void when the window passed without a confirmation, else ``None``."""
        if not self.pending or now < self.deadline:
            return None
        missing = sorted(self._devices - self._available)
        return self._void(f"no confirmation within the window (waiting for {missing or 'spin'})")

    def on_event(self, event: TableEvent, spin: int | None, now: float) -> GateAnswer:
        """One device event (mapped), with the spin number its device event carried."""
        del now
        it = self.interrupted
        if it is None or self.state == DONE:
            return _PASS
        if _wheel(it.game):
            return self._roulette(it, event, spin)
        return self._cards(it, event)

    # -- roulette ------------------------------------------------------------------------------

    def _roulette(self, it: Interrupted, event: TableEvent, spin: int | None) -> GateAnswer:
        if self.state == RESUMED:
            return self._catch_up(event, spin)
        if spin is None:
            return _PASS  # availability, faults: not about the game
        if it.spin is None:
            return self._void(f"the journal has no spin for the round; the wheel shows {spin}")
        if spin != it.spin:
            return self._void(f"the wheel shows spin {spin}, the round was spin {it.spin}")
        self._machine.fire("confirmed")
        answer = self._catch_up(event, spin)
        return GateAnswer(
            "resume",
            answer.forward,
            {"confirmed_by": event.device, "spin": spin, "first_event": event.type},
        )

    def _catch_up(self, event: TableEvent, spin: int | None) -> GateAnswer:
        """Drop the milestones the resumed round already has; stand down once it moves on."""
        assert self.interrupted is not None
        if spin is not None and spin != self.interrupted.spin:
            self._machine.fire("caught_up")
            return _PASS
        if isinstance(event, RoundOpen):
            return GateAnswer(forward=False)  # the wheel's new-game report of *our* game
        if isinstance(event, BetsClosed):
            if self._bets_closed:
                return GateAnswer(forward=False)
            self._bets_closed = True
        if isinstance(event, WinningNumber | NoSpin):
            self._machine.fire("caught_up")
        return _PASS

    # -- card tables ---------------------------------------------------------------------------

    def _cards(self, it: Interrupted, event: TableEvent) -> GateAnswer:
        if not self.pending or event.device is None:
            return _PASS
        if isinstance(event, Fault) and event.code == _UNAVAILABLE:
            return _PASS  # its link is down: no confirmation
        # Anything else a device reports (its link back, a card) shows its link is up.
        return self.device_available(event.device) or _PASS

    def device_available(self, device: str) -> GateAnswer | None:
        """A device's link is up (its driver said so, even if nothing was journaled)."""
        it = self.interrupted
        if it is None or not self.pending or _wheel(it.game):
            return None
        self._available.add(device)
        if self._devices <= self._available:
            return self._resume(
                {"confirmed_by": sorted(self._devices), "outage": it.outage, "phase": it.phase}
            )
        return None

    # -- decisions -----------------------------------------------------------------------------

    def _resume(self, detail: Mapping[str, Any]) -> GateAnswer:
        # A resumed wheel still sends its catch-up milestones, which the gate filters.
        wheel = self.interrupted is not None and _wheel(self.interrupted.game)
        self._machine.fire("confirmed" if wheel else "decided")
        return GateAnswer("resume", True, detail)

    def _void(self, why: str) -> GateAnswer:
        self._machine.fire("decided")
        return GateAnswer("void", True, {"why": why})


def _wheel(game: str) -> bool:
    """Whether ``game`` is played on a roulette wheel (roulette, lightning_roulette,
    double_ball_roulette): its round is confirmed by the wheel's spin number."""
    entry = CATALOG.get(game)
    return entry is not None and entry.family == "roulette"


def _seconds(value: float | None) -> str:
    return "unknown" if value is None else f"{value:.1f} s"
