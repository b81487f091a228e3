"""Logging setup: structlog, readable in a terminal, JSON lines under systemd (journald).

The table is bound per table task, so it is on every line, also in a multi-table host. The
standard library goes through the same renderer, since a journal mixing JSON with plain text cannot
be parsed by the log shipper. Under journald each line gets its syslog priority prefix, so
``journalctl -p warning`` works.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import MutableMapping
from typing import Any, Literal, TextIO

import structlog

_PRIORITY = {
    "critical": 2,
    "exception": 3,
    "error": 3,
    "warning": 4,
    "warn": 4,
    "notice": 5,
    "info": 6,
    "debug": 7,
}
"""syslog priorities by structlog method / stdlib level name (``man sd-daemon``)."""


_HANDLER_NAME = "tablectl"


class _CurrentStderr:
    """Whatever ``sys.stderr`` is *now*: loggers cached at first use must not hold on to a stream
    that is later replaced and closed (pytest's capture, a daemon redirecting its output)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


class _NamedPrintLogger(structlog.PrintLogger):
    """A PrintLogger that knows its name, so ``add_logger_name`` can say who logged."""

    def __init__(self, file: TextIO, name: str) -> None:
        super().__init__(file)
        self.name = name

    def msg(self, message: str) -> None:
        """One ``write`` per line: ``print`` wrote the message and its newline in two, and
        stderr writes through (two syscalls per outcome at a busy table)."""
        with self._lock:
            self._file.write(message + "\n")
            self._file.flush()

    log = debug = info = warn = warning = msg
    fatal = failure = err = error = critical = exception = msg


def _logger_factory(*args: Any) -> _NamedPrintLogger:
    name = args[0] if args and isinstance(args[0], str) else "tablectl"
    return _NamedPrintLogger(_CurrentStderr(), name)  # type: ignore[arg-type]


def journald_stream(stream: TextIO | None = None) -> bool:
    """Whether ``stream`` (default stderr) is connected to journald (``$JOURNAL_STREAM``)."""
    expected = os.environ.get("JOURNAL_STREAM", "")
    device, sep, inode = expected.partition(":")
    if not sep or not device.isdigit() or not inode.isdigit():
        return False
    try:
        info = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (info.st_dev, info.st_ino) == (int(device), int(inode))


class _PriorityPrefix:
    """Wraps the final renderer: ``<N>`` + line, with N the syslog priority of the level."""

    def __init__(self, renderer: structlog.typing.Processor) -> None:
        self._renderer = renderer

    def __call__(self, logger: Any, method_name: str, event_dict: MutableMapping[str, Any]) -> str:
        line = self._renderer(logger, method_name, event_dict)
        if isinstance(line, bytes | bytearray):
            line = bytes(line).decode("utf-8", "replace")
        level = str(event_dict.get("level", method_name)).lower()
        return f"<{_PRIORITY.get(level, 6)}>{line}"


def configure_logging(
    fmt: Literal["auto", "console", "json"] | str = "auto",
    *,
    verbose: bool = False,
    quiet: bool = False,
) -> None:
    """Configure structlog and stdlib logging once, for the CLI process (logs go to stderr).
    ``auto`` is JSON unless stderr is a terminal; ``quiet`` keeps warnings and errors only."""
    level = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer: structlog.typing.Processor
    if use_json:
        renderer = structlog.processors.JSONRenderer()
        if journald_stream():
            renderer = _PriorityPrefix(renderer)
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    shared: list[structlog.typing.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    if use_json:
        # Tracebacks as structured data in JSON (one line per record); the console renderer
        # formats exc_info itself, readably. Without locals: they can hold credentials (MQTT
        # passwords) and whole payloads, which do not belong in a log kept for 90 days.
        shared.append(
            structlog.processors.ExceptionRenderer(
                structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
            )
        )
    structlog.configure(
        processors=[*shared, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_logger_factory,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(_CurrentStderr())
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
            foreign_pre_chain=shared,
        )
    )
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in list(root.handlers):
        if old.get_name() == _HANDLER_NAME:  # ours, from an earlier call: replace, do not stack
            root.removeHandler(old)
    root.addHandler(handler)
    # Libraries stay at warnings unless -v: their info lines are connection chatter.
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    for noisy in ("amqtt", "transitions", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
