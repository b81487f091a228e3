"""The simulated big wheel's fault table, :class:`FaultSpec`, its ``garbage`` noise and the checks
on a model's arguments, apart from the physics so the CLI and scenarios parse faults without a
wheel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from tablectl.drivers.bigwheel.protocol import (
    FAULT_MEANINGS,
    MAX_REVOLUTIONS,
    MAX_SEGMENTS,
    MIN_SEGMENTS,
)
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import FaultKinds, ValueRule, check_unique
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec

FAULTS: Final = FaultKinds(
    "spin",
    {
        "short_spin": ValueRule.whole(
            "revolutions", low=1, high=100, default=2, read="float", metavar="turns"
        ),
        "divider": ValueRule.nothing(),
        "wrong_direction": ValueRule.nothing(),
        "sensor_fault": ValueRule.code(
            r"[A-Z]{3}",
            f"3 capitals ({', '.join(FAULT_MEANINGS)})",
            default="IDX",
            metavar="|".join(FAULT_MEANINGS),
        ),
        "garbage": ValueRule.nothing(),
        "split": ValueRule.nothing(),
        "silence": ValueRule.seconds(5.0),
        "disconnect": ValueRule.seconds(3.0),
    },
    examples=("short_spin@2=2", "divider@3"),
    counts="spins since start, from 1",
)
"""The wheel's fault kinds; ``value`` by kind (default in brackets):

- ``short_spin``: full revolutions, 1–100 [2].
- ``sensor_fault``: the wire fault code, three capital letters (``IDX``, ``ENC``, ``PTR``,
  ``MOT``) [IDX]; raised 1 s into the spin, cleared by the wheel 2 s after it stops.
- ``silence``: wheel seconds without output, from 1 s into the spin [5].
- ``disconnect``: wheel seconds with the link down, from 1 s into the spin [3].
- ``divider``, ``wrong_direction``, ``garbage``, ``split``: no value.
"""
FAULT_KINDS: Final = FAULTS.names


class FaultSpec(BaseFaultSpec):
    """A scripted fault (:data:`FAULTS`) for spin number ``at`` (1-based count of spins since
    start)."""

    KINDS = FAULTS


from_spec = FaultSpec.from_spec
"""Module-level alias of :meth:`FaultSpec.from_spec` (used by the CLI and the demo)."""


def check_arguments(
    *,
    speed: float,
    segments: int,
    stops: Sequence[int],
    every: float,
    faults: Sequence[FaultSpec],
    revolutions: tuple[int, int],
    spins: int | None,
) -> None:
    """Reject arguments a real wheel could not have, before any state is built."""
    if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
        raise SimulatorError(f"speed must be between 0.01 and 1000, not {speed}")
    if not MIN_SEGMENTS <= segments <= MAX_SEGMENTS:
        raise SimulatorError(f"segments must be {MIN_SEGMENTS}-{MAX_SEGMENTS}, not {segments}")
    for stop in stops:
        if isinstance(stop, bool) or not isinstance(stop, int) or not 0 <= stop < segments:
            raise SimulatorError(f"stop {stop!r} is not a segment index 0-{segments - 1}")
    if not (math.isfinite(every) and 0.1 <= every <= 3600):
        raise SimulatorError(f"every must be 0.1-3600 wheel seconds, not {every}")
    low, high = revolutions
    if not 1 <= low <= high <= MAX_REVOLUTIONS:
        raise SimulatorError(
            f"revolutions must be (low, high) with 1 <= low <= high: {revolutions}"
        )
    if spins is not None and spins < 0:
        raise SimulatorError(f"spins must be >= 0, not {spins}")
    check_unique(faults)
