"""A :class:`~tablectl.drivers.transports.pubsub.MessageLink` over aiomqtt: one broker connection
that subscribes to a device's topics and publishes its commands.

The link does not reconnect by itself (aiomqtt 2 does not either): the one reconnecting loop,
:class:`~tablectl.drivers.base.DeviceDriver` through
:class:`~tablectl.drivers.base.MessageDriver`, builds a fresh link after a drop, with its backoff
and its availability events, exactly as for a serial port or a CAN bus. So this module only maps
aiomqtt's errors onto the driver tree:

* the broker cannot be reached, refuses the login or the subscription → ``DriverInitError`` from
  :meth:`MqttLink.open` (the loop reports ``port_error`` once and retries);
* the connection drops after that, and any use after :meth:`MqttLink.close` →
  ``TransportClosedError`` from :meth:`MqttLink.recv` / :meth:`MqttLink.send`.

Sessions are clean: what a device said while we were away is not queued for us by the broker (a
broker restarted without persistence would lose it anyway), so a device family asks its devices
for their state after every connect instead of trusting a queue.

:func:`endpoint_from_url` builds a :class:`BrokerEndpoint` from a device entry's own ``url``,
``username`` and ``password_file``. The password file is read with the one secret-file rule
(:mod:`tablectl.drivers.transports.secrets`, the table's own too): a file that group or others
may use is refused before a byte is read.
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

    ``mqtts://`` gets a verifying TLS context (the system store, or ``ca_file``; TLS 1.2 at
    least): :func:`~tablectl.drivers.transports.tls.client_tls_context`, the table's own too.

    Raises:
        DriverInitError: a password or CA file that cannot be used (named).
        ValueError: ``url`` is not a broker URL (settings check it first).
    """
    host, port, tls = split_broker_url(url)
    context = client_tls_context(ca_file) if tls else None
    password = read_password_file(password_file) if password_file is not None else None
    return BrokerEndpoint(host, port, username=username, password=password, tls_context=context)


class MqttLink:
    """One broker connection with ``subscriptions``; see the module docstring.

    Args:
        endpoint: the broker and the login.
        subscriptions: topic filters subscribed (QoS 1) on every :meth:`open`.
        client_id: the MQTT client id (``None``: the client library picks a random one). Two
            live connections with one id knock each other off, so a fixed id must be unique.
        keepalive: seconds between PINGREQs; a silently dead broker is noticed after about 1.5×.
        timeout: seconds to wait for CONNACK, SUBACK or PUBACK before the link counts as dead.
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
        """Connect and subscribe.

        Raises:
            DriverInitError: the broker is unreachable, refused us, or refused a subscription.
        """
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
        """The next message on the subscriptions.

        Raises:
            TransportClosedError: the connection dropped, or the link is closed.
        """
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
        """Publish ``message`` with QoS 1 and wait for the broker's PUBACK.

        Raises:
            TransportClosedError: not connected, or no PUBACK within ``timeout``.
        """
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
