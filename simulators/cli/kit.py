"""What the simulator CLIs share: argument types, the transport options and the serve loop.

Each ``tablectl simulate DEVICE`` (``simulators/*cli.py``) only declares its device's options and
builds its model; this module supplies the rest, the same for all of them:

- argparse types that report bad values verbatim (:func:`argument_type`, :func:`number_type`,
  :func:`tcp_type`, :data:`speed_type`), ``--pty | --tcp HOST:PORT`` plus ``--link``
  (:func:`add_transport_arguments`), and ``--fault`` from the device's fault table
  (:func:`add_fault_argument`);
- :func:`run_served`: serve a model on a pty or TCP port, print exactly one ``READY pty …`` /
  ``READY tcp …`` line, stop when cancelled or once ``done`` returns; :func:`serve_until_stopped`
  is its transport-free core (the CAN drum uses it directly);
- the exit codes: :data:`EXIT_OK` (0), :data:`EXIT_ERROR` (1, serving failed), :data:`EXIT_USAGE`
  (2, bad arguments), and :func:`run_main` for ``python -m tablectl.simulators.X``.

Serving ends when cancelled: ``tablectl simulate`` runs a simulator under the one stop mechanism of
every command (``tablectl.controller.service.stopping``: SIGINT and SIGTERM cancel it, it stops
serving, exit 0). This layer may not import it, so :func:`run_main` (no controller imports at all)
cancels on the two signals itself, the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import signal
import sys
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol, TypeVar

from tablectl.simulators.faults import FaultSpec
from tablectl.simulators.serve import SimDevice, serve_pty, serve_tcp

__all__ = [
    "EXIT_ERROR",
    "EXIT_OK",
    "EXIT_USAGE",
    "LINK_HELP",
    "SPEED_HELP",
    "add_fault_argument",
    "add_transport_arguments",
    "argument_type",
    "number_type",
    "results_done",
    "run_main",
    "run_served",
    "serve_until_stopped",
    "speed_type",
    "tcp_type",
    "usage_error",
]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

LINK_HELP = "with --pty: keep a symlink at PATH to the current slave (stable across disconnects)"
SPEED_HELP = "time-lapse factor (default 1 = real time)"

_T = TypeVar("_T")
_M = TypeVar("_M", bound=SimDevice)


# --- argument types -----------------------------------------------------------------------------


def argument_type(parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """``parse`` as an argparse ``type=``: its ``ValueError`` message is shown verbatim.

    (argparse reports ``ArgumentTypeError`` verbatim, a bare ``ValueError`` as "invalid … value".)
    """

    @functools.wraps(parse)
    def checked(text: str) -> _T:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return checked


def number_type(
    low: float, high: float, what: str = "", *, value_format: str = "g"
) -> Callable[[str], float]:
    """A float in ``low``..``high``; the range error reads ``"{what} must be LOW-HIGH, not V"``.

    ``value_format`` formats the rejected value (``""``: as ``str`` does, e.g. ``5000.0``).
    """
    prefix = f"{what} " if what else ""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(
                f"{prefix}must be {low:g}-{high:g}, not {value:{value_format}}"
            )
        return value

    return parse


speed_type = number_type(0.01, 1000, "speed")
"""``--speed``: a time-lapse factor, 0.01-1000."""


def tcp_type(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` too; port 0 picks a free one)."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT (port 0 = any free), not {text!r}")
    return host.strip("[]"), int(port)


def add_transport_arguments(parser: argparse.ArgumentParser, *, link_help: str = LINK_HELP) -> None:
    """Add ``--pty | --tcp HOST:PORT`` and ``--link PATH`` (read by :func:`run_served`)."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--pty", action="store_true", help="serve on a new pty (the default)")
    where.add_argument(
        "--tcp",
        type=tcp_type,
        metavar="HOST:PORT",
        help="serve on TCP for pyserial socket://HOST:PORT (port 0: pick a free one)",
    )
    parser.add_argument("--link", metavar="PATH", help=link_help)


def add_fault_argument(
    parser: argparse.ArgumentParser, spec: type[FaultSpec], *, listed: bool = False
) -> None:
    """Add ``--fault KIND@N[=VALUE]`` (repeatable, into ``args.fault``) for ``spec``'s kinds;
    the help lists them (``listed``: the parser's epilog lists them, one a line, with their
    defaults), and a bad spec is reported with the parser's message."""
    parser.add_argument(
        "--fault",
        type=argument_type(spec.from_spec),
        action="append",
        default=[],
        metavar=spec.KINDS.metavar,
        help=spec.KINDS.help(listed=listed),
    )


# --- serving ------------------------------------------------------------------------------------


def usage_error(name: str, problem: object) -> int:
    """Print ``NAME: PROBLEM`` to stderr; :data:`EXIT_USAGE`."""
    print(f"{name}: {problem}", file=sys.stderr)
    return EXIT_USAGE


async def run_served(
    name: str,
    args: argparse.Namespace,
    build: Callable[[], _M],
    *,
    done: Callable[[_M, asyncio.Future[None]], Awaitable[object]] | None = None,
    while_serving: Callable[[_M], AbstractContextManager[object]] | None = None,
) -> int:
    """Serve ``build()`` as :func:`add_transport_arguments`' options say, until stopped.

    Prints ``READY pty PATH`` or ``READY tcp HOST:PORT`` once serving. Stops when cancelled (the
    command's SIGINT/SIGTERM), or when ``done(model, ready)`` returns (``ready`` resolves at the
    READY line).
    ``while_serving(model)`` is entered around the serving (e.g. to watch stdin).

    Returns:
        :data:`EXIT_USAGE` for ``--link`` with ``--tcp`` or when ``build`` raises ``ValueError``
        (its message goes to stderr after ``name``); :data:`EXIT_ERROR` when serving failed;
        else :data:`EXIT_OK`.
    """
    if args.link and args.tcp:
        return usage_error(name, "--link needs --pty")
    try:
        model = build()
    except ValueError as exc:
        return usage_error(name, exc)

    ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    kind = "tcp" if args.tcp else "pty"

    def report(where: str) -> None:
        print(f"READY {kind} {where}", flush=True)
        if not ready.done():
            ready.set_result(None)

    with while_serving(model) if while_serving is not None else contextlib.nullcontext():
        if args.tcp:
            host, port = args.tcp
            server = serve_tcp(model, host, port, on_ready=report)
        else:
            server = serve_pty(model, on_ready=report, link_path=args.link)
        return await serve_until_stopped(
            name, server, done=None if done is None else done(model, ready)
        )


async def serve_until_stopped(
    name: str,
    serving: Coroutine[Any, Any, object],
    *,
    done: Awaitable[object] | None = None,
    task_name: str = "sim:serve",
) -> int:
    """Run ``serving`` until ``done`` finishes, until it ends itself, or until cancelled (the
    command's stop: SIGINT/SIGTERM); both tasks are over when this returns or raises.

    Returns:
        :data:`EXIT_ERROR` (the error printed after ``name``) when ``serving`` raised, else
        :data:`EXIT_OK`.
    """
    served = asyncio.create_task(serving, name=task_name)
    waiters: list[asyncio.Future[Any]] = []
    if done is not None:
        waiters.append(asyncio.ensure_future(done))
    try:
        await asyncio.wait([served, *waiters], return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (served, *waiters):
            task.cancel()
        await asyncio.gather(served, *waiters, return_exceptions=True)
    if not served.cancelled() and (error := served.exception()) is not None:
        print(f"{name}: {error}", file=sys.stderr)
        return EXIT_ERROR
    return EXIT_OK


class _Counting(Protocol):
    @property
    def speed(self) -> float: ...

    @property
    def results(self) -> Sequence[object]: ...


async def results_done(
    model: _Counting, count: int, ready: Awaitable[object], *, settle: float
) -> None:
    """Return ``settle`` seconds after the model has ``count`` results (once it is served)."""
    await ready
    poll = max(0.005, 0.05 / model.speed)
    # The model is I/O-free and has no event to await: polling its result count is the seam.
    while len(model.results) < count:  # noqa: ASYNC110
        await asyncio.sleep(poll)
    await asyncio.sleep(settle)


def run_main(
    argv: Sequence[str] | None,
    *,
    prog: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
) -> int:
    """``python -m tablectl.simulators.X``: parse ``argv`` and run; SIGINT and SIGTERM cancel
    it, a normal stop (:data:`EXIT_OK`), as ``tablectl simulate`` does."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    add_arguments(parser)
    args = parser.parse_args(argv)
    return asyncio.run(_cancelled_by_signals(run(args)))


async def _cancelled_by_signals(main: Coroutine[Any, Any, int]) -> int:
    """``main`` until SIGINT/SIGTERM cancel it (loop callbacks, never a KeyboardInterrupt)."""
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        if task is not None:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
    try:
        return await main
    except asyncio.CancelledError:
        return EXIT_OK
