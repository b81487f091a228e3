"""What the checkpoint module logs, recorded without structlog's configuration.

The CLI configures structlog with ``cache_logger_on_first_use`` when a test calls ``main()`` in
process, after which ``structlog.testing.capture_logs`` no longer sees a module's logger. The
module's ``log`` is replaced instead, for the test's duration.
"""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.controller.service import checkpoint

__all__ = ["LogRecorder", "record_checkpoint_logs"]


class LogRecorder:
    """Stands in for a structlog logger: keeps ``(level, event, fields)`` of every call."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str, dict[str, Any]]] = []

    def _log(self, level: str, event: str, **fields: Any) -> None:
        self.lines.append((level, event, fields))

    def debug(self, event: str, **fields: Any) -> None:
        self._log("debug", event, **fields)

    def info(self, event: str, **fields: Any) -> None:
        self._log("info", event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log("warning", event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log("error", event, **fields)

    def events(self, name: str) -> list[dict[str, Any]]:
        """The fields of every line logged as ``name``."""
        return [fields for _, event, fields in self.lines if event == name]


def record_checkpoint_logs(monkeypatch: pytest.MonkeyPatch) -> LogRecorder:
    """Record what :mod:`tablectl.controller.service.checkpoint` logs, for this test."""
    recorder = LogRecorder()
    monkeypatch.setattr(checkpoint, "log", recorder)
    return recorder
