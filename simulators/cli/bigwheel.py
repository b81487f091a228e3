"""``tablectl simulate bigwheel``: serve a simulated money-wheel sensor on a pty or a TCP port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — like ``tablectl simulate ss2``, so scripts, tests and the demo
know where to connect; everything else goes to logging (stderr). Exits 0 on SIGINT/SIGTERM or
after ``--spins N`` stops, 2 on bad arguments.

The sensor speaks the reference protocol (``docs/protocols/bigwheel.md``); point a
``driver = "tablectl-bigwheel"`` device at the pty path or at ``socket://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Sequence

from tablectl.drivers.bigwheel.protocol import MAX_SEGMENTS, MIN_SEGMENTS
from tablectl.simulators.bigwheel import FaultSpec, SimBigWheel
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.errors import SimulatorError

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = clikit.EXIT_OK
EXIT_ERROR = clikit.EXIT_ERROR
EXIT_USAGE = clikit.EXIT_USAGE
_NAME = "tablectl simulate bigwheel"


def _segments(text: str) -> int:
    if not text.isdigit() or not MIN_SEGMENTS <= int(text) <= MAX_SEGMENTS:
        raise argparse.ArgumentTypeError(
            f"segments must be {MIN_SEGMENTS}-{MAX_SEGMENTS}, not {text!r}"
        )
    return int(text)


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
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    parser.add_argument(
        "--segments",
        type=_segments,
        default=54,
        help="segments the sensor starts configured for (default 54; the host's SEG changes it)",
    )
    parser.add_argument("--speed", type=clikit.speed_type, default=1.0, help=clikit.SPEED_HELP)
    parser.add_argument(
        "--stops",
        type=_stops,
        metavar="I,I,...",
        help="scripted stop segment indices in order (e.g. 3,17,40), seeded random after them",
    )
    parser.add_argument(
        "--every",
        type=clikit.number_type(0.1, 3600, "every"),
        default=10.0,
        metavar="S",
        help="wheel seconds at rest between a stop and the next spin (default 10)",
    )
    clikit.add_fault_argument(parser, FaultSpec)
    parser.add_argument(
        "--spins", type=int, default=0, metavar="N", help="exit after N stops (0: run on)"
    )


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

    def spins_done(model: SimBigWheel, ready: asyncio.Future[None]) -> Awaitable[None]:
        # Give a heartbeat after the last stop time to go out.
        return clikit.results_done(model, args.spins, ready, settle=1.5 / model.speed)

    return await clikit.run_served(_NAME, args, build, done=spins_done if args.spins > 0 else None)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tablectl.simulators.cli.bigwheel``: ``tablectl simulate bigwheel`` without the
    service."""
    return clikit.run_main(
        argv,
        prog="python -m tablectl.simulators.cli.bigwheel",
        description="Serve a simulated money-wheel sensor (tablectl reference protocol).",
        add_arguments=add_arguments,
        run=run,
    )


if __name__ == "__main__":
    sys.exit(main())
