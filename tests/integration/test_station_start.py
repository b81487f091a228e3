"""``tablectl station`` refuses to start without what it needs, in one line, and says LAB loudly.

The station as its own process (``python -m tablectl.controller.station``): without ``[staff]
roster`` it cannot know who is at it, without ``[security] roles`` it cannot sign; a lab table
(``insecure_commands``) starts, and its screen and its log say LAB.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.support.dashboard import env
from tests.support.mosquitto import free_port
from tests.support.staff import write_roster

pytestmark = [pytest.mark.timeout(60)]
REPO = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, *, staff: bool, security: str) -> Path:
    roster = write_roster(tmp_path / "roster.toml")
    path = tmp_path / "table.toml"
    path.write_text(
        f"""[table]
id = "FT-1"
game = "fan_tan"

[mqtt]
url = "mqtt://127.0.0.1:{free_port()}"

[journal]
path = "{tmp_path / "j.sqlite"}"

{security}

{f'[staff]{chr(10)}roster = "{roster}"' if staff else ""}
""",
        encoding="utf-8",
    )
    return path


def _station(config: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "tablectl.controller.station", "--config", str(config), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        cwd=REPO,
    )


@pytest.mark.parametrize(
    ("staff", "security", "why"),
    [
        (False, "[security]\ninsecure_commands = true", "no [staff] roster: a station cannot"),
        (True, "", "no [security] roles: the station cannot sign commands"),
    ],
)
def test_it_refuses_to_start_in_one_line(
    tmp_path: Path, staff: bool, security: str, why: str
) -> None:
    proc = _station(_config(tmp_path, staff=staff, security=security))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert out == ""
    (line,) = err.splitlines()
    assert line.startswith("tablectl station: ")
    assert why in line


def test_a_lab_table_starts_and_says_so(tmp_path: Path) -> None:
    config = _config(tmp_path, staff=True, security="[security]\ninsecure_commands = true")
    port = free_port()
    proc = _station(config, "--listen", f"127.0.0.1:{port}")
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert f"serving http://127.0.0.1:{port}/" in first
        assert "LAB" in first
        url = f"http://127.0.0.1:{port}/screen.json"

        def screen() -> dict[str, object]:
            with urllib.request.urlopen(url, timeout=5) as response:
                body: dict[str, object] = json.load(response)
                return body

        shown = screen()  # the page is served as soon as the first line is printed
        assert (shown["lab"], shown["table"]) == (True, "FT-1")
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/call",
            data=b"{}",
            headers={"content-type": "application/json", "origin": "http://evil.example"},
        )
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)  # noqa: S310 - ours
        assert refused.value.code == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "LAB table (insecure_commands): never on a floor" in err
