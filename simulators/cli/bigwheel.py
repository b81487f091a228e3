"""``tablectl simulate bigwheel``: a simulated money-wheel sensor (``docs/protocols/bigwheel.md``)
on a pty or a TCP port; stops after ``--spins N``. Conventions: :mod:`tablectl.simulators.cli.kit`.
"""

from __future__ import annotations

import argparse
import sys

from tablectl.drivers.bigwheel.protocol import MAX_SEGMENTS, MIN_SEGMENTS
from tablectl.simulators.bigwheel import FaultSpec, SimBigWheel
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.errors import SimulatorError

_NAME = "tablectl simulate bigwheel"


def _stops(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        item = part.strip()
        if not item.isdigit():
            raise argparse.ArgumentTypeError(f"not a segment index: {item!r} (0-based, e.g. 3,17)")
        out.append(int(item))
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate bigwheel`` options to ``parser``."""
    clikit.add_transport_arguments(parser)
    clikit.add_seed_argument(parser)
    parser.add_argument(
        "--segments",
        type=clikit.whole_type(MIN_SEGMENTS, MAX_SEGMENTS, "segments"),
        default=54,
        help="segments the sensor starts configured for (default 54; the host's SEG changes it)",
    )
    clikit.add_speed_argument(parser)
    parser.add_argument(
        "--stops",
        type=_stops,
        metavar="I,I,...",
        help="scripted stop segment indices in order (e.g. 3,17,40), seeded random after them",
    )
    clikit.add_seconds_argument(
        parser,
        "--every",
        10.0,
        "wheel seconds at rest between a stop and the next spin (default 10)",
        low=0.1,
    )
    clikit.add_fault_argument(parser, FaultSpec)
    clikit.add_count_argument(parser, "--spins", "stops")


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--spins`` spins stopped."""

    def build() -> SimBigWheel:
        if args.spins < 0:
            raise SimulatorError("--spins must be >= 0")
        return SimBigWheel(
            seed=args.seed,
            speed=args.speed,
            segments=args.segments,
            stops=args.stops,
            every=args.every,
            faults=args.fault,
            spins=args.spins or None,
        )

    # Give a heartbeat after the last stop time to go out.
    done = clikit.until_results(args.spins, settle=1.5 / args.speed)
    return await clikit.run_served(_NAME, args, build, done=done)


main = clikit.main_for(
    "bigwheel",
    "Serve a simulated money-wheel sensor (tablectl reference protocol).",
    add_arguments,
    run,
)
"""``python -m tablectl.simulators.cli.bigwheel``: ``tablectl simulate bigwheel`` without the
service."""


if __name__ == "__main__":
    sys.exit(main())
