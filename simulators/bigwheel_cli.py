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
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence

from drivers.bigwheel.protocol import MAX_SEGMENTS, MIN_SEGMENTS
from simulators.bigwheel import FaultSpec, SimBigWheel
from simulators.serve import serve_pty, serve_tcp

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2
_NAME = "tablectl simulate bigwheel"


def _fault(text: str) -> FaultSpec:
    # argparse reports ArgumentTypeError verbatim, a bare ValueError as "invalid _fault value".
    try:
        return FaultSpec.from_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tcp(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0 = any free), not {text!r}")
    return host.strip("[]"), int(port)


def _number(low: float, high: float, what: str) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low:g}-{high:g}, not {value:g}")
        return value

    return parse


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
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true", help="serve on a new pty (the default)")
    where.add_argument(
        "--tcp",
        type=_tcp,
        metavar="HOST:PORT",
        help="serve on TCP for pyserial socket://HOST:PORT (port 0: pick a free one)",
    )
    parser.add_argument(
        "--link",
        metavar="PATH",
        help="with --pty: keep a symlink at PATH to the current slave (stable across disconnects)",
    )
    parser.add_argument("--seed", type=int, default=0, help="RNG seed (default 0)")
    parser.add_argument(
        "--segments",
        type=_segments,
        default=54,
        help="segments the sensor starts configured for (default 54; the host's SEG changes it)",
    )
    parser.add_argument(
        "--speed",
        type=_number(0.01, 1000, "speed"),
        default=1.0,
        help="time-lapse factor (default 1 = real time)",
    )
    parser.add_argument(
        "--stops",
        type=_stops,
        metavar="I,I,...",
        help="scripted stop segment indices in order (e.g. 3,17,40), seeded random after them",
    )
    parser.add_argument(
        "--every",
        type=_number(0.1, 3600, "every"),
        default=10.0,
        metavar="S",
        help="wheel seconds at rest between a stop and the next spin (default 10)",
    )
    parser.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="KIND@SPIN[=VALUE]",
        help=(
            "inject a fault (repeatable): short_spin[=turns], divider, wrong_direction, "
            "sensor_fault[=IDX|ENC|PTR|MOT], garbage, split, silence[=s], disconnect[=s]; "
            "e.g. short_spin@2=2, divider@3"
        ),
    )
    parser.add_argument(
        "--spins", type=int, default=0, metavar="N", help="exit after N stops (0: run on)"
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--spins`` spins stopped."""
    if args.link and args.tcp:
        print(f"{_NAME}: --link needs --pty", file=sys.stderr)
        return EXIT_USAGE
    if args.spins < 0:
        print(f"{_NAME}: --spins must be >= 0", file=sys.stderr)
        return EXIT_USAGE
    try:
        model = SimBigWheel(
            seed=args.seed,
            speed=args.speed,
            segments=args.segments,
            stops=args.stops,
            every=args.every,
            faults=args.fault,
            spins=args.spins or None,
        )
    except ValueError as exc:
        print(f"{_NAME}: {exc}", file=sys.stderr)
        return EXIT_USAGE

    loop = asyncio.get_running_loop()
    is_ready: asyncio.Future[None] = loop.create_future()
    kind = "tcp" if args.tcp else "pty"

    def report(where: str) -> None:
        print(f"READY {kind} {where}", flush=True)
        if not is_ready.done():
            is_ready.set_result(None)

    if args.tcp:
        host, port = args.tcp
        server = serve_tcp(model, host, port, on_ready=report)
    else:
        server = serve_pty(model, on_ready=report, link_path=args.link)

    stop = asyncio.Event()
    installed: list[signal.Signals] = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
            installed.append(sig)
    serving = asyncio.create_task(server, name="sim:serve")
    waiters = [asyncio.create_task(_wait(stop), name="sim:signal")]
    if args.spins > 0:
        waiters.append(asyncio.create_task(_spins_done(model, args.spins, is_ready)))
    try:
        await asyncio.wait([serving, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (serving, *waiters):
            task.cancel()
        await asyncio.gather(serving, *waiters, return_exceptions=True)
        for sig in installed:
            loop.remove_signal_handler(sig)
    if not serving.cancelled() and (error := serving.exception()) is not None:
        print(f"{_NAME}: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


async def _wait(event: asyncio.Event) -> None:
    await event.wait()


async def _spins_done(model: SimBigWheel, count: int, ready: asyncio.Future[None]) -> None:
    """Return once ``count`` spins stopped and a heartbeat after the last had time to go out."""
    await ready
    poll = max(0.005, 0.05 / model.speed)
    # The model is I/O-free and has no event to await: polling its result count is the seam.
    while len(model.results) < count:  # noqa: ASYNC110
        await asyncio.sleep(poll)
    await asyncio.sleep(1.5 / model.speed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simulators.bigwheel_cli``: ``tablectl simulate bigwheel`` without the service."""
    parser = argparse.ArgumentParser(
        prog="python -m simulators.bigwheel_cli",
        description="Serve a simulated money-wheel sensor (tablectl reference protocol).",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
