"""Simulated card shuffler: an I/O-free device model speaking the tablectl reference protocol.

Why a model rather than a replayed capture: the host talks back (``SHUF`` starts a shuffle, ``CLRF``
clears a jam only after the door was opened and closed, ``STAT`` polls), and a replay cannot react.
Why I/O-free: the same model runs in-process in unit tests (pass any clock to
:meth:`SimShuffler.advance`), behind a pty or a TCP port (:mod:`tablectl.simulators.serve`, through
the same ``SimDevice`` interface as the SS2 wheel), and behind simulated USB bulk endpoints
(:class:`SimShufflerUsb`). Every byte it sends comes from
:func:`tablectl.drivers.shuffler.protocol.encode_message` and every host command is parsed by
:class:`tablectl.drivers.shuffler.protocol.CommandDecoder`, so the simulator cannot drift from the
codec (STYLE practice 8).

Behaviour. ``decks`` decks are loaded. ``SHUF`` (or the dealer's button, ``auto``) starts a
shuffle: ``ACK;SHUF``, then ``SHST``; ``shuffle_seconds`` later ``SHDN`` with the count and the
deck check, and the shuffler is ``READY`` (the next ``SHUF`` reloads the discards and shuffles
again). The status is sent only when polled. All durations are *device seconds*, divided by
``speed``.

Fault scripting: :class:`FaultSpec` (``kind@shuffle[=value]`` on the command line, kinds in
:data:`FAULTS`), where ``shuffle`` counts shuffles since start (1-based):

- ``jam``: halfway through, ``FALT;1`` and the shuffle is abandoned (no ``SHDN``). The dealer
  opens the door ``value`` s later (default 1) and closes it 1 s after that; until then the
  host's ``CLRF`` is refused (``NAK;CLRF;COND``), afterwards it gives ``ACK`` + ``FCLR;1``.
- ``wrong_count``: ``SHDN`` reports ``value`` cards (default decks × 52 − 1), lists empty.
- ``missing_card`` / ``extra_card``: the deck check lists ``value`` (default ``QS`` / ``AH``;
  ``QS,KH`` for several) and the count moves by as many cards.
- ``door_open``: a third of the way through, the door opens for ``value`` s (default 2): the
  mechanism pauses and resumes when it closes; the shuffle then completes normally.
- ``fault``: halfway through, ``FALT;<value>`` (default 2) and the shuffle is abandoned. Codes
  4, 5 and 8 clear by themselves 2 s later; 7 never clears (``NAK;CLRF;COND``); the rest clear
  on ``CLRF``.
- ``garbage``: line noise and one frame with a bad checksum before ``SHST``.
- ``split``: every frame of that shuffle goes out in 1–4 byte pieces.
- ``silence``: right after ``SHST`` the device hangs for ``value`` s (default 3): no output,
  commands ignored, the shuffle resumes afterwards.
- ``disconnect``: right after ``SHST`` the link drops for ``value`` s (default 3); the shuffle
  goes on, so its ``SHDN`` may be lost and the host learns the result from the status.

Layout: :mod:`~tablectl.simulators.shuffler.faults` (the fault table),
:mod:`~tablectl.simulators.shuffler.model` (the mechanism and its schedule),
:mod:`~tablectl.simulators.shuffler.wire` (the serial line: commands, replies, wire faults) and
:mod:`~tablectl.simulators.shuffler.usb` (the same model behind simulated USB endpoints).
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
