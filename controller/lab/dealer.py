"""A simulated dealer for card tables: the human at the table, for demos, benches and tests.

It reads the engine's phase as the dealer screen shows it, submits button presses as ordinary
(journaled) events and pulls cards from a simulated shoe; the devices are the real drivers over
simulators.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from tablectl.controller.core.events import BetsClosed, Confirm, RoundOpen
from tablectl.controller.service.runner import TableRunner

BeforeRound = Callable[[int], Awaitable[object]]
"""What the dealer or presenter does between rounds, given the rounds opened so far."""


@dataclass(frozen=True)
class DealerPace:
    """How fast the dealer works (seconds)."""

    betting: float = 2.0
    """Betting stays open this long (the dealer presses "no more bets")."""
    between_rounds: float = 1.0
    card_timeout: float = 5.0
    """How long to wait for a pulled card to reach the table before pulling again."""
    decisions: float = 0.0
    """A decision window (house-banked poker) stays open this long before the dealer closes it."""


class SimulatedDealer:
    """Deals shoes on a card table until ``shoes`` shoes are done (0: forever).

    ``count_stub``: after a shoe's last round, count the rest out through the reader (R10);
    ``False`` for a deck shuffled every round, whose rest goes back into the shuffler unread.
    """

    def __init__(
        self,
        runner: TableRunner,
        *,
        pull_card: Callable[[], None],
        start_shuffle: Callable[[], Awaitable[object]] | None = None,
        new_shoe: Callable[[], None] | None = None,
        open_rounds: bool = True,
        count_stub: bool = True,
        pace: DealerPace | None = None,
        shoes: int = 1,
        rounds: int = 0,
    ) -> None:
        self._runner = runner
        self.before_round: BeforeRound | None = None
        """Awaited between rounds with the rounds dealt so far (a dealer change, say)."""
        self._pull_card = pull_card
        self._start_shuffle = start_shuffle
        self._new_shoe = new_shoe
        self._open_rounds = open_rounds
        self._count_stub = count_stub
        self._pace = pace or DealerPace()
        self._shoes = shoes
        self._max_rounds = rounds
        self.rounds = 0

    @property
    def phase(self) -> str:
        return str(self._runner.engine.snapshot().get("phase"))

    async def run(self) -> None:
        """Deal until the requested number of shoes is done."""
        done = 0
        while (not self._shoes or done < self._shoes) and not self._enough():
            if self._start_shuffle is not None:
                mark = self._runner.journal.last_seq
                await self._start_shuffle()
                await self._wait_for_record("shuffle_completed", after=mark)
            await self._deal_shoe()
            done += 1
            if self._new_shoe is None:
                return
            self._new_shoe()

    async def _deal_shoe(self) -> None:
        while True:
            phase = self.phase
            if phase == "burn":
                await self._deal_one()
            elif phase == "idle":
                if self._enough():
                    return
                if not self._open_rounds:
                    await asyncio.sleep(0.02)
                    continue
                await asyncio.sleep(self._pace.between_rounds)
                if self.before_round is not None:
                    await self.before_round(self.rounds)
                while self._burn_owed() and self.phase == "idle":
                    await self._deal_one()  # R7: the new dealer burns first
                await self._runner.queue.submit(RoundOpen())
                await asyncio.sleep(self._pace.betting)
                await self._runner.queue.submit(BetsClosed())
                self.rounds += 1
            elif phase == "dealing":
                if self._awaits_rng():
                    await asyncio.sleep(0.02)  # the screen says: the RNG's round first
                elif self._awaits_confirm():
                    await asyncio.sleep(self._pace.decisions)
                    await self._runner.queue.submit(Confirm())
                else:
                    await self._deal_one()
            elif phase == "shoe_end":
                if not self._count_stub:
                    return
                # The stub is counted out through the reader (R10) until the shoe reports empty.
                before = self._runner.journal.last_seq
                self._pull_card()
                if not await self._journal_moved(before) or self._seen("shoe_end", before):
                    return  # the shoe reported empty and was reconciled
            else:  # open (waiting for a betting timer), shuffling, pending_decision: wait
                await asyncio.sleep(0.02)

    def _enough(self) -> bool:
        return bool(self._max_rounds) and self.rounds >= self._max_rounds

    def _burn_owed(self) -> bool:
        """The screen says: burn a card (a dealer change, ``burn_after_dealer_change``)."""
        return bool(self._runner.engine.snapshot().get("dealer_burn"))

    def _awaits_confirm(self) -> bool:
        """The dealer screen of a scripted game asks to close the decision window first."""
        deal = self._runner.engine.snapshot().get("deal")
        return isinstance(deal, dict) and bool(deal.get("awaits_confirm"))

    def _awaits_rng(self) -> bool:
        """The dealer screen of a game with a studio RNG says to wait for its draw before the
        first card (Golden Wealth and Lightning Baccarat, seed-001 L4025, L4123)."""
        rng = self._runner.engine.snapshot().get("rng")
        return isinstance(rng, dict) and bool(rng.get("awaits"))

    def _seen(self, record_type: str, after: int) -> bool:
        return any(r.get("type") == record_type for r in self._runner.journal.records(after))

    async def _wait_for_record(self, record_type: str, *, after: int) -> None:
        # Polls: the journal has no change notification, and a dealer glances at the screen.
        while not self._seen(record_type, after):  # noqa: ASYNC110
            await asyncio.sleep(0.02)

    async def _deal_one(self) -> None:
        before = self._runner.journal.last_seq
        self._pull_card()
        await self._journal_moved(before)

    async def _journal_moved(self, before: int) -> bool:
        """Wait until the table journaled something after ``before`` (the card arrived)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._pace.card_timeout
        while self._runner.journal.last_seq == before:
            if loop.time() > deadline:
                return False
            await asyncio.sleep(0.005)
        return True


class SimulatedPresenter:
    """The presenter of a wheel or ball-draw game: opens and closes betting, then ``start`` (the
    presenter's action once bets are closed) lets the device produce the result.

    ``supervise``: also the lab's supervisor, confirming a round held for a device fault once it has
    cleared (seed-001 G3, C42); without it such a round waits for a ``confirm`` nobody gives.
    """

    def __init__(
        self,
        runner: TableRunner,
        *,
        start: Callable[[], Awaitable[object]] | None = None,
        betting: float = 2.0,
        rounds: int = 0,
        between: Sequence[str] = ("idle",),
        supervise: bool = False,
    ) -> None:
        self._runner = runner
        self.before_round: BeforeRound | None = None
        """Awaited before each round with the rounds opened so far (a dealer change, say)."""
        self._between = frozenset(between)
        """Phases in which the previous round is over (a drum is ``drawn`` until emptied)."""
        self._start = start
        self._betting = betting
        self._rounds = rounds
        self._supervise = supervise
        self.rounds = 0
        self.confirmed = 0
        """Device-fault holds this presenter confirmed (``supervise``)."""

    async def run(self) -> None:
        while not self._rounds or self.rounds < self._rounds:
            while not self.between_rounds():  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            if self.before_round is not None:
                await self.before_round(self.rounds)
            await self._runner.queue.submit(RoundOpen())
            await asyncio.sleep(self._betting)
            await self._runner.queue.submit(BetsClosed())
            self.rounds += 1
            if self._start is not None:
                await self._start()
            while not self.between_rounds():
                if self._supervise and self._fault_cleared_hold():
                    await self._runner.queue.submit(Confirm())
                    self.confirmed += 1
                await asyncio.sleep(0.02)

    def between_rounds(self) -> bool:
        """Whether the table's last round is over."""
        return self._runner.engine.snapshot().get("phase") in self._between

    def _fault_cleared_hold(self) -> bool:
        """The round is held for a device fault, and no fault is latched any more."""
        snapshot = self._runner.engine.snapshot()
        held = snapshot.get("held")
        return (
            snapshot.get("phase") == "held"
            and not snapshot.get("faults")
            and isinstance(held, list)
            and any(isinstance(h, dict) and h.get("reason") == "device_fault" for h in held)
        )
