"""The simulated camera (vision) service: it answers read requests with the shaker's dice.

Each answer comes ``delay`` studio seconds later with the request's round id, the dice and ``err``
0, unless a fault of that shake says otherwise: ``unreadable``, ``cocked``, ``off_table``
(``res: null`` and the shape's error number), ``silence``, ``duplicate_result`` (two answers),
``garbage`` (a truncated JSON document first).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from tablectl.drivers.dice_mqtt.messages import DetectRequest, DetectResult, StudioCodec
from tablectl.drivers.transports.pubsub import TopicMessage
from tablectl.simulators.dice_studio.faults import FAULT_CODES, FaultSpec, camera_error
from tablectl.simulators.dice_studio.shaker import SimShaker
from tablectl.simulators.dice_studio.timeline import Said
from tablectl.simulators.faults import faults_at
from tablectl.simulators.timeline import Timeline

DEFAULT_DELAY: Final = 0.3
"""Studio seconds from a request to its answer."""
DUPLICATE_GAP: Final = 0.05
"""Studio seconds between the two answers of ``duplicate_result``."""
GARBAGE_RESULT: Final = b'{"response":"result","arg":{"round_id":'
"""What the ``garbage`` fault sends before the answer: a JSON document cut short."""


class SimCamera:
    """A camera service model driven by passed-in time (see the module docstring)."""

    def __init__(
        self,
        codec: StudioCodec,
        shaker: SimShaker,
        *,
        speed: float,
        faults: Sequence[FaultSpec] = (),
        delay: float = DEFAULT_DELAY,
    ) -> None:
        self.codec = codec
        self.shaker = shaker
        self.speed = speed
        self.delay = delay
        self.answers: list[DetectResult] = []
        """Every answer sent (a duplicate twice), in order."""
        self.ignored = 0
        """Requests not answered (``silence``)."""
        self.silent_until: float | None = None
        self._faults = list(faults)
        self._silenced: set[int] = set()  # shakes whose silence has started
        for spec in self._faults:
            if spec.kind in FAULT_CODES:
                camera_error(codec.shape.camera, spec.kind)  # unplayable: fail at construction
        self._timeline: Timeline[TopicMessage] = Timeline()

    @property
    def next_due(self) -> float | None:
        return self._timeline.next_at()

    def receive(self, request: DetectRequest, now: float) -> list[Said]:
        """A read request: nothing is said at once; the answer is planned."""
        shake = self.shaker.shakes
        faults = faults_at(self._faults, shake)
        silence = faults.get("silence")
        if silence is not None and shake not in self._silenced:
            self._silenced.add(shake)
            self.silent_until = now + silence.number / self.speed
        if self.silent_until is not None and now < self.silent_until:
            self.ignored += 1
            return []
        error_kind = next((kind for kind in FAULT_CODES if kind in faults), None)
        if error_kind is None:
            answer = DetectResult(request.round_id, self.shaker.dice, 0)
        else:
            number = camera_error(self.codec.shape.camera, error_kind)
            answer = DetectResult(request.round_id, None, number)
        due = now + self.delay / self.speed
        if "garbage" in faults:
            self._timeline.add(
                due, TopicMessage(self.codec.shape.camera.result_topic, GARBAGE_RESULT)
            )
        self._plan(answer, due)
        if "duplicate_result" in faults:
            self._plan(answer, due + DUPLICATE_GAP / self.speed)
        return []

    def advance(self, now: float) -> list[Said]:
        """What the camera says by ``now``, each at the time it was due."""
        return [Said(due, message) for due, message in self._timeline.due(now)]

    def _plan(self, answer: DetectResult, due: float) -> None:
        topic, payload = self.codec.encode_message(answer)
        self.answers.append(answer)
        self._timeline.add(due, TopicMessage(topic, payload))
