"""The simulated big wheel's model: spins, revolution ticks, stops, the heartbeat, sensor faults and
the host's commands. I/O-free; the package docstring describes physics, time and faults.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tablectl.drivers.bigwheel.protocol import (
    FAULT_MEANINGS,
    HEARTBEAT_PERIOD,
    MAX_SPIN,
    Ack,
    ClearFault,
    Command,
    CommandDecoder,
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
    WheelState,
    encode_message,
)
from tablectl.simulators.bigwheel.faults import FaultSpec, check_arguments
from tablectl.simulators.chunks import Chunk, noise_burst
from tablectl.simulators.faults import faults_at
from tablectl.simulators.timeline import SerialModel

_OMEGA: Final = (0.45, 0.6)
"""Initial wheel speed, revolutions per wheel second (a hand-spun big wheel)."""
_INSIDE: Final = (0.15, 0.85)
"""Where the pointer rests inside its segment (fraction from the segment's first edge)."""
_FAULT_AFTER: Final = 1.0
"""Wheel seconds into a spin at which sensor faults, silence and disconnects begin."""
_FAULT_CLEAR_AFTER: Final = 2.0
"""Wheel seconds after the stop at which a ``sensor_fault`` clears itself."""
_STALE_LIMIT: Final = 1 << 22
"""Bytes not collected by advance() after which output is dropped (bounded memory)."""


@dataclass(frozen=True)
class SpinResult:
    """One finished spin as the simulator planned it (what a correct host must report)."""

    spin: int
    index: int
    revolutions: int
    direction: Direction
    on_divider: bool


@dataclass
class _Plan:
    spin: int
    faults: dict[str, FaultSpec]
    direction: Direction
    revolutions: int
    index: int
    on_divider: bool
    rest_position: float
    garbage_sent: bool = False

    def has(self, kind: str) -> bool:
        return kind in self.faults


class SimBigWheel(SerialModel[tuple[int, int], SpinResult]):
    """The simulated sensor. Feed it time and host bytes; it returns sensor bytes.

    ``every``: wheel seconds at rest between spins. ``spins``: stop spinning after this many
    (heartbeats go on). ``by_hand``: spins start only on :meth:`press_spin`, as a studio host starts
    the wheel once the round's RNG has drawn. ``ValueError`` for anything out of range, a stop the
    wheel lacks, or two faults of one kind for one spin.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        segments: int = 54,
        stops: Sequence[int] | None = None,
        every: float = 10.0,
        faults: Sequence[FaultSpec] = (),
        revolutions: tuple[int, int] = (3, 6),
        spins: int | None = None,
        by_hand: bool = False,
    ) -> None:
        check_arguments(
            speed=speed,
            segments=segments,
            stops=stops or (),
            every=every,
            faults=faults,
            revolutions=revolutions,
            spins=spins,
        )
        self._rng = random.Random(seed)
        self._seed = seed
        self._start_timeline(speed, (0, 0))
        self._segments = segments
        self._script = list(stops or ())
        self._every = every
        self._faults = tuple(faults)
        self._revolutions = revolutions
        self._max_spins = spins
        self._by_hand = by_hand

        self._decoder = CommandDecoder()

        self._state: WheelState = "idle"
        self._spin = 0  # wire spin number (wraps MAX_SPIN → 1)
        self._spins = 0  # spins since start (the FaultSpec numbering)
        self._plan: _Plan | None = None  # the spin in progress or last stopped
        self._direction: Direction | None = None
        self._turns = 0  # full revolutions so far in the current spin
        self._last: Rest | None = None
        self._position = self._rng.uniform(0, segments)  # pointer, in segment units
        self._active: dict[str, float] = {}  # wire fault code -> model time it clears
        self._quiet: tuple[float, float] | None = None

    # --- observation ---------------------------------------------------------------------------

    @property
    def state(self) -> WheelState:
        return self._state

    @property
    def segments(self) -> int:
        return self._segments

    @property
    def spins_started(self) -> int:
        """Spins started since start; the ``spin`` numbering of :class:`FaultSpec`."""
        return self._spins

    @property
    def active_faults(self) -> tuple[str, ...]:
        return tuple(sorted(self._active))

    # --- driving -------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes at ``now``; return the immediate replies.

        Output due by ``now`` waits for :meth:`advance`; call it first when wire order matters.
        """
        self._run_until(now)
        if _inside(self._quiet, now) or self.link_down(now):
            return b""  # a hung sensor or a pulled cable: the bytes are lost
        replies = bytearray()
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._ignored += 1
                replies += encode_message(_refusal(item))
                continue
            for message in self._command(item, now):
                replies += encode_message(message)
        return bytes(replies)

    def press_spin(self, now: float) -> bool:
        """The presenter sets the wheel going at ``now`` (a ``by_hand`` wheel's only start);
        ``False`` while it is still spinning, after its last spin, or with the link down."""
        self._run_until(now)
        if self._state == "spinning" or self.link_down(now):
            return False
        spins = self._spins
        self._start(now)
        return self._spins > spins

    # --- the schedule --------------------------------------------------------------------------

    def _on_start(self, now: float) -> None:
        self._schedule(now, "heartbeat")
        if not self._by_hand:
            self._schedule(now + self._every / self._speed, "start")

    def _on_event(self, at: float, kind: str, arg: tuple[int, int]) -> None:
        match kind:
            case "heartbeat":
                self._emit(at, self._status())
                self._schedule(at + HEARTBEAT_PERIOD / self._speed, "heartbeat")
            case "start":
                self._start(at)
            case "tick":
                self._turns, period_ms = arg
                self._emit(at, RevolutionTick(self._spin, self._turns, period_ms))
            case "stop":
                self._stop(at)
            case "fault":
                self._raise_fault(at)
            case "clear":
                self._clear_faults(at)

    def _start(self, t: float) -> None:
        if self._max_spins is not None and self._spins >= self._max_spins:
            return
        self._spins += 1
        self._spin = self._spin % MAX_SPIN + 1
        faults = faults_at(self._faults, self._spins)
        rng = self._rng
        n = self._segments
        direction: Direction = "ccw" if "wrong_direction" in faults else "cw"
        if "short_spin" in faults:
            turns = int(faults["short_spin"].number)
        else:
            turns = rng.randint(*self._revolutions)
        index = self._script.pop(0) % n if self._script else rng.randrange(n)
        inside = rng.uniform(*_INSIDE)
        omega = rng.uniform(*_OMEGA)
        on_divider = "divider" in faults
        target = index + (1.0 if on_divider else inside)
        # Clockwise moves the pointer to lower indices (module docstring).
        if direction == "cw":
            extra = (self._position - target) % n
        else:
            extra = (target - self._position) % n
        theta = turns + extra / n
        plan = _Plan(self._spin, faults, direction, turns, index, on_divider, target % n)
        self._plan = plan
        self._state, self._direction, self._turns, self._last = "spinning", direction, 0, None
        self._emit(t, SpinStarted(self._spin, direction))
        # Uniform deceleration through theta revolutions: theta(t) = omega t - a t^2 / 2.
        decel = omega * omega / (2 * theta)
        duration = 2 * theta / omega
        previous = 0.0
        for k in range(1, turns + 1):
            at = (omega - math.sqrt(max(0.0, omega * omega - 2 * decel * k))) / decel
            period_ms = max(1, round((at - previous) * 1000))
            previous = at
            self._schedule(t + at / self._speed, "tick", (k, period_ms))
        self._schedule(t + duration / self._speed, "stop")
        begin = t + min(_FAULT_AFTER, duration / 2) / self._speed
        if "sensor_fault" in faults:
            self._schedule(begin, "fault")
        if "silence" in faults:
            self._quiet = (begin, begin + faults["silence"].number / self._speed)
        if "disconnect" in faults:
            self._link_down = (begin, begin + faults["disconnect"].number / self._speed)

    def _stop(self, t: float) -> None:
        plan = self._plan
        assert plan is not None
        self._state, self._turns = "stopped", plan.revolutions
        self._position = plan.rest_position
        n = self._segments
        if plan.on_divider:
            after = (plan.index + 1) % n
            self._last = (plan.index, after)
            message: Message = StoppedOnDivider(
                plan.spin, plan.index, after, plan.revolutions, plan.direction
            )
        else:
            self._last = plan.index
            message = Stopped(plan.spin, plan.index, plan.revolutions, plan.direction)
        self._results.append(
            SpinResult(plan.spin, plan.index, plan.revolutions, plan.direction, plan.on_divider)
        )
        self._emit(t, message)
        if plan.has("sensor_fault"):
            clear_at = t + _FAULT_CLEAR_AFTER / self._speed
            self._active = dict.fromkeys(self._active, clear_at)
            self._schedule(clear_at, "clear")
        if not self._by_hand:
            self._schedule(t + self._every / self._speed, "start")

    def _raise_fault(self, t: float) -> None:
        plan = self._plan
        assert plan is not None
        code = str(plan.faults["sensor_fault"].effective_value)
        self._active[code] = math.inf  # until the spin stops
        self._emit(t, Fault(code, FAULT_MEANINGS.get(code, "")[:40]))

    def _clear_faults(self, t: float) -> None:
        for code, until in sorted(self._active.items()):
            if until <= t:
                del self._active[code]
                self._emit(t, FaultCleared(code))

    def _status(self) -> Status:
        return Status(
            state=self._state,
            segments=self._segments,
            spin=self._spin,
            direction=self._direction if self._state != "idle" else None,
            revolutions=self._turns if self._state != "idle" else 0,
            last=self._last if self._state == "stopped" else None,
            faults=tuple(sorted(self._active)),
        )

    # --- commands ------------------------------------------------------------------------------

    def _command(self, command: Command, now: float) -> list[Message]:
        match command:
            case QueryStatus():
                return [self._status()]
            case Identify():
                return [Version("TBW-SIM", "1.0.0", f"SIM{self._seed % 100000:05d}")]
            case SetSegments(count):
                if self._state == "spinning":
                    return [Nak("SEG", "BUSY")]
                if count != self._segments:
                    # A new layout: the old rest position means nothing in it.
                    self._segments = count
                    self._position %= count
                    self._state, self._direction, self._turns, self._last = "idle", None, 0, None
                return [Ack("SEG")]
            case ClearFault(code):
                pending = [c for c, until in self._active.items() if until > now]
                if (code is None and pending) or code in pending:
                    return [Nak("CLR", "COND")]
                return [Ack("CLR")]
        return []  # pragma: no cover - exhaustive

    # --- output --------------------------------------------------------------------------------

    def _emit(self, at: float, message: Message) -> None:
        """Queue one sentence, applying the current spin's wire faults."""
        if _inside(self._quiet, at) or self.link_down(at) or self._outbox.size > _STALE_LIMIT:
            return
        data = encode_message(message)
        plan = self._plan
        rng = self._rng
        split = plan is not None and plan.has("split")
        garbage = plan is not None and plan.has("garbage")
        if plan is not None and garbage and (not plan.garbage_sent or rng.random() < 0.25):
            plan.garbage_sent = True
            self._outbox.append(Chunk(at, noise_burst(rng, b"$"), partial=split))
        if split:
            self._outbox.append_split(at, data, rng)
            return
        self._outbox.append(Chunk(at, data))


_COMMAND_TYPES: Final = frozenset({"QRY", "SEG", "CLR", "IDN"})


def _refusal(error: DecodeError) -> Nak:
    """The NAK for a host sentence that failed: ``ARG`` for a known command with a bad field
    (its checksum passed, so ``raw`` is the body without ``*``), ``TYPE`` for anything else."""
    raw = error.raw
    kind = raw[3:6].decode("ascii", "replace")
    if raw.startswith(b"$BH") and b"*" not in raw and kind in _COMMAND_TYPES:
        return Nak(kind, "ARG")
    return Nak("?", "TYPE")


def _inside(window: tuple[float, float] | None, now: float) -> bool:
    return window is not None and window[0] <= now < window[1]
