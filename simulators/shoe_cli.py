"""``tablectl simulate shoe``: serve a simulated serial barcode shoe on a pty or a TCP port.

Prints exactly one line to stdout once serving — ``READY pty /dev/pts/N`` or
``READY tcp 127.0.0.1:PORT`` — like ``simulate ss2``; everything else goes to logging (stderr).
Point a ``serial-shoe`` device at the path (or ``socket://HOST:PORT``). The HID wiring needs the
simulated pyusb backend in the same process, so it is not served here (see
:func:`simulators.shoe.serve_usb`).

Dealing: ``--rate R`` lines per second (times ``--speed``); ``--rate 0`` deals on request: each
line on stdin deals one card, or N cards if the line is a number. Exits 0 on SIGINT/SIGTERM, or
with ``--exit-at-end`` once the shoe-empty signal went out; 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

from drivers.cards import parse_card
from simulators.serve import serve_pty, serve_tcp
from simulators.shoe import ShoeFault, SimShoe

__all__ = ["add_arguments", "main", "run"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

_log = logging.getLogger(__name__)


def _fault(text: str) -> ShoeFault:
    try:
        return ShoeFault.from_spec(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _cards(text: str) -> list[str]:
    try:
        return [parse_card(part).code for part in text.split(",") if part.strip()]
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _serials(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _tcp(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0 = any free), not {text!r}")
    return host.strip("[]"), int(port)


def _number(low: float, high: float) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"must be {low:g}-{high:g}, not {value:g}")
        return value

    return parse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate shoe`` options to ``parser``."""
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
        help="with --pty: keep a symlink at PATH to the slave",
    )
    parser.add_argument("--seed", type=int, default=0, help="shuffle seed (default 0)")
    parser.add_argument(
        "--decks", type=int, choices=range(1, 9), default=8, metavar="1-8", help="default 8"
    )
    parser.add_argument(
        "--cards",
        type=_cards,
        metavar="KH,TS,...",
        help="deal these cards in order instead of a shuffled shoe",
    )
    parser.add_argument(
        "--cut",
        type=int,
        metavar="N",
        help="cards behind the cut card (default 14; none for --cards); 0: no cut card",
    )
    parser.add_argument(
        "--deck-serials",
        type=_serials,
        default=[],
        metavar="S1,S2,...",
        help="one serial per deck, printed in each barcode as SERIAL-CARD",
    )
    parser.add_argument(
        "--rate",
        type=_number(0, 1000),
        default=1.0,
        help="cards per second (default 1); 0: deal one per stdin line",
    )
    parser.add_argument(
        "--speed", type=_number(0.01, 1000), default=1.0, help="time-lapse factor (default 1)"
    )
    parser.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="KIND@CARD",
        help="inject a fault at card N (repeatable): unreadable, duplicate, foreign, extra, "
        "cut_early, cut_late, removed — e.g. duplicate@12",
    )
    parser.add_argument(
        "--exit-at-end", action="store_true", help="exit once the shoe-empty signal went out"
    )


def build_model(args: argparse.Namespace) -> SimShoe:
    """The model the arguments describe.

    Raises:
        ValueError: inconsistent arguments.
    """
    cut: int | Literal["auto"] | None = "auto" if args.cut is None else (args.cut or None)
    return SimShoe(
        seed=args.seed,
        decks=args.decks,
        cards=args.cards,
        cut_from_end=cut,
        deck_serials=args.deck_serials,
        faults=args.fault,
        rate=args.rate,
        speed=args.speed,
    )


async def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT/SIGTERM (or the end of the shoe with ``--exit-at-end``)."""
    if args.link and args.tcp:
        print("tablectl simulate shoe: --link needs --pty", file=sys.stderr)
        return EXIT_USAGE
    try:
        model = build_model(args)
    except ValueError as exc:
        print(f"tablectl simulate shoe: {exc}", file=sys.stderr)
        return EXIT_USAGE

    loop = asyncio.get_running_loop()
    kind = "tcp" if args.tcp else "pty"

    def report(where: str) -> None:
        print(f"READY {kind} {where}", flush=True)

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
    reading_stdin = args.rate == 0 and _deal_on_stdin(model)
    serving = asyncio.create_task(server, name="sim:serve")
    waiters: list[asyncio.Task[Any]] = [asyncio.create_task(stop.wait(), name="sim:signal")]
    if args.exit_at_end:
        waiters.append(asyncio.create_task(_shoe_done(model), name="sim:end"))
    try:
        await asyncio.wait([serving, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (serving, *waiters):
            task.cancel()
        await asyncio.gather(serving, *waiters, return_exceptions=True)
        for sig in installed:
            loop.remove_signal_handler(sig)
        if reading_stdin:
            loop.remove_reader(sys.stdin.fileno())
    if not serving.cancelled() and (error := serving.exception()) is not None:
        print(f"tablectl simulate shoe: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


def _deal_on_stdin(model: SimShoe) -> bool:
    """Deal on stdin lines (a number deals that many). False when stdin cannot be watched."""
    loop = asyncio.get_running_loop()

    def on_line() -> None:
        line = sys.stdin.readline()
        if not line:  # EOF: stop watching (the shoe keeps serving what was dealt)
            loop.remove_reader(sys.stdin.fileno())
            return
        text = line.strip()
        model.request(int(text) if text.isdigit() else 1)

    try:
        loop.add_reader(sys.stdin.fileno(), on_line)
    except (OSError, ValueError, NotImplementedError) as exc:
        _log.warning("--rate 0 deals on stdin lines, but stdin cannot be watched: %s", exc)
        return False
    return True


async def _shoe_done(model: SimShoe) -> None:
    # The model is I/O-free and has no event to await: polling ``done`` is the seam.
    while not model.done:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # let the writer put the last line on the port


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m simulators.shoe_cli``: the same as ``tablectl simulate shoe``."""
    parser = argparse.ArgumentParser(
        prog="python -m simulators.shoe_cli", description="Serve a simulated barcode shoe."
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return asyncio.run(run(args))
    except KeyboardInterrupt:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
