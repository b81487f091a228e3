"""What a simulated studio service says, and when.

Models put words on a :class:`~tablectl.simulators.timeline.Timeline`; :class:`Said` carries the
time it was due, not asked for, so a coarse step says the same things at the same times.
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
