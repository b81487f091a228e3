"""``tablectl run`` imports only what a table needs (issue 16: cold start ≤ 0.5 s).

Not timed: it checks *what* is imported, in a fresh interpreter, since every heavy library the
``run`` path drags in is paid by every start.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

HEAVY = ("starlette", "uvicorn", "psycopg", "shtab", "hypothesis")
"""Libraries only the dashboard, archive, completion and tests need. (``rich`` is not among them:
structlog's ``dev`` module imports it whenever it is installed, and hiding it from structlog would
be a hack on a global import table for ~0.1 s.)"""

_PROBE = """
import json, sys
from tablectl.controller.tools.cli import _command_word, _parser
_parser(_command_word(["run", "--config", "x.toml"])).parse_args(["run", "--config", "x.toml"])
import tablectl.controller.service.process, tablectl.controller.config
import tablectl.drivers.ss2.driver
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r}
    or m.startswith(("tablectl.controller.tools.dashboard", "tablectl.controller.archive",
                     "tablectl.controller.lab", "tablectl.simulators")))))
"""


def test_the_run_path_imports_no_heavy_library() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(heavy=set(HEAVY))],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(out) == []


def test_run_help_lists_run_options_only_and_top_level_help_every_command() -> None:
    run_help = subprocess.run(
        [sys.executable, "-m", "tablectl", "run", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "--config" in run_help
    assert "--metrics-listen" in run_help
    top = subprocess.run(
        [sys.executable, "-m", "tablectl", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for command in ("run", "demo", "dashboard", "archive", "simulate", "verify"):
        assert command in top


def test_the_run_path_builds_no_event_validator_until_an_event_is_parsed() -> None:
    """The pydantic validator of ``cmd/event`` and replay is built on first use: most starts
    (a fresh journal, a restart from the checkpoint of an orderly stop) parse no event."""
    probe = (
        "import tablectl.controller.service.process, tablectl.drivers.ss2.driver\n"
        "from tablectl.controller.core import events\n"
        "before = events._adapter.cache_info().currsize\n"
        "events.parse_event({'type': 'confirm', 'ts': '2026-01-01T00:00:00Z'})\n"
        "print(before, events._adapter.cache_info().currsize)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["0", "1"]
