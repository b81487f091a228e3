"""The figures table (stdout) and the DESIGN §8 verdicts, from one run's results."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["render", "targets"]


def _ratio(value: float | None, floor: float | None) -> str:
    if value is None or not floor or math.isnan(value):
        return ""
    return f"{value / floor:.1f}×"


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """DESIGN §8: each target with the measured value and whether it is met."""
    lat = results["latency"]["outcome"]
    one = results["footprint"]
    rows = [
        ("outcome latency p50", lat["p50_ms"], "ms", "<=", 1.5),
        ("outcome latency p99", lat["p99_ms"], "ms", "<=", 5.0),
        ("sustained events/s", results["throughput"]["sustained_events_per_s"], "1/s", ">=", 5000),
        ("cold start to READY", one["cold_start_s"], "s", "<=", 1.0),
        ("RSS, one table", results["latency"]["rss_after_mb"], "MB", "<=", 80),
    ]
    out = []
    for name, value, unit, op, limit in rows:
        met = value <= limit if op == "<=" else value >= limit
        out.append(
            {"target": name, "value": value, "unit": unit, "limit": f"{op} {limit}", "met": met}
        )
    return out


def render(results: dict[str, Any]) -> str:
    floors = results["floors"]
    path_floor = floors["path_floor_ms"]
    event_floor = floors["event_floor_ms"]
    verdicts = {t["target"]: t for t in results["targets"]}

    rows: list[tuple[str, str, str, str]] = []

    def add(name: str, value: str, ratio: str = "", target: str = "") -> None:
        rows.append((name, value, ratio, target))

    def verdict(name: str) -> str:
        t = verdicts[name]
        return f"{t['limit']} {t['unit']}: {'met' if t['met'] else 'MISSED'}"

    pty, hop, fsync = floors["pty_line"], floors["mqtt_qos1_hop"], floors["sqlite_fsync_insert"]
    add("floor: pty line, one way (p50)", f"{pty['p50_ms']:.3f} ms")
    add("floor: Mosquitto QoS 1 hop (p50)", f"{hop['p50_ms']:.3f} ms")
    add("floor: SQLite WAL fsync'd insert (p50)", f"{fsync['p50_ms']:.3f} ms")
    add("floor: path = pty + 2 fsync + hop", f"{path_floor:.3f} ms", "1.0×")
    add("floor: event = pty + fsync + hop", f"{event_floor:.3f} ms")

    lat = results["latency"]
    out, ev = lat["outcome"], lat["event"]
    add(
        f"line → outcome p50 ({out['n']} rounds)",
        f"{out['p50_ms']:.3f} ms",
        _ratio(out["p50_ms"], path_floor),
        verdict("outcome latency p50"),
    )
    add(
        "line → outcome p99",
        f"{out['p99_ms']:.3f} ms",
        _ratio(out["p99_ms"], path_floor),
        verdict("outcome latency p99"),
    )
    add("line → outcome max", f"{out['max_ms']:.3f} ms", _ratio(out["max_ms"], path_floor))
    paced = lat["outcome_paced"]
    add(
        f"line → outcome p50, after {lat['paced_pause_s']:g} s idle",
        f"{paced['p50_ms']:.3f} ms",
        _ratio(paced["p50_ms"], path_floor),
    )
    add(
        "line → outcome p99, after idle",
        f"{paced['p99_ms']:.3f} ms",
        _ratio(paced["p99_ms"], path_floor),
    )
    add("line → event p50", f"{ev['p50_ms']:.3f} ms", _ratio(ev["p50_ms"], event_floor))
    add("line → event p99", f"{ev['p99_ms']:.3f} ms", _ratio(ev["p99_ms"], event_floor))
    add("controller CPU per round (4 events)", f"{lat['controller_cpu_ms_per_round']:.2f} ms")

    tp = results["throughput"]
    add(
        "sustained device events/s",
        f"{tp['sustained_events_per_s']}",
        "",
        verdict("sustained events/s"),
    )
    if tp.get("saturated_events_per_s") is not None:
        add("saturated device events/s", f"{tp['saturated_events_per_s']}")

    sc = results["scaling"]
    for run in sc["runs"]:
        n = run["tables"]
        add(f"{n:>3} tables: CPU per table", f"{run['cpu_percent_per_table']:.2f} %")
        add(
            f"{n:>3} tables: outcome p99",
            f"{run['outcome']['p99_ms']:.3f} ms",
            _ratio(run["outcome"]["p99_ms"], path_floor),
        )
        add(f"{n:>3} tables: RSS per table", f"{run['rss_mb_per_table']:.2f} MB")

    fp = results["footprint"]
    add(
        "cold start to READY (median)",
        f"{fp['cold_start_s']:.3f} s",
        "",
        verdict("cold start to READY"),
    )
    if "cold_start_with_journal_s" in fp:
        add(
            f"cold start, {fp['journal_records']} journal records",
            f"{fp['cold_start_with_journal_s']:.3f} s",
        )
    add("  of which interpreter + imports", f"{fp['interpreter_and_imports_s']:.3f} s")
    add(
        "RSS one table (after latency run)",
        f"{lat['rss_after_mb']:.1f} MB",
        "",
        verdict("RSS, one table"),
    )

    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    header = ("figure", "value", "×floor", "DESIGN §8 target")
    widths = [max(w, len(h)) for w, h in zip(widths, header, strict=True)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)),
        "  ".join("-" * w for w in widths),
    ]
    for row in rows:
        lines.append(
            "  ".join(
                cell.rjust(w) if i in (1, 2) else cell.ljust(w)
                for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
    return "\n".join(lines)
