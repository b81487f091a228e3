"""Message transports: a published message value, a broker's address and the :class:`MessageLink`
interface.

Pure (no aiomqtt, no asyncio), like :mod:`~tablectl.drivers.transports.frames`: some studio
devices are services on the studio's broker, whose "frames" are whole messages (topic and
payload), and the composition root names these types without loading an MQTT client.
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

    ``open`` connects and subscribes (``DriverInitError``); ``recv``/``send`` raise
    ``TransportClosedError`` once the link is gone; ``close`` is idempotent.
    """

    async def open(self) -> None: ...

    async def recv(self) -> TopicMessage: ...

    async def send(self, message: TopicMessage) -> None: ...

    async def close(self) -> None: ...


def broker_url_problem(url: str) -> str | None:
    """What is wrong with ``url`` as a broker address, or ``None`` for ``mqtt[s]://host[:port]``.

    The one rule set, also for the table's own ``[mqtt] url``, so the two read alike.
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
    """``(host, port, tls)`` of a URL :func:`broker_url_problem` accepts (ports 1883/8883)."""
    problem = broker_url_problem(url)
    if problem is not None:
        raise ValueError(f"broker url {url!r}: {problem}")
    parts = urlsplit(url)
    tls = parts.scheme == "mqtts"
    assert parts.hostname is not None  # checked above
    return parts.hostname, parts.port or (8883 if tls else 1883), tls


@dataclass(frozen=True)
class BrokerEndpoint:
    """Where a broker is and how to log in, built once at start.

    From a device's own ``url`` (:func:`tablectl.drivers.transports.mqtt.endpoint_from_url`), or the
    table's ``[mqtt]`` broker handed over by the composition root, so they share one configuration.
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
