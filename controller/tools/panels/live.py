"""Running the panels: a :class:`PanelView` fed by the ``watch`` subscription, drawn by rich
``Live``, redrawn twice a second while anything changed; logs go to the footer, never across the
panels."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final, TextIO

from rich.console import Console
from rich.live import Live

from tablectl.controller.mqtt.security import ClientSecurity
from tablectl.controller.tools.panels.layout import FloorScreen
from tablectl.controller.tools.panels.logsink import LogSink, redirect_stderr
from tablectl.controller.tools.panels.model import Floor
from tablectl.controller.tools.watch import Line, watch

REFRESH: Final = 0.5
"""Seconds between redraws (only when something changed, or the clock's second did)."""
RECORD_SIZE: Final = (120, 44)
"""Columns and rows of a recorded screen (``--record``)."""
_FONT_FACE: Final = re.compile(r"@font-face\s*\{[^}]*\}\s*")


class PanelView:
    """A :class:`Floor` on screen: feed it messages, run it until stopped."""

    def __init__(
        self,
        floor: Floor,
        console: Console,
        *,
        title: str,
        clock: Callable[[], datetime] = datetime.now,
        tables: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self.floor = floor
        self.console = console
        self.title = title
        self.status = "connecting…"
        self._clock = clock
        self.screen = FloorScreen(floor, header=self._header, tables=tables)

    def _header(self) -> str:
        status = self.status
        if self.floor.tables():  # "connected to mqtt://…", the "waiting for" said its part
            status = status.split(", waiting", 1)[0]
        return f"{self._clock():%H:%M:%S} {self.title} · {status} · Ctrl-C stops"

    def connected(self, line: str) -> None:
        """``watch``'s "connected to …, waiting for …" line (time stamp dropped): the header."""
        self.status = line.split(" ", 1)[-1] if line[:2].isdigit() else line
        self.floor.version += 1

    def on_message(self, topic: str, payload: bytes, retained: bool) -> Line | None:
        """A new message: into the floor, stamped with the local time."""
        del retained  # shown once either way (watch's MessageFilter)
        return self.floor.feed(topic, payload, stamp=f"{self._clock():%H:%M:%S}")

    def log(self, text: str, table: str) -> None:
        """A log line (the :class:`LogSink`'s ``on_line``): into the footer."""
        self.floor.log(text, stamp=f"{self._clock():%H:%M:%S}", table=table)

    async def run(self, stop: asyncio.Event) -> None:
        """Draw until ``stop`` is set; the last frame stays on the terminal."""
        drawn = (-1, "")
        with Live(
            self.screen,
            console=self.console,
            auto_refresh=False,
            redirect_stdout=False,
            redirect_stderr=False,
            vertical_overflow="crop",
        ) as live:
            while not stop.is_set():
                now = (self.floor.version, f"{self._clock():%H:%M:%S}")
                if now != drawn:
                    live.refresh()
                    drawn = now
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), REFRESH)
            live.refresh()


def record_svg(
    screen: FloorScreen, path: Path, *, size: tuple[int, int] = RECORD_SIZE, title: str
) -> None:
    """Render ``screen`` once at ``size`` (columns, rows) into an SVG file; the web fonts rich
    links are left out (the picture uses the viewer's monospace font, nothing is fetched)."""
    width, height = size
    console = Console(
        width=width,
        height=height,
        record=True,
        file=io.StringIO(),
        force_terminal=True,
        color_system="truecolor",
    )
    console.print(screen, height=height)
    svg = _FONT_FACE.sub("", console.export_svg(title=title))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(svg, encoding="utf-8")


async def watch_panels(
    host: str,
    port: int,
    topic_filter: str,
    *,
    console: Console,
    log_file: TextIO | None = None,
    security: ClientSecurity | None = None,
) -> None:
    """``tablectl watch`` on a terminal: the panels of every table under ``topic_filter`` until
    cancelled (Ctrl-C)."""
    levels = topic_filter.split("/")
    floor = Floor(table_level=max(len(levels) - 2, 0))
    view = PanelView(floor, console, title=f"tablectl watch {topic_filter}")
    stop = asyncio.Event()
    with redirect_stderr(LogSink(view.log, log_file)):
        drawing = asyncio.create_task(view.run(stop), name="watch:panels")
        try:
            await watch(
                host,
                port,
                topic_filter,
                emit=view.connected,
                on_message=view.on_message,
                security=security,
            )
        finally:  # the panels go first: a connection error is then one line below them
            stop.set()
            await drawing
