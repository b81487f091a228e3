"""Model time: what a simulated device has scheduled (:class:`Timeline`), the part of a model that
every device shares (:class:`TimedModel`), and what every serial one adds (:class:`SerialModel`).

A model is I/O-free, never reads a clock and never sleeps: its server (or a test, or a scenario)
hands it ``now`` and takes what it sent up to then, and waits until the next entry is due. Between
two calls, what the model will do is on its timeline, run in time order; entries at the same time
run in the order they were scheduled, so a seed, a script and the timing of the host's commands
always give the same bytes, however often the model is advanced.
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
    """The part every model shares: the time-lapse factor, the timeline run up to each ``now``,
    and what the device has done (``R``: a result, what a CLI's ``--games N`` counts). An action
    on the timeline is a ``kind`` and its detail (of type ``A``; ``no_arg`` when it has none).

    A subclass calls :meth:`_start_timeline` in its ``__init__``, starts its schedule in
    :meth:`_on_start` (the first ``now`` it is handed) and acts in :meth:`_on_event`.
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
    """What a serial model adds (the wheel, the shuffler, the dice unit, the big wheel): the
    output a server takes with :meth:`advance_chunks`, the window of a ``disconnect`` fault, and
    the host input it ignored.
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
        """Whether a ``disconnect`` fault has the cable pulled at ``now``.

        Servers poll this after :meth:`advance`: they close the port or connection while it is
        true. The model itself drops everything it would send in that window.
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
