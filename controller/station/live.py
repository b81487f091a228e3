"""The station's view of its one table, from the broker: what the screen shows and prompts on.

Read-only: it subscribes to the table's retained ``state``, ``status``, ``outcome``,
``devices/+`` and ``staff`` and to ``events`` (for the last results and the verdicts that ask
the dealer for something, such as a card the shoe could not read), and never publishes —
commands go out through :mod:`.actions`. Every payload is read bounded
(:func:`~tablectl.controller.core.bounded_json.read_object`) and a message that is not what it
should be is counted and dropped: nothing on the broker stops the station.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import aiomqtt
import structlog

from tablectl.controller.core.bounded_json import read_object
from tablectl.controller.core.errors import MalformedError
from tablectl.controller.tools.dashboard.subscriber import Broker
from tablectl.controller.tools.summary import printable
from tablectl.drivers.connection import Backoff

log = structlog.get_logger("tablectl.station")

LEAVES: Final = ("state", "status", "outcome", "devices/+", "events", "staff")
"""What the station subscribes to under its table."""
RESULTS: Final = 8
"""Last results kept for the screen."""
MAX_DEVICES: Final = 32
ASKING: Final = frozenset({"read_error"})
"""Verdict codes that ask the dealer to key something in until the next card or round."""


@dataclass
class TableView:
    """Everything the station knows of its table; :attr:`version` changes with it.

    Args:
        prefix: the topic prefix of ``table``.
        table: the table id.
        clock: wall time (for the link's "since").
    """

    prefix: str
    table: str
    clock: Callable[[], float] = time.time
    state: dict[str, Any] | None = None
    status: dict[str, Any] | None = None
    staff: dict[str, Any] | None = None
    devices: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RESULTS))
    asking: dict[str, Any] | None = None
    """The last verdict that asks the dealer for something (:data:`ASKING`), until it is
    answered: a card or a new round."""
    last_verdict: dict[str, Any] | None = None
    link: str = "connecting"
    link_since: float | None = None
    version: int = 0
    messages: int = 0
    dropped: Counter[str] = field(default_factory=Counter)
    _seen_results: set[str] = field(default_factory=set)

    @property
    def base(self) -> str:
        return f"{self.prefix}/{self.table}/"

    def ingest(self, topic: str, payload: bytes) -> bool:
        """One message; ``True`` when the view changed. Never raises."""
        self.messages += 1
        leaf = topic[len(self.base) :] if topic.startswith(self.base) else None
        if leaf is None:
            self.dropped["foreign_topic"] += 1
            return False
        if not payload:
            return self._cleared(leaf)
        try:
            body = read_object(payload)
            changed = self._take(leaf, body)
        except MalformedError as exc:
            self.dropped[exc.reason] += 1
            return False
        except Exception as exc:  # one message never ends the station's view
            self.dropped["internal"] += 1
            log.warning("station_message_failed", topic=printable(topic, 200), error=repr(exc))
            return False
        if changed:
            self.version += 1
        return changed

    def set_link(self, link: str) -> None:
        if link != self.link:
            self.link = link
            self.link_since = self.clock()
            self.version += 1

    def _cleared(self, leaf: str) -> bool:
        """An empty retained message deletes a retained topic (a device taken out)."""
        if leaf.startswith("devices/") and self.devices.pop(leaf[8:], None) is not None:
            self.version += 1
            return True
        return False

    def _take(self, leaf: str, body: dict[str, Any]) -> bool:
        if leaf == "state":
            self.state = body
            if self.asking is not None and body.get("round") != self.asking.get("round"):
                self.asking = None
        elif leaf == "status":
            self.status = body
        elif leaf == "staff":
            self.staff = body
        elif leaf.startswith("devices/"):
            name = leaf[8:]
            if name not in self.devices and len(self.devices) >= MAX_DEVICES:
                self.dropped["too_many_devices"] += 1
                return False
            self.devices[name] = body
        elif leaf in ("outcome", "events"):
            return self._record(body)
        else:
            self.dropped["unknown_topic"] += 1
            return False
        return True

    def _record(self, body: Mapping[str, Any]) -> bool:
        kind = body.get("type")
        if kind == "outcome":
            key = f"{body.get('round')}:{body.get('status')}"
            if key in self._seen_results:
                return False
            self._seen_results.add(key)
            if len(self._seen_results) > 4 * RESULTS:
                self._seen_results = {f"{r.get('round')}:{r.get('status')}" for r in self.results}
                self._seen_results.add(key)
            self.results.appendleft(dict(body))
            self.asking = None
            return True
        if kind == "verdict":
            self.last_verdict = dict(body)
            if body.get("code") in ASKING:
                self.asking = dict(body)
            return True
        if kind in ("card", "round_open") and self.asking is not None:
            self.asking = None
            return True
        return False


class Watch:
    """Wakes the live streams when the view changed (the dashboard's pattern: one event per
    generation, so every waiter wakes)."""

    def __init__(self, view: TableView) -> None:
        self.view = view
        self.closed = False
        self._changed = asyncio.Event()

    def ingest(self, topic: str, payload: bytes) -> None:
        if self.view.ingest(topic, payload):
            self.wake()

    def set_link(self, link: str) -> None:
        before = self.view.version
        self.view.set_link(link)
        if self.view.version != before:
            self.wake()

    def touch(self) -> None:
        """The station's own side changed (who is signed on, a call): redraw."""
        self.view.version += 1
        self.wake()

    def wake(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def close(self) -> None:
        self.closed = True
        self.wake()

    async def wait(self, version: int) -> None:
        """Return once the view's version is not ``version`` (at once if so), or closed."""
        if self.view.version != version or self.closed:
            return
        await self._changed.wait()


async def follow(watch: Watch, broker: Broker, *, first: float = 0.5, cap: float = 5.0) -> None:
    """Follow the table until cancelled, reconnecting with jittered backoff; the screen says
    "table link lost" meanwhile, over the last state it knew."""
    view = watch.view
    filters = [f"{view.base}{leaf}" for leaf in LEAVES]
    backoff = Backoff(first, cap)
    while True:
        watch.set_link("connecting" if watch.view.link == "connecting" else "lost")
        try:
            async with broker.client("station") as client:
                await client.subscribe([(f, 1) for f in filters])
                watch.set_link("connected")
                backoff.reset()
                async for message in client.messages:
                    payload = message.payload
                    if isinstance(payload, bytes | bytearray):
                        watch.ingest(str(message.topic), bytes(payload))
        except aiomqtt.MqttError as exc:
            log.warning("station_broker_lost", url=broker.url, error=str(exc))
            watch.set_link("lost")
        await asyncio.sleep(backoff.next())
