"""Simulated lotto/keno ball drum on CAN: an I/O-free model plus a runner over any frame link.

:class:`SimDrum` runs with a scripted clock, on python-can's ``virtual`` bus (:func:`run_sim_drum`
with a :class:`~tablectl.drivers.transports.can.CanLink`) or any interface; frames go through
the production codec (STYLE practice 8).

A controller (``node_id``) and ``readers`` (``node_id + r``) heartbeat every 200 ms (protocol
time, never scaled); the controller sends its state on change and every second. ``RELEASE_BALL``
opens the gate; a travel time later reader 1 reads the ball at the receiver's mouth; at ``draw``
balls the tube is full and releases are refused until ``RETURN_BALLS``. Balls are drawn without
replacement by a seeded RNG. ``auto`` cycles: mix, release every ``ball_interval``, stop when
full, hold, return, idle; mechanical durations are drum seconds divided by ``speed``.

Faults: ``KIND@DRAW[=VALUE]`` (:data:`FAULTS`); a draw begins when mixing starts, or a ball is
released, with an empty receiver.

- ``not_read[=K]``: the K-th ball (default 1) passes unread; the tube count still goes up.
- ``double_read[=K]``: its frame, the identical frame again, then a second read at the same
  position with a new sequence counter (reader 2 when there is one); a correct host reports one.
- ``repeat_frame[=K]``: only the identical repeat. ``out_of_range[=K]``: reads ``first_ball +
  balls``.
- ``extra_ball``: after tube full, one more ball slips through (position ``draw + 1``).
- ``blower_fault[=S]``: 0.3 drum s into mixing, S drum s (default 1) of blower fault (mixing and
  air off, releases refused), then it clears and mixing resumes.
- ``reader_silent[=S]``: the last reader stops heartbeating and reading S s (default 2); releases
  are refused meanwhile. ``silence[=S]``: the whole drum quiet S s (default 2), commands ignored.
- ``garbage``: malformed frames (unknown function, wrong DLC, reserved bits, ball 200, a 29-bit
  id, node 0, an unknown node state).
"""

from tablectl.simulators.drum.faults import FAULT_KINDS, FAULTS, FaultSpec, garbage_frames
from tablectl.simulators.drum.model import (
    BLOWER_DETAIL,
    BLOWER_FAULT_AFTER,
    TRAVEL_SECONDS,
    DrawResult,
    SimDrum,
)
from tablectl.simulators.drum.runner import run_sim_drum

__all__ = [
    "BLOWER_DETAIL",
    "BLOWER_FAULT_AFTER",
    "FAULTS",
    "FAULT_KINDS",
    "TRAVEL_SECONDS",
    "DrawResult",
    "FaultSpec",
    "SimDrum",
    "garbage_frames",
    "run_sim_drum",
]
