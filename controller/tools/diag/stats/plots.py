"""``diag stats`` pictures: bar charts as plain Unicode text and as a hand-written SVG file.

No plotting library: the table PC needs nothing beyond tablectl and the SVG opens in any browser.
Both renderers take the same :class:`Chart`, so text and SVG show the same figures. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal
from xml.sax.saxutils import escape, quoteattr

from tablectl.controller.tools.diag.stats.maths import BiasReport, PositionTest

Pocket = int | str

_EIGHTHS: Final = " ▏▎▍▌▋▊▉"
"""Left-aligned partial blocks, 0/8 to 7/8 of a cell (horizontal bars)."""
_RISING: Final = " ▁▂▃▄▅▆▇"
"""Bottom-aligned partial blocks, 0/8 to 7/8 of a cell (columns)."""
_FULL: Final = "█"
_REFERENCE_ROW: Final = "┊"
_REFERENCE_COLUMN: Final = "┈"

SVG_NS: Final = "http://www.w3.org/2000/svg"


@dataclass(frozen=True)
class Bar:
    label: str
    value: float


@dataclass(frozen=True)
class Chart:
    """One bar chart. ``style``: one text row per bar (``rows``, for a few dozen bars) or one
    text column per bar or group of bars (``columns``, for hundreds)."""

    title: str
    x_label: str
    y_label: str
    bars: tuple[Bar, ...]
    reference: float | None = None
    reference_label: str = "expected"
    style: Literal["rows", "columns"] = "rows"


def _top(chart: Chart) -> float:
    top = max((b.value for b in chart.bars), default=0.0)
    if chart.reference is not None:
        top = max(top, chart.reference)
    return top if top > 0 else 1.0


def _number(value: float) -> str:
    return f"{value:g}" if float(value).is_integer() else f"{value:.1f}"


# --- text ---------------------------------------------------------------------------------------


def text_lines(chart: Chart, *, width: int) -> list[str]:
    """The chart as lines of at most ``width`` characters (each a single-width character)."""
    width = max(1, width)
    body = _rows(chart, width) if chart.style == "rows" else _columns(chart, width)
    lines = [chart.title, *body]
    return [line[:width].rstrip() for line in lines]


def _rows(chart: Chart, width: int) -> list[str]:
    label_w = max((len(b.label) for b in chart.bars), default=1)
    value_w = max((len(_number(b.value)) for b in chart.bars), default=1)
    area = max(1, width - label_w - value_w - 2)
    top = _top(chart)
    mark = None
    if chart.reference is not None:
        mark = min(area - 1, round(chart.reference / top * area))
    lines = []
    if chart.reference is not None:
        lines.append(
            f"{chart.y_label}; {_REFERENCE_ROW} {chart.reference_label} {_number(chart.reference)}"
        )
    else:
        lines.append(chart.y_label)
    for bar in chart.bars:
        eighths = round(max(0.0, bar.value) / top * area * 8)
        cells = list(_FULL * (eighths // 8) + (_EIGHTHS[eighths % 8] if eighths % 8 else ""))
        cells += [" "] * (area - len(cells))
        if mark is not None and cells[mark] == " ":
            cells[mark] = _REFERENCE_ROW
        lines.append(f"{bar.label:>{label_w}} {''.join(cells)} {_number(bar.value):>{value_w}}")
    return lines


def _columns(chart: Chart, width: int, height: int = 8) -> list[str]:
    top = _top(chart)
    reference = "" if chart.reference is None else _number(chart.reference)
    axis = max(len(_number(top)), len(reference), 1)
    plot_w = max(1, width - axis - 1)
    values = [b.value for b in chart.bars]
    group = max(1, math.ceil(len(values) / plot_w))
    # The largest of each group: a single odd position must stay visible when squeezed.
    columns = [max(values[i : i + group]) for i in range(0, len(values), group)]
    ref_row = None
    if chart.reference is not None:
        ref_row = min(height - 1, int(chart.reference / top * height))
    lines = []
    note = f" (largest of every {group})" if group > 1 else ""
    if chart.reference is not None:
        lines.append(
            f"{chart.y_label}{note}; {_REFERENCE_COLUMN} {chart.reference_label} "
            f"{_number(chart.reference)}"
        )
    else:
        lines.append(chart.y_label + note)
    for row in range(height - 1, -1, -1):  # top row first
        cells = []
        for value in columns:
            eighths = round(max(0.0, value) / top * height * 8) - row * 8
            if eighths >= 8:
                cells.append(_FULL)
            elif eighths > 0:
                cells.append(_RISING[eighths])
            else:
                cells.append(_REFERENCE_COLUMN if row == ref_row else " ")
        # The reference's value marks its row on the axis: tall columns can hide its line.
        tick = (
            _number(top)
            if row == height - 1
            else "0"
            if row == 0
            else reference
            if row == ref_row
            else ""
        )
        edge = "┤" if row == ref_row else "│"
        lines.append(f"{tick:>{axis}}{edge}{''.join(cells)}")
    lines.append(" " * axis + "└" + "─" * len(columns))
    first = chart.bars[0].label if chart.bars else ""
    last = chart.bars[-1].label if chart.bars else ""
    span = len(columns)
    ends = first + last.rjust(max(len(last), span - len(first)))
    lines.append(" " * (axis + 1) + ends)
    lines.append(" " * (axis + 1) + chart.x_label)
    return lines


# --- SVG ----------------------------------------------------------------------------------------

_W: Final = 760
_H: Final = 300
_LEFT: Final = 64
_RIGHT: Final = 20
_TOP: Final = 40
_BOTTOM: Final = 56
_MAX_TICKS: Final = 40


def _svg_chart(chart: Chart, y0: int) -> list[str]:
    plot_w, plot_h = _W - _LEFT - _RIGHT, _H - _TOP - _BOTTOM
    base = y0 + _TOP + plot_h
    top = _top(chart)
    scale = plot_h / top
    n = max(1, len(chart.bars))
    step = plot_w / n
    out = [f'<g class="chart" data-title={quoteattr(chart.title)}>']
    out.append(
        f'<text class="title" x="{_W / 2:g}" y="{y0 + 24}" text-anchor="middle" '
        f'font-size="16">{escape(chart.title)}</text>'
    )
    for i, bar in enumerate(chart.bars):
        h = max(0.0, bar.value) * scale
        out.append(
            f'<rect class="bar" x="{_LEFT + i * step + step * 0.1:.2f}" y="{base - h:.2f}" '
            f'width="{step * 0.8:.2f}" height="{h:.2f}" fill="#4a6fa5" '
            f"data-label={quoteattr(bar.label)} data-value={quoteattr(_number(bar.value))}>"
            f"<title>{escape(bar.label)}: {escape(_number(bar.value))}</title></rect>"
        )
    every = max(1, math.ceil(n / _MAX_TICKS))
    for i, bar in enumerate(chart.bars):
        if i % every == 0:
            x = _LEFT + (i + 0.5) * step
            out.append(
                f'<text class="tick x-tick" x="{x:.2f}" y="{base + 14}" text-anchor="middle" '
                f'font-size="9">{escape(bar.label)}</text>'
            )
    out.append(
        f'<line class="axis x-axis" x1="{_LEFT}" y1="{base}" x2="{_LEFT + plot_w}" '
        f'y2="{base}" stroke="black"/>'
    )
    out.append(
        f'<line class="axis y-axis" x1="{_LEFT}" y1="{base}" x2="{_LEFT}" '
        f'y2="{base - plot_h}" stroke="black"/>'
    )
    for fraction in (0.0, 0.5, 1.0):
        y = base - fraction * plot_h
        out.append(
            f'<text class="tick y-tick" x="{_LEFT - 6}" y="{y + 3:.2f}" text-anchor="end" '
            f'font-size="10">{escape(_number(top * fraction))}</text>'
        )
    if chart.reference is not None:
        y = base - chart.reference * scale
        out.append(
            f'<line class="reference" x1="{_LEFT}" y1="{y:.2f}" x2="{_LEFT + plot_w}" '
            f'y2="{y:.2f}" stroke="#c0392b" stroke-dasharray="4 3" '
            f"data-value={quoteattr(_number(chart.reference))}/>"
        )
        out.append(
            f'<text class="reference-label" x="{_LEFT + plot_w}" y="{y - 4:.2f}" '
            f'text-anchor="end" font-size="10">'
            f"{escape(chart.reference_label)} {escape(_number(chart.reference))}</text>"
        )
    out.append(
        f'<text class="x-label" x="{_LEFT + plot_w / 2:g}" y="{y0 + _H - 12}" '
        f'text-anchor="middle" font-size="12">{escape(chart.x_label)}</text>'
    )
    mid = base - plot_h / 2
    out.append(
        f'<text class="y-label" x="16" y="{mid:g}" text-anchor="middle" font-size="12" '
        f'transform="rotate(-90 16 {mid:g})">{escape(chart.y_label)}</text>'
    )
    out.append("</g>")
    return out


def svg_document(charts: Sequence[Chart], *, title: str) -> str:
    """The charts one above the other in one standalone SVG document."""
    height = _H * max(1, len(charts))
    lines = [
        '<?xml version="1.0" encoding="UTF-8"?>',
        f'<svg xmlns="{SVG_NS}" width="{_W}" height="{height}" '
        f'viewBox="0 0 {_W} {height}" font-family="sans-serif">',
        f"<title>{escape(title)}</title>",
        f'<rect class="background" x="0" y="0" width="{_W}" height="{height}" fill="white"/>',
    ]
    for i, chart in enumerate(charts):
        lines += _svg_chart(chart, i * _H)
    lines.append("</svg>")
    return "\n".join(lines) + "\n"


# --- the charts of a report ---------------------------------------------------------------------


def sector_chart(report: BiasReport, order: Sequence[Pocket], size: int) -> Chart:
    """Spins per sector of ``size`` neighbouring pockets, clockwise from the first of ``order``
    (the last sector is shorter when ``size`` does not divide the wheel; its expectation too,
    but the reference line is a whole sector's; each label names its pockets)."""
    counts = {f.number: f.count for f in report.frequencies}
    bars = []
    for start in range(0, len(order), size):
        sector = order[start : start + size]
        label = " ".join(str(p) for p in sector)
        bars.append(Bar(label, float(sum(counts.get(p, 0) for p in sector))))
    expected = report.spins / report.pockets * size
    return Chart(
        title=f"spins per sector of {size} neighbouring pockets (wheel order)",
        x_label="sector (its pockets, clockwise)",
        y_label="spins",
        bars=tuple(bars),
        reference=expected,
        reference_label=f"expected per {size} pockets",
    )


def wheel_charts(report: BiasReport, order: Sequence[Pocket], sector_size: int) -> list[Chart]:
    """Count by number in wheel order with the expected count, then the sectors."""
    counts = {f.number: f.count for f in report.frequencies}
    by_number = Chart(
        title="spins per number, in wheel order",
        x_label="number (clockwise from 0)",
        y_label="spins",
        bars=tuple(Bar(str(p), float(counts.get(p, 0))) for p in order),
        reference=report.spins / report.pockets,
    )
    return [by_number, sector_chart(report, order, sector_size)]


def position_chart(what: str, test: PositionTest) -> Chart:
    """Each position's χ² against uniform; the reference is its expectation, k − 1."""
    return Chart(
        title=f"chi-square of the {what} at each position ({len(test.categories)} {what}s)",
        x_label="position in the shoe",
        y_label="chi-square",
        bars=tuple(Bar(str(i + 1), chi) for i, chi in enumerate(test.position_chi)),
        reference=float(len(test.categories) - 1),
        reference_label="expected (dof)",
        style="columns",
    )
