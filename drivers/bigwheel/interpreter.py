"""Big-wheel sensor messages + time in, device events out. Pure (STYLE practice 1).

The sensor sends facts once (``SPN``, ``REV``, ``STP``/``DIV``, ``FLT``/``FCL``) and a level every
second (the ``STA`` heartbeat). Facts can be lost, levels repeat, so this acts on the facts and
reconciles against every status: each spin is announced once (``WheelSpinStarted`` then
``WheelStopped``), a lost ``SPN``/``STP`` is made up from the next fact or status, a second ``SPN``
for the spin in progress is a reversal (no event). ``WheelStopped`` carries the sensor's own count
and direction; nothing is judged here (the wheel engine re-spins or voids). When the ticks disagree
with ``STP`` the sensor wins (a lost ``REV`` must not turn a good spin into a re-spin;
:attr:`tick_mismatches`). A ``STOP`` heartbeat that contradicts the reported stop latches
``bigwheel_result_mismatch`` until the next spin (a corruption the XOR missed). Our own latch
``bigwheel_segment_count`` holds while the wheel's segment count differs, with ``SEG`` re-sent
every :data:`SEGMENT_RETRY` s at rest. Rules and tables: ``docs/protocols/bigwheel.md`` §8.
"""

from __future__ import annotations

from dataclasses import dataclass

from tablectl.drivers.bigwheel.protocol import (
    FAULT_MEANINGS,
    Ack,
    Command,
    DecodeError,
    Direction,
    Fault,
    FaultCleared,
    Identify,
    Message,
    Nak,
    QueryStatus,
    Rest,
    RevolutionTick,
    SetSegments,
    SpinStarted,
    Status,
    Stopped,
    StoppedOnDivider,
    Version,
)
from tablectl.drivers.events import (
    DeviceAvailable,
    DeviceEvent,
    FaultLatch,
    WheelSpinStarted,
    WheelStopped,
    silent,
)

FAULT_SEGMENT_COUNT = "bigwheel_segment_count"
"""Latched while the wheel's configured segment count differs from the table's."""
FAULT_RESULT_MISMATCH = "bigwheel_result_mismatch"
"""Latched when the heartbeat's rest position disagrees with the stop already reported (a
corrupted sentence that passed the checksum); cleared when the next spin starts."""
_OWN_CODES = frozenset({FAULT_SEGMENT_COUNT, FAULT_RESULT_MISMATCH})
"""Latched by this module, not by the wheel: a status's fault list does not clear them."""
SEGMENT_RETRY = 5.0
"""Seconds between ``SEG`` re-sends while the wheel's segment count is wrong."""

_WIRE_NAMES: dict[str, str] = {
    "IDX": "index_sensor",
    "ENC": "encoder",
    "PTR": "pointer",
    "MOT": "motor",
}


def fault_code(wire: str) -> str:
    """The stable alarm code of wire fault ``wire``: ``IDX`` → ``bigwheel_index_sensor``,
    ``ENC`` → ``bigwheel_encoder``, ``PTR`` → ``bigwheel_pointer``, ``MOT`` → ``bigwheel_motor``;
    other (vendor) codes → ``bigwheel_fault_<code in lower case>``."""
    name = _WIRE_NAMES.get(wire)
    return f"bigwheel_{name}" if name else f"bigwheel_fault_{wire.lower()}"


@dataclass
class _Spin:
    """The spin in progress: announced, not yet stopped."""

    number: int
    direction: Direction | None
    ticks: int = 0
    last_period_ms: int | None = None


class BigWheelInterpreter:
    """Turns decoded big-wheel messages into events; see the module docstring. Never raises."""

    def __init__(
        self, device_id: str, *, silence_timeout: float, segments: int | None = None
    ) -> None:
        self.device_id = device_id
        self.silence_timeout = silence_timeout
        self.segments = segments
        self.available = False
        self.version: Version | None = None
        self.last_status: Status | None = None
        self.last_reply: Ack | Nak | None = None
        self.tick_mismatches = 0
        """Stops whose ``REV`` count differed from the sensor's own count (lost ticks)."""
        self._reported_down = False
        self._silence_ref: float | None = None
        self._spin: _Spin | None = None
        self._stopped: int | None = None  # last spin number reported stopped (or history)
        self._reported: WheelStopped | None = None  # what we said about spin ``_stopped``
        self._faults = FaultLatch(self.device_id)
        self._segments_sent: float | None = None
        self._commands: list[Command] = []

    # --- observation -----------------------------------------------------------------------------

    @property
    def active_faults(self) -> frozenset[str]:
        """Stable fault codes raised and not yet cleared."""
        return self._faults.codes

    @property
    def spinning(self) -> int | None:
        """The spin number announced and not yet stopped, or ``None``."""
        return None if self._spin is None else self._spin.number

    @property
    def ticks(self) -> int:
        """Revolution ticks counted for the spin in progress (0 at rest)."""
        return 0 if self._spin is None else self._spin.ticks

    # --- entry points ----------------------------------------------------------------------------

    def connected(self, now: float) -> None:
        """A (re)connect: ask who the wheel is, set its segment count, ask for its status. The
        silence clock starts now, so a wheel that never says anything is reported too."""
        self._commands.append(Identify())
        if self.segments is not None:
            self._commands.append(SetSegments(self.segments))
            self._segments_sent = now
        self._commands.append(QueryStatus())
        self._silence_ref = now

    def feed(self, message: Message, now: float) -> list[DeviceEvent]:
        """One decoded message that arrived at ``now``. :class:`DecodeError` is ignored (the
        driver counts them): garbage proves nothing about the wheel being alive."""
        if isinstance(message, DecodeError):
            return []
        events: list[DeviceEvent] = []
        self._silence_ref = now
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
            case SpinStarted(spin, direction):
                events += self._on_spin_started(spin, direction, now)
            case RevolutionTick(spin, count, period_ms):
                events += self._on_tick(spin, count, period_ms, now)
            case Stopped(spin, index, revolutions, direction):
                events += self._on_stopped(
                    spin, index, revolutions, direction, on_divider=False, now=now
                )
            case StoppedOnDivider(spin, before, _, revolutions, direction):
                events += self._on_stopped(
                    spin, before, revolutions, direction, on_divider=True, now=now
                )
            case Fault(code, detail):
                events += self._faults.latch(
                    fault_code(code), detail=detail or FAULT_MEANINGS.get(code, ""), now=now
                )
            case FaultCleared(code):
                events += self._faults.clear(fault_code(code), now=now)
            case Ack() | Nak():
                self.last_reply = message
            case _:
                pass  # Version: recorded above
        return events

    def tick(self, now: float) -> list[DeviceEvent]:
        """Timers: silence. Call often (every 100 ms or so)."""
        if self._silence_ref is None:
            self._silence_ref = now
        quiet = now - self._silence_ref
        if self._reported_down or quiet < self.silence_timeout:
            return []
        self._reported_down = True
        self.available = False
        return silent(self.device_id, now, f"no valid sentence for {quiet:.1f} s")

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The link went away. The driver base reports ``DeviceUnavailable("disconnected")``,
        so this only forgets per-connection state; the spin in progress is kept, so the first
        status after the reconnect can finish it (a lost ``STP`` → ``WheelStopped``)."""
        del now
        self.available = False
        self._reported_down = True
        self._silence_ref = None
        return []

    def take_commands(self) -> list[Command]:
        """Commands the host must send now, oldest first; empties the queue."""
        commands, self._commands = self._commands, []
        return commands

    # --- spins -----------------------------------------------------------------------------------

    def _start(self, number: int, direction: Direction | None, now: float) -> list[DeviceEvent]:
        self._spin = _Spin(number, direction)
        self._reported = None
        events = self._faults.clear(FAULT_RESULT_MISMATCH, now=now)
        events.append(WheelSpinStarted(device=self.device_id, at=now, direction=direction))
        return events

    def _known(self, number: int) -> bool:
        """Announced already: in progress or stopped."""
        return number == self._stopped or (self._spin is not None and self._spin.number == number)

    def _on_spin_started(self, number: int, direction: Direction, now: float) -> list[DeviceEvent]:
        spin = self._spin
        if spin is not None and spin.number == number:
            if spin.direction != direction:
                # A reversal: the turns that count are those in the new direction.
                spin.direction = direction
                spin.ticks = 0
            return []
        if number == self._stopped:
            return []  # a repeat of a spin already reported
        # A spin in progress that never stopped is abandoned (the wheel moved on): the engine
        # sees a new start without a stop and handles the round.
        return self._start(number, direction, now)

    def _on_tick(self, number: int, count: int, period_ms: int, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        if not self._known(number):
            events += self._start(number, None, now)  # its SPN was lost
        spin = self._spin
        if spin is not None and spin.number == number:
            spin.ticks += 1
            spin.last_period_ms = period_ms
        return events

    def _on_stopped(
        self,
        number: int,
        index: int,
        revolutions: int,
        direction: Direction,
        *,
        on_divider: bool,
        now: float,
    ) -> list[DeviceEvent]:
        if number == self._stopped:
            return []
        events: list[DeviceEvent] = []
        if self._spin is None or self._spin.number != number:
            events += self._start(number, direction, now)  # its SPN was lost
        assert self._spin is not None
        if self._spin.ticks != revolutions:
            self.tick_mismatches += 1
        events.append(
            self._stop(number, index, revolutions, direction, on_divider=on_divider, now=now)
        )
        return events

    def _stop(
        self,
        number: int,
        index: int,
        revolutions: int,
        direction: Direction | None,
        *,
        on_divider: bool,
        now: float,
    ) -> WheelStopped:
        self._spin = None
        self._stopped = number
        self._reported = WheelStopped(
            device=self.device_id,
            at=now,
            index=index,
            revolutions=revolutions,
            direction=direction,
            on_divider=on_divider,
        )
        return self._reported

    # --- the status level ------------------------------------------------------------------------

    def _on_status(self, status: Status, now: float) -> list[DeviceEvent]:
        self.last_status = status
        events = self._reconcile_faults(status, now)
        events += self._check_segments(status, now)
        spin = self._spin
        match status.state:
            case "spinning":
                if not self._known(status.spin):
                    events += self._start(status.spin, status.direction, now)
                elif spin is not None and spin.number == status.spin and spin.direction is None:
                    spin.direction = status.direction  # learnt late (its SPN was lost)
            case "stopped":
                if spin is not None and spin.number == status.spin:
                    events.append(self._stop_from(status, now))  # its STP was lost
                elif status.spin == self._stopped and self._reported is not None:
                    events += self._check_result(status, self._reported, now)
                elif not self._known(status.spin):
                    # History: it stopped before we listened, or while we were away (then the
                    # spin we had in progress is gone too; the engine handles the round).
                    self._spin = None
                    self._stopped = status.spin
            case "idle":
                # Power-up (spin 0) or a new segment count: a spin in progress is gone without a
                # result, and after a power-up the counter restarts, so spin 1 is new again.
                self._spin = None
                self._stopped = status.spin or None
        return events

    @staticmethod
    def _stop_from_fields(status: Status) -> tuple[int, int, Direction | None, bool]:
        last: Rest | None = status.last
        index = last[0] if isinstance(last, tuple) else (last or 0)
        return index, status.revolutions, status.direction, isinstance(last, tuple)

    def _stop_from(self, status: Status, now: float) -> WheelStopped:
        index, revolutions, direction, on_divider = self._stop_from_fields(status)
        return self._stop(
            status.spin, index, revolutions, direction, on_divider=on_divider, now=now
        )

    def _check_result(
        self, status: Status, reported: WheelStopped, now: float
    ) -> list[DeviceEvent]:
        level = self._stop_from_fields(status)
        said = (reported.index, reported.revolutions, reported.direction, reported.on_divider)
        if level == said:
            return []
        return self._faults.latch(
            FAULT_RESULT_MISMATCH,
            detail=f"spin {status.spin}: reported (index, revolutions, direction, divider) {said}, "
            f"the wheel's status says {level}",
            now=now,
        )

    def _check_segments(self, status: Status, now: float) -> list[DeviceEvent]:
        wanted = self.segments
        if wanted is None:
            return []
        if status.segments == wanted:
            return self._faults.clear(FAULT_SEGMENT_COUNT, now=now)
        events = self._faults.latch(
            FAULT_SEGMENT_COUNT,
            detail=f"wheel reports {status.segments} segments, table has {wanted}",
            now=now,
        )
        if status.state != "spinning" and (
            self._segments_sent is None or now - self._segments_sent >= SEGMENT_RETRY
        ):
            self._segments_sent = now
            self._commands.append(SetSegments(wanted))
        return events

    # --- faults ----------------------------------------------------------------------------------

    def _reconcile_faults(self, status: Status, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        reported = {fault_code(code): code for code in status.faults}
        for code, wire in reported.items():
            events += self._faults.latch(code, detail=FAULT_MEANINGS.get(wire, ""), now=now)
        for code in sorted(self._faults):
            if code not in _OWN_CODES and code not in reported:
                events += self._faults.clear(code, now=now)
        return events
