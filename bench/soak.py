"""``python -m bench --soak SECONDS``: is a table's memory flat over a long run?

Runs :mod:`bench.soak_host` (a roulette and a baccarat table, simulators time-lapsed) against the
bench's Mosquitto and reports its RSS after warm-up and at the end, the growth per 100,000
journal records (issue 16: at most 1 MB), and the tracemalloc sites that grew most in between.

The growth is the slope of a least-squares line through the second half of the readings (RSS
against journal records), not the end minus the start: caches that fill to a bound (SQLite's
pages, the engines' recent rounds, the allocator's arenas) make the first part of a soak climb
and then level off, and one reading taken while a burst of MQTT work is in flight would move an
end-to-end figure by as much as the whole target. The same fit of each part of the RSS (Python
objects, every heap, mapped files) says where growth is.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.support import REPO, Broker, child_env

__all__ = ["measure_soak", "render_soak", "summarize"]


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
    result["speed"] = speed
    return summarize(result)


def summarize(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (the host's readings) with the growth figures added."""
    records = result["records_end"] - result["records_after_warmup"]
    growth = result["rss_end_mb"] - result["rss_after_warmup_mb"]
    result["records"] = records
    result["growth_mb"] = round(growth, 2)
    result["growth_mb_per_100k_records_end_to_end"] = (
        round(growth / records * 100_000, 2) if records > 0 else None
    )
    late = result["samples"][len(result["samples"]) // 2 :]
    result["fit_records"] = late[-1]["records"] - late[0]["records"] if late else 0
    for part in PARTS:
        result[f"{part}_slope_mb_per_100k_records"] = _slope(late, part)
    result["growth_mb_per_100k_records"] = result["rss_slope_mb_per_100k_records"]
    return result


PARTS = ("rss", "anon", "file", "traced")
"""What each reading of :mod:`bench.soak_host` measures, MB: the RSS and its parts."""


def _slope(samples: list[dict[str, Any]], part: str) -> float | None:
    """MB per 100,000 records of a least-squares line through ``samples``' ``part``."""
    xs = [float(s["records"]) for s in samples]
    ys = [float(s[f"{part}_mb"]) for s in samples]
    if len(xs) < 3 or max(xs) == min(xs):
        return None
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum(
        (x - mx) ** 2 for x in xs
    )
    return round(slope * 100_000, 2)


def render_soak(soak: dict[str, Any]) -> str:
    """The soak's figures and its top growth sites, for stdout."""
    per = soak["growth_mb_per_100k_records_end_to_end"]
    last = soak["samples"][-1]
    slopes = ", ".join(
        f"{part} {_signed(soak[f'{part}_slope_mb_per_100k_records'])}" for part in PARTS
    )
    lines = [
        f"soak: {', '.join(soak['tables'])} at {soak['speed']:g}× for {soak['seconds']:g} s "
        f"after {soak['warmup_s']:g} s warm-up",
        f"  RSS {soak['rss_after_warmup_mb']:.2f} → {soak['rss_end_mb']:.2f} MB over "
        f"{soak['records']:,} journal records: {soak['growth_mb']:+.2f} MB "
        f"({_signed(per)} MB per 100,000 records, end to end)",
        f"  fit over the second half ({soak['fit_records']:,} records), MB per 100,000 records: "
        f"{slopes}",
        f"  at the end: anon {last['anon_mb']:.2f} MB, file {last['file_mb']:.2f} MB, Python "
        f"objects {last['traced_mb']:.2f} MB, {last['threads']} threads",
        f"  tracemalloc: traced memory {soak['traced_growth_kb']:+.1f} kB; top growth sites:",
    ]
    for site in soak["top_growth"]:
        lines.append(
            f"    {site['size_diff_kb']:+9.1f} kB {site['count_diff']:+7d} blocks  {site['site']}"
        )
    return "\n".join(lines)


def _signed(value: float | None) -> str:
    return "—" if value is None else f"{value:+.2f}"
