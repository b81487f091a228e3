"""``tablectl demo``: whole tables on one machine, one command.

Starts an in-process MQTT broker, the simulated devices (a Cammegh SS2 wheel on a local TCP port;
a shuffler on a TCP port and a barcode shoe as a USB HID keyboard behind a simulated pyusb
backend), the real controller for each table (journal, engine, publisher) and a live view
subscribed to the broker like any results display. Only the devices (and the card dealer's hands)
are simulated: they speak the real wire protocols to the real drivers.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tablectl.controller.games.catalog import GAMES
from tablectl.controller.lab import rng as lab_rng
from tablectl.controller.lab.cards import SHOE_VARIANTS, start_card_rng
from tablectl.controller.lab.dealer import DealerPace, SimulatedPresenter
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
from tablectl.controller.mqtt.broker import EmbeddedBroker
from tablectl.controller.service.app import open_table
from tablectl.controller.tools.watch import Kind, Line, watch

__all__ = ["DICE_TABLES", "ROULETTE_TABLES", "TABLES", "run_demo"]

TABLES = ("roulette", "baccarat", "lucky7", "dream_catcher", "ultimate_texas_holdem")
"""The default tables; any house-banked poker or single-deck card game of
:data:`tablectl.controller.games.catalog.GAMES`, and the dice games of :data:`DICE_TABLES`, may be
named too."""
PREFIX = "tablectl"


async def run_demo(
    *,
    speed: float = 4.0,
    rounds: int = 0,
    seed: int = 7,
    faults: Sequence[str] = ("misspin@3",),
    state_dir: Path | None = None,
    tables: Sequence[str] = TABLES,
    events: bool = False,
) -> int:
    """Run until Ctrl-C, or until ``rounds`` outcomes were shown.

    Args:
        speed: time-lapse of the simulated devices and the dealer.
        rounds: stop after this many outcomes (all tables together); 0 runs on.
        faults: wheel faults (``KIND@GAME``) for the roulette table.
        tables: which tables to run (``roulette``, ``baccarat``, ``lucky7``, ``dream_catcher``,
            and any game of :data:`tablectl.controller.games.catalog.GAMES`).
        events: also show every table event, not only outcomes, alarms and shoe ends.
    """
    done = asyncio.Event()
    shown = 0

    def show(line: str) -> None:
        print(line, flush=True)

    def count(line: Line) -> None:
        nonlocal shown
        if line.kind == "outcome":
            shown += 1
            if rounds and shown >= rounds:
                done.set()

    kinds: tuple[Kind, ...] | None = None if events else ("outcome", "alarm", "status", "other")

    with contextlib.ExitStack() as files:
        folder = state_dir or Path(files.enter_context(tempfile.TemporaryDirectory()))
        async with (
            EmbeddedBroker() as broker,
            asyncio.TaskGroup() as group,
            contextlib.AsyncExitStack() as stack,
        ):
            address = (broker.host, broker.port)
            print(
                f"tablectl demo: tables {', '.join(tables)}; broker mqtt://{broker.host}:"
                f"{broker.port}; journals in {folder}\n"
                f"watch it from another shell: tablectl watch --url "
                f"mqtt://{broker.host}:{broker.port}\n",
                flush=True,
            )
            group.create_task(
                watch(
                    *address,
                    f"{PREFIX}/+/#",
                    emit=show,
                    colour=sys.stdout.isatty(),
                    kinds=kinds,
                    on_line=count,
                ),
                name="demo:view",
            )
            if "roulette" in tables:
                config = await start_roulette_table(
                    group, folder / "ROU-DEMO.sqlite", speed=speed, seed=seed, faults=faults
                )
                app = await stack.enter_async_context(open_table(config, broker=address))
                group.create_task(app.runner.run(), name="demo:roulette")
            if "baccarat" in tables:
                sim = await start_card_table(
                    group, folder / "BAC-DEMO.sqlite", seed=seed, speed=speed * 5
                )
                app = await stack.enter_async_context(
                    open_table(sim.config, broker=address, driver_kwargs=sim.driver_kwargs)
                )
                group.create_task(app.runner.run(), name="demo:baccarat")
                pace = DealerPace(betting=6.0 / speed, between_rounds=2.0 / speed)
                dealer = sim.dealer(app, pace=pace, shoes=0)  # shoe after shoe
                group.create_task(dealer.run(), name="demo:dealer")
            if "lucky7" in tables:
                draw = await start_draw_table(group, folder / "L7-DEMO.sqlite", speed=speed)
                app = await stack.enter_async_context(open_table(draw.config, broker=address))
                group.create_task(app.runner.run(), name="demo:lucky7")
                host = draw.presenter(app, betting=8.0 / speed, mixing=4.0 / speed)
                group.create_task(host.run(), name="demo:lucky7-host")
            if "dream_catcher" in tables:
                config = await start_wheel_table(
                    group, folder / "DC-DEMO.sqlite", speed=speed, every=12.0
                )
                app = await stack.enter_async_context(open_table(config, broker=address))
                group.create_task(app.runner.run(), name="demo:dream_catcher")
                wheel_host = SimulatedPresenter(app.runner, betting=4.0 / speed)
                group.create_task(wheel_host.run(), name="demo:dream_catcher-host")
            for game in (t for t in tables if t in GAMES or t in SHOE_VARIANTS):
                await _scripted_table(
                    group, stack, folder, address, game=game, seed=seed, speed=speed
                )
            for game in (t for t in tables if t in DICE_TABLES):
                await _dice_table(group, stack, folder, address, game=game, seed=seed, speed=speed)
            for game in (t for t in tables if t in ROULETTE_TABLES):
                await _roulette_game(
                    group, stack, folder, address, game=game, seed=seed, speed=speed
                )
            try:
                await done.wait()
            finally:
                for task in list(group._tasks):
                    task.cancel()
    return 0


async def _scripted_table(
    group: asyncio.TaskGroup,
    stack: contextlib.AsyncExitStack,
    folder: Path,
    address: tuple[str, int],
    *,
    game: str,
    seed: int,
    speed: float,
) -> None:
    """A card game table and its dealer (a dealer-screen game, or a shoe game's variant with its
    studio RNG)."""
    table_id = game.replace("_", "-").upper()[:12] + "-DEMO"
    sim = await start_scripted_table(
        group,
        folder / f"{table_id}.sqlite",
        game=game,
        table_id=table_id,
        seed=seed,
        speed=speed * 5,
    )
    app = await stack.enter_async_context(
        open_table(sim.config, broker=address, driver_kwargs=sim.driver_kwargs)
    )
    group.create_task(app.runner.run(), name=f"demo:{game}")
    start_card_rng(group, app.runner, sim.game, seed=seed)  # Golden Wealth / Lightning Baccarat
    pace = DealerPace(betting=6.0 / speed, between_rounds=2.0 / speed, decisions=3.0 / speed)
    group.create_task(sim.dealer(app, rounds=0, pace=pace).run(), name=f"demo:{game}-dealer")


async def _dice_table(
    group: asyncio.TaskGroup,
    stack: contextlib.AsyncExitStack,
    folder: Path,
    address: tuple[str, int],
    *,
    game: str,
    seed: int,
    speed: float,
) -> None:
    """A dice table: the unit runs the cycle; Lightning Dice's RNG strikes before the drop."""
    sim = await start_dice_table(
        group, folder / f"{game}.sqlite", game=game, seed=seed, speed=speed
    )
    app = await stack.enter_async_context(open_table(sim.config, broker=address))
    if game == "lightning_dice":
        rng = SimulatedRng(app.runner, sim.unit, seed=seed)
        app.runner.listeners.append(rng.on_record)
        group.create_task(rng.run(), name=f"demo:{game}-rng")
    group.create_task(app.runner.run(), name=f"demo:{game}")


async def _roulette_game(
    group: asyncio.TaskGroup,
    stack: contextlib.AsyncExitStack,
    folder: Path,
    address: tuple[str, int],
    *,
    game: str,
    seed: int,
    speed: float,
) -> None:
    """Lightning Roulette (the studio RNG strikes once bets close) or Double Ball Roulette (the
    wheel reports one ball, a simulated ball reader sends the other by command)."""
    sim = await start_roulette_game(
        group, folder / f"{game}.sqlite", game=game, seed=seed, speed=speed
    )
    app = await stack.enter_async_context(open_table(sim.config, broker=address))
    helper: lab_rng.SimulatedRng | SecondBallReader
    if game == "lightning_roulette":
        helper = lightning_rng(app.runner, seed=seed)
    else:
        helper = SecondBallReader(command_sender(sim.config, *address), seed=seed)
    app.runner.listeners.append(helper.on_record)
    group.create_task(helper.run(), name=f"demo:{game}-helper")
    group.create_task(app.runner.run(), name=f"demo:{game}")
