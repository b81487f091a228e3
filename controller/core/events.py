"""Normalized table events (contracts §4.4): the vocabulary of the journal, replay, ``cmd/event``.

Device drivers speak their own protocols; the runner turns what they report into these events,
journals them, and only then feeds them to the game engine. Replay feeds the same events from a
JSONL file, so a disputed round is re-validated by exactly the code that validated it live.

Each event is a frozen dataclass with a literal ``type``. Events built in code are trusted;
events from outside (a JSONL file, an MQTT command) go through :func:`parse_event`, which is strict:
unknown types, unknown keys and wrong value types are :class:`EventFormatError` with the reason.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal

import pydantic

from tablectl.controller.core.dice_events import (
    Beads,
    Dice,
    RngDraw,
    RngPick,
    RollInvalid,
    RollStarted,
)
from tablectl.controller.core.errors import EventFormatError
from tablectl.controller.core.event_base import Direction, EventBase

__all__ = [
    "EVENT_TYPES",
    "BallDrawn",
    "BallLaunched",
    "Beads",
    "BetsClosed",
    "Card",
    "Confirm",
    "CutCard",
    "DealError",
    "Decision",
    "Dice",
    "Direction",
    "Fault",
    "FaultCleared",
    "Mixing",
    "NoSpin",
    "ReadError",
    "RngDraw",
    "RngPick",
    "RollInvalid",
    "RollStarted",
    "RoundOpen",
    "Segment",
    "ShoeEmpty",
    "ShoeRemoved",
    "ShuffleCompleted",
    "ShuffleStarted",
    "StaffOff",
    "StaffOn",
    "TableEvent",
    "TubeFull",
    "Void",
    "WheelSpin",
    "WinningNumber",
    "event_from_json",
    "event_to_dict",
    "parse_event",
]


@dataclass(frozen=True, kw_only=True)
class RoundOpen(EventBase):
    """Betting opens for a new round. ``round`` is filled in by the engine when absent."""

    type: Literal["round_open"] = "round_open"
    round: str | None = None
    spin: int | None = None
    """The wheel's own spin counter when a wheel opened the round (lets a restart confirm it)."""


@dataclass(frozen=True, kw_only=True)
class BetsClosed(EventBase):
    """No more bets: the betting window is closed (system timer, dealer or the SS2 state 4)."""

    type: Literal["bets_closed"] = "bets_closed"
    boxes: tuple[int, ...] | None = None
    """Blackjack: the boxes with a bet (seed-000 BJ-B4); ``None`` means every box is played."""
    first_side: Literal["andar", "bahar"] | None = None
    """Andar Bahar: the side the studio's RNG gave the first card after the joker ("determined
    randomly", seed-001 L3543), committed with the close of bets, before any card (§2.2 (d)).
    ``None``: the table's ``[rules] first_side``. Other games ignore it."""


@dataclass(frozen=True, kw_only=True)
class BallLaunched(EventBase):
    """The roulette ball is in the rim (SS2 state 3)."""

    type: Literal["ball_launched"] = "ball_launched"
    rotor_direction: Direction | None = None
    spin: int | None = None


@dataclass(frozen=True, kw_only=True)
class WinningNumber(EventBase):
    """The ball has settled in a pocket. ``number`` is an int, or the string ``"00"``.

    ``revolutions`` is ``None`` when the wiring gives no count (status-only SS2): the wheel's own
    validation is then trusted unless the table requires a count.
    """

    type: Literal["winning_number"] = "winning_number"
    number: int | Literal["00"]
    revolutions: int | None = None
    ball_direction: Direction | None = None
    rotor_direction: Direction | None = None
    spin: int | None = None
    status_number: int | Literal["00"] | None = None
    """The same spin's number from the device's second source, when it has one (SS2: the
    state-5 status line; ``number`` is then the bare line). The engine voids or holds a round
    whose two disagree (regulatory R22); ``None`` (one source, older journals): no check."""
    ball: Annotated[int, pydantic.Field(ge=1, le=2)] | None = None
    """Which ball of a double-ball wheel settled (seed-001 L119); ``None``: the wheel's only
    ball, or on a double-ball table the next one not yet reported. Left out of the JSON form
    when ``None``, so every single-ball stream reads and replays exactly as before."""


@dataclass(frozen=True, kw_only=True)
class NoSpin(EventBase):
    """The device (or the dealer) declares the spin invalid: "no spin" (seed-000 RL-I1/I2)."""

    type: Literal["no_spin"] = "no_spin"
    reason: str


@dataclass(frozen=True, kw_only=True)
class Void(EventBase):
    """A supervisor's decision to void the round in progress, with a reason code."""

    type: Literal["void"] = "void"
    reason: str
    by: str | None = None
    round: str | None = None
    """The round it voids, as the supervisor saw it: a supervisor's void names it (a void for
    any other round is refused and, if it reaches the engine, not applied); the controller's
    own voids (a restart, an outage) void whatever round is in play."""


@dataclass(frozen=True, kw_only=True)
class Confirm(EventBase):
    """A supervisor confirms a round that is pending a decision."""

    type: Literal["confirm"] = "confirm"


@dataclass(frozen=True, kw_only=True)
class Fault(EventBase):
    """A device fault was raised. Faults are latched until a :class:`FaultCleared`."""

    type: Literal["fault"] = "fault"
    code: str
    detail: str | None = None
    since: str | None = None
    """When the condition began, where that is before ``ts``: a fault that could only be
    journaled later (``journal_unavailable`` is journaled when the journal writes again)."""


@dataclass(frozen=True, kw_only=True)
class FaultCleared(EventBase):
    """A latched fault was cleared (by the device or a supervisor)."""

    type: Literal["fault_cleared"] = "fault_cleared"
    code: str
    since: str | None = None
    """When the cleared fault was raised, where the raise was journaled late (see
    :attr:`Fault.since`)."""


@dataclass(frozen=True, kw_only=True)
class Card(EventBase):
    """A card left the shoe (contracts §4.1 notation: ``KH``, ``TS``, ``JK``)."""

    type: Literal["card"] = "card"
    card: str
    barcode: str | None = None
    """The physical card's barcode when the shoe reads one (War of Bets' unique-barcode rule)."""
    face_down: bool = False
    """Dealt face down (a scanned hole card, a burned card): journaled in full, but published
    with ``card`` and ``barcode`` withheld until the round's outcome reveals it (seed-000 L79)."""


@dataclass(frozen=True, kw_only=True)
class CutCard(EventBase):
    """The cut card came out of the shoe."""

    type: Literal["cut_card"] = "cut_card"


@dataclass(frozen=True, kw_only=True)
class ShuffleStarted(EventBase):
    """The shuffler started a shuffle."""

    type: Literal["shuffle_started"] = "shuffle_started"


@dataclass(frozen=True, kw_only=True)
class ShuffleCompleted(EventBase):
    """The shuffler finished; ``cards`` is its own count (never trusted alone, R6).

    ``missing``/``extra`` are its deck check in card codes, when the shuffler reads faces.
    """

    type: Literal["shuffle_completed"] = "shuffle_completed"
    cards: int
    missing: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class ReadError(EventBase):
    """The shoe saw a card it could not read or that is no card of this table (``reason``).

    The dealer rescans, or enters the card by hand (``cmd/event``, journaled as manual).
    """

    type: Literal["read_error"] = "read_error"
    reason: str
    barcode: str | None = None


@dataclass(frozen=True, kw_only=True)
class ShoeRemoved(EventBase):
    """The shoe was taken off its base (its cards can no longer be vouched for)."""

    type: Literal["shoe_removed"] = "shoe_removed"


@dataclass(frozen=True, kw_only=True)
class ShoeEmpty(EventBase):
    """The shoe reports no cards left."""

    type: Literal["shoe_empty"] = "shoe_empty"


@dataclass(frozen=True, kw_only=True)
class Decision(EventBase):
    """A player's decision from the dealer's screen. Blackjack: ``hit``, ``stand``, ``double``,
    ``split``, ``insurance``, ``even_money``, ``surrender`` (``hand`` picks a split hand).
    House-banked poker: ``fold``, ``play``, ``exchange`` (with ``cards``), ``sixth_card``,
    ``buy_game``, ``war`` (Top Card); ``ride`` (Red Dog), ``higher``/``lower`` (Draw Hi-Lo);
    which a game takes is its own rule."""

    type: Literal["decision"] = "decision"
    box: int
    action: Literal[
        "hit",
        "stand",
        "double",
        "split",
        "insurance",
        "even_money",
        "surrender",
        # House-banked poker (tablectl.controller.games.cards.deal): the decisions that change the
        # deal.
        "fold",
        "play",
        "exchange",
        "sixth_card",
        "buy_game",
        "war",
        # Red Dog's Ride (L1591; its Stand is "stand") and Draw Hi-Lo's guess (L1595).
        "ride",
        "higher",
        "lower",
    ]
    hand: int | None = None
    cards: tuple[str, ...] | None = None
    """``exchange``: the cards given back (they leave the hand; as many new ones are dealt)."""


@dataclass(frozen=True, kw_only=True)
class DealError(EventBase):
    """The dealer (or pit) reports a deal irregularity the shoe cannot see: a card exposed or dealt
    face up, or the wrong number of cards at a position (seed-000 PKH-21; seed-001 L335). The game's
    rule book says the remedy (``tablectl.controller.games.cards.deal``)."""

    type: Literal["deal_error"] = "deal_error"
    kind: Literal["card_exposed", "wrong_count"]
    position: str | None = None
    """The position as the deal script names it (``box2``, ``dealer``, ``player``, ``flop``)."""
    cards: int | None = None
    """``wrong_count``: how many cards the position holds."""


@dataclass(frozen=True, kw_only=True)
class BallDrawn(EventBase):
    """A numbered ball was read at the drum's exit.

    ``position`` is the receiver/cylinder slot (1-based) where the drum has them; ``reader`` and
    ``quality`` (0–100) say which reader read it and how sure it was.
    """

    type: Literal["ball_drawn"] = "ball_drawn"
    ball: int
    position: int | None = None
    reader: int | None = None
    quality: int | None = None


@dataclass(frozen=True, kw_only=True)
class Mixing(EventBase):
    """The drum's mixing (blower) went on or off; the engine times the minimum mixing."""

    type: Literal["mixing"] = "mixing"
    on: bool


@dataclass(frozen=True, kw_only=True)
class TubeFull(EventBase):
    """The drum's tube/cylinders are full."""

    type: Literal["tube_full"] = "tube_full"


@dataclass(frozen=True, kw_only=True)
class WheelSpin(EventBase):
    """A money wheel was set spinning (``direction`` when the sensor knows it)."""

    type: Literal["wheel_spin"] = "wheel_spin"
    direction: Direction | None = None


@dataclass(frozen=True, kw_only=True)
class Segment(EventBase):
    """A money wheel stopped at a segment index (0-based, in the configured physical order).

    ``revolutions`` are the full turns the sensor counted; ``on_divider``: the pointer rests on a
    divider pin.
    """

    type: Literal["segment"] = "segment"
    index: int
    revolutions: int | None = None
    direction: Direction | None = None
    on_divider: bool = False


StaffRole = Literal["dealer", "supervisor", "technician"]
PersonId = Annotated[str, pydantic.StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$")]
"""A roster's person id (controller/staff/roster.py)."""
SignOn = Literal["badge", "pin", "badge+pin", "supervisor", "command"]
"""How a person proved who they are: at the station (``badge``, ``pin``, ``badge+pin``), signed on
by a supervisor (``supervisor``), or claimed in a role-signed command (``command``)."""


@dataclass(frozen=True, kw_only=True)
class StaffOn(EventBase):
    """A person goes on duty at the table (docs/station.md). A dealer replaces the dealer on duty:
    a dealer change, between rounds unless a ``supervisor`` signs it (R7: burn after it)."""

    type: Literal["staff_on"] = "staff_on"
    person: PersonId
    role: StaffRole
    how: SignOn
    name: Annotated[str, pydantic.StringConstraints(max_length=64)] | None = None
    supervisor: PersonId | None = None
    """The supervisor who signed it off (a change mid-round, someone signed on for another)."""


@dataclass(frozen=True, kw_only=True)
class StaffOff(EventBase):
    """A person goes off duty (a break, the end of a shift, replaced, or signed off)."""

    type: Literal["staff_off"] = "staff_off"
    person: PersonId
    role: StaffRole
    how: SignOn
    supervisor: PersonId | None = None
    reason: Annotated[str, pydantic.StringConstraints(max_length=64)] | None = None


TableEvent = (
    RoundOpen
    | BetsClosed
    | BallLaunched
    | WinningNumber
    | NoSpin
    | Void
    | Confirm
    | Fault
    | FaultCleared
    | Card
    | CutCard
    | ShuffleStarted
    | ShuffleCompleted
    | BallDrawn
    | Segment
    | ReadError
    | ShoeRemoved
    | ShoeEmpty
    | Decision
    | DealError
    | Mixing
    | TubeFull
    | WheelSpin
    | RollStarted
    | Dice
    | RollInvalid
    | RngDraw
    | Beads
    | StaffOn
    | StaffOff
)

EVENT_TYPES: Mapping[str, type[TableEvent]] = {
    cls.type: cls
    for cls in (
        RoundOpen,
        BetsClosed,
        BallLaunched,
        WinningNumber,
        NoSpin,
        Void,
        Confirm,
        Fault,
        FaultCleared,
        Card,
        CutCard,
        ShuffleStarted,
        ShuffleCompleted,
        BallDrawn,
        Segment,
        ReadError,
        ShoeRemoved,
        ShoeEmpty,
        Decision,
        DealError,
        Mixing,
        TubeFull,
        WheelSpin,
        RollStarted,
        Dice,
        RollInvalid,
        RngDraw,
        Beads,
        StaffOn,
        StaffOff,
    )
}


@functools.cache
def _adapter() -> pydantic.TypeAdapter[TableEvent]:
    """The validator of :func:`parse_event`, built on first use and kept.

    Building it costs 25-75 ms (pydantic generates a schema for every event class), the largest
    single import cost of ``tablectl run``, and most starts never parse an event from outside:
    a fresh journal, or a restart from the checkpoint of an orderly stop, replays nothing. The
    starts that do (a replay after a crash, the first ``cmd/event``) pay it once.
    """
    return pydantic.TypeAdapter(Annotated[TableEvent, pydantic.Field(discriminator="type")])


def parse_event(obj: object) -> TableEvent:
    """Validate a decoded JSON object as a normalized event.

    Raises:
        EventFormatError: naming the type and the offending field.
    """
    if not isinstance(obj, Mapping):
        raise EventFormatError(f"an event must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:  # a list or a dict is unhashable
        known = ", ".join(sorted(EVENT_TYPES))
        raise EventFormatError(f"unknown event type {kind!r} (known: {known})")
    try:
        # JSON mode: strict types (no "3" for 3) while still accepting objects for dataclasses.
        return _adapter().validate_json(json.dumps(obj))
    except RecursionError:
        raise EventFormatError(f"bad {kind} event: nested too deeply") from None
    except (TypeError, ValueError) as exc:
        if not isinstance(exc, pydantic.ValidationError):
            raise EventFormatError(f"bad {kind} event: not JSON-serializable: {exc}") from None
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'][1:]) or 'event'}: {err['msg']}"
            for err in exc.errors()
        )
        raise EventFormatError(f"bad {kind} event: {problems}") from None


def event_from_json(line: str | bytes) -> TableEvent:
    """Parse one JSON line into an event (see :func:`parse_event`)."""
    try:
        obj = json.loads(line)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EventFormatError(f"not JSON: {exc}") from None
    except RecursionError:  # "[[[[…" deep enough to exhaust the stack: garbage, not a crash
        raise EventFormatError("not JSON: nested too deeply") from None
    return parse_event(obj)


_FLAGS = frozenset({"manual", "face_down"})
"""Boolean fields left out of the JSON form when false."""


def event_to_dict(event: TableEvent) -> dict[str, Any]:
    """The JSON form: ``type`` first; unset optional fields and false flags left out."""
    out: dict[str, Any] = {"type": event.type}
    for name in _field_names(type(event)):
        value = getattr(event, name)
        if value is None or (name in _FLAGS and not value):
            continue
        out[name] = _plain(value)
    return out


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """An event class's fields but ``type``, once per class (``dataclasses.fields`` builds a
    tuple on every call: a third of this function's time, on every event journaled)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name != "type")
        _FIELD_NAMES[cls] = names
    return names


def _plain(value: Any) -> Any:
    """A field's JSON form: nested records (an ``rng_draw``'s picks) as objects, unset keys out."""
    if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
        return [
            {
                f.name: getattr(v, f.name)
                for f in dataclasses.fields(v)
                if getattr(v, f.name) is not None
            }
            for v in value
        ]
    return value
