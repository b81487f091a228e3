"""The simulated drum's model: mixing, releases, balls past the readers, heartbeats, state frames
and the host's commands. I/O-free; :func:`~tablectl.simulators.drum.runner.run_sim_drum` runs it.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from tablectl.drivers.drum.protocol import (
    HEARTBEAT_PERIOD,
    STATE_PERIOD,
    Ack,
    AckResult,
    BallReport,
    Command,
    DecodeError,
    DrumMessage,
    DrumState,
    FaultKind,
    FaultReport,
    Heartbeat,
    NodeState,
    Opcode,
    TubeFullReport,
    decode,
    encode_message,
)
from tablectl.drivers.transports.frames import CanFrame
from tablectl.simulators.drum.faults import BALL_KINDS, FaultSpec, check_args, garbage_frames
from tablectl.simulators.faults import faults_at
from tablectl.simulators.timeline import TimedModel

__all__ = ["BLOWER_DETAIL", "BLOWER_FAULT_AFTER", "TRAVEL_SECONDS", "DrawResult", "SimDrum"]

TRAVEL_SECONDS: Final = 0.3
"""Drum seconds from opening the gate to the ball passing the reader."""
BLOWER_FAULT_AFTER: Final = 0.3
"""Drum seconds after mixing starts at which a scripted blower fault strikes."""
BLOWER_DETAIL: Final = 1
"""Fault detail of the simulated blower fault ("motor stalled")."""


@dataclass(frozen=True)
class DrawResult:
    """A draw whose tube filled: the balls in receiver order as they physically lie (including
    an unread or an extra ball), and the numbers a correct host reports (``reported``)."""

    draw: int
    balls: tuple[int, ...]
    reported: tuple[int, ...]


@dataclass
class _Draw:
    number: int
    faults: dict[str, FaultSpec]
    balls: list[int] = field(default_factory=list)
    reported: list[int] = field(default_factory=list)
    blower_done: bool = False
    finished: bool = False


class SimDrum(TimedModel[None, DrawResult]):
    """The simulated drum. Feed it time and host frames; it returns drum frames.

    ``first_ball`` is 0 for drums with a ball 0 (1 Bet). ``auto`` runs the draw cycle by itself
    (otherwise only commands act). ``ValueError`` for an argument out of range or two faults of one
    kind for one draw.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        balls: int = 42,
        first_ball: int = 1,
        draw: int = 7,
        readers: int = 1,
        node_id: int = 0x10,
        faults: Sequence[FaultSpec] = (),
        auto: bool = False,
        mix_seconds: float = 3.0,
        ball_interval: float = 1.0,
        hold_seconds: float = 3.0,
        idle_seconds: float = 1.0,
    ) -> None:
        check_args(
            speed=speed,
            balls=balls,
            first_ball=first_ball,
            draw=draw,
            readers=readers,
            node_id=node_id,
            faults=faults,
            durations={
                "mix_seconds": mix_seconds,
                "ball_interval": ball_interval,
                "hold_seconds": hold_seconds,
                "idle_seconds": idle_seconds,
            },
        )
        self._rng = random.Random(seed)
        self._start_timeline(speed, None)
        self._balls = balls
        self._first = first_ball
        self._draw_size = draw
        self._readers = readers
        self._node = node_id
        self._faults = tuple(faults)
        self._auto = auto
        self._mix = mix_seconds
        self._interval = ball_interval
        self._hold = hold_seconds
        self._idle = idle_seconds

        self._clock = 0.0
        self._out: list[CanFrame] = []
        self._ignored = 0
        self._commands: list[Command] = []

        self._mixing = False
        self._gate = False
        self._count = 0
        self._remaining: list[int] = []
        self._draw: _Draw | None = None
        self._draws = 0
        self._seq = dict.fromkeys(range(1, readers + 1), 0)
        self._blower_until: float | None = None
        self._want_mixing = False
        self._silent_until = -math.inf
        self._reader_silent: dict[int, float] = {}
        self._release_pending = False

    # --- observation ---------------------------------------------------------------------------

    @property
    def node_id(self) -> int:
        return self._node

    @property
    def draws_started(self) -> int:
        return self._draws

    @property
    def commands(self) -> tuple[Command, ...]:
        """Every valid host command addressed to this drum, in arrival order."""
        return tuple(self._commands)

    @property
    def ignored_frames(self) -> int:
        """Host frames that were malformed or arrived while the drum was silent."""
        return self._ignored

    @property
    def mixing(self) -> bool:
        return self._mixing

    @property
    def tube_count(self) -> int:
        return self._count

    def state(self) -> DrumState:
        """The state frame the controller would send now."""
        faults = frozenset({FaultKind.BLOWER}) if self._blower_until is not None else frozenset()
        return DrumState(
            self._node,
            mixing=self._mixing,
            air=self._mixing,
            gate_open=self._gate,
            tube_full=self._count >= self._draw_size,
            tube_count=self._count,
            capacity=self._draw_size,
            faults=faults,
        )

    def next_due(self) -> float | None:
        """The ``now`` of the next scheduled frame or action (None before the first call)."""
        if self._origin is None:
            return None
        return self._timeline.next_at()

    # --- time and frames -----------------------------------------------------------------------

    def advance(self, now: float) -> list[CanFrame]:
        """Every frame the drum sends up to ``now`` (seconds, any monotonic origin)."""
        self._run_until(now)
        out, self._out = self._out, []
        return out

    def receive(self, frame: CanFrame, now: float) -> list[CanFrame]:
        """Handle one frame seen on the bus at ``now``; return the drum's immediate answer
        (the acknowledgement first, then what the command caused right away)."""
        self._run_until(now)
        message = decode(frame)
        if isinstance(message, DecodeError):
            self._ignored += 1
            return []
        if not isinstance(message, Command) or message.node != self._node:
            return []  # other traffic on the bus (our own frames echoed, other devices)
        if now < self._silent_until:
            self._ignored += 1
            return []
        self._commands.append(message)
        earlier, self._out = self._out, []
        result = self._command(message, now)
        caused, self._out = self._out, []
        self._emit(Ack(self._node, message.opcode, message.token, result))
        # Frames due before now first, then the acknowledgement, then what the command caused.
        out, self._out = earlier + self._out + caused, []
        return out

    # --- scheduling ----------------------------------------------------------------------------

    def _on_start(self, now: float) -> None:
        self._clock = now
        self._schedule(now, "heartbeat")
        self._schedule(now, "state")
        if self._auto:
            self._schedule(now + self._idle / self._speed, "auto_mix")

    def _run_until(self, now: float) -> None:
        super()._run_until(now)
        self._clock = max(self._clock, now)

    def _on_event(self, at: float, kind: str, arg: None) -> None:
        self._clock = at
        self._act(kind, at)

    def _act(self, action: str, at: float) -> None:
        match action:
            case "heartbeat":
                self._heartbeats(at)
                self._schedule(at + HEARTBEAT_PERIOD, "heartbeat")
            case "state":
                self._emit_state(at)
                self._schedule(at + STATE_PERIOD, "state")
            case "ball":
                self._ball_arrives(at)
            case "extra_ball":
                self._extra_ball(at)
            case "blower_fault":
                self._blower_fault(at)
            case "blower_clear":
                self._blower_clear(at)
            case "silence":
                assert self._draw is not None
                self._silent_until = at + self._draw.faults["silence"].number / self._speed
            case "auto_mix":
                self._auto_mix(at)
            case "auto_release":
                self._auto_release(at)
            case "auto_return":
                self._set_mixing(False, at)
                self._return_balls(at)
                self._schedule(at + self._idle / self._speed, "auto_mix")
            case _:  # pragma: no cover - every action is pushed from this module
                raise AssertionError(action)

    def _later(self, at: float, drum_seconds: float, action: str) -> None:
        self._schedule(at + drum_seconds / self._speed, action)

    # --- output --------------------------------------------------------------------------------

    def _emit(self, message: DrumMessage) -> None:
        if self._clock < self._silent_until:
            return
        self._out.append(encode_message(message))

    def _emit_state(self, at: float) -> None:
        del at
        self._emit(self.state())

    def _uptime(self, at: float) -> int:
        assert self._origin is not None
        return max(0, int(at - self._origin))

    def _heartbeats(self, at: float) -> None:
        uptime = self._uptime(at)
        self._emit(Heartbeat(self._node, NodeState.OPERATIONAL, uptime))
        for reader in range(1, self._readers + 1):
            if at < self._reader_silent.get(reader, -math.inf):
                continue
            self._emit(Heartbeat(self._node + reader, NodeState.OPERATIONAL, uptime))

    # --- the drum ------------------------------------------------------------------------------

    def _blocked(self, at: float) -> AckResult | None:
        if self._blower_until is not None:
            return AckResult.FAULT_ACTIVE
        if any(at < until for until in self._reader_silent.values()):
            return AckResult.FAULT_ACTIVE
        return None

    def _command(self, command: Command, at: float) -> AckResult:
        match command.opcode:
            case Opcode.START_MIXING:
                self._want_mixing = True
                if self._blower_until is not None:
                    return AckResult.FAULT_ACTIVE
                self._open_draw(at)
                self._set_mixing(True, at)
            case Opcode.STOP_MIXING:
                self._want_mixing = False
                self._set_mixing(False, at)
            case Opcode.RELEASE_BALL:
                if self._count >= self._draw_size or self._release_pending:
                    return AckResult.REFUSED
                blocked = self._blocked(at)
                if blocked is not None:
                    return blocked
                self._release(at)
            case Opcode.QUERY_STATUS:
                self._emit_state(at)
                if self._blower_until is not None:
                    self._emit(FaultReport(self._node, FaultKind.BLOWER, 0, BLOWER_DETAIL, True))
            case Opcode.CLEAR_FAULT:
                if command.kind in (0, FaultKind.BLOWER) and self._blower_until is not None:
                    return AckResult.REFUSED  # the blower is still stalled: nothing to clear
            case Opcode.RETURN_BALLS:
                if self._release_pending:
                    return AckResult.REFUSED
                self._return_balls(at)
        return AckResult.OK

    def _set_mixing(self, on: bool, at: float) -> None:
        if self._mixing == on:
            return
        self._mixing = on
        self._emit_state(at)
        draw = self._draw
        if on and draw is not None and "blower_fault" in draw.faults and not draw.blower_done:
            draw.blower_done = True
            self._later(at, BLOWER_FAULT_AFTER, "blower_fault")

    def _open_draw(self, at: float) -> _Draw:
        # A draw lasts until RETURN_BALLS empties the receiver (which sets _draw to None).
        return self._draw if self._draw is not None else self._new_draw(at)

    def _new_draw(self, at: float) -> _Draw:
        self._draws += 1
        faults = faults_at(self._faults, self._draws)
        draw = _Draw(self._draws, faults)
        self._draw = draw
        pool = list(range(self._first, self._first + self._balls))
        self._remaining = self._rng.sample(pool, len(pool))
        if "garbage" in faults and self._clock >= self._silent_until:
            self._out += garbage_frames(self._node)
        if "silence" in faults:
            # A moment later, so that the command that opened the draw is still acknowledged.
            self._later(at, BLOWER_FAULT_AFTER, "silence")
        if "reader_silent" in faults:
            self._reader_silent[self._readers] = at + faults["reader_silent"].number / self._speed
        return draw

    def _release(self, at: float) -> None:
        self._open_draw(at)
        self._release_pending = True
        self._gate = True
        self._emit_state(at)
        self._later(at, TRAVEL_SECONDS, "ball")

    def _ball_arrives(self, at: float) -> None:
        self._release_pending = False
        self._gate = False
        draw = self._draw
        assert draw is not None  # a release opened it
        ball = self._remaining.pop()
        self._count += 1
        index = len(draw.balls) + 1
        draw.balls.append(ball)
        self._read(draw, ball, index, at)
        self._emit_state(at)
        if self._count == self._draw_size:
            self._emit(TubeFullReport(self._node, self._count, self._draw_size))
            if "extra_ball" in draw.faults:
                self._later(at, TRAVEL_SECONDS, "extra_ball")
            else:
                self._finish(draw)

    def _extra_ball(self, at: float) -> None:
        draw = self._draw
        if draw is None or draw.finished:
            return
        ball = self._remaining.pop()
        self._count += 1
        draw.balls.append(ball)
        self._read(draw, ball, len(draw.balls), at)
        self._emit_state(at)
        self._finish(draw)

    def _finish(self, draw: _Draw) -> None:
        draw.finished = True
        self._results.append(DrawResult(draw.number, tuple(draw.balls), tuple(draw.reported)))

    def _read(self, draw: _Draw, ball: int, index: int, at: float) -> None:
        fault = {f.kind for f in draw.faults.values() if f.kind in BALL_KINDS}
        hits = {k for k in fault if draw.faults[k].number == index}
        reader = 1
        if at < self._reader_silent.get(reader, -math.inf) or "not_read" in hits:
            return
        number = self._first + self._balls if "out_of_range" in hits else ball
        report = self._report(number, reader, index)
        draw.reported.append(number)
        self._emit(report)
        if "repeat_frame" in hits or "double_read" in hits:
            self._emit(report)
        if "double_read" in hits:
            second = min(2, self._readers)
            self._emit(self._report(number, second, index))

    def _report(self, ball: int, reader: int, position: int) -> BallReport:
        self._seq[reader] = (self._seq[reader] + 1) & 0xFF
        return BallReport(self._node + reader, ball, reader, position, 97, self._seq[reader])

    def _return_balls(self, at: float) -> None:
        self._count = 0
        if self._draw is not None and not self._draw.finished:
            self._finish(self._draw)
        self._draw = None
        self._emit_state(at)

    def _blower_fault(self, at: float) -> None:
        draw = self._draw
        if draw is None or self._blower_until is not None:
            return
        spec = draw.faults["blower_fault"]
        self._blower_until = at + spec.number / self._speed
        self._want_mixing = self._want_mixing or self._mixing
        # State bit first, then the fault frame (the protocol's rule for the controller).
        self._mixing = False
        self._emit_state(at)
        self._emit(FaultReport(self._node, FaultKind.BLOWER, 0, BLOWER_DETAIL, True))
        self._schedule(self._blower_until, "blower_clear")

    def _blower_clear(self, at: float) -> None:
        self._blower_until = None
        self._emit_state(at)
        self._emit(FaultReport(self._node, FaultKind.BLOWER, 0, 0, False))
        if self._want_mixing:
            self._mixing = True
            self._emit_state(at)

    # --- the automatic cycle -------------------------------------------------------------------

    def _auto_mix(self, at: float) -> None:
        if self._blocked(at) is not None or at < self._silent_until:
            self._later(at, self._interval, "auto_mix")
            return
        self._want_mixing = True
        self._open_draw(at)
        self._set_mixing(True, at)
        self._later(at, self._mix, "auto_release")

    def _auto_release(self, at: float) -> None:
        if self._count >= self._draw_size:
            self._set_mixing(False, at)
            extra = TRAVEL_SECONDS if self._draw is not None and not self._draw.finished else 0.0
            self._later(at, self._hold + extra, "auto_return")
            return
        if self._release_pending or self._blocked(at) is not None or at < self._silent_until:
            self._later(at, self._interval / 4, "auto_release")
            return
        self._release(at)
        self._later(at, self._interval, "auto_release")
