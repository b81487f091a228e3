"""A simulated studio RNG for the lab's lightning tables: once bets close, it commits its seeded
picks as an ``rng_draw`` before anything else of the round happens (seed-001 §2.2 (d): picks are
committed before the physical result is known; Lightning Dice L3069, Lightning Roulette L115).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence

from tablectl.controller.core.events import RngDraw, RngPick
from tablectl.controller.journal import JournalRecord
from tablectl.controller.service.runner import TableRunner


class RngPicker:
    """A studio RNG's seeded picks: ``count`` distinct ``values`` (a number of picks drawn in that
    inclusive range), each with one of ``multipliers``."""

    def __init__(
        self,
        *,
        values: Sequence[int | str],
        multipliers: Sequence[int],
        count: tuple[int, int] = (1, 5),
        seed: int = 0,
    ) -> None:
        if not 1 <= count[0] <= count[1] <= len(values):
            raise ValueError(f"count {count} does not fit {len(values)} values")
        self._values = tuple(values)
        self._multipliers = tuple(multipliers)
        self._count = count
        self._rng = random.Random(seed)

    def strike(self) -> RngDraw:
        """The RNG's picks for one round: distinct values, each with a multiplier."""
        # Draw order (how many, which, then each multiplier) is what the dice lab always drew:
        # its seeded runs stay the same.
        picked = self._rng.sample(self._values, self._rng.randint(*self._count))
        choose = self._rng.choice
        return RngDraw(
            numbers=tuple(RngPick(value=v, multiplier=choose(self._multipliers)) for v in picked)
        )


class SimulatedRng:
    """A studio RNG at a table: after each close of bets, a :class:`RngPicker`'s next draw,
    journaled as ``rng_draw`` (submitted to the runner, as the RNG service's link is); then
    ``after``."""

    def __init__(
        self,
        runner: TableRunner,
        *,
        values: Sequence[int | str],
        multipliers: Sequence[int],
        count: tuple[int, int] = (1, 5),
        seed: int = 0,
        after: Callable[[], object] | None = None,
    ) -> None:
        self._runner = runner
        self._picker = RngPicker(values=values, multipliers=multipliers, count=count, seed=seed)
        self._after = after
        self._closed: asyncio.Queue[str] = asyncio.Queue()
        self.strikes = 0
        """Draws journaled so far."""

    def on_record(self, record: JournalRecord) -> None:
        """Runner listener: note each close of bets (the strike follows it)."""
        if record.type == "bets_closed":
            self._closed.put_nowait(record.ts)

    def strike(self) -> RngDraw:
        """The next draw."""
        return self._picker.strike()

    async def run(self) -> None:
        """Strike after every close of bets, until cancelled."""
        while True:
            await self._closed.get()
            await self._runner.queue.submit(self.strike())
            self.strikes += 1
            if self._after is not None:
                self._after()
