"""Simulated big money wheel sensor: the production codec, I/O-free (STYLE practice 8; see
:mod:`tablectl.simulators`).

Physics. A spin is planned when it starts: direction (clockwise unless ``wrong_direction``), full
revolutions (seeded, or ``short_spin``'s), the stop segment (scripted ``stops``, then seeded) and
the rest point inside it (never within 15 % of a pin, unless ``divider`` puts it on the pin after
the segment). From 0.45–0.6 rev/s the wheel decelerates uniformly through exactly that angle, so
the ``REV`` periods are the true kinematic ones. Indices increase clockwise from the reference
mark; a clockwise wheel brings lower indices under the fixed pointer.

Time. Durations are wheel seconds divided by ``speed`` (heartbeat, spin, the rest ``every``, fault
values); ``REV`` periods are wheel milliseconds whatever the speed. The seeded RNG is drawn in
spin order, so output does not depend on how often :meth:`SimBigWheel.advance` is called.
Faults: ``kind@spin[=value]`` (:data:`FAULTS`), ``spin`` 1-based, the wire's spin number until it
wraps at 9999.
"""

from tablectl.simulators.bigwheel.faults import FAULT_KINDS, FAULTS, FaultSpec, from_spec
from tablectl.simulators.bigwheel.model import SimBigWheel, SpinResult

__all__ = ["FAULTS", "FAULT_KINDS", "FaultSpec", "SimBigWheel", "SpinResult", "from_spec"]
