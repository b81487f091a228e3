"""``tablectl replay`` run in-process for the replay tests of each game family."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.cli import main

__all__ = ["DATA", "replay", "table_config"]

DATA = Path(__file__).resolve().parents[1] / "data" / "replay"


def table_config(tmp_path: Path, table: str, game: str, rules: str = "") -> Path:
    """A minimal table config for ``game`` (no devices: replay needs none)."""
    path = tmp_path / "table.toml"
    path.write_text(
        f"""
[table]
id = "{table}"
game = "{game}"
[rules]
{rules}
[mqtt]
url = "mqtt://127.0.0.1:1"
[journal]
path = "{tmp_path / "j.sqlite"}"
""",
        encoding="utf-8",
    )
    return path


def replay(
    capsys: pytest.CaptureFixture[str], config: Path, events: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Outcomes (stdout) and the JSON lines of stderr (verdicts, shoe ends); exit code 0."""
    code = main(["replay", "--config", str(config), str(events)])
    out, err = capsys.readouterr()
    assert code == 0, err
    diagnostics = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return [json.loads(line) for line in out.splitlines()], diagnostics
