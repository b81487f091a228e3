"""The outbox drain: the journal's unpublished records to the broker, in ``seq`` order.

The journal is the queue (DESIGN §4.3): records are read from
:meth:`Journal.unpublished_payloads` and published with QoS 1, and marked published only after
every route's PUBACK, so a broker outage, a cut connection or a crash costs at most duplicate
deliveries (consumers de-duplicate by ``(table, seq)``), never a gap. One :class:`OutboxDrain`
per :class:`~tablectl.controller.mqtt.publisher.Publisher`; it runs as the connection's outbox
task.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import aiomqtt
import structlog

from tablectl.controller.core.errors import JournalError
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.outbound import Outbound, published_payload
from tablectl.controller.mqtt.topics import Topics

if TYPE_CHECKING:
    from tablectl.controller.mqtt.publisher import TraceHook

__all__ = ["OutboxDrain"]

log = structlog.get_logger("tablectl.controller.mqtt.publisher")
"""The publisher's logger: the drain is part of the publisher and logs as it."""


@contextlib.asynccontextmanager
async def _puback_deadline(seconds: float) -> AsyncIterator[None]:
    """``asyncio.timeout`` that fails as aiomqtt does on a missing ack, so the connection is
    rebuilt by the reconnect loop."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError:
        raise aiomqtt.MqttError(f"no PUBACK within {seconds} s") from None


class OutboxDrain:
    """Publishes the journal's unpublished records and marks each acknowledged prefix.

    Its progress outlives a connection: every record up to :attr:`_acked` was acknowledged by
    the broker; the journal's marks may lag behind it while the disk refuses writes (retried
    each drain).

    Args:
        journal: the outbox; only ``unpublished_payloads`` and ``mark_published`` are used.
        topics: the table's topic scheme; :meth:`Topics.routes` decides where records go.
        outbound: the table's :class:`Outbound`, whose ``wakeup`` :meth:`run` waits on.
        trace: the publisher's trace hook (``puback``, ``marked``).
        batch_size: records read and pipelined per round; one mark (one fsync) each.
        timeout: seconds to wait for a batch's PUBACKs before the connection is considered
            dead.
    """

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
        self._mark_failing = False  # only to log a refused mark once per episode

    async def run(self, client: aiomqtt.Client, stop: asyncio.Event) -> None:
        """Drain whenever :meth:`Outbound.notify` wakes it; return after a drain once ``stop``
        is set."""
        while True:
            self._out.wakeup.clear()
            await self.drain(client)
            if stop.is_set():
                return
            await self._out.wakeup.wait()

    async def drain(self, client: aiomqtt.Client) -> None:
        """Publish unpublished records until there are none; mark each acked prefix.

        A batch is pipelined (all PUBLISHes sent, PUBACKs awaited together); the wire order is
        the journal order because each publish is handed to paho in task-creation order.
        """
        while True:
            self.mark(self._acked)
            # The stored canonical JSON is the payload: no decode and re-encode per record.
            batch = self._journal.unpublished_payloads(self._batch_size, after=self._acked)
            if not batch:
                return
            acked = [0] * len(batch)
            needed = [0] * len(batch)
            try:
                # One deadline for the whole pipelined batch rather than one per PUBLISH (each of
                # those costs aiomqtt a task and a timer): no PUBACK in time = a dead connection.
                async with _puback_deadline(self._timeout), asyncio.TaskGroup() as tg:
                    for index, (seq, kind, stored) in enumerate(batch):
                        routes = self._topics.routes({"type": kind})
                        payload = published_payload(kind, stored)
                        needed[index] = len(routes)
                        for topic, retain in routes:
                            tg.create_task(
                                self._send(
                                    client,
                                    acked=acked,
                                    index=index,
                                    seq=seq,
                                    route=(topic, retain),
                                    payload=payload,
                                )
                            )
            finally:
                # Also on failure: whatever prefix was fully acknowledged need not be resent.
                done = 0
                while done < len(batch) and needed[done] and acked[done] == needed[done]:
                    done += 1
                if done:
                    self._acked = max(self._acked, batch[done - 1][0])
                    self.mark(self._acked)

    def mark(self, up_to: int) -> None:
        """Mark the acknowledged prefix in the journal; a refused write is retried later.

        A full disk must not cost the broker connection (the outage's alarm and the command
        replies need it): the records stay unmarked, are not sent again on this connection
        (:attr:`_acked`), and at worst go out once more after a restart (a duplicate, never a
        gap).
        """
        if up_to <= self._marked_up_to:  # a refused mark leaves it behind: retried here
            return
        try:
            self._journal.mark_published(up_to)
        except JournalError as exc:
            if not self._mark_failing:
                log.warning("outbox_mark_deferred", table=self._topics.table_id, error=str(exc))
            self._mark_failing = True
            return
        self._mark_failing = False
        self._marked_up_to = up_to
        if self._trace is not None:
            self._trace("marked", {"up_to": up_to})

    async def _send(
        self,
        client: aiomqtt.Client,
        *,
        acked: list[int],
        index: int,
        seq: int,
        route: tuple[str, bool],
        payload: bytes,
    ) -> None:
        topic, retain = route
        # Returns after PUBACK; bounded by the batch's deadline (see drain).
        await client.publish(topic, payload, qos=1, retain=retain, timeout=math.inf)
        acked[index] += 1
        if self._trace is not None:
            self._trace("puback", {"seq": seq, "topic": topic})
