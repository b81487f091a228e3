"""Cold start to READY and resident memory of one table.

READY is the retained ``status`` online message seen by a subscriber: the process has started,
imported everything, opened and recovered its journal, and its publisher is connected — the moment
the table can publish an outcome. Measured from ``Popen`` on a fresh journal (median of several
starts), then twice on the latency benchmark's journal: without its checkpoint, where recovery
replays every journaled event through the engine first, and with the checkpoint that start left
(``tablectl.controller.service.checkpoint``), where it replays nothing.
"""

from __future__ import annotations

import sqlite3
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.support import REPO, Broker, proc_rss_kb
from bench.table import SingleTable
from tablectl.controller.service.checkpoint import checkpoint_path

__all__ = ["measure_cold_start", "measure_imports"]


def measure_imports(runs: int) -> float:
    """Seconds for a bare interpreter to import what ``tablectl run`` imports (median)."""
    code = (
        "import tablectl.controller.tools.cli, tablectl.controller.service.process,"
        " tablectl.controller.config, tablectl.drivers.ss2.driver, serial"
    )
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


async def measure_cold_start(
    broker: Broker, workdir: Path, *, runs: int, history: tuple[str, Path] | None
) -> dict[str, Any]:
    starts: list[float] = []
    rss_ready: list[int] = []
    for run in range(runs):
        async with SingleTable(broker, workdir, f"BENCH-COLD-{run}") as table:
            starts.append(await table.start())
            assert table.proc is not None
            rss_ready.append(proc_rss_kb(table.proc.pid))
    result: dict[str, Any] = {
        "runs": runs,
        "cold_start_s": round(statistics.median(starts), 3),
        "cold_start_max_s": round(max(starts), 3),
        "rss_at_ready_mb": round(statistics.median(rss_ready) / 1024, 1),
        "interpreter_and_imports_s": round(measure_imports(runs), 3),
    }
    if history is not None:
        table_id, journal = history
        checkpoint_path(journal).unlink(missing_ok=True)
        async with SingleTable(broker, workdir, table_id, journal=journal) as table:
            result["cold_start_with_journal_s"] = round(await table.start(), 3)
        async with SingleTable(broker, workdir, table_id, journal=journal) as table:
            result["cold_start_from_checkpoint_s"] = round(await table.start(), 3)
        with_records = _count(journal)
        result["journal_records"] = with_records
    return result


def _count(journal: Path) -> int:
    conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM records").fetchone()[0])
    finally:
        conn.close()
