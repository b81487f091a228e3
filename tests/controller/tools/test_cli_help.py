"""Every ``--help`` shows its defaults and an example; ``tablectl completion``; ``--version``."""

from __future__ import annotations

import argparse

import pytest

from tablectl import __version__
from tablectl.controller.tools.cli import _parser, main
from tablectl.controller.tools.cli_help import subparsers

PARSERS = list(subparsers(_parser()))


def _flat(text: str) -> str:
    """Help text without any whitespace: a long default may be wrapped mid-word."""
    return "".join(text.split())


def test_the_walk_reaches_every_command() -> None:
    paths = {" ".join(path) for path, _ in PARSERS}
    assert {"", "run", "demo", "watch", "completion", "diag stats", "simulate ss2"} <= paths
    assert {"simulate drum", "verify", "export", "cmd", "replay", "check-config"} <= paths


@pytest.mark.parametrize(
    ("path", "parser"), PARSERS, ids=[" ".join(p) or "tablectl" for p, _ in PARSERS]
)
def test_every_help_shows_its_defaults_and_an_example(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    text = parser.format_help()
    assert "example" in text.lower(), f"tablectl {' '.join(path)} --help has no example"
    flat = _flat(text)
    for action in parser._actions:
        default = action.default
        if action.nargs == 0 or default in (None, False, argparse.SUPPRESS, "", []):
            continue
        said = "default" in (action.help or "").lower() and "%(default)" not in (action.help or "")
        shown = _flat(f"default: {default}") in flat
        assert said or shown, f"tablectl {' '.join(path)}: {action.dest} hides its default"


def test_bash_completion_knows_the_commands_and_their_options(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["completion", "bash"]) == 0
    script = capsys.readouterr().out
    assert "complete" in script
    assert "tablectl" in script
    for word in ("demo", "watch", "diag", "stats", "--tables", "--rounds", "--plain"):
        assert word in script, word


@pytest.mark.parametrize("shell", ["zsh", "tcsh"])
def test_other_shells(shell: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["completion", shell]) == 0
    assert "tablectl" in capsys.readouterr().out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["--version"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.strip() == f"tablectl {__version__}"


def test_an_unknown_demo_table_is_one_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["demo", "--tables", "roulette,pachinko"])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("tablectl demo: error: argument --tables: unknown pachinko; choose ")
