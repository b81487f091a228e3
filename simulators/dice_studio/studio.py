"""The simulated studio: one shaker and one camera on one broker, as one I/O-free model.

Every wait is a time on a timeline, so it runs the same under a manual clock and on a live broker;
commands are decoded with the production codec, so simulator and driver agree on every shape.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.messages import (
    DetectRequest,
    DetectResult,
    StudioCodec,
    StudioShape,
)
from tablectl.drivers.transports.pubsub import TopicMessage
from tablectl.simulators.dice_studio.camera import DEFAULT_DELAY, SimCamera
from tablectl.simulators.dice_studio.faults import FaultSpec
from tablectl.simulators.dice_studio.shaker import SimShaker
from tablectl.simulators.dice_studio.timeline import Said
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import check_unique, faults_at


class SimDiceStudio:
    """A shaker and a camera service speaking ``shape`` (see the package docstring).

    ``SimulatorError`` for a setting or fault the studio cannot play.
    """

    def __init__(
        self,
        shape: StudioShape | None = None,
        *,
        dice: int = 3,
        seed: int = 0,
        speed: float = 1.0,
        faults: Sequence[FaultSpec] = (),
        camera_delay: float = DEFAULT_DELAY,
    ) -> None:
        if not 1 <= dice <= 6:
            raise SimulatorError(f"dice must be 1-6, not {dice}")
        if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
            raise SimulatorError(f"speed must be between 0.01 and 1000, not {speed}")
        check_unique(faults)
        self.codec = StudioCodec(shape)
        self.shape = self.codec.shape
        self.speed = speed
        self.faults = list(faults)
        self.shaker = SimShaker(
            self.codec, random.Random(seed), dice=dice, speed=speed, faults=self.faults
        )
        self.camera = SimCamera(
            self.codec, self.shaker, speed=speed, faults=self.faults, delay=camera_delay
        )
        self.offline_until: float | None = None
        """While set and in the future, the studio is off the broker (``disconnect``)."""
        self.decode_errors = 0
        """Commands that were not what the shape allows."""
        self.lost = 0
        """Messages said while off the broker (gone, as on a real link)."""
        self.drops = 0
        """Times the studio went off the broker (``disconnect``): the service closes its link
        for each, even when a coarse step finds the studio already back."""
        self._dropped_at: set[int] = set()  # shakes whose disconnect has happened

    @property
    def results(self) -> list[tuple[int, ...]]:
        """The dice each completed shake left, in order."""
        return self.shaker.results

    @property
    def answers(self) -> list[DetectResult]:
        """The camera's answers, in order."""
        return self.camera.answers

    @property
    def topics(self) -> tuple[str, str]:
        """What the studio subscribes to: the shaker's and the camera's command topics."""
        return self.shape.service_topics

    def offline(self, now: float) -> bool:
        """Whether the studio is off the broker at ``now``."""
        return self.offline_until is not None and now < self.offline_until

    @property
    def next_due(self) -> float | None:
        """When :meth:`advance` next has something to do (``None``: nothing is planned)."""
        times = [t for t in (self.shaker.next_due, self.camera.next_due) if t is not None]
        if self.offline_until is not None:
            times.append(self.offline_until)
        return min(times, default=None)

    def receive(self, topic: str, payload: bytes, now: float) -> list[TopicMessage]:
        """A message on one of :attr:`topics`: what the studio says at once."""
        command = self.codec.decode_command(topic, payload)
        if command is None:
            return []
        if isinstance(command, DecodeError):
            self.decode_errors += 1
            return []
        if isinstance(command, DetectRequest):
            return self._send(self.camera.receive(command, now))
        return self._send(self.shaker.receive(command, now))

    def advance(self, now: float) -> list[TopicMessage]:
        """What the studio says by ``now``, in order; what fell due while off the broker is lost.
        Each word counts at its own time, so the result does not depend on the call rate.
        """
        said = sorted(self.shaker.advance(now) + self.camera.advance(now), key=lambda s: s.at)
        out = self._send(said)
        if self.offline_until is not None and now >= self.offline_until:
            self.offline_until = None  # back: the service reconnects
        return out

    def _send(self, said: list[Said]) -> list[TopicMessage]:
        out: list[TopicMessage] = []
        for item in said:
            if self.offline(item.at):
                self.lost += 1
                continue
            out.append(item.message)
            if item.state == "shaking":
                self._maybe_drop(item.at)
        return out

    def _maybe_drop(self, at: float) -> None:
        """Right after the S1 of a ``disconnect`` shake: the host saw the shake start, and loses
        what the studio says until it is back."""
        shake = self.shaker.shakes
        fault = faults_at(self.faults, shake).get("disconnect")
        if fault is not None and shake not in self._dropped_at:
            self._dropped_at.add(shake)
            self.drops += 1
            self.offline_until = at + fault.number / self.speed
