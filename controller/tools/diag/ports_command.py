"""``diag ports`` output: the :mod:`tablectl.controller.tools.diag.ports` report as tables or
JSON."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from tablectl.controller.config import load_config
from tablectl.controller.tools.diag.ports import PortsReport, list_ports_report
from tablectl.controller.tools.diag.render import emit_json, table


def _state(refused: str | None) -> str:
    return f"REFUSED: {refused}" if refused else "ok"


def _marks(names: list[str]) -> str:
    return ", ".join(names) if names else ""


def _section(
    out: TextIO, title: str, headers: Sequence[str], rows: Sequence[Sequence[object]], empty: str
) -> None:
    """A titled table, or ``empty`` when there are no rows (``""``: no section at all)."""
    if rows:
        out.write(title + table(headers, rows) + "\n")
    elif empty:
        out.write(title + empty)


def render_ports(report: PortsReport, out: TextIO) -> None:
    serial_rows = [
        (
            p.device,
            f"{p.vid}:{p.pid}" if p.vid else None,
            p.serial_number,
            p.description,
            _marks(p.configured),
            " ".join(p.by_id),
        )
        for p in report.serial
    ]
    serial_headers = ("device", "vid:pid", "serial", "description", "configured", "by-id")
    _section(out, "serial ports:\n", serial_headers, serial_rows, "  (none)\n")
    usb_rows = [
        (
            f"{d.bus:03d}:{d.address:03d}" if d.bus is not None and d.address is not None else None,
            f"{d.vid}:{d.pid}",
            d.manufacturer,
            d.product,
            d.serial_number,
            _marks(d.configured),
        )
        for d in report.usb
    ]
    usb_headers = ("bus:addr", "vid:pid", "manufacturer", "product", "serial", "configured")
    _section(out, "\nUSB devices:\n", usb_headers, usb_rows, "  (none listed)\n")
    can_rows = [(c.name, c.state, _marks(c.configured)) for c in report.can]
    can_headers = ("interface", "state", "configured")
    _section(out, "\nCAN interfaces:\n", can_headers, can_rows, "  (none)\n")
    configured_rows = [
        (
            c.device,
            c.driver,
            c.port,
            c.resolved if c.resolved != c.port else None,
            "present" if c.exists else ("url" if c.port and "://" in c.port else "MISSING"),
            ", ".join(c.matched) or ("not enumerated (pty or other)" if c.exists else None),
        )
        for c in report.configured
    ]
    configured_headers = ("device", "driver", "port", "resolves to", "state", "found as")
    _section(out, "\nconfigured devices:\n", configured_headers, configured_rows, "")
    out.write("\ndrivers:\n")
    driver_rows = [
        (d.name, f"{d.module}:{d.cls}", d.source, _state(d.refused)) for d in report.drivers
    ]
    out.write(table(("driver", "class", "from", "state"), driver_rows) + "\n")
    game_rows = [(g.name, f"{g.module}:{g.cls}", g.source, _state(g.refused)) for g in report.games]
    game_headers = ("game", "class", "from", "state")
    _section(out, "\ngames from installed packages:\n", game_headers, game_rows, "")
    for note in report.notes:
        out.write(f"note: {note}\n")
    out.flush()


def run_ports(config: Path | None, *, out: TextIO, as_json: bool) -> int:
    """List, mark with ``config``'s devices, print. Never opens a device."""
    devices = load_config(config).devices if config is not None else ()
    report = list_ports_report(devices)
    if as_json:
        emit_json(out, report.to_json())
    else:
        render_ports(report, out)
    return 0
