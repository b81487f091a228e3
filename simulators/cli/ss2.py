"""``tablectl simulate ss2``: a simulated Slingshot 2 wheel on a pty or a TCP port; stops after
``--games N`` results. Conventions: :mod:`tablectl.simulators.cli.kit`.
"""

from __future__ import annotations

import argparse
import sys

from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.ss2 import DEFAULT_MODE, FAULTS, FaultSpec, SimSS2

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
    clikit.add_seed_argument(parser)
    # The rejected value is shown as str() shows it ("5000.0"), as it always was here.
    clikit.add_speed_argument(parser, kind=clikit.number_type(0.01, 1000, "speed", value_format=""))
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
    clikit.add_count_argument(parser, "--games", "results")


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

    # Let the state-5 lines of the last game reach the host (state 5 lasts 2 wheel seconds).
    done = clikit.until_results(args.games, settle=2.5 / args.speed)
    return await clikit.run_served(_NAME, args, build, done=done)


main = clikit.main_for("ss2", "Serve a simulated Cammegh SS2 wheel.", add_arguments, run)
"""``python -m tablectl.simulators.cli.ss2``: the same as ``tablectl simulate ss2`` without the
service."""


if __name__ == "__main__":
    sys.exit(main())
