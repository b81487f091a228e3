"""What the SS2 interpreter keeps per game, and the vocabulary it shares with it: the wheel's state
numbers, the stable fault codes it raises, and the settings it reads. Pure (STYLE practice 1);
:mod:`tablectl.drivers.ss2.interpreter` is the translation itself."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from tablectl.drivers.events import Direction
from tablectl.drivers.ss2.protocol import Number

FAULT_SENSOR = "ss2_sensor_fault"
"""Latched while status warn bit 4 (sensor stuck, motor or encoder fault) is set."""
FAULT_POWERED_DOWN = "ss2_powered_down"
"""Latched while the wheel sits in state 6 after dropping there from a game (2–4)."""

FAULT_PREFIX = "ss2_fault_"

STATE_READY, STATE_LAUNCHED, STATE_NO_MORE_BETS, STATE_RESULT = 2, 3, 4, 5
IN_GAME_STATES = (STATE_READY, STATE_LAUNCHED, STATE_NO_MORE_BETS)
STATE_IDLE, STATE_CLOSED = 1, 6


def fault_code(code: int) -> str:
    """The stable fault code of a ``*F <code>`` report (``ss2_fault_5``)."""
    return f"{FAULT_PREFIX}{code}"


def direction_from_bit(bit: int) -> Direction:
    # Status field "dir": 0 clockwise, 1 anticlockwise.
    return "ccw" if bit else "cw"


class InterpreterSettings(Protocol):
    """What the interpreter reads from :class:`tablectl.drivers.ss2.driver.SS2Settings`.

    A protocol, not the pydantic model, so this module imports nothing that pulls in asyncio.
    """

    @property
    def operating_mode(self) -> int | None: ...

    @property
    def sensor_stream(self) -> bool: ...

    @property
    def auto_status(self) -> bool: ...

    @property
    def poll_interval(self) -> float: ...

    @property
    def silence_timeout(self) -> float: ...

    @property
    def no_ball_timeout(self) -> float: ...

    @property
    def misfire_grace(self) -> float: ...


@dataclass
class Game:
    """One game of the wheel, from its state 2 to its result or void."""

    spin: int
    launched: bool = False
    bets_closed: bool = False
    settled: bool = False
    voided: bool = False
    ended: bool = False
    """The wheel left the game's states (1, 5, 6): no further milestones, whatever happened."""
    number: Number | None = None
    rotor_direction: Direction | None = None
    """The rotor's direction at the launch (state 3)."""
    rotor_now: Direction | None = None
    """The rotor's direction on the game's latest status line since the launch."""
    bare_number: Number | None = None
    """The bare winning-number line, waiting for its state-5 status line."""
    # Sensor stream (reset at each launch attempt).
    sensor_events: int = 0
    last_sensor: int | None = None
    revolutions: int = 0
    cw_steps: int = 0
    ccw_steps: int = 0
    pocket: Number | None = None
    mismatch_reported: bool = False

    @property
    def live(self) -> bool:
        """Still owed events: not ended, voided or settled."""
        return not (self.ended or self.voided or self.settled)

    def reset_launch(self) -> None:
        self.launched = False
        self.rotor_direction = None
        self.rotor_now = None
        self.bare_number = None
        self.sensor_events = 0
        self.last_sensor = None
        self.revolutions = 0
        self.cw_steps = 0
        self.ccw_steps = 0
        self.pocket = None

    @property
    def ball_direction(self) -> Direction | None:
        if self.cw_steps > self.ccw_steps:
            return "cw"
        if self.ccw_steps > self.cw_steps:
            return "ccw"
        return None
