"""One base for a resource that ``with`` closes (a journal, a reader, an archive connection), and
its ``async with`` twin (a broker, an MQTT wire, the metrics endpoint, a technician's link).

Each of them has a ``close()`` that is safe to call twice; ``with`` closing it on the way out,
whatever happened inside, was written out in each. Not ``contextlib.closing``: that wraps an
object at every call site, where this makes the object itself the context manager.
"""

from __future__ import annotations

from types import TracebackType
from typing import Self


class Closing:
    """``with resource:`` gives the resource and calls its :meth:`close` on the way out."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class AsyncClosing:
    """``async with resource:`` awaits its :meth:`_open`, gives the resource and awaits its
    :meth:`close` on the way out."""

    async def _open(self) -> None:
        """What entering does first: nothing, for a resource that a factory already opened."""

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        await self._open()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
