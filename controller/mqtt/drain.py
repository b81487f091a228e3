"""The outbox drain: the journal's unpublished records to the broker, in ``seq`` order.

The journal is the queue (contracts §4.3; docs/mqtt.md): QoS 1, marked only after every route's
PUBACK, so duplicates at worst, never a gap.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, TypeVar

import aiomqtt
import structlog

from tablectl.controller.core.errors import JournalError
from tablectl.controller.journal import ANCHOR, Journal, StoredRow, canonical_json
from tablectl.controller.mqtt.outbound import Outbound, published_payload
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.mqtt.wire import Link, Wire

if TYPE_CHECKING:
    from tablectl.controller.mqtt.publisher import TraceHook

log = structlog.get_logger("tablectl.controller.mqtt.publisher")
"""The publisher's logger: the drain is part of the publisher and logs as it."""

T = TypeVar("T")

_Token = tuple[int, str] | None
"""What the wire hands back with a PUBACK: ``(index in the batch, topic)``; ``None`` for a
retained record published again after a connect (:meth:`OutboxDrain.republish_retained`)."""


@contextlib.asynccontextmanager
async def _puback_deadline(seconds: float) -> AsyncIterator[None]:
    """``asyncio.timeout`` that fails as aiomqtt does on a missing ack, so the connection is
    rebuilt by the reconnect loop."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        raise aiomqtt.MqttError(f"no PUBACK within {seconds} s") from None


class _Batch:
    """One pipelined batch: how many PUBACKs each record needs and has, and the acknowledged
    prefix (the records that may be marked: all their routes acked, and every earlier one's)."""

    __slots__ = ("acked", "complete", "done", "needed", "seqs")

    def __init__(self, seqs: list[int], needed: list[int]) -> None:
        self.seqs = seqs
        self.needed = needed
        self.acked = [0] * len(seqs)
        self.done = 0
        """Records ``[0, done)`` are fully acknowledged."""
        self.complete: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def ack(self, index: int) -> None:
        self.acked[index] += 1
        done, acked, needed = self.done, self.acked, self.needed
        while done < len(needed) and acked[done] == needed[done]:
            done += 1
        self.done = done
        if done == len(needed) and not self.complete.done():
            self.complete.set_result(None)


class OutboxDrain:
    """Publishes the journal's unpublished records and marks each acknowledged prefix. Its progress
    (:attr:`_acked`) outlives a connection; the journal's marks may lag while the disk refuses
    writes."""

    def __init__(
        self,
        journal: Journal,
        topics: Topics,
        outbound: Outbound,
        *,
        trace: TraceHook | None,
        batch_size: int,
        timeout: float,
    ) -> None:
        self._journal = journal
        self._topics = topics
        self._out = outbound
        self._trace = trace
        self._batch_size = batch_size
        self._timeout = timeout
        self._acked = 0
        self._marked_up_to = 0
        self._mark_asked = 0  # the newest mark handed to the journal's thread
        self._mark_failing = False  # only to log a refused mark once per episode
        self._routes: dict[str, list[tuple[str, bool]]] = {}  # per record type: Topics.routes
        self._batch: _Batch | None = None  # the one in flight, if any
        self._draining = False

    async def connect(self, link: Link) -> Wire[_Token]:
        """The outbox's own connection (:class:`Wire`), its PUBACKs counted by this drain."""
        return await Wire.open(link, self._on_puback, self._on_lost)

    def republish_retained(self, wire: Wire[_Token]) -> None:
        """Publish again the journal's latest record of each retained type, ahead of the drain.

        A broker without persistence has lost the retained ``outcome`` and ``anchor``. Sent before
        the drain's records, so a newer one follows on the same connection and the retained value
        ends newest. An unkeyed journal has no anchors: not looked for (that would read every
        rotated file).
        """
        for kind, topic in self._topics.retained_records().items():
            if kind == ANCHOR and not self._journal.keyed:
                continue
            record = self._journal.last_record_of_type(kind)
            if record is not None:
                payload = canonical_json(record.fields).encode("utf-8")
                wire.publish(topic, payload, retain=True, token=None)
        wire.flush()

    async def run(self, wire: Wire[_Token], stop: asyncio.Event) -> None:
        """Drain whenever the outbound wakes it (a commit handed, a notify); return after a drain
        once ``stop`` is set."""
        while True:
            self._out.wakeup.clear()
            await self.drain(wire)
            # A wakeup during that drain may be a record it did not read (the final flush
            # must publish the power_off appended just before stop).
            if stop.is_set() and not self._out.wakeup.is_set():
                return
            await self._out.wakeup.wait()

    @property
    def idle(self) -> bool:
        """Whether the outbox has nothing of its own to send now (``cmd/resend``'s records wait
        for that: live play first)."""
        return not self._draining and not self._out.wakeup.is_set()

    async def drain(self, wire: Wire[_Token]) -> None:
        """Publish unpublished records until there are none; mark each acked prefix. PUBACKs of a
        batch are awaited under one deadline: none in time means a dead connection."""
        self._draining = True
        try:
            await self._drain(wire)
        finally:
            self._draining = False

    async def _drain(self, wire: Wire[_Token]) -> None:
        while True:
            self.mark(self._acked)
            # What the runner just committed it handed over, as published (the stored canonical
            # JSON, or a face-down card's withheld form); the file only for the rest.
            records = self._out.handed(self._batch_size, after=self._acked)
            if records is None:
                records = await self._read_file()
            if not records:
                return
            seqs = [seq for seq, _, _ in records]
            batch = self._batch = _Batch(seqs, [len(self._routes_of(k)) for _, k, _ in records])
            try:
                async with _puback_deadline(self._timeout):
                    for index, (_, kind, payload) in enumerate(records):
                        for topic, retain in self._routes_of(kind):
                            wire.publish(topic, payload, retain=retain, token=(index, topic))
                    wire.flush()
                    await batch.complete
            finally:
                # Also on failure: whatever prefix was fully acknowledged need not be resent.
                if batch.complete.done() and not batch.complete.cancelled():
                    batch.complete.exception()  # a lost connection's, raised above or moot
                wire.forget()
                self._batch = None
                if batch.done:
                    self._acked = max(self._acked, batch.seqs[batch.done - 1])
                    self.mark(self._acked)
            if len(records) < self._batch_size:
                # No more. A record committed after that read is handed (or notified) with a
                # wakeup of run(): no thread hop for a read that finds nothing.
                return

    async def _read_file(self) -> list[StoredRow]:
        """The oldest unpublished records past :attr:`_acked` from the journal's file, as
        published (a card dealt face down withheld, by its record's ``face_down``)."""
        read = functools.partial(
            self._journal.unpublished_payloads, self._batch_size, after=self._acked
        )
        try:
            rows = await self._in_writer(read)
        except BaseException:
            self._out.read_file(exhausted=False)
            raise
        self._out.read_file(exhausted=len(rows) < self._batch_size)
        key = self._out.key
        return [(seq, kind, published_payload(kind, body, key)) for seq, kind, body in rows]

    def mark(self, up_to: int) -> None:
        """Mark the acknowledged prefix on the journal's thread, without waiting for it.

        A full disk must not cost the broker connection (the outage's alarm and the command replies
        need it): the records stay unmarked, are not sent again on this connection, and at worst go
        out once more after a restart.
        """
        if up_to <= max(self._marked_up_to, self._mark_asked):
            return
        self._mark_asked = up_to
        try:
            done = asyncio.wrap_future(
                self._journal.in_writer(functools.partial(self._journal.mark_published, up_to))
            )
        except JournalError as exc:  # closed
            self._marked(up_to, exc)
            return
        done.add_done_callback(lambda f: self._marked(up_to, f.exception()))

    def _marked(self, up_to: int, error: BaseException | None) -> None:
        if error is not None:
            self._mark_asked = self._marked_up_to  # asked again with the next mark
            if not self._mark_failing:
                log.warning("outbox_mark_deferred", table=self._topics.table_id, error=str(error))
            self._mark_failing = True
            return
        self._mark_failing = False
        self._marked_up_to = max(self._marked_up_to, up_to)
        if self._trace is not None:
            self._trace("marked", {"up_to": up_to})

    def _routes_of(self, kind: str) -> list[tuple[str, bool]]:
        routes = self._routes.get(kind)
        if routes is None:  # once per record type: Topics.routes builds a list each call
            routes = self._routes[kind] = self._topics.routes({"type": kind})
        return routes

    async def _in_writer(self, call: Callable[[], T]) -> T:
        """``call`` on the journal's own thread: a slow disk stalls this table only."""
        return await asyncio.wrap_future(self._journal.in_writer(call))

    def _on_lost(self, error: aiomqtt.MqttError) -> None:
        # The wire's connection ended: the batch in flight fails now, not at its deadline.
        batch = self._batch
        if batch is not None and not batch.complete.done():
            batch.complete.set_exception(error)

    def _on_puback(self, token: _Token) -> None:
        # On the loop's thread, inside the wire's read: no await, must not raise.
        batch = self._batch
        if batch is None or token is None:  # given up (wire.forget), or a republished record
            return
        index, topic = token
        try:
            if self._trace is not None:
                self._trace("puback", {"seq": batch.seqs[index], "topic": topic})
        except Exception as exc:  # a broken hook fails the batch, not paho's read loop
            if not batch.complete.done():
                batch.complete.set_exception(exc)
            return
        batch.ack(index)
