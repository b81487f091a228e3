"""Simulated barcode-reading card shoe: an I/O-free model of one shoe, dealt as barcode lines.

The whole shoe is composed up front (seeded shuffle of ``decks`` × 52 or a scripted list, the cut
card, the faults, the shoe-empty signal) as :attr:`SimShoe.script`; dealing only walks it, so the
lines do not depend on pacing (STYLE practice 8). Barcodes come from the production
:meth:`~tablectl.drivers.shoe.barcodes.BarcodeCodec.encode`, HID reports from
:func:`tablectl.drivers.shoe.hid.encode_line`.

Serial: served by ``serve_pty``/``serve_tcp``, a line as ASCII + CR LF, a misread character as
0xFF (→ U+FFFD → ``unreadable``). HID: :func:`make_usb_device` on a
:class:`~tablectl.simulators.usb_backend.SimUsbBackend`, lines typed by :func:`push_lines` /
:func:`serve_usb`. Pacing: ``rate`` lines/s times ``speed``, plus :meth:`SimShoe.request`-ed lines
at once (``rate = 0``: on request only); tests use :meth:`SimShoe.deal`.

Faults (``KIND@N``, N the 1-based card position): ``unreadable`` (some characters become U+FFFD),
``duplicate`` (read twice), ``foreign`` (a card of :data:`FOREIGN_DECK` before N), ``extra`` (one
more own card before N), ``cut_early``/``cut_late`` (the cut card after card N, before/after its
place), ``removed`` (the shoe lifted and put back before N).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Final, Literal

from tablectl.drivers.cards import full_deck, parse_card
from tablectl.drivers.shoe.barcodes import BarcodeCodec
from tablectl.drivers.shoe.hid import UNMAPPED, encode_line
from tablectl.simulators.chunks import Chunk
from tablectl.simulators.errors import SimulatorError
from tablectl.simulators.faults import FaultKinds, ValueRule
from tablectl.simulators.faults import FaultSpec as BaseFaultSpec
from tablectl.simulators.usb_device import SimUsbDevice

FAULTS: Final = FaultKinds(
    "card",
    {
        "unreadable": ValueRule.nothing(),
        "duplicate": ValueRule.nothing(),
        "foreign": ValueRule.nothing(),
        "extra": ValueRule.nothing(),
        "cut_early": ValueRule.nothing(),
        "cut_late": ValueRule.nothing(),
        "removed": ValueRule.nothing(),
    },
    examples=("duplicate@12",),
    counts="the card's position in the shoe, from 1",
    noun="shoe fault",
)
"""The shoe's fault kinds (see the module docstring); none takes a value."""
FAULT_KINDS: Final = FAULTS.names
FOREIGN_DECK: Final = "X9999"
"""The deck serial of ``foreign`` cards: never one of a simulated table's decks."""
DEFAULT_CUT_FROM_END: Final = 14
SIM_VID: Final = 0x1209
"""pid.codes' open-source vendor id; with :data:`SIM_PID` (its test product id) no real shoe."""
SIM_PID: Final = 0x0001
HID_ENDPOINT: Final = 0x81


class ShoeFault(BaseFaultSpec):
    """A scripted shoe fault (:data:`FAULTS`) at card ``at`` (1-based position in the shoe's card
    order)."""

    KINDS = FAULTS


class SimShoe:
    """One simulated shoe; see the module docstring.

    ``cut_from_end``: ``"auto"`` is 14 for a generated shoe and none for a scripted list; ``None``:
    no cut card (a shuffler-fed shoe). ``deck_serials`` are printed in each barcode (``B0001-KH``).
    ``ValueError`` for inconsistent arguments.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        decks: int = 8,
        cards: Sequence[str] | None = None,
        cut_from_end: int | Literal["auto"] | None = "auto",
        deck_serials: Sequence[str] = (),
        faults: Sequence[ShoeFault] = (),
        rate: float = 1.0,
        speed: float = 1.0,
        codec: BarcodeCodec | None = None,
    ) -> None:
        if decks < 1:
            raise SimulatorError(f"decks must be >= 1, not {decks}")
        if rate < 0 or speed <= 0:
            raise SimulatorError("rate must be >= 0 and speed > 0")
        if deck_serials and len(deck_serials) != decks:
            raise SimulatorError(f"deck_serials: {len(deck_serials)} serials for {decks} decks")
        self.seed = seed
        self.decks = decks
        self.rate = rate
        self._speed = speed
        self.deck_serials = tuple(deck_serials)
        self.faults = tuple(faults)
        self.codec = codec or BarcodeCodec()
        self._rng = random.Random(seed)
        order = self._compose(cards)
        self.cards: tuple[str, ...] = tuple(card for card, _ in order)
        """The shoe's cards in dealing order (canonical codes, without fault additions)."""
        self.regular_cut = self._regular_cut(cards is not None, cut_from_end)
        self.cut_after = self._cut_position()
        """The cut card comes out after this many cards (None: no cut card)."""
        self.script: tuple[str, ...] = tuple(self._lines(order))
        """Every line the shoe will send, in order, ending with the shoe-empty signal."""
        self._next = 0
        self._requested = 0
        self._start: float | None = None
        self._paced = 0

    # --- composition -------------------------------------------------------------------------

    def _compose(self, cards: Sequence[str] | None) -> list[tuple[str, int]]:
        if cards is not None:
            symbols = self.codec.symbol_deck  # a symbol deck's scripted cards (RK, PA, SC)
            return [(parse_card(c, symbols=symbols).code, 0) for c in cards]
        order = [(card.code, deck) for deck in range(self.decks) for card in full_deck()]
        self._rng.shuffle(order)
        return order

    def _regular_cut(
        self, scripted: bool, cut_from_end: int | Literal["auto"] | None
    ) -> int | None:
        total = len(self.cards)
        if cut_from_end is None or (cut_from_end == "auto" and scripted):
            return None  # explicit None, or the default for a scripted list
        behind = DEFAULT_CUT_FROM_END if cut_from_end == "auto" else cut_from_end
        if not 0 < behind < total:
            raise SimulatorError(
                f"cut_from_end must be 1..{total - 1} for {total} cards, not {behind}"
            )
        return total - behind

    def _cut_position(self) -> int | None:
        position = self.regular_cut
        total = len(self.cards)
        for fault in self.faults:
            if fault.kind not in ("cut_early", "cut_late"):
                continue
            regular = self.regular_cut
            if fault.at > total:
                raise SimulatorError(f"{fault.kind}@{fault.at}: the shoe has {total} cards")
            if regular is not None and fault.kind == "cut_early" and fault.at >= regular:
                raise SimulatorError(f"cut_early@{fault.at} is not before the cut at {regular}")
            if regular is not None and fault.kind == "cut_late" and fault.at <= regular:
                raise SimulatorError(f"cut_late@{fault.at} is not after the cut at {regular}")
            position = fault.at
        return position

    def _lines(self, order: list[tuple[str, int]]) -> list[str]:
        at: dict[int, set[str]] = {}
        for fault in self.faults:
            if fault.at > len(order):
                raise SimulatorError(f"{fault.kind}@{fault.at}: the shoe has {len(order)} cards")
            at.setdefault(fault.at, set()).add(fault.kind)
        codec = self.codec
        lines: list[str] = []
        for position, (card, deck) in enumerate(order, start=1):
            kinds = at.get(position, set())
            if "removed" in kinds:
                lines += [
                    codec.signal_barcode("shoe_removed"),
                    codec.signal_barcode("shoe_inserted"),
                ]
            if "foreign" in kinds:
                lines.append(codec.encode(self._rng.choice(order)[0], deck=FOREIGN_DECK))
            if "extra" in kinds:
                extra, extra_deck = self._rng.choice(order)
                lines.append(codec.encode(extra, deck=self._serial(extra_deck)))
            line = codec.encode(card, deck=self._serial(deck))
            if "unreadable" in kinds:
                line = self._garble(line)
            lines.append(line)
            if "duplicate" in kinds:
                lines.append(line)
            if position == self.cut_after:
                lines.append(codec.signal_barcode("cut_card"))
        lines.append(codec.signal_barcode("shoe_empty"))
        return lines

    def _serial(self, deck: int) -> str | None:
        return self.deck_serials[deck] if self.deck_serials else None

    def _garble(self, line: str) -> str:
        chars = list(line)
        count = max(1, len(chars) // 2)
        for index in self._rng.sample(range(len(chars)), count):
            chars[index] = UNMAPPED
        return "".join(chars)

    # --- dealing (in-process) -------------------------------------------------------------------

    @property
    def dealt(self) -> int:
        """Lines handed out so far."""
        return self._next

    @property
    def remaining(self) -> int:
        return len(self.script) - self._next

    @property
    def done(self) -> bool:
        """Every line (the shoe-empty signal included) has been dealt."""
        return self._next >= len(self.script)

    def deal(self, n: int = 1) -> list[str]:
        """The next ``n`` lines (fewer at the end of the shoe)."""
        lines = list(self.script[self._next : self._next + max(0, n)])
        self._next += len(lines)
        return lines

    def next_barcodes(self, k: int = 1) -> list[str]:
        """Same as :meth:`deal`: the next ``k`` barcode lines."""
        return self.deal(k)

    # --- pacing (servers) -----------------------------------------------------------------------

    @property
    def speed(self) -> float:
        return self._speed

    def request(self, n: int = 1) -> None:
        """Deal ``n`` more lines at the next :meth:`advance`, besides the rate (a dealer's pull)."""
        self._requested += max(0, n)

    def advance(self, now: float) -> list[str]:
        """The lines due by ``now`` (seconds on any monotonic clock)."""
        if self._start is None:
            self._start = now
        due = 0
        if self.rate > 0:
            # The epsilon keeps 0.1 s × 10/s from landing on 0.999… and dealing a tick late.
            paced = int((now - self._start) * self.rate * self._speed + 1e-9)
            due, self._paced = max(0, paced - self._paced), max(self._paced, paced)
        due += self._requested
        self._requested = 0
        return self.deal(due)

    def advance_chunks(self, now: float) -> list[Chunk]:
        """:meth:`advance` as serial bytes (the :class:`tablectl.simulators.serve.SimDevice`
        protocol)."""
        return [Chunk(now, encode_serial_line(line)) for line in self.advance(now)]

    def receive(self, data: bytes, now: float) -> bytes:
        """Host bytes: a shoe takes no commands; they are ignored."""
        del data, now
        return b""

    def link_down(self, now: float) -> bool:
        del now
        return False


def encode_serial_line(line: str) -> bytes:
    """``line`` as a serial scanner sends it: ASCII, a misread character as 0xFF, then CR LF."""
    return bytes(0xFF if ch == UNMAPPED or ord(ch) > 0x7E else ord(ch) for ch in line) + b"\r\n"


def make_usb_device(
    *, vid: int = SIM_VID, pid: int = SIM_PID, serial: str | None = "SIMSHOE-1"
) -> SimUsbDevice:
    """The shoe's scanner as a USB boot keyboard (interrupt IN :data:`HID_ENDPOINT`)."""
    return SimUsbDevice.hid_keyboard(vid, pid, serial=serial, product="simulated card shoe")


def push_lines(device: SimUsbDevice, lines: Sequence[str], *, endpoint: int = HID_ENDPOINT) -> int:
    """Type ``lines`` into ``device`` as boot-keyboard reports; returns the reports queued."""
    count = 0
    for line in lines:
        for report in encode_line(line):
            device.push_in(endpoint, report)
            count += 1
    return count


async def serve_usb(model: SimShoe, device: SimUsbDevice, *, tick: float = 0.02) -> None:
    """Deal ``model`` into ``device`` at its pace until cancelled (in-process HID shoes)."""
    while True:
        push_lines(device, model.advance(time.monotonic()))
        await asyncio.sleep(tick)
