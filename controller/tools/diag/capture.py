"""Capture files of ``diag sniff --capture``: what crossed the wire, when, in which direction.

Text, one chunk per line, so it diffs and greps and a replayer needs no parser::

    # tablectl capture 1
    # device wheel driver cammegh-ss2 port /dev/ttyUSB0 started 2026-11-30T10:00:00Z
    0.000000 tx 2a580d0a
    0.012345 rx 2a583b313b3130313b20203b303b3134303b300d0a

Seconds since start (monotonic), ``rx`` (device → host) or ``tx``, the bytes in hex as read or
written: chunk boundaries are the transport's, so a replay reproduces split frames too.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, TextIO

from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.link import Direction

CAPTURE_HEADER = "# tablectl capture 1"


@dataclass(frozen=True)
class CaptureRecord:
    """One chunk: seconds since the start, direction, bytes."""

    t: float
    direction: Literal["rx", "tx"]
    data: bytes


class CaptureWriter:
    """Appends chunks to an open text file as they happen (flushed per line: a capture cut
    short by Ctrl-C or a crash keeps everything up to the last chunk)."""

    def __init__(self, out: TextIO, *, start: float, description: str = "") -> None:
        self._out = out
        self._start = start
        out.write(CAPTURE_HEADER + "\n")
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        head = f"{description} " if description else ""
        out.write(f"# {head}started {stamp}\n")
        out.flush()

    def write(self, direction: Direction, data: bytes, at: float) -> None:
        self._out.write(f"{max(0.0, at - self._start):.6f} {direction} {data.hex()}\n")
        self._out.flush()


def load_capture(path: Path | str) -> list[CaptureRecord]:
    """Read a capture file written by ``diag sniff --capture``."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DiagError(f"{path}: cannot read capture: {exc}") from None
    records: list[CaptureRecord] = []
    last = 0.0
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        where = f"{path}:{number}"
        if len(parts) != 3 or parts[1] not in ("rx", "tx"):
            raise DiagError(f"{where}: expected '<seconds> <rx|tx> <hex>', got {line[:60]!r}")
        try:
            t = float(parts[0])
            data = bytes.fromhex(parts[2])
        except ValueError as exc:
            raise DiagError(f"{where}: {exc}") from None
        if not t >= last:  # also refuses NaN
            raise DiagError(f"{where}: time {parts[0]} goes backwards")
        last = t
        direction: Literal["rx", "tx"] = "rx" if parts[1] == "rx" else "tx"
        records.append(CaptureRecord(t, direction, data))
    return records


def rx_bytes(records: list[CaptureRecord]) -> bytes:
    """Everything the device sent, in order (feed it to the device's decoder)."""
    return b"".join(r.data for r in records if r.direction == "rx")
