"""Simulated Lightning and Double Ball Roulette tables: a simulated SS2 wheel, plus what the wheel
cannot report.

Lightning (seed-001 L115): the lab RNG strikes once bets close, with seed-000's multipliers
(L255–265). Double Ball (seed-001 L119): the SS2 reports one number, the first ball's; the second
comes from a ball-recognition service (:class:`SecondBallReader`) as a ``cmd/event``.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tablectl.controller.config import MqttConfig, TableConfig
from tablectl.controller.games.lightning_roulette import DEFAULT_MULTIPLIERS
from tablectl.controller.journal import JournalRecord
from tablectl.controller.lab.rng import RngPicker, SimulatedRng
from tablectl.controller.lab.tables import lab_config, serve_sim, socket_device
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.commander import send_command
from tablectl.simulators.ss2 import FaultSpec, SimSS2

ROULETTE_TABLES: Final = ("lightning_roulette", "double_ball_roulette")
"""The roulette games a lab table runs besides plain roulette (``tablectl demo --tables``)."""
_DEMO_IDS: Final = {"lightning_roulette": "LR-DEMO", "double_ball_roulette": "DB-DEMO"}

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any] | None]]
"""Sends one ``cmd/event`` request, returns the table's reply (``None``: none came)."""


@dataclass
class RouletteTableSim:
    """A roulette-family table's simulated wheel and config."""

    config: TableConfig
    wheel: SimSS2
    game: str


async def start_roulette_game(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    game: str,
    table_id: str | None = None,
    speed: float = 4.0,
    seed: int = 7,
    numbers: Sequence[int] | None = None,
    faults: Sequence[str] = (),
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> RouletteTableSim:
    """A simulated SS2 wheel on a local TCP port (``numbers``: its scripted results), and the
    table's config for ``game`` (its catalog preset, min_revolutions 4 as the demo's roulette)."""
    wheel = SimSS2(
        seed=seed,
        speed=speed,
        numbers=numbers,
        faults=[FaultSpec.from_spec(f) for f in faults],
        wait_for_host=True,  # game 1 starts when the driver is there: scripted numbers line up
    )
    name = table_id or _DEMO_IDS.get(game, "ROU-DEMO")
    port = await serve_sim(group, wheel, f"sim:{name}:wheel")
    config = lab_config(
        name,
        game,
        journal,
        [socket_device("wheel", "cammegh-ss2", port, sensor_stream=True)],
        rules={"min_revolutions": 4},
        mqtt_url=mqtt_url,
        prefix=prefix,
    )
    return RouletteTableSim(config=config, wheel=wheel, game=game)


def lightning_picker(*, seed: int = 0) -> RngPicker:
    """Lightning Roulette's picks: 1–5 pockets of 0–36 (seed-000 L255), each with one of
    seed-000's multipliers (L256–265)."""
    return RngPicker(values=range(37), multipliers=DEFAULT_MULTIPLIERS, count=(1, 5), seed=seed)


def lightning_rng(runner: TableRunner, *, seed: int = 0) -> SimulatedRng:
    """Lightning Roulette's RNG at ``runner``'s table, striking once bets close (seed-001 L115)
    (:func:`lightning_picker` with the same seed previews its draws)."""
    return SimulatedRng(
        runner, values=range(37), multipliers=DEFAULT_MULTIPLIERS, count=(1, 5), seed=seed
    )


def command_sender(config: TableConfig, host: str, port: int) -> Send:
    """A :data:`Send` over the table's broker at ``host:port`` (the embedded one in the demo)."""
    mqtt = MqttConfig(url=f"mqtt://{host}:{port}")
    topics = Topics(config.mqtt.topic_prefix, config.table.id)

    def send(request: dict[str, Any]) -> Awaitable[dict[str, Any] | None]:
        return send_command(mqtt, topics, "event", request)

    return send


@dataclass
class SecondBallReader:
    """A double-ball wheel's second reader: after each close of bets, the following ball's number
    (scripted ``numbers`` first, then seeded at random), sent as ``cmd/event``."""

    send: Send
    numbers: Sequence[int] = ()
    seed: int = 0
    replies: list[dict[str, Any] | None] = field(default_factory=list)
    """The table's reply to each number sent (``ok``, ``seq``, …; ``None``: no reply)."""

    def __post_init__(self) -> None:
        self._script = iter(self.numbers)
        self._rng = random.Random(self.seed)
        self._closed: asyncio.Queue[str] = asyncio.Queue()
        self._ids = itertools.count(1)

    def on_record(self, record: JournalRecord) -> None:
        """Runner listener: each close of bets is a spin whose second ball is due."""
        if record.type == "bets_closed":
            self._closed.put_nowait(record.ts)

    def read(self) -> int:
        """Where the following ball settled."""
        scripted = next(self._script, None)
        return scripted if scripted is not None else self._rng.randrange(37)

    async def run(self) -> None:
        """Send the second ball of every spin, until cancelled."""
        while True:
            await self._closed.get()
            event = {"type": "winning_number", "number": self.read(), "ball": 2}
            request = {"id": f"ball2-{next(self._ids)}", "event": event}
            self.replies.append(await self.send(request))
