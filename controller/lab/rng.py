"""A simulated studio RNG for the lab's lightning tables: once bets close, it strikes its picks and
commits them to the table as an ``rng_draw`` before anything else of the round happens.

Seed-001 §2.2 (d): an RNG's picks are generated and committed before the physical result is known
(Lightning Dice L3069, Lightning Roulette L115: "at the end of the time of betting"). The RNG
watches the table's journal (a runner listener) for ``bets_closed`` and submits its draw then; an
``after`` hook lets a table go on only once the draw is in (the Lightning Dice dealer drops the
dice after the strike). The picks are seeded: a lab run is the same every time.
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
    inclusive range), each with one of ``multipliers``.

    Raises:
        ValueError: ``count`` does not fit the values.
    """

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
    journaled as ``rng_draw``; then ``after`` (e.g. the dealer drops the dice).

    Attach :meth:`on_record` to the runner's listeners; :meth:`run` acts on what it saw.

    Args:
        runner: the table's runner (the draw is submitted to it, as the RNG service's link is).
        values, multipliers, count, seed: the picks (:class:`RngPicker`; a picker built with
            the same arguments previews them).
        after: called once each draw is journaled.
    """

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
