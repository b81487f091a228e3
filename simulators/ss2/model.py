"""The simulated SS2's model: the controller's tick loop, its phases, the ball and the rotor; its
serial side is :class:`~tablectl.simulators.ss2.wire.HostPort`, which this class extends.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from datetime import timedelta

from tablectl.drivers.ss2.protocol import (
    BallInPocket,
    BareNumber,
    CommandDecoder,
    FaultReport,
    Number,
    SensorPassed,
    Status,
    WarningBit,
)
from tablectl.simulators.faults import faults_at
from tablectl.simulators.ss2.faults import FaultSpec
from tablectl.simulators.ss2.phases import (
    BETS_TICKS,
    BOOT_TICKS,
    DEFAULT_MODE,
    GAME_PHASES,
    IDLE_TICKS,
    MID_GAME_TICK,
    MISSPIN_RESTART_TICKS,
    MODE_AUTO_STATUS,
    MODE_FAULT_REPORTS,
    MODE_HOST_START,
    MODE_NO_BARE_NUMBER,
    MODE_RANDOM_SPEED,
    MODE_REVERSE,
    NO_BALL_STOP_TICKS,
    NO_MORE_TICKS,
    RESULT_TICKS,
    RIM_TICKS,
    RPM_MAX,
    RPM_MIN,
    TICK,
    GamePlan,
    HandlerReply,
    Phase,
    check_arguments,
    next_pocket,
    to_number,
)
from tablectl.simulators.ss2.wire import HostPort


class SimSS2(HostPort):
    """The simulated wheel (serial port 1). Feed it time and host bytes; it returns wheel bytes.

    ``mode``: the ``*o`` bit sum (``MODE_*``); ``pockets`` 37 or 38 (``"00"``); ``spin``: the
    counter before the first launch (1–256, wraps). ``wait_for_host`` holds state 1 until the first
    host command, so a late host still sees game 1 from its start; no real wheel does this, it is
    for tests that count games. ``ValueError`` for anything out of range, a number the wheel lacks,
    or two faults of one kind for one game.
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
        check_arguments(
            speed=speed,
            mode=mode,
            pockets=pockets,
            faults=faults,
            revolutions=revolutions,
            spin=spin,
        )
        self._rng = random.Random(seed)
        self._start_timeline(speed, 0)
        self._period = TICK / speed
        self._mode = mode
        self._pockets = pockets
        self._faults = tuple(faults)
        self._script: list[Number] = [to_number(n, pockets) for n in numbers or ()]
        self._revolutions = revolutions
        self._awaiting_host = wait_for_host

        self._decoder = CommandDecoder()
        self._t0: float | None = None  # model time of tick 0; shifted by a `silence` stall
        self._tick = 0

        self._phase = Phase.BOOT
        self._entered = 0
        self._length: int | None = BOOT_TICKS
        self._game: GamePlan | None = None
        self._games = 0
        self._launched = False
        self._spin = spin
        self._last: Number | None = None
        self._warn = 0
        self._rpm = 0
        self._direction = 0
        self._target = self._rng.randint(RPM_MIN, RPM_MAX)
        self._angle = 0.0

        self._sensor_stream = False
        self._status_on = True
        self._fault_code: int | None = None
        self._launches = 0
        self._misfires = 0
        self._silent_until = -math.inf
        self._clock_offset = timedelta()
        self._params: dict[str, str] = {
            "h": "60",
            "n": "35",
            "s": "15.0",
            "r": "100",
            "z": str(pockets),
            "c": "20000",
        }
        self._handlers: dict[str, Callable[[str, float], HandlerReply]] = {
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
    def mode(self) -> int:
        return self._mode

    @property
    def status_period(self) -> float:
        """Seconds between automatic status lines (``0.5 / speed``)."""
        return self._period

    # --- the schedule --------------------------------------------------------------------------

    def _run_until(self, now: float) -> None:
        """The timeline and the controller's ticks, in time order (an entry before a tick)."""
        if self._t0 is None:
            self._t0 = self._origin = now
        while True:
            t_tick = self._t0 + self._tick * self._period
            due = self._timeline.next_at()
            if due is not None and due <= t_tick:
                if due > now:
                    return
                at, (kind, arg) = self._timeline.pop()
                self._on_event(at, kind, arg)
                continue
            if t_tick > now:
                return
            self._on_tick(t_tick)

    def _on_event(self, at: float, kind: str, arg: int) -> None:
        if kind == "sensor":
            if self._sensor_stream:
                self._emit(at, SensorPassed(arg))
        elif kind == "self_test" and self._phase is Phase.CLOSED:
            for code in self._self_test_codes():
                self._emit(at, FaultReport(code))

    def _on_tick(self, t: float) -> None:
        k = self._tick
        if self._length is not None and k - self._entered >= self._length:
            self._phase_done(t)
        elapsed = k - self._entered
        game = self._game
        if self._phase is Phase.RIM and elapsed == MID_GAME_TICK and game is not None:
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
                self._enter(Phase.CLOSED, None)
                elapsed = 0
        self._update_rotor(elapsed)
        self._warn = self._warnings(elapsed)
        if self._mode & MODE_AUTO_STATUS and self._status_on and self._phase is not Phase.BOOT:
            self._emit(t, self._status())
        self._tick += 1

    def _stall(self, t: float, seconds: float) -> None:
        """``silence``: the controller hangs; everything still to come moves ``seconds`` later."""
        assert self._t0 is not None
        self._t0 += seconds
        self._shift(seconds)
        self._silent_until = t + seconds

    # --- phases --------------------------------------------------------------------------------

    def _enter(self, phase: Phase, length: int | None) -> None:
        if self._phase is Phase.CLOSED and phase is not Phase.CLOSED:
            self._cancel("self_test")
        self._phase = phase
        self._entered = self._tick
        self._length = length

    def _abort(self) -> None:
        """The game in play ends without a result (``*R``, ``*P 0``, fault, auto-restart)."""
        self._cancel("sensor")

    def _phase_done(self, t: float) -> None:
        match self._phase:
            case Phase.BOOT:
                self._enter(Phase.IDLE, IDLE_TICKS)
            case Phase.IDLE | Phase.RESULT:
                if self._mode & MODE_HOST_START or self._awaiting_host:
                    self._length = None  # hold until *K / *u 1, or until a host speaks
                else:
                    self._start_game(t)
            case Phase.BETS:
                self._launch(t)
            case Phase.RIM:
                # Only an unacknowledged misspin has an end here other than "no more bets".
                if self._game is not None and self._game.has("misspin"):
                    self._abort()
                    self._enter(Phase.IDLE, IDLE_TICKS)
                else:
                    self._no_more_bets()
            case Phase.NO_MORE:
                if self._game is not None and self._game.has("no_ball"):
                    self._abort()
                    self._enter(Phase.CLOSED, None)
                else:
                    self._result(t)
            case Phase.CLOSED:  # pragma: no cover - CLOSED has no length
                pass

    def _start_game(self, t: float) -> None:
        if self._launched:
            self._spin = self._spin % 256 + 1
            self._launched = False
        self._games += 1
        faults = faults_at(self._faults, self._games)
        rng = self._rng
        self._target = rng.randint(RPM_MIN, RPM_MAX)
        misfire = faults.get("misfire") or faults.get("misfire_stuck")
        misfire_ticks = math.ceil(misfire.number / TICK) if misfire else 0
        game = GamePlan(
            number=self._games,
            faults=faults,
            bets_ticks=BETS_TICKS + rng.randint(-1, 1),
            misfire_ticks=misfire_ticks,
            rim_ticks=RIM_TICKS + rng.randint(-1, 2),
            no_more_ticks=NO_MORE_TICKS + rng.randint(-1, 2),
            start_rpm=self._rpm,
        )
        self._game = game
        if misfire_ticks:
            self._misfires += 1
        self._enter(Phase.BETS, game.bets_ticks + misfire_ticks)
        if game.has("sensor_fault") and self._mode & MODE_FAULT_REPORTS:
            self._emit(t, FaultReport(int(game.value("sensor_fault"))))

    def _launch(self, t: float) -> None:
        game = self._game
        assert game is not None
        self._launched = True
        self._launches += 1
        length = MISSPIN_RESTART_TICKS if game.has("misspin") else game.rim_ticks
        self._enter(Phase.RIM, length)
        self._schedule_sensors(t, game)

    def _schedule_sensors(self, t: float, game: GamePlan) -> None:
        """Ball revolutions for the ``*I 4`` stream, slowing from launch to leaving the rim; drawn
        even with the stream off, so enabling it does not change the RNG sequence.
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
            self._target = self._rng.randint(RPM_MIN, RPM_MAX + 5)
        length = NO_BALL_STOP_TICKS if game.has("no_ball") else game.no_more_ticks
        if game.has("rotor_reversal"):
            self._direction ^= 1  # the rotor's direction changes with the ball in play
        self._enter(Phase.NO_MORE, length)

    def _result(self, t: float) -> None:
        number = self._script.pop(0) if self._script else self._random_number()
        self._last = number
        game = self._game
        if game is not None and game.has("result_mismatch"):
            # The status lines' "last winning number" disagrees with the ball (no RNG draw:
            # the rest of the run stays byte-identical to one without the fault).
            spec = game.faults["result_mismatch"]
            self._last = int(spec.number) if spec.value is not None else next_pocket(number)
        self._results.append(number)
        self._cancel("sensor")
        self._enter(Phase.RESULT, RESULT_TICKS)
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
        if phase is Phase.BOOT:
            rpm = 0
        elif phase is Phase.CLOSED:
            rpm = self._rpm * 2 // 5  # runs down over a few lines, as in the capture
        elif phase is Phase.IDLE:
            rpm = self._target * 36 // 100 + noise if elapsed == 0 and self._rpm < 100 else target
        elif phase is Phase.BETS and self._mode & MODE_REVERSE and self._game is not None:
            rpm = self._reversing_rpm(self._game, elapsed, target)
        elif phase is Phase.NO_MORE and elapsed == 0:
            rpm = (self._rpm + target) // 2  # random speed change: half-way on the first line
        else:
            rpm = target
        self._rpm = max(0, min(999, rpm))
        revolutions = self._rpm / 10 / 60 * TICK
        self._angle = (self._angle + (revolutions if self._direction else -revolutions)) % 1.0

    def _reversing_rpm(self, game: GamePlan, elapsed: int, target: int) -> int:
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
        if game is None or self._phase not in GAME_PHASES:
            return 0
        warn = 0
        if game.has("sensor_fault"):
            warn |= WarningBit.SENSOR_FAULT
        if self._phase is Phase.BETS and game.misfire_ticks and elapsed >= game.bets_ticks:
            warn |= WarningBit.LAUNCH_FAILED
        if self._phase is Phase.RIM:
            if game.has("misfire_stuck"):
                warn |= WarningBit.LAUNCH_FAILED
            if game.has("misspin"):
                warn |= WarningBit.SAME_DIRECTION
        if self._phase is Phase.NO_MORE and game.has("no_ball"):
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
