"""Commands waiting for their reply on one link: the request/reply half of a driver.

Each decoded message is offered to the waiters oldest first (replies come back in command order);
a wait ends with the reply, a :class:`~tablectl.drivers.errors.DeviceTimeoutError` on the driver's
clock, or the error that failed every wait when the link was lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from tablectl.drivers.clock import Clock, within
from tablectl.drivers.errors import DeviceTimeoutError

__all__ = ["Replies", "Waiter", "acked", "as_a", "is_a"]

M = TypeVar("M")
T = TypeVar("T")
A = TypeVar("A")
N = TypeVar("N")


def _new_future() -> asyncio.Future[M]:
    return asyncio.get_running_loop().create_future()


@dataclass(eq=False)
class Waiter(Generic[M]):
    """One expected reply: what matches it, and the future it resolves."""

    match: Callable[[M], bool]
    future: asyncio.Future[M] = field(default_factory=_new_future)


class Replies(Generic[M]):
    """The waiters of one driver (see the module docstring)."""

    def __init__(self, device_id: str, clock: Clock) -> None:
        self._device_id = device_id
        self._clock = clock
        self._waiters: list[Waiter[M]] = []

    def expect(self, match: Callable[[M], bool]) -> Waiter[M]:
        """Start waiting for a reply ``match`` accepts (before the command is sent: it may come
        back at once)."""
        waiter = Waiter(match)
        self._waiters.append(waiter)
        return waiter

    async def wait(
        self,
        waiter: Waiter[M],
        timeout: float,  # noqa: ASYNC109 - measured on the driver's clock
        what: str,
    ) -> M:
        """The reply, or :class:`DeviceTimeoutError` naming ``what`` after ``timeout`` seconds."""
        try:
            return await within(self._clock, waiter.future, timeout)
        except TimeoutError:
            raise DeviceTimeoutError(
                f"device {self._device_id!r}: no reply to {what} within {timeout} s"
            ) from None

    def forget(self, waiter: Waiter[M]) -> None:
        """Stop waiting (after the reply, a timeout or a cancellation)."""
        if waiter in self._waiters:
            self._waiters.remove(waiter)
        future = waiter.future
        if future.done() and not future.cancelled():
            future.exception()  # a lost link failed a wait nobody reached: not an error to log
        future.cancel()

    async def request(
        self,
        send: Callable[[], None],
        match: Callable[[M], bool],
        timeout: float,  # noqa: ASYNC109 - measured on the driver's clock
        what: str,
    ) -> M:
        """Send a command (``send``) and wait for its reply (see :meth:`wait`)."""
        waiter = self.expect(match)
        try:
            send()
            return await self.wait(waiter, timeout, what)
        finally:
            self.forget(waiter)

    def resolve(self, message: M) -> None:
        """Offer a decoded message to the waiters, oldest first; the first that matches takes it."""
        if not self._waiters:
            return
        for waiter in list(self._waiters):
            if not waiter.future.done() and waiter.match(message):
                waiter.future.set_result(message)
                self._waiters.remove(waiter)
                return

    def fail_all(self, exc: Exception) -> None:
        """Fail every wait with ``exc`` (the link was lost, the driver closed)."""
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.future.done():
                waiter.future.set_exception(exc)


def is_a(kind: type[object]) -> Callable[[object], bool]:
    """A match for replies of type ``kind``."""

    def match(message: object) -> bool:
        return isinstance(message, kind)

    return match


def as_a(kind: type[T]) -> Callable[[object], T]:
    """The reply as ``kind`` (after a match that checked it)."""

    def convert(message: object) -> T:
        assert isinstance(message, kind)
        return message

    return convert


def acked(
    verb: str, ack: type[A], nak: type[N]
) -> tuple[Callable[[object], bool], Callable[[object], A | N]]:
    """Match and convert for the ``ack`` or ``nak`` naming ``verb``, or ``?`` (the device could
    not read which command it refuses)."""

    def match(message: object) -> bool:
        return isinstance(message, (ack, nak)) and getattr(message, "verb", None) in (verb, "?")

    def convert(message: object) -> A | N:
        assert isinstance(message, (ack, nak))
        return message

    return match, convert
