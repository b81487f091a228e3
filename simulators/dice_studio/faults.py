"""The simulated dice studio's fault table (see the package docstring) and :class:`FaultSpec`.

``N`` counts shake commands the shaker accepted since start (1-based): a camera fault strikes the
reads of the dice that shake ``N`` left.
"""

from __future__ import annotations

from typing import Final

from tablectl.drivers.dice_mqtt.messages import CameraShape
from tablectl.drivers.events import RollInvalidCode
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import FaultKinds, ValueRule
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec

FAULTS: Final = FaultKinds(
    "shake",
    {
        "motion_fault": ValueRule.seconds(3.0, note="S90 mid-shake, S0 after s, default 3"),
        "unreadable": ValueRule.nothing(note="camera err -1, res null"),
        "cocked": ValueRule.nothing(note="camera err for die_cocked"),
        "off_table": ValueRule.nothing(note="camera err for die_off_table"),
        "silence": ValueRule.seconds(30.0, note="camera ignores reads for s, default 30"),
        "duplicate_result": ValueRule.nothing(note="camera answers twice"),
        "garbage": ValueRule.nothing(note="a malformed status word and JSON"),
        "disconnect": ValueRule.seconds(3.0, note="studio off the broker for s, default 3"),
    },
    examples=("unreadable@2", "motion_fault@1=5", "silence@3=20"),
    counts="shakes since start, from 1",
)
"""The studio's fault kinds; ``value`` (studio seconds, divided by ``--speed``) by kind:

- ``motion_fault``: the shaker says S90 halfway through shake N and stays faulted for ``s``
  [3], then says S0 without finishing the shake.
- ``unreadable`` / ``cocked`` / ``off_table``: the camera's answer for shake N's dice carries the
  error number whose stable code is ``dice_unreadable`` / ``die_cocked`` / ``die_off_table`` in
  the shape's error table (defaults -1 / -2 / -4) and ``res: null``.
- ``silence``: the camera ignores read requests for ``s`` [30] from the first one of shake N.
- ``duplicate_result``: every answer for shake N is sent twice.
- ``garbage``: with shake N's S2 the shaker also says a word no table knows, and before its
  answer the camera sends a truncated JSON document.
- ``disconnect``: when shake N starts (S1) the studio drops its broker connection for ``s`` [3];
  what it says meanwhile (the S0) is lost.
"""
FAULT_KINDS: Final = FAULTS.names

FAULT_CODES: Final[dict[str, RollInvalidCode]] = {
    "unreadable": "dice_unreadable",
    "cocked": "die_cocked",
    "off_table": "die_off_table",
}
"""The camera faults and the stable code the driver reports for each."""


class FaultSpec(BaseFaultSpec):
    """A scripted studio fault (:data:`FAULTS`) for shake number ``at`` (1-based)."""

    KINDS = FAULTS


def camera_error(camera: CameraShape, kind: str) -> int:
    """The ``err`` a camera fault sends: the shape's number for its code (``SimulatorError`` if
    none).
    """
    code = FAULT_CODES[kind]
    numbers = sorted((n for n, c in camera.errors.items() if c == code), reverse=True)
    if not numbers:
        if code == "dice_unreadable":
            # Any number the table does not map reads as dice_unreadable on the host.
            number = -1
            while number in camera.errors:
                number -= 1
            return number
        raise SimulatorError(f"fault {kind}: the camera's error table has no number for {code}")
    return numbers[0]
