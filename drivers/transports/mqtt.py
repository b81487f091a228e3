"""A :class:`~tablectl.drivers.transports.pubsub.MessageLink` over aiomqtt: one broker connection
that subscribes to a device's topics and publishes its commands.

The link does not reconnect (aiomqtt 2 does not either): the driver's one loop does, as for any
port. Unreachable broker, refused login or subscription → ``DriverInitError`` from
:meth:`MqttLink.open`; a drop later, or use after close → ``TransportClosedError``. Sessions are
clean (a broker restarted without persistence would lose the queue anyway), so families ask their
devices for their state after every connect. :func:`endpoint_from_url` reads the password file by
the one secret-file rule (:mod:`tablectl.drivers.transports.secrets`).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Sequence
from pathlib import Path

import aiomqtt

from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports.pubsub import BrokerEndpoint, TopicMessage, split_broker_url
from tablectl.drivers.transports.secrets import read_password_file
from tablectl.drivers.transports.tls import client_tls_context

_CLOSE_TIMEOUT = 1.0
"""Bound on the goodbye (DISCONNECT) of :meth:`MqttLink.close`: a dead broker must not hold up a
reconnect or a shutdown."""


def endpoint_from_url(
    url: str,
    *,
    username: str | None = None,
    password_file: Path | None = None,
    ca_file: Path | None = None,
) -> BrokerEndpoint:
    """A broker endpoint from ``mqtt[s]://host[:port]``, reading the secrets now (at start).

    ``mqtts://`` gets :func:`~tablectl.drivers.transports.tls.client_tls_context`, the table's too.
    """
    host, port, tls = split_broker_url(url)
    context = client_tls_context(ca_file) if tls else None
    password = read_password_file(password_file) if password_file is not None else None
    return BrokerEndpoint(host, port, username=username, password=password, tls_context=context)


class MqttLink:
    """One broker connection with ``subscriptions`` (QoS 1, on every :meth:`open`).

    Two live connections with one ``client_id`` knock each other off, so a fixed id must be unique.
    A dead broker is noticed after about 1.5 × ``keepalive``; ``timeout`` bounds CONNACK, SUBACK and
    PUBACK.
    """

    def __init__(
        self,
        endpoint: BrokerEndpoint,
        subscriptions: Sequence[str],
        *,
        client_id: str | None = None,
        keepalive: int = 15,
        timeout: float = 5.0,
    ) -> None:
        self.endpoint = endpoint
        self.subscriptions = tuple(subscriptions)
        self.client_id = client_id
        self.keepalive = keepalive
        self.timeout = timeout
        self._client: aiomqtt.Client | None = None

    def __repr__(self) -> str:
        state = "open" if self._client is not None else "closed"
        return f"MqttLink({self.endpoint.url!r}, {list(self.subscriptions)!r}, {state})"

    @property
    def is_open(self) -> bool:
        return self._client is not None

    async def open(self) -> None:
        """Connect and subscribe (``DriverInitError`` if the broker is unreachable or refuses)."""
        if self._client is not None:
            return
        end = self.endpoint
        client = aiomqtt.Client(
            end.host,
            end.port,
            identifier=self.client_id,
            username=end.username,
            password=end.password,
            tls_context=end.tls_context,
            keepalive=self.keepalive,
            timeout=self.timeout,
            clean_session=True,
            # A status word must not wait for Nagle's algorithm (up to 40 ms).
            socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        )
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as exc:
            raise DriverInitError(f"broker {end.url}: cannot connect: {exc}") from None
        try:
            for topic in self.subscriptions:
                await client.subscribe(topic, qos=1)
        except aiomqtt.MqttError as exc:
            await _disconnect(client)
            raise DriverInitError(f"broker {end.url}: cannot subscribe: {exc}") from None
        try:
            _reraise_dropped_cancel()
        except asyncio.CancelledError:
            await _disconnect(client)
            raise
        self._client = client

    def _current(self) -> aiomqtt.Client:
        client = self._client
        if client is None:
            raise TransportClosedError(f"broker {self.endpoint.url}: link is closed")
        return client

    async def recv(self) -> TopicMessage:
        """The next message on the subscriptions."""
        client = self._current()
        try:
            message = await anext(client.messages)
        except aiomqtt.MqttError as exc:
            raise TransportClosedError(f"broker {self.endpoint.url}: {exc}") from None
        _reraise_dropped_cancel()
        payload = message.payload
        if isinstance(payload, str):
            data = payload.encode("utf-8")
        elif isinstance(payload, bytes | bytearray):
            data = bytes(payload)
        else:
            data = b"" if payload is None else str(payload).encode("utf-8")
        return TopicMessage(message.topic.value, data, retain=message.retain)

    async def send(self, message: TopicMessage) -> None:
        """Publish ``message`` with QoS 1 and wait for the broker's PUBACK."""
        client = self._current()
        try:
            await client.publish(message.topic, message.payload, qos=1, retain=message.retain)
        except aiomqtt.MqttError as exc:
            raise TransportClosedError(f"broker {self.endpoint.url}: {exc}") from None
        _reraise_dropped_cancel()

    async def close(self) -> None:
        """Disconnect (bounded by a second); idempotent."""
        client, self._client = self._client, None
        if client is not None:
            await _disconnect(client)


def _reraise_dropped_cancel() -> None:
    """Raise the cancellation an aiomqtt wait may have dropped.

    aiomqtt waits for a PUBACK with ``asyncio.wait_for``, which on Python 3.11 returns the result
    and drops a cancellation that arrives just as the acknowledgement does. The task still counts
    the request (``Task.cancelling()``), so a loop around :meth:`MqttLink.send` would otherwise
    run on after being cancelled (seen: a simulator that did not stop).
    """
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _disconnect(client: aiomqtt.Client) -> None:
    with contextlib.suppress(aiomqtt.MqttError, TimeoutError):
        async with asyncio.timeout(_CLOSE_TIMEOUT):
            await client.__aexit__(None, None, None)
