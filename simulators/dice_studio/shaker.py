"""The simulated dice shaker: status words in answer to commands, and the dice it leaves.

A query gets the current word. A shake while idle gets S2 at once, S1 a moment later and S0 with
new dice after the commanded duration; a command while busy gets the current word and is ignored.
``motion_fault`` aborts halfway (S90) and clears after its value (S0, no new dice).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tablectl.drivers.dice_mqtt.messages import (
    Shake,
    ShakerState,
    ShakerStatus,
    StateQuery,
    StudioCodec,
)
from tablectl.drivers.transports.pubsub import TopicMessage
from tablectl.simulators.dice_studio.faults import FaultSpec
from tablectl.simulators.dice_studio.timeline import Said
from tablectl.simulators.faults import faults_at
from tablectl.simulators.timeline import Timeline

START_DELAY: Final = 0.2
"""Studio seconds from "command received" (S2) to "shaking" (S1)."""
GARBAGE_STATUS: Final = b"S\xff\x00?"
"""What the ``garbage`` fault says on the status topic: not UTF-8, no table's status word."""


@dataclass(frozen=True)
class _Step:
    """Something the shaker will do: say ``state``; ``roll`` first throws new dice."""

    state: ShakerState
    roll: bool = False


class SimShaker:
    """A shaker model driven by passed-in time (see the module docstring); of the faults only
    ``motion_fault`` and ``garbage`` are the shaker's.
    """

    def __init__(
        self,
        codec: StudioCodec,
        rng: random.Random,
        *,
        dice: int,
        speed: float,
        faults: Sequence[FaultSpec] = (),
    ) -> None:
        self.codec = codec
        self.speed = speed
        self.state: ShakerState = "idle"
        self.shakes = 0
        """Shake commands accepted since start (the faults' ``N``)."""
        self.dice_count = dice
        self.results: list[tuple[int, ...]] = []
        """The dice each completed shake left, in order."""
        self._rng = rng
        self._faults = list(faults)
        self._timeline: Timeline[_Step] = Timeline()
        self.dice = self._roll()
        """The dice at rest now (a power-up leaves some dice too)."""

    @property
    def next_due(self) -> float | None:
        return self._timeline.next_at()

    def receive(self, command: StateQuery | Shake, now: float) -> list[Said]:
        """A command from the host: the words said at once."""
        if isinstance(command, Shake) and self.state == "idle":
            return self._start(command, now)
        return [self._say(self.state, now)]

    def advance(self, now: float) -> list[Said]:
        """What the shaker says by ``now``, each at the time it was due."""
        out: list[Said] = []
        for due, step in self._timeline.due(now):
            if step.roll:
                self.dice = self._roll()
                self.results.append(self.dice)
            self.state = step.state
            out.append(self._say(step.state, due))
        return out

    def _start(self, command: Shake, now: float) -> list[Said]:
        self.shakes += 1
        faults = faults_at(self._faults, self.shakes)
        self.state = "accepted"
        out = [self._say("accepted", now)]
        if "garbage" in faults:
            garbage = TopicMessage(self.codec.shape.shaker.status_topic, GARBAGE_STATUS)
            out.append(Said(now, garbage))
        started = now + START_DELAY / self.speed
        self._timeline.add(started, _Step("shaking"))
        duration = command.duration / self.speed
        fault = faults.get("motion_fault")
        if fault is None:
            self._timeline.add(started + duration, _Step("idle", roll=True))
        else:
            halfway = started + duration / 2
            self._timeline.add(halfway, _Step("motion_fault"))
            self._timeline.add(halfway + fault.number / self.speed, _Step("idle"))
        return out

    def _say(self, state: ShakerState, at: float) -> Said:
        status = ShakerStatus(self.codec.status_word(state), state)
        return Said(at, TopicMessage(*self.codec.encode_message(status)), state)

    def _roll(self) -> tuple[int, ...]:
        return tuple(self._rng.randint(1, 6) for _ in range(self.dice_count))
