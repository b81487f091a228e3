"""Plain-text rendering for humans: aligned tables and hex + ASCII dumps (``--json`` skips it)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, right: str = "") -> str:
    """Columns padded to their widest cell; column letters in ``right`` are right-aligned
    (``right="023"`` right-aligns columns 0, 2 and 3), for numbers."""
    cells = [[str(h) for h in headers], *[[_cell(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        parts = [
            cell.rjust(widths[i]) if str(i) in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)


def _cell(value: object) -> str:
    return "-" if value is None or value == "" else str(value)


def hexdump(data: bytes, width: int = 16) -> list[str]:
    """``2a 58 3b 31 …  |*X;1…|`` rows; control and non-ASCII bytes show as ``.``."""
    rows = []
    for start in range(0, len(data), width):
        chunk = data[start : start + width]
        hexed = " ".join(f"{b:02x}" for b in chunk).ljust(width * 3 - 1)
        text = "".join(chr(b) if 0x20 <= b < 0x7F else "." for b in chunk)
        rows.append(f"{hexed}  |{text}|")
    return rows or ["(empty)"]


def emit_json(out: TextIO, obj: Any) -> None:
    """One JSON document per line (streams stay line-parseable; ``jq`` reads them)."""
    out.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
    out.flush()


def too_few_text(needed: int, what: str) -> str:
    """A χ² test whose sample is too small to judge (``diag stats``), in the same words for
    spins and shoes."""
    return f"too few: {needed} more {what} needed for an expected 5 per cell"
