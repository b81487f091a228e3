"""Message transports: a published message value, a broker's address and the :class:`MessageLink`
interface.

Pure on purpose (no aiomqtt, no asyncio), like :mod:`~tablectl.drivers.transports.frames` for CAN:
:class:`~tablectl.drivers.base.MessageDriver` and the composition root name these types without
loading an MQTT client, and a device family's codec can build :class:`TopicMessage` values. The
aiomqtt implementation is :class:`tablectl.drivers.transports.mqtt.MqttLink`.

Why a device needs this at all: some studio devices are not on a wire of their own but are
services on the studio's broker (a dice shaker that takes text commands on one topic and says its
state on another, a camera service that answers JSON requests). Their "frames" are whole MQTT
messages: a topic and a payload.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import ssl


@dataclass(frozen=True)
class TopicMessage:
    """One MQTT message: ``topic`` and ``payload`` bytes as published (no decoding here)."""

    topic: str
    payload: bytes
    retain: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.payload, bytes):
            # bytearray/memoryview would make the frozen value mutable or unhashable.
            object.__setattr__(self, "payload", bytes(self.payload))


MessageTraceHook = Callable[[Literal["rx", "tx"], TopicMessage], None]
"""Observation seam at a message link's boundary (the message twin of ``TraceHook``)."""


class MessageLink(Protocol):
    """A link that carries whole messages to and from a broker (or a test double).

    ``open`` connects and subscribes, raising :class:`tablectl.drivers.errors.DriverInitError` when
    it cannot; ``recv`` waits for the next message of the subscriptions; ``recv`` and ``send``
    raise :class:`tablectl.drivers.errors.TransportClosedError` once the link is gone; ``close``
    is idempotent.
    """

    async def open(self) -> None: ...

    async def recv(self) -> TopicMessage: ...

    async def send(self, message: TopicMessage) -> None: ...

    async def close(self) -> None: ...


def broker_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a broker address, or ``None`` for ``mqtt[s]://host[:port]``.

    The one set of rules for a broker URL: a device entry's and the table's own ``[mqtt] url``
    (``tablectl.controller.mqtt.publisher.broker_address``, which also knows ``"embedded"``, a
    broker only the service itself can start), so the two read alike.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts"):
        return "scheme must be mqtt:// or mqtts://"
    try:
        parts.port  # noqa: B018 - urlsplit checks the port only when it is read
    except ValueError:
        return "port is not a number in 1..65535"
    if not parts.hostname:
        return "no host"
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        return "only mqtt[s]://host[:port] is supported"
    return None


def split_broker_url(url: str) -> tuple[str, int, bool]:
    """``(host, port, tls)`` of a URL :func:`broker_url_problem` accepts (ports default to
    1883/8883).

    Raises:
        ValueError: the URL is not ``mqtt[s]://host[:port]`` (a programmer's error: settings
            check URLs with :func:`broker_url_problem` first).
    """
    problem = broker_url_problem(url)
    if problem is not None:
        raise ValueError(f"broker url {url!r}: {problem}")
    parts = urlsplit(url)
    tls = parts.scheme == "mqtts"
    assert parts.hostname is not None  # checked above
    return parts.hostname, parts.port or (8883 if tls else 1883), tls


@dataclass(frozen=True)
class BrokerEndpoint:
    """Where a broker is and how to log in: what an MQTT client needs, built once at start.

    A device family with its own ``url`` key builds one from it
    (:func:`tablectl.drivers.transports.mqtt.endpoint_from_url`); otherwise the composition root
    hands over the table's own ``[mqtt]`` broker (``tablectl.controller.service.app``), with the
    TLS context and the password it already read, so a table and its studio devices share one
    broker configuration.
    """

    host: str
    port: int
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    tls_context: ssl.SSLContext | None = field(default=None, repr=False, compare=False)

    @property
    def url(self) -> str:
        """``mqtt://host:port`` (``mqtts://`` with TLS), for messages; never the password."""
        scheme = "mqtts" if self.tls_context is not None else "mqtt"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{scheme}://{host}:{self.port}"
