"""Many tables in one process: CPU per table and p99 outcome latency per table count.

``python -m bench.host`` runs N roulette tables on one event loop (each with its own wheel pty,
journal and MQTT connection to the one Mosquitto). The harness drives every wheel with the SS2
round of the latency benchmark, but paced: one line every ``period / 4`` seconds per table, the
tables evenly staggered. Time is compressed: a real wheel spins every 30–60 s, here a round
takes ``period`` (2 s by default, 15–30× faster), while the line rate per table — two lines a
second — is what a real wheel sends anyway (a status line every 500 ms) and what a card table
produces at a card every 0.5 s.

With ``slow`` set, the last run is repeated with a slow disk for one table (a **bench fault
injection**: ``python -m bench.host --slow-journal``, every journal write of the first table
sleeps that long on the loop, as a throttled fsync does) and reports the other tables' latency
apart: no table should be stalled by another's disk.

Per table count: seconds from process start to READY (all publishers connected), CPU of the
host process per table while idle (wheels silent) and while driven, p50/p99/max of line →
outcome, and RSS (total and per table).
"""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.mqtt import Subscriber
from bench.support import (
    PREFIX,
    Broker,
    WheelLines,
    WheelPty,
    proc_cpu_seconds,
    proc_rss_kb,
    proc_runqueue_wait_seconds,
    start_module,
    stop_process,
    summarize_ms,
    write_table_config,
)

__all__ = ["measure_scaling"]


async def measure_scaling(
    broker: Broker,
    workdir: Path,
    *,
    counts: tuple[int, ...],
    period: float,
    window: float,
    idle: float,
    slow: float = 0.0,
) -> dict[str, Any]:
    runs = []
    for n in counts:
        runs.append(
            await _run(broker, workdir / f"scale-{n}", n, period=period, window=window, idle=idle)
        )
    slow_run = None
    if slow > 0 and counts:
        n = counts[-1]
        slow_run = await _run(
            broker,
            workdir / f"scale-{n}-slow",
            n,
            period=period,
            window=window,
            idle=idle,
            slow=slow,
        )
    one = next((r for r in runs if r["tables"] == 1), None)
    for run in runs:
        if one is not None and run["tables"] > 1:
            run["rss_marginal_mb_per_table"] = round(
                (run["rss_mb"] - one["rss_mb"]) / (run["tables"] - 1), 2
            )
    return {
        "period_s": period,
        "window_s": window,
        "events_per_s_per_table": round(4 / period, 2),
        "time_compression": f"a spin every {period:g} s instead of every 30 s",
        "runs": runs,
        "slow_disk": slow_run,
    }


async def _run(
    broker: Broker,
    workdir: Path,
    n: int,
    *,
    period: float,
    window: float,
    idle: float,
    slow: float = 0.0,
) -> dict[str, Any]:
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    ids = [f"BENCH-S{n:03d}-{i:03d}" for i in range(n)]
    wheels = [WheelPty() for _ in range(n)]
    lines = [WheelLines() for _ in range(n)]
    configs = [
        write_table_config(
            workdir / f"{table}.toml",
            table=table,
            port=wheel.path,
            broker=broker,
            journal=workdir / f"{table}.sqlite",
        )
        for table, wheel in zip(ids, wheels, strict=True)
    ]
    index = {table: i for i, table in enumerate(ids)}
    available: set[str] = set()
    sent_at: dict[int, tuple[int, bool]] = {}
    samples: list[tuple[int, int]] = []  # (table index, ns)
    measuring = [False]

    def on_message(topic: str, payload: bytes, t_ns: int) -> None:
        parts = topic.split("/")
        table = parts[1]
        if parts[-1] == "outcome":
            i = index.get(table, -1)
            sent = sent_at.pop(i, None)
            if sent is not None and sent[1]:
                samples.append((i, t_ns - sent[0]))
        elif b'"available":true' in payload:
            available.add(table)

    filters = [f"{PREFIX}/+/outcome", f"{PREFIX}/+/devices/wheel"]
    proc = None
    try:
        async with Subscriber(broker.host, broker.port, filters, on_message):
            t_start = time.perf_counter()
            proc = start_module("bench.host", _host_args(configs, ids, slow), workdir / "host.log")
            await _wait_ready(proc, workdir / "host.log")
            ready_s = time.perf_counter() - t_start
            await _warm_up(wheels, lines, available)
            await asyncio.sleep(0.2)
            pid = proc.pid
            cpu0 = proc_cpu_seconds(pid)
            await asyncio.sleep(idle)
            idle_cpu = (proc_cpu_seconds(pid) - cpu0) / idle
            rss_idle = proc_rss_kb(pid)
            wait0 = proc_runqueue_wait_seconds(pid)
            active_cpu, expected = await _drive(
                wheels, lines, sent_at, measuring, pid, period=period, window=window
            )
            # Time the host was runnable but not running: other load on the machine.
            runqueue_wait = (proc_runqueue_wait_seconds(pid) - wait0) / (window + period)
            await asyncio.sleep(0.3)
            rss = proc_rss_kb(pid)
    finally:
        if proc is not None:
            await asyncio.to_thread(stop_process, proc)
        for wheel in wheels:
            wheel.close()
    latency = summarize_ms([ns for _, ns in samples])
    result: dict[str, Any] = {
        "tables": n,
        "ready_s": round(ready_s, 3),
        "idle_cpu_percent_per_table": round(idle_cpu * 100 / n, 3),
        "cpu_percent_per_table": round(active_cpu * 100 / n, 3),
        "cpu_percent_total": round(active_cpu * 100, 1),
        "outcome": latency,
        "runqueue_wait_percent": round(runqueue_wait * 100, 1),
        "outcomes_expected": expected,
        "outcomes_received": latency["n"],
        "rss_idle_mb": round(rss_idle / 1024, 1),
        "rss_mb": round(rss / 1024, 1),
        "rss_mb_per_table": round(rss / 1024 / n, 2),
    }
    if slow > 0:
        result.update(_apart(ids[0], slow, samples))
    return result


def _apart(slow_table: str, slow: float, samples: list[tuple[int, int]]) -> dict[str, Any]:
    """The slow table's latency and the other tables' (table index 0 is the slow one)."""
    return {
        "slow_table": slow_table,
        "slow_journal_write_s": slow,
        "slow_table_outcome": summarize_ms([ns for i, ns in samples if i == 0]),
        "other_tables_outcome": summarize_ms([ns for i, ns in samples if i != 0]),
    }


def _host_args(configs: list[Path], ids: list[str], slow: float) -> list[str]:
    args = [str(c) for c in configs]
    if slow > 0:  # BENCH FAULT INJECTION: the first table's disk is slow
        args += ["--slow-journal", f"{ids[0]}={slow}"]
    return args


async def _wait_ready(proc: subprocess.Popen[bytes], log: Path) -> None:
    assert proc.stdout is not None
    line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 120)
    if not line.startswith(b"READY"):
        raise RuntimeError(f"bench.host not ready; see {log}")


async def _warm_up(wheels: list[WheelPty], lines: list[WheelLines], available: set[str]) -> None:
    """Idle status lines until every table reports its wheel available."""
    deadline = time.monotonic() + 60
    while len(available) < len(wheels):
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {len(available)}/{len(wheels)} wheels became available")
        for wheel, feed in zip(wheels, lines, strict=True):
            wheel.write(feed.idle())
        await asyncio.sleep(0.1)


async def _drive(
    wheels: list[WheelPty],
    lines: list[WheelLines],
    sent_at: dict[int, tuple[int, bool]],
    measuring: list[bool],
    pid: int,
    *,
    period: float,
    window: float,
) -> tuple[float, int]:
    """Write the staggered rounds; returns (CPU fraction in the window, outcomes expected)."""
    n = len(wheels)
    start = time.perf_counter() + 0.05
    quarter = period / 4
    # (due, table, phase): phase 0..3 = state 2, 3, 4, result
    heap = [(start + period * i / n, i, 0) for i in range(n)]
    heapq.heapify(heap)
    current: list[tuple[bytes, bytes, bytes, bytes]] = [(b"", b"", b"", b"")] * n
    window_start = start + period  # one round of warm-up per table
    window_end = window_start + window
    cpu0 = 0.0
    expected = 0
    while heap:
        due, i, phase = heap[0]
        if due >= window_end:
            break
        if not measuring[0] and due >= window_start:
            measuring[0] = True
            cpu0 = proc_cpu_seconds(pid)
        delay = due - time.perf_counter()
        if delay > 0:
            await asyncio.sleep(delay)
        heapq.heappop(heap)
        if phase == 0:
            current[i] = lines[i].next_round()
        data = current[i][phase]
        if phase == 3:
            sent_at[i] = (time.perf_counter_ns(), measuring[0])
            expected += measuring[0]
        with contextlib.suppress(BlockingIOError):
            wheels[i].write(data)
        heapq.heappush(heap, (due + quarter, i, (phase + 1) % 4))
    cpu = (proc_cpu_seconds(pid) - cpu0) / window
    await asyncio.sleep(min(1.0, period / 2))  # the last outcomes
    measuring[0] = False
    return cpu, expected
