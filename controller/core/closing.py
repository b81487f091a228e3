"""One base for a resource that ``with`` closes (a journal, a reader, an archive connection).

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
