"""The simulated drum's fault table (see the package docstring), :class:`FaultSpec`, the malformed
frames of its ``garbage`` fault, and the checks on a model's arguments and scripted faults."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from tablectl.drivers.drum.protocol import MAX_BALL, MAX_READERS, FunctionCode, arbitration_id
from tablectl.drivers.transports.frames import CanFrame
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import FaultKinds, ValueRule, check_unique
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec

BALL_KINDS: Final = ("not_read", "double_read", "repeat_frame", "out_of_range")
_BALL: Final = ValueRule.whole("ball index", low=1, default=1, metavar="K")

FAULTS: Final = FaultKinds(
    "draw",
    {
        "not_read": _BALL,
        "double_read": _BALL,
        "repeat_frame": _BALL,
        "out_of_range": _BALL,
        "extra_ball": ValueRule.nothing(),
        "blower_fault": ValueRule.seconds(1.0),
        "reader_silent": ValueRule.seconds(2.0),
        "silence": ValueRule.seconds(2.0),
        "garbage": ValueRule.nothing(),
    },
    examples=("not_read@1", "double_read@2=3", "silence@1=2"),
    counts="draws since start, from 1",
)
"""The drum's fault kinds (see the module docstring); ``K`` is a ball's index in its draw."""
FAULT_KINDS: Final = FAULTS.names


class FaultSpec(BaseFaultSpec):
    """A scripted drum fault (:data:`FAULTS`) for draw number ``at`` (1-based)."""

    KINDS = FAULTS


def garbage_frames(node: int) -> list[CanFrame]:
    """Malformed frames of every kind the decoder must reject (for ``garbage`` and tests)."""
    ball = arbitration_id(FunctionCode.BALL, node + 1)
    return [
        CanFrame(0x000 | node, b"\x01\x00"),  # function code 0 (CANopen NMT): not ours
        CanFrame(ball, b"\x11\x01\x01\x62"),  # ball frame, DLC 4
        CanFrame(arbitration_id(FunctionCode.STATE, node), b"\x83\x00\x07\x00\x00"),  # reserved
        CanFrame(ball, bytes((200, 1, 1, 90, 0))),  # ball 200
        CanFrame(0x1234567, b"\x00", is_extended_id=True),
        CanFrame(arbitration_id(FunctionCode.HEARTBEAT, 1) & ~0x7F, b"\x05\x00\x00\x00\x00"),
        CanFrame(arbitration_id(FunctionCode.HEARTBEAT, node), b"\x42\x00\x00\x00\x00"),
    ]


def check_args(
    *,
    speed: float,
    balls: int,
    first_ball: int,
    draw: int,
    readers: int,
    node_id: int,
    faults: Sequence[FaultSpec],
    durations: dict[str, float],
) -> None:
    if not (math.isfinite(speed) and 0.01 <= speed <= 1000):
        raise SimulatorError(f"speed must be 0.01-1000, not {speed}")
    if first_ball not in (0, 1):
        raise SimulatorError(f"first_ball must be 0 or 1, not {first_ball}")
    if not balls >= 1 or first_ball + balls - 1 > MAX_BALL:
        raise SimulatorError(f"balls must be 1-{MAX_BALL + 1 - first_ball}, not {balls}")
    if not 1 <= readers <= MAX_READERS:
        raise SimulatorError(f"readers must be 1-{MAX_READERS}, not {readers}")
    if not 1 <= node_id <= 0x7F - readers:
        raise SimulatorError(f"node id {node_id} leaves no room for {readers} readers")
    extra = any(f.kind == "extra_ball" for f in faults)
    if not 1 <= draw <= balls - int(extra) or draw > 99:
        raise SimulatorError(f"draw must be 1-{min(balls - int(extra), 99)}, not {draw}")
    for name, value in durations.items():
        if not (math.isfinite(value) and 0 < value <= 3600):
            raise SimulatorError(f"{name} must be > 0 and <= 3600, not {value}")
    check_unique(faults)
    for spec in faults:
        if spec.kind in BALL_KINDS and spec.number > draw:
            raise SimulatorError(f"{spec.kind}@{spec.at}: ball {spec.number:g} > draw {draw}")
        if spec.kind == "out_of_range" and first_ball + balls > MAX_BALL:
            raise SimulatorError(f"out_of_range: ball {first_ball + balls} exceeds the protocol")
