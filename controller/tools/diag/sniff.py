"""``diag sniff DEVICE``: raw traffic with timestamps, direction, hex and ASCII; optional capture.

Software cannot tap a serial line another process owns: ``tx`` is what diag itself sends. For a
service's own traffic, put a hardware tap or ``socat -x`` in between. ``--capture`` is flushed per
chunk, so it survives Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tablectl.controller.tools.diag.capture import CaptureWriter
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.link import Direction, Link, Tap
from tablectl.controller.tools.diag.render import emit_json, hexdump
from tablectl.controller.tools.diag.session import Deadline
from tablectl.controller.tools.diag.target import Target


@dataclass
class SniffTotals:
    rx_bytes: int = 0
    rx_chunks: int = 0
    tx_bytes: int = 0
    tx_chunks: int = 0


def _printer(out: TextIO, start: float, as_json: bool) -> Tap:
    def show(direction: Direction, data: bytes, at: float) -> None:
        offset = at - start
        if as_json:
            text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in data)
            emit_json(
                out, {"t": round(offset, 6), "dir": direction, "hex": data.hex(), "ascii": text}
            )
            return
        rows = hexdump(data)
        out.write(f"{offset:10.3f} {direction}  {rows[0]}\n")
        for row in rows[1:]:
            out.write(f"{'':14}  {row}\n")
        out.flush()

    return show


async def run_sniff(
    target: Target,
    *,
    seconds: float | None,
    stop: asyncio.Event,
    out: TextIO,
    sends: list[bytes] | None = None,
    repeat: float | None = None,
    capture: Path | None = None,
    as_json: bool = False,
    err: TextIO | None = None,
) -> int:
    """Print (and capture) traffic until stopped; ``sends`` go out first (and every ``repeat``)."""
    err = err if err is not None else sys.stderr
    diag = target.diagnostics
    totals = SniffTotals()
    start = time.monotonic()
    show = _printer(out, start, as_json)
    with contextlib.ExitStack() as files:
        writer: CaptureWriter | None = None
        if capture is not None:
            try:
                handle = files.enter_context(capture.open("w", encoding="utf-8"))
            except OSError as exc:
                raise DiagError(f"{capture}: cannot write capture: {exc.strerror}") from None
            description = (
                f"device {target.device.id} driver {target.device.driver} port {diag.port}"
            )
            writer = CaptureWriter(handle, start=start, description=description)

        def tap(direction: Direction, data: bytes, at: float) -> None:
            if direction == "rx":
                totals.rx_bytes += len(data)
                totals.rx_chunks += 1
            else:
                totals.tx_bytes += len(data)
                totals.tx_chunks += 1
            show(direction, data, at)
            if writer is not None:
                writer.write(direction, data, at)

        async with Link(diag.open_stream(), diag.port, tap=tap) as link:
            deadline = Deadline(seconds, stop)
            sender = asyncio.create_task(_send(link, sends or [], repeat, deadline))
            try:
                # Reading drains the link's queue (the tap has shown each chunk already) and
                # turns a lost link into an error instead of a silent, endless sniff.
                while not deadline.done:
                    await link.read(deadline.left(0.25))
            finally:
                sender.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await sender
    err.write(
        f"sniff: rx {totals.rx_bytes} bytes in {totals.rx_chunks} chunks, "
        f"tx {totals.tx_bytes} bytes in {totals.tx_chunks} chunks"
        + (f"; capture in {capture}" if capture is not None else "")
        + "\n"
    )
    return 0


async def _send(link: Link, sends: list[bytes], repeat: float | None, deadline: Deadline) -> None:
    while sends:
        for data in sends:
            await link.send(data)
        if repeat is None or deadline.done:
            return
        await asyncio.sleep(repeat)
