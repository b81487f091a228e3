"""``tablectl station --config TABLE.toml [--listen HOST:PORT]``: the dealer's screen.

Wired into ``tablectl`` by :func:`add_parser` and :func:`run` (``python -m
tablectl.controller.station`` runs it alone). Light at import, like the other commands: the web
stack is imported when serving. It refuses to start, with one line, without ``[staff] roster``
(a station cannot know who is at it) and without ``[security] roles`` unless the table is
``insecure_commands`` (then the screen says LAB). The broker login is the station's own
(``--username`` …), never the table's: the ACL lets a table read commands, not send them.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``station`` to ``tablectl``'s subcommands."""
    from tablectl.controller.tools.broker_login import add_login_arguments  # noqa: PLC0415

    parser: argparse.ArgumentParser = subparsers.add_parser(
        "station",
        help="the dealer's touch screen at the table: prompts, sign-on, keying in, sign-offs",
    )
    parser.add_argument("--config", type=Path, required=True, help="the table's config file")
    parser.add_argument(
        "--listen", metavar="HOST:PORT", help="address to serve on (default: [station] listen)"
    )
    add_login_arguments(parser)
    return parser


def run(args: argparse.Namespace) -> int:
    """Check the config, then serve until Ctrl-C or SIGTERM (exit 0)."""
    from tablectl.controller.station.serve import serve  # noqa: PLC0415

    return serve(args)
