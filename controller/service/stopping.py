"""How a long-running command stops: SIGINT and SIGTERM, one orderly path (docs/operations.md).

The first signal cancels the command (every ``finally`` runs) or calls its ``on_signal``; it then
exits 0 as if finished. Further signals are logged and ignored. A signal is never an exception in
the middle of something: before and after the loop it is only noted, and while the loop runs its
own handlers take it between two steps.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Final, TypeVar

log = logging.getLogger("tablectl.stopping")

T = TypeVar("T")

STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop a command in order (Ctrl-C, and systemd's / ``kill``'s default)."""

_Handler = Callable[[int, FrameType | None], Any] | int | None

_noted: list[signal.Signals] = []
"""Signals that came while no loop was there to take them, oldest first."""


def _note(signum: int, frame: FrameType | None) -> None:
    _noted.append(signal.Signals(signum))


def defer_signals() -> None:
    """From now on, a SIGINT or SIGTERM that no running command takes is noted, not raised (the
    ``tablectl`` script calls it first thing)."""
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, _note)


def ignore_signals() -> None:
    """The command is over: a stop signal has nothing left to stop, and is ignored while the
    process exits. (Python's exit puts back the default handlers of those it handled, and a late
    Ctrl-C would kill it half-way through; an ignored signal it leaves ignored.)"""
    if threading.current_thread() is threading.main_thread():
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
    _noted.clear()


def stop_deferring() -> bool:
    """Back to the default handlers (no long-running command after all, e.g. an interactive
    prompt). Returns whether a stop signal was noted meanwhile (the caller then ends)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
    noted = bool(_noted)
    _noted.clear()
    return noted


def run(
    main: Coroutine[Any, Any, T],
    *,
    on_signal: Callable[[], object] | None = None,
    cancel: bool = True,
) -> T | None:
    """Run ``main`` on a new event loop until it ends or a stop signal ends it; ``None`` when a
    signal cancelled it (``cancel=False``: ``on_signal`` ends it)."""
    in_main = threading.current_thread() is threading.main_thread()
    previous: dict[signal.Signals, _Handler] = {}
    if in_main:
        previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        defer_signals()  # also while the loop closes; restored below for an in-process caller
    try:
        if _noted:
            main.close()  # stopped before it started
            return None
        with asyncio.Runner() as runner:
            return runner.run(until_signal(main, on_signal=on_signal, cancel=cancel))
    finally:
        for sig, handler in previous.items():
            if handler is not None:
                signal.signal(sig, handler)
        _noted.clear()


@dataclass(eq=False)
class _Scope:
    """One :func:`until_signal` on the stack of its loop."""

    task: asyncio.Task[Any]
    on_signal: Callable[[], object] | None
    cancel: bool
    signalled: bool = False


@dataclass(eq=False)
class _LoopStops:
    """The stop signals of one event loop: its handlers and the scopes that take them."""

    scopes: list[_Scope] = field(default_factory=list)
    stopping: signal.Signals | None = None
    previous: dict[signal.Signals, _Handler] = field(default_factory=dict)

    def install(self, loop: asyncio.AbstractEventLoop) -> bool:
        """The loop's handlers for :data:`STOP_SIGNALS`; ``False`` where it cannot have them."""
        if threading.current_thread() is not threading.main_thread():
            return False
        self.previous = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
        try:
            for sig in STOP_SIGNALS:
                loop.add_signal_handler(sig, self.take, sig)
        except (NotImplementedError, RuntimeError):  # no Unix signals on this loop
            self.uninstall(loop)
            return False
        return True

    def uninstall(self, loop: asyncio.AbstractEventLoop) -> None:
        for sig in STOP_SIGNALS:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                continue
            handler = self.previous.get(sig)
            if handler is not None:  # the noting handler (or the caller's), not SIG_DFL
                signal.signal(sig, handler)

    def take(self, sig: signal.Signals) -> None:
        """A stop signal, in a callback of the loop: the innermost scope stops, once."""
        if self.stopping is not None:
            log.warning(
                "stop signal %s again: already stopping (after %s)", sig.name, self.stopping.name
            )
            return
        if not self.scopes:
            return
        self.stopping = sig
        scope = self.scopes[-1]
        scope.signalled = True
        log.info("stop signal %s: stopping", sig.name)
        if scope.on_signal is not None:
            scope.on_signal()
        if scope.cancel:
            scope.task.cancel()


_loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopStops] = (
    weakref.WeakKeyDictionary()
)


async def until_signal(
    work: Coroutine[Any, Any, T],
    *,
    on_signal: Callable[[], object] | None = None,
    cancel: bool = True,
) -> T | None:
    """Await ``work`` in this task; the first SIGINT/SIGTERM stops it (``None``). A cancellation
    from anyone else propagates as usual."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    stops = _loops.get(loop)
    if stops is None:
        stops = _LoopStops()
        if task is None or not stops.install(loop):
            return await work
        _loops[loop] = stops
    if task is None:  # pragma: no cover - a loop with scopes runs them in tasks
        return await work
    scope = _Scope(task, on_signal, cancel)
    stops.scopes.append(scope)
    if _noted and stops.stopping is None:  # a signal before the loop ran: stop at once
        loop.call_soon(stops.take, _noted[0])
        _noted.clear()
    try:
        return await work
    except asyncio.CancelledError:
        if scope.signalled and scope.cancel and task.uncancel() == 0:
            return None
        raise
    finally:
        stops.scopes.remove(scope)
        if not stops.scopes:
            stops.uninstall(loop)
            del _loops[loop]
