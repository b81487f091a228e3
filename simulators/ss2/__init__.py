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

Fault scripting: :class:`FaultSpec` (``kind@game[=value]`` on the command line, kinds in
:data:`FAULTS`). ``game`` counts entries into state 2 since start, so a misspin's respin is the next
game number.
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
