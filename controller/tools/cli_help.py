"""The CLI's help, finished in one place: defaults shown, one example per command, completion.

Options are defined beside each command's code; :func:`polish` walks the finished parser once
instead of each formatting help its own way, and shtab generates the shell completion from the
same parser, so it never drifts from the commands.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Final

SHELLS: Final = ("bash", "zsh", "tcsh")

EXAMPLES: Final[Mapping[str, str]] = {
    "": "tablectl demo                      # everything simulated, one command\n"
    "  tablectl completion bash > ~/.local/share/bash-completion/completions/tablectl",
    "run": "tablectl run --config /etc/tablectl/ROU-01.toml",
    "demo": "tablectl demo --tables roulette,baccarat --rounds 5 --speed 8",
    "simulate": "tablectl simulate ss2 --tcp 127.0.0.1:7001 --speed 20",
    "simulate shoe": "tablectl simulate shoe --tcp 127.0.0.1:7002 --decks 8 --rate 2",
    "simulate shuffler": "tablectl simulate shuffler --tcp 127.0.0.1:7003 --decks 8",
    "simulate bigwheel": "tablectl simulate bigwheel --tcp 127.0.0.1:7004 --segments 54",
    "simulate drum": "tablectl simulate drum --interface virtual --channel lab --balls 42 --draw 7",
    "replay": "tablectl replay --config /etc/tablectl/ROU-01.toml rounds.jsonl",
    "check-config": "tablectl check-config /etc/tablectl/ROU-01.toml",
    "watch": "tablectl watch --url mqtt://127.0.0.1:1883 --table ROU-01",
    "staff": "tablectl staff list --roster /etc/tablectl/roster.toml",
    "staff init": "tablectl staff init --roster /etc/tablectl/roster.toml",
    "staff add": "tablectl staff add --roster /etc/tablectl/roster.toml --id D-0142 "
    '--name "Ana Ruiz" --role dealer',
    "staff list": "tablectl staff list --roster /etc/tablectl/roster.toml",
    "station": "tablectl station --config /etc/tablectl/BAC-01.toml --listen 127.0.0.1:8090",
    "cmd": 'tablectl cmd void \'{"reason": "foreign_object", "round": "ROU-01-000123"}\' --config '
    "/etc/tablectl/ROU-01.toml --role supervisor --key-file supervisor.key --by pit-17",
    "diag": "tablectl diag probe wheel --config /etc/tablectl/ROU-01.toml",
    "diag ports": "tablectl diag ports --config /etc/tablectl/ROU-01.toml",
    "diag probe": "tablectl diag probe wheel --config /etc/tablectl/ROU-01.toml --seconds 30",
    "diag sniff": "tablectl diag sniff wheel --config /etc/tablectl/ROU-01.toml "
    "--capture wheel.cap",
    "diag selftest": "tablectl diag selftest wheel --config /etc/tablectl/ROU-01.toml",
    "verify": "tablectl verify /var/lib/tablectl/ROU-01.sqlite",
    "export": "tablectl export --journal /var/lib/tablectl/ROU-01.sqlite --round ROU-01-000123",
    "completion": "tablectl completion bash > ~/.local/share/bash-completion/completions/tablectl",
    "dashboard": "tablectl dashboard --url mqtt://127.0.0.1:1883 --listen 127.0.0.1:8080",
    "archive-admin": "tablectl archive-admin partitions --dsn postgresql://archive@db/floor",
}
"""Command path (``"diag probe"``; ``""`` for ``tablectl`` itself) → its example."""


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Defaults shown where they mean something (not ``None``/``False``, not said already);
    description and epilog paragraphs wrapped, except lines indented by their author (examples,
    tables), which are kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        if _has_default(action) and "default" not in text.lower():
            return f"{text} (default: %(default)s)" if text else "default: %(default)s"
        return text

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if any(line[:1].isspace() for line in lines):
                paragraphs.append("\n".join(indent + line for line in lines))
            else:
                paragraphs.append(
                    textwrap.fill(
                        " ".join(lines), width, initial_indent=indent, subsequent_indent=indent
                    )
                )
        return "\n\n".join(paragraphs)


def subparsers(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """``parser`` and every subcommand's parser under it, with their command paths."""
    yield path, parser
    for action in _actions(parser):
        choices = action.choices
        if isinstance(choices, dict):
            for name, child in choices.items():
                if isinstance(child, argparse.ArgumentParser):
                    yield from subparsers(child, (*path, name))


def polish(
    parser: argparse.ArgumentParser,
    examples: Mapping[str, str] = EXAMPLES,
    *,
    completion: bool = True,
) -> None:
    """Give every parser under ``parser`` the :class:`HelpFormatter`, its example, and file
    completion for its path arguments (``completion=False``: not, and shtab is not imported —
    ``tablectl run`` parses its arguments once and never prints a completion script)."""
    if completion:
        import shtab  # noqa: PLC0415 - only when the CLI is built

    for path, child in subparsers(parser):
        child.formatter_class = HelpFormatter
        example = examples.get(" ".join(path))
        if example is not None and "example" not in (child.epilog or "").lower():
            lead = f"{child.epilog}\n\n" if child.epilog else ""
            child.epilog = f"{lead}example:\n  {example}"
        for action in _actions(child):
            if action.help is None and _has_default(action):
                action.help = "default: %(default)s"  # argparse shows no help line without help
            if completion and action.type is Path:
                action.complete = shtab.FILE  # type: ignore[attr-defined]


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``shell`` (:data:`SHELLS`) for ``tablectl``."""
    import shtab  # noqa: PLC0415 - only for `tablectl completion`

    script: str = shtab.complete(parser, shell=shell)
    return script


def _actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    # argparse keeps a parser's actions in this attribute and offers no public accessor; shtab
    # and argcomplete read it the same way.
    actions: list[argparse.Action] = parser._actions
    return actions


def _has_default(action: argparse.Action) -> bool:
    """Whether the help should say the default: a value, not a flag's ``False`` or nothing."""
    default: Any = action.default
    if default is argparse.SUPPRESS or action.nargs == 0 or default is None or default is False:
        return False
    return not (isinstance(default, str | list | tuple) and not default)
