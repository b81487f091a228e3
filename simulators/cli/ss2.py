"""``tablectl simulate ss2``: serve a simulated Slingshot 2 wheel on a pty or a TCP port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — so scripts, tests and the demo know where to connect without
parsing logs; everything else goes to logging (stderr). Exits 0 on SIGINT/SIGTERM or after
``--games N`` results, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Sequence

from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.ss2 import DEFAULT_MODE, FAULTS, FaultSpec, SimSS2

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = clikit.EXIT_OK
EXIT_ERROR = clikit.EXIT_ERROR
EXIT_USAGE = clikit.EXIT_USAGE
_NAME = "tablectl simulate ss2"

EPILOG = f"""\
cycle: state 1 (idle) -> 2 (bets open) -> 3 (ball in the rim) -> 4 (no more bets) -> 5 (result:
the bare number line, then the state-5 status lines) -> the next game.

fault kinds (--fault KIND@GAME[=VALUE]; GAME counts games since start from 1, so a misspin's
re-spin is the next game; s are wheel seconds, divided by --speed):
{FAULTS.listing()}

example (a 20x wheel on TCP: a misspin in game 2, 4 s of silence in game 3, 2 revolutions in 4):
  tablectl simulate ss2 --tcp 127.0.0.1:7001 --speed 20 --fault misspin@2 \\
      --fault silence@3=4 --fault short_spin@4
then a table config's device: driver = "cammegh-ss2", port = "socket://127.0.0.1:7001",
sensor_stream = true (short_spin and same_direction_sensor are seen in the *I 4 stream only)
"""


def _numbers(text: str) -> list[int | str]:
    out: list[int | str] = []
    for part in text.split(","):
        item = part.strip()
        if item == "00":
            out.append(item)
        elif item.isdigit() and int(item) <= 36:
            out.append(int(item))
        else:
            raise argparse.ArgumentTypeError(f"not a roulette number: {item!r} (0-36 or 00)")
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate ss2`` options to ``parser`` (its epilog lists the fault kinds)."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    clikit.add_transport_arguments(parser)
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    parser.add_argument(
        "--speed",
        # The rejected value is shown as str() shows it ("5000.0"), as it always was here.
        type=clikit.number_type(0.01, 1000, "speed", value_format=""),
        default=1.0,
        help=clikit.SPEED_HELP,
    )
    parser.add_argument(
        "--mode",
        type=int,
        default=DEFAULT_MODE,
        help=f"operating-mode bit sum as for *o (default {DEFAULT_MODE})",
    )
    parser.add_argument("--pockets", type=int, choices=(37, 38), default=37)
    parser.add_argument(
        "--numbers",
        type=_numbers,
        metavar="N,N,...",
        help="scripted winning numbers in order (e.g. 17,0,32), random after them",
    )
    clikit.add_fault_argument(parser, FaultSpec, listed=True)
    parser.add_argument(
        "--wait-for-host",
        action="store_true",
        help="hold in state 1 until the host's first command (tests that count from game 1)",
    )
    parser.add_argument(
        "--games", type=int, default=0, metavar="N", help="exit after N results (0: run on)"
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--games`` results went out."""

    def build() -> SimSS2:
        return SimSS2(
            seed=args.seed,
            speed=args.speed,
            mode=args.mode,
            pockets=args.pockets,
            faults=args.fault,
            numbers=args.numbers,
            wait_for_host=args.wait_for_host,
        )

    def games_done(model: SimSS2, ready: asyncio.Future[None]) -> Awaitable[None]:
        # Let the state-5 lines of the last game reach the host (state 5 lasts 2 wheel seconds).
        return clikit.results_done(model, args.games, ready, settle=2.5 / model.speed)

    return await clikit.run_served(_NAME, args, build, done=games_done if args.games > 0 else None)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tablectl.simulators.cli.ss2``: the same as ``tablectl simulate ss2`` without the
    service."""
    return clikit.run_main(
        argv,
        prog="python -m tablectl.simulators.cli.ss2",
        description="Serve a simulated Cammegh SS2 wheel.",
        add_arguments=add_arguments,
        run=run,
    )


if __name__ == "__main__":
    sys.exit(main())
