"""Device events (driver terms) → normalized table events (contracts §4.4).

The one place where what a device reports becomes the table's vocabulary. Pure: the wall-clock
``at`` stamped by the driver becomes the event's ISO ``ts``.
"""

from __future__ import annotations

from tablectl.controller.core.events import (
    BallDrawn,
    BallLaunched,
    BetsClosed,
    Card,
    CutCard,
    Dice,
    Fault,
    FaultCleared,
    Mixing,
    NoSpin,
    ReadError,
    RollInvalid,
    RollStarted,
    RoundOpen,
    Segment,
    ShoeEmpty,
    ShoeRemoved,
    ShuffleCompleted,
    ShuffleStarted,
    TableEvent,
    TubeFull,
    WheelSpin,
    WinningNumber,
)
from tablectl.controller.core.time import format_ts
from tablectl.drivers import events as dev

UNAVAILABLE = "device_unavailable"
"""Fault code latched while a device's link is down or it is silent."""
SHOE_REMOVED = "shoe_removed"
"""Latched by the engine when the shoe leaves its base; cleared when it is back."""


def to_table_event(event: dev.DeviceEvent) -> TableEvent:
    """Translate one device event. Every device event has a normalized counterpart."""
    ts = format_ts(event.at)
    device = event.device
    match event:
        case dev.WheelReady(spin=spin):
            return RoundOpen(ts=ts, device=device, spin=spin)
        case dev.BallLaunched(spin=spin, rotor_direction=rotor):
            return BallLaunched(ts=ts, device=device, spin=spin, rotor_direction=rotor)
        case dev.NoMoreBets():
            return BetsClosed(ts=ts, device=device)
        case dev.WheelSettled():
            return WinningNumber(
                ts=ts,
                device=device,
                number=event.number,
                revolutions=event.revolutions,
                ball_direction=event.ball_direction,
                rotor_direction=event.rotor_direction,
                spin=event.spin,
                status_number=event.status_number,
            )
        case dev.SpinInvalid(reason=reason):
            return NoSpin(ts=ts, device=device, reason=reason)
        case dev.DeviceFaultRaised(code=code, detail=detail):
            return Fault(ts=ts, device=device, code=code, detail=detail or None)
        case dev.DeviceFaultCleared(code=code):
            return FaultCleared(ts=ts, device=device, code=code)
        case dev.DeviceUnavailable(reason=reason, detail=detail):
            text = f"{reason}: {detail}" if detail else reason
            return Fault(ts=ts, device=device, code=UNAVAILABLE, detail=text)
        case dev.DeviceAvailable():
            return FaultCleared(ts=ts, device=device, code=UNAVAILABLE)
        case dev.CardScanned(card=card, barcode=barcode):
            return Card(ts=ts, device=device, card=card, barcode=barcode or None)
        case dev.ScanRejected(barcode=barcode, reason=reason):
            return ReadError(ts=ts, device=device, reason=reason, barcode=barcode)
        case dev.CutCardSeen():
            return CutCard(ts=ts, device=device)
        case dev.ShoeEmptied():
            return ShoeEmpty(ts=ts, device=device)
        case dev.ShoeRemoved():
            return ShoeRemoved(ts=ts, device=device)
        case dev.ShoeInserted():
            return FaultCleared(ts=ts, device=device, code=SHOE_REMOVED)
        case dev.ShuffleStarted():
            return ShuffleStarted(ts=ts, device=device)
        case dev.MixingChanged(on=on):
            return Mixing(ts=ts, device=device, on=on)
        case dev.BallRead(ball=ball, reader=reader, position=position, quality=quality):
            return BallDrawn(
                ts=ts, device=device, ball=ball, position=position, reader=reader, quality=quality
            )
        case dev.TubeFull():
            return TubeFull(ts=ts, device=device)
        case dev.WheelSpinStarted(direction=direction):
            return WheelSpin(ts=ts, device=device, direction=direction)
        case dev.WheelStopped():
            return Segment(
                ts=ts,
                device=device,
                index=event.index,
                revolutions=event.revolutions,
                direction=event.direction,
                on_divider=event.on_divider,
            )
        case dev.ShuffleCompleted(cards=cards, missing=missing, extra=extra):
            return ShuffleCompleted(ts=ts, device=device, cards=cards, missing=missing, extra=extra)
        case dev.BettingOpened():
            return RoundOpen(ts=ts, device=device)
        case dev.DiceRollStarted():
            return RollStarted(ts=ts, device=device)
        case dev.DiceRead(dice=dice, colors=colors, reader=reader, confidence=confidence):
            return Dice(
                ts=ts, device=device, dice=dice, colors=colors, reader=reader, confidence=confidence
            )
        case dev.DiceRollInvalid(code=code, detail=detail):
            return RollInvalid(ts=ts, device=device, code=code, detail=detail or None)
    raise TypeError(f"unmapped device event {event!r}")  # pragma: no cover - exhaustive
