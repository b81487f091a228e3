"""In-process tables for service tests: a simulated SS2 wheel on a pty and a config pointing at it.

Why in-process (and not ``tablectl run`` as a subprocess like the e2e tests): the service tests
look inside the process (the metrics registry, the notify socket, a deliberately stalled loop),
and several tables must share one loop for the multi-table host.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tablectl.controller.config import TableConfig, parse_config
from tablectl.simulators.serve import serve_pty
from tablectl.simulators.ss2 import FaultSpec, SimSS2

__all__ = ["SimWheel", "roulette_config", "scrape", "sim_wheel"]

SPEED = 40.0
"""Simulator time-lapse: a game takes about 0.6 s."""


@dataclass
class SimWheel:
    """A simulated wheel served on a pty; ``link`` is the stable path the table opens."""

    link: Path
    model: SimSS2
    task: asyncio.Task[None]

    async def unplug(self) -> None:
        """Kill the simulator: the pty closes and its link disappears, as when a cable is pulled."""
        self.task.cancel()
        await asyncio.wait({self.task})


@contextlib.asynccontextmanager
async def sim_wheel(
    link: Path,
    *,
    seed: int = 1,
    speed: float = SPEED,
    faults: Sequence[str] = (),
    numbers: Sequence[int | str] | None = None,
) -> AsyncIterator[SimWheel]:
    model = SimSS2(
        seed=seed,
        speed=speed,
        faults=[FaultSpec.from_spec(f) for f in faults],
        numbers=numbers,
    )
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    task = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    waiting: set[asyncio.Future[Any]] = {ready, task}
    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        task.result()  # raises what went wrong
    wheel = SimWheel(link, model, task)
    try:
        yield wheel
    finally:
        await wheel.unplug()


def roulette_config(
    table_id: str, port: Path | str, journal: Path, mqtt_url: str, **extra: Any
) -> TableConfig:
    """A roulette table with one SS2 wheel; fast reconnects so tests do not wait on backoff."""
    data: dict[str, Any] = {
        "table": {"id": table_id, "game": "roulette"},
        "rules": {"min_revolutions": 4},
        "mqtt": {"url": mqtt_url, "topic_prefix": "it", "reconnect_max_delay": 0.5},
        "journal": {"path": str(journal)},
        # A lab table: tests send unsigned commands (pass security=... to test [security]).
        "security": {"insecure_commands": True},
        "devices": [
            {
                "id": "wheel",
                "driver": "cammegh-ss2",
                "port": str(port),
                "reconnect_max_delay": 0.5,
            }
        ],
        **extra,
    }
    return parse_config(data, f"<{table_id}>")


async def scrape(port: int, path: str = "/metrics", host: str = "127.0.0.1") -> tuple[int, str]:
    """One HTTP GET; ``(status, body)``."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        await writer.drain()
        raw = await asyncio.wait_for(reader.read(), timeout=5)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    head, _, body = raw.decode("utf-8").partition("\r\n\r\n")
    return int(head.split(" ", 2)[1]), body


def sample(body: str, name: str, **labels: str) -> float | None:
    """The value of one sample in a text exposition, or ``None`` if it is absent."""
    wanted = ",".join(f'{k}="{v}"' for k, v in labels.items())
    for line in body.splitlines():
        if line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        metric, _, label_text = key.partition("{")
        if metric != name:
            continue
        present = label_text.rstrip("}")
        if all(part in present.split(",") for part in wanted.split(",") if part):
            return float(value)
    return None
