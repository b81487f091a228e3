"""A simulated live-studio dice table: the shaker and the camera (vision) service on a broker.

Both services speak the wiring of ``docs/protocols/dice-mqtt.md`` through the production codec
(:class:`tablectl.drivers.dice_mqtt.messages.StudioCodec`, the services' side), with the same
configurable shapes as the ``mqtt-dice`` driver, so the two ends cannot drift apart.

Layout: :mod:`~tablectl.simulators.dice_studio.shaker` (status words, the shake, the dice),
:mod:`~tablectl.simulators.dice_studio.camera` (answers to read requests),
:mod:`~tablectl.simulators.dice_studio.studio` (the two as one I/O-free model, driven by passed-in
time), :mod:`~tablectl.simulators.dice_studio.service` (the model on a real broker, on an injected
clock), :mod:`~tablectl.simulators.dice_studio.faults` (the fault table) and
:mod:`~tablectl.simulators.dice_studio.timeline` (what is planned, when).

Seeded: the dice depend only on the seed and the number of completed shakes. ``speed`` divides
every studio duration, the commanded shake's too. Faults: :class:`FaultSpec`,
``KIND@SHAKE[=VALUE]`` (kinds in :data:`FAULTS`), ``SHAKE`` counting the shake commands the
shaker accepted.
"""

from tablectl.simulators.dice_studio.faults import FAULT_CODES, FAULT_KINDS, FAULTS, FaultSpec
from tablectl.simulators.dice_studio.service import StudioService
from tablectl.simulators.dice_studio.studio import SimDiceStudio

__all__ = ["FAULTS", "FAULT_CODES", "FAULT_KINDS", "FaultSpec", "SimDiceStudio", "StudioService"]
