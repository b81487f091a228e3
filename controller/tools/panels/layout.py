"""The screen: a header, one panel per table in a grid that fits the terminal, the log footer.
Every line is cut to the width (never wrapped), and nothing is JSON."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Final

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from tablectl.controller.tools.panels.model import Floor, StampedLine, TableView
from tablectl.controller.tools.panels.results import card_text, live_line, result_lines

PANEL_WIDTH: Final = 38
"""The narrowest a panel gets before the grid drops a column."""
MIN_FOOTER: Final = 3
"""Footer lines the layout keeps room for (it goes compact before it gives them up)."""
_OUTBOX: Final = ("dim", *[""] * 9, "bold yellow")
"""The outbox backlog's style by depth (0, 1–9, 10 or more)."""
_PHASE_STYLES: Final = {
    "open": "bold green",
    "betting": "bold green",
    "idle": "dim",
    "starting": "dim",
    "held": "bold red",
    "pending_decision": "bold red",
    "void": "bold red",
}


def table_panel(view: TableView, *, compact: bool = False, width: int = PANEL_WIDTH) -> Panel:
    """One table's panel, for an inner ``width`` of ``width - 4`` (border and padding)."""
    inner = max(width - 4, 8)
    lines: list[Text] = [_phase_line(view), _health_line(view)]
    if view.faults:
        lines.append(Text("faults " + ", ".join(view.faults), "bold red"))
    live = live_line(view, inner)
    if live is not None:
        lines.append(live)
    lines += result_lines(view, inner, compact=compact)
    if not view.results:
        lines.append(Text("no outcome yet", "dim"))
    for line in lines:
        line.no_wrap = True
        line.overflow = "ellipsis"
    alarm = _alarmed(view)
    title = Text(view.table, "bold") + Text(f" {view.game}" if view.game else "", "cyan")
    state = "offline" if view.online is False else "online" if view.online else "?"
    subtitle = Text(state, "bold red" if view.online is False else "green")
    if view.dealer:  # "dealer" where the border has room: the state is never cut for it
        said = f"dealer {view.dealer}"
        subtitle.append(
            f" · {said if len(state) + len(said) + 7 <= inner else view.dealer}", "cyan"
        )
    return Panel(
        Group(*lines),
        title=title,
        title_align="left",
        subtitle=subtitle,
        subtitle_align="right",
        border_style="red" if alarm else "blue",
        padding=(0, 1),
    )


def _phase_line(view: TableView) -> Text:
    line = Text()
    phase = view.phase or "starting"
    line.append(phase.replace("_", " "), _PHASE_STYLES.get(phase, "bold yellow"))
    if view.round:
        line.append(f" · #{view.round}")
    if view.rounds is not None:
        line.append(f" · {view.rounds} rounds", "dim")
    if view.locked:
        line.append(" · LOCKED", "bold red")
    return line


def _health_line(view: TableView) -> Text:
    line = Text()
    for device in view.devices:
        ok = device.available and not device.faults
        line.append(device.device, "" if ok else "bold red")
        line.append(" ● " if ok else " ✗ ", "green" if ok else "bold red")
    line.append("journal", "" if view.journal_ok else "bold red")
    line.append(" ● " if view.journal_ok else " ✗ ", "green" if view.journal_ok else "bold red")
    if view.outbox is not None:  # a backlog of a few records is normal under load; ten is not
        line.append(f"outbox {view.outbox}", _OUTBOX[min(view.outbox, 10)])
    return line


def footer_line(stamped: StampedLine) -> Text:
    """A footer line: outcomes with card symbols, raised alarms in red."""
    line = stamped.line
    if line.kind == "alarm" and " raised " in line.text:
        text = Text(stamped.text(), "red")
    elif line.kind == "outcome":
        text = card_text(stamped.text())
        if " VOID " in line.text:
            text.stylize("bold red")
    else:
        text = Text(stamped.text(), "dim" if line.kind in ("status", "event") else "")
    text.no_wrap = True
    text.overflow = "ellipsis"
    return text


class FloorScreen:
    """The whole screen for a :class:`Floor`, laid out at render time for whatever size it is given:
    full or compact results, or a line a table when the panels do not fit."""

    def __init__(
        self,
        floor: Floor,
        *,
        header: Callable[[], str] = lambda: "tablectl",
        tables: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self.floor = floor
        self.header = header
        self._order = tables

    def views(self) -> list[TableView]:
        views = self.floor.tables()
        if self._order is None:
            return views
        by_name = {view.table: view for view in views}
        return [by_name[name] for name in self._order() if name in by_name]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        height = options.height or console.height
        views = self.views()
        yield Text(self.header(), "bold", no_wrap=True, overflow="ellipsis")
        if not views:
            yield Text("waiting for the first table…", "dim")
            yield _footer(self.floor.footer, max(height - 5, 1))
            return
        columns = max(1, min(len(views), width // PANEL_WIDTH))
        for compact in (False, True):
            rows = _rows(views, columns, width // columns, compact=compact)
            grid = _grid(rows, columns)
            grid_height = _height(console, options, grid, width)
            if grid_height + 1 + MIN_FOOTER + 2 < height:
                break
        else:
            if grid_height + 1 > height:  # more tables than panels fit: one line a table
                listing = floor_list(views, max(height - 4 - MIN_FOOTER - 2, 1))
                yield listing
                room = height - _height(console, options, listing, width) - 1 - 2 - 1
                if room >= 1:
                    yield _footer(self.floor.footer, room)
                return
        room = height - grid_height - 1 - 2 - 1  # the header, the footer's border, a spare row
        free = columns - len(rows[-1])
        if room >= MIN_FOOTER or not free:
            yield grid
            if room >= 1:
                yield _footer(self.floor.footer, room)
            return
        # No room below the panels: the footer takes the free cells beside the last row.
        yield _grid(rows[:-1], columns)
        last = _grid([rows[-1]], len(rows[-1]))
        beside = _height(console, options, last, width - free * (width // columns)) - 2
        bottom = Table.grid(expand=True)
        bottom.add_column(ratio=len(rows[-1]))
        bottom.add_column(ratio=free)
        bottom.add_row(last, _footer(self.floor.footer, max(beside, 1)))
        yield bottom


def floor_list(views: Sequence[TableView], most: int | None = None) -> Table:
    """A line a table (a floor larger than the screen): phase, round, health, last result; at
    most ``most`` lines, the tables with an alarm first (the others are counted on the last)."""
    listing = Table(box=box.SIMPLE_HEAD, expand=True, padding=(0, 1), show_edge=False)
    for name, ratio in (("table", 3), ("round", 3), ("health", 2), ("last", 7)):
        listing.add_column(name, ratio=ratio, no_wrap=True, overflow="ellipsis")
    shown = sorted(views, key=lambda view: not _alarmed(view))
    if most is not None and len(shown) > most:
        hidden = len(shown) - most + 1
        shown = shown[: most - 1]
    else:
        hidden = 0
    for view in shown:
        name = view.phase or "starting"
        phase = Text(name.replace("_", " "), _PHASE_STYLES.get(name, "bold yellow"))
        phase.append(f" #{view.round}" if view.round else "")
        faults = ", ".join(view.faults)
        health = Text(faults or ("offline" if view.online is False else "ok"))
        health.stylize("bold red" if _alarmed(view) else "green")
        last = card_text(view.results[-1].summary) if view.results else Text("-", "dim")
        table = Text(view.table, "bold")
        table.append(f" {view.dealer}" if view.dealer else "", "cyan")
        listing.add_row(table, phase, health, last)
    if hidden:
        listing.add_row(Text(f"+{hidden} more", "dim"), Text("(a taller terminal shows them)"))
    return listing


def _alarmed(view: TableView) -> bool:
    """A latched fault, a lock, offline, or a journal that cannot write: a red panel."""
    return bool(view.faults) or view.locked or view.online is False or not view.journal_ok


def _rows(
    views: Sequence[TableView], columns: int, panel_width: int, *, compact: bool
) -> list[list[RenderableType]]:
    return [
        [table_panel(view, compact=compact, width=panel_width) for view in views[at : at + columns]]
        for at in range(0, len(views), columns)
    ]


def _grid(rows: Sequence[Sequence[RenderableType]], columns: int) -> Table:
    grid = Table.grid(expand=True)
    for _ in range(columns):
        grid.add_column(ratio=1)
    for row in rows:
        grid.add_row(*row, *[Text("")] * (columns - len(row)))
    return grid


def _height(
    console: Console, options: ConsoleOptions, renderable: RenderableType, width: int
) -> int:
    return len(console.render_lines(renderable, options.update(width=width, height=None)))


def _footer(lines: Iterable[StampedLine], room: int) -> Panel:
    shown = list(lines)[-room:]
    body: list[RenderableType] = [footer_line(line) for line in shown] or [Text("", "dim")]
    return Panel(Group(*body), title="log", title_align="left", border_style="dim", padding=(0, 1))
