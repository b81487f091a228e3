"""Table events for tests that drive a runner or an engine directly."""

from __future__ import annotations

from tablectl.controller.core.events import (
    BallLaunched,
    BetsClosed,
    RoundOpen,
    TableEvent,
    WinningNumber,
)

TS = "2026-11-30T10:00:00.000000Z"


def roulette_spin(number: int, ts: str = TS) -> list[TableEvent]:
    """One roulette round as a wheel reports it: open, launch, bets closed, the number."""
    return [
        RoundOpen(ts=ts, device="wheel"),
        BallLaunched(ts=ts, device="wheel", rotor_direction="cw"),
        BetsClosed(ts=ts, device="wheel"),
        WinningNumber(ts=ts, device="wheel", number=number, revolutions=6, ball_direction="ccw"),
    ]
