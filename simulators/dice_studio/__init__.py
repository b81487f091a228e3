"""A simulated live-studio dice table: the shaker and the camera (vision) service on a broker.

Both speak ``docs/protocols/dice-mqtt.md`` through the production
:class:`tablectl.drivers.dice_mqtt.messages.StudioCodec` with the driver's configurable shapes, so
the two ends cannot drift. Modules: ``shaker``, ``camera``, ``studio`` (both as one I/O-free
model), ``service`` (the model on a broker), ``faults``, ``timeline``. The dice depend only on the
seed and the completed shakes; ``speed`` divides every studio duration, the commanded shake's
too. Faults: ``KIND@SHAKE[=VALUE]`` (:data:`FAULTS`), counting accepted shake commands.
"""

from tablectl.simulators.dice_studio.faults import FAULT_CODES, FAULT_KINDS, FAULTS, FaultSpec
from tablectl.simulators.dice_studio.service import StudioService
from tablectl.simulators.dice_studio.studio import SimDiceStudio

__all__ = ["FAULTS", "FAULT_CODES", "FAULT_KINDS", "FaultSpec", "SimDiceStudio", "StudioService"]
