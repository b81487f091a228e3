"""Simulated lotto/keno ball drum on CAN: an I/O-free model plus a runner over any frame link.

Why a model rather than a replayed capture: the host talks back (start mixing, release a ball,
return the balls), and a replay cannot react. Why I/O-free: the same :class:`SimDrum` runs in unit
tests with a scripted clock, over python-can's ``virtual`` bus in-process (:func:`run_sim_drum` with
a :class:`~tablectl.drivers.transports.can.CanLink`), and behind any other python-can interface for
benches. Every frame it sends comes from :func:`tablectl.drivers.drum.protocol.encode_message` and
every host frame is parsed by :func:`tablectl.drivers.drum.protocol.decode`, so the simulator cannot
drift from the codec (STYLE practice 8).

The drum. A controller (node ``node_id``) and ``readers`` readers (nodes ``node_id + r``) each
heartbeat every 200 ms (protocol time: never scaled by ``speed``); the controller sends its state
on every change and every second. A draw: mixing starts (host ``START_MIXING`` or the automatic
cycle), each ``RELEASE_BALL`` opens the gate, and a travel time later the ball passes the reader
at the receiver's mouth (a ball frame from reader 1 with the next position) and lands in the
receiver; with ``draw`` balls in it the drum reports the tube full and refuses releases until
``RETURN_BALLS`` empties it. Balls are drawn without replacement from
``first_ball .. first_ball + balls - 1`` by a seeded RNG: the same seed, faults and command timing
give the same frames.

Automatic cycle (``auto=True``, the CLI's default): mix ``mix_seconds``, release a ball every
``ball_interval``, stop mixing when the tube is full, hold ``hold_seconds``, return the balls,
wait ``idle_seconds``, repeat. Mechanical durations are *drum seconds*, divided by ``speed``.

Fault scripting: :class:`FaultSpec` (``KIND@DRAW[=VALUE]`` on the command line). ``DRAW`` counts
draws from 1 (a draw begins when mixing starts, or a ball is released, with an empty receiver):

- ``not_read[=K]``: the K-th ball of the draw (default 1) passes unread: no ball frame, but the
  tube count goes up.
- ``double_read[=K]``: the K-th ball is read twice: its frame, the identical frame again (a
  repeated frame, same sequence counter) and then a second read of the same ball at the same
  position with a new sequence counter (by reader 2 when there is one). A correct host reports
  one ball.
- ``repeat_frame[=K]``: only the identical repeat of the K-th ball's frame.
- ``out_of_range[=K]``: the K-th ball reads as ``first_ball + balls`` (one past the top).
- ``extra_ball``: after the tube reported full, one more ball slips through the gate (position
  ``draw + 1``): the receiver holds one ball more than the draw needs.
- ``blower_fault[=S]``: 0.3 drum s after mixing starts the blower faults (fault frame, mixing and
  air off) for S drum s (default 1); releases are refused meanwhile, then the fault clears and
  mixing resumes.
- ``reader_silent[=S]``: at the draw's start the last reader stops heartbeating (and reading) for
  S drum s (default 2); the controller refuses releases meanwhile.
- ``silence[=S]``: at the draw's start the whole drum goes quiet for S drum s (default 2): no
  frames, commands ignored (the host should report it unavailable, then available again).
- ``garbage``: at the draw's start, a burst of malformed frames (unknown function code, wrong
  DLC, reserved bits, ball 200, a 29-bit id, node 0, an unknown node state).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from tablectl.drivers.drum.protocol import (
    HEARTBEAT_PERIOD,
    MAX_BALL,
    MAX_READERS,
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
    FunctionCode,
    Heartbeat,
    NodeState,
    Opcode,
    TubeFullReport,
    arbitration_id,
    decode,
    encode_message,
)
from tablectl.drivers.errors import TransportClosedError
from tablectl.drivers.transports.frames import CanFrame, FrameLink

__all__ = [
    "FAULT_KINDS",
    "DrawResult",
    "FaultSpec",
    "SimDrum",
    "garbage_frames",
    "run_sim_drum",
]

FAULT_KINDS: Final = frozenset(
    {
        "not_read",
        "double_read",
        "repeat_frame",
        "out_of_range",
        "extra_ball",
        "blower_fault",
        "reader_silent",
        "silence",
        "garbage",
    }
)
_BALL_KINDS: Final = frozenset({"not_read", "double_read", "repeat_frame", "out_of_range"})
_SECONDS_KINDS: Final = frozenset({"blower_fault", "reader_silent", "silence"})
_NO_VALUE_KINDS: Final = frozenset({"extra_ball", "garbage"})
_DEFAULT_SECONDS: Final[dict[str, float]] = {
    "blower_fault": 1.0,
    "reader_silent": 2.0,
    "silence": 2.0,
}

TRAVEL_SECONDS: Final = 0.3
"""Drum seconds from opening the gate to the ball passing the reader."""
BLOWER_FAULT_AFTER: Final = 0.3
"""Drum seconds after mixing starts at which a scripted blower fault strikes."""
BLOWER_DETAIL: Final = 1
"""Fault detail of the simulated blower fault ("motor stalled")."""


@dataclass(frozen=True)
class FaultSpec:
    """A scripted fault for draw number ``draw`` (1-based); see the module docstring.

    ``value``: the ball's index in the draw (1-based) for ``not_read``, ``double_read``,
    ``repeat_frame`` and ``out_of_range``; drum seconds for ``blower_fault``, ``reader_silent``
    and ``silence``; nothing for ``extra_ball`` and ``garbage``.

    Raises:
        ValueError: unknown kind, draw < 1, or a value the kind does not take.
    """

    kind: str
    draw: int
    value: float | int | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            known = ", ".join(sorted(FAULT_KINDS))
            raise ValueError(f"unknown fault kind {self.kind!r}; known kinds: {known}")
        if isinstance(self.draw, bool) or not isinstance(self.draw, int) or self.draw < 1:
            raise ValueError(f"fault {self.kind}: draw must be an integer >= 1")
        value = self.value
        if value is None:
            return
        if self.kind in _NO_VALUE_KINDS:
            raise ValueError(f"fault {self.kind} takes no value (got {value!r})")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"fault {self.kind}: value must be a number, not {value!r}")
        if self.kind in _BALL_KINDS:
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"fault {self.kind}: value is a ball index >= 1, not {value}")
        elif not (math.isfinite(value) and 0 < value <= 3600):
            raise ValueError(f"fault {self.kind}: seconds must be > 0 and <= 3600, not {value}")

    @property
    def ball_index(self) -> int:
        """The ball (1-based, in draw order) a ball fault hits."""
        return int(self.value) if self.kind in _BALL_KINDS and self.value is not None else 1

    @property
    def seconds(self) -> float:
        if self.kind in _SECONDS_KINDS and self.value is not None:
            return float(self.value)
        return _DEFAULT_SECONDS.get(self.kind, 0.0)

    @classmethod
    def from_spec(cls, text: str) -> FaultSpec:
        """Parse ``KIND@DRAW[=VALUE]`` (``not_read@1``, ``double_read@2=3``,
        ``blower_fault@1=2.5``).

        Raises:
            ValueError: naming the bad part and the expected shape.
        """
        shape = "expected KIND@DRAW[=VALUE], e.g. not_read@1, double_read@2=3, silence@1=2"
        kind, at, rest = text.strip().partition("@")
        if not at or not kind:
            raise ValueError(f"fault spec {text!r}: {shape}")
        number_text, eq, value_text = rest.partition("=")
        try:
            draw = int(number_text)
        except ValueError:
            raise ValueError(f"fault spec {text!r}: draw {number_text!r} is not a number") from None
        value: float | int | None = None
        if eq:
            try:
                value = int(value_text) if kind in _BALL_KINDS else float(value_text)
            except ValueError:
                raise ValueError(
                    f"fault spec {text!r}: value {value_text!r} is not a number"
                ) from None
        try:
            return cls(kind, draw, value)
        except ValueError as exc:
            raise ValueError(f"fault spec {text!r}: {exc}") from None


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


def garbage_frames(node: int) -> list[CanFrame]:
    """Malformed frames of every kind the decoder must reject (for ``garbage`` and tests)."""
    ball = arbitration_id(FunctionCode.BALL, node + 1)
    return [
        CanFrame(0x000 | node, b"\x01\x00"),  # function code 0 (CANopen NMT): not ours
        CanFrame(ball, b"\x11\x01\x01\x62"),  # ball frame, DLC 4
        CanFrame(arbitration_id(FunctionCode.STATE, node), b"\x83\x00\x07\x00\x00"),  # reserved
        CanFrame(ball, bytes((200, 1, 1, 90, 0))),  # ball 200
        CanFrame(0x1234567, b"\x00", is_extended_id=True),
        CanFrame(arbitration_id(FunctionCode.HEARTBEAT, 1) & ~0x7F, b"\x05\x00\x00\x00\x00"),
        CanFrame(arbitration_id(FunctionCode.HEARTBEAT, node), b"\x42\x00\x00\x00\x00"),
    ]


def _check_args(
    *,
    speed: float,
    balls: int,
    first_ball: int,
    draw: int,
    readers: int,
    node_id: int,
    faults: Sequence[FaultSpec],
    durations: dict[str, float],
) -> None:
    if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
        raise ValueError(f"speed must be 0.01-1000, not {speed}")
    if first_ball not in (0, 1):
        raise ValueError(f"first_ball must be 0 or 1, not {first_ball}")
    if not balls >= 1 or first_ball + balls - 1 > MAX_BALL:
        raise ValueError(f"balls must be 1-{MAX_BALL + 1 - first_ball}, not {balls}")
    if not 1 <= readers <= MAX_READERS:
        raise ValueError(f"readers must be 1-{MAX_READERS}, not {readers}")
    if not 1 <= node_id <= 0x7F - readers:
        raise ValueError(f"node id {node_id} leaves no room for {readers} readers")
    extra = any(f.kind == "extra_ball" for f in faults)
    if not 1 <= draw <= balls - int(extra) or draw > 99:
        raise ValueError(f"draw must be 1-{min(balls - int(extra), 99)}, not {draw}")
    for name, value in durations.items():
        if not (math.isfinite(value) and 0 < value <= 3600):
            raise ValueError(f"{name} must be > 0 and <= 3600, not {value}")
    seen: set[tuple[str, int]] = set()
    for spec in faults:
        key = (spec.kind, spec.draw)
        if key in seen:
            raise ValueError(f"two {spec.kind} faults for draw {spec.draw}")
        seen.add(key)
        if spec.kind in _BALL_KINDS and spec.ball_index > draw:
            raise ValueError(f"{spec.kind}@{spec.draw}: ball {spec.ball_index} > draw {draw}")
        if spec.kind == "out_of_range" and first_ball + balls > MAX_BALL:
            raise ValueError(f"out_of_range: ball {first_ball + balls} exceeds the protocol")


class SimDrum:
    """The simulated drum. Feed it time and host frames; it returns drum frames.

    Args:
        seed: RNG seed (which balls come out).
        speed: time-lapse factor for mechanical durations (heartbeats stay at 200 ms).
        balls: balls in the drum, numbered ``first_ball .. first_ball + balls - 1``.
        first_ball: 1, or 0 for drums with a ball 0 (1 Bet).
        draw: balls per draw; the receiver reports full at this count.
        readers: reader nodes (1–8); reader 1 reads at the receiver's mouth.
        node_id: the controller's node id (readers follow it).
        faults: scripted faults, at most one per kind and draw.
        auto: run the draw cycle by itself (otherwise only host commands act).
        mix_seconds, ball_interval, hold_seconds, idle_seconds: the automatic cycle, drum s.

    Raises:
        ValueError: an argument out of range or two faults of one kind for the same draw.
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
        _check_args(
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
        self._speed = speed
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

        self._origin: float | None = None
        self._clock = 0.0
        self._queue: list[tuple[float, int, str]] = []
        self._order = 0
        self._out: list[CanFrame] = []
        self._ignored = 0
        self._commands: list[Command] = []

        self._mixing = False
        self._gate = False
        self._count = 0
        self._remaining: list[int] = []
        self._draw: _Draw | None = None
        self._draws = 0
        self._results: list[DrawResult] = []
        self._seq = dict.fromkeys(range(1, readers + 1), 0)
        self._blower_until: float | None = None
        self._want_mixing = False
        self._silent_until = -math.inf
        self._reader_silent: dict[int, float] = {}
        self._release_pending = False

    # --- observation ---------------------------------------------------------------------------

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def node_id(self) -> int:
        return self._node

    @property
    def results(self) -> tuple[DrawResult, ...]:
        """Every draw whose receiver filled, in order."""
        return tuple(self._results)

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
        return self._queue[0][0] if self._queue else None

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

    def _start(self, now: float) -> None:
        self._origin = now
        self._clock = now
        self._push(now, "heartbeat")
        self._push(now, "state")
        if self._auto:
            self._push(now + self._idle / self._speed, "auto_mix")

    def _push(self, at: float, action: str) -> None:
        self._order += 1
        heapq.heappush(self._queue, (at, self._order, action))

    def _run_until(self, now: float) -> None:
        if self._origin is None:
            self._start(now)
        while self._queue and self._queue[0][0] <= now:
            at, _, action = heapq.heappop(self._queue)
            self._clock = at
            self._act(action, at)
        self._clock = max(self._clock, now)

    def _act(self, action: str, at: float) -> None:
        match action:
            case "heartbeat":
                self._heartbeats(at)
                self._push(at + HEARTBEAT_PERIOD, "heartbeat")
            case "state":
                self._emit_state(at)
                self._push(at + STATE_PERIOD, "state")
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
                self._silent_until = at + self._draw.faults["silence"].seconds / self._speed
            case "auto_mix":
                self._auto_mix(at)
            case "auto_release":
                self._auto_release(at)
            case "auto_return":
                self._set_mixing(False, at)
                self._return_balls(at)
                self._push(at + self._idle / self._speed, "auto_mix")
            case _:  # pragma: no cover - every action is pushed from this module
                raise AssertionError(action)

    def _later(self, at: float, drum_seconds: float, action: str) -> None:
        self._push(at + drum_seconds / self._speed, action)

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
        faults = {f.kind: f for f in self._faults if f.draw == self._draws}
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
            self._reader_silent[self._readers] = at + faults["reader_silent"].seconds / self._speed
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
        fault = {f.kind for f in draw.faults.values() if f.kind in _BALL_KINDS}
        hits = {k for k in fault if draw.faults[k].ball_index == index}
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
        self._blower_until = at + spec.seconds / self._speed
        self._want_mixing = self._want_mixing or self._mixing
        # State bit first, then the fault frame (the protocol's rule for the controller).
        self._mixing = False
        self._emit_state(at)
        self._emit(FaultReport(self._node, FaultKind.BLOWER, 0, BLOWER_DETAIL, True))
        self._push(self._blower_until, "blower_clear")

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


async def run_sim_drum(
    model: SimDrum,
    link: FrameLink,
    *,
    clock: Callable[[], float] = time.monotonic,
    on_frame: Callable[[CanFrame], None] | None = None,
) -> None:
    """Run ``model`` on an open ``link`` until cancelled (or the link fails).

    Time comes from ``clock``; the model's own schedule says when to wake, so frames go out on
    time without a fixed tick. ``on_frame`` sees every frame the drum sends.
    """
    recv: asyncio.Future[CanFrame] | None = None

    async def send(frames: list[CanFrame]) -> None:
        for frame in frames:
            if on_frame is not None:
                on_frame(frame)
            await link.send(frame)

    try:
        while True:
            now = clock()
            await send(model.advance(now))
            due = model.next_due()
            timeout = 0.05 if due is None else min(0.05, max(0.0, due - clock()))
            if recv is None:
                recv = asyncio.ensure_future(link.recv())
            done, _ = await asyncio.wait({recv}, timeout=timeout)
            if recv in done:
                frame = recv.result()  # TransportClosedError ends the runner
                recv = None
                now = clock()
                await send(model.advance(now))
                await send(model.receive(frame, now))
    finally:
        if recv is not None:
            recv.cancel()
            with contextlib.suppress(asyncio.CancelledError, TransportClosedError):
                await recv
