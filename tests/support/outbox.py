"""The outbox's test kit: a table's records and topics, a running publisher, a PUBACK ledger.

Shared by the publisher's and the wire's integration tests (``tests/integration``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

from tablectl.controller.config import MqttConfig
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.publisher import Publisher
from tablectl.controller.mqtt.topics import Topics
from tests.support.mqtt import Received

TABLE = "BAC-01"
TOPICS = Topics("tablectl", TABLE)


def rec(kind: str = "card", **data: Any) -> dict[str, Any]:
    """A record to append (the journal stamps the rest)."""
    return {"type": kind, "ts": "2026-11-30T10:00:00.000000Z", **data}


class AckLedger:
    """Trace hook that checks, as it happens, that no seq is marked before all its PUBACKs."""

    def __init__(self, journal: Journal, topics: Topics) -> None:
        self.journal = journal
        self.topics = topics
        self.acked: dict[int, set[str]] = {}
        self.marked = 0
        self.violations: list[str] = []
        self.events: list[str] = []

    def __call__(self, what: str, details: Mapping[str, Any]) -> None:
        self.events.append(what)
        if what == "puback":
            self.acked.setdefault(details["seq"], set()).add(details["topic"])
        elif what == "marked":
            up_to = details["up_to"]
            for record in self.journal.records(since_seq=self.marked):
                if record["seq"] > up_to:
                    break
                routes = {topic for topic, _ in self.topics.routes(record)}
                if not routes <= self.acked.get(record["seq"], set()):
                    self.violations.append(f"seq {record['seq']} marked before all PUBACKs")
            self.marked = max(self.marked, up_to)


def seqs(messages: list[Received], topic: str = TOPICS.events) -> list[int]:
    """The ``seq`` of each record received on ``topic``, in arrival order."""
    return [m.json()["seq"] for m in messages if m.topic == topic]


def has_seqs(upto: int, topic: str = TOPICS.events) -> Callable[[list[Received]], bool]:
    return lambda messages: upto in seqs(messages, topic)


@asynccontextmanager
async def publisher(journal: Journal, port: int, **kwargs: Any) -> AsyncIterator[Publisher]:
    """A :class:`Publisher` of :data:`TOPICS` on a local broker, connected (3 s PUBACK deadline
    unless ``timeout`` is given)."""
    config = MqttConfig(url=f"mqtt://127.0.0.1:{port}", reconnect_max_delay=0.3)
    kwargs.setdefault("timeout", 3)
    pub = Publisher(config, TOPICS, journal, host="127.0.0.1", port=port, **kwargs)
    async with pub:
        async with asyncio.timeout(3):
            await pub.wait_connected()
        yield pub
