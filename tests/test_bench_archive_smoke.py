"""``python -m bench archive --quick`` runs end to end and writes every figure (bench/archive.py).

A smoke test of the harness, not of performance: the figures are checked for being there and
being numbers, and the verdicts for being verdicts, never against the targets (benchmarks, not
timed tests).
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
from tests.support.postgres import postgres_unavailable

pytestmark = [pytest.mark.slow, pytest.mark.broker, pytest.mark.timeout(150)]

REPO = Path(__file__).resolve().parents[1]


def _positive(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def test_quick_archive_run_writes_every_figure(tmp_path: Path) -> None:
    if find_mosquitto() is None:
        pytest.skip("mosquitto binary not found")
    if (reason := postgres_unavailable()) is not None:
        pytest.skip(reason)
    out = tmp_path / "archive.json"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "archive", "--quick", "--json", str(out)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=140,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "lag journal → archive row p99" in proc.stdout
    figures = json.loads(out.read_text(encoding="utf-8"))

    floors, ingest = figures["floors"], figures["ingest"]
    for name in ("pg_insert_commit", "mqtt_qos1_hop"):
        assert _positive(floors[name]["p50_ms"]), name
    assert _positive(floors["pg_bare_copy_rows_per_s"])
    for key in ("copy_records_per_s", "insert_records_per_s", "copy_over_insert"):
        assert _positive(ingest[key]), key
    drain, lag = figures["drain"], figures["lag"]
    assert drain["records"] == drain["tables"] * figures["plan"]["drain_per_table"]
    assert _positive(drain["records_per_s"])
    assert lag["n"] == lag["records"] > 0
    assert 0 < lag["p50_ms"] <= lag["p99_ms"] <= lag["max_ms"]
    assert _positive(lag["floor_ms"])
    assert {t["target"] for t in figures["targets"]} == {
        "archive ingest per archiver",
        "archive lag p99 (journal → row)",
    }
    assert all(isinstance(t["met"], bool) for t in figures["targets"])
