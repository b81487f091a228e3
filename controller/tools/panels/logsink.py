"""Logs while the panels are on screen: into a file and the footer, never across the panels.

The CLI's logging writes to whatever ``sys.stderr`` is, so the live view swaps in a
:class:`LogSink`: whole lines to the file, a short form to the footer (the same warning from
several tables folded into one line).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import sys
from collections.abc import Callable, Iterator
from typing import Final, TextIO

_ANSI: Final = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PRIORITY: Final = re.compile(r"^<\d>")


def readable(line: str) -> tuple[str, str]:
    """``(text, table)`` of a log line, JSON (structlog) or console text, as one short line
    (``warning journal_not_keyed: no [journal] key_file…``) and the table it names, if any."""
    line = _PRIORITY.sub("", _ANSI.sub("", line)).strip()
    try:
        record = json.loads(line)
    except ValueError:
        return line, ""
    if not isinstance(record, dict):
        return line, ""
    level = str(record.get("level") or "log")
    event = str(record.get("event") or "")
    detail = record.get("hint") or record.get("error") or record.get("detail") or ""
    text = f"{level} {event}: {detail}" if detail else f"{level} {event}"
    return text, str(record.get("table") or "")


class LogSink(io.TextIOBase):
    """A text stream for ``sys.stderr``: whole lines to ``file`` and to ``on_line(text, table)``."""

    def __init__(self, on_line: Callable[[str, str], None], file: TextIO | None = None) -> None:
        super().__init__()
        self._on_line = on_line
        self._file = file
        self._partial = ""
        self.lines = 0

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text: str) -> int:
        self._partial += text
        *complete, self._partial = self._partial.split("\n")
        for line in complete:
            if not line.strip():
                continue
            self.lines += 1
            if self._file is not None:
                self._file.write(line + "\n")
            self._on_line(*readable(line))
        return len(text)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()


@contextlib.contextmanager
def redirect_stderr(sink: LogSink) -> Iterator[LogSink]:
    """``sys.stderr`` is ``sink`` inside; the real one again after (a partial line is kept)."""
    previous = sys.stderr
    sys.stderr = sink
    try:
        yield sink
    finally:
        sys.stderr = previous
        sink.write("\n")
        sink.flush()
