"""QoS 1 PUBLISHes handed straight to paho, their PUBACKs reported by message id.

Why: ``await aiomqtt.Client.publish(...)`` costs a task, an event and a future per message and
route, plus a scan of every pending call (``pending_calls_threshold``). The outbox needs none of
it: it pipelines a whole batch and waits once, for the batch's acknowledged prefix. So
:class:`Wire` calls paho's own ``publish`` (which queues beyond ``max_inflight_messages`` and
sends in call order, so the wire order is the call order) and counts PUBACKs in paho's
``on_publish`` by mid, without a Python object per message beyond the token it is given.
Measured on a 20,000-record backlog: 61 → 42 µs of CPU per record; what is left is paho's own
packet handling (a ``send`` per PUBLISH, three ``recv`` and a ``Properties`` per PUBACK).

Threading: aiomqtt drives paho's socket from the event loop (``loop.add_reader`` /
``add_writer`` callbacks that call ``loop_read`` / ``loop_write``, and ``loop_misc`` in a task),
and a QoS 1 message is only ever completed by ``loop_read`` on its PUBACK, never inside
``publish`` itself. So ``on_publish`` runs on the loop's thread and the callback given to
:class:`Wire` may touch asyncio state directly (``tests/integration/test_outbox_wire.py``
checks it).

aiomqtt keeps its own PUBLISHes (retained slots, command replies) working on the same
connection: paho allocates every mid from one counter, and a mid that is not the wire's is passed
on to aiomqtt's handler, which completes its pending publish (or ignores an unknown mid).

aiomqtt's private parts are reached here only (checked against aiomqtt 2.5): the paho client
(:func:`paho_client`) and, when paho refuses a PUBLISH, the lost connection's error
(``_disconnected``), taken as the cause as aiomqtt's own ``publish`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar, cast

import aiomqtt
import paho.mqtt.client as paho
from paho.mqtt.properties import Properties
from paho.mqtt.reasoncodes import ReasonCode

__all__ = ["Wire", "paho_client"]

Token = TypeVar("Token")


def paho_client(client: aiomqtt.Client) -> paho.Client:
    """The paho client inside an aiomqtt one: the one place that reaches for it.

    aiomqtt 2 exposes neither what the outbox needs (a PUBLISH without a task and future each,
    :class:`Wire`) nor what the archive needs (paho's manual ack, so a message is acknowledged
    only once the batch holding it is committed). Both are paho features of the client aiomqtt
    already drives; aiomqtt keeps it as ``_client``.
    """
    inner: paho.Client = client._client
    return inner


class Wire(Generic[Token]):
    """One connection's PUBLISHes straight through paho; each PUBACK calls ``on_puback(token)``.

    Installed on a connected client for as long as the outbox runs on it (:meth:`close` puts
    aiomqtt's handler back). Not thread-safe: use it from the event loop only (see the module
    docstring for why the callback runs there too).

    Args:
        client: a connected aiomqtt client.
        on_puback: called on the loop's thread with the token of each acknowledged PUBLISH,
            once per PUBLISH, in the order the broker acknowledges them. An exception from it
            would fail paho's read loop (the connection), so it must not raise.
    """

    def __init__(self, client: aiomqtt.Client, on_puback: Callable[[Token], None]) -> None:
        self._client = client
        self._paho = paho_client(client)
        self._on_puback = on_puback
        self._pending: dict[int, Token] = {}
        # aiomqtt's own handler (callback API version 2): its publishes still complete.
        self._chained = cast("paho.CallbackOnPublish_v2 | None", self._paho.on_publish)
        self._paho.on_publish = self._on_publish

    def publish(self, topic: str, payload: bytes, *, retain: bool, token: Token) -> None:
        """Queue a QoS 1 PUBLISH; ``on_puback(token)`` follows its PUBACK.

        Raises:
            aiomqtt.MqttCodeError: paho refused it (no connection, a full queue): the connection
                is to be rebuilt, as after any failed aiomqtt publish.
        """
        info = self._paho.publish(topic, payload, 1, retain)
        if info.rc != paho.MQTT_ERR_SUCCESS:
            # As aiomqtt's publish does: the lost connection's error is the cause (and counts
            # as retrieved, so asyncio does not log it as "never retrieved").
            lost = self._client._disconnected  # aiomqtt's, set by its on_disconnect
            cause = lost.exception() if lost.done() else None
            raise aiomqtt.MqttCodeError(info.rc, "Could not publish message") from cause
        self._pending[info.mid] = token

    @property
    def in_flight(self) -> int:
        """PUBLISHes handed to paho and not acknowledged yet (queued ones included)."""
        return len(self._pending)

    def forget(self) -> None:
        """Stop waiting for what is in flight: a late PUBACK for it is ignored."""
        self._pending.clear()

    def close(self) -> None:
        """Give ``on_publish`` back to aiomqtt alone (idempotent)."""
        self._pending.clear()
        if self._paho.on_publish == self._on_publish:
            self._paho.on_publish = self._chained

    def _on_publish(
        self,
        client: paho.Client,
        userdata: Any,
        mid: int,
        reason_code: ReasonCode,
        properties: Properties,
    ) -> None:
        if mid in self._pending:
            self._on_puback(self._pending.pop(mid))
        elif self._chained is not None:
            self._chained(client, userdata, mid, reason_code, properties)
