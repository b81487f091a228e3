"""What the simulator CLIs share: argument types, the common options, the serve loop and stop.

Each ``simulators/cli/DEVICE.py`` declares its options and builds its model; this module has the
rest: argparse types that report bad values verbatim, ``--pty | --tcp HOST:PORT`` and ``--link``,
``--seed``, ``--speed``, ``--fault`` and count options, and :func:`run_served`, which prints
exactly one line to stdout once serving (``READY pty /dev/pts/N`` or ``READY tcp
127.0.0.1:PORT``; everything else is logging on stderr) so scripts, tests and the demo know where
to connect. Exit codes: :data:`EXIT_OK` 0, :data:`EXIT_ERROR` 1, :data:`EXIT_USAGE` 2.

``tablectl simulate`` stops by the one mechanism of every command
(``tablectl.controller.service.stopping``); this layer may not import it, so :func:`run_main`
cancels on SIGINT/SIGTERM itself, the same way.
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

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_USAGE = 2

LINK_HELP = "with --pty: keep a symlink at PATH to the current slave (stable across disconnects)"
SPEED_HELP = "time-lapse factor (default 1 = real time)"

_T = TypeVar("_T")
_M = TypeVar("_M", bound=SimDevice)


# --- argument types -----------------------------------------------------------------------------


def argument_type(parse: Callable[[str], _T]) -> Callable[[str], _T]:
    """``parse`` as an argparse ``type=`` whose ``ValueError`` message is shown verbatim (argparse
    shows only ``ArgumentTypeError`` so; a bare ``ValueError`` becomes "invalid … value").
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


def whole_type(low: int, high: int, what: str) -> Callable[[str], int]:
    """A whole number (digits only) in ``low``..``high``; the error reads
    ``"{what} must be LOW-HIGH, not 'TEXT'"``."""

    def parse(text: str) -> int:
        if not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{what} must be {low}-{high}, not {text!r}")
        return int(text)

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


def add_seed_argument(parser: argparse.ArgumentParser, what: str = "RNG seed") -> None:
    """Add ``--seed N`` (default 0)."""
    parser.add_argument("--seed", type=int, default=0, help=f"{what} (default 0)")


def add_speed_argument(
    parser: argparse.ArgumentParser,
    *,
    kind: Callable[[str], float] = speed_type,
    help: str = SPEED_HELP,
) -> None:
    """Add ``--speed X``, the time-lapse factor (default 1)."""
    parser.add_argument("--speed", type=kind, default=1.0, help=help)


def add_seconds_argument(
    parser: argparse.ArgumentParser,
    flag: str,
    default: float | None,
    help: str,
    *,
    low: float = 0.01,
    high: float = 3600,
) -> None:
    """Add ``flag S``: device seconds in ``low``..``high``, named after the flag in errors
    (``--roll-delay``: "roll delay must be 0.01-3600, not 0")."""
    what = flag.removeprefix("--").replace("-", " ")
    parser.add_argument(
        flag, type=number_type(low, high, what), default=default, metavar="S", help=help
    )


def add_count_argument(parser: argparse.ArgumentParser, flag: str, what: str) -> None:
    """Add ``flag N``: exit after N ``what`` (0, the default: run on)."""
    parser.add_argument(
        flag, type=int, default=0, metavar="N", help=f"exit after N {what} (0: run on)"
    )


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
    """Serve ``build()`` on the transport the options say until cancelled or ``done(model, ready)``
    returns (``ready`` resolves at the READY line; :func:`until_results` makes the usual ``done``).

    ``while_serving(model)`` is entered around the serving. :data:`EXIT_USAGE` for ``--link`` with
    ``--tcp`` or a ``ValueError`` from ``build``; :data:`EXIT_ERROR` when serving failed.
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
    """Run ``serving`` until ``done`` finishes, it ends itself, or the command is cancelled; both
    tasks are over on return. :data:`EXIT_ERROR` (printed after ``name``) when ``serving`` raised.
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


def until_results(
    count: int, *, settle: float
) -> Callable[[_Counting, Awaitable[object]], Awaitable[None]] | None:
    """The ``done`` of :func:`run_served` for a ``--games N``-like count: ``settle`` seconds after
    the model's ``count``-th result (time for its last lines to reach the host); ``None`` (run
    on) for 0."""
    if count <= 0:
        return None
    return lambda model, ready: results_done(model, count, ready, settle=settle)


class Main(Protocol):
    """``main(argv=None)``: parse ``argv`` (default: the process's) and run; the exit code."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def main_for(
    device: str,
    description: str,
    add_arguments: Callable[[argparse.ArgumentParser], None],
    run: Callable[[argparse.Namespace], Coroutine[Any, Any, int]],
) -> Main:
    """The ``main(argv)`` of ``python -m tablectl.simulators.cli.DEVICE``: ``tablectl simulate``'s
    command for the device, without the service (:func:`run_main`)."""

    def main(argv: Sequence[str] | None = None) -> int:
        return run_main(
            argv,
            prog=f"python -m tablectl.simulators.cli.{device}",
            description=description,
            add_arguments=add_arguments,
            run=run,
        )

    return main


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
