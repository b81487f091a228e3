"""The simulated dice unit's mechanism: the cycle, faults and their schedule. What it says on the
line is its :class:`~tablectl.simulators.dice.wire.HostPort`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from tablectl.drivers.dice.protocol import (
    COLOR_PATTERN,
    FAULT_LID,
    FAULT_MOTION,
    FAULT_READER,
    MAX_DICE,
    MAX_NUMBER,
    BettingClosed,
    BettingOpen,
    ClosedBy,
    DiceState,
    NoResult,
    Result,
    Rolling,
    Status,
    TestReport,
    encode_message,
)
from tablectl.drivers.events import RollInvalidCode
from tablectl.simulators.chunks import Chunk
from tablectl.simulators.dice.faults import NO_RESULT_KINDS, FaultSpec
from tablectl.simulators.dice.wire import READER, SELF_TEST_SECONDS, HostPort
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import check_unique, faults_at
from tablectl.simulators.stx_port import corrupt, line_noise

_SHIFTED_BY_LID: Final = frozenset({"close", "roll", "open"})
"""What the lid interlock holds back: the betting timer and the next steps of the cycle."""


@dataclass(frozen=True)
class RollOutcome:
    """How one roll ended (for tests and the CLI's ``--games``): ``faces`` in the table's colour
    order for a result, ``code`` for no result."""

    game: int
    roll: int
    faces: tuple[int, ...] | None = None
    code: RollInvalidCode | None = None


@dataclass
class GamePlan:
    """One game as opened: its wire number, its scripted faults and how many rolls it took."""

    number: int
    faults: dict[str, FaultSpec]
    rolls: int = 0
    fired: set[str] = field(default_factory=set)

    def has(self, kind: str) -> bool:
        return kind in self.faults

    def strikes(self, kind: str) -> bool:
        """Whether ``kind`` strikes now: scripted for this game and not yet fired (once)."""
        if kind not in self.faults or kind in self.fired:
            return False
        self.fired.add(kind)
        return True


def _seconds(value: float, what: str) -> float:
    if isinstance(value, bool) or not (math.isfinite(value) and 0 < value <= 3600):
        raise SimulatorError(f"{what} must be > 0 and <= 3600 seconds, not {value}")
    return float(value)


def _optional_seconds(value: float | None, what: str) -> float | None:
    return None if value is None else _seconds(value, what)


class SimDice(HostPort[RollOutcome]):
    """The simulated dice unit. Feed it time and host bytes; it returns unit bytes.

    ``colors``: one per die, distinct, or none (the reader then reports its own order). ``faces``:
    results in order, then random. ``betting_seconds`` ``None``: only ``CLOS``/:meth:`press_close`
    closes; ``roll_delay`` ``None``: only ``ROLL``/:meth:`press_roll` rolls. ``SimulatorError`` for
    an argument out of range or two faults of one kind for one game.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        dice: int = 3,
        colors: Sequence[str] | None = None,
        faults: Sequence[FaultSpec] = (),
        faces: Sequence[Sequence[int]] = (),
        betting_seconds: float | None = 10.0,
        roll_delay: float | None = 1.0,
        shake_seconds: float = 3.0,
        settle_seconds: float = 1.0,
        result_seconds: float = 4.0,
    ) -> None:
        if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
            raise SimulatorError(f"speed must be 0.01-1000, not {speed}")
        if isinstance(dice, bool) or not 1 <= dice <= MAX_DICE:
            raise SimulatorError(f"dice must be 1-{MAX_DICE}, not {dice}")
        colors = tuple(colors or ())
        if colors and (len(colors) != dice or len(set(colors)) != dice):
            raise SimulatorError(f"colors: {dice} distinct colours needed, not {colors}")
        if not all(COLOR_PATTERN.fullmatch(c) for c in colors):
            raise SimulatorError(f"colors: lower-case words of 1-12 letters, not {colors}")
        for result in faces:
            if len(result) != dice or not all(f in range(1, 7) for f in result):
                raise SimulatorError(f"faces: {list(result)} is not {dice} faces 1-6")
        check_unique(faults)
        self._betting = _optional_seconds(betting_seconds, "betting_seconds")
        self._roll_delay = _optional_seconds(roll_delay, "roll_delay")
        self._shake = _seconds(shake_seconds, "shake_seconds")
        self._settle = _seconds(settle_seconds, "settle_seconds")
        self._result_hold = _seconds(result_seconds, "result_seconds")
        self._rng = random.Random(seed)
        self._start_timeline(speed, 0)
        self._dice = dice
        self._colors = colors
        self._faults = tuple(faults)
        self._scripted = [tuple(f) for f in faces]
        self._serial = f"SIM{seed % 100000:05d}"
        self._setup_port()

        self._state: DiceState = "ready"
        self._game = 0
        self._roll = 0
        self._games = 0
        self._plan: GamePlan | None = None
        self._wire: GamePlan | None = None  # whose wire faults (split) apply to output now
        self._active: dict[int, str] = {}
        self._resume: DiceState = "ready"
        self._testing = False
        self._last: Result | NoResult | None = None
        self._silent_until = -math.inf

    # --- observation ---------------------------------------------------------------------------

    @property
    def state(self) -> DiceState:
        return self._state

    @property
    def game(self) -> int:
        return self._game

    def silent(self, now: float) -> bool:
        """True while a ``silence`` fault has the unit hung."""
        return now < self._silent_until

    def status(self) -> Status:
        """The status the unit would report now."""
        return Status(self._state, self._game, self._roll, tuple(sorted(self._active)))

    # --- buttons -------------------------------------------------------------------------------

    def press_close(self, now: float) -> bool:
        """The dealer's no-more-bets button."""
        self._run_until(now)
        if self._state != "ready" or self._testing:
            return False
        self._close(now, "button")
        return True

    def press_roll(self, now: float) -> bool:
        """The dealer's shake button (betting must be closed)."""
        self._run_until(now)
        if self._state != "closed" or self._active or self._testing:
            return False
        self._start_roll(now)
        return True

    # --- the schedule --------------------------------------------------------------------------

    def _on_start(self, now: float) -> None:
        self._schedule(now, "open")

    def _jittered(self, seconds: float) -> float:
        return self._scaled(seconds) * self._rng.uniform(0.95, 1.05)

    def _on_event(self, at: float, kind: str, arg: int) -> None:
        match kind:
            case "open":
                self._open(at)
            case "close":
                self._close(at, "timer")
            case "roll":
                if self._state == "closed" and not self._active and not self._testing:
                    self._start_roll(at)
            case "motion":
                self._fail(at, FAULT_MOTION, "shaker motion fault: the dome stopped mid-shake")
            case "read":
                self._read(at)
            case "lid":
                self._lid(at)
            case "clear":
                self._clear_fault(at, arg)
            case "test_done":
                self._testing = False
                faces = ",".join(str(self._rng.randint(1, 6)) for _ in range(self._dice))
                self._emit(at, TestReport((), f"shaker ok, reader ok, read {faces}"))
            case _:  # pragma: no cover - every kind is scheduled above
                pass

    # --- the cycle -----------------------------------------------------------------------------

    def _open(self, at: float) -> None:
        self._games += 1
        self._game = self._game % MAX_NUMBER + 1
        plan = self._plan = self._wire = GamePlan(self._game, faults_at(self._faults, self._games))
        self._state = "ready"
        self._emit(at, BettingOpen(self._game))
        if self._betting is not None:
            self._schedule(at + self._scaled(self._betting), "close")
        if plan.has("lid_open"):
            self._schedule(at + self._scaled(self._betting or 2.0) / 2, "lid")

    def _close(self, at: float, by: ClosedBy) -> None:
        if self._state != "ready":
            return
        self._cancel("close")
        self._state = "closed"
        self._emit(at, BettingClosed(self._game, by))
        self._schedule_roll(at)

    def _schedule_roll(self, at: float) -> None:
        self._cancel("roll")
        if self._roll_delay is not None:
            self._schedule(at + self._scaled(self._roll_delay), "roll")

    def _start_roll(self, at: float) -> None:
        plan = self._plan
        assert plan is not None  # a game is open whenever the state is closed
        self._cancel("roll")
        plan.rolls += 1
        self._roll = self._roll % MAX_NUMBER + 1
        self._state = "rolling"
        if plan.strikes("garbage"):
            self._outbox.append(Chunk(at, line_noise(self._rng)))
            self._outbox.append(Chunk(at, corrupt(encode_message(self.status()))))
        self._emit(at, Rolling(self._game, self._roll))
        shake = self._jittered(self._shake)
        if plan.strikes("motion_fault"):
            self._schedule(at + shake / 2, "motion")
        else:
            self._schedule(at + shake + self._jittered(self._settle), "read")
        if plan.strikes("silence"):
            seconds = self._scaled(plan.faults["silence"].number)
            self._shift(seconds)
            self._silent_until = at + seconds
        if plan.strikes("disconnect"):
            self._link_down = (at, at + self._scaled(plan.faults["disconnect"].number))

    def _read(self, at: float) -> None:
        plan = self._plan
        assert plan is not None
        if plan.strikes("reader_fault"):
            self._fail(at, FAULT_READER, "result reader fault: no image from CAM1")
            return
        for kind, code in NO_RESULT_KINDS.items():
            if plan.strikes(kind):
                spec = plan.faults[kind]
                detail = f"die {int(spec.number)}" if spec.number else ""
                outcome = NoResult(self._game, self._roll, code, detail)
                self._last = outcome
                self._emit(at, outcome)
                self._results.append(RollOutcome(self._game, self._roll, code=code))
                self._state = "closed"  # bets stand; the dealer rolls again
                self._schedule_roll(at)
                return
        faces = self._scripted.pop(0) if self._scripted else self._random_faces()
        order = list(range(self._dice))
        if self._colors:
            self._rng.shuffle(order)  # where the dice came to rest, left to right
        result = Result(
            self._game,
            self._roll,
            tuple(faces[i] for i in order),
            tuple(self._colors[i] for i in order) if self._colors else (),
            self._rng.randint(90, 100),
            READER,
        )
        self._last = result
        self._emit(at, result, broken=plan.strikes("bad_checksum"))
        if plan.strikes("duplicate_result"):
            self._emit(at, result)
        self._results.append(RollOutcome(self._game, self._roll, faces=tuple(faces)))
        self._state = "result"
        self._schedule(at + self._scaled(self._result_hold), "open")

    def _random_faces(self) -> tuple[int, ...]:
        return tuple(self._rng.randint(1, 6) for _ in range(self._dice))

    def _start_self_test(self, at: float) -> None:
        seconds = self._scaled(SELF_TEST_SECONDS)
        self._testing = True
        self._shift(seconds)  # the cycle waits for the test shake
        self._schedule(at + seconds, "test_done")

    # --- faults --------------------------------------------------------------------------------

    def _fail(self, at: float, code: int, detail: str) -> None:
        """A fault mid-roll: the roll is abandoned (no result ever comes for it) and the game
        waits, closed, for a re-roll once the fault clears."""
        plan = self._plan
        assert plan is not None
        self._cancel("read")
        self._raise_fault(at, code, detail, resume="closed")
        key = "motion_fault" if code == FAULT_MOTION else "reader_fault"
        self._schedule(at + self._scaled(plan.faults[key].number), "clear", code)

    def _lid(self, at: float) -> None:
        plan = self._plan
        if plan is None or self._state != "ready" or not plan.strikes("lid_open"):
            return
        seconds = self._scaled(plan.faults["lid_open"].number)
        self._shift(seconds, _SHIFTED_BY_LID)  # the interlock holds the cycle
        self._raise_fault(at, FAULT_LID, "lid open", resume="ready")
        self._schedule(at + seconds, "clear", FAULT_LID)

    def _raise_fault(self, at: float, code: int, detail: str, *, resume: DiceState) -> None:
        if not self._active:
            self._resume = resume
        if self._raise_code(at, code, detail):
            self._state = "fault"

    def _clear_fault(self, at: float, code: int) -> None:
        if self._clear_code(at, code) and not self._active:
            self._state = self._resume
            if self._state == "closed":
                self._schedule_roll(at)
