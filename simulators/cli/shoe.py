"""``tablectl simulate shoe``: a simulated serial barcode shoe on a pty or a TCP port.

The HID wiring needs the simulated pyusb backend in the same process, so it is not served here
(:func:`tablectl.simulators.shoe.serve_usb`). ``--rate 0`` deals on request: each stdin line deals
one card, or N for a number. ``--exit-at-end`` exits once the shoe-empty signal went out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from collections.abc import Iterator
from typing import Literal

from tablectl.drivers.cards import parse_card
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.shoe import ShoeFault, SimShoe

_NAME = "tablectl simulate shoe"

_log = logging.getLogger(__name__)


@clikit.argument_type
def _cards(text: str) -> list[str]:
    return [parse_card(part).code for part in text.split(",") if part.strip()]


def _serials(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``simulate shoe`` options to ``parser``."""
    clikit.add_transport_arguments(
        parser, link_help="with --pty: keep a symlink at PATH to the slave"
    )
    clikit.add_seed_argument(parser, "shuffle seed")
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
        type=clikit.number_type(0, 1000),
        default=1.0,
        help="cards per second (default 1); 0: deal one per stdin line",
    )
    clikit.add_speed_argument(
        parser, kind=clikit.number_type(0.01, 1000), help="time-lapse factor (default 1)"
    )
    clikit.add_fault_argument(parser, ShoeFault)
    parser.add_argument(
        "--exit-at-end", action="store_true", help="exit once the shoe-empty signal went out"
    )


def build_model(args: argparse.Namespace) -> SimShoe:
    """The model the arguments describe (``ValueError`` when they are inconsistent)."""
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
    return await clikit.run_served(
        _NAME,
        args,
        lambda: build_model(args),
        done=(lambda model, ready: _shoe_done(model)) if args.exit_at_end else None,
        while_serving=_deal_on_stdin if args.rate == 0 else None,
    )


@contextlib.contextmanager
def _deal_on_stdin(model: SimShoe) -> Iterator[None]:
    """Deal on stdin lines (a number deals that many), unless stdin cannot be watched."""
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
        watching = False
    else:
        watching = True
    try:
        yield
    finally:
        if watching:
            loop.remove_reader(sys.stdin.fileno())


async def _shoe_done(model: SimShoe) -> None:
    # The model is I/O-free and has no event to await: polling ``done`` is the seam.
    while not model.done:  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # let the writer put the last line on the port


main = clikit.main_for("shoe", "Serve a simulated barcode shoe.", add_arguments, run)
"""``python -m tablectl.simulators.cli.shoe``: the same as ``tablectl simulate shoe``."""


if __name__ == "__main__":
    sys.exit(main())
