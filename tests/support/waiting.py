"""Waiting for a condition with a deadline: what a test does instead of sleeping and hoping.

A fixed sleep is both too long (every run pays it) and too short (a loaded machine is slower), and
an assertion about how much happened during it is a timing window. Waiting until the condition
holds costs only the time it takes, and fails with a message when it never comes.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

__all__ = ["until_waiting", "wait_until"]


async def wait_until(
    predicate: Callable[[], object],
    timeout: float = 5.0,  # noqa: ASYNC109 - a deadline for the test, reported when it passes
    *,
    what: str = "the condition",
) -> None:
    """Return once ``predicate()`` is true; fail after ``timeout`` seconds of real time.

    It polls (every few milliseconds) because what tests wait for, a counter, a model's state or
    the bytes a pty received, has no event to await. A predicate may return an awaitable (e.g.
    ``lambda: asyncio.to_thread(check)``); it is awaited each time.
    """
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await _holds(predicate):
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.005)


async def _holds(predicate: Callable[[], object]) -> bool:
    """``predicate()``, awaited when it returns an awaitable (a check run in a thread, say)."""
    result = predicate()
    if inspect.isawaitable(result):
        result = await result
    return bool(result)


async def until_waiting(task: asyncio.Task[Any]) -> None:
    """Return once ``task`` has run up to a wait (a read parked on its selector or its thread).

    What a test checks next, that cancelling or closing wakes that read, only means something
    once the read is really waiting; a fixed sleep would only make that likely.
    """
    coro = task.get_coro()
    await wait_until(
        lambda: task.done() or inspect.getcoroutinestate(coro) == inspect.CORO_SUSPENDED,
        what=f"{task!r} to wait",
    )
