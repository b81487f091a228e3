"""``tablectl demo``: whole tables on one machine, one command.

An in-process broker, simulated devices speaking the real wire protocols to the real drivers, the
real controller per table, a crew (a dealer on duty per table, one dealer change: lab/crew.py),
and a live view subscribed like any results display. The journals are kept, and the run ends
with a summary per table.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Final, TextIO

from rich.console import Console
from rich.text import Text

from tablectl.controller.lab.crew import LabCrew, write_roster
from tablectl.controller.lab.floor import LabFloor, relief_table
from tablectl.controller.mqtt.broker import EmbeddedBroker
from tablectl.controller.tools.panels import Floor
from tablectl.controller.tools.panels.live import PanelView, record_svg
from tablectl.controller.tools.panels.logsink import LogSink, redirect_stderr
from tablectl.controller.tools.panels.report import tally_lines
from tablectl.controller.tools.watch import watch

TABLES = ("roulette", "baccarat", "lucky7", "dream_catcher", "ultimate_texas_holdem")
"""The default tables; any other of :func:`tablectl.controller.lab.floor.lab_tables` (card games
with a dealer screen or a shoe variant, dice games, roulette games) may be named too."""
PREFIX = "tablectl"
JOURNALS: Final = Path("demo-journals")
"""Where the journals go (one folder per run, named by its start time) without ``--state-dir``."""
_LINE_KINDS: Final = frozenset({"outcome", "alarm", "status", "other"})


class _DemoOverError(Exception):
    """Raised inside the task group once every table has shown its rounds: stops them all."""


class _Demo:
    """One run: the tables started, what the view saw, how it ends."""

    def __init__(
        self,
        *,
        rounds: int,
        folder: Path,
        floor: Floor,
        tables: Sequence[str],
        speed: float,
        seed: int,
        faults: Sequence[str],
    ) -> None:
        self.rounds = rounds
        self.folder = folder
        self.floor = floor
        self.tables = tables
        self.speed = speed
        self.seed = seed
        self.faults = faults
        self.journals: dict[str, Path] = {}
        """Table id → journal file, in the order the tables started."""
        self.done = asyncio.Event()
        self.started = False
        self.broker: str | None = None
        """The embedded broker's URL, once it listens."""

    def check(self) -> None:
        """``--rounds N``: done once every table has shown N outcomes."""
        if not (self.started and self.rounds) or self.done.is_set():
            return
        tallies = {t.table: t.outcomes for t in self.floor.tallies()}
        if all(tallies.get(table, 0) >= self.rounds for table in self.journals):
            self.done.set()


async def run_demo(
    *,
    speed: float = 4.0,
    rounds: int = 0,
    seed: int = 7,
    faults: Sequence[str] = ("misspin@3",),
    state_dir: Path | None = None,
    tables: Sequence[str] = TABLES,
    events: bool = False,
    panels: bool = False,
    record: Path | None = None,
    console: Console | None = None,
) -> int:
    """Run until Ctrl-C, or until every table has shown ``rounds`` outcomes (voids count; 0 runs
    on)."""
    folder = state_dir or JOURNALS / datetime.now().strftime("%Y%m%d-%H%M%S")
    folder.mkdir(parents=True, exist_ok=True)
    kinds = _LINE_KINDS | ({"event"} if events else set())
    floor = Floor(kinds=frozenset(kinds))
    demo = _Demo(
        rounds=rounds,
        folder=folder,
        floor=floor,
        tables=tables,
        speed=speed,
        seed=seed,
        faults=faults,
    )
    out = console or Console(highlight=False)
    began = time.monotonic()
    title = f"tablectl demo · {len(tables)} tables"
    view = PanelView(floor, out, title=title, tables=lambda: list(demo.journals))
    with contextlib.ExitStack() as files:
        log: TextIO | None = None
        if panels:
            log = files.enter_context((folder / "demo.log").open("a", encoding="utf-8"))
            files.enter_context(redirect_stderr(LogSink(view.log, log)))
        try:
            await _run(demo, view, panels=panels, colour=out.is_terminal)
        except* _DemoOverError:
            pass
        finally:
            if record is not None:
                record_svg(view.screen, record, title="tablectl demo")
            _summary(demo, out, time.monotonic() - began, log=folder / "demo.log" if log else None)
    return 0


async def _run(demo: _Demo, view: PanelView, *, panels: bool, colour: bool) -> None:
    """Start the broker, the view and the tables; end (raising :class:`_DemoOverError`) when done.

    Exit order matters: the task group stops first, then the tables close (their last records still
    reach the broker), then the broker.
    """
    folder, speed, seed, tables = demo.folder, demo.speed, demo.seed, demo.tables
    async with (
        EmbeddedBroker() as broker,
        contextlib.AsyncExitStack() as stack,
        asyncio.TaskGroup() as group,
    ):
        address = (broker.host, broker.port)
        url = demo.broker = f"mqtt://{broker.host}:{broker.port}"
        stop_view = asyncio.Event()
        view.title += f" · journals in {folder}"
        if panels:
            group.create_task(view.run(stop_view), name="demo:panels")
        else:
            print(
                f"tablectl demo: tables {', '.join(tables)}; broker {url}; journals in {folder}\n"
                f"watch it from another shell: tablectl watch --url {url}\n",
                flush=True,
            )
        on_message = _consumer(demo, view, panels=panels, colour=colour)
        emit: Callable[[str], None] = view.connected if panels else _printed(view.connected)
        group.create_task(
            watch(*address, f"{PREFIX}/+/#", emit=emit, on_message=on_message), name="demo:view"
        )
        # The crew: a roster in the state dir (real scrypt hashes: a second or so), a dealer
        # signed on at each table before its first round, one dealer change during the run.
        roster = await asyncio.to_thread(write_roster, folder / "roster.toml")
        crew = LabCrew(roster)
        lab = LabFloor(
            group,
            stack,
            folder,
            address,
            speed=speed,
            seed=seed,
            crew=crew,
            relief=relief_table(tables),
        )
        demo.journals = lab.journals
        for name in tables:
            await lab.start(name, faults=demo.faults if name == "roulette" else ())
        demo.started = True
        demo.check()
        await demo.done.wait()
        stop_view.set()
        raise _DemoOverError


def _printed(connected: Callable[[str], None]) -> Callable[[str], None]:
    """The line view's "connected to …" line: printed, and told to the (recorded) panels."""

    def emit(line: str) -> None:
        print(line, flush=True)
        connected(line)

    return emit


def _consumer(
    demo: _Demo, view: PanelView, *, panels: bool, colour: bool
) -> Callable[[str, bytes, bool], None]:
    """What the view does with each new message: the floor takes it (the panels draw it, the
    tallies count it); without panels its line is printed, until the demo is done."""

    def on_message(topic: str, payload: bytes, retained: bool) -> None:
        now = datetime.now()
        line = view.on_message(topic, payload, retained)
        if line is None:
            return
        if not panels and line.kind in demo.floor.kinds and not demo.done.is_set():
            print(line.render(now, colour=colour), flush=True)
        if line.kind == "outcome":
            demo.check()

    return on_message


def _summary(demo: _Demo, out: Console, elapsed: float, *, log: Path | None) -> None:
    """The one-screen summary at the end (Ctrl-C, SIGTERM or ``--rounds``)."""
    if demo.broker is None:
        return  # nothing started (the broker could not): the error says why
    lines = tally_lines(demo.floor.tallies(), demo.journals)
    minutes, seconds = divmod(int(elapsed), 60)
    head = f"tablectl demo: {len(demo.journals)} tables, {minutes} min {seconds:02d} s"
    first = next(iter(demo.journals.values()), None)
    tail = [
        f"journals kept in {demo.folder} (check one: tablectl verify {first})"
        if first is not None
        else "stopped before the first table started"
    ]
    if log is not None:
        tail.append(f"log: {log}")
    if out.is_terminal:
        out.print()
        out.print(Text(head, "bold"))
        for line in [*lines, *tail]:
            out.print(Text(line), overflow="fold")
    else:
        print(f"\n{head}", flush=True)
        for line in [*lines, *tail]:
            print(line, flush=True)
    sys.stdout.flush()
