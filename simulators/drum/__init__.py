"""Simulated lotto/keno ball drum on CAN: an I/O-free model plus a runner over any frame link.

Why a model rather than a replayed capture: the host talks back (start mixing, release a ball,
return the balls), and a replay cannot react. Why I/O-free: the same :class:`SimDrum` runs in unit
tests with a scripted clock, over python-can's ``virtual`` bus in-process (:func:`run_sim_drum` with
a :class:`~tablectl.drivers.transports.can.CanLink`), and behind any other python-can interface for
benches. Every frame it sends comes from :func:`tablectl.drivers.drum.protocol.encode_message` and
every host frame is parsed by :func:`tablectl.drivers.drum.protocol.decode`, so the simulator cannot
drift from the codec (STYLE practice 8).

The drum. A controller (node ``node_id``) and ``readers`` readers (nodes ``node_id + r``) each
heartbeat every 200 ms (protocol time: never scaled by ``speed``); the controller sends its state
on every change and every second. A draw: mixing starts (host ``START_MIXING`` or the automatic
cycle), each ``RELEASE_BALL`` opens the gate, and a travel time later the ball passes the reader
at the receiver's mouth (a ball frame from reader 1 with the next position) and lands in the
receiver; with ``draw`` balls in it the drum reports the tube full and refuses releases until
``RETURN_BALLS`` empties it. Balls are drawn without replacement from
``first_ball .. first_ball + balls - 1`` by a seeded RNG: the same seed, faults and command timing
give the same frames.

Automatic cycle (``auto=True``, the CLI's default): mix ``mix_seconds``, release a ball every
``ball_interval``, stop mixing when the tube is full, hold ``hold_seconds``, return the balls,
wait ``idle_seconds``, repeat. Mechanical durations are *drum seconds*, divided by ``speed``.

Fault scripting: :class:`FaultSpec` (``KIND@DRAW[=VALUE]`` on the command line, kinds in
:data:`FAULTS`). ``DRAW`` counts
draws from 1 (a draw begins when mixing starts, or a ball is released, with an empty receiver):

- ``not_read[=K]``: the K-th ball of the draw (default 1) passes unread: no ball frame, but the
  tube count goes up.
- ``double_read[=K]``: the K-th ball is read twice: its frame, the identical frame again (a
  repeated frame, same sequence counter) and then a second read of the same ball at the same
  position with a new sequence counter (by reader 2 when there is one). A correct host reports
  one ball.
- ``repeat_frame[=K]``: only the identical repeat of the K-th ball's frame.
- ``out_of_range[=K]``: the K-th ball reads as ``first_ball + balls`` (one past the top).
- ``extra_ball``: after the tube reported full, one more ball slips through the gate (position
  ``draw + 1``): the receiver holds one ball more than the draw needs.
- ``blower_fault[=S]``: 0.3 drum s after mixing starts the blower faults (fault frame, mixing and
  air off) for S drum s (default 1); releases are refused meanwhile, then the fault clears and
  mixing resumes.
- ``reader_silent[=S]``: at the draw's start the last reader stops heartbeating (and reading) for
  S drum s (default 2); the controller refuses releases meanwhile.
- ``silence[=S]``: at the draw's start the whole drum goes quiet for S drum s (default 2): no
  frames, commands ignored (the host should report it unavailable, then available again).
- ``garbage``: at the draw's start, a burst of malformed frames (unknown function code, wrong
  DLC, reserved bits, ball 200, a 29-bit id, node 0, an unknown node state).
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
