"""Simulated dice tables for the demo and the end-to-end tests: a real driver, a simulated unit
that runs its own cycle as a roulette wheel does. Lightning Dice's RNG strikes once bets are closed,
and only then does the dealer drop the dice (seed-001 L3067).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tablectl.controller.config import TableConfig
from tablectl.controller.lab import rng
from tablectl.controller.lab.tables import lab_config, serve_sim, socket_device
from tablectl.controller.service.runner import TableRunner
from tablectl.simulators.dice import FaultSpec, SimDice

DICE_TABLES: Final = ("sic_bo", "craps", "dice_duel", "lightning_dice")
"""The dice games a lab table can run (``tablectl demo --tables sic_bo,craps``)."""

_DICE: Final = {"sic_bo": 3, "craps": 2, "dice_duel": 2, "lightning_dice": 3}
_COLORS: Final = {"dice_duel": ("red", "blue")}


@dataclass
class DiceTableSim:
    """A dice table's simulated unit and config."""

    config: TableConfig
    unit: SimDice
    game: str


async def start_dice_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    game: str,
    table_id: str | None = None,
    speed: float = 4.0,
    seed: int = 11,
    faults: Sequence[str] = (),
    faces: Sequence[Sequence[int]] = (),
    betting_seconds: float = 8.0,
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> DiceTableSim:
    """A simulated dice unit on a local TCP port, and the dice table's config. Lightning Dice's unit
    waits for the dealer's drop (after the RNG's strike); the others shake by themselves."""
    if game not in _DICE:
        raise ValueError(f"no lab dice table for {game!r} (known: {', '.join(DICE_TABLES)})")
    unit = SimDice(
        seed=seed,
        speed=speed,
        dice=_DICE[game],
        colors=_COLORS.get(game),
        faults=[FaultSpec.from_spec(f) for f in faults],
        faces=faces,
        betting_seconds=betting_seconds,
        roll_delay=None if game == "lightning_dice" else 1.0,
    )
    name = table_id or game.replace("_", "-").upper() + "-DEMO"
    port = await serve_sim(group, unit, f"sim:{name}:dice")
    device = socket_device("dice", "tablectl-dice", port, dice=_DICE[game])
    if game in _COLORS:
        device["colors"] = list(_COLORS[game])
    config = lab_config(
        name,
        game,
        journal,
        [device],
        # The simulated unit runs at ``speed``: its tumble is that much shorter.
        rules={"min_tumble_seconds": round(1.0 / speed, 3)},
        mqtt_url=mqtt_url,
        prefix=prefix,
    )
    return DiceTableSim(config=config, unit=unit, game=game)


class SimulatedRng(rng.SimulatedRng):
    """A studio RNG and the Lightning Dice dealer: after bets close, strike 1–5 lightning numbers
    (3–18, multipliers 50x–1000x), journal them as ``rng_draw``, then drop the dice."""

    MULTIPLIERS: Final = (50, 100, 150, 200, 250, 500, 1000)

    def __init__(self, runner: TableRunner, unit: SimDice, *, seed: int = 0) -> None:
        super().__init__(
            runner,
            values=range(3, 19),
            multipliers=self.MULTIPLIERS,
            seed=seed,
            after=lambda: unit.press_roll(time.monotonic()),
        )
