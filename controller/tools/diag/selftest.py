"""``diag selftest DEVICE``: run the device's own self-test and explain every result code.
Progress goes to stderr (stdout stays clean for ``--json``); exit 0 only when no code is a fault."""

from __future__ import annotations

import asyncio
from typing import TextIO

from tablectl.controller.tools.diag.devices.plugins import SelfTestOptions, SelfTestReport
from tablectl.controller.tools.diag.link import Link
from tablectl.controller.tools.diag.render import emit_json, table
from tablectl.controller.tools.diag.target import Target


class Progress:
    """``self-test running: 12 s ............`` on one line of stderr (rewritten on a tty)."""

    def __init__(self, err: TextIO) -> None:
        self._err = err
        self._tty = err.isatty()
        self._dots = 0
        self.shown = False

    def __call__(self, elapsed: float) -> None:
        self._dots += 1
        self.shown = True
        if self._tty:
            self._err.write(f"\rself-test running: {elapsed:4.0f} s {'.' * (self._dots % 60)}")
        elif self._dots % 10 == 0:
            self._err.write(f". {elapsed:.0f} s\n")
        else:
            self._err.write(".")
        self._err.flush()

    def finish(self) -> None:
        if self.shown:
            self._err.write("\n")
            self._err.flush()


def render_report(report: SelfTestReport, out: TextIO) -> None:
    rows = [(c.code, "ok" if c.ok else "FAULT", c.meaning) for c in report.codes]
    if rows:
        out.write(table(("code", "result", "meaning"), rows, right="0") + "\n")
    else:
        out.write("no result codes received\n")
    for note in report.notes:
        out.write(f"note: {note}\n")
    if report.timed_out:
        out.write(f"TIMED OUT after {report.elapsed:.0f} s\n")
    verdict = "PASSED" if report.ok else "FAILED"
    out.write(f"self-test {verdict} in {report.elapsed:.1f} s\n")
    out.flush()


def report_json(report: SelfTestReport, device: str) -> dict[str, object]:
    return {
        "device": device,
        "ok": report.ok,
        "timed_out": report.timed_out,
        "elapsed": round(report.elapsed, 3),
        "codes": [{"code": c.code, "ok": c.ok, "meaning": c.meaning} for c in report.codes],
        "notes": list(report.notes),
    }


async def run_selftest(
    target: Target,
    options: SelfTestOptions,
    *,
    out: TextIO,
    err: TextIO,
    as_json: bool = False,
) -> int:
    """Run it, show progress meanwhile, print the codes with their meanings."""
    diag = target.diagnostics
    progress = Progress(err)
    async with Link(diag.open_stream(), diag.port) as link:
        if not as_json:
            out.write(f"self-test of {target.device.id} ({diag.family}) on {diag.port}\n")
            out.flush()
        try:
            report = await diag.selftest(link, options, progress)
        except asyncio.CancelledError:
            progress.finish()
            err.write("self-test interrupted: the device may still be testing\n")
            raise
        progress.finish()
    if as_json:
        emit_json(out, report_json(report, target.device.id))
    else:
        render_report(report, out)
    return 0 if report.ok else 1
