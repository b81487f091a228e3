"""Cammegh Slingshot 2: decoded messages + time in, device events out. Pure (STYLE practice 1).

The wheel repeats its ``*X`` status level every 500 ms; the engine wants facts, once. No clock is
read (STYLE practice 15), so tests script "held for 4.9 s" exactly.

Games: the spin number (1–256, wrapping) is no round id, since after a misspin ``*R`` respins
with the same number. A game starts on entering state 2 from 1/5/6 (or after a void/settle), or on
an unknown spin in 2–4; each milestone is emitted once and in order, a status that skips ahead
emits those between, and after ``SpinInvalid`` nothing more. A new spin first seen in state 5 is
not settled: we never announced it.

Results: port 1 sends the bare number just before the first state-5 line; both go out in one
``WheelSettled`` (``number`` and ``status_number``), and a disagreement is the engine's decision
(regulatory R22). Without a bare line the state-5 line settles alone; a bare line whose state-5
line never comes settles alone. ``rotor_direction`` is that of the completing line, so a rotor
that reversed since the launch is visible (seed-001 §4.1 L95).

The vendor's exception handling (developer guide V2.07; ``docs/protocols/cammegh-ss2.md``): warn 2
in state 3 → ``SpinInvalid("same_direction")`` + ``*R``; warn 1 in state 4 held
``no_ball_timeout`` → ``no_ball`` + ``*R``; warn 8 in state 2 the wheel retries
(:attr:`SS2Interpreter.misfire_retries`), in state 3 held ``misfire_grace`` from its first line
there (never earlier than the guide's 3 s) → ``misfire`` + ``*R``; warn 4 latches
``ss2_sensor_fault``; ``*F <code>`` ≠ 0 latches ``ss2_fault_<code>`` until state 2 or ``*F 0``;
state 6 straight after 2–4 latches ``ss2_powered_down``. Only
:meth:`SS2Interpreter._raise`/:meth:`SS2Interpreter._clear` emit fault events.

Sensor stream (``*I 4``, port 1). ASSUMPTION, not in the vendor's guide: the in-rim sensors are
numbered 0 → 1 → 2 clockwise seen from above, so 0→1→2→0 is "cw" and 0→2→1→0 "ccw". Revolutions
are sensor-0 passes after the game's first sensor event. Without the stream, ``revolutions`` and
``ball_direction`` are ``None`` and the engine trusts the wheel's own validation.
"""

from __future__ import annotations

from tablectl.drivers.events import (
    BallLaunched,
    DeviceAvailable,
    DeviceEvent,
    FaultLatch,
    NoMoreBets,
    SpinInvalid,
    WheelReady,
    WheelSettled,
    silent,
)
from tablectl.drivers.ss2.game import (
    FAULT_POWERED_DOWN,
    FAULT_PREFIX,
    FAULT_SENSOR,
    IN_GAME_STATES,
    STATE_CLOSED,
    STATE_IDLE,
    STATE_LAUNCHED,
    STATE_NO_MORE_BETS,
    STATE_READY,
    STATE_RESULT,
    Game,
    InterpreterSettings,
    direction_from_bit,
    fault_code,
)
from tablectl.drivers.ss2.protocol import (
    FAULT_MEANINGS,
    BallInPocket,
    BareNumber,
    Command,
    DecodeError,
    FaultReport,
    Message,
    Number,
    Reply,
    SensorPassed,
    Status,
    WarningBit,
)


class SS2Interpreter:
    """Turns decoded SS2 messages into events; see the module docstring.

    Never raises: a wheel that says something odd is ignored or reported, never a crashed loop.
    """

    def __init__(self, device_id: str, settings: InterpreterSettings) -> None:
        self.device_id = device_id
        self.settings = settings
        self.misfire_retries = 0
        """Launch retries seen in state 2 (rising edges of warn 8): a diagnostic, not a void."""
        self.available = False
        self._reported_down = False
        self._silence_ref: float | None = None
        # What the wheel last told us; kept across reconnects for the catch-up rule.
        self._state: int | None = None
        self._spin: int | None = None
        self._warnings = 0
        self._game: Game | None = None
        self._no_ball_since: float | None = None
        self._misfire_since: float | None = None
        self._faults = FaultLatch(self.device_id)
        self._commands: list[Command] = []
        self.last_reply: Reply | None = None
        """The wheel's last reply to a command (technician tools)."""
        self._polling = False
        self._last_poll: float | None = None

    # --- public entry points ---------------------------------------------------------------

    @property
    def state(self) -> int | None:
        """The wheel's last reported state (1–6), or ``None`` before the first status."""
        return self._state

    @property
    def spin(self) -> int | None:
        """The wheel's last reported spin number, or ``None`` before the first status."""
        return self._spin

    @property
    def active_faults(self) -> frozenset[str]:
        """Fault codes raised and not yet cleared."""
        return self._faults.codes

    def connected(self, now: float) -> None:
        """A (re)connect: queue ``*o``/``*I 4`` as configured, and poll ``*X`` every
        ``poll_interval`` when ``auto_status`` is off (the guide: no faster than 100 ms). Silence is
        timed from the first tick.
        """
        del now
        if self.settings.operating_mode is not None:
            self._commands.append(Command.operating_mode(self.settings.operating_mode))
        if self.settings.sensor_stream:
            self._commands.append(Command.sensor_stream(on=True))
        self._polling = not self.settings.auto_status
        self._last_poll = None

    def feed(self, message: Message, now: float) -> list[DeviceEvent]:
        """One decoded message that arrived at ``now``. :class:`DecodeError` is ignored (the
        driver counts them): garbage proves nothing about the wheel being alive."""
        if isinstance(message, DecodeError):
            return []
        if isinstance(message, Reply):
            self.last_reply = message
        events: list[DeviceEvent] = []
        self._silence_ref = now
        if not self.available:
            self.available = True
            self._reported_down = False
            events.append(DeviceAvailable(device=self.device_id, at=now))
        match message:
            case Status():
                events += self._on_status(message, now)
            case BareNumber(number):
                events += self._on_bare_number(number, now)
            case FaultReport(code):
                events += self._on_fault_report(code, now)
            case SensorPassed(sensor):
                self._on_sensor(sensor)
            case BallInPocket(number):
                events += self._on_pocket(number, now)
            case _:
                pass  # Replies and chi-square values: for technicians, not for the game.
        return events

    def tick(self, now: float) -> list[DeviceEvent]:
        """Timers: silence and the no-ball / misfire holds. Call every 100 ms or so.

        A wheel that never speaks is reported too (silent a few seconds after power-up; the default
        2 s is four automatic status periods).
        """
        if self._polling and (
            self._last_poll is None or now - self._last_poll >= self.settings.poll_interval
        ):
            self._last_poll = now
            self._commands.append(Command.poll())
        events: list[DeviceEvent] = []
        if self._silence_ref is None:
            self._silence_ref = now
        quiet = now - self._silence_ref
        if not self._reported_down and quiet >= self.settings.silence_timeout:
            self._reported_down = True
            self.available = False
            # A hold must be *continuous*: a silent wheel has not confirmed it.
            self._no_ball_since = self._misfire_since = None
            events += silent(self.device_id, now, f"no valid message for {quiet:.1f} s")
        if self.available:
            events += self._check_holds(now)
        return events

    def connection_lost(self, now: float) -> list[DeviceEvent]:
        """The link went away. The driver base reports ``DeviceUnavailable("disconnected")``,
        so this only forgets per-connection state; the game knowledge is kept for catch-up."""
        del now
        self.available = False
        self._reported_down = True
        self._silence_ref = None
        self._no_ball_since = self._misfire_since = None
        self._warnings = 0
        self._polling = False
        return []

    def take_commands(self) -> list[Command]:
        """Commands to send now, oldest first; empties the queue. Fire and forget: the wheel's next
        status lines show whether it obeyed.
        """
        commands, self._commands = self._commands, []
        return commands

    # --- status lines ----------------------------------------------------------------------

    def _on_status(self, status: Status, now: float) -> list[DeviceEvent]:
        prev_state, prev_warnings = self._state, self._warnings
        # A bare number waiting for this line first: the wheel reported it before anything the
        # line says (a fault bit on the state-5 line must not overtake the result it follows).
        events = self._resolve_bare_number(status, now)
        # Faults next: a fault that clears as the wheel reaches state 2 must be gone before the
        # engine is asked to open the round (a latched fault may keep it from opening one).
        events += self._track_faults(status, prev_state, now)
        events += self._track_game(status, prev_state, now)
        events += self._track_warnings(status, prev_state, prev_warnings, now)
        self._state, self._spin, self._warnings = status.state, status.spin, status.warnings
        if status.state in (STATE_IDLE, STATE_RESULT, STATE_CLOSED) and self._game is not None:
            self._game.ended = True
        return events

    def _track_game(self, status: Status, prev_state: int | None, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        state, game = status.state, self._game
        if state in IN_GAME_STATES:
            entering_ready = state == STATE_READY and prev_state != STATE_READY
            if (
                game is None
                or game.spin != status.spin
                or game.ended
                or (entering_ready and (game.voided or game.settled))
                or (entering_ready and prev_state in (STATE_IDLE, STATE_RESULT, STATE_CLOSED))
            ):
                game = self._game = Game(status.spin)
                self._no_ball_since = self._misfire_since = None
                events.append(WheelReady(device=self.device_id, at=now, spin=status.spin))
            elif entering_ready:
                # 3/4 → 2 on the same, still open game: the wheel relaunches. Same round;
                # what we learnt about the failed launch no longer applies.
                # Bets stay closed if they were: the engine cannot reopen them.
                game.reset_launch()
        if game is None or game.ended or game.voided or game.settled:
            return events
        if game.spin != status.spin:
            return events  # state 5/1/6 of a spin we never opened: nothing to announce
        if state >= STATE_LAUNCHED and state != STATE_CLOSED and not game.launched:
            game.launched = True
            # Taken here, not in state 2: the rotor reverses through 0 rpm during state 2.
            game.rotor_direction = direction_from_bit(status.rotor_direction)
            events.append(
                BallLaunched(
                    device=self.device_id,
                    at=now,
                    spin=game.spin,
                    rotor_direction=game.rotor_direction,
                )
            )
        if game.launched and state in (STATE_LAUNCHED, STATE_NO_MORE_BETS, STATE_RESULT):
            game.rotor_now = direction_from_bit(status.rotor_direction)
        if state in (STATE_NO_MORE_BETS, STATE_RESULT) and not game.bets_closed:
            game.bets_closed = True
            events.append(NoMoreBets(device=self.device_id, at=now, spin=game.spin))
        if state == STATE_RESULT and status.last_number is not None:
            events += self._settle(game, status.last_number, now)
        return events

    def _resolve_bare_number(self, status: Status, now: float) -> list[DeviceEvent]:
        """Settle a game whose bare number waits for its status line, if this is the one (or
        shows that it will not come)."""
        game = self._game
        if game is None or game.bare_number is None or not game.live:
            return []
        if status.spin == game.spin and status.state == STATE_NO_MORE_BETS:
            return []  # the result is not on the status lines yet
        if status.spin == game.spin and status.state == STATE_RESULT:
            game.rotor_now = direction_from_bit(status.rotor_direction)
            return self._settle(game, status.last_number, now)
        # Another state or spin: the state-5 lines were lost. The bare line stands alone.
        return self._settle(game, None, now)

    def _track_faults(
        self, status: Status, prev_state: int | None, now: float
    ) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        state = status.state
        if status.warnings & WarningBit.SENSOR_FAULT:
            events += self._faults.latch(
                FAULT_SENSOR, detail="sensor stuck, motor or encoder fault", now=now
            )
        else:
            events += self._faults.clear(FAULT_SENSOR, now=now)
        if state == STATE_CLOSED and prev_state in IN_GAME_STATES:
            events += self._faults.latch(
                FAULT_POWERED_DOWN, detail=f"dropped to state 6 from {prev_state}", now=now
            )
        elif state != STATE_CLOSED:
            events += self._faults.clear(FAULT_POWERED_DOWN, now=now)
        if state == STATE_READY and prev_state != STATE_READY:
            # The wheel is playing again: whatever *F reported is behind it.
            for code in sorted(c for c in self._faults if c.startswith(FAULT_PREFIX)):
                events += self._faults.clear(code, now=now)
        return events

    def _track_warnings(
        self, status: Status, prev_state: int | None, prev_warnings: int, now: float
    ) -> list[DeviceEvent]:
        state, warn = status.state, status.warnings
        events: list[DeviceEvent] = []
        misfiring = state == STATE_READY and warn & WarningBit.LAUNCH_FAILED
        was_misfiring = prev_state == STATE_READY and prev_warnings & WarningBit.LAUNCH_FAILED
        if misfiring and not was_misfiring:
            # The wheel retries by itself in state 2; count each retry once, not per line.
            self.misfire_retries += 1
        if state == STATE_LAUNCHED and warn & WarningBit.SAME_DIRECTION:
            events += self._void("same_direction", now)
        if state == STATE_NO_MORE_BETS and warn & WarningBit.BALL_NOT_SENSED:
            if self._no_ball_since is None:
                self._no_ball_since = now
        else:
            self._no_ball_since = None
        if state == STATE_LAUNCHED and warn & WarningBit.LAUNCH_FAILED:
            if self._misfire_since is None:
                self._misfire_since = now
        else:
            self._misfire_since = None
        events += self._check_holds(now)
        return events

    def _check_holds(self, now: float) -> list[DeviceEvent]:
        events: list[DeviceEvent] = []
        if (
            self._no_ball_since is not None
            and now - self._no_ball_since >= self.settings.no_ball_timeout
        ):
            events += self._void("no_ball", now)
        if (
            self._misfire_since is not None
            and now - self._misfire_since >= self.settings.misfire_grace
        ):
            events += self._void("misfire", now)
        return events

    # --- other messages --------------------------------------------------------------------

    def _on_bare_number(self, number: Number, now: float) -> list[DeviceEvent]:
        # Only port 1 sends it, just before the first state-5 line; taken while the game is at
        # no-more-bets and held for that status line (_resolve_bare_number), ignored anywhere
        # else (the state-5 line carries the number as well). A repeat keeps the first.
        del now
        game = self._game
        if game is None or self._state != STATE_NO_MORE_BETS or game.spin != self._spin:
            return []
        if game.live and game.bare_number is None:
            game.bare_number = number
        return []

    def _on_fault_report(self, code: int, now: float) -> list[DeviceEvent]:
        if code == 0:
            events: list[DeviceEvent] = []
            for latched in sorted(c for c in self._faults if c.startswith(FAULT_PREFIX)):
                events += self._faults.clear(latched, now=now)
            return events
        return self._faults.latch(
            fault_code(code), detail=FAULT_MEANINGS.get(code, "unknown fault code"), now=now
        )

    def _on_sensor(self, sensor: int) -> None:
        game = self._game
        if (
            not self.settings.sensor_stream
            or game is None
            or not game.live
            or self._state not in (STATE_LAUNCHED, STATE_NO_MORE_BETS)
        ):
            return
        game.sensor_events += 1
        if sensor == 0 and game.sensor_events > 1:
            game.revolutions += 1
        last = game.last_sensor
        if last is not None and sensor != last:
            if (last + 1) % 3 == sensor:
                game.cw_steps += 1
            else:
                game.ccw_steps += 1
        game.last_sensor = sensor

    def _on_pocket(self, number: Number, now: float) -> list[DeviceEvent]:
        game = self._game
        if not self.settings.sensor_stream or game is None or game.voided:
            return []
        if game.settled:
            # Too late to stop the result: report it anyway so the engine records a verdict.
            return self._mismatch(game, now) if number != game.number else []
        if not game.ended:
            game.pocket = number
        return []

    # --- helpers ---------------------------------------------------------------------------

    def _settle(self, game: Game, status_number: Number | None, now: float) -> list[DeviceEvent]:
        """The result, exactly once per game: the bare number (if one came) and the state-5
        line's number (if it came), both reported; see the module docstring."""
        bare = game.bare_number
        number = bare if bare is not None else status_number
        if not game.live or number is None:
            return []
        if game.pocket is not None and game.pocket != number:
            game.number = number
            game.voided = True
            return self._mismatch(game, now)
        game.settled = True
        game.number = number
        stream = self.settings.sensor_stream and game.sensor_events > 0
        return [
            WheelSettled(
                device=self.device_id,
                at=now,
                number=number,
                spin=game.spin,
                revolutions=game.revolutions if stream else None,
                ball_direction=game.ball_direction if stream else None,
                rotor_direction=game.rotor_now or game.rotor_direction,
                status_number=status_number if bare is not None else None,
            )
        ]

    def _mismatch(self, game: Game, now: float) -> list[DeviceEvent]:
        if game.mismatch_reported:
            return []
        game.mismatch_reported = True
        return [
            SpinInvalid(device=self.device_id, at=now, reason="number_mismatch", spin=game.spin)
        ]

    def _void(self, reason: str, now: float) -> list[DeviceEvent]:
        """The guide's VOID game: once per game, and ``*R`` to acknowledge / restart."""
        game = self._game
        self._no_ball_since = self._misfire_since = None
        if game is None or not game.live:
            return []
        game.voided = True
        self._commands.append(Command.restart())
        return [SpinInvalid(device=self.device_id, at=now, reason=reason, spin=game.spin)]
