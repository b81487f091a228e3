"""``tablectl simulate dice``: a simulated dice unit (``docs/protocols/dice.md``) on a pty or a TCP
port; stops after ``--games N`` rolls ended. Conventions: :mod:`tablectl.simulators.cli.kit`.
"""

from __future__ import annotations

import argparse
import sys

from tablectl.drivers.dice.protocol import (
    COLOR_PATTERN,
    MAX_DICE,
)
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.dice import FaultSpec, SimDice

_NAME = "tablectl simulate dice"

EPILOG = """\
cycle: OPEN (betting) -> CLSD (timer, button or host CLOS) -> ROLL (shake) -> RSLT or NRES
(then a re-roll) -> the next game. Faults strike the game's first roll.

example (two coloured dice, 20x time-lapse, a cocked die in game 2, a motion fault in game 3):
  tablectl simulate dice --tcp 127.0.0.1:7010 --dice 2 --colors red,blue --speed 20 \\
      --fault cocked@2 --fault motion_fault@3=4
then a table config's device: driver = "tablectl-dice", port = "socket://127.0.0.1:7010",
dice = 2, colors = ["red", "blue"]
"""


def _colors(text: str) -> tuple[str, ...]:
    colors = tuple(part.strip() for part in text.split(","))
    for color in colors:
        if not COLOR_PATTERN.fullmatch(color):
            raise argparse.ArgumentTypeError(
                f"colours are lower-case words of 1-12 letters, comma-separated, not {color!r}"
            )
    return colors


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate dice`` options to ``parser``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    clikit.add_transport_arguments(parser)
    clikit.add_seed_argument(parser)
    clikit.add_speed_argument(parser)
    parser.add_argument(
        "--dice",
        type=clikit.whole_type(1, MAX_DICE, "dice"),
        default=3,
        help=f"dice in the unit, 1-{MAX_DICE} (default 3)",
    )
    parser.add_argument(
        "--colors",
        type=_colors,
        default=None,
        metavar="C1,C2,...",
        help="the dice's colours, one per die (e.g. red,blue); default: the dice look alike",
    )
    clikit.add_seconds_argument(
        parser, "--betting-seconds", 10.0, "betting stays open S device seconds (default 10)"
    )
    parser.add_argument(
        "--host-closes",
        action="store_true",
        help="betting stays open until the host's CLOS (overrides --betting-seconds)",
    )
    clikit.add_seconds_argument(
        parser,
        "--roll-delay",
        1.0,
        "the dealer shakes S device seconds after betting closed or a no-result (default 1)",
    )
    parser.add_argument(
        "--host-rolls", action="store_true", help="only the host's ROLL shakes the dice"
    )
    for name, default, what in (
        ("shake", 3.0, "the shake (or drop) takes"),
        ("settle", 1.0, "the dice come to rest in"),
        ("result", 4.0, "the result shows for"),
    ):
        clikit.add_seconds_argument(
            parser, f"--{name}-seconds", default, f"{what} S device seconds (default {default:g})"
        )
    clikit.add_fault_argument(parser, FaultSpec)
    clikit.add_count_argument(parser, "--games", "rolls ended, results and no-results")


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--games`` rolls ended."""

    def build() -> SimDice:
        return SimDice(
            seed=args.seed,
            speed=args.speed,
            dice=args.dice,
            colors=args.colors,
            faults=args.fault,
            betting_seconds=None if args.host_closes else args.betting_seconds,
            roll_delay=None if args.host_rolls else args.roll_delay,
            shake_seconds=args.shake_seconds,
            settle_seconds=args.settle_seconds,
            result_seconds=args.result_seconds,
        )

    # Give the last result frame time to go out.
    done = clikit.until_results(args.games, settle=0.2)
    return await clikit.run_served(_NAME, args, build, done=done)


main = clikit.main_for(
    "dice",
    "Serve a simulated dice shaker and result reader (tablectl reference protocol).",
    add_arguments,
    run,
)
"""``python -m tablectl.simulators.cli.dice``: ``tablectl simulate dice`` without the service."""


if __name__ == "__main__":
    sys.exit(main())
