"""The simulated shuffler's mechanism: shuffles, the door, faults and their schedule. What it says
on the line is its :class:`~tablectl.simulators.shuffler.wire.HostPort`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from tablectl.drivers.shuffler.protocol import (
    FAULT_JAM,
    FAULT_MEANINGS,
    MAX_DECKS,
    MAX_NUMBER,
    ClearFault,
    CommandDecoder,
    Door,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShuffleDone,
    ShufflerState,
    ShuffleStart,
    StartShuffle,
    Status,
    encode_message,
)
from tablectl.simulators.chunks import Chunk
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import check_unique, faults_at
from tablectl.simulators.shuffler.faults import FaultSpec
from tablectl.simulators.shuffler.wire import HostPort
from tablectl.simulators.stx_port import CommandHandler, line_noise

_SELF_CLEARING: Final = frozenset({4, 5, 8})
_SELF_CLEAR_SECONDS: Final = 2.0
_DOOR_CLOSE_AFTER_JAM: Final = 1.0


@dataclass(frozen=True)
class ShuffleResult:
    """What one completed shuffle reported (for tests and the CLI's ``--shuffles``)."""

    shuffle: int
    cards: int
    missing: tuple[str, ...]
    extra: tuple[str, ...]


@dataclass
class ShufflePlan:
    """One shuffle as started: its wire number, the decks it shuffles, its scripted faults."""

    number: int
    decks: int
    faults: dict[str, FaultSpec]
    fired: set[str] = field(default_factory=set)

    def has(self, kind: str) -> bool:
        return kind in self.faults


class SimShuffler(HostPort[ShuffleResult]):
    """The simulated shuffler. Feed it time and host bytes; it returns shuffler bytes.

    ``shuffle_seconds`` defaults to 2 + 1 per deck. ``auto``: the dealer presses start this many
    device seconds after idle or ready (``None``: only ``SHUF``). ``reads_faces`` False: no card
    reader (deck checks report ``?``). ``ValueError`` for an argument out of range or two faults of
    one kind for one shuffle.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        speed: float = 1.0,
        decks: int = 8,
        faults: Sequence[FaultSpec] = (),
        shuffle_seconds: float | None = None,
        auto: float | None = None,
        reads_faces: bool = True,
    ) -> None:
        if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
            raise SimulatorError(f"speed must be 0.01-1000, not {speed}")
        if not 1 <= decks <= MAX_DECKS:
            raise SimulatorError(f"decks must be 1-{MAX_DECKS}, not {decks}")
        if shuffle_seconds is not None and not (
            math.isfinite(shuffle_seconds) and 0 < shuffle_seconds <= 3600
        ):
            raise SimulatorError(f"shuffle_seconds must be > 0 and <= 3600, not {shuffle_seconds}")
        if auto is not None and not (math.isfinite(auto) and 0 < auto <= 3600):
            raise SimulatorError(f"auto must be > 0 and <= 3600 seconds, not {auto}")
        check_unique(faults)
        for spec in faults:
            if spec.kind == "wrong_count" and spec.value == decks * 52:
                raise SimulatorError(f"wrong_count@{spec.at}: {spec.value} is the right count")
        self._rng = random.Random(seed)
        self._start_timeline(speed, 0)
        self._decks = decks
        self._faults = tuple(faults)
        self._shuffle_seconds = shuffle_seconds if shuffle_seconds is not None else 2.0 + decks
        self._auto = auto
        self._reads_faces = reads_faces
        self._serial = f"SIM{seed % 100000:05d}"

        self._decoder = CommandDecoder()

        self._state: ShufflerState = "idle"
        self._door_open = False
        self._cards = decks * 52
        self._missing: tuple[str, ...] = ()
        self._extra: tuple[str, ...] = ()
        self._active: dict[int, str] = {}
        self._jam_door_cycled = True
        self._number = 0
        self._shuffles = 0
        self._current: ShufflePlan | None = None
        self._wire: ShufflePlan | None = None  # whose wire faults (split) apply to output now
        self._paused_until: float | None = None
        self._silent_until = -math.inf
        self._handlers: dict[type, CommandHandler] = {
            StartShuffle: self._cmd_shuffle,
            QueryStatus: self._cmd_status,
            QueryVersion: self._cmd_version,
            ClearFault: self._cmd_clear,
            RequestDeckCheck: self._cmd_deck_check,
        }

    # --- observation ---------------------------------------------------------------------------

    @property
    def state(self) -> ShufflerState:
        return self._state

    @property
    def door_open(self) -> bool:
        return self._door_open

    @property
    def shuffles_started(self) -> int:
        """Shuffles started since the model was created."""
        return self._shuffles

    def status(self) -> Status:
        """The status the shuffler would report now."""
        return Status(
            self._state,
            self._door_open,
            self._cards,
            tuple(sorted(self._active)),
            self._number,
        )

    # --- the start button ----------------------------------------------------------------------

    def press_start(self, now: float) -> bool:
        """The dealer's start button: shuffle the loaded decks if the shuffler can."""
        self._run_until(now)
        return self._refusal() is None and self._begin(self._decks, now)

    # --- the schedule --------------------------------------------------------------------------

    def _on_start(self, now: float) -> None:
        self._schedule_auto(now)

    def _schedule_auto(self, now: float) -> None:
        if self._auto is not None:
            self._cancel("auto")
            self._schedule(now + self._scaled(self._auto), "auto")

    def _on_event(self, at: float, kind: str, arg: int) -> None:
        match kind:
            case "auto":
                if self._state in ("idle", "ready") and self._refusal() is None:
                    self._begin(self._decks, at)
            case "midway":
                self._midway(at)
            case "door_midway":
                self._door_midway(at)
            case "done":
                self._done(at)
            case "door_open":
                self._set_door(at, is_open=True)
            case "door_close":
                self._set_door(at, is_open=False)
                if FAULT_JAM in self._active:
                    self._jam_door_cycled = True
            case "self_clear":
                self._clear_fault(at, arg)
            case _:  # pragma: no cover - every kind is scheduled above
                pass

    def _stall(self, t: float, seconds: float) -> None:
        """``silence``: the controller hangs; everything still to come moves ``seconds`` later."""
        self._shift(seconds)
        self._silent_until = t + seconds

    # --- shuffles ------------------------------------------------------------------------------

    def _refusal(self) -> str | None:
        if self._state == "shuffling":
            return "BUSY"
        if self._door_open:
            return "DOOR"
        if self._active:
            return "FAULT"
        return None

    def _begin(self, decks: int, now: float) -> bool:
        self._shuffles += 1
        self._number = self._number % MAX_NUMBER + 1
        faults = faults_at(self._faults, self._shuffles)
        shuffle = self._current = self._wire = ShufflePlan(self._number, decks, faults)
        self._state = "shuffling"
        self._cards = self._decks * 52
        self._cancel("auto")
        if shuffle.has("garbage"):
            self._outbox.append(Chunk(now, line_noise(self._rng)))
            bad = bytearray(encode_message(self.status()))
            bad[-4] = ord("0") if bad[-4] != ord("0") else ord("1")  # break the checksum
            self._outbox.append(Chunk(now, bytes(bad)))
        self._emit(now, ShuffleStart(shuffle.number, decks))
        duration = self._scaled(self._shuffle_seconds) * self._rng.uniform(0.95, 1.05)
        if shuffle.has("jam") or shuffle.has("fault"):
            self._schedule(now + duration / 2, "midway")
        if shuffle.has("door_open"):
            self._schedule(now + duration / 3, "door_midway")
        self._schedule(now + duration, "done")
        if shuffle.has("silence"):
            self._stall(now, self._scaled(shuffle.faults["silence"].number))
        if shuffle.has("disconnect"):
            down = self._scaled(shuffle.faults["disconnect"].number)
            self._link_down = (now, now + down)
        return True

    def _midway(self, at: float) -> None:
        shuffle = self._current
        if shuffle is None or self._state != "shuffling":
            return
        self._cancel("done")
        self._cancel("door_midway")
        self._current = None
        self._state = "fault"
        if shuffle.has("jam"):
            self._jam_door_cycled = False
            self._raise_code(at, FAULT_JAM, "card jam in the mixing elevator")
            opens = at + self._scaled(shuffle.faults["jam"].number)
            self._schedule(opens, "door_open")
            self._schedule(opens + self._scaled(_DOOR_CLOSE_AFTER_JAM), "door_close")
        if shuffle.has("fault"):
            code = int(shuffle.faults["fault"].number)
            self._raise_code(at, code, FAULT_MEANINGS.get(code, "simulated fault"))
            if code in _SELF_CLEARING:
                self._schedule(at + self._scaled(_SELF_CLEAR_SECONDS), "self_clear", code)

    def _door_midway(self, at: float) -> None:
        shuffle = self._current
        if shuffle is None or self._state != "shuffling":
            return
        seconds = self._scaled(shuffle.faults["door_open"].number)
        # The interlock stops the mechanism: the rest of the shuffle waits for the door.
        self._shift(seconds, ("done",))
        self._set_door(at, is_open=True)
        self._schedule(at + seconds, "door_close")

    def _done(self, at: float) -> None:
        shuffle = self._current
        if shuffle is None:
            return
        self._current = None
        full = self._decks * 52
        missing: tuple[str, ...] = ()
        extra: tuple[str, ...] = ()
        cards = full
        if shuffle.has("missing_card"):
            missing = shuffle.faults["missing_card"].codes
            cards -= len(missing)
        if shuffle.has("extra_card"):
            extra = shuffle.faults["extra_card"].codes
            cards += len(extra)
        if shuffle.has("wrong_count"):
            spec = shuffle.faults["wrong_count"]
            cards = int(spec.number) if spec.value is not None else full - 1
            missing = extra = ()
        self._cards, self._missing, self._extra = cards, missing, extra
        self._state = "ready"
        checked = self._reads_faces and 3 not in self._active
        self._emit(
            at,
            ShuffleDone(
                shuffle.number,
                cards,
                missing if checked else (),
                extra if checked else (),
                checked,
            ),
        )
        self._results.append(ShuffleResult(shuffle.number, cards, missing, extra))
        self._schedule_auto(at)

    # --- door and faults -----------------------------------------------------------------------

    def _set_door(self, at: float, *, is_open: bool) -> None:
        if self._door_open == is_open:
            return
        self._door_open = is_open
        self._emit(at, Door(is_open))

    def _clear_fault(self, at: float, code: int) -> None:
        if self._clear_code(at, code) and not self._active and self._state == "fault":
            self._state = "idle"
            self._schedule_auto(at)
