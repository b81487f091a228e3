"""The simulated SS2's vocabulary: operating modes, phase lengths in ticks, the phases, one game's
plan, and the pure helpers the model and its host port share (argument checks, scripted numbers,
line noise, the chi-square percentile)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Final

from tablectl.drivers.ss2.protocol import Message, Number
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import check_unique
from tablectl.simulators.ss2.faults import FaultSpec

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
BOOT_TICKS: Final = 2
IDLE_TICKS: Final = 4
BETS_TICKS: Final = 16
RIM_TICKS: Final = 14
NO_MORE_TICKS: Final = 10
RESULT_TICKS: Final = 4
MISSPIN_RESTART_TICKS: Final = 20  # the wheel restarts itself 10 s after an unacknowledged misspin
NO_BALL_STOP_TICKS: Final = 150  # the guide: "the wheel stops by itself after 75 s"
MID_GAME_TICK: Final = 2  # mid-game faults fire 1 s into state 3, when bets are still open
SELF_TEST_SECONDS: Final = 3.0
STALE_LIMIT: Final = 1 << 22  # bytes (~40 h of status lines) not collected by advance(): a cap
# so that a caller who only ever calls receive() does not grow memory without bound

RPM_MIN: Final = 140
RPM_MAX: Final = 175


class Phase(Enum):
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


HandlerReply = list[Message] | bytes | None
"""What a command handler returns: messages to encode, raw bytes, or None (ignored command)."""

GAME_PHASES: Final = frozenset({Phase.BETS, Phase.RIM, Phase.NO_MORE, Phase.RESULT})


@dataclass
class GamePlan:
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
        return self.faults[kind].number


def check_arguments(
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
        raise SimulatorError(f"speed must be between 0.01 and 1000, not {speed}")
    if not 0 <= mode <= 0xFFFF:
        raise SimulatorError(f"mode must be a 16-bit sum, not {mode}")
    if pockets not in (37, 38):
        raise SimulatorError(f"pockets must be 37 or 38, not {pockets}")
    low, high = revolutions
    if not 1 <= low <= high <= 100:
        raise SimulatorError(
            f"revolutions must be (low, high) with 1 <= low <= high, not {revolutions}"
        )
    if not 1 <= spin <= 256:
        raise SimulatorError(f"spin must be 1-256, not {spin}")
    check_unique(faults)


def to_number(value: int | str, pockets: int) -> Number:
    """A scripted result as the wheel's number type; ``ValueError`` if the wheel has no such."""
    if isinstance(value, str):
        text = value.strip()
        if text == "00":
            if pockets != 38:
                raise SimulatorError("number '00' needs pockets=38")
            return "00"
        if not text.isdigit():
            raise SimulatorError(f"not a roulette number: {value!r}")
        value = int(text)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 36:
        raise SimulatorError(f"not a roulette number: {value!r} (0-36, or '00' with pockets=38)")
    return value


def next_pocket(number: Number) -> int:
    """The default wrong number of a ``result_mismatch``: the next pocket up, 36 → 0."""
    return 1 if number == "00" else (number + 1) % 37


def chi2_cdf(x: float, dof: int) -> float:
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
