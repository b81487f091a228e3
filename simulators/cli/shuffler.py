"""``tablectl simulate shuffler``: serve a simulated card shuffler on a pty or a TCP port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — like ``tablectl simulate ss2``, so scripts, tests and the demo
know where to connect; everything else goes to logging (stderr). Exits 0 on SIGINT/SIGTERM or
after ``--shuffles N`` completed shuffles, 2 on bad arguments.

The shuffler speaks the reference protocol (``docs/protocols/shuffler.md``); point a
``driver = "tablectl-shuffler"`` device at the pty path or at ``socket://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Sequence

from tablectl.drivers.shuffler.protocol import MAX_DECKS
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.shuffler import FaultSpec, SimShuffler

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = clikit.EXIT_OK
EXIT_ERROR = clikit.EXIT_ERROR
EXIT_USAGE = clikit.EXIT_USAGE
_NAME = "tablectl simulate shuffler"


def _decks(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_DECKS:
        raise argparse.ArgumentTypeError(f"decks must be 1-{MAX_DECKS}, not {text!r}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate shuffler`` options to ``parser``."""
    clikit.add_transport_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    parser.add_argument(
        "--decks", type=_decks, default=8, help=f"decks loaded, 1-{MAX_DECKS} (default 8)"
    )
    parser.add_argument("--speed", type=clikit.speed_type, default=1.0, help=clikit.SPEED_HELP)
    parser.add_argument(
        "--shuffle-seconds",
        type=clikit.number_type(0.01, 3600, "shuffle seconds"),
        default=None,
        metavar="S",
        help="device seconds per shuffle (default 2 + 1 per deck)",
    )
    parser.add_argument(
        "--auto",
        type=clikit.number_type(0.01, 3600, "auto"),
        default=None,
        metavar="S",
        help="the dealer presses start S device seconds after each shuffle (default: host only)",
    )
    parser.add_argument(
        "--no-reader",
        action="store_true",
        help="model a shuffler without a card-face reader (deck checks report ?)",
    )
    clikit.add_fault_argument(parser, FaultSpec)
    parser.add_argument(
        "--shuffles",
        type=int,
        default=0,
        metavar="N",
        help="exit after N completed shuffles (0: run on)",
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--shuffles`` shuffles completed."""

    def build() -> SimShuffler:
        return SimShuffler(
            seed=args.seed,
            speed=args.speed,
            decks=args.decks,
            faults=args.fault,
            shuffle_seconds=args.shuffle_seconds,
            auto=args.auto,
            reads_faces=not args.no_reader,
        )

    def shuffles_done(model: SimShuffler, ready: asyncio.Future[None]) -> Awaitable[None]:
        # Give the last shuffle's SHDN time to go out.
        return clikit.results_done(model, args.shuffles, ready, settle=0.2)

    return await clikit.run_served(
        _NAME, args, build, done=shuffles_done if args.shuffles > 0 else None
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tablectl.simulators.cli.shuffler``: ``tablectl simulate shuffler`` without the
    service."""
    return clikit.run_main(
        argv,
        prog="python -m tablectl.simulators.cli.shuffler",
        description="Serve a simulated card shuffler (tablectl reference protocol).",
        add_arguments=add_arguments,
        run=run,
    )


if __name__ == "__main__":
    sys.exit(main())
