"""Simulated card shuffler, tablectl reference protocol: the production codec, I/O-free
(STYLE practice 8; see :mod:`tablectl.simulators`).

Also behind simulated USB bulk endpoints (:class:`SimShufflerUsb`). ``SHUF`` (or the button,
``auto``) gives ``ACK;SHUF`` and ``SHST``; ``shuffle_seconds`` later ``SHDN`` with the count and
the deck check, and ``READY`` (the next ``SHUF`` reloads the discards). Status only when polled;
durations are device seconds divided by ``speed``.

Faults: ``kind@shuffle[=value]`` (:data:`FAULTS`), shuffles 1-based:

- ``jam``: ``FALT;1`` halfway, the shuffle abandoned; the door opens ``value`` s later (default
  1) and closes 1 s after; until then ``CLRF`` gets ``NAK;CLRF;COND``, then ``ACK`` + ``FCLR;1``.
- ``wrong_count``: ``SHDN`` reports ``value`` cards (default decks × 52 − 1), lists empty.
- ``missing_card`` / ``extra_card``: the check lists ``value`` (default ``QS`` / ``AH``;
  ``QS,KH`` for several) and the count moves by as many.
- ``door_open``: a third of the way, the door opens ``value`` s (default 2); the shuffle pauses,
  then completes.
- ``fault``: ``FALT;<value>`` (default 2) halfway, abandoned; codes 4, 5, 8 clear by themselves
  2 s later, 7 never (``NAK;CLRF;COND``), the rest on ``CLRF``.
- ``garbage``: noise and a bad-checksum frame before ``SHST``. ``split``: frames in 1–4 byte
  pieces.
- ``silence`` / ``disconnect``: after ``SHST``, ``value`` s (default 3) of no output / no link;
  the shuffle goes on, so after a disconnect the host learns the result from the status.
"""

from tablectl.simulators.shuffler.faults import FAULT_KINDS, FAULTS, FaultSpec
from tablectl.simulators.shuffler.model import ShuffleResult, SimShuffler
from tablectl.simulators.shuffler.usb import USB_PID, USB_VID, SimShufflerUsb
from tablectl.simulators.shuffler.wire import FIRMWARE, MODEL

__all__ = [
    "FAULTS",
    "FAULT_KINDS",
    "FIRMWARE",
    "MODEL",
    "USB_PID",
    "USB_VID",
    "FaultSpec",
    "ShuffleResult",
    "SimShuffler",
    "SimShufflerUsb",
]
