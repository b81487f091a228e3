"""Simulated money-wheel tables whose presenter sets the wheel going: a real driver, a simulated
big-wheel sensor, and the studio's RNG for a wheel with an overlay.

The wheel is spun by hand once a round, after bets close and the RNG draw is journaled (seed-001
§2.2 (d); Music Wheel L4339, Mega Wheel L3959), in the scripted order of ``stops``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tablectl.controller.config import TableConfig
from tablectl.controller.engines import load_rules
from tablectl.controller.games.wheel import WheelRules, is_number
from tablectl.controller.lab.dealer import SimulatedPresenter
from tablectl.controller.lab.rng import SimulatedRng
from tablectl.controller.lab.tables import lab_config, serve_sim, socket_device
from tablectl.controller.service.app import TableApp
from tablectl.drivers.bigwheel.driver import BigWheelDriver
from tablectl.simulators.bigwheel import SimBigWheel

_MULTIPLIERS: Final = {
    # Mega Wheel L3963: "a Mega Win with odds up to x500".
    "lucky_number": (10, 20, 50, 100, 250, 500),
    # Music Wheel L4339–4341: the bonus odds are the paytable's; the device's pick carries one.
    "bonus_sector": (2, 3, 5),
    # Crazy Time L2051–2057: the Top Slot's right reel [GAP: its multipliers].
    "top_slot": (2, 3, 5, 10, 25, 50),
}


@dataclass
class WheelTableSim:
    """A money-wheel table's simulated sensor, its layout and config."""

    config: TableConfig
    wheel: SimBigWheel
    rules: WheelRules

    def rng(self, app: TableApp, *, seed: int = 0) -> SimulatedRng | None:
        """The studio RNG of the wheel's overlay (``None``: the wheel has none), listening to the
        table's journal; run its :meth:`~SimulatedRng.run` beside the table."""
        rules = self.rules
        if rules.rng == "none":
            return None
        values: Sequence[int | str]
        if rules.rng == "bonus_sector" or rules.rng_scope == "segment":
            values = range(rules.size)  # the device lights one sector
        else:
            labels = sorted(set(rules.segments))
            values = [int(s) if is_number(s) else s for s in labels]
        rng = SimulatedRng(
            app.runner, values=values, multipliers=_MULTIPLIERS[rules.rng], count=(1, 1), seed=seed
        )
        app.runner.listeners.append(rng.on_record)
        return rng

    def presenter(
        self, app: TableApp, *, rng: SimulatedRng | None = None, betting: float = 0.1
    ) -> SimulatedPresenter:
        """The presenter: opens betting, closes it, waits for the RNG's draw of the round (when
        there is an RNG) and for the wheel's link, then sets the wheel going."""
        driver = next(d for d in app.runner.drivers if isinstance(d, BigWheelDriver))
        presenter: SimulatedPresenter

        async def spin() -> None:
            drawn = presenter.rounds  # one draw a round, struck on its close of bets
            while not driver.available or (rng is not None and rng.strikes < drawn):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
            self.wheel.press_spin(time.monotonic())

        presenter = SimulatedPresenter(app.runner, start=spin, betting=betting)
        return presenter


async def start_money_wheel_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    game: str,
    table_id: str | None = None,
    rules: dict[str, Any] | None = None,
    stops: Sequence[int] | None = None,
    seed: int = 3,
    speed: float = 40.0,
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> WheelTableSim:
    """A simulated big-wheel sensor spun by hand on a local TCP port, and the table's config
    (the game's preset layout, ``rules`` on top; the sensor configured for its segment count)."""
    raw = dict(rules or {})
    loaded: WheelRules = load_rules(game, raw, source=f"<{game}>")
    wheel = SimBigWheel(seed=seed, speed=speed, segments=loaded.size, stops=stops, by_hand=True)
    name = table_id or game.replace("_", "-").upper() + "-DEMO"
    port = await serve_sim(group, wheel, f"sim:{name}:wheel")
    config = lab_config(
        name,
        game,
        journal,
        [socket_device("wheel", "tablectl-bigwheel", port, segments=loaded.size)],
        rules=raw,
        external_betting=True,
        mqtt_url=mqtt_url,
        prefix=prefix,
    )
    return WheelTableSim(config=config, wheel=wheel, rules=loaded)
