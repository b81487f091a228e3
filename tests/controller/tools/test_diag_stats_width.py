"""``diag stats`` on a terminal: every line of the report fits its width, not only the charts;
a pipe keeps whole lines (grep)."""

from __future__ import annotations

import io
from pathlib import Path

from tablectl.controller.core.events import BallLaunched, BetsClosed, RoundOpen, WinningNumber
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.diag.stats.command import StatsRequest, fit_lines, run_stats
from tablectl.drivers.clock import ManualClock

TS = "2026-11-30T10:00:00.000000Z"


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _journal(path: Path, numbers: list[int]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with Journal(path, "ROU-WIDTH") as journal:
        runner = TableRunner(
            table_id="ROU-WIDTH",
            engine=build_engine("ROU-WIDTH", "roulette", {}, source="test"),
            journal=journal,
            clock=ManualClock(1_764_496_800.0),
        )
        for number in numbers:
            for event in (
                RoundOpen(ts=TS, device="wheel"),
                BallLaunched(ts=TS, device="wheel", rotor_direction="cw"),
                BetsClosed(ts=TS, device="wheel"),
                WinningNumber(ts=TS, device="wheel", number=number, revolutions=6),
            ):
                runner.committer.handle(event)
    return path


def test_fit_lines_wraps_only_what_is_too_long() -> None:
    text = "short\n  an indented line that is far too long for the width\n" + "█" * 20
    assert fit_lines(text, 20).splitlines() == [
        "short",
        "  an indented line",
        "    that is far too",
        "    long for the",
        "    width",
        "█" * 20,
    ]


async def test_every_report_line_fits_a_terminal(tmp_path: Path) -> None:
    journal = _journal(tmp_path / "a-rather-long-folder-name" / "ROU-WIDTH.sqlite", [17, 5, 32])
    request = StatsRequest(journal=journal, width=50)
    out = _Terminal()
    assert await run_stats(request, out=out, err=io.StringIO(), as_json=False) == 0
    lines = out.getvalue().splitlines()
    assert all(len(line) <= 50 for line in lines), [line for line in lines if len(line) > 50]
    assert "more spins needed for an expected 5 per cell" in " ".join(
        line.strip() for line in lines
    )
    piped = io.StringIO()
    assert await run_stats(request, out=piped, err=io.StringIO(), as_json=False) == 0
    assert any(len(line) > 50 for line in piped.getvalue().splitlines())
