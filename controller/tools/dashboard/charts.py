"""The statistics page: ``diag stats``' own tests and charts, over what the tables publish.

One mechanism with ``diag stats``; only the source differs. A card published withheld keeps its
position in the shoe and is left out of the tallies; the shoe being dealt is not counted. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.games.roulette import VARIANTS, Pocket, Variant, wheel_order
from tablectl.controller.tools.diag.stats.command import SHUFFLE_ALPHA, WHEEL_ALPHA
from tablectl.controller.tools.diag.stats.maths import Verdict
from tablectl.controller.tools.diag.stats.plots import position_chart, svg_document, wheel_charts
from tablectl.controller.tools.diag.stats.shoes import shoes_from_records
from tablectl.controller.tools.diag.stats.shuffle import MIN_SHOES, shuffle_report
from tablectl.controller.tools.diag.stats.wheel import numbers_report
from tablectl.controller.tools.summary import printable

SECTOR: Final = 5
"""Pockets per sector in the wheel's sector chart (``diag stats --sector``' default)."""


@dataclass(frozen=True)
class Figures:
    """One statistic for the page: its lines of text and, when there is something to draw, the
    SVG document."""

    lines: tuple[str, ...]
    svg: str | None
    verdict: Verdict | None = None


def as_variant(name: str) -> Variant:
    """A published ``variant`` as a :data:`Variant` (``european`` for anything unknown)."""
    return next((v for v in VARIANTS if v == name), "european")


def _word(verdict: Verdict, needed: int, what: str) -> str:
    if verdict == "flagged":
        return "FLAGGED: look at this wheel again with a larger window"
    if verdict == "too_few":
        return f"too few to judge: {needed} more {what} needed (expected count per cell < 5)"
    return "ok (no evidence of bias at this risk level)"


def wheel_figures(table: str, numbers: Sequence[Pocket], variant: Variant) -> Figures:
    """The wheel bias report of ``numbers`` (oldest first) and its two charts."""
    if not numbers:
        return Figures(("no spins yet",), None)
    report = numbers_report(numbers, variant, alpha=WHEEL_ALPHA)
    charts = wheel_charts(report, wheel_order(variant), SECTOR)
    lines = (
        f"{report.spins} spin{'s' if report.spins != 1 else ''} ({variant} wheel), "
        f"χ² = {report.chi_square:.1f} on {report.dof} "
        f"dof, p = {report.p_value:.3f} (risk level {report.alpha:g})",
        _word(report.chi_verdict, report.needed, "spins"),
    )
    svg = svg_document(charts, title=f"wheel frequency, table {printable(table, 64)} ({variant})")
    return Figures(lines, svg, report.chi_verdict)


def shuffle_figures(table: str, records: Sequence[Mapping[str, Any]]) -> Figures:
    """The shuffle report of a card table's published records and its χ² by position."""
    window = shoes_from_records(records)
    report = shuffle_report(window, alpha=SHUFFLE_ALPHA)
    shoes = len(window.shoes)
    if shoes < MIN_SHOES:
        return Figures(
            (
                f"{shoes} complete shoe{'s' if shoes != 1 else ''} seen; the tests by position "
                f"need {MIN_SHOES} ({MIN_SHOES - shoes} more)",
            ),
            None,
            "too_few",
        )
    tests = [
        (what, test)
        for what, test in (("rank", report.rank_by_position), ("suit", report.suit_by_position))
        if test is not None and test.positions > 0
    ]
    lines = [f"{shoes} shoes, {report.cards} cards ({report.unreadable} withheld or unread)"]
    verdict: Verdict | None = None
    for what, test in tests:
        lines.append(
            f"{what} by position: χ² = {test.chi_square:.1f} on {test.dof} dof, "
            f"p = {test.p_value:.3f}: {_word(test.sum_verdict, test.needed, 'shoes')}"
        )
        if what == "rank":
            verdict = test.sum_verdict
    charts = [position_chart(what, test) for what, test in tests]
    title = f"shuffle χ² by position, table {printable(table, 64)}"
    svg = svg_document(charts, title=title) if charts else None
    return Figures(tuple(lines), svg, verdict)
