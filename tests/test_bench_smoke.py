"""``python -m bench --quick`` runs end to end and writes every figure (bench/README.md).

A smoke test of the harness, not of performance: the figures are not checked against the
contracts §8 targets here (benchmarks, not timed tests), only for being there and being numbers.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.mosquitto import find_mosquitto

pytestmark = [pytest.mark.slow, pytest.mark.broker, pytest.mark.timeout(150)]

REPO = Path(__file__).resolve().parents[1]


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _positive(value: Any) -> bool:
    return _number(value) and value > 0


def _latency(summary: dict[str, Any]) -> None:
    assert summary["n"] > 0
    for key in ("p50_ms", "p99_ms", "max_ms"):
        assert _positive(summary[key]), (key, summary)
    assert summary["p50_ms"] <= summary["p99_ms"] <= summary["max_ms"]


def test_quick_run_writes_every_figure(tmp_path: Path) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto binary not found")
    out = tmp_path / "figures.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--quick", "--json", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "line → outcome p50" in proc.stdout  # the printed table
    figures = json.loads(out.read_text(encoding="utf-8"))

    assert figures["quick"] is True
    assert {"cpus", "cpu_model", "mem_total_gib", "python", "commit"} <= figures["machine"].keys()

    floors = figures["floors"]
    for name in ("pty_line", "mqtt_qos1_hop", "sqlite_fsync_insert"):
        _latency(floors[name])
        _latency(floors[f"idle_{name}"])
    assert _positive(floors["idle_path_floor_ms"])
    assert _positive(floors["path_floor_ms"])
    assert _positive(floors["path_floor_two_commits_ms"])

    latency = figures["latency"]
    for name in ("outcome", "event", "outcome_paced"):
        _latency(latency[name])
    for key in ("controller_cpu_ms_per_round", "rss_after_mb", "rss_idle_mb"):
        assert _positive(latency[key]), key

    throughput = figures["throughput"]
    assert _number(throughput["sustained_events_per_s"])
    assert _positive(throughput["capacity_events_per_s"])
    assert throughput["steps"]
    assert all(_number(s["achieved_events_per_s"]) for s in throughput["steps"])

    runs = figures["scaling"]["runs"]
    assert [run["tables"] for run in runs] == [1, 100]
    for run in runs:
        _latency(run["outcome"])
        for key in ("cpu_percent_per_table", "rss_mb_per_table", "ready_s"):
            assert _number(run[key]), (key, run)

    footprint = figures["footprint"]
    keys = ("cold_start_s", "cold_start_with_journal_s", "cold_start_from_checkpoint_s")
    for key in (*keys, "rss_at_ready_mb"):
        assert _positive(footprint[key]), key

    slow = figures["scaling"]["slow_disk"]
    assert slow["tables"] == 100
    assert slow["slow_table"] == "BENCH-S100-000"
    _latency(slow["other_tables_outcome"])

    # Every target of issue 16 printed with its verdict; only the soak's is not measured here.
    verdicts = {t["target"]: t for t in figures["targets"]}
    assert {
        "line → outcome p50, hot",
        "line → outcome p99, hot",
        "line → outcome p50, paced",
        "sustained device events/s",
        "100 tables, slow disk: p99",
        "100 tables, slow disk: max outcome",
        "100 tables, slow disk: the others' p99 unmoved",
        "memory flat: RSS growth per 100,000 records",
        "cold start to READY",
        "RSS, one table",
        "RSS per further table (100 tables)",
    } <= verdicts.keys()
    for name, t in verdicts.items():
        if name.startswith("memory flat"):
            assert t["met"] is None
        else:
            assert isinstance(t["met"], bool), name
            assert f"{name}" in proc.stdout
