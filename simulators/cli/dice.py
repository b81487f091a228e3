"""``tablectl simulate dice``: serve a simulated dice shaker and result reader on a pty or a TCP
port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — like the other simulators, so scripts, tests and the demo know where
to connect; everything else goes to logging (stderr). Exits 0 on SIGINT/SIGTERM or after
``--games N`` rolls ended, 2 on bad arguments.

The unit speaks the reference protocol (``docs/protocols/dice.md``) and runs its table's cycle by
itself; point a ``driver = "tablectl-dice"`` device at the pty path or at ``socket://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence

from tablectl.drivers.dice.protocol import (
    COLOR_PATTERN,
    MAX_DICE,
)
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.dice import FaultSpec, SimDice

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = clikit.EXIT_OK
EXIT_ERROR = clikit.EXIT_ERROR
EXIT_USAGE = clikit.EXIT_USAGE
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


def _dice(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_DICE:
        raise argparse.ArgumentTypeError(f"dice must be 1-{MAX_DICE}, not {text!r}")
    return int(text)


def _colors(text: str) -> tuple[str, ...]:
    colors = tuple(part.strip() for part in text.split(","))
    for color in colors:
        if not COLOR_PATTERN.fullmatch(color):
            raise argparse.ArgumentTypeError(
                f"colours are lower-case words of 1-12 letters, comma-separated, not {color!r}"
            )
    return colors


def _seconds(what: str) -> Callable[[str], float]:
    return clikit.number_type(0.01, 3600, what)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate dice`` options to ``parser``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    clikit.add_transport_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    parser.add_argument("--speed", type=clikit.speed_type, default=1.0, help=clikit.SPEED_HELP)
    parser.add_argument(
        "--dice", type=_dice, default=3, help=f"dice in the unit, 1-{MAX_DICE} (default 3)"
    )
    parser.add_argument(
        "--colors",
        type=_colors,
        default=None,
        metavar="C1,C2,...",
        help="the dice's colours, one per die (e.g. red,blue); default: the dice look alike",
    )
    parser.add_argument(
        "--betting-seconds",
        type=_seconds("betting seconds"),
        default=10.0,
        metavar="S",
        help="betting stays open S device seconds (default 10)",
    )
    parser.add_argument(
        "--host-closes",
        action="store_true",
        help="betting stays open until the host's CLOS (overrides --betting-seconds)",
    )
    parser.add_argument(
        "--roll-delay",
        type=_seconds("roll delay"),
        default=1.0,
        metavar="S",
        help="the dealer shakes S device seconds after betting closed or a no-result (default 1)",
    )
    parser.add_argument(
        "--host-rolls", action="store_true", help="only the host's ROLL shakes the dice"
    )
    for name, default, what in (
        ("shake", 3.0, "the shake (or drop) takes"),
        ("settle", 1.0, "the dice come to rest in"),
        ("result", 4.0, "the result shows for"),
    ):
        parser.add_argument(
            f"--{name}-seconds",
            type=_seconds(f"{name} seconds"),
            default=default,
            metavar="S",
            help=f"{what} S device seconds (default {default:g})",
        )
    clikit.add_fault_argument(parser, FaultSpec)
    parser.add_argument(
        "--games",
        type=int,
        default=0,
        metavar="N",
        help="exit after N rolls ended, results and no-results (0: run on)",
    )


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

    def games_done(model: SimDice, ready: asyncio.Future[None]) -> Awaitable[None]:
        # Give the last result frame time to go out.
        return clikit.results_done(model, args.games, ready, settle=0.2)

    return await clikit.run_served(_NAME, args, build, done=games_done if args.games > 0 else None)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tablectl.simulators.cli.dice``: ``tablectl simulate dice`` without the
    service."""
    return clikit.run_main(
        argv,
        prog="python -m tablectl.simulators.cli.dice",
        description="Serve a simulated dice shaker and result reader (tablectl reference "
        "protocol).",
        add_arguments=add_arguments,
        run=run,
    )


if __name__ == "__main__":
    sys.exit(main())
