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


Row = tuple[str, str, str, str]
"""figure, value, ratio to its floor, DESIGN §8 verdict"""


def _ms(value: float) -> str:
    return f"{value:.3f} ms"


def _floor_rows(floors: dict[str, Any]) -> list[Row]:
    pause = floors["idle_pause_s"]
    return [
        ("floor: pty line, one way (p50)", _ms(floors["pty_line"]["p50_ms"]), "", ""),
        ("floor: Mosquitto QoS 1 hop (p50)", _ms(floors["mqtt_qos1_hop"]["p50_ms"]), "", ""),
        (
            "floor: SQLite WAL fsync'd insert (p50)",
            _ms(floors["sqlite_fsync_insert"]["p50_ms"]),
            "",
            "",
        ),
        ("floor: path = pty + 2 fsync + hop", _ms(floors["path_floor_ms"]), "1.0×", ""),
        ("floor: event = pty + fsync + hop", _ms(floors["event_floor_ms"]), "1.0×", ""),
        (
            f"idle floor: pty line after {pause:g} s idle",
            _ms(floors["idle_pty_line"]["p50_ms"]),
            "",
            "",
        ),
        ("idle floor: MQTT hop after idle", _ms(floors["idle_mqtt_qos1_hop"]["p50_ms"]), "", ""),
        (
            "idle floor: fsync'd insert after idle",
            _ms(floors["idle_sqlite_fsync_insert"]["p50_ms"]),
            "",
            "",
        ),
        ("idle floor: path", _ms(floors["idle_path_floor_ms"]), "1.0×", ""),
    ]


def render(results: dict[str, Any]) -> str:
    floors = results["floors"]
    path_floor = floors["path_floor_ms"]
    idle_floor = floors["idle_path_floor_ms"]
    event_floor = floors["event_floor_ms"]
    verdicts = {t["target"]: t for t in results["targets"]}

    def verdict(name: str) -> str:
        t = verdicts[name]
        return f"{t['limit']} {t['unit']}: {'met' if t['met'] else 'MISSED'}"

    def timed(name: str, value: float, floor: float, target: str = "", idle: bool = False) -> Row:
        return (name, _ms(value), _ratio(value, floor) + (" idle" if idle else ""), target)

    lat, tp, fp = results["latency"], results["throughput"], results["footprint"]
    out, ev, paced = lat["outcome"], lat["event"], lat["outcome_paced"]
    rows = _floor_rows(floors)
    rows += [
        timed(
            f"line → outcome p50 ({out['n']} rounds)",
            out["p50_ms"],
            path_floor,
            verdict("outcome latency p50"),
        ),
        timed("line → outcome p99", out["p99_ms"], path_floor, verdict("outcome latency p99")),
        timed("line → outcome max", out["max_ms"], path_floor),
        timed(
            f"line → outcome p50 after {lat['paced_pause_s']:g} s idle",
            paced["p50_ms"],
            idle_floor,
            idle=True,
        ),
        timed("line → outcome p99 after idle", paced["p99_ms"], idle_floor, idle=True),
        timed("line → event p50", ev["p50_ms"], event_floor),
        timed("line → event p99", ev["p99_ms"], event_floor),
        (
            "controller CPU per round (4 events)",
            f"{lat['controller_cpu_ms_per_round']:.2f} ms",
            "",
            "",
        ),
        (
            "sustained device events/s",
            f"{tp['sustained_events_per_s']}",
            "",
            verdict("sustained events/s"),
        ),
        ("capacity (best step) events/s", f"{tp['capacity_events_per_s']}", "", ""),
    ]
    for run in results["scaling"]["runs"]:
        n = run["tables"]
        rows += [
            (f"{n:>3} tables: CPU per table", f"{run['cpu_percent_per_table']:.2f} %", "", ""),
            timed(f"{n:>3} tables: outcome p50", run["outcome"]["p50_ms"], idle_floor, idle=True),
            timed(f"{n:>3} tables: outcome p99", run["outcome"]["p99_ms"], idle_floor, idle=True),
            (f"{n:>3} tables: RSS per table", f"{run['rss_mb_per_table']:.2f} MB", "", ""),
        ]
    rows.append(
        (
            "cold start to READY (median)",
            f"{fp['cold_start_s']:.3f} s",
            "",
            verdict("cold start to READY"),
        )
    )
    if "cold_start_with_journal_s" in fp:
        rows.append(
            (
                f"cold start, {fp['journal_records']} journal records",
                f"{fp['cold_start_with_journal_s']:.3f} s",
                "",
                "",
            )
        )
    if "cold_start_from_checkpoint_s" in fp:
        rows.append(
            (
                "  the same from its checkpoint",
                f"{fp['cold_start_from_checkpoint_s']:.3f} s",
                "",
                "",
            )
        )
    rows += [
        ("  of which interpreter + imports", f"{fp['interpreter_and_imports_s']:.3f} s", "", ""),
        (
            "RSS one table (after latency run)",
            f"{lat['rss_after_mb']:.1f} MB",
            "",
            verdict("RSS, one table"),
        ),
    ]
    return _table(rows)


def _table(rows: list[Row]) -> str:
    header = ("figure", "value", "×floor", "DESIGN §8 target")
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
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
