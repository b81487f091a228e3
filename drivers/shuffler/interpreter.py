"""Shuffler messages + time in, device events out. Pure (STYLE practice 1).

Facts (``SHST``, ``SHDN``, ``FALT``, ``DOOR``) are sent once and can be lost; the ``STAT`` level
repeats on every poll. So each shuffle is announced once, in order, keyed by its number, and a
status fills in what was lost: ``ShuffleCompleted`` from a status has the card count but no
deck-check lists (the count still lets the engine apply R6). The first status is a baseline (a
shuffle done before we connected is history); an unexpected number while idle (a power cycle
restarts at 0) only moves it. Faults latch once and clear once, also healed by a status (a lost
``FCLR``); the host's ``CLRF`` is only a request. ``missed_polls`` unanswered polls in a row make
the shuffler silent. Rules: ``docs/protocols/shuffler.md`` §7.
"""

from __future__ import annotations

from tablectl.drivers.events import (
    DeviceAvailable,
    DeviceEvent,
    FaultLatch,
    ShuffleCompleted,
    ShuffleStarted,
    silent,
)
from tablectl.drivers.shuffler.protocol import (
    FAULT_JAM,
    FAULT_MEANINGS,
    Ack,
    Command,
    DeckReport,
    DecodeError,
    Door,
    Fault,
    FaultClear,
    Message,
    Nak,
    QueryStatus,
    QueryVersion,
    ShuffleDone,
    ShufflerState,
    ShuffleStart,
    Status,
    Version,
)

FAULT_JAM_CODE = "shuffler_jam"
FAULT_DOOR_OPEN = "shuffler_door_open"
_FAULT_PREFIX = "shuffler_fault_"


def fault_code(code: int) -> str:
    """The stable alarm code of wire fault ``code``: ``shuffler_jam`` or ``shuffler_fault_<n>``."""
    return FAULT_JAM_CODE if code == FAULT_JAM else f"{_FAULT_PREFIX}{code}"


class ShufflerInterpreter:
    """Turns decoded shuffler messages into events; see the module docstring. Never raises."""

    def __init__(self, device_id: str, *, status_interval: float, missed_polls: int = 3) -> None:
        self.device_id = device_id
        self.status_interval = status_interval
        self.missed_polls = missed_polls
        self.available = False
        self.version: Version | None = None
        self.last_status: Status | None = None
        self.last_deck_report: DeckReport | None = None
        self.last_reply: Ack | Nak | None = None
        self._reported_down = False
        self._last_poll: float | None = None
        self._unanswered = 0
        self._started: int | None = None
        self._completed: int | None = None
        self._door_open = False
        self._faults = FaultLatch(self.device_id)
        self._commands: list[Command] = []

    # --- observation -----------------------------------------------------------------------------

    @property
    def state(self) -> ShufflerState | None:
        """The state of the last status, or ``None`` before the first."""
        return None if self.last_status is None else self.last_status.state

    @property
    def door_open(self) -> bool:
        """The door as last reported (``DOOR`` or status)."""
        return self._door_open

    @property
    def active_faults(self) -> frozenset[str]:
        """Stable fault codes raised and not yet cleared."""
        return self._faults.codes

    # --- entry points ----------------------------------------------------------------------------

    def connected(self, now: float) -> None:
        """A (re)connect: ask for the version and the status (the handshake), which also counts
        as the first poll, so a shuffler that never answers is reported silent."""
        self._commands += [QueryVersion(), QueryStatus()]
        self._last_poll = now
        self._unanswered = 1

    def feed(self, message: Message, now: float) -> list[DeviceEvent]:
        """One decoded message that arrived at ``now``. :class:`DecodeError` is ignored (the
        driver counts them): garbage proves nothing about the shuffler being alive."""
        if isinstance(message, DecodeError):
            return []
        events: list[DeviceEvent] = []
        self._unanswered = 0
        if isinstance(message, Version):
            self.version = message
        if not self.available:
            self.available = True
            self._reported_down = False
            detail = ""
            if self.version is not None:
                v = self.version
                detail = f"{v.model} firmware {v.firmware} serial {v.serial}"
            events.append(DeviceAvailable(device=self.device_id, at=now, detail=detail))
        match message:
            case Status():
                events += self._on_status(message, now)
            case ShuffleStart(shuffle, _):
                events += self._start(shuffle, now)
            case ShuffleDone(shuffle, cards, missing, extra, _):
                events += self._complete(shuffle, cards, missing, extra, now)
            case Door(is_open):
                events += self._door(is_open, now)
            case Fault(code, detail):
                events += self._faults.latch(
                    fault_code(code), detail=detail or _meaning(code), now=now
                )
            case FaultClear(code):
                events += self._faults.clear(fault_code(code), now=now)
            case DeckReport():
                self.last_deck_report = message
            case Ack() | Nak():
                self.last_reply = message
            case _:
                pass  # Version: stored above
        return events

    def tick(self, now: float) -> list[DeviceEvent]:
        """Polls and silence. Call often (every 100 ms or so); queues ``STAT`` when one is due."""
        events: list[DeviceEvent] = []
        if self._last_poll is not None and now - self._last_poll < self.status_interval:
            return events
        if self._unanswered >= self.missed_polls and not self._reported_down:
            self._reported_down = True
            self.available = False
            events += silent(self.device_id, now, f"{self._unanswered} status polls unanswered")
        self._commands.append(QueryStatus())
        self._last_poll = now
        self._unanswered += 1
        return events

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The link went away. The driver base reports ``DeviceUnavailable("disconnected")``, so
        this only forgets per-connection state; faults and shuffle numbers are kept and the next
        status after reconnecting reconciles them."""
        del now
        self.available = False
        self._reported_down = True
        self._last_poll = None
        self._unanswered = 0
        self._commands.clear()
        return []

    def take_commands(self) -> list[Command]:
        """Commands the host must send now (polls, the handshake), oldest first; empties the
        queue."""
        commands, self._commands = self._commands, []
        return commands

    # --- shuffles --------------------------------------------------------------------------------

    def _start(self, shuffle: int, now: float) -> list[DeviceEvent]:
        if shuffle == self._started:
            return []
        self._started = shuffle
        return [ShuffleStarted(device=self.device_id, at=now)]

    def _complete(
        self,
        shuffle: int,
        cards: int,
        missing: tuple[str, ...],
        extra: tuple[str, ...],
        now: float,
    ) -> list[DeviceEvent]:
        if shuffle == self._completed:
            return []
        events = self._start(shuffle, now)
        self._completed = shuffle
        events.append(
            ShuffleCompleted(
                device=self.device_id, at=now, cards=cards, missing=missing, extra=extra
            )
        )
        return events

    def _on_status(self, status: Status, now: float) -> list[DeviceEvent]:
        first = self.last_status is None
        self.last_status = status
        events = self._door(status.door_open, now)
        events += self._reconcile_faults(status, now)
        if first and self._started is None and status.state != "shuffling":
            # Baseline: what happened before we connected is not announced.
            self._started = self._completed = status.shuffle
            return events
        match status.state:
            case "shuffling":
                events += self._start(status.shuffle, now)
            case "ready":
                if status.shuffle != self._completed:
                    # Its SHDN was lost (and maybe its SHST): the count is all we can report.
                    events += self._complete(status.shuffle, status.cards, (), (), now)
            case _:
                if status.shuffle != self._started:
                    # The counter moved without us: a power cycle (it restarts at 0) or a
                    # shuffle that started and was abandoned while we were not listening.
                    self._started = self._completed = status.shuffle
        return events

    # --- faults ----------------------------------------------------------------------------------

    def _door(self, is_open: bool, now: float) -> list[DeviceEvent]:
        self._door_open = is_open
        if is_open:
            return self._faults.latch(FAULT_DOOR_OPEN, detail="shuffler door open", now=now)
        return self._faults.clear(FAULT_DOOR_OPEN, now=now)

    def _reconcile_faults(self, status: Status, now: float) -> list[DeviceEvent]:
        reported = {fault_code(code): _meaning(code) for code in status.faults}
        return self._faults.reconcile(reported, keep=FAULT_DOOR_OPEN, now=now)


def _meaning(code: int) -> str:
    return FAULT_MEANINGS.get(code, f"vendor fault {code}")
