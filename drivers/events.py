"""What devices report, in device terms (past-tense facts), before any game rule is applied.

Drivers produce these; the controller maps them to normalized table events (contracts §4.4) and
journals them. ``at`` is wall-clock seconds (``time.time()``) taken by the driver when the bytes
arrived, through its injected clock, so codecs and game rules never read a clock themselves.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "BallLaunched",
    "BallRead",
    "BettingOpened",
    "CardScanned",
    "CutCardSeen",
    "DeviceAvailable",
    "DeviceEvent",
    "DeviceFaultCleared",
    "DeviceFaultRaised",
    "DeviceUnavailable",
    "DiceRead",
    "DiceRollInvalid",
    "DiceRollStarted",
    "Direction",
    "FaultLatch",
    "MixingChanged",
    "NoMoreBets",
    "RollInvalidCode",
    "ScanRejected",
    "ShoeEmptied",
    "ShoeInserted",
    "ShoeRemoved",
    "ShuffleCompleted",
    "ShuffleStarted",
    "SpinInvalid",
    "TubeFull",
    "WheelReady",
    "WheelSettled",
    "WheelSpinStarted",
    "WheelStopped",
]

Direction = Literal["cw", "ccw"]

RollInvalidCode = Literal[
    "die_cocked", "die_off_table", "dice_unreadable", "dice_not_at_rest", "no_wall_hit"
]
"""Why a dice reader gives no result for a roll (the stable codes of ``roll_invalid``)."""


@dataclass(frozen=True, kw_only=True)
class _DeviceEvent:
    device: str
    at: float


@dataclass(frozen=True, kw_only=True)
class DeviceAvailable(_DeviceEvent):
    """The link is up and the device answered (first valid message after connecting)."""

    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class DeviceUnavailable(_DeviceEvent):
    """The link is down or the device went silent. ``reason`` is a stable code
    (``port_error``, ``disconnected``, ``silent``)."""

    reason: str
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class DeviceFaultRaised(_DeviceEvent):
    """A device fault with a stable code (e.g. ``ss2_fault_5``, ``ss2_sensor_fault``)."""

    code: str
    detail: str = ""


@dataclass(frozen=True, kw_only=True)
class DeviceFaultCleared(_DeviceEvent):
    """The device reports the fault gone."""

    code: str


@dataclass(frozen=True, kw_only=True)
class WheelReady(_DeviceEvent):
    """A roulette wheel opened a game: place your bets (SS2 state 2)."""

    spin: int | None = None


@dataclass(frozen=True, kw_only=True)
class BallLaunched(_DeviceEvent):
    """The ball is in the rim (SS2 state 3)."""

    spin: int | None = None
    rotor_direction: Direction | None = None


@dataclass(frozen=True, kw_only=True)
class NoMoreBets(_DeviceEvent):
    """The wheel's no-more-bets point (SS2 state 4)."""

    spin: int | None = None


@dataclass(frozen=True, kw_only=True)
class WheelSettled(_DeviceEvent):
    """The ball settled in ``number`` (SS2 state 5 / bare number line).

    ``revolutions`` and ``ball_direction`` come from the ball-sensor stream when it is enabled;
    otherwise ``None``. ``rotor_direction`` is the rotor's direction when the result came (the
    launch reports its own). ``status_number`` is what a second source said for the same spin
    when the device has two (SS2: ``number`` is the bare line, ``status_number`` the state-5
    status line); the driver reports both and never decides between them.
    """

    number: int | Literal["00"]
    spin: int | None = None
    revolutions: int | None = None
    ball_direction: Direction | None = None
    rotor_direction: Direction | None = None
    status_number: int | Literal["00"] | None = None


@dataclass(frozen=True, kw_only=True)
class SpinInvalid(_DeviceEvent):
    """The device's own exception handling declared the spin void ("no spin").

    ``reason``: ``same_direction`` (misspin), ``no_ball``, ``misfire``.
    """

    reason: str
    spin: int | None = None


@dataclass(frozen=True, kw_only=True)
class CardScanned(_DeviceEvent):
    """A card left the shoe and its barcode was read. ``card`` is canonical (``KH``, ``TS``)."""

    card: str
    barcode: str = ""


@dataclass(frozen=True, kw_only=True)
class ScanRejected(_DeviceEvent):
    """A barcode that is no card of this table's decks, or unreadable. ``reason`` is a stable code
    (``unreadable``, ``unknown_barcode``, ``foreign_deck``)."""

    barcode: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class CutCardSeen(_DeviceEvent):
    """The cut card came out of the shoe."""


@dataclass(frozen=True, kw_only=True)
class ShoeEmptied(_DeviceEvent):
    """The shoe reports no cards left."""


@dataclass(frozen=True, kw_only=True)
class ShoeRemoved(_DeviceEvent):
    """The shoe (or its card tray) was taken off its base."""


@dataclass(frozen=True, kw_only=True)
class ShoeInserted(_DeviceEvent):
    """The shoe is back on its base."""


@dataclass(frozen=True, kw_only=True)
class ShuffleStarted(_DeviceEvent):
    """The shuffler started shuffling."""


@dataclass(frozen=True, kw_only=True)
class ShuffleCompleted(_DeviceEvent):
    """The shuffler finished. ``cards`` is its own count; ``missing``/``extra`` its deck check
    (canonical card codes), when the shuffler reads card faces."""

    cards: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class MixingChanged(_DeviceEvent):
    """A ball drum's blower/mixing turned on or off (the air mixes the balls, R16)."""

    on: bool


@dataclass(frozen=True, kw_only=True)
class BallRead(_DeviceEvent):
    """A numbered ball was read at a reader. ``position`` is the receiver/cylinder slot it went to
    (1-based, when the drum has positions); ``quality`` is the reader's confidence 0–100."""

    ball: int
    reader: int = 0
    position: int | None = None
    quality: int | None = None


@dataclass(frozen=True, kw_only=True)
class TubeFull(_DeviceEvent):
    """The drum's tube/cylinders are full: no more balls can come out."""


@dataclass(frozen=True, kw_only=True)
class WheelSpinStarted(_DeviceEvent):
    """A money wheel was set spinning."""

    direction: Direction | None = None


@dataclass(frozen=True, kw_only=True)
class WheelStopped(_DeviceEvent):
    """A money wheel stopped with the pointer at segment ``index`` (0-based, config order).

    ``revolutions`` are full turns counted by the wheel's sensor; ``on_divider`` means the pointer
    rests on a divider pin between two segments.
    """

    index: int
    revolutions: int | None = None
    direction: Direction | None = None
    on_divider: bool = False


@dataclass(frozen=True, kw_only=True)
class BettingOpened(_DeviceEvent):
    """A device that runs its table's cycle opened a new round: place your bets (a dice dome's
    ready state, or a dice driver that orchestrates a shaker and a camera)."""


@dataclass(frozen=True, kw_only=True)
class DiceRollStarted(_DeviceEvent):
    """A dice shaker started shaking, or a tower dropped the dice."""


@dataclass(frozen=True, kw_only=True)
class DiceRead(_DeviceEvent):
    """A result reader saw the dice at rest: faces 1–6 in the table's fixed order.

    ``colors`` where the reader tells the dice apart; ``reader`` the reader's own id (a camera,
    a plate) and ``confidence`` 0–1, where it reports them.
    """

    dice: tuple[int, ...]
    colors: tuple[str, ...] | None = None
    reader: str | None = None
    confidence: float | None = None


@dataclass(frozen=True, kw_only=True)
class DiceRollInvalid(_DeviceEvent):
    """The reader cannot give a result that counts for this roll.

    ``code`` is one of the stable codes of ``roll_invalid`` (``die_cocked``, ``die_off_table``,
    ``dice_unreadable``, ``dice_not_at_rest``, ``no_wall_hit``); the game decides re-roll or void.
    """

    code: Literal[
        "die_cocked", "die_off_table", "dice_unreadable", "dice_not_at_rest", "no_wall_hit"
    ]
    detail: str = ""


DeviceEvent = (
    DeviceAvailable
    | DeviceUnavailable
    | DeviceFaultRaised
    | DeviceFaultCleared
    | WheelReady
    | BallLaunched
    | NoMoreBets
    | WheelSettled
    | SpinInvalid
    | CardScanned
    | ScanRejected
    | CutCardSeen
    | ShoeEmptied
    | ShoeRemoved
    | ShoeInserted
    | ShuffleStarted
    | ShuffleCompleted
    | MixingChanged
    | BallRead
    | TubeFull
    | WheelSpinStarted
    | WheelStopped
    | BettingOpened
    | DiceRollStarted
    | DiceRead
    | DiceRollInvalid
)


def silent(device: str, now: float, detail: str) -> list[DeviceEvent]:
    """The one ``DeviceUnavailable`` of a device gone quiet (its interpreter decides when)."""
    return [DeviceUnavailable(device=device, at=now, reason="silent", detail=detail)]


class FaultLatch:
    """A device's latched faults, by stable code, and the events that change them.

    Every interpreter reports a fault once when it latches and once when it clears, however
    often the device repeats it in its status: the controller journals each change, so a wheel
    that says "sensor fault" in every 100 ms status must not become ten records a second.
    """

    __slots__ = ("_details", "_device")

    def __init__(self, device: str) -> None:
        self._device = device
        self._details: dict[str, str] = {}

    def latch(self, code: str, *, detail: str, now: float) -> list[DeviceEvent]:
        """``[DeviceFaultRaised]`` when ``code`` was not latched yet, else nothing."""
        if code in self._details:
            return []
        self._details[code] = detail
        return [DeviceFaultRaised(device=self._device, at=now, code=code, detail=detail)]

    def clear(self, code: str, *, now: float) -> list[DeviceEvent]:
        """``[DeviceFaultCleared]`` when ``code`` was latched, else nothing."""
        if self._details.pop(code, None) is None:
            return []
        return [DeviceFaultCleared(device=self._device, at=now, code=code)]

    def reconcile(self, reported: dict[str, str], *, keep: str, now: float) -> list[DeviceEvent]:
        """A status's fault list is a level: clear what it no longer shows (but ``keep``, which
        the interpreter latches itself), then latch what it shows (code → detail)."""
        events: list[DeviceEvent] = []
        for code in sorted(c for c in self._details if c != keep):
            if code not in reported:
                events += self.clear(code, now=now)
        for code, detail in sorted(reported.items()):
            events += self.latch(code, detail=detail, now=now)
        return events

    @property
    def codes(self) -> frozenset[str]:
        """The latched codes."""
        return frozenset(self._details)

    def __contains__(self, code: object) -> bool:
        return code in self._details

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._details))
