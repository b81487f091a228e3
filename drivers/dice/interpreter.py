"""Dice-unit messages + time in, device events out. Pure (STYLE practice 1).

The unit runs its own cycle, ``OPEN`` → ``CLSD`` → ``ROLL`` → ``RSLT``/``NRES``, sent once as
facts; the ``STAT`` poll reply is a level. This acts on the facts and reconciles against every
status: each game and roll is announced once and in order (a frame or status that skips ahead
emits the milestones between, so the engine never sees a roll in a game it thinks open); a game
first seen in ``RESULT`` is history and never reported. Repeated outcomes are dropped
(``duplicate_results``); results with the wrong dice or colours are rejected
(``rejected_results``); outcomes of an unannounced game are ``stale_results``. A lost outcome is
asked for with ``LAST``, never guessed. ``dice_config_mismatch`` is our own latch while the unit's
identity differs from the table. ``DeviceAvailable`` comes with the handshake reply and carries
the identity (R9). Rules: ``docs/protocols/dice.md``.
"""

from __future__ import annotations

from collections import deque
from typing import Final

from tablectl.drivers.dice.protocol import (
    FAULT_LID,
    FAULT_MEANINGS,
    FAULT_MOTION,
    FAULT_READER,
    Ack,
    BettingClosed,
    BettingOpen,
    Command,
    DecodeError,
    Fault,
    FaultClear,
    Identify,
    Identity,
    Message,
    Nak,
    NoResult,
    QueryStatus,
    RepeatLast,
    Result,
    Rolling,
    Status,
    TestReport,
)
from tablectl.drivers.events import (
    BettingOpened,
    DeviceAvailable,
    DeviceEvent,
    DiceRead,
    DiceRollInvalid,
    DiceRollStarted,
    FaultLatch,
    NoMoreBets,
    silent,
)

FAULT_CONFIG_MISMATCH: Final = "dice_config_mismatch"
"""Latched while the unit's ``IDNT`` disagrees with the table's dice count or colours."""

_WIRE_NAMES: Final = {
    FAULT_MOTION: "dice_motion_fault",
    FAULT_LID: "dice_lid_open",
    FAULT_READER: "dice_reader_fault",
}
_REMEMBERED: Final = 64
"""Outcomes remembered for duplicate detection (a repeat is always of a recent roll)."""


def fault_code(code: int) -> str:
    """The stable alarm code of wire fault ``code``: ``dice_motion_fault`` (1),
    ``dice_lid_open`` (2), ``dice_reader_fault`` (3), otherwise ``dice_fault_<n>``."""
    return _WIRE_NAMES.get(code, f"dice_fault_{code}")


class DiceInterpreter:
    """Turns decoded dice messages into events; see the module docstring. Never raises.

    ``colors`` is ``None`` when the dice are not told apart; ``counters`` defaults to a fresh dict.
    """

    def __init__(
        self,
        device_id: str,
        *,
        dice: int = 3,
        colors: tuple[str, ...] | None = None,
        poll_interval: float = 1.0,
        silence_timeout: float = 3.0,
        counters: dict[str, int] | None = None,
    ) -> None:
        self.device_id = device_id
        self.dice = dice
        self.colors = colors
        self.poll_interval = poll_interval
        self.silence_timeout = silence_timeout
        self.available = False
        self.identity: Identity | None = None
        self.last_status: Status | None = None
        self.last_test: TestReport | None = None
        self.last_reply: Ack | Nak | None = None
        self.counts = counters if counters is not None else {}
        """``duplicate_results``, ``rejected_results``, ``stale_results``."""
        self._game: int | None = None  # the game we know of (announced, or history)
        self._announced = False  # BettingOpened emitted for _game
        self._closed = False  # NoMoreBets emitted for _game
        self._roll: int | None = None  # the roll of _game with DiceRollStarted emitted
        self._outcomes: deque[tuple[int, int]] = deque(maxlen=_REMEMBERED)
        self._asked: set[tuple[int, int]] = set()
        self._faults = FaultLatch(self.device_id)
        self._commands: list[Command] = []
        self._last_frame: float | None = None
        self._last_poll: float | None = None
        self._reported_down = False
        # After a (re)connect, DeviceAvailable waits for the handshake's reply so that it carries
        # the identity (R9); what the unit says meanwhile is held, in order, behind it.
        self._connected_at: float | None = None
        self._held: list[DeviceEvent] = []

    # --- observation -----------------------------------------------------------------------------

    @property
    def game(self) -> int | None:
        """The game number last seen (announced or history), ``None`` before any."""
        return self._game

    @property
    def active_faults(self) -> frozenset[str]:
        """Stable fault codes raised and not yet cleared."""
        return self._faults.codes

    # --- entry points ----------------------------------------------------------------------------

    def connected(self, now: float) -> None:
        """A (re)connect: ask who the unit is and how it is (the handshake, also the first poll);
        the silence clock starts now, so a unit that never answers is reported silent."""
        self._commands += [Identify(), QueryStatus()]
        self._last_poll = self._last_frame = self._connected_at = now

    def feed(self, message: Message, now: float) -> list[DeviceEvent]:
        """One decoded message that arrived at ``now``. :class:`DecodeError` is ignored (the
        driver counts them): garbage proves nothing about the unit being alive."""
        if isinstance(message, DecodeError):
            return []
        self._last_frame = now
        events: list[DeviceEvent] = []
        if isinstance(message, Identity):
            self.identity = message
        replied = isinstance(message, Identity | Status)
        if not self.available and (replied or self._connected_at is None):
            events += self._up(now)
        match message:
            case Status():
                events += self._on_status(message, now)
            case BettingOpen(game):
                events += self._open(game, now)
            case BettingClosed(game, _):
                events += self._close(game, now)
            case Rolling(game, roll):
                events += self._start_roll(game, roll, now)
            case Result() | NoResult():
                events += self._outcome(message, now)
            case Fault(code, detail):
                events += self._faults.latch(
                    fault_code(code), detail=detail or _meaning(code), now=now
                )
            case FaultClear(code):
                events += self._faults.clear(fault_code(code), now=now)
            case Identity():
                events += self._check_identity(message, now)
            case TestReport():
                self.last_test = message
            case Ack() | Nak():
                self.last_reply = message
        if not self.available:
            self._held += events  # an unsolicited frame before the handshake's reply
            return []
        return events

    def tick(self, now: float) -> list[DeviceEvent]:
        """Polls and silence. Call often (every 100 ms or so); queues ``STAT`` when one is due."""
        events: list[DeviceEvent] = []
        since = self._connected_at
        if self._held and since is not None and now - since >= self.poll_interval:
            events += self._up(now)  # frames but no reply to the handshake: alive all the same
        last = self._last_frame
        if last is not None and not self._reported_down and now - last >= self.silence_timeout:
            self._reported_down = True
            self.available = False
            events += silent(self.device_id, now, f"no valid frame for {now - last:.1f} s")
        if self._last_poll is None or now - self._last_poll >= self.poll_interval:
            self._commands.append(QueryStatus())
            self._last_poll = now
        return events

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The link went away. The driver base reports ``DeviceUnavailable("disconnected")``, so
        this forgets per-connection state (and releases what was held for the handshake); games,
        rolls and faults are kept and the next status after reconnecting reconciles them."""
        # Frames held for the handshake's reply still happened, and the unit was alive.
        events = self._up(now) if self._held else []
        self.available = False
        self._reported_down = True
        self._last_frame = self._last_poll = self._connected_at = None
        self._commands.clear()
        return events

    def take_commands(self) -> list[Command]:
        """Commands the host must send now (the handshake, polls, ``LAST``), oldest first;
        empties the queue."""
        commands, self._commands = self._commands, []
        return commands

    def _up(self, now: float) -> list[DeviceEvent]:
        """The unit answers: ``DeviceAvailable`` (with its identity), then what was held."""
        self.available = True
        self._reported_down = False
        self._connected_at = None
        held, self._held = self._held, []
        return [DeviceAvailable(device=self.device_id, at=now, detail=self._detail()), *held]

    # --- the cycle -------------------------------------------------------------------------------

    def _open(self, game: int, now: float) -> list[DeviceEvent]:
        if self._game == game and self._announced:
            return []
        self._game, self._announced, self._closed, self._roll = game, True, False, None
        self._asked.clear()  # LAST is only ever asked for the announced game's rolls
        return [BettingOpened(device=self.device_id, at=now)]

    def _close(self, game: int, now: float) -> list[DeviceEvent]:
        events = self._open(game, now)
        if self._closed:
            return events
        self._closed = True
        return [*events, NoMoreBets(device=self.device_id, at=now)]

    def _start_roll(self, game: int, roll: int, now: float) -> list[DeviceEvent]:
        events = self._close(game, now)
        if self._roll == roll:
            return events
        self._roll = roll
        return [*events, DiceRollStarted(device=self.device_id, at=now)]

    def _history(self, game: int) -> None:
        """``game`` was under way before we listened: remember it, announce nothing of it."""
        if self._game != game:
            self._game, self._announced, self._closed, self._roll = game, False, False, None

    def _on_status(self, status: Status, now: float) -> list[DeviceEvent]:
        self.last_status = status
        events = self._reconcile_faults(status, now)
        game, roll = status.game, status.roll
        if game == 0:
            return events  # powered up, no game opened yet
        announced = self._game == game and self._announced
        match status.state:
            case "ready":
                events += self._open(game, now)
            case "closed":
                events += self._close(game, now)
                if self._roll == roll:
                    self._ask_last(game, roll)  # the roll ended; did its outcome get lost?
            case "rolling":
                events += self._start_roll(game, roll, now) if roll else self._close(game, now)
            case "result":
                if announced:
                    self._ask_last(game, roll)
                else:
                    self._history(game)
            case "fault":
                pass  # the faults say why; the cycle resumes where it was
        return events

    def _ask_last(self, game: int, roll: int) -> None:
        key = (game, roll)
        if roll and key not in self._outcomes and key not in self._asked:
            self._asked.add(key)
            self._commands.append(RepeatLast())

    # --- outcomes --------------------------------------------------------------------------------

    def _outcome(self, message: Result | NoResult, now: float) -> list[DeviceEvent]:
        event: DiceRead | DiceRollInvalid
        if isinstance(message, Result):
            canonical = self._canonical(message)
            if canonical is None:
                self._count("rejected_results")
                return []
            faces, colors = canonical
            event = DiceRead(
                device=self.device_id,
                at=now,
                dice=faces,
                colors=colors,
                reader=message.reader,
                confidence=message.confidence / 100,
            )
        else:
            event = DiceRollInvalid(
                device=self.device_id, at=now, code=message.code, detail=message.detail
            )
        if self._game != message.game or not self._announced:
            # A game we never opened (before we listened), or one long gone (a late repeat):
            # not ours to settle.
            if self._game is None:
                self._history(message.game)
            self._count("stale_results")
            return []
        key = (message.game, message.roll)
        if key in self._outcomes:
            self._count("duplicate_results")
            return []
        self._outcomes.append(key)
        return [*self._start_roll(message.game, message.roll, now), event]

    def _canonical(self, result: Result) -> tuple[tuple[int, ...], tuple[str, ...] | None] | None:
        """The faces in the table's order and their colours, or ``None`` to reject."""
        if len(result.faces) != self.dice:
            return None
        if self.colors is None:
            return result.faces, result.colors or None
        if sorted(result.colors) != sorted(self.colors):
            return None  # no colours, or others than the table's: which die is which?
        by_color = dict(zip(result.colors, result.faces, strict=True))
        return tuple(by_color[c] for c in self.colors), self.colors

    # --- faults ----------------------------------------------------------------------------------

    def _check_identity(self, identity: Identity, now: float) -> list[DeviceEvent]:
        wrong = []
        if identity.dice != self.dice:
            wrong.append(f"the unit has {identity.dice} dice, the table {self.dice}")
        if self.colors is not None and sorted(identity.colors) != sorted(self.colors):
            told = ",".join(identity.colors) or "none"
            wrong.append(f"the unit's colours are {told}, the table's {','.join(self.colors)}")
        if wrong:
            return self._faults.latch(FAULT_CONFIG_MISMATCH, detail="; ".join(wrong), now=now)
        return self._faults.clear(FAULT_CONFIG_MISMATCH, now=now)

    def _reconcile_faults(self, status: Status, now: float) -> list[DeviceEvent]:
        reported = {fault_code(code): _meaning(code) for code in status.faults}
        return self._faults.reconcile(reported, keep=FAULT_CONFIG_MISMATCH, now=now)

    # --- helpers ---------------------------------------------------------------------------------

    def _count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def _detail(self) -> str:
        i = self.identity
        if i is None:
            return ""
        colors = f" ({','.join(i.colors)})" if i.colors else ""
        return f"{i.model} firmware {i.firmware} serial {i.serial}, {i.dice} dice{colors}"


def _meaning(code: int) -> str:
    return FAULT_MEANINGS.get(code, f"vendor fault {code}")
