"""Model time: a device's schedule (:class:`Timeline`), what every model shares
(:class:`TimedModel`) and what every serial one adds (:class:`SerialModel`).

A model never reads a clock or sleeps: it is handed ``now``. Entries run in time order, ties in
scheduling order, so a seed, a script and the host's timing always give the same bytes, however
often the model is advanced.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Container, Iterator
from typing import Generic, TypeVar

from tablectl.simulators.chunks import Chunk, Outbox

A = TypeVar("A")
R = TypeVar("R")
T = TypeVar("T")


class Timeline(Generic[T]):
    """Items due at given times; items due at the same time come out in the order put in."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, T]] = []
        self._seq = 0

    def add(self, at: float, item: T) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (at, self._seq, item))

    def cancel(self, drop: Callable[[T], bool]) -> None:
        """Drop every item ``drop`` picks."""
        self._heap = [e for e in self._heap if not drop(e[2])]
        heapq.heapify(self._heap)

    def shift(self, seconds: float, moves: Callable[[T], bool] | None = None) -> None:
        """Hold back the items ``moves`` picks (or all) by ``seconds``."""
        self._heap = [
            (at + seconds, seq, item) if moves is None or moves(item) else (at, seq, item)
            for at, seq, item in self._heap
        ]
        heapq.heapify(self._heap)

    def next_at(self) -> float | None:
        """When the earliest item is due (``None``: nothing is planned)."""
        return self._heap[0][0] if self._heap else None

    def pop(self) -> tuple[float, T]:
        """The earliest item with its time, taken off the timeline."""
        at, _, item = heapq.heappop(self._heap)
        return at, item

    def due(self, now: float) -> Iterator[tuple[float, T]]:
        """Take the items due by ``now`` one by one, earliest first (those added meanwhile
        included)."""
        while self._heap and self._heap[0][0] <= now:
            yield self.pop()


class TimedModel(Generic[A, R]):
    """The part every model shares: ``speed``, the timeline run up to each ``now``, and the results
    (``R``: what ``--games N`` counts). A subclass calls :meth:`_start_timeline`, schedules in
    :meth:`_on_start` and acts in :meth:`_on_event` (``A``: an action's detail).
    """

    _speed: float
    _origin: float | None
    """Model time of the first call (``None`` before it)."""
    _timeline: Timeline[tuple[str, A]]
    _no_arg: A
    _results: list[R]

    def _start_timeline(self, speed: float, no_arg: A) -> None:
        self._speed = speed
        self._origin = None
        self._timeline = Timeline()
        self._no_arg = no_arg
        self._results = []

    @property
    def speed(self) -> float:
        return self._speed

    @property
    def results(self) -> tuple[R, ...]:
        """Every result so far (a number, a stop, a shuffle, a roll's end, a draw), in order."""
        return tuple(self._results)

    def _run_until(self, now: float) -> None:
        if self._origin is None:
            self._origin = now
            self._on_start(now)
        for at, (kind, arg) in self._timeline.due(now):
            self._on_event(at, kind, arg)

    def _schedule(self, at: float, kind: str, arg: A | None = None) -> None:
        self._timeline.add(at, (kind, self._no_arg if arg is None else arg))

    def _cancel(self, kind: str) -> None:
        self._timeline.cancel(lambda action: action[0] == kind)

    def _shift(self, seconds: float, kinds: Container[str] | None = None) -> None:
        """Hold back what is scheduled (of ``kinds``, or everything) by ``seconds``."""
        self._timeline.shift(seconds, None if kinds is None else lambda action: action[0] in kinds)

    def _scaled(self, seconds: float) -> float:
        """Device seconds as model seconds."""
        return seconds / self._speed

    def _on_start(self, now: float) -> None:
        """Schedule what the device does from its first moment on."""

    def _on_event(self, at: float, kind: str, arg: A) -> None:
        raise NotImplementedError


class SerialModel(TimedModel[A, R]):
    """What a serial model adds: the output for :meth:`advance_chunks`, the ``disconnect`` window
    and the host input it ignored.
    """

    _outbox: Outbox
    _link_down: tuple[float, float] | None
    _ignored: int

    def _start_timeline(self, speed: float, no_arg: A) -> None:
        super()._start_timeline(speed, no_arg)
        self._outbox = Outbox()
        self._link_down = None
        self._ignored = 0

    @property
    def ignored_commands(self) -> int:
        """Host input the device ignored: garbled, unknown or refused as bad, or sent while it
        was silent or unplugged."""
        return self._ignored

    def link_down(self, now: float) -> bool:
        """Whether a ``disconnect`` fault has the cable pulled at ``now``; servers close the port
        while it is, and the model drops what it would send.
        """
        window = self._link_down
        return window is not None and window[0] <= now < window[1]

    def advance(self, now: float) -> bytes:
        """Everything the device sends up to ``now`` (seconds, any monotonic origin)."""
        return b"".join(chunk.data for chunk in self.advance_chunks(now))

    def advance_chunks(self, now: float) -> list[Chunk]:
        """Like :meth:`advance`, with send times and the fragments of ``split`` faults."""
        self._run_until(now)
        return self._outbox.take()
