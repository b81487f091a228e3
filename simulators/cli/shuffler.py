"""``tablectl simulate shuffler``: a simulated card shuffler (``docs/protocols/shuffler.md``) on a
pty or a TCP port; stops after ``--shuffles N``. Conventions: :mod:`tablectl.simulators.cli.kit`.
"""

from __future__ import annotations

import argparse
import sys

from tablectl.drivers.shuffler.protocol import MAX_DECKS
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.shuffler import FaultSpec, SimShuffler

_NAME = "tablectl simulate shuffler"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate shuffler`` options to ``parser``."""
    clikit.add_transport_arguments(parser)
    clikit.add_seed_argument(parser)
    parser.add_argument(
        "--decks",
        type=clikit.whole_type(1, MAX_DECKS, "decks"),
        default=8,
        help=f"decks loaded, 1-{MAX_DECKS} (default 8)",
    )
    clikit.add_speed_argument(parser)
    clikit.add_seconds_argument(
        parser, "--shuffle-seconds", None, "device seconds per shuffle (default 2 + 1 per deck)"
    )
    clikit.add_seconds_argument(
        parser,
        "--auto",
        None,
        "the dealer presses start S device seconds after each shuffle (default: host only)",
    )
    parser.add_argument(
        "--no-reader",
        action="store_true",
        help="model a shuffler without a card-face reader (deck checks report ?)",
    )
    clikit.add_fault_argument(parser, FaultSpec)
    clikit.add_count_argument(parser, "--shuffles", "completed shuffles")


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

    # Give the last shuffle's SHDN time to go out.
    done = clikit.until_results(args.shuffles, settle=0.2)
    return await clikit.run_served(_NAME, args, build, done=done)


main = clikit.main_for(
    "shuffler", "Serve a simulated card shuffler (tablectl reference protocol).", add_arguments, run
)
"""``python -m tablectl.simulators.cli.shuffler``: ``tablectl simulate shuffler`` without the
service."""

if __name__ == "__main__":
    sys.exit(main())
