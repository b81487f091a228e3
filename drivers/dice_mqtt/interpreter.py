"""A studio dice table's cycle, run over its shaker and its camera service. Pure (time passed in).

Nothing at such a table starts a round by itself, so this interpreter *runs* the cycle, as the
studio's own controller does, and reports each step as a device event::

    shaker idle ─▶ BettingOpened ─(betting_seconds)─▶ NoMoreBets + shake command
      ─▶ S2 (received), S1 ─▶ DiceRollStarted ─▶ S0 ─▶ detect request "<device>-<session>-<n>"
      ─▶ camera result ─▶ DiceRead ─(result_seconds)─▶ BettingOpened …
                        └▶ err / null ─▶ DiceRollInvalid(code) + shake again (a re-roll,
                                         bets standing)

Status words are levels: S2 then S1 after our shake starts the roll; an S0 before any S2 answers
an earlier query. A shake not acknowledged within ``ack_timeout`` is sent again (shaking unread
dice again costs nothing). Each read has its own round id, whose session part changes per driver
start, so a late answer to a previous process cannot match. A read with no acceptable answer
within ``result_timeout`` latches ``dice_reader_silent``/``dice_reader_invalid`` and is asked
again without limit (the dice stay at rest); the engine decides to wait or void. After a broker
reconnect a shake in flight is uncertain (its S0 may be lost), so S0 means "shake again".
Sequence diagrams and rules: ``docs/protocols/dice-mqtt.md`` §3.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Final, Literal

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.messages import (
    DEFAULT_CAMERA_ERRORS,
    Command,
    DetectRequest,
    DetectResult,
    Message,
    Shake,
    ShakerState,
    ShakerStatus,
    StateQuery,
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
    RollInvalidCode,
    silent,
)

FAULT_MOTION: Final = "dice_motion_fault"
"""The shaker said its motion fault word (S90); cleared by its next idle word (S0). The same code
as the serial unit's (``drivers/dice``): one alarm per kind of trouble, whatever the wiring."""
FAULT_READER_SILENT: Final = "dice_reader_silent"
"""The camera gave no answer to a read within ``result_timeout``; cleared by its next answer."""
FAULT_READER_INVALID: Final = "dice_reader_invalid"
"""The camera answered within ``result_timeout`` only with results that were rejected (wrong
number of dice, a face outside 1–6); cleared by its next acceptable answer."""

Phase = Literal[
    "starting", "betting", "shake_pending", "shake_sent", "shaking", "reading", "showing"
]
"""Where the cycle is: waiting to open a round, bets open, bets closed and the shake waiting
(a fault, an uncertain shaker), the shake command sent, shaking, reading, showing the result."""

_REMEMBERED_ANSWERS: Final = 64
"""Round ids whose answer was taken, kept to tell a duplicate from a stale answer."""


class DiceStudioInterpreter:
    """Runs one studio dice table's cycle; see the module docstring. Never raises.

    ``session`` differs between driver starts (round ids start with ``device_id`` and it);
    ``errors`` maps camera ``err`` to a stable ``roll_invalid`` code; ``counters`` defaults to a
    fresh dict.
    """

    def __init__(
        self,
        device_id: str,
        *,
        session: str = "0",
        dice: int = 3,
        colors: Sequence[str] | None = None,
        reader: str = "camera",
        betting_seconds: float = 15.0,
        shake_seconds: float = 6.0,
        pattern: int = 0,
        result_timeout: float = 10.0,
        result_seconds: float = 5.0,
        ack_timeout: float = 5.0,
        status_poll: float = 2.0,
        silence_timeout: float = 10.0,
        errors: Mapping[int, RollInvalidCode] = DEFAULT_CAMERA_ERRORS,
        counters: dict[str, int] | None = None,
    ) -> None:
        self.device_id = device_id
        self.session = session
        self.dice = dice
        self.colors = tuple(colors) if colors is not None else None
        self.reader = reader
        self.betting_seconds = betting_seconds
        self.shake_seconds = shake_seconds
        self.pattern = pattern
        self.result_timeout = result_timeout
        self.result_seconds = result_seconds
        self.ack_timeout = ack_timeout
        self.status_poll = status_poll
        self.silence_timeout = silence_timeout
        self.errors = dict(errors)
        self.counters = counters if counters is not None else {}
        self.phase: Phase = "starting"
        self.shaker_state: ShakerState | None = None
        """The last status word's meaning since the link came up (``None``: not heard yet)."""
        self.available = False
        self.reads = 0
        """Read requests made so far (the ``n`` of the round ids)."""
        self.round_id: str | None = None
        """The read in progress, or the last one."""
        self.last_rejected: DetectResult | None = None
        self._connected = False
        self._reported_down = False
        self._heard: float | None = None  # last status word (or the connect)
        self._polled: float | None = None
        self._deadline = 0.0  # of the phase's timer: betting, reading, showing
        self._sent_at = 0.0  # the shake command
        self._accepted = False  # S2 seen for the shake in flight
        self._rolling = False  # DiceRollStarted said for the shake in flight
        self._rejected = 0  # answers rejected during the read in progress
        self._answered: deque[str] = deque(maxlen=_REMEMBERED_ANSWERS)
        self._faults = FaultLatch(self.device_id)
        self._commands: list[Command] = []

    # --- observation -----------------------------------------------------------------------------

    @property
    def active_faults(self) -> frozenset[str]:
        """Stable fault codes raised and not yet cleared."""
        return self._faults.codes

    def take_commands(self) -> list[Command]:
        """Commands the host must publish now, oldest first; empties the queue."""
        commands, self._commands = self._commands, []
        return commands

    # --- entry points ----------------------------------------------------------------------------

    def connected(self, now: float) -> None:
        """The broker link is up (again): ask the shaker, re-ask a read in flight."""
        self._connected = True
        self._heard = self._polled = now
        self._commands.append(StateQuery())
        if self.phase == "reading" and self.round_id is not None:
            self._commands.append(DetectRequest(self.round_id))
            self._deadline = now + self.result_timeout

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The broker link went away (the driver base reports ``disconnected``): forget what the
        shaker said, and treat a shake in flight as uncertain."""
        del now
        self._connected = False
        self.available = False
        self._reported_down = True
        self.shaker_state = None
        if self.phase in ("shake_sent", "shaking"):
            self.phase = "shake_pending"
        return []

    def feed(self, message: Message | DecodeError, now: float) -> list[DeviceEvent]:
        """One decoded message that arrived at ``now``."""
        match message:
            case DecodeError():
                self._count("decode_errors")
                return []
            case ShakerStatus(_, state):
                events = self._heard_from_shaker(message.word, now)
                return events + self._on_status(state, now)
            case DetectResult():
                return self._on_result(message, now)
        return []  # pragma: no cover - exhaustive

    def tick(self, now: float) -> list[DeviceEvent]:
        """Timers: silence, polls, the phase's deadline. Call often (every 100 ms or so)."""
        events: list[DeviceEvent] = []
        if self._connected:
            events += self._check_silence(now)
        match self.phase:
            case "betting" if now >= self._deadline:
                events.append(NoMoreBets(device=self.device_id, at=now))
                self.phase = "shake_pending"
                events += self._advance(now)
            case "shake_sent" if now - self._sent_at >= self.ack_timeout:
                self._count("shake_retries")
                self._shake(now)
            case "reading" if now >= self._deadline:
                events += self._read_timed_out(now)
            case "showing" if now >= self._deadline:
                self.phase = "starting"
                events += self._advance(now)
            case _:
                events += self._advance(now)
        return events

    # --- the shaker ------------------------------------------------------------------------------

    def _check_silence(self, now: float) -> list[DeviceEvent]:
        heard = self._heard if self._heard is not None else now
        if now - max(heard, self._polled or heard) >= self.status_poll:
            self._polled = now
            self._commands.append(StateQuery())
        quiet = now - heard
        if self._reported_down or quiet < self.silence_timeout:
            return []
        self._reported_down = True
        self.available = False
        return silent(self.device_id, now, f"no status word from the shaker for {quiet:.1f} s")

    def _heard_from_shaker(self, word: str, now: float) -> list[DeviceEvent]:
        self._heard = now
        if self.available:
            return []
        self.available = True
        self._reported_down = False
        return [DeviceAvailable(device=self.device_id, at=now, detail=f"shaker says {word}")]

    def _on_status(self, state: ShakerState, now: float) -> list[DeviceEvent]:
        self.shaker_state = state
        events: list[DeviceEvent] = []
        if state == "motion_fault":
            events += self._faults.latch(
                FAULT_MOTION, detail="the shaker reports a motion fault", now=now
            )
            if self.phase in ("shake_sent", "shaking"):
                self.phase = "shake_pending"  # the shake is aborted: shake again once clear
                self._count("shakes_aborted")
            return events
        if state == "idle":
            events += self._faults.clear(FAULT_MOTION, now=now)
        elif FAULT_MOTION in self._faults:
            return events  # nothing moves on until the fault is cleared by an idle word
        match self.phase, state:
            case (("shake_sent" | "shake_pending"), "accepted"):
                self.phase = "shake_sent"
                self._accepted = True
            case (("shake_sent" | "shake_pending"), "shaking"):
                events += self._roll_started(now)
            case "shake_sent", "idle" if self._accepted:
                # S2 then S0: the S1 was lost, the shake is over.
                events += self._roll_started(now)
                self._read(now)
            case "shaking", "idle":
                self._read(now)
            case _:
                events += self._advance(now)
        return events

    def _roll_started(self, now: float) -> list[DeviceEvent]:
        self.phase = "shaking"
        if self._rolling:
            return []
        self._rolling = True
        return [DiceRollStarted(device=self.device_id, at=now)]

    def _advance(self, now: float) -> list[DeviceEvent]:
        """What the current phase does once the shaker is idle and no motion fault is latched:
        open a round, or shake."""
        ready = self.available and self.shaker_state == "idle" and FAULT_MOTION not in self._faults
        if not ready:
            return []
        if self.phase == "starting":
            self.phase = "betting"
            self._deadline = now + self.betting_seconds
            return [BettingOpened(device=self.device_id, at=now)]
        if self.phase == "shake_pending":
            self._shake(now)
        return []

    def _shake(self, now: float) -> None:
        self.phase = "shake_sent"
        self._sent_at = now
        self._accepted = False
        self._rolling = False
        self._commands.append(Shake(self.pattern, self.shake_seconds))

    # --- the camera ------------------------------------------------------------------------------

    def _read(self, now: float) -> None:
        self.reads += 1
        self.round_id = f"{self.device_id}-{self.session}-{self.reads}"
        self.phase = "reading"
        self._deadline = now + self.result_timeout
        self._rejected = 0
        self._commands.append(DetectRequest(self.round_id))

    def _read_timed_out(self, now: float) -> list[DeviceEvent]:
        assert self.round_id is not None  # set with the reading phase
        if self._rejected:
            code, why = FAULT_READER_INVALID, f"only {self._rejected} rejected answer(s)"
        else:
            code, why = FAULT_READER_SILENT, "no answer"
        events = self._faults.latch(
            code, detail=f"read {self.round_id}: {why} within {self.result_timeout:g} s", now=now
        )
        self._count("detect_retries")
        self._deadline = now + self.result_timeout
        self._commands.append(DetectRequest(self.round_id))
        return events

    def _on_result(self, result: DetectResult, now: float) -> list[DeviceEvent]:
        if self.phase != "reading" or result.round_id != self.round_id:
            taken = result.round_id in self._answered
            self._count("duplicate_results" if taken else "stale_results")
            return []
        dice = result.dice if result.error == 0 else None
        if dice is not None and (len(dice) != self.dice or not all(1 <= d <= 6 for d in dice)):
            self._count("rejected_results")
            self._rejected += 1
            self.last_rejected = result
            return []
        events = self._faults.clear(FAULT_READER_SILENT, now=now) + self._faults.clear(
            FAULT_READER_INVALID, now=now
        )
        self._answered.append(result.round_id)
        if result.error == 0 and result.dice is not None:
            events.append(
                DiceRead(
                    device=self.device_id,
                    at=now,
                    dice=result.dice,
                    colors=self.colors,
                    reader=self.reader,
                )
            )
            self.phase = "showing"
            self._deadline = now + self.result_seconds
            return events
        # err 0 is never in the table (CameraShape refuses it): "res": null alone is unreadable.
        code = self.errors.get(result.error, "dice_unreadable")
        detail = f"camera err {result.error}" if result.error else "camera read no dice"
        events.append(DiceRollInvalid(device=self.device_id, at=now, code=code, detail=detail))
        self._count("rerolls")
        self._shake(now)  # a re-roll: bets stand
        return events

    # --- faults and counters ---------------------------------------------------------------------

    def _count(self, name: str) -> None:
        self.counters[name] = self.counters.get(name, 0) + 1
