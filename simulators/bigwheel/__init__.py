"""Simulated big money wheel sensor: an I/O-free device model driven by passed-in time.

Every byte it sends comes from :func:`tablectl.drivers.bigwheel.protocol.encode_message` and every
host command is parsed by :class:`tablectl.drivers.bigwheel.protocol.CommandDecoder`, so the
simulator cannot drift from the production codec (STYLE practice 8). The same model runs in-process
in tests (call :meth:`SimBigWheel.advance` with any clock), behind a pty or a TCP port
(:mod:`tablectl.simulators.serve`), and in the demo, with byte-identical output for the same seed,
script and command timing.

Physics. A spin is planned when it starts: the direction (clockwise unless ``wrong_direction``),
the full revolutions (seeded in ``revolutions``, or ``short_spin``'s value), the stop segment
(scripted ``stops`` in order, then seeded) and where inside it the pointer comes to rest (never
within 15 % of a pin, unless ``divider`` puts it exactly on the pin after the segment). From an
initial speed of 0.45–0.6 rev/s the wheel decelerates uniformly through exactly that angle, so
the revolution ticks come slower and slower and their periods are the true kinematic ones.
Segment indices increase clockwise around the face, index 0 starting at the reference mark; a
clockwise-turning wheel brings lower indices under the fixed pointer.

Time. All durations are *wheel seconds*, divided by ``speed``: the 1 s heartbeat, the spin, the
rest ``every`` between a stop and the next start (also from power-up to the first spin), and
fault values. The schedule depends only on the seeded RNG, drawn in spin order, so the output does
not depend on how often :meth:`SimBigWheel.advance` is called. Periods in ``REV`` are wheel
milliseconds (what the sensor measures), whatever the speed.

Faults: :class:`FaultSpec`, ``kind@spin[=value]`` on the command line (kinds in :data:`FAULTS`);
``spin`` counts spins since start (1-based, the same as the wire's spin number until it wraps
at 9999).

Layout, as for the other simulated devices: :mod:`~tablectl.simulators.bigwheel.faults` (the fault
table, the argument checks) and :mod:`~tablectl.simulators.bigwheel.model` (the sensor itself).
"""

from tablectl.simulators.bigwheel.faults import FAULT_KINDS, FAULTS, FaultSpec, from_spec
from tablectl.simulators.bigwheel.model import SimBigWheel, SpinResult

__all__ = ["FAULTS", "FAULT_KINDS", "FaultSpec", "SimBigWheel", "SpinResult", "from_spec"]
