"""An in-process MQTT broker for ``mqtt.url = "embedded"`` (``tablectl demo``, standalone tables).

Why embedded: a demo or a single table on a laptop should work with one command and no system
service. Production tables use an external broker (Mosquitto); the publisher does not care which,
it only gets a host and a port.
"""

from __future__ import annotations

import logging
import socket
from types import TracebackType
from typing import Any, Self

__all__ = ["EmbeddedBroker", "free_port"]

_QUIET = ("amqtt", "transitions")


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free a moment ago (bind to 0, read it, release it).

    There is a small window in which someone else may take it; good enough for a demo broker
    and for tests, which is all this is used for.
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


class EmbeddedBroker:
    """amqtt broker listening on ``host:port`` for the lifetime of an ``async with``.

    Args:
        host: address to bind; loopback by default so a demo never exposes a broker.
        port: 0 picks a free port, readable as :attr:`port` (also before entering).
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self.port = port or free_port(host)
        self._broker: Any = None

    @property
    def url(self) -> str:
        """``mqtt://host:port`` of this broker."""
        return f"mqtt://{self.host}:{self.port}"

    async def start(self) -> None:
        """Start listening. Idempotent."""
        if self._broker is not None:
            return
        # amqtt logs every connection at INFO; a demo's terminal is for outcomes.
        for name in _QUIET:
            logging.getLogger(name).setLevel(logging.WARNING)
        from amqtt.broker import Broker  # noqa: PLC0415  (heavy import, only when embedded)

        broker = Broker(
            {
                "listeners": {"default": {"type": "tcp", "bind": f"{self.host}:{self.port}"}},
                # Only anonymous auth (loopback demo broker): amqtt's defaults also load packet
                # loggers and a deprecated $SYS plugin that warns on every start.
                "plugins": {
                    "amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}
                },
            }
        )
        await broker.start()
        self._broker = broker

    async def stop(self) -> None:
        """Stop the broker (idempotent); connected clients see their connection close."""
        broker, self._broker = self._broker, None
        if broker is not None:
            await broker.shutdown()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()
