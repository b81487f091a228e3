"""The embedded broker, on both engines: plain pub/sub, retained messages, the publisher on top."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path

import pytest

from tablectl.controller.config import MqttConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt import broker as broker_module
from tablectl.controller.mqtt.broker import EmbeddedBroker, find_mosquitto
from tablectl.controller.mqtt.publisher import Publisher
from tablectl.controller.mqtt.topics import Topics
from tests.support.mqtt import Subscriber
from tests.support.waiting import wait_until

ENGINES = [
    pytest.param(
        "mosquitto", marks=pytest.mark.skipif(not find_mosquitto(), reason="no mosquitto")
    ),
    pytest.param(
        "amqtt",
        marks=pytest.mark.skipif(
            importlib.util.find_spec("amqtt") is None, reason="amqtt extra not installed"
        ),
    ),
]


@pytest.mark.parametrize("engine", ENGINES)
async def test_publish_subscribe_and_retained(engine: str) -> None:
    async with EmbeddedBroker(engine=engine) as broker:  # type: ignore[arg-type]
        assert broker.running == engine
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


@pytest.mark.parametrize("engine", ENGINES)
async def test_stop_is_idempotent_and_frees_the_port(engine: str) -> None:
    broker = EmbeddedBroker(engine=engine)  # type: ignore[arg-type]
    async with broker:
        pass
    await broker.stop()
    assert broker.running is None
    async with EmbeddedBroker(
        port=broker.port, engine=broker.engine
    ) as again:  # the port can be bound again
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
                    # Delivered to the subscriber is not yet acknowledged to the publisher: the
                    # records are marked published when their PUBACKs come back.
                    await wait_until(
                        lambda: journal.unpublished() == [], 3, what="the PUBACKs to be marked"
                    )


async def test_no_broker_installed_is_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    # Neither broker can be uninstalled here: the lookup and the import are made to fail the
    # way they do on a machine without them.
    monkeypatch.setattr(broker_module, "find_mosquitto", lambda: None)
    monkeypatch.setitem(sys.modules, "amqtt.broker", None)
    with pytest.raises(
        ConfigError, match=r"no mosquitto binary and no amqtt .*tablectl\[embedded\]"
    ):
        async with EmbeddedBroker():
            pass
    with pytest.raises(ConfigError, match="no mosquitto binary"):
        async with EmbeddedBroker(engine="mosquitto"):
            pass
