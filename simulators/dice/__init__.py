"""Simulated dice unit: an I/O-free shaker (or tower) and result reader speaking the tablectl
reference dice protocol (``docs/protocols/dice.md``).

Why a model rather than a replayed capture: the host talks back (``CLOS`` closes betting, ``ROLL``
shakes, ``LAST`` repeats a lost result, ``CLRF`` clears a fault, ``STAT`` polls), and a replay
cannot react. Why I/O-free: the same model runs in-process in unit tests and scenarios (pass any
clock to :meth:`SimDice.advance`) and behind a pty or a TCP port
(:mod:`tablectl.simulators.serve`, ``tablectl simulate dice``). Every byte it sends comes from
:func:`tablectl.drivers.dice.protocol.encode_message` and every host command is parsed by
:class:`tablectl.drivers.dice.protocol.CommandDecoder`, so the simulator cannot drift from the
codec (STYLE practice 8).

Behaviour: the unit runs its table's cycle by itself. Game 1 opens at start (``OPEN``); betting
stays open ``betting_seconds`` (or until the host's ``CLOS`` or the dealer's button), then
``CLSD``; ``roll_delay`` later the dealer shakes (``ROLL``; or the host's ``ROLL``); after
``shake_seconds`` + ``settle_seconds`` the reader reports ``RSLT`` (faces 1–6 from the seeded RNG,
or the scripted ``faces``; with ``colors``, in the order the dice came to rest, colour named), the
result shows ``result_seconds``, and the next game opens. The status is sent only when polled. All
durations are *device seconds*, divided by ``speed``.

Fault scripting: :class:`FaultSpec` (``kind@game[=value]`` on the command line, kinds in
:data:`FAULTS`), where ``game`` counts games since start (1-based). Roll faults strike the game's
first roll:

- ``cocked[=DIE]``, ``off_table[=DIE]``, ``unreadable[=DIE]``, ``not_at_rest``, ``no_wall``: the
  read gives ``NRES`` with ``COCKED``/``OFFTABLE``/``UNREAD``/``MOVING``/``NOWALL`` (detail
  ``die N``); the game stays closed and the dealer re-rolls after ``roll_delay``.
- ``duplicate_result``: the game's ``RSLT`` frame goes out twice.
- ``bad_checksum``: the game's ``RSLT`` frame goes out with a wrong checksum (``LAST`` gets it).
- ``motion_fault[=s]``: halfway through the shake ``FALT;1``; the roll is abandoned; the unit
  re-homes ``s`` seconds later (default 2; the host's ``CLRF`` sooner), ``FCLR;1``, and re-rolls.
- ``reader_fault[=s]``: at the read ``FALT;3`` instead of a result; as ``motion_fault``.
- ``lid_open[=s]``: halfway through betting the lid opens for ``s`` seconds (``FALT;2``/``FCLR;2``);
  the interlock holds the cycle meanwhile; ``CLRF`` is refused (``NAK;CLRF;COND``).
- ``silence[=s]``: from the roll on the unit hangs ``s`` seconds (default 5): no output, commands
  ignored; the cycle resumes afterwards, late by ``s``.
- ``garbage``: line noise and a frame with a bad checksum before ``ROLL``.
- ``split``: every frame of the game goes out in 1–4 byte pieces.
- ``disconnect[=s]``: at the roll the link drops for ``s`` seconds (default 3); the roll goes on,
  so its frames are lost and the host learns what happened from the status (and ``LAST``).

Layout: :mod:`~tablectl.simulators.dice.faults` (the fault table),
:mod:`~tablectl.simulators.dice.model` (the cycle and its schedule),
:mod:`~tablectl.simulators.dice.wire` (the serial line: commands, replies, wire faults).
"""

from tablectl.simulators.dice.faults import FAULT_KINDS, FAULTS, FaultSpec
from tablectl.simulators.dice.model import RollOutcome, SimDice
from tablectl.simulators.dice.wire import FIRMWARE, MODEL, READER

__all__ = [
    "FAULTS",
    "FAULT_KINDS",
    "FIRMWARE",
    "MODEL",
    "READER",
    "FaultSpec",
    "RollOutcome",
    "SimDice",
]
