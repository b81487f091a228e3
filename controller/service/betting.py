"""The table's betting timer: who opens and closes betting when no device does.

A card table's shoe only reports cards: betting is the game server's (``mode = "external"``) or
this timer's, which seed-004 makes authoritative (BAC 2.1.6, BJ 2.1.3). Its decisions are ordinary
events: journaled, published and replayable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import structlog

from tablectl.controller.config import BettingConfig
from tablectl.controller.core.errors import JournalError
from tablectl.controller.core.events import BetsClosed, RoundOpen, TableEvent
from tablectl.controller.journal import JournalRecord
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.betting")


class BettingTimer:
    """Opens a round when the table is idle, closes betting ``open_seconds`` later, through the
    table's queue (never around the journal). A held table is left alone (R14)."""

    def __init__(
        self,
        config: BettingConfig,
        look: Callable[[], tuple[str | None, bool]],
        submit: Callable[[TableEvent], asyncio.Future[list[JournalRecord]]],
        *,
        tick: float = 0.1,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self._config = config
        self._clock = clock
        self._look = look
        self._submit = submit
        self._tick = tick
        self.looks = 0
        """Times the timer looked at the table (a test waits for some instead of sleeping)."""
        self._idle_since: float | None = None
        self._open_since: float | None = None

    def start(self) -> float | None:
        """Start afresh (the table's scheduler): seconds before the first look; ``None``: off
        (not ``timer`` mode)."""
        self._idle_since = self._open_since = None
        return self._tick if self._config.mode == "timer" else None

    async def tick(self) -> float:
        """One look at the table; the seconds until the next."""
        phase, held = self._look()
        self.looks += 1
        now = self._clock.monotonic()
        if phase == "idle" and not held:
            self._open_since = None
            if self._idle_since is None:
                self._idle_since = now
            if now - self._idle_since >= self._config.pause_seconds:
                await self._send(RoundOpen())
                self._idle_since = None
        elif phase == "open":
            self._idle_since = None
            if self._open_since is None:
                self._open_since = now
            if now - self._open_since >= self._config.open_seconds:
                await self._send(BetsClosed())
                self._open_since = None
        else:
            self._idle_since = self._open_since = None
        return self._tick

    async def _send(self, event: TableEvent) -> None:
        """Submit one event; a journal that refuses it leaves the timer running (the runner
        locks the table and alarms; the look then says held until it writes again)."""
        try:
            await self._submit(event)
        except JournalError as exc:
            log.warning("betting_event_not_journaled", event_type=event.type, error=str(exc))
