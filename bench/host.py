"""``python -m bench.host CONFIG...``: several tables in one process, for the scaling benchmark.

Each table is built exactly as ``tablectl run`` builds one
(:func:`tablectl.controller.service.app.open_table`: its own journal, drivers, engine, runner and
MQTT Publisher), and all run on one event loop. Prints ``READY`` on stdout once every publisher is
connected; SIGTERM stops it gracefully.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from pathlib import Path

from tablectl.controller.config import load_config
from tablectl.controller.service.app import TableApp, open_table
from tablectl.controller.service.logs import configure_logging
from tablectl.controller.service.process import run_until_signal


async def _run_all(apps: list[TableApp]) -> None:
    async with asyncio.TaskGroup() as group:
        for app in apps:
            group.create_task(app.runner.run(), name=f"table:{app.config.table.id}")


async def main(paths: list[Path]) -> None:
    configs = [load_config(path) for path in paths]
    async with contextlib.AsyncExitStack() as stack:
        apps = [await stack.enter_async_context(open_table(config)) for config in configs]
        async with asyncio.timeout(60):
            await asyncio.gather(*(app.publisher.wait_connected() for app in apps))
        print("READY", flush=True)
        await run_until_signal(_run_all(apps))


if __name__ == "__main__":
    configure_logging("json")
    asyncio.run(main([Path(arg) for arg in sys.argv[1:]]))
