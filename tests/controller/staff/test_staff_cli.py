"""``tablectl staff``: a roster made on the command line loads, holds hashes only, stays 0600."""

from __future__ import annotations

import io
import stat
from pathlib import Path

import pytest

from tablectl.controller.staff.roster import Roster
from tablectl.controller.tools.cli import main


def _add(roster: Path, monkeypatch: pytest.MonkeyPatch, *args: str, stdin: str) -> int:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(["staff", "add", "--roster", str(roster), *args])


def test_init_add_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = tmp_path / "roster.toml"
    assert main(["staff", "init", "--roster", str(roster)]) == 0
    assert stat.S_IMODE(roster.stat().st_mode) == 0o600
    assert main(["staff", "init", "--roster", str(roster)]) != 0  # never overwrites
    args = ("--id", "D-0142", "--name", "Ana Ruiz", "--role", "dealer")
    assert _add(roster, monkeypatch, *args, stdin="4821\nBADGE-0142\n") == 0
    args = (
        "--id",
        "S-0007",
        "--name",
        'Carla "CM" Maas',
        "--role",
        "supervisor",
        "--role",
        "dealer",
    )
    assert _add(roster, monkeypatch, *args, stdin="9051\n\n") == 0
    assert stat.S_IMODE(roster.stat().st_mode) == 0o600
    text = roster.read_text()
    assert "4821" not in text
    assert "BADGE-0142" not in text
    loaded = Roster.load(roster)
    assert loaded.by_badge("BADGE-0142") == loaded.person("D-0142")
    carla = loaded.person("S-0007")
    assert carla is not None
    assert carla.name == 'Carla "CM" Maas'
    assert carla.badge is None
    assert carla.pin_matches("9051")
    capsys.readouterr()
    assert main(["staff", "list", "--roster", str(roster)]) == 0
    out = capsys.readouterr().out
    assert "Ana Ruiz" in out
    assert "PIN only" in out
    assert "scrypt" not in out


@pytest.mark.parametrize(
    ("args", "stdin", "error"),
    [
        (("--id", "D 1", "--name", "X", "--role", "dealer"), "1234\n\n", "--id 'D 1' must match"),
        (("--id", "D-1", "--name", "X", "--role", "dealer"), "12\n\n", "PIN must be 4 to 8 digits"),
        (("--id", "D-1", "--name", "X", "--role", "dealer"), "1234\nab\n", "a badge read is 4"),
        (("--id", "D-1", "--name", "a\tb", "--role", "dealer"), "1234\n\n", "--name must be"),
    ],
)
def test_bad_entries_are_refused_in_one_line_and_leave_the_roster(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: tuple[str, ...],
    stdin: str,
    error: str,
) -> None:
    roster = tmp_path / "roster.toml"
    main(["staff", "init", "--roster", str(roster)])
    before = roster.read_bytes()
    capsys.readouterr()
    assert _add(roster, monkeypatch, *args, stdin=stdin) != 0
    err = capsys.readouterr().err
    assert error in err
    assert err.count("\n") == 1
    assert roster.read_bytes() == before


def test_a_badge_already_on_the_roster_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = tmp_path / "roster.toml"
    main(["staff", "init", "--roster", str(roster)])
    _add(
        roster,
        monkeypatch,
        "--id",
        "D-1",
        "--name",
        "A",
        "--role",
        "dealer",
        stdin="1234\nBADGE-1\n",
    )
    capsys.readouterr()
    assert (
        _add(
            roster,
            monkeypatch,
            "--id",
            "D-2",
            "--name",
            "B",
            "--role",
            "dealer",
            stdin="1234\nBADGE-1\n",
        )
        != 0
    )
    assert "has the badge of D-1" in capsys.readouterr().err
