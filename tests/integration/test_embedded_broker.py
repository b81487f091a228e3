"""The embedded (amqtt) broker: plain pub/sub, retained messages, and the publisher on top."""

from __future__ import annotations

import asyncio
from pathlib import Path

from controller.broker import EmbeddedBroker
from controller.config import MqttConfig
from controller.journal import Journal
from controller.publisher import Publisher
from controller.topics import Topics
from tests.support.mqtt import Subscriber


async def test_publish_subscribe_and_retained() -> None:
    async with EmbeddedBroker() as broker:
        assert broker.port > 0
        assert broker.url == f"mqtt://127.0.0.1:{broker.port}"
        async with Subscriber(broker.host, broker.port, "t/#") as sub:
            async with Subscriber(broker.host, broker.port, "unused") as pub:
                await pub._client.publish("t/a", b"hello", qos=1)
                await pub._client.publish("t/r", b"kept", qos=1, retain=True)
            first = await sub.wait_for(lambda m: m.topic == "t/a")
            assert first.payload == b"hello"
            await sub.wait_for(lambda m: m.topic == "t/r")
        async with Subscriber(broker.host, broker.port, "t/#") as late:
            kept = await late.wait_for(lambda m: m.topic == "t/r")
            assert kept.retain
            assert kept.payload == b"kept"


async def test_stop_is_idempotent_and_frees_the_port() -> None:
    broker = EmbeddedBroker()
    async with broker:
        pass
    await broker.stop()
    async with EmbeddedBroker(port=broker.port) as again:  # the port can be bound again
        assert again.port == broker.port


async def test_publisher_over_embedded_broker(tmp_path: Path) -> None:
    topics = Topics("tablectl", "DEMO-1")
    with Journal(tmp_path / "j.sqlite", "DEMO-1") as journal:
        async with EmbeddedBroker() as broker:
            config = MqttConfig(url="embedded")
            async with Subscriber(broker.host, broker.port, f"{topics.base}/#") as sub:
                pub = Publisher(config, topics, journal, host=broker.host, port=broker.port)
                async with pub:
                    async with asyncio.timeout(3):
                        await pub.wait_connected()
                    journal.append(
                        [{"type": "round_open", "ts": "t"}, {"type": "outcome", "ts": "t"}]
                    )
                    pub.notify()
                    await sub.wait_until(
                        lambda ms: (
                            [m.json()["seq"] for m in ms if m.topic == topics.events] == [1, 2]
                        )
                    )
                    await sub.wait_for(lambda m: m.topic == topics.outcome)
            assert journal.unpublished() == []
