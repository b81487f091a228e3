"""``diag ports`` output: the :mod:`tablectl.controller.tools.diag.ports` report as tables or
JSON."""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from tablectl.controller.config import load_config
from tablectl.controller.tools.diag.ports import PortsReport, list_ports_report
from tablectl.controller.tools.diag.render import emit_json, table


def _state(refused: str | None) -> str:
    return f"REFUSED: {refused}" if refused else "ok"


def _marks(names: list[str]) -> str:
    return ", ".join(names) if names else ""


def render_ports(report: PortsReport, out: TextIO) -> None:
    out.write("serial ports:\n")
    if report.serial:
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
        out.write(table(serial_headers, serial_rows) + "\n")
    else:
        out.write("  (none)\n")
    out.write("\nUSB devices:\n")
    if report.usb:
        usb_rows = [
            (
                f"{d.bus:03d}:{d.address:03d}"
                if d.bus is not None and d.address is not None
                else None,
                f"{d.vid}:{d.pid}",
                d.manufacturer,
                d.product,
                d.serial_number,
                _marks(d.configured),
            )
            for d in report.usb
        ]
        usb_headers = ("bus:addr", "vid:pid", "manufacturer", "product", "serial", "configured")
        out.write(table(usb_headers, usb_rows) + "\n")
    else:
        out.write("  (none listed)\n")
    out.write("\nCAN interfaces:\n")
    if report.can:
        can_rows = [(c.name, c.state, _marks(c.configured)) for c in report.can]
        out.write(table(("interface", "state", "configured"), can_rows) + "\n")
    else:
        out.write("  (none)\n")
    if report.configured:
        out.write("\nconfigured devices:\n")
        rows = [
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
        out.write(table(configured_headers, rows) + "\n")
    out.write("\ndrivers:\n")
    driver_rows = [
        (d.name, f"{d.module}:{d.cls}", d.source, _state(d.refused)) for d in report.drivers
    ]
    out.write(table(("driver", "class", "from", "state"), driver_rows) + "\n")
    if report.games:
        out.write("\ngames from installed packages:\n")
        game_rows = [
            (
                g.name,
                f"{g.module}:{g.cls}",
                g.source,
                f"REFUSED: {g.refused}" if g.refused else "ok",
            )
            for g in report.games
        ]
        out.write(table(("game", "class", "from", "state"), game_rows) + "\n")
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
