"""What a simulated studio service says, and when.

The studio's models never read a clock and never sleep: they put what they will say on a
:class:`~tablectl.simulators.timeline.Timeline` with the time it is due, and whoever drives them (a
test with any clock, the broker service with the injected one) takes what is due by ``now`` and
waits until the next is. What comes out (:class:`Said`) carries the time it was due, not the time
it was asked for, so what a model says does not depend on how often it is advanced (a coarse step
says the same things at the same times).
"""

from __future__ import annotations

from dataclasses import dataclass

from tablectl.drivers.dice_mqtt.messages import ShakerState
from tablectl.drivers.transports.pubsub import TopicMessage


@dataclass(frozen=True)
class Said:
    """A message a service says ``at`` (studio time); ``state`` when it is a status word."""

    at: float
    message: TopicMessage
    state: ShakerState | None = None
