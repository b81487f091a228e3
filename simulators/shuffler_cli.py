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
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence

from drivers.shuffler.protocol import MAX_DECKS
from simulators.serve import serve_pty, serve_tcp
from simulators.shuffler import FaultSpec, SimShuffler

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2


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


def _decks(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= MAX_DECKS:
        raise argparse.ArgumentTypeError(f"decks must be 1-{MAX_DECKS}, not {text!r}")
    return int(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate shuffler`` options to ``parser``."""
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
        "--decks", type=_decks, default=8, help=f"decks loaded, 1-{MAX_DECKS} (default 8)"
    )
    parser.add_argument(
        "--speed",
        type=_number(0.01, 1000, "speed"),
        default=1.0,
        help="time-lapse factor (default 1 = real time)",
    )
    parser.add_argument(
        "--shuffle-seconds",
        type=_number(0.01, 3600, "shuffle seconds"),
        default=None,
        metavar="S",
        help="device seconds per shuffle (default 2 + 1 per deck)",
    )
    parser.add_argument(
        "--auto",
        type=_number(0.01, 3600, "auto"),
        default=None,
        metavar="S",
        help="the dealer presses start S device seconds after each shuffle (default: host only)",
    )
    parser.add_argument(
        "--no-reader",
        action="store_true",
        help="model a shuffler without a card-face reader (deck checks report ?)",
    )
    parser.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="KIND@SHUFFLE[=VALUE]",
        help=(
            "inject a fault (repeatable): jam, wrong_count, missing_card, extra_card, door_open, "
            "fault, garbage, split, silence, disconnect; e.g. jam@2, missing_card@1=QS, fault@3=7"
        ),
    )
    parser.add_argument(
        "--shuffles",
        type=int,
        default=0,
        metavar="N",
        help="exit after N completed shuffles (0: run on)",
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--shuffles`` shuffles completed."""
    if args.link and args.tcp:
        print("tablectl simulate shuffler: --link needs --pty", file=sys.stderr)
        return EXIT_USAGE
    try:
        model = SimShuffler(
            seed=args.seed,
            speed=args.speed,
            decks=args.decks,
            faults=args.fault,
            shuffle_seconds=args.shuffle_seconds,
            auto=args.auto,
            reads_faces=not args.no_reader,
        )
    except ValueError as exc:
        print(f"tablectl simulate shuffler: {exc}", file=sys.stderr)
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
    if args.shuffles > 0:
        waiters.append(asyncio.create_task(_shuffles_done(model, args.shuffles, is_ready)))
    try:
        await asyncio.wait([serving, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (serving, *waiters):
            task.cancel()
        await asyncio.gather(serving, *waiters, return_exceptions=True)
        for sig in installed:
            loop.remove_signal_handler(sig)
    if not serving.cancelled() and (error := serving.exception()) is not None:
        print(f"tablectl simulate shuffler: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


async def _wait(event: asyncio.Event) -> None:
    await event.wait()


async def _shuffles_done(model: SimShuffler, count: int, ready: asyncio.Future[None]) -> None:
    """Return once ``count`` shuffles completed and their ``SHDN`` had time to go out."""
    await ready
    poll = max(0.005, 0.05 / model.speed)
    # The model is I/O-free and has no event to await: polling its result count is the seam.
    while len(model.results) < count:  # noqa: ASYNC110
        await asyncio.sleep(poll)
    await asyncio.sleep(0.2)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simulators.shuffler_cli``: ``tablectl simulate shuffler`` without the service."""
    parser = argparse.ArgumentParser(
        prog="python -m simulators.shuffler_cli",
        description="Serve a simulated card shuffler (tablectl reference protocol).",
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
