"""Logging setup: structlog, readable in a terminal, JSON lines under systemd (journald).

Log lines carry the table, round, device and seq as keys where they are known; nothing is logged
per device byte at info level (that is what ``diag sniff`` and the trace hooks are for).
"""

from __future__ import annotations

import logging
import sys
from typing import Literal

import structlog

__all__ = ["configure_logging"]


class _CurrentStderr:
    """Whatever ``sys.stderr`` is *now*: loggers cached at first use must not hold on to a stream
    that is later replaced and closed (pytest's capture, a daemon redirecting its output)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(
    fmt: Literal["auto", "console", "json"] | str = "auto",
    *,
    verbose: bool = False,
    quiet: bool = False,
) -> None:
    """Configure structlog and stdlib logging once, for the CLI process (logs go to stderr).

    ``quiet`` keeps warnings and errors only: the demo's live view is its output.
    """
    level = logging.DEBUG if verbose else (logging.WARNING if quiet else logging.INFO)
    use_json = fmt == "json" or (fmt == "auto" and not sys.stderr.isatty())
    renderer: structlog.typing.Processor = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=True,
    )
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    for noisy in ("amqtt", "transitions", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
