"""``python -m bench [--quick] [--soak SECONDS] [--json PATH] [--keep] [--profile DIR]``.

Runs every benchmark once, prints the figures table and every target of issue 16 with its
verdict, and writes every figure as JSON (``bench/results/<UTC time>.json`` by default) for
comparison between commits. A full run takes about four minutes on the 2-core reference
machine; ``--quick`` is a smoke run (same figures, far fewer samples) under a minute.
``--soak SECONDS`` runs only the memory soak (bench/soak.py) after a warm-up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.floors import measure_floors
from bench.footprint import measure_cold_start
from bench.latency import TABLE as LATENCY_TABLE
from bench.latency import measure_latency
from bench.report import render, render_targets, targets
from bench.scaling import measure_scaling
from bench.soak import measure_soak, render_soak
from bench.support import REPO, Broker, load_average, machine_info
from bench.throughput import measure_throughput


@dataclass(frozen=True)
class Plan:
    """How many samples each benchmark takes."""

    floor_rounds: int
    latency_rounds: int
    paced_rounds: int
    step_seconds: float
    table_counts: tuple[int, ...]
    period: float
    window: float
    idle: float
    cold_runs: int
    slow_write: float
    """Seconds each journal write of one table sleeps in the slow-disk run (0: no such run)."""


PACED_PAUSE = 0.1
"""Idle seconds before each paced latency sample and each idle floor sample."""

FULL = Plan(2000, 1000, 100, 2.0, (1, 10, 50, 100), 2.0, 20.0, 2.0, 5, 0.1)
QUICK = Plan(300, 60, 10, 0.5, (1, 100), 2.0, 2.0, 0.3, 1, 0.1)
SOAK_WARMUP = 60.0
"""Seconds of a soak before its first reading: caches, the engine's rounds and the journal's
pages have settled (a shoe is dealt and shuffled at least once at the soak's speed)."""
SOAK_SPEED = 40.0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="smoke run: few samples, < 60 s")
    parser.add_argument(
        "--json",
        type=Path,
        default=None,
        help="where to write the figures (default: bench/results/<UTC time>.json)",
    )
    parser.add_argument(
        "--soak",
        type=float,
        default=None,
        metavar="SECONDS",
        help=f"only the memory soak: a roulette and a baccarat table at {SOAK_SPEED:g}× for "
        f"SECONDS after {SOAK_WARMUP:g} s of warm-up (e.g. --soak 600)",
    )
    parser.add_argument(
        "--soak-warmup", type=float, default=SOAK_WARMUP, help="seconds before the first reading"
    )
    parser.add_argument(
        "--soak-speed", type=float, default=SOAK_SPEED, help="the simulators' time-lapse"
    )
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="run the latency and throughput controllers under cProfile, stats into DIR "
        "(figures then include the profiler's overhead)",
    )
    return parser


async def run(plan: Plan, workdir: Path, profile: Path | None) -> dict[str, Any]:
    started = time.perf_counter()
    results: dict[str, Any] = {
        "schema": 1,
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "quick": plan is QUICK,
        "profiled": profile is not None,
        "machine": machine_info(),
        "load_average_start": load_average(),
    }

    def prof(name: str) -> list[str]:
        if profile is None:
            return []
        profile.mkdir(parents=True, exist_ok=True)
        return ["-m", "cProfile", "-o", str(profile.resolve() / f"{name}.prof")]

    def step(name: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f} s] {name}", file=sys.stderr, flush=True)

    with Broker(workdir / "mosquitto") as broker:
        step("floors")
        results["floors"] = await measure_floors(
            broker,
            workdir,
            rounds=plan.floor_rounds,
            idle_rounds=plan.paced_rounds // 2,
            pause=PACED_PAUSE,
        )
        step(f"latency ({plan.latency_rounds} rounds)")
        results["latency"] = await measure_latency(
            broker,
            workdir,
            rounds=plan.latency_rounds,
            paced_rounds=plan.paced_rounds,
            pause=PACED_PAUSE,
            controller_args=prof("latency"),
        )
        step("throughput")
        results["throughput"] = await measure_throughput(
            broker, workdir, step_seconds=plan.step_seconds, controller_args=prof("throughput")
        )
        step(f"scaling {plan.table_counts}")
        results["scaling"] = await measure_scaling(
            broker,
            workdir,
            counts=plan.table_counts,
            period=plan.period,
            window=plan.window,
            idle=plan.idle,
            slow=plan.slow_write,
        )
        step("footprint")
        results["footprint"] = await measure_cold_start(
            broker,
            workdir,
            runs=plan.cold_runs,
            history=(LATENCY_TABLE, Path(results["latency"].pop("journal"))),
        )
    results["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = targets(results)
    step("done")
    return results


async def soak(seconds: float, warmup: float, speed: float, workdir: Path) -> dict[str, Any]:
    """The soak alone: its figures and its one target."""
    results: dict[str, Any] = {
        "schema": 1,
        "taken_at": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "quick": False,
        "machine": machine_info(),
        "load_average_start": load_average(),
    }
    started = time.perf_counter()
    with Broker(workdir / "mosquitto") as broker:
        results["soak"] = await measure_soak(
            broker, workdir / "soak", seconds=seconds, warmup=warmup, speed=speed
        )
    results["load_average_end"] = load_average()
    results["duration_s"] = round(time.perf_counter() - started, 1)
    results["targets"] = targets(results)
    return results


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["archive"]:  # the floor's archive: its own phases (bench/archive.py)
        from bench.archive import main as archive_main  # noqa: PLC0415 - needs psycopg

        return archive_main(argv[1:])
    args = _parser().parse_args(argv)
    plan = QUICK if args.quick else FULL
    workdir = Path(tempfile.mkdtemp(prefix="tablectl-bench-"))
    try:
        if args.soak is not None:
            results = asyncio.run(soak(args.soak, args.soak_warmup, args.soak_speed, workdir))
        else:
            results = asyncio.run(run(plan, workdir, args.profile))
    finally:
        if args.keep:
            print(f"work directory kept: {workdir}", file=sys.stderr)
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    out = args.json
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out = REPO / "bench" / "results" / f"{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(
        render_soak(results["soak"]) + "\n\n" + render_targets(results["targets"])
        if "soak" in results
        else render(results)
    )
    machine = results["machine"]
    print(
        f"\n{machine['cpus']} × {machine['cpu_model']}, {machine['mem_total_gib']} GiB, "
        f"Python {machine['python']}, commit {machine['commit'] or '?'}; "
        f"load average {results['load_average_start']} → {results['load_average_end']}; "
        f"{results['duration_s']} s"
    )
    print(f"figures written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
