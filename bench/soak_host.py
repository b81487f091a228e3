"""``python -m bench.soak_host``: the process under test of ``python -m bench --soak``.

One roulette table (simulated SS2 wheel) and one baccarat table (simulated shuffler and shoe,
a simulated dealer), both real controllers built by :class:`tablectl.controller.lab.floor.LabFloor`
on the bench's Mosquitto, everything time-lapsed by ``--speed``. After ``--warmup`` seconds it
takes a tracemalloc snapshot and its RSS, samples its memory while the soak runs, takes a second
snapshot at the end and prints one JSON object on stdout: RSS and journal records at both ends,
the samples, and the allocation sites that grew most between the snapshots.

RSS is reported without tracemalloc's own bookkeeping (``get_tracemalloc_memory``), which grows
with every live block it traces. Each sample also splits it, to tell where growth is: ``traced``
(Python objects, as tracemalloc counts them), ``anon`` (every heap: Python's, SQLite's page
caches, paho's buffers, allocator arenas, thread stacks; ``Anonymous`` of
``/proc/self/smaps_rollup``) and ``file`` (mapped code and libraries, the rest of the RSS), and
counts the process's threads.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import sqlite3
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.support import proc_rss_kb
from tablectl.controller.lab.floor import LabFloor
from tablectl.controller.service.logs import configure_logging

TABLES = ("roulette", "baccarat")
TOP = 15
"""How many growth sites the report lists."""
SAMPLES = 40
"""Memory readings over the soak (at most one a second): the growth is a fit over the second
half of them (:mod:`bench.soak`), which needs more than a handful."""


class _SoakOverError(Exception):
    """Raised in the task group when the soak is over: stops every table."""


def _records(journals: dict[str, Path]) -> int:
    total = 0
    for path in journals.values():
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            total += int(conn.execute("SELECT coalesce(max(seq), 0) FROM records").fetchone()[0])
        finally:
            conn.close()
    return total


def _rss_mb() -> float:
    """This process's RSS without tracemalloc's own memory, MB."""
    own = tracemalloc.get_tracemalloc_memory() if tracemalloc.is_tracing() else 0
    return round((proc_rss_kb(os.getpid()) * 1024 - own) / 2**20, 2)


def _sample(t: float, records: int) -> dict[str, Any]:
    """One reading: RSS (:func:`_rss_mb`) and its parts, MB, and the thread count."""
    rollup = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines()[1:]:
        key, _, rest = line.partition(":")
        rollup[key] = int(rest.split()[0])  # kB
    own = tracemalloc.get_tracemalloc_memory() if tracemalloc.is_tracing() else 0
    anon = (rollup["Anonymous"] * 1024 - own) / 2**20
    return {
        "t_s": round(t, 1),
        "records": records,
        "rss_mb": _rss_mb(),
        "anon_mb": round(anon, 2),
        "file_mb": round((rollup["Rss"] - rollup["Anonymous"]) / 1024, 2),
        "traced_mb": round(tracemalloc.get_traced_memory()[0] / 2**20, 2),
        "threads": len(os.listdir("/proc/self/task")),
    }


def _snapshot() -> tracemalloc.Snapshot:
    """The live Python objects, after a full collection.

    Without it the diff listed garbage in reference cycles waiting for the next full collection
    (~200 kB of roulette results, ``dataclasses.replace`` in the engine, in a 240 s soak) as
    growth: a collection at the end found none of it alive.
    """
    gc.collect()
    return tracemalloc.take_snapshot()


def _growth(before: tracemalloc.Snapshot, after: tracemalloc.Snapshot) -> list[dict[str, Any]]:
    repo = str(Path(__file__).resolve().parents[1]) + "/"
    own = [tracemalloc.Filter(False, tracemalloc.__file__)]  # the snapshots' own frames
    stats = after.filter_traces(own).compare_to(before.filter_traces(own), "traceback")
    stats.sort(key=lambda s: s.size_diff, reverse=True)
    out = []
    for stat in stats[:TOP]:
        frames = [f"{f.filename.replace(repo, '')}:{f.lineno}" for f in stat.traceback]
        out.append(
            {
                "site": frames[-1] if frames else "?",
                "traceback": frames,
                "size_diff_kb": round(stat.size_diff / 1024, 1),
                "count_diff": stat.count_diff,
            }
        )
    return out


async def _measure(floor: LabFloor, *, seconds: float, warmup: float) -> dict[str, Any]:
    await asyncio.sleep(warmup)
    before = _snapshot()
    t0, rss0, records0 = time.monotonic(), _rss_mb(), _records(floor.journals)
    samples = [_sample(0.0, records0)]
    step = max(1.0, seconds / SAMPLES)
    while (elapsed := time.monotonic() - t0) < seconds:
        await asyncio.sleep(min(step, seconds - elapsed))
        samples.append(_sample(time.monotonic() - t0, _records(floor.journals)))
    # The last reading comes before the second snapshot: a snapshot is a few MB of Python
    # objects, and reading the RSS after it counted them as growth (~4.5 MB in a 240 s soak).
    rss1, records1 = samples[-1]["rss_mb"], samples[-1]["records"]
    after = _snapshot()
    traced0 = sum(s.size for s in before.statistics("filename"))
    traced1 = sum(s.size for s in after.statistics("filename"))
    return {
        "tables": list(floor.journals),
        "warmup_s": warmup,
        "seconds": seconds,
        "rss_after_warmup_mb": rss0,
        "rss_end_mb": rss1,
        "records_after_warmup": records0,
        "records_end": records1,
        "traced_growth_kb": round((traced1 - traced0) / 1024, 1),
        "samples": samples,
        "top_growth": _growth(before, after),
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    host, _, port = args.broker.rpartition(":")
    result: dict[str, Any] = {}

    async def soak(floor: LabFloor) -> None:
        result.update(await _measure(floor, seconds=args.seconds, warmup=args.warmup))
        raise _SoakOverError

    try:
        async with contextlib.AsyncExitStack() as stack, asyncio.TaskGroup() as group:
            floor = LabFloor(group, stack, args.dir, (host, int(port)), speed=args.speed, seed=7)
            for name in TABLES:
                await floor.start(name)
            group.create_task(soak(floor), name="soak")
    except* _SoakOverError:
        pass
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.soak_host")
    parser.add_argument("--broker", required=True, help="HOST:PORT")
    parser.add_argument("--dir", type=Path, required=True, help="where the journals go")
    parser.add_argument("--seconds", type=float, required=True)
    parser.add_argument("--warmup", type=float, default=60.0)
    parser.add_argument("--speed", type=float, default=40.0)
    parser.add_argument("--frames", type=int, default=4, help="tracemalloc frames per site")
    parsed = parser.parse_args()
    configure_logging("json")
    tracemalloc.start(parsed.frames)
    print(json.dumps(asyncio.run(main(parsed))), flush=True)
    sys.exit(0)
