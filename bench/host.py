"""``python -m bench.host CONFIG...``: several tables in one process, for the scaling benchmark.

Each table is built exactly as ``tablectl run`` builds one
(:func:`tablectl.controller.service.app.open_table`: its own journal, drivers, engine, runner and
MQTT Publisher), and all run on one event loop. Prints ``READY`` on stdout once every publisher is
connected; SIGTERM stops it gracefully.

``--slow-journal TABLE=SECONDS`` is a **bench fault injection**, the slow disk of the scaling
benchmark: every journal write of table ``TABLE`` sleeps ``SECONDS`` first, on the event loop,
exactly where an fsync on a throttled disk would block today. It exists only in this harness (no
config key, no ``tablectl`` option reaches it).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tablectl.controller.config import load_config
from tablectl.controller.journal import Committed, Journal
from tablectl.controller.service.app import TableApp, open_table
from tablectl.controller.service.logs import configure_logging
from tablectl.controller.service.process import run_until_signal


async def _run_all(apps: list[TableApp]) -> None:
    async with asyncio.TaskGroup() as group:
        for app in apps:
            group.create_task(app.runner.run(), name=f"table:{app.config.table.id}")


def inject_slow_journal(journal: Journal, delay: float) -> None:
    """BENCH FAULT INJECTION: every ``journal.commit`` (``append`` too: it commits) of this one
    journal sleeps ``delay`` seconds first (blocking the thread it runs on, as an fsync on a
    slow disk blocks), then writes as usual."""
    commit = journal.commit

    def slow_commit(
        records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        time.sleep(delay)
        return commit(records, after_seq=after_seq)

    journal.commit = slow_commit  # type: ignore[method-assign]


async def main(paths: list[Path], slow: dict[str, float]) -> None:
    configs = [load_config(path) for path in paths]
    async with contextlib.AsyncExitStack() as stack:
        apps = [await stack.enter_async_context(open_table(config)) for config in configs]
        for app in apps:
            delay = slow.get(app.config.table.id)
            if delay is not None:
                inject_slow_journal(app.journal, delay)
        async with asyncio.timeout(60):
            await asyncio.gather(*(app.publisher.wait_connected() for app in apps))
        print("READY", flush=True)
        await run_until_signal(_run_all(apps))


def _slow(text: str) -> tuple[str, float]:
    table, _, seconds = text.partition("=")
    return table, float(seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.host")
    parser.add_argument("configs", type=Path, nargs="+")
    parser.add_argument("--slow-journal", type=_slow, action="append", default=[])
    args = parser.parse_args()
    configure_logging("json")
    asyncio.run(main(args.configs, dict(args.slow_journal)))
