"""``tablectl simulate drum``: run a simulated ball drum on a python-can bus.

Prints ``READY can INTERFACE CHANNEL``; exits 0 on SIGINT/SIGTERM or after ``--draws N``, 1 when
the bus cannot be opened, 2 on bad arguments. python-can's ``virtual`` bus only joins buses in one
process, so ``--interface virtual`` is for callers running :func:`run` beside the driver; between
processes use socketcan (``vcan0``, needs the vcan module) or ``udp_multicast`` with ``msgpack``
(``docs/protocols/drum.md``, "Simulator").
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable

from tablectl.drivers.drum.protocol import MAX_BALL, MAX_READERS
from tablectl.drivers.errors import DriverError
from tablectl.drivers.transports.can import CanLink
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.drum import FaultSpec, SimDrum, run_sim_drum

_NAME = "tablectl simulate drum"


def _int(low: int, high: int, what: str) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low}-{high}, not {value}")
        return value

    return parse


def _option(text: str) -> tuple[str, str | int | float | bool]:
    key, eq, raw = text.partition("=")
    if not eq or not key.isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, not {text!r}")
    value: str | int | float | bool = raw
    if raw.lower() in ("true", "false"):
        value = raw.lower() == "true"
    else:
        for kind in (int, float):
            try:
                value = kind(raw)
                break
            except ValueError:
                continue
    return key, value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate drum`` options to ``parser``."""
    parser.add_argument(
        "--interface",
        default="virtual",
        help="python-can interface (default virtual: in-process only; socketcan, udp_multicast…)",
    )
    parser.add_argument(
        "--channel",
        default="tablectl-drum",
        help="python-can channel (a virtual bus name, can0/vcan0, a multicast group…)",
    )
    parser.add_argument("--bitrate", type=_int(10_000, 1_000_000, "bitrate"), default=None)
    parser.add_argument(
        "--can-option",
        type=_option,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra can.Bus argument (repeatable), e.g. hop_limit=0 for udp_multicast",
    )
    clikit.add_seed_argument(parser)
    parser.add_argument(
        "--balls", type=_int(1, MAX_BALL + 1, "balls"), default=42, help="balls in the drum"
    )
    parser.add_argument(
        "--first-ball", type=_int(0, 1, "first ball"), default=1, help="lowest number (0 or 1)"
    )
    parser.add_argument(
        "--draw", type=_int(1, 99, "draw"), default=7, help="balls per draw (default 7)"
    )
    parser.add_argument("--readers", type=_int(1, MAX_READERS, "readers"), default=1)
    parser.add_argument(
        "--node-id",
        type=_int(1, 0x7F - MAX_READERS, "node id"),
        default=0x10,
        help="controller node id (default 0x10; readers follow it)",
    )
    clikit.add_speed_argument(
        parser, help="time-lapse factor for mechanical durations (heartbeats stay at 200 ms)"
    )
    parser.add_argument(
        "--mix-seconds",
        type=clikit.number_type(0.01, 3600, "mix seconds"),
        default=3.0,
        help="automatic cycle: drum seconds of mixing before the first ball (default 3)",
    )
    parser.add_argument(
        "--ball-interval",
        type=clikit.number_type(0.01, 3600, "ball interval"),
        default=1.0,
        help="automatic cycle: drum seconds between balls (default 1)",
    )
    parser.add_argument(
        "--manual",
        action="store_true",
        help="no automatic draw cycle: only host commands (start mixing, release) act",
    )
    clikit.add_fault_argument(parser, FaultSpec)
    clikit.add_count_argument(parser, "--draws", "completed draws")


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--draws`` draws completed."""
    try:
        model = SimDrum(
            seed=args.seed,
            speed=args.speed,
            balls=args.balls,
            first_ball=args.first_ball,
            draw=args.draw,
            readers=args.readers,
            node_id=args.node_id,
            faults=args.fault,
            auto=not args.manual,
            mix_seconds=args.mix_seconds,
            ball_interval=args.ball_interval,
        )
    except ValueError as exc:
        return clikit.usage_error(_NAME, exc)
    link = CanLink(args.interface, args.channel, bitrate=args.bitrate, **dict(args.can_option))
    try:
        await link.open()
    except DriverError as exc:
        print(f"{_NAME}: {exc}", file=sys.stderr)
        return clikit.EXIT_ERROR
    print(f"READY can {args.interface} {args.channel}", flush=True)
    # Time for the last draw's frames to go out; the drum is on the bus already.
    done = clikit.until_results(args.draws, settle=0.3)
    try:
        return await clikit.serve_until_stopped(
            _NAME,
            run_sim_drum(model, link),
            done=None if done is None else done(model, asyncio.sleep(0)),
            task_name="sim:drum",
        )
    finally:
        await link.close()


main = clikit.main_for(
    "drum",
    "Run a simulated ball drum on a CAN bus (tablectl reference protocol).",
    add_arguments,
    run,
)
"""``python -m tablectl.simulators.cli.drum``: ``tablectl simulate drum`` without the service."""


if __name__ == "__main__":
    sys.exit(main())
