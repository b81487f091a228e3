"""MQTT test helpers: a collecting :class:`Subscriber` and a :class:`TcpProxy` that can cut links.

Why a proxy: cutting *one* client's TCP connection (to see its Last Will) or refusing its
reconnects for a moment (so a subscriber is in place first) cannot be done with the broker alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import aiomqtt

__all__ = ["Received", "Subscriber", "TcpProxy"]


@dataclass(frozen=True)
class Received:
    """One message as a subscriber saw it."""

    topic: str
    payload: bytes
    retain: bool
    qos: int

    def json(self) -> Any:
        return json.loads(self.payload)


class Subscriber:
    """Connects, subscribes (QoS 1) and collects every message into :attr:`messages`.

    If the connection drops, collection stops and :attr:`error` is set; waits then fail fast.
    """

    def __init__(
        self,
        host: str,
        port: int,
        topic_filter: str | Sequence[str],
        *,
        client_id: str | None = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        """``options``: more ``aiomqtt.Client`` keywords (``tls_context``, ``username``, ...)."""
        self.host = host
        self.port = port
        self.filters = [topic_filter] if isinstance(topic_filter, str) else list(topic_filter)
        self.messages: list[Received] = []
        self.error: BaseException | None = None
        self._client = aiomqtt.Client(
            host, port, identifier=client_id, timeout=5, **dict(options or {})
        )
        self._changed = asyncio.Condition()
        self._reader: asyncio.Task[None] | None = None

    def on(self, topic: str) -> list[Received]:
        """Messages received on exactly ``topic``."""
        return [m for m in self.messages if m.topic == topic]

    def payloads(self, topic: str) -> list[Any]:
        """Decoded JSON payloads received on exactly ``topic``."""
        return [m.json() for m in self.on(topic)]

    # The timeout is a parameter (ASYNC109) so that a failure can say what did arrive instead.
    async def wait_for(
        self,
        predicate: Callable[[Received], bool],
        timeout: float = 3.0,  # noqa: ASYNC109
    ) -> Received:
        """The first message (already received or arriving) that matches ``predicate``."""
        found: list[Received] = []

        def check() -> bool:
            found.extend(m for m in self.messages if predicate(m))
            return bool(found) or self.error is not None

        await self._wait(check, timeout, "a matching message")
        if not found:
            raise AssertionError(f"subscriber lost its connection: {self.error!r}")
        return found[0]

    async def wait_until(
        self,
        condition: Callable[[list[Received]], bool],
        timeout: float = 3.0,  # noqa: ASYNC109
    ) -> list[Received]:
        """Wait until ``condition(all messages so far)`` holds; return the messages."""

        def check() -> bool:
            return condition(self.messages) or self.error is not None

        await self._wait(check, timeout, "the condition")
        if not condition(self.messages):
            raise AssertionError(f"subscriber lost its connection: {self.error!r}")
        return self.messages

    async def _wait(
        self,
        check: Callable[[], bool],
        timeout: float,  # noqa: ASYNC109
        what: str,
    ) -> None:
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(check)
        except TimeoutError:
            seen = [f"{m.topic}:{m.payload[:60]!r}" for m in self.messages[-5:]]
            raise AssertionError(
                f"timed out after {timeout}s waiting for {what}; "
                f"{len(self.messages)} message(s), last: {seen}"
            ) from None

    async def _read(self) -> None:
        try:
            async for message in self._client.messages:
                payload = message.payload
                data = payload if isinstance(payload, bytes) else str(payload).encode()
                self.messages.append(
                    Received(message.topic.value, data, bool(message.retain), message.qos)
                )
                async with self._changed:
                    self._changed.notify_all()
        except aiomqtt.MqttError as exc:
            self.error = exc
            async with self._changed:
                self._changed.notify_all()

    async def __aenter__(self) -> Self:
        await self._client.__aenter__()
        for topic_filter in self.filters:
            await self._client.subscribe(topic_filter, qos=1)
        self._reader = asyncio.create_task(self._read(), name="test-subscriber")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        with contextlib.suppress(aiomqtt.MqttError):
            await self._client.__aexit__(exc_type, exc, tb)


class TcpProxy:
    """Forwards TCP connections from :attr:`port` to ``upstream``; can cut, refuse and resume.

    * :meth:`cut` aborts every open connection (RST both ways): the broker sees an unexpected
      disconnect and publishes the client's Will.
    * :meth:`pause` also stops listening, so reconnects are refused (like a broker that is down);
      :meth:`resume` listens again on the same port.
    """

    def __init__(self, upstream_host: str, upstream_port: int, host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.host = host
        self.port = 0
        self.connections = 0
        self._server: asyncio.Server | None = None
        self._links: set[tuple[asyncio.StreamWriter, asyncio.StreamWriter]] = set()
        self._handlers: set[asyncio.Task[Any]] = set()

    async def resume(self) -> None:
        """Listen (again) on :attr:`port` (a free port the first time)."""
        if self._server is not None:
            return
        self._server = await asyncio.start_server(
            self._handle, self.host, self.port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    def pause(self) -> None:
        """Stop listening and cut every connection."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        self.cut()

    def cut(self) -> None:
        """Abort every open connection, both sides, without a goodbye."""
        for client_side, broker_side in list(self._links):
            client_side.transport.abort()
            broker_side.transport.abort()
        self._links.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError:
                writer.transport.abort()
                return
            if self._server is None:
                # Paused while this connection was being set up: cut() has already run and
                # would never see it, so it must not live on as a link nobody can cut.
                writer.transport.abort()
                up_writer.transport.abort()
                return
            self.connections += 1
            link = (writer, up_writer)
            self._links.add(link)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            self._links.discard(link)
        except asyncio.CancelledError:
            # Ending normally: asyncio's stream callback logs a cancelled handler as an error.
            writer.transport.abort()
        finally:
            self._handlers.discard(task)

    async def __aenter__(self) -> Self:
        await self.resume()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.pause()
        if self._handlers:
            # Aborted links end their pipes by themselves; cancel only what is still stuck.
            _, stuck = await asyncio.wait(set(self._handlers), timeout=1)
            for task in stuck:
                task.cancel()
            await asyncio.gather(*stuck, return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        writer.transport.abort()
