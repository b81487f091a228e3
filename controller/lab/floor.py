"""Simulated tables on one broker: the one place that wires a lab table together (the devices,
the real controller and whoever works the table) for the demo, the screenshots and the browser
test."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from tablectl.controller.config import TableConfig
from tablectl.controller.games.catalog import GAMES
from tablectl.controller.lab import rng as lab_rng
from tablectl.controller.lab.cards import SHOE_VARIANTS, start_card_rng
from tablectl.controller.lab.crew import LabCrew
from tablectl.controller.lab.dealer import DealerPace, SimulatedDealer, SimulatedPresenter
from tablectl.controller.lab.dice import DICE_TABLES, SimulatedRng, start_dice_table
from tablectl.controller.lab.roulette import (
    ROULETTE_TABLES,
    SecondBallReader,
    command_sender,
    lightning_rng,
    start_roulette_game,
)
from tablectl.controller.lab.tables import (
    start_card_table,
    start_draw_table,
    start_roulette_table,
    start_scripted_table,
    start_wheel_table,
)
from tablectl.controller.service.app import TableApp, open_table

LAB_TABLES: Final = ("roulette", "baccarat", "lucky7", "dream_catcher")
"""The named lab tables; besides them, any game of the catalog with a dealer screen or a shoe
variant, the dice games and the roulette games (:func:`lab_tables`)."""


def lab_tables() -> frozenset[str]:
    """Every table name :meth:`LabFloor.start` knows."""
    return frozenset({*LAB_TABLES, *GAMES, *SHOE_VARIANTS, *DICE_TABLES, *ROULETTE_TABLES})


def relief_table(names: Sequence[str]) -> str | None:
    """The table whose dealer changes during a run: the first card table (its burn after the
    change shows R7), else the first whose rounds a presenter opens; dice and roulette tables
    open rounds from their devices, where a change could fall in a round."""
    cards = [n for n in names if n == "baccarat" or n in GAMES or n in SHOE_VARIANTS]
    hosted = [n for n in names if n in ("lucky7", "dream_catcher")]
    return next(iter(cards + hosted), None)


class LabFloor:
    """Simulated tables publishing to one broker, their tasks in ``group``, each table closed by
    ``stack`` (its last records still reach the broker)."""

    def __init__(
        self,
        group: asyncio.TaskGroup,
        stack: contextlib.AsyncExitStack,
        folder: Path,
        broker: tuple[str, int],
        *,
        speed: float,
        seed: int,
        crew: LabCrew | None = None,
        relief: str | None = None,
    ) -> None:
        self._group = group
        self._stack = stack
        self._folder = folder
        self._broker = broker
        self._speed = speed
        self._seed = seed
        self.crew = crew
        """With a crew, every table has ``[staff]`` and a dealer on duty before its first round."""
        self._relief = relief
        """The table name (:meth:`start`'s) whose dealer changes after a few rounds."""
        self.journals: dict[str, Path] = {}
        """Table id → journal file, in the order the tables started."""

    async def start(
        self,
        name: str,
        *,
        table_id: str | None = None,
        faults: Sequence[str] = (),
        seed: int | None = None,
    ) -> str:
        """Start the table ``name``; its table id. ``table_id`` and ``faults`` apply to the
        ``roulette`` table (a second wheel that fails on cue)."""
        seed = self._seed if seed is None else seed
        if name == "roulette":
            return await self._roulette(table_id or "ROU-DEMO", faults, seed)
        if name == "baccarat":
            return await self._baccarat(seed)
        if name == "lucky7":
            return await self._lucky7()
        if name == "dream_catcher":
            return await self._dream_catcher()
        if name in GAMES or name in SHOE_VARIANTS:
            return await self._scripted(name, seed)
        if name in DICE_TABLES:
            return await self._dice(name, seed)
        if name in ROULETTE_TABLES:
            return await self._roulette_game(name, seed)
        raise ValueError(f"no lab table {name!r}")

    async def _open(self, config: TableConfig, *, relief: str = "", **kw: Any) -> TableApp:
        """Open and run the table; with a crew, its dealer signs on before anyone opens a round
        (``relief``: the table's name, for the one whose dealer changes later)."""
        crew = self.crew
        if crew is not None:
            config = crew.staff(config, change=relief == self._relief)
        self.journals[config.table.id] = config.journal.path
        app = await self._stack.enter_async_context(open_table(config, broker=self._broker, **kw))
        signing: asyncio.Task[None] | None = None
        if crew is not None:
            # Queued before the table runs, the sign-on comes before anything its devices say.
            async with asyncio.timeout(10):
                await app.publisher.wait_connected()
                mark = app.journal.last_seq
                send = command_sender(config, *self._broker)
                signing = asyncio.create_task(crew.sign_on(config.table.id, send))
                while not signing.done() and not _journaled(app, "command", mark):  # noqa: ASYNC110 - the journal has no change event
                    await asyncio.sleep(0.01)
        self._group.create_task(app.runner.run(), name=f"lab:{config.table.id}")
        if signing is not None:
            await signing
        return app

    def _relieved(
        self, app: TableApp, name: str, host: SimulatedDealer | SimulatedPresenter
    ) -> None:
        """The table ``name``'s dealer hands over to the relief between rounds (if it is the
        :func:`relief_table`)."""
        if self.crew is not None and name == self._relief:
            config = app.config
            send = command_sender(config, *self._broker)
            host.before_round = self.crew.relief(config.table.id, send)

    def _task(self, coro: Any, name: str) -> None:
        self._group.create_task(coro, name=f"lab:{name}")

    async def _roulette(self, table_id: str, faults: Sequence[str], seed: int) -> str:
        config = await start_roulette_table(
            self._group,
            self._folder / f"{table_id}.sqlite",
            table_id=table_id,
            speed=self._speed,
            seed=seed,
            faults=faults,
        )
        await self._open(config)
        return table_id

    async def _baccarat(self, seed: int) -> str:
        speed = self._speed
        sim = await start_card_table(
            self._group, self._folder / "BAC-DEMO.sqlite", seed=seed, speed=speed * 5
        )
        app = await self._open(sim.config, relief="baccarat", driver_kwargs=sim.driver_kwargs)
        pace = DealerPace(betting=6.0 / speed, between_rounds=2.0 / speed)
        dealer = sim.dealer(app, pace=pace, shoes=0)  # shoe on shoe
        self._relieved(app, "baccarat", dealer)
        self._task(dealer.run(), "baccarat-dealer")
        return sim.config.table.id

    async def _lucky7(self) -> str:
        speed = self._speed
        draw = await start_draw_table(self._group, self._folder / "L7-DEMO.sqlite", speed=speed)
        app = await self._open(draw.config, relief="lucky7")
        presenter = draw.presenter(app, betting=8.0 / speed, mixing=4.0 / speed)
        self._relieved(app, "lucky7", presenter)
        self._task(presenter.run(), "lucky7")
        return draw.config.table.id

    async def _dream_catcher(self) -> str:
        config = await start_wheel_table(
            self._group, self._folder / "DC-DEMO.sqlite", speed=self._speed, every=12.0
        )
        app = await self._open(config, relief="dream_catcher")
        host = SimulatedPresenter(app.runner, betting=4.0 / self._speed)
        self._relieved(app, "dream_catcher", host)
        self._task(host.run(), "dream_catcher-host")
        return config.table.id

    async def _scripted(self, game: str, seed: int) -> str:
        """A card game table and its dealer (a dealer-screen game, or a shoe game's variant with
        its studio RNG: Golden Wealth and Lightning Baccarat)."""
        speed = self._speed
        table_id = game.replace("_", "-").upper()[:12] + "-DEMO"
        sim = await start_scripted_table(
            self._group,
            self._folder / f"{table_id}.sqlite",
            game=game,
            table_id=table_id,
            seed=seed,
            speed=speed * 5,
        )
        app = await self._open(sim.config, relief=game, driver_kwargs=sim.driver_kwargs)
        start_card_rng(self._group, app.runner, sim.game, seed=seed)
        pace = DealerPace(betting=6.0 / speed, between_rounds=2.0 / speed, decisions=3.0 / speed)
        dealer = sim.dealer(app, rounds=0, pace=pace)
        self._relieved(app, game, dealer)
        self._task(dealer.run(), f"{game}-dealer")
        return table_id

    async def _dice(self, game: str, seed: int) -> str:
        """A dice table: the unit runs the cycle; Lightning Dice's RNG strikes before the drop."""
        sim = await start_dice_table(
            self._group, self._folder / f"{game}.sqlite", game=game, seed=seed, speed=self._speed
        )
        app = await self._open(sim.config)
        if game == "lightning_dice":
            rng = SimulatedRng(app.runner, sim.unit, seed=seed)
            app.runner.listeners.append(rng.on_record)
            self._task(rng.run(), f"{game}-rng")
        return sim.config.table.id

    async def _roulette_game(self, game: str, seed: int) -> str:
        """Lightning Roulette (the studio RNG strikes once bets close) or Double Ball Roulette
        (the wheel reports one ball, a simulated ball reader sends the other by command)."""
        sim = await start_roulette_game(
            self._group, self._folder / f"{game}.sqlite", game=game, seed=seed, speed=self._speed
        )
        app = await self._open(sim.config)
        helper: lab_rng.SimulatedRng | SecondBallReader
        if game == "lightning_roulette":
            helper = lightning_rng(app.runner, seed=seed)
        else:
            helper = SecondBallReader(command_sender(sim.config, *self._broker), seed=seed)
        app.runner.listeners.append(helper.on_record)
        self._task(helper.run(), f"{game}-helper")
        return sim.config.table.id


def _journaled(app: TableApp, record_type: str, after: int) -> bool:
    return any(r.type == record_type for r in app.journal.records(after))
