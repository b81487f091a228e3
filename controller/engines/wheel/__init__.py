"""The money-wheel round engine: :class:`WheelEngine` (:mod:`.engine`) on the strict machine of
:mod:`.machine`, around the pure rules of :mod:`tablectl.controller.games.wheel`
(``docs/games/wheels.md``)."""

from __future__ import annotations

from tablectl.controller.engines.wheel.engine import WheelEngine
from tablectl.controller.engines.wheel.machine import (
    DICE_WITHOUT_BONUS,
    RESPIN,
    SEGMENT_OUT_OF_RANGE,
    VOID_RESULT_BEFORE_BETS_CLOSED,
)
from tablectl.controller.games.rng import RNG_MISSING

__all__ = [
    "DICE_WITHOUT_BONUS",
    "RESPIN",
    "RNG_MISSING",
    "SEGMENT_OUT_OF_RANGE",
    "VOID_RESULT_BEFORE_BETS_CLOSED",
    "WheelEngine",
]
