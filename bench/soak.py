"""``python -m bench --soak SECONDS``: is a table's memory flat over a long run?

Runs :mod:`bench.soak_host` (a roulette and a baccarat table, simulators time-lapsed) against the
bench's Mosquitto and reports its RSS after warm-up and at the end, the growth per 100,000
journal records (issue 16: at most 1 MB), and the tracemalloc sites that grew most in between.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.support import REPO, Broker, child_env

__all__ = ["measure_soak"]


async def measure_soak(
    broker: Broker, workdir: Path, *, seconds: float, warmup: float, speed: float
) -> dict[str, Any]:
    await asyncio.to_thread(workdir.mkdir, parents=True, exist_ok=True)
    args = [
        sys.executable,
        "-m",
        "bench.soak_host",
        "--broker",
        f"{broker.host}:{broker.port}",
        "--dir",
        str(workdir),
        "--seconds",
        str(seconds),
        "--warmup",
        str(warmup),
        "--speed",
        str(speed),
    ]
    with (workdir / "soak.log").open("ab") as log:
        proc = await asyncio.to_thread(
            subprocess.run,
            args,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            env=child_env(),
            cwd=REPO,
            timeout=seconds + warmup + 120,
            check=False,
        )
    if proc.returncode != 0 or not proc.stdout.strip():
        tail = (workdir / "soak.log").read_text(errors="replace")[-1500:]
        raise RuntimeError(f"bench.soak_host failed ({proc.returncode}):\n{tail}")
    result: dict[str, Any] = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    records = result["records_end"] - result["records_after_warmup"]
    growth = result["rss_end_mb"] - result["rss_after_warmup_mb"]
    result["speed"] = speed
    result["records"] = records
    result["growth_mb"] = round(growth, 2)
    result["growth_mb_per_100k_records"] = (
        round(growth / records * 100_000, 2) if records > 0 else None
    )
    return result


def render_soak(soak: dict[str, Any]) -> str:
    """The soak's figures and its top growth sites, for stdout."""
    per = soak["growth_mb_per_100k_records"]
    lines = [
        f"soak: {', '.join(soak['tables'])} at {soak['speed']:g}× for {soak['seconds']:g} s "
        f"after {soak['warmup_s']:g} s warm-up",
        f"  RSS {soak['rss_after_warmup_mb']:.2f} → {soak['rss_end_mb']:.2f} MB over "
        f"{soak['records']:,} journal records: {soak['growth_mb']:+.2f} MB "
        f"({'—' if per is None else f'{per:+.2f}'} MB per 100,000 records)",
        f"  tracemalloc: traced memory {soak['traced_growth_kb']:+.1f} kB; top growth sites:",
    ]
    for site in soak["top_growth"]:
        lines.append(
            f"    {site['size_diff_kb']:+9.1f} kB {site['count_diff']:+7d} blocks  {site['site']}"
        )
    return "\n".join(lines)
