"""Sustained device events per second through one controller: pty → parse → rules → journal →
outbox → Mosquitto → subscriber.

A stepped ramp: for each offered rate the harness writes whole rounds (state 2, 3, 4, bare
number + state 5: four device events and five journal records) to the wheel's pty on a fixed
schedule from a writer thread, then checks that (a) the pty accepted them on time — a controller
that does not read fast enough fills the 4 KiB pty buffer and the writes block — (b) the
subscriber has every record shortly after the step's end, and (c) the rate counted up to the
last arrival is within 3 % of the offered one (:data:`KEEP_UP`). The highest step meeting all
three is the sustained rate; the capacity is the best rate achieved by any step.

A real SS2 link is 9600 baud (about 37 status lines per second): these rates are what one
process can carry, e.g. for a studio host running many tables, not what one wheel can send.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

from bench.support import (
    Broker,
    WheelLines,
    WheelPty,
    proc_cpu_seconds,
    proc_runqueue_wait_seconds,
)
from bench.table import SingleTable

__all__ = ["measure_throughput"]

TABLE = "BENCH-TPUT"
EVENTS_PER_ROUND = 4
RECORDS_PER_ROUND = 5
DRAIN_SLACK = 0.1
"""Fraction of a step (at least 0.1 s) after its last write by which every record must have
arrived: a path that only keeps up by queueing grows a backlog longer than that."""
_SLICE = 0.005

RATES = (1000, 2000, 3000, 4000, 4500, 5000, 5500, 6000, 7000, 8000, 10000, 12500, 15000, 20000)
KEEP_UP = 0.97
"""A step is sustained when the records it caused all arrived, and at 97 % of the offered rate
or better counted up to the last arrival: a backlog of more than 3 % of the step's events at its
end means the path only kept up by queueing, which a longer step would not survive."""


def _writer(wheel: WheelPty, lines: WheelLines, rate: float, duration: float) -> tuple[int, float]:
    """Write ``rate`` events/s for ``duration`` s in whole rounds; returns (rounds, seconds)."""
    rounds_per_s = rate / EVENTS_PER_ROUND
    written = 0
    start = time.perf_counter()
    while True:
        elapsed = time.perf_counter() - start
        if elapsed >= duration:
            break
        due = int(elapsed * rounds_per_s) + 1 - written
        if due > 0:
            wheel.write(b"".join(b"".join(lines.next_round()) for _ in range(due)))
            written += due
        time.sleep(_SLICE)
    return written, time.perf_counter() - start


async def measure_throughput(
    broker: Broker,
    workdir: Path,
    *,
    step_seconds: float,
    controller_args: list[str] | None = None,
) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    async with SingleTable(broker, workdir, TABLE, controller_args=controller_args or []) as table:
        await table.start()
        await table.wait_wheel()
        assert table.proc is not None
        pid = table.proc.pid
        # One round first: the wheel is in a game rhythm and the first records are out.
        await _run_step(table, rate=100, duration=0.2, slack=5)
        for rate in RATES:
            cpu0, wait0 = proc_cpu_seconds(pid), proc_runqueue_wait_seconds(pid)
            slack = max(0.1, DRAIN_SLACK * step_seconds)
            step = await _run_step(table, rate=rate, duration=step_seconds, slack=slack)
            step["controller_cpu_percent"] = round(
                (proc_cpu_seconds(pid) - cpu0) / step["elapsed_s"] * 100, 1
            )
            step["runqueue_wait_percent"] = round(
                (proc_runqueue_wait_seconds(pid) - wait0) / step["elapsed_s"] * 100, 1
            )
            steps.append(step)
            if not step["sustained"]:
                break
    sustained = [s["offered_events_per_s"] for s in steps if s["sustained"]]
    return {
        "sustained_events_per_s": max(sustained) if sustained else 0,
        "capacity_events_per_s": max(s["achieved_events_per_s"] for s in steps),
        "step_seconds": step_seconds,
        "steps": steps,
    }


async def _run_step(
    table: SingleTable, *, rate: float, duration: float, slack: float
) -> dict[str, Any]:
    base = table.max_seq
    t0 = time.perf_counter()
    rounds, wrote_s = await asyncio.to_thread(_writer, table.wheel, table.lines, rate, duration)
    target = base + rounds * RECORDS_PER_ROUND
    drained = True
    try:
        await asyncio.wait_for(table.expect_seq(target), slack)
    except TimeoutError:
        drained = False
        with contextlib.suppress(TimeoutError):  # how long it does take: the saturated rate
            await asyncio.wait_for(table.expect_seq(target), 30)
    elapsed = time.perf_counter() - t0
    received = table.max_seq - base
    events = received / RECORDS_PER_ROUND * EVENTS_PER_ROUND
    on_time = (
        wrote_s <= duration * 1.05 + 0.05 and rounds >= rate / EVENTS_PER_ROUND * duration * 0.95
    )
    return {
        "offered_events_per_s": rate,
        "written_events": rounds * EVENTS_PER_ROUND,
        "writes_on_time": on_time,
        "drained_within_slack": drained,
        "sustained": on_time and drained and events / elapsed >= KEEP_UP * rate,
        "elapsed_s": round(elapsed, 3),
        "achieved_events_per_s": round(events / elapsed),
        "records_per_s": round(received / elapsed),
    }
