"""Simulated Cammegh Slingshot 2 roulette wheel: the production codec, I/O-free (STYLE practice 8;
see :mod:`tablectl.simulators`).

The host talks back (``*R`` after a misspin, ``*K`` in host-start mode, ``*P 0``). Timing: the
wheel's controller runs a 500 ms loop, simulated in ticks of ``0.5 / speed`` s; state changes land
on ticks and are reported by that tick's status line, so the bare number always comes just before
the first state-5 line, as in the real capture. Sensor events fall between ticks. Durations
(fault values too) are wheel seconds divided by ``speed``; the schedule depends only on ticks and
the seeded RNG, so not on how often :meth:`SimSS2.advance` is called.

Sensor geometry: the project's assumption (``docs/protocols/cammegh-ss2.md``, shared with
``drivers/ss2/interpreter.py``): sensors numbered clockwise, one revolution one pass of sensor 0.
Each simulated revolution ends at sensor 0, so a host counting ``bs 0`` passes after the first
event counts exactly the drawn revolutions. Direction 0 = clockwise; in a good spin the ball runs
against the rotor. Faults: ``kind@game[=value]`` (:data:`FAULTS`); ``game`` counts entries into
state 2, so a misspin's respin is the next game.
"""

from tablectl.simulators.chunks import Chunk  # re-exported: it lived here first
from tablectl.simulators.ss2.faults import FAULT_KINDS, FAULTS, FaultSpec, from_spec
from tablectl.simulators.ss2.model import SimSS2
from tablectl.simulators.ss2.phases import (
    DEFAULT_MODE,
    MODE_AUTO_STATUS,
    MODE_FAULT_REPORTS,
    MODE_HOST_START,
    MODE_NO_BARE_NUMBER,
    MODE_RANDOM_SPEED,
    MODE_REVERSE,
)

__all__ = [
    "DEFAULT_MODE",
    "FAULTS",
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
