"""The bench's MQTT subscriber: QoS 1, every message stamped with ``perf_counter_ns`` on arrival.

Why not aiomqtt: at the throughput knee the subscriber receives ~10,000 messages a second on the
same two vCPUs as the controller and the broker. Through aiomqtt and paho each costs ~60 µs of
Python (a task wake-up, a message object, three ``recv`` calls), which made the measuring
process the controller's largest competitor for the CPU (docs/performance.md). This one reads
with asyncio's protocol callbacks and splits packets with the controller's own MQTT codec
(:mod:`tablectl.controller.mqtt.packets`), acknowledging each read's QoS 1 messages in one write.
What it measures is therefore the controller and the broker, not the measuring client.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Self

from tablectl.controller.mqtt import packets
from tablectl.controller.mqtt.packets import PacketReader, remaining_length

__all__ = ["OnMessage", "Subscriber"]

OnMessage = Callable[[str, bytes, int], None]
"""``on_message(topic, payload, t_ns)``."""

_PUBLISH = 0x30
_SUBACK = 0x90
_SUBSCRIBE_ID = 1


def _subscribe_packet(filters: list[str]) -> bytes:
    body = bytearray(_SUBSCRIBE_ID.to_bytes(2, "big"))
    for topic_filter in filters:
        encoded = topic_filter.encode("utf-8")
        body += len(encoded).to_bytes(2, "big") + encoded + b"\x01"  # QoS 1
    return b"\x82" + remaining_length(len(body)) + bytes(body)


class _Protocol(asyncio.Protocol):
    def __init__(self, subscriber: Subscriber) -> None:
        self.subscriber = subscriber

    def data_received(self, data: bytes) -> None:
        self.subscriber._received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.subscriber._lost(exc)


class Subscriber:
    """Subscribes to ``filters`` with QoS 1 and passes ``(topic, payload, t_ns)`` of every
    message to :attr:`on_message`, ``t_ns`` taken once per read (the messages of one read
    arrived together)."""

    def __init__(self, host: str, port: int, filters: Iterable[str], on_message: OnMessage) -> None:
        self.host = host
        self.port = port
        self.filters = list(filters)
        self.on_message = on_message
        self._reader = PacketReader(max_packet=16 * 1024 * 1024)
        self._transport: asyncio.Transport | None = None
        self._ready: asyncio.Future[None] | None = None
        self._error: BaseException | None = None

    async def __aenter__(self) -> Self:
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        transport, _ = await loop.create_connection(lambda: _Protocol(self), self.host, self.port)
        self._transport = transport
        client_id = f"bench-sub-{id(self):x}"
        transport.write(packets.connect_packet(client_id, keepalive=0))
        transport.write(_subscribe_packet(self.filters))
        async with asyncio.timeout(10):
            await self._ready
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        transport = self._transport
        if transport is not None and not transport.is_closing():
            transport.write(packets.DISCONNECT)
            transport.close()

    def _received(self, data: bytes) -> None:
        t_ns = time.perf_counter_ns()
        acks: list[bytes] = []
        try:
            for packet in self._reader.feed(data):
                kind = packet.first & 0xF0
                if kind == _PUBLISH:
                    body = packet.body
                    end = 2 + int.from_bytes(body[:2], "big")
                    topic = body[2:end].decode("utf-8")
                    if packet.first & 0x06:  # QoS 1 (we subscribed with at most 1)
                        acks.append(b"\x40\x02" + body[end : end + 2])
                        end += 2
                    self.on_message(topic, body[end:], t_ns)
                elif kind == packets.CONNACK:
                    if packet.body[1:2] != b"\x00":
                        raise ConnectionError(f"bench subscriber refused: {packet.body!r}")
                elif kind == _SUBACK:
                    if b"\x80" in packet.body[2:]:
                        raise ConnectionError(f"bench subscription refused: {self.filters}")
                    if self._ready is not None and not self._ready.done():
                        self._ready.set_result(None)
        except (ConnectionError, packets.PacketError) as exc:
            self._fail(exc)
        finally:
            if acks and self._transport is not None:
                self._transport.write(b"".join(acks))

    def _fail(self, exc: BaseException) -> None:
        self._error = exc
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(exc)
        if self._transport is not None:
            self._transport.abort()

    def _lost(self, exc: Exception | None) -> None:
        if self._ready is not None and not self._ready.done():
            self._ready.set_exception(exc or ConnectionError("bench subscriber: connection closed"))
