"""The README's pictures of the dashboard, taken from live simulated tables::

    python -m tablectl.controller.tools.dashboard.screenshots docs/images

An embedded broker, lab tables, the dashboard and headless Chromium (playwright);
:func:`start_lab_tables` is also what the browser test runs its tables with.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from tablectl.controller.lab.floor import LabFloor
from tablectl.controller.service.logs import configure_logging

CHROMIUM: Final = "/usr/bin/chromium"
"""Debian's Chromium (``apt-get install chromium``): playwright drives it, downloads nothing."""
VIEWPORT: Final = {"width": 1280, "height": 800}


async def start_lab_tables(
    group: asyncio.TaskGroup,
    stack: contextlib.AsyncExitStack,
    folder: Path,
    broker: tuple[str, int],
    *,
    tables: Sequence[str] = ("roulette", "lucky7"),
    speed: float = 20.0,
    seed: int = 7,
    roulette_faults: Sequence[str] = (),
) -> list[str]:
    """Start lab tables publishing to ``broker``; their table ids. ``roulette-fault`` is a second
    wheel, ``ROU-02``, that powers down with a latched fault on its fourth game."""
    lab = LabFloor(group, stack, folder, broker, speed=speed, seed=seed)
    ids: list[str] = []
    for name in tables:
        if name == "roulette-fault":
            ids.append(
                await lab.start("roulette", table_id="ROU-02", faults=("fault@4",), seed=seed + 1)
            )
        else:
            faults = roulette_faults if name == "roulette" else ()
            ids.append(await lab.start(name, faults=faults))
    return ids


async def take_screenshots(out: Path, *, spins: int = 20, speed: float = 20.0) -> list[Path]:
    """Run the tables and the dashboard, save the two pictures in the folder ``out``; their
    paths."""
    import uvicorn  # noqa: PLC0415 - the dashboard extra
    from playwright.async_api import async_playwright  # noqa: PLC0415 - a dev dependency

    from tablectl.controller.mqtt.broker import EmbeddedBroker  # noqa: PLC0415
    from tablectl.controller.tools.dashboard.app import create_app  # noqa: PLC0415
    from tablectl.controller.tools.dashboard.floor import Floor  # noqa: PLC0415
    from tablectl.controller.tools.dashboard.subscriber import Broker, FloorFeed  # noqa: PLC0415

    saved: list[Path] = []
    with tempfile.TemporaryDirectory() as folder:
        try:
            async with (
                EmbeddedBroker() as broker,
                contextlib.AsyncExitStack() as stack,
                asyncio.TaskGroup() as group,
            ):
                address = (broker.host, broker.port)
                tables = ("roulette", "roulette-fault", "baccarat", "lucky7", "dream_catcher")
                await start_lab_tables(
                    group, stack, Path(folder), address, tables=tables, speed=speed
                )
                feed = FloorFeed(Floor("tablectl"))
                app = create_app(feed, broker=Broker(*address, url=broker.url))
                sock = socket.create_server(("127.0.0.1", 0))
                base = f"http://127.0.0.1:{sock.getsockname()[1]}"
                server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
                serving = group.create_task(server.serve(sockets=[sock]), name="dashboard")
                async with async_playwright() as p:
                    browser = await p.chromium.launch(
                        executable_path=CHROMIUM, args=["--no-sandbox"]
                    )
                    page = await browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
                    await page.goto(f"{base}/billboard/ROU-DEMO")
                    await page.wait_for_function(
                        "n => document.querySelectorAll('.last-numbers .ball').length >= n",
                        arg=spins,
                        timeout=300_000,
                    )
                    saved.append(out / "billboard.png")
                    await page.screenshot(path=saved[-1])
                    await page.goto(base + "/")
                    await page.wait_for_selector(".tile.level-fault", timeout=60_000)
                    await page.wait_for_function(
                        "() => document.querySelectorAll('.tile .last-outcome.none').length == 0",
                        timeout=120_000,
                    )
                    saved.append(out / "dashboard.png")
                    await page.screenshot(path=saved[-1])
                    await browser.close()
                server.should_exit = True
                await serving
                raise _FinishedError  # stops every table, simulator and the server (the task group)
        except* _FinishedError:
            pass
    return saved


class _FinishedError(Exception):
    """Raised in the task group once the pictures are saved, so that it cancels its tasks."""


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 1 or args[0].startswith("-"):
        print("usage: python -m tablectl.controller.tools.dashboard.screenshots OUT_DIR")
        return 2
    configure_logging("console", verbose=False, quiet=True)
    out = Path(args[0])
    out.mkdir(parents=True, exist_ok=True)
    for path in asyncio.run(take_screenshots(out)):
        print(f"saved {path} ({path.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
