"""The figures table (stdout) and the contracts §8 verdicts, from one run's results."""

from __future__ import annotations

import math
from typing import Any

__all__ = ["render", "targets"]


def _ratio(value: float | None, floor: float | None) -> str:
    if value is None or not floor or math.isnan(value):
        return ""
    return f"{value / floor:.1f}×"


_CURRENT = "issue 16"
_ORIGINAL = "contracts §8 original"

SOAK_LIMIT_MB = 1.0
"""Issue 16: RSS may grow by at most 1 MB per 100,000 journal records after warm-up."""


def _target(
    name: str, value: float | None, unit: str, op: str, limit: float, *, basis: str = "", **kw: Any
) -> dict[str, Any]:
    """One verdict; ``value`` None = not measured in this run (``met`` None, never a pass)."""
    met: bool | None = None
    if value is not None and not math.isnan(value):
        met = value <= limit if op == "<=" else value >= limit
    row = {"target": name, "value": value, "unit": unit, "limit": f"{op} {limit:g}", "met": met}
    row["set"] = kw.get("set", _CURRENT)
    row["basis"] = basis
    return row


def _div(value: float, floor: float) -> float:
    return round(value / floor, 2) if floor and not math.isnan(value) else math.nan


def targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 16's targets (contracts §8, current goals), each with the measured value (a ratio to
    the floor of the same run where the target is one) and whether it is met; then contracts §8's
    original absolute targets."""
    out: list[dict[str, Any]] = []
    if "latency" in results:
        out += _latency_targets(results)
    if "scaling" in results:
        out += _scaling_targets(results["scaling"], results["floors"]["idle_path_floor_ms"])
    soak = results.get("soak")
    growth = soak["growth_mb_per_100k_records"] if soak else None
    out.append(
        _target(
            "memory flat: RSS growth per 100,000 records",
            growth,
            "MB",
            "<=",
            SOAK_LIMIT_MB,
            basis="python -m bench --soak SECONDS" if soak is None else "soak, after warm-up",
        )
    )
    if "footprint" in results:
        out.append(
            _target("cold start to READY", results["footprint"]["cold_start_s"], "s", "<=", 0.5)
        )
    return out


def _latency_targets(results: dict[str, Any]) -> list[dict[str, Any]]:
    floors, lat = results["floors"], results["latency"]
    path, idle = floors["path_floor_ms"], floors["idle_path_floor_ms"]
    out, paced = lat["outcome"], lat["outcome_paced"]
    tp = results["throughput"]["sustained_events_per_s"]
    return [
        _target("line → outcome p50, hot", _div(out["p50_ms"], path), "× path floor", "<=", 2),
        _target("line → outcome p99, hot", _div(out["p99_ms"], path), "× path floor", "<=", 4),
        _target(
            "line → outcome p50, paced", _div(paced["p50_ms"], idle), "× idle floor", "<=", 1.2
        ),
        _target("sustained device events/s", tp, "1/s", ">=", 10000),
        _target("RSS, one table", lat["rss_after_mb"], "MB", "<=", 50),
        _target("outcome latency p50", out["p50_ms"], "ms", "<=", 1.5, set=_ORIGINAL),
        _target("outcome latency p99", out["p99_ms"], "ms", "<=", 5.0, set=_ORIGINAL),
        _target("sustained events/s", tp, "1/s", ">=", 5000, set=_ORIGINAL),
    ]


def _scaling_targets(scaling: dict[str, Any], idle: float) -> list[dict[str, Any]]:
    runs = scaling["runs"]
    last = runs[-1]
    slow = scaling.get("slow_disk")
    n = last["tables"]
    rows = [
        _target(
            f"RSS per further table ({n} tables)",
            last.get("rss_marginal_mb_per_table"),
            "MB",
            "<=",
            0.5,
        )
    ]
    if slow is None:
        return rows
    others = slow["other_tables_outcome"]
    basis = (
        f"{n - 1} tables beside one whose journal writes take {slow['slow_journal_write_s']:g} s"
    )
    clean = last["outcome"]["p99_ms"]
    rows += [
        _target(
            f"{n} tables, slow disk: p99",
            _div(others["p99_ms"], idle),
            "× idle floor",
            "<=",
            3,
            basis=basis,
        ),
        _target(
            f"{n} tables, slow disk: max outcome", others["max_ms"], "ms", "<=", 50, basis=basis
        ),
        _target(
            f"{n} tables, slow disk: the others' p99 unmoved",
            _div(others["p99_ms"], clean),
            "× p99 without it",
            "<=",
            UNMOVED,
            basis=f"against {clean:.1f} ms, the same {n} tables without the slow disk",
        ),
    ]
    return rows


UNMOVED = 1.25
""""The other tables' p99 must not move": within 25 % of the same run without the slow disk,
about the spread of p99 between two runs on a quiet machine (docs/performance.md)."""


Row = tuple[str, str, str, str]
"""figure, value, ratio to its floor, contracts §8 verdict"""


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
        ("floor: path = pty + fsync + hop", _ms(floors["path_floor_ms"]), "1.0×", ""),
        (
            "floor: issue 16's, with two fsyncs",
            _ms(floors["path_floor_two_commits_ms"]),
            _ratio(floors["path_floor_two_commits_ms"], floors["path_floor_ms"]),
            "",
        ),
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
    verdicts = {t["target"]: t for t in results["targets"] if t["set"] != _ORIGINAL}

    def verdict(name: str) -> str:
        t = verdicts.get(name)
        return "" if t is None else _verdict(t)

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
            verdict("line → outcome p50, hot"),
        ),
        timed("line → outcome p99", out["p99_ms"], path_floor, verdict("line → outcome p99, hot")),
        timed("line → outcome max", out["max_ms"], path_floor),
        timed(
            f"line → outcome p50 after {lat['paced_pause_s']:g} s idle",
            paced["p50_ms"],
            idle_floor,
            idle=True,
        ),
        timed("line → outcome p99 after idle", paced["p99_ms"], idle_floor, idle=True),
        timed("line → event p50", ev["p50_ms"], path_floor),
        timed("line → event p99", ev["p99_ms"], path_floor),
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
            verdict("sustained device events/s"),
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
    slow = results["scaling"].get("slow_disk")
    if slow is not None:
        n, delay = slow["tables"], slow["slow_journal_write_s"]
        others, own = slow["other_tables_outcome"], slow["slow_table_outcome"]
        rows += [
            timed(
                f"{n:>3} tables, 1 slow disk ({delay:g} s writes): its p50",
                own["p50_ms"],
                idle_floor,
                idle=True,
            ),
            timed(
                f"{n:>3} tables, 1 slow disk: the others' p50",
                others["p50_ms"],
                idle_floor,
                idle=True,
            ),
            timed(
                f"{n:>3} tables, 1 slow disk: the others' p99",
                others["p99_ms"],
                idle_floor,
                idle=True,
            ),
            timed(
                f"{n:>3} tables, 1 slow disk: the others' max",
                others["max_ms"],
                idle_floor,
                idle=True,
            ),
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
    return _table(rows) + "\n\n" + render_targets(results["targets"])


def _verdict(t: dict[str, Any]) -> str:
    if t["met"] is None:
        return "not measured"
    return "met" if t["met"] else "missed"


def _value(t: dict[str, Any]) -> str:
    value = t["value"]
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    unit = t["unit"]
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{text}×{unit[1:]}" if unit.startswith("×") else f"{text} {unit}"


def render_targets(rows: list[dict[str, Any]]) -> str:
    """Every target with its measured value (a ratio where the target is one) and verdict."""
    lines = []
    for t in rows:
        mark = "" if t["set"] != _ORIGINAL else f" ({_ORIGINAL})"
        limit = t["limit"] + ("×" + t["unit"][1:] if t["unit"].startswith("×") else " " + t["unit"])
        lines.append((t["target"] + mark, _value(t), limit, _verdict(t), t["basis"]))
    header = ("target", "measured", "target", "verdict", "")
    widths = [max(len(h), *(len(r[i]) for r in lines)) for i, h in enumerate(header)]
    out = [
        "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths[:4]),
    ]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in lines]
    return "\n".join(out)


def _table(rows: list[Row]) -> str:
    header = ("figure", "value", "×floor", "target")
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
