"""Device line → subscriber latency of one table, with the journal fsync'd.

Per round the harness writes the wheel's state 2 and 3 lines, waits until the ``ball_launched``
record arrives, then times two things on an otherwise idle controller (a real wheel spends
seconds between these lines):

* **event**: the state-4 line → its ``bets_closed`` record on ``events`` (one fsync'd commit);
* **outcome**: the bare winning number (+ the first state-5 line) → the outcome on the retained
  ``outcome`` topic (the event's commit, the engine, the outcome's commit, the broker).

Both are "hot": the next line follows the last record by a few milliseconds, like the floors,
which are measured back to back too. **outcome_paced** then repeats the outcome measurement with
a pause before the result line, as a real wheel has: every process on the path (controller,
kernel workers, Mosquitto, subscriber) is asleep when the line arrives, and waking them costs
extra — on a VM in particular.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.support import (
    Broker,
    proc_cpu_seconds,
    proc_hwm_kb,
    proc_rss_kb,
    proc_runqueue_wait_seconds,
    summarize_ms,
)
from bench.table import SingleTable

__all__ = ["TABLE", "measure_latency"]

TABLE = "BENCH-LAT"
_SETTLE = 0.002
"""Pause after each milestone so retained-state publishes of the last event are done."""


async def measure_latency(
    broker: Broker,
    workdir: Path,
    *,
    rounds: int,
    paced_rounds: int,
    pause: float = 0.1,
    controller_args: list[str] | None = None,
) -> dict[str, Any]:
    event_ns: list[int] = []
    outcome_ns: list[int] = []
    async with SingleTable(broker, workdir, TABLE, controller_args=controller_args or []) as table:
        await table.start()
        await table.wait_wheel()
        assert table.proc is not None
        pid = table.proc.pid
        rss_idle = proc_rss_kb(pid)
        wheel = table.wheel
        warmup = 20
        cpu0 = wait0 = 0.0
        t_start = 0.0
        for index in range(rounds + warmup):
            if index == warmup:
                cpu0 = proc_cpu_seconds(pid)
                wait0 = proc_runqueue_wait_seconds(pid)
                t_start = time.perf_counter()
            ready, launched, closed, result = table.lines.next_round()
            waiter = table.expect_event("ball_launched")
            wheel.write(ready + launched)
            await asyncio.wait_for(waiter, 5)
            await asyncio.sleep(_SETTLE)

            waiter = table.expect_event("bets_closed")
            t0 = time.perf_counter_ns()
            wheel.write(closed)
            t1 = await asyncio.wait_for(waiter, 5)
            await asyncio.sleep(_SETTLE)

            waiter = table.expect_outcome()
            t2 = time.perf_counter_ns()
            wheel.write(result)
            t3 = await asyncio.wait_for(waiter, 5)
            await asyncio.sleep(_SETTLE)
            if index >= warmup:
                event_ns.append(t1 - t0)
                outcome_ns.append(t3 - t2)
        cpu = proc_cpu_seconds(pid) - cpu0
        elapsed = time.perf_counter() - t_start
        runqueue_wait = proc_runqueue_wait_seconds(pid) - wait0
        paced_ns = await _paced(table, paced_rounds, pause)
        rss = proc_rss_kb(pid)
        hwm = proc_hwm_kb(pid)
    return {
        "rounds": rounds,
        "outcome": summarize_ms(outcome_ns),
        "event": summarize_ms(event_ns),
        "outcome_paced": summarize_ms(paced_ns),
        "paced_pause_s": pause,
        "controller_cpu_ms_per_round": round(cpu / rounds * 1000, 3),
        "controller_cpu_percent": round(cpu / elapsed * 100, 1),
        "runqueue_wait_percent": round(runqueue_wait / elapsed * 100, 1),
        "rss_idle_mb": round(rss_idle / 1024, 1),
        "rss_after_mb": round(rss / 1024, 1),
        "rss_peak_mb": round(hwm / 1024, 1),
        "journal": str(table.journal),
    }


async def _paced(table: SingleTable, rounds: int, pause: float) -> list[int]:
    """Outcome latency when the result line comes after a pause, as it does from a real wheel
    (seconds after "no more bets"): every process on the path has gone back to sleep."""
    samples: list[int] = []
    for _ in range(rounds):
        ready, launched, closed, result = table.lines.next_round()
        waiter = table.expect_event("bets_closed")
        table.wheel.write(ready + launched + closed)
        await asyncio.wait_for(waiter, 5)
        await asyncio.sleep(pause)
        waiter = table.expect_outcome()
        t0 = time.perf_counter_ns()
        table.wheel.write(result)
        samples.append(await asyncio.wait_for(waiter, 5) - t0)
    return samples
