"""``tablectl demo``: a whole roulette table on one machine, one command.

Starts an in-process MQTT broker, a simulated Cammegh SS2 wheel on a local TCP port (the same
``socket://`` URL a bench config would use), the real controller (journal, engine, publisher)
and a live view subscribed to the broker like any results display. Nothing is mocked: only the
wheel is simulated, and it speaks the real wire protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from controller.app import open_table
from controller.broker import EmbeddedBroker
from controller.config import parse_config
from controller.watch import watch
from simulators.serve import serve_tcp
from simulators.ss2 import FaultSpec, SimSS2

__all__ = ["demo_config", "run_demo"]

TABLE_ID = "ROU-DEMO"


def demo_config(journal: Path, wheel_port: int, *, source: str = "<demo>") -> dict[str, object]:
    """The demo table's config, as a TOML document would decode."""
    return {
        "table": {"id": TABLE_ID, "game": "roulette"},
        "rules": {"variant": "european", "min_revolutions": 4},
        "mqtt": {"url": "embedded", "topic_prefix": "tablectl"},
        "journal": {"path": str(journal)},
        "devices": [
            {
                "id": "wheel",
                "driver": "cammegh-ss2",
                "port": f"socket://127.0.0.1:{wheel_port}",
                "sensor_stream": True,
            }
        ],
    }


async def run_demo(
    *,
    speed: float = 4.0,
    rounds: int = 0,
    seed: int = 7,
    faults: Sequence[str] = ("misspin@3",),
    state_dir: Path | None = None,
) -> int:
    """Run until Ctrl-C, or until ``rounds`` outcomes were shown."""
    fault_specs = [FaultSpec.from_spec(text) for text in faults]
    model = SimSS2(seed=seed, speed=speed, faults=fault_specs)
    wheel_ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()
    shown = 0

    def show(line: str) -> None:
        nonlocal shown
        print(line, flush=True)
        if line.startswith("OUTCOME"):
            shown += 1
            if rounds and shown >= rounds:
                done.set()

    with contextlib.ExitStack() as files:
        folder = state_dir or Path(files.enter_context(tempfile.TemporaryDirectory()))
        async with EmbeddedBroker() as broker, asyncio.TaskGroup() as group:
            wheel = group.create_task(
                serve_tcp(model, "127.0.0.1", 0, on_ready=wheel_ready.set_result),
                name="demo:wheel",
            )
            where = await wheel_ready
            port = int(where.rsplit(":", 1)[-1])
            config = parse_config(demo_config(folder / "ROU-DEMO.sqlite", port))
            print(
                f"tablectl demo: broker mqtt://{broker.host}:{broker.port}, "
                f"wheel socket://{where}, journal {config.journal.path}\n"
                f"watch it from another shell: tablectl watch --url "
                f"mqtt://{broker.host}:{broker.port}\n",
                flush=True,
            )
            viewer = group.create_task(
                watch(
                    broker.host,
                    broker.port,
                    f"tablectl/{TABLE_ID}/#",
                    emit=show,
                    colour=sys.stdout.isatty(),
                ),
                name="demo:view",
            )
            async with open_table(config, broker=(broker.host, broker.port)) as app:
                table = group.create_task(app.runner.run(), name="demo:table")
                stopper = asyncio.ensure_future(done.wait())
                try:
                    await asyncio.wait({stopper, table}, return_when=asyncio.FIRST_COMPLETED)
                except asyncio.CancelledError:
                    pass
                finally:
                    stopper.cancel()
                    for task in (table, viewer, wheel):
                        task.cancel()
    return 0
