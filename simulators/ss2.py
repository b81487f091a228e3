"""Simulated Cammegh Slingshot 2 roulette wheel: an I/O-free device model driven by passed-in time.

Why a model rather than a replayed capture: the host talks back (``*R`` after a misspin, ``*K`` in
host-start mode, ``*P 0``), and a replay cannot react. Why I/O-free: the same model then runs
in-process in unit tests (call :meth:`SimSS2.advance` with any clock you like), behind a pty or a
TCP port (:mod:`tablectl.simulators.serve`), and in the demo, with byte-identical output for the
same seed, scenario and command timing (STYLE practice 8). Every byte the wheel sends is produced by
:func:`tablectl.drivers.ss2.protocol.encode_message` and every host command is parsed by
:class:`tablectl.drivers.ss2.protocol.CommandDecoder`, so the simulator cannot drift from the
production codec.

Timing model. The wheel's controller runs a 500 ms loop (the automatic status period); the
simulator does the same in *ticks* of ``0.5 / speed`` seconds. State changes land on ticks and are
reported by that tick's status line, so the bare winning number always comes just before the first
state-5 line, as in the real capture. Ball-sensor events (``*I 4`` stream) fall between ticks. All
durations, including fault values given in seconds, are *wheel seconds*: divided by ``speed``.
Because the schedule only depends on ticks and the seeded RNG is drawn in schedule order, the
output does not depend on how often or how coarsely :meth:`SimSS2.advance` is called.

Sensor geometry: the project's assumption in ``docs/protocols/cammegh-ss2.md`` (the guide does not
fix one), shared with ``drivers/ss2/interpreter.py``: the in-rim sensors are numbered clockwise, so
a clockwise ball passes ``… 0, 1, 2, 0 …`` and an anticlockwise one ``… 0, 2, 1, 0 …``, and one
revolution is one pass of sensor 0. Each simulated revolution *ends* at sensor 0 (``1, 2, 0`` or
``2, 1, 0``), so a host counting ``bs 0`` passes after the first event counts exactly the drawn
revolutions. The status direction field is 0 = clockwise, 1 = anticlockwise; in a good spin the
ball runs against the rotor.

Fault scripting: :class:`FaultSpec` (``kind@game[=value]`` on the command line). ``game`` counts
entries into state 2 since start, so a misspin's respin is the next game number.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from enum import Enum
from typing import Final

from tablectl.drivers.ss2.protocol import (
    BallInPocket,
    BareNumber,
    ChiSquare,
    Command,
    CommandDecoder,
    DecodeError,
    FaultReport,
    Message,
    Number,
    Reply,
    SensorPassed,
    Status,
    WarningBit,
    encode_message,
)
from tablectl.simulators.chunks import Chunk, Outbox  # Chunk re-exported: it lived here first

__all__ = [
    "DEFAULT_MODE",
    "FAULT_KINDS",
    "MODE_AUTO_STATUS",
    "MODE_FAULT_REPORTS",
    "MODE_HOST_START",
    "MODE_NO_BARE_NUMBER",
    "MODE_RANDOM_SPEED",
    "MODE_REVERSE",
    "Chunk",
    "FaultSpec",
    "SimSS2",
    "from_spec",
]

MODE_REVERSE: Final = 1
MODE_HOST_START: Final = 2
MODE_RANDOM_SPEED: Final = 4
MODE_NO_BARE_NUMBER: Final = 16
MODE_AUTO_STATUS: Final = 128
MODE_FAULT_REPORTS: Final = 256
DEFAULT_MODE: Final = 1157 | MODE_FAULT_REPORTS
"""The vendor default (1157: reverse, random speed, auto status, GPH) plus ``*F`` reports, so a
bench host sees component faults on the wire rather than a silent drop to state 6."""

TICK: Final = 0.5
"""Wheel seconds per controller tick = the automatic status period of the guide."""

# Phase lengths in ticks at any speed (speed only shrinks the tick). Chosen from the real capture
# and the brief: state 1 ≈ 2 s, 2 ≈ 8 s, 3 ≈ 7 s, 4 ≈ 5 s, 5 ≈ 2 s.
_BOOT_TICKS: Final = 2
_IDLE_TICKS: Final = 4
_BETS_TICKS: Final = 16
_RIM_TICKS: Final = 14
_NO_MORE_TICKS: Final = 10
_RESULT_TICKS: Final = 4
_MISSPIN_RESTART_TICKS: Final = 20  # the wheel restarts itself 10 s after an unacknowledged misspin
_NO_BALL_STOP_TICKS: Final = 150  # the guide: "the wheel stops by itself after 75 s"
_MID_GAME_TICK: Final = 2  # mid-game faults fire 1 s into state 3, when bets are still open
_SELF_TEST_SECONDS: Final = 3.0
_STALE_LIMIT: Final = 1 << 22  # bytes (~40 h of status lines) not collected by advance(): a cap
# so that a caller who only ever calls receive() does not grow memory without bound

_RPM_MIN: Final = 140
_RPM_MAX: Final = 175

FAULT_KINDS: Final = frozenset(
    {
        "misspin",
        "no_ball",
        "misfire",
        "misfire_stuck",
        "sensor_fault",
        "fault",
        "short_spin",
        "same_direction_sensor",
        "result_mismatch",
        "rotor_reversal",
        "garbage",
        "split",
        "silence",
        "disconnect",
    }
)
_NO_VALUE_KINDS: Final = frozenset(
    {"misspin", "no_ball", "same_direction_sensor", "rotor_reversal", "garbage", "split"}
)
_INT_KINDS: Final = frozenset({"sensor_fault", "fault", "short_spin", "result_mismatch"})
_DEFAULT_VALUES: Final[dict[str, float]] = {
    "misfire": 2.0,
    "misfire_stuck": 2.0,
    "sensor_fault": 21,
    "fault": 1,
    "short_spin": 2,
    "silence": 3.0,
    "disconnect": 3.0,
}
_SENSOR_FAULT_CODES: Final = frozenset({11, 12, 13, 21, 22, 23})


@dataclass(frozen=True)
class FaultSpec:
    """A scripted fault for game number ``game`` (1-based count of games since start).

    ``value`` by kind (``None`` → the default in brackets):

    - ``misfire`` / ``misfire_stuck``: wheel seconds of warn 8 in state 2 [2]; ``misfire_stuck``
      also keeps warn 8 through state 3.
    - ``sensor_fault``: the ``*F`` code [21]; 21–23 also drop that sensor from the ``*I 4`` stream.
    - ``fault``: the ``*F`` code that powers the wheel down [1].
    - ``short_spin``: ball revolutions in the sensor stream [2].
    - ``result_mismatch``: the number the status lines show from the result on (0–36), while
      the bare line and the ``bn`` pocket report the ball's [the next pocket up, 36 → 0]. The
      lines then disagree for the same spin, as on a peer project's recorded SS2 traffic (a
      value equal to the ball's number makes them agree).
    - ``silence`` / ``disconnect``: wheel seconds without output / without a link [3].
    - ``rotor_reversal``: the rotor turns the other way from "no more bets" (state 4) to the
      result: a direction change during play (seed-001 §4.1 L95), seen on the status lines.
    - ``misspin``, ``no_ball``, ``same_direction_sensor``, ``rotor_reversal``, ``garbage``,
      ``split``: no value.

    Raises:
        ValueError: unknown kind, game < 1, or a value the kind does not take.
    """

    kind: str
    game: int
    value: float | int | None = None

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            known = ", ".join(sorted(FAULT_KINDS))
            raise ValueError(f"unknown fault kind {self.kind!r}; known kinds: {known}")
        if isinstance(self.game, bool) or not isinstance(self.game, int) or self.game < 1:
            raise ValueError(f"fault {self.kind}: game must be an integer >= 1, not {self.game!r}")
        value = self.value
        if value is None:
            return
        if self.kind in _NO_VALUE_KINDS:
            raise ValueError(f"fault {self.kind} takes no value (got {value!r})")
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"fault {self.kind}: value must be a number, not {value!r}")
        if self.kind in _INT_KINDS:
            if not isinstance(value, int) and not float(value).is_integer():
                raise ValueError(f"fault {self.kind}: value must be a whole number, not {value}")
            code = int(value)
            if self.kind == "sensor_fault" and code not in _SENSOR_FAULT_CODES:
                codes = ", ".join(map(str, sorted(_SENSOR_FAULT_CODES)))
                raise ValueError(f"fault sensor_fault: code must be one of {codes}, not {code}")
            if self.kind == "fault" and not 1 <= code <= 255:
                raise ValueError(f"fault fault: *F code must be 1-255, not {code}")
            if self.kind == "short_spin" and not 1 <= code <= 100:
                raise ValueError(f"fault short_spin: revolutions must be 1-100, not {code}")
            if self.kind == "result_mismatch" and not 0 <= code <= 36:
                raise ValueError(f"fault result_mismatch: number must be 0-36, not {code}")
        elif not (math.isfinite(value) and 0 < value <= 3600):
            raise ValueError(f"fault {self.kind}: seconds must be > 0 and <= 3600, not {value}")

    @property
    def effective_value(self) -> float:
        """``value``, or the kind's default (0 for kinds without a value)."""
        if self.value is not None:
            return float(self.value)
        return _DEFAULT_VALUES.get(self.kind, 0.0)

    @classmethod
    def from_spec(cls, text: str) -> FaultSpec:
        """Parse ``KIND@GAME[=VALUE]`` (``misspin@2``, ``silence@3=4``, ``fault@1=5``).

        Raises:
            ValueError: with a message naming the bad part and the expected shape.
        """
        shape = "expected KIND@GAME[=VALUE], e.g. misspin@2 or silence@3=4"
        kind, at, rest = text.strip().partition("@")
        if not at or not kind:
            raise ValueError(f"fault spec {text!r}: {shape}")
        game_text, eq, value_text = rest.partition("=")
        try:
            game = int(game_text)
        except ValueError:
            raise ValueError(
                f"fault spec {text!r}: game {game_text!r} is not a number; {shape}"
            ) from None
        value: float | int | None = None
        if eq:
            try:
                value = int(value_text) if kind in _INT_KINDS else float(value_text)
            except ValueError:
                raise ValueError(
                    f"fault spec {text!r}: value {value_text!r} is not a number"
                ) from None
        try:
            return cls(kind, game, value)
        except ValueError as exc:
            raise ValueError(f"fault spec {text!r}: {exc}") from None


from_spec = FaultSpec.from_spec
"""Module-level alias of :meth:`FaultSpec.from_spec` (used by the CLI and the demo)."""


class _Phase(Enum):
    """Controller phases; the value is the state reported on the wire."""

    BOOT = (6, "boot")  # powered up but still silent, as the guide says of a real power-up
    CLOSED = (6, "closed")
    IDLE = (1, "idle")
    BETS = (2, "bets")
    RIM = (3, "rim")
    NO_MORE = (4, "no_more")
    RESULT = (5, "result")

    @property
    def state(self) -> int:
        return self.value[0]


_Reply = list[Message] | bytes | None
"""What a command handler returns: messages to encode, raw bytes, or None (ignored command)."""

_GAME_PHASES: Final = frozenset({_Phase.BETS, _Phase.RIM, _Phase.NO_MORE, _Phase.RESULT})


@dataclass
class _Game:
    """One game's plan, drawn when it enters state 2."""

    number: int
    faults: dict[str, FaultSpec]
    bets_ticks: int
    misfire_ticks: int
    rim_ticks: int
    no_more_ticks: int
    start_rpm: int
    fired: set[str] = field(default_factory=set)
    garbage_sent: bool = False

    def has(self, kind: str) -> bool:
        return kind in self.faults

    def value(self, kind: str) -> float:
        return self.faults[kind].effective_value


class SimSS2:
    """The simulated wheel (serial port 1). Feed it time and host bytes; it returns wheel bytes.

    Args:
        seed: RNG seed; the same seed, scenario and command timing give byte-identical output.
        speed: time-lapse factor; every duration is divided by it (the status period is
            ``0.5 / speed`` seconds).
        mode: operating-mode bit sum (``*o``); see the ``MODE_*`` constants.
        pockets: 37 (single zero) or 38 (adds ``"00"``).
        faults: scripted faults, at most one per kind and game.
        numbers: scripted results in order (``17``, ``"00"``, ``"5"``); seeded random afterwards.
        revolutions: inclusive range of ball revolutions in the sensor stream.
        spin: the spin counter shown before the first launch (1–256; it wraps 256 → 1).
        wait_for_host: hold in state 1 (idle, status lines going out) until the first host
            command arrives, so a host that connects late still sees game 1 from its start.
            Not something a real wheel does: it is for tests and benches that count games.

    Raises:
        ValueError: any argument out of range, a number the wheel does not have, or two faults of
            the same kind for the same game.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        mode: int = DEFAULT_MODE,
        pockets: int = 37,
        faults: Sequence[FaultSpec] = (),
        numbers: Sequence[int | str] | None = None,
        revolutions: tuple[int, int] = (8, 14),
        spin: int = 1,
        wait_for_host: bool = False,
    ) -> None:
        _check_arguments(
            speed=speed,
            mode=mode,
            pockets=pockets,
            faults=faults,
            revolutions=revolutions,
            spin=spin,
        )
        self._rng = random.Random(seed)
        self._speed = speed
        self._period = TICK / speed
        self._mode = mode
        self._pockets = pockets
        self._faults = tuple(faults)
        self._script: list[Number] = [_to_number(n, pockets) for n in numbers or ()]
        self._revolutions = revolutions
        self._awaiting_host = wait_for_host

        self._decoder = CommandDecoder()
        self._t0: float | None = None  # model time of tick 0; shifted by a `silence` stall
        self._origin: float | None = None  # model time at start, for the real-time clock
        self._tick = 0
        self._events: list[tuple[float, int, str, int]] = []  # (at, seq, kind, arg) heap
        self._seq = 0
        self._outbox = Outbox()

        self._phase = _Phase.BOOT
        self._entered = 0
        self._length: int | None = _BOOT_TICKS
        self._game: _Game | None = None
        self._games = 0
        self._launched = False
        self._spin = spin
        self._last: Number | None = None
        self._warn = 0
        self._rpm = 0
        self._direction = 0
        self._target = self._rng.randint(_RPM_MIN, _RPM_MAX)
        self._angle = 0.0

        self._sensor_stream = False
        self._status_on = True
        self._fault_code: int | None = None
        self._results: list[Number] = []
        self._launches = 0
        self._misfires = 0
        self._ignored = 0
        self._silent_until = -math.inf
        self._link_down: tuple[float, float] | None = None
        self._clock_offset = timedelta()
        self._params: dict[str, str] = {
            "h": "60",
            "n": "35",
            "s": "15.0",
            "r": "100",
            "z": str(pockets),
            "c": "20000",
        }
        self._handlers: dict[str, Callable[[str, float], _Reply]] = {
            "P": self._cmd_power,
            "R": self._cmd_restart,
            "S": self._cmd_short_version,
            "V": self._cmd_version,
            "K": self._cmd_identify,
            "u": self._cmd_start,
            "X": self._cmd_poll,
            "I": self._cmd_sensor_stream,
            "o": self._cmd_mode,
            "q": self._cmd_status_protocol,
            "w": self._cmd_chi_square,
            "W": self._cmd_number_table,
            "M": self._cmd_misfire_table,
            "T": self._cmd_setup,
            "F": self._cmd_self_test,
            "A": self._cmd_encoder,
            "d": self._cmd_clock,
        }

    # --- observation ---------------------------------------------------------------------------

    @property
    def state(self) -> int:
        """The state the wheel reports now (1–6)."""
        return self._phase.state

    @property
    def spin(self) -> int:
        return self._spin

    @property
    def games_started(self) -> int:
        """Entries into state 2 so far; the ``game`` numbering of :class:`FaultSpec`."""
        return self._games

    @property
    def results(self) -> tuple[Number, ...]:
        """Winning numbers so far, in order."""
        return tuple(self._results)

    @property
    def ignored_commands(self) -> int:
        """Host lines the wheel ignored: garbled, unknown, unsupported or with bad arguments."""
        return self._ignored

    @property
    def mode(self) -> int:
        return self._mode

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def status_period(self) -> float:
        """Seconds between automatic status lines (``0.5 / speed``)."""
        return self._period

    def link_down(self, now: float) -> bool:
        """Whether a ``disconnect`` fault has the port vanished at ``now``.

        Servers poll this after :meth:`advance`: they close the port or connection while it is
        true. The model itself drops everything it would send in that window.
        """
        window = self._link_down
        return window is not None and window[0] <= now < window[1]

    # --- driving -------------------------------------------------------------------------------

    def advance(self, now: float) -> bytes:
        """Everything the wheel sends up to ``now`` (seconds, any monotonic origin)."""
        return b"".join(chunk.data for chunk in self.advance_chunks(now))

    def advance_chunks(self, now: float) -> list[Chunk]:
        """Like :meth:`advance`, with send times and the chunk boundaries of ``split`` faults."""
        self._run_until(now)
        return self._outbox.take()

    def receive(self, data: bytes, now: float) -> bytes:
        """Handle host bytes arriving at ``now``; return the immediate replies.

        Wheel output due up to ``now`` is kept for the next :meth:`advance`; call ``advance(now)``
        first when wire order matters (the servers do).
        """
        self._run_until(now)
        if now < self._silent_until or self.link_down(now):
            return b""  # a hung controller or a pulled cable: the bytes are lost
        replies = bytearray()
        for item in self._decoder.feed(data):
            if isinstance(item, DecodeError):
                self._ignored += 1
                continue
            self._host_spoke()
            reply = self._command(item, now)
            if reply is None:
                self._ignored += 1
            else:
                replies += reply
        return bytes(replies)

    # --- the schedule --------------------------------------------------------------------------

    def _run_until(self, now: float) -> None:
        if self._t0 is None:
            self._t0 = self._origin = now
        while True:
            t_tick = self._t0 + self._tick * self._period
            if self._events and self._events[0][0] <= t_tick:
                if self._events[0][0] > now:
                    return
                at, _, kind, arg = heapq.heappop(self._events)
                self._on_event(at, kind, arg)
                continue
            if t_tick > now:
                return
            self._on_tick(t_tick)

    def _schedule(self, at: float, kind: str, arg: int = 0) -> None:
        self._seq += 1
        heapq.heappush(self._events, (at, self._seq, kind, arg))

    def _cancel(self, kind: str) -> None:
        self._events = [e for e in self._events if e[2] != kind]
        heapq.heapify(self._events)

    def _on_event(self, at: float, kind: str, arg: int) -> None:
        if kind == "sensor":
            if self._sensor_stream:
                self._emit(at, SensorPassed(arg))
        elif kind == "self_test" and self._phase is _Phase.CLOSED:
            for code in self._self_test_codes():
                self._emit(at, FaultReport(code))

    def _on_tick(self, t: float) -> None:
        k = self._tick
        if self._length is not None and k - self._entered >= self._length:
            self._phase_done(t)
        elapsed = k - self._entered
        game = self._game
        if self._phase is _Phase.RIM and elapsed == _MID_GAME_TICK and game is not None:
            if game.has("silence") and "silence" not in game.fired:
                game.fired.add("silence")
                self._stall(t, game.value("silence") / self._speed)
                return  # re-run this tick after the stall
            if game.has("disconnect") and "disconnect" not in game.fired:
                game.fired.add("disconnect")
                self._link_down = (t, t + game.value("disconnect") / self._speed)
            if game.has("fault") and "fault" not in game.fired:
                game.fired.add("fault")
                code = int(game.value("fault"))
                self._fault_code = code
                if self._mode & MODE_FAULT_REPORTS:
                    self._emit(t, FaultReport(code))
                self._abort()
                self._enter(_Phase.CLOSED, None)
                elapsed = 0
        self._update_rotor(elapsed)
        self._warn = self._warnings(elapsed)
        if self._mode & MODE_AUTO_STATUS and self._status_on and self._phase is not _Phase.BOOT:
            self._emit(t, self._status())
        self._tick += 1

    def _stall(self, t: float, seconds: float) -> None:
        """``silence``: the controller hangs; everything still to come moves ``seconds`` later."""
        assert self._t0 is not None
        self._t0 += seconds
        self._events = [(at + seconds, seq, kind, arg) for at, seq, kind, arg in self._events]
        self._silent_until = t + seconds

    # --- phases --------------------------------------------------------------------------------

    def _enter(self, phase: _Phase, length: int | None) -> None:
        if self._phase is _Phase.CLOSED and phase is not _Phase.CLOSED:
            self._cancel("self_test")
        self._phase = phase
        self._entered = self._tick
        self._length = length

    def _abort(self) -> None:
        """The game in play ends without a result (``*R``, ``*P 0``, fault, auto-restart)."""
        self._cancel("sensor")

    def _phase_done(self, t: float) -> None:
        match self._phase:
            case _Phase.BOOT:
                self._enter(_Phase.IDLE, _IDLE_TICKS)
            case _Phase.IDLE | _Phase.RESULT:
                if self._mode & MODE_HOST_START or self._awaiting_host:
                    self._length = None  # hold until *K / *u 1, or until a host speaks
                else:
                    self._start_game(t)
            case _Phase.BETS:
                self._launch(t)
            case _Phase.RIM:
                # Only an unacknowledged misspin has an end here other than "no more bets".
                if self._game is not None and self._game.has("misspin"):
                    self._abort()
                    self._enter(_Phase.IDLE, _IDLE_TICKS)
                else:
                    self._no_more_bets()
            case _Phase.NO_MORE:
                if self._game is not None and self._game.has("no_ball"):
                    self._abort()
                    self._enter(_Phase.CLOSED, None)
                else:
                    self._result(t)
            case _Phase.CLOSED:  # pragma: no cover - CLOSED has no length
                pass

    def _start_game(self, t: float) -> None:
        if self._launched:
            self._spin = self._spin % 256 + 1
            self._launched = False
        self._games += 1
        faults = {f.kind: f for f in self._faults if f.game == self._games}
        rng = self._rng
        self._target = rng.randint(_RPM_MIN, _RPM_MAX)
        misfire = faults.get("misfire") or faults.get("misfire_stuck")
        misfire_ticks = math.ceil(misfire.effective_value / TICK) if misfire else 0
        game = _Game(
            number=self._games,
            faults=faults,
            bets_ticks=_BETS_TICKS + rng.randint(-1, 1),
            misfire_ticks=misfire_ticks,
            rim_ticks=_RIM_TICKS + rng.randint(-1, 2),
            no_more_ticks=_NO_MORE_TICKS + rng.randint(-1, 2),
            start_rpm=self._rpm,
        )
        self._game = game
        if misfire_ticks:
            self._misfires += 1
        self._enter(_Phase.BETS, game.bets_ticks + misfire_ticks)
        if game.has("sensor_fault") and self._mode & MODE_FAULT_REPORTS:
            self._emit(t, FaultReport(int(game.value("sensor_fault"))))

    def _launch(self, t: float) -> None:
        game = self._game
        assert game is not None
        self._launched = True
        self._launches += 1
        length = _MISSPIN_RESTART_TICKS if game.has("misspin") else game.rim_ticks
        self._enter(_Phase.RIM, length)
        self._schedule_sensors(t, game)

    def _schedule_sensors(self, t: float, game: _Game) -> None:
        """Ball revolutions for the ``*I 4`` stream: slowing down from launch to leaving the rim.

        Drawn whether or not the stream is on, so enabling it does not change the RNG sequence.
        """
        if game.has("short_spin"):
            count = int(game.value("short_spin"))
        else:
            count = self._rng.randint(*self._revolutions)
        span_ticks = game.rim_ticks + (0 if game.has("misspin") else 0.6 * game.no_more_ticks)
        span = span_ticks * self._period
        cut = t + game.rim_ticks * self._period if game.has("no_ball") else math.inf
        ball_ccw = self._direction == 0  # against a clockwise rotor
        if game.has("misspin") or game.has("same_direction_sensor"):
            ball_ccw = not ball_ccw
        # Sensors numbered clockwise (module docstring); every revolution ends at sensor 0.
        order = (2, 1, 0) if ball_ccw else (1, 2, 0)
        stuck_off = None
        if game.has("sensor_fault") and int(game.value("sensor_fault")) >= 21:
            stuck_off = int(game.value("sensor_fault")) - 21
        for i in range(count):
            start = t + span * (i / count) ** 1.4
            end = t + span * ((i + 1) / count) ** 1.4
            for j, sensor in enumerate(order):
                at = start + (end - start) * j / 3
                if sensor != stuck_off and at < cut:
                    self._schedule(at, "sensor", sensor)

    def _no_more_bets(self) -> None:
        game = self._game
        assert game is not None
        if self._mode & MODE_RANDOM_SPEED:
            self._target = self._rng.randint(_RPM_MIN, _RPM_MAX + 5)
        length = _NO_BALL_STOP_TICKS if game.has("no_ball") else game.no_more_ticks
        if game.has("rotor_reversal"):
            self._direction ^= 1  # the rotor's direction changes with the ball in play
        self._enter(_Phase.NO_MORE, length)

    def _result(self, t: float) -> None:
        number = self._script.pop(0) if self._script else self._random_number()
        self._last = number
        game = self._game
        if game is not None and game.has("result_mismatch"):
            # The status lines' "last winning number" disagrees with the ball (no RNG draw:
            # the rest of the run stays byte-identical to one without the fault).
            spec = game.faults["result_mismatch"]
            self._last = int(spec.value) if spec.value is not None else _next_pocket(number)
        self._results.append(number)
        self._cancel("sensor")
        self._enter(_Phase.RESULT, _RESULT_TICKS)
        if self._sensor_stream:
            self._emit(t, BallInPocket(number))
        if not self._mode & MODE_NO_BARE_NUMBER:
            self._emit(t, BareNumber(number))

    def _random_number(self) -> Number:
        drawn = self._rng.randrange(self._pockets)
        return "00" if drawn == 37 else drawn

    # --- rotor and warnings --------------------------------------------------------------------

    def _update_rotor(self, elapsed: int) -> None:
        noise = self._rng.randint(-3, 3)
        target = self._target + noise
        phase = self._phase
        if phase is _Phase.BOOT:
            rpm = 0
        elif phase is _Phase.CLOSED:
            rpm = self._rpm * 2 // 5  # runs down over a few lines, as in the capture
        elif phase is _Phase.IDLE:
            rpm = self._target * 36 // 100 + noise if elapsed == 0 and self._rpm < 100 else target
        elif phase is _Phase.BETS and self._mode & MODE_REVERSE and self._game is not None:
            rpm = self._reversing_rpm(self._game, elapsed, target)
        elif phase is _Phase.NO_MORE and elapsed == 0:
            rpm = (self._rpm + target) // 2  # random speed change: half-way on the first line
        else:
            rpm = target
        self._rpm = max(0, min(999, rpm))
        revolutions = self._rpm / 10 / 60 * TICK
        self._angle = (self._angle + (revolutions if self._direction else -revolutions)) % 1.0

    def _reversing_rpm(self, game: _Game, elapsed: int, target: int) -> int:
        """State 2 with mode bit 1: hold, brake to 0, stand, spin up the other way, launch."""
        spin_up = game.bets_ticks - 2
        if elapsed < 3:
            return game.start_rpm + (target - self._target)
        if elapsed < 10:
            return round(game.start_rpm * (9 - elapsed) / 7)
        if elapsed < spin_up:
            return 0
        if elapsed == spin_up:
            self._direction ^= 1
            return self._target * 45 // 100 + (target - self._target)
        return target

    def _warnings(self, elapsed: int) -> int:
        game = self._game
        if game is None or self._phase not in _GAME_PHASES:
            return 0
        warn = 0
        if game.has("sensor_fault"):
            warn |= WarningBit.SENSOR_FAULT
        if self._phase is _Phase.BETS and game.misfire_ticks and elapsed >= game.bets_ticks:
            warn |= WarningBit.LAUNCH_FAILED
        if self._phase is _Phase.RIM:
            if game.has("misfire_stuck"):
                warn |= WarningBit.LAUNCH_FAILED
            if game.has("misspin"):
                warn |= WarningBit.SAME_DIRECTION
        if self._phase is _Phase.NO_MORE and game.has("no_ball"):
            warn |= WarningBit.BALL_NOT_SENSED
        return warn

    def _status(self) -> Status:
        return Status(
            state=self._phase.state,
            spin=self._spin,
            last_number=self._last,
            warnings=self._warn,
            rotor_rpm_x10=self._rpm,
            rotor_direction=self._direction,
        )

    # --- output --------------------------------------------------------------------------------

    def _emit(self, at: float, message: Message) -> None:
        """Queue one line, applying this game's wire faults (disconnect, garbage, split)."""
        if self.link_down(at) or self._outbox.size > _STALE_LIMIT:
            return
        data = encode_message(message)
        game = self._game
        rng = self._rng
        # Garbage only before a `*` line: the decoder resynchronises on it, so the garbage costs
        # exactly two decode errors and never eats a bare number or sensor line.
        if (
            game is not None
            and game.has("garbage")
            and data.startswith(b"*")
            and (not game.garbage_sent or rng.random() < 0.25)
        ):
            game.garbage_sent = True
            self._outbox.append(Chunk(at, _garbage(rng), partial=game.has("split")))
        if game is not None and game.has("split"):
            self._outbox.append_split(at, data, rng)
            return
        self._outbox.append(Chunk(at, data))

    # --- commands ------------------------------------------------------------------------------

    def _command(self, command: Command, now: float) -> bytes | None:
        """Act on one host command; the reply bytes, or ``None`` if the wheel ignores it."""
        handler = self._handlers.get(command.letter)
        if handler is None:
            return None  # *s and *C, which the simulator does not model
        result = handler(command.argument.strip(), now)
        if result is None or isinstance(result, bytes):
            return result
        return b"".join(encode_message(m) for m in result)

    def _cmd_power(self, arg: str, now: float) -> _Reply:
        if arg == "0":
            self._abort()
            self._enter(_Phase.CLOSED, None)
        elif arg == "1":
            if self._phase.state == 6:
                self._fault_code = None
                self._enter(_Phase.IDLE, _IDLE_TICKS)
        else:
            return None
        return [Reply("P", "OK")]

    def _cmd_restart(self, arg: str, now: float) -> _Reply:
        self._fault_code = None
        self._abort()
        self._enter(_Phase.IDLE, _IDLE_TICKS)
        return [Reply("R", "OK")]

    def _cmd_short_version(self, arg: str, now: float) -> _Reply:
        return [Reply("S", "1.22")]

    def _cmd_version(self, arg: str, now: float) -> _Reply:
        return [Reply("V", "SS2 controller V1.22 (tablectl simulator)")]

    def _cmd_identify(self, arg: str, now: float) -> _Reply:
        return [Reply("K", "OK" if self._host_start(now) else "CAM")]

    def _cmd_start(self, arg: str, now: float) -> _Reply:
        if arg not in ("0", "1"):
            return None
        if arg == "1":
            self._host_start(now)
        return [Reply("u", "OK")]

    def _cmd_poll(self, arg: str, now: float) -> _Reply:
        return [self._status()]

    def _cmd_sensor_stream(self, arg: str, now: float) -> _Reply:
        if arg not in ("0", "4"):
            return None
        self._sensor_stream = arg == "4"
        return [Reply("I", "OK")]

    def _cmd_mode(self, arg: str, now: float) -> _Reply:
        if not arg.isdigit() or int(arg) > 0xFFFF:
            return None
        self._mode = int(arg)
        if (
            not self._mode & MODE_HOST_START
            and self._length is None
            and self._phase
            in (
                _Phase.IDLE,
                _Phase.RESULT,
            )
        ):
            self._length = 0  # was holding for a host start: carry on at the next tick
        return [Reply("o", str(self._mode))]

    def _cmd_status_protocol(self, arg: str, now: float) -> _Reply:
        if arg not in ("0", "1"):
            return None
        self._status_on = arg == "1"
        return [Reply("q", "OK")]

    def _statistics_ready(self) -> bool:
        """``*w``, ``*W``, ``*M`` answer only between games (states 5 and 6)."""
        return self._phase in (_Phase.RESULT, _Phase.CLOSED)

    def _cmd_chi_square(self, arg: str, now: float) -> _Reply:
        return [self._chi_square() if self._statistics_ready() else Reply("w", "BUSY")]

    def _cmd_number_table(self, arg: str, now: float) -> _Reply:
        if not self._statistics_ready():
            return [Reply("W", "BUSY")]
        return [Reply("W", f"{n} {c}") for n, c in self._number_counts()]

    def _cmd_misfire_table(self, arg: str, now: float) -> _Reply:
        if not self._statistics_ready():
            return [Reply("M", "BUSY")]
        return [Reply("M", f"{self._misfires} {self._launches}")]

    def _cmd_self_test(self, arg: str, now: float) -> _Reply:
        if self._phase is not _Phase.CLOSED:
            return [Reply("F", "BUSY")]
        self._cancel("self_test")
        self._schedule(now + _SELF_TEST_SECONDS / self._speed, "self_test")
        return b""  # the results come later, as *F lines

    def _cmd_encoder(self, arg: str, now: float) -> _Reply:
        return [Reply("A", str(int(self._angle * 4096) % 4096))]

    def _host_spoke(self) -> None:
        """End a ``wait_for_host`` hold: the first game starts at the next tick."""
        if not self._awaiting_host:
            return
        self._awaiting_host = False
        held = self._length is None and self._phase in (_Phase.IDLE, _Phase.RESULT)
        if held and not self._mode & MODE_HOST_START:
            self._length = 0

    def _host_start(self, now: float) -> bool:
        """``*K`` / ``*u 1`` in host-start mode while idle (state 1 or 5): start a game."""
        if not self._mode & MODE_HOST_START or self._phase not in (_Phase.IDLE, _Phase.RESULT):
            return False
        self._start_game(now)
        return True

    def _cmd_setup(self, arg: str, now: float) -> _Reply:
        """``*T``: lower-case letter + value sets, upper-case letter queries, ``f`` persists."""
        parts = arg.split()
        if not parts:
            return None
        key = parts[0]
        if key == "f" and len(parts) == 1:
            return encode_message(Reply("T", "OK"))
        if key.isupper() and key.lower() in self._params and len(parts) == 1:
            return encode_message(Reply("T", f"{key.lower()} {self._params[key.lower()]}"))
        if key in self._params and len(parts) == 2:
            try:
                float(parts[1])
            except ValueError:
                return None
            self._params[key] = parts[1]
            return encode_message(Reply("T", "OK"))
        return None

    def _clock(self, now: float) -> datetime:
        origin = self._origin if self._origin is not None else now
        elapsed = timedelta(seconds=(now - origin) * self._speed)
        return (
            datetime(2024, 1, 1) + self._clock_offset + elapsed
        )  # the wheel's RTC is naive local time

    def _cmd_clock(self, arg: str, now: float) -> _Reply:
        """``*d g`` reads the wheel's clock (wheel time runs ``speed`` times faster); ``*d s``."""
        parts = arg.split()
        current = self._clock(now)
        if parts == ["g"]:
            return encode_message(Reply("d", current.strftime("%H:%M:%S %d/%m/%y")))
        fields = "YMDhms"  # the order of datetime's constructor arguments
        if len(parts) == 3 and parts[0] == "s" and parts[1] in fields and parts[2].isdigit():
            value = int(parts[2])
            if parts[1] == "Y" and value < 100:
                value += 2000
            values = list(current.timetuple()[:6])
            values[fields.index(parts[1])] = value
            try:
                # The wheel's RTC is naive local time.
                wanted = datetime(values[0], values[1], values[2], values[3], values[4], values[5])
            except ValueError:
                return None
            self._clock_offset += wanted - current
            return encode_message(Reply("d", "OK"))
        return None

    def _number_counts(self) -> list[tuple[Number, int]]:
        pockets: list[Number] = list(range(37))
        if self._pockets == 38:
            pockets.append("00")
        return [(n, self._results.count(n)) for n in pockets]

    def _chi_square(self) -> ChiSquare:
        """Pearson chi-square of the stored results against a fair wheel, and its percentile."""
        total = len(self._results)
        if total == 0:
            return ChiSquare(0.0, 0.0)
        expected = total / self._pockets
        chi = sum((c - expected) ** 2 / expected for _, c in self._number_counts())
        return ChiSquare(round(chi, 2), round(100 * _chi2_cdf(chi, self._pockets - 1), 1))

    def _self_test_codes(self) -> list[int]:
        codes = [self._fault_code] if self._fault_code is not None else []
        if self._game is not None and self._game.has("sensor_fault"):
            codes.append(int(self._game.value("sensor_fault")))
        return codes or [0]


def _check_arguments(
    *,
    speed: float,
    mode: int,
    pockets: int,
    faults: Sequence[FaultSpec],
    revolutions: tuple[int, int],
    spin: int,
) -> None:
    """Reject arguments a real wheel could not have, before any state is built."""
    if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
        raise ValueError(f"speed must be between 0.01 and 1000, not {speed}")
    if not 0 <= mode <= 0xFFFF:
        raise ValueError(f"mode must be a 16-bit sum, not {mode}")
    if pockets not in (37, 38):
        raise ValueError(f"pockets must be 37 or 38, not {pockets}")
    low, high = revolutions
    if not 1 <= low <= high <= 100:
        raise ValueError(
            f"revolutions must be (low, high) with 1 <= low <= high, not {revolutions}"
        )
    if not 1 <= spin <= 256:
        raise ValueError(f"spin must be 1-256, not {spin}")
    seen: set[tuple[str, int]] = set()
    for spec in faults:
        if (spec.kind, spec.game) in seen:
            raise ValueError(f"two {spec.kind} faults for game {spec.game}")
        seen.add((spec.kind, spec.game))


def _to_number(value: int | str, pockets: int) -> Number:
    """A scripted result as the wheel's number type; ``ValueError`` if the wheel has no such."""
    if isinstance(value, str):
        text = value.strip()
        if text == "00":
            if pockets != 38:
                raise ValueError("number '00' needs pockets=38")
            return "00"
        if not text.isdigit():
            raise ValueError(f"not a roulette number: {value!r}")
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 36:
        raise ValueError(f"not a roulette number: {value!r} (0-36, or '00' with pockets=38)")
    return value


def _next_pocket(number: Number) -> int:
    """The default wrong number of a ``result_mismatch``: the next pocket up, 36 → 0."""
    return 1 if number == "00" else (number + 1) % 37


def _garbage(rng: random.Random) -> bytes:
    """Line noise: binary bytes with a NUL or 0xFF, then a lone ``*`` (a false packet start).

    Digits, CR and LF are left out so that no piece of noise can pass for a bare number.
    """
    alphabet = [b for b in range(256) if b not in b"\r\n*0123456789"]
    body = bytes(rng.choice(alphabet) for _ in range(rng.randint(1, 10)))
    return bytes([rng.choice((0x00, 0xFF))]) + body + b"*"


def _chi2_cdf(x: float, dof: int) -> float:
    """Chi-square CDF via the regularised lower incomplete gamma series (no SciPy needed)."""
    a, half = dof / 2, x / 2
    if half <= 0:
        return 0.0
    if half > a + 20 * math.sqrt(a) + 50:
        return 1.0
    term = total = 1 / a
    n = 0
    while term > total * 1e-12 and n < 10_000:
        n += 1
        term *= half / (a + n)
        total += term
    return min(1.0, total * math.exp(-half + a * math.log(half) - math.lgamma(a)))
