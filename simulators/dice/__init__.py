"""Simulated dice unit (shaker or tower and reader), reference dice protocol
(``docs/protocols/dice.md``): the production codec, I/O-free (STYLE practice 8).

The unit runs its cycle by itself: ``OPEN`` at start; ``CLSD`` after ``betting_seconds`` (or the
host's ``CLOS``, or the button); ``ROLL`` ``roll_delay`` later (or the host's); ``RSLT`` after
``shake_seconds`` + ``settle_seconds`` (seeded or scripted ``faces``; with ``colors``, in the order
the dice came to rest); the next ``OPEN`` ``result_seconds`` later. Status only when polled.
Durations are device seconds divided by ``speed``.

Faults: ``kind@game[=value]`` (:data:`FAULTS`), ``game`` 1-based; roll faults strike the first roll.

- ``cocked[=DIE]``, ``off_table[=DIE]``, ``unreadable[=DIE]``, ``not_at_rest``, ``no_wall``:
  ``NRES`` with ``COCKED``/``OFFTABLE``/``UNREAD``/``MOVING``/``NOWALL`` (detail ``die N``); the
  game stays closed and the dealer re-rolls after ``roll_delay``.
- ``duplicate_result``: ``RSLT`` twice. ``bad_checksum``: ``RSLT`` with a wrong checksum (``LAST``
  gets it).
- ``motion_fault[=s]``: ``FALT;1`` halfway through the shake; the roll is abandoned, the unit
  re-homes ``s`` s later (default 2; sooner on ``CLRF``), ``FCLR;1``, and re-rolls.
  ``reader_fault[=s]``: ``FALT;3`` instead of a result, likewise.
- ``lid_open[=s]``: halfway through betting the lid opens ``s`` s (``FALT;2``/``FCLR;2``); the
  cycle holds; ``CLRF`` is refused (``NAK;CLRF;COND``).
- ``silence[=s]``: from the roll, ``s`` s (default 5) of no output and ignored commands.
- ``garbage``: noise and a bad-checksum frame before ``ROLL``. ``split``: the game's frames in
  1–4 byte pieces.
- ``disconnect[=s]``: at the roll the link drops ``s`` s (default 3); the roll goes on, and the
  host learns what happened from the status (and ``LAST``).
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
