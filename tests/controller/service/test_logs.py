"""Log lines: JSON with the bound context (also for stdlib loggers), and journald priorities."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest
import structlog

from tablectl.controller.service.logs import _PriorityPrefix, configure_logging, journald_stream


def test_json_lines_carry_the_bound_table_also_for_library_loggers(
    capsys: pytest.CaptureFixture[str],
) -> None:
    configure_logging("json")
    try:
        with structlog.contextvars.bound_contextvars(table="ROU-01"):
            structlog.get_logger("tablectl.test").info("round_outcome", seq=12, round="R-1")
            logging.getLogger("aiomqtt").warning("broker said %s", "no")
        lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    finally:
        logging.getLogger().removeHandler(
            next(h for h in logging.getLogger().handlers if h.get_name() == "tablectl")
        )
    ours, foreign = lines
    assert ours["event"] == "round_outcome"
    assert (ours["table"], ours["seq"], ours["round"]) == ("ROU-01", 12, "R-1")
    assert (ours["level"], ours["logger"]) == ("info", "tablectl.test")
    assert ours["timestamp"].endswith("Z")
    assert foreign["event"] == "broker said no"
    assert (foreign["table"], foreign["level"], foreign["logger"]) == (
        "ROU-01",
        "warning",
        "aiomqtt",
    )


def test_journald_is_recognised_by_journal_stream(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tmp_path / "stream").open("w") as stream:
        info = os.fstat(stream.fileno())
        monkeypatch.delenv("JOURNAL_STREAM", raising=False)
        assert not journald_stream(stream)
        monkeypatch.setenv("JOURNAL_STREAM", f"{info.st_dev}:{info.st_ino}")
        assert journald_stream(stream)
        monkeypatch.setenv("JOURNAL_STREAM", f"{info.st_dev}:{info.st_ino + 1}")
        assert not journald_stream(stream)


def test_priority_prefix_lets_journald_file_json_lines_by_level() -> None:
    render = _PriorityPrefix(structlog.processors.JSONRenderer())
    assert (
        render(None, "warning", {"event": "x", "level": "warning"})
        == '<4>{"event": "x", "level": "warning"}'
    )
    assert render(None, "error", {"event": "y"}).startswith("<3>{")
    assert render(None, "info", {"event": "z", "level": "info"}).startswith("<6>{")


def test_each_log_line_is_one_write_so_concurrent_writers_never_split_a_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A line and its newline leave in one ``write`` (stderr writes through): another process
    or thread on the same stream cannot land between them, and a busy table pays one syscall
    per line, not two."""

    class Recording:
        def __init__(self) -> None:
            self.writes: list[str] = []

        def write(self, text: str) -> int:
            self.writes.append(text)
            return len(text)

        def flush(self) -> None:
            pass

    stream = Recording()
    monkeypatch.setattr("sys.stderr", stream)
    configure_logging("json")
    try:
        log = structlog.get_logger("tablectl.test.writes")
        log.info("round_outcome", seq=1)
        log.warning("verdict", code="no_spin")
    finally:
        logging.getLogger().removeHandler(
            next(h for h in logging.getLogger().handlers if h.get_name() == "tablectl")
        )
    assert len(stream.writes) == 2
    assert all(text.endswith("}\n") and text.count("\n") == 1 for text in stream.writes)
    assert [json.loads(text)["event"] for text in stream.writes] == ["round_outcome", "verdict"]
