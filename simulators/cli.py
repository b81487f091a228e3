"""``tablectl simulate ss2``: serve a simulated Slingshot 2 wheel on a pty or a TCP port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — so scripts, tests and the demo know where to connect without
parsing logs; everything else goes to logging (stderr). Exits 0 on SIGINT/SIGTERM or after
``--games N`` results, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence

from simulators.serve import serve_pty, serve_tcp
from simulators.ss2 import DEFAULT_MODE, FaultSpec, SimSS2

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


def _tcp(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0 = any free), not {text!r}")
    return host.strip("[]"), int(port)


def _speed(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.01 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"speed must be 0.01-1000, not {value}")
    return value


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate ss2`` options to ``parser``."""
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
        "--speed", type=_speed, default=1.0, help="time-lapse factor (default 1 = real time)"
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
    parser.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="KIND@GAME[=VALUE]",
        help="inject a fault (repeatable), e.g. misspin@2, silence@3=4, fault@1=5",
    )
    parser.add_argument(
        "--games", type=int, default=0, metavar="N", help="exit after N results (0: run on)"
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM, or until ``--games`` results went out."""
    if args.link and args.tcp:
        print("tablectl simulate ss2: --link needs --pty", file=sys.stderr)
        return EXIT_USAGE
    try:
        model = SimSS2(
            seed=args.seed,
            speed=args.speed,
            mode=args.mode,
            pockets=args.pockets,
            faults=args.fault,
            numbers=args.numbers,
        )
    except ValueError as exc:
        print(f"tablectl simulate ss2: {exc}", file=sys.stderr)
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
    if args.games > 0:
        waiters.append(asyncio.create_task(_games_done(model, args.games, is_ready)))
    try:
        await asyncio.wait([serving, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (serving, *waiters):
            task.cancel()
        await asyncio.gather(serving, *waiters, return_exceptions=True)
        for sig in installed:
            loop.remove_signal_handler(sig)
    if not serving.cancelled() and (error := serving.exception()) is not None:
        print(f"tablectl simulate ss2: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


async def _wait(event: asyncio.Event) -> None:
    await event.wait()


async def _games_done(model: SimSS2, games: int, ready: asyncio.Future[None]) -> None:
    """Return once ``games`` results were announced and their state-5 lines went out."""
    await ready
    poll = max(0.005, 0.05 / model.speed)
    # The model is I/O-free and has no event to await: polling its result count is the seam.
    while len(model.results) < games:  # noqa: ASYNC110
        await asyncio.sleep(poll)
    # Let the state-5 lines of the last game reach the host (state 5 lasts 2 wheel seconds).
    await asyncio.sleep(2.5 / model.speed)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simulators.cli``: the same as ``tablectl simulate ss2`` without the service."""
    parser = argparse.ArgumentParser(
        prog="python -m simulators.cli", description="Serve a simulated Cammegh SS2 wheel."
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
