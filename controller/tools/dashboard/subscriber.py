"""The dashboard's MQTT side: subscribe to every table under the prefix and feed the floor.

Read-only: it lists the consumer topics rather than ``{prefix}/+/#``, so command traffic stays out.
A lost broker marks the link ``lost`` at once (a banner on every page); nothing on the broker ends
the feed, and should it die anyway (a bug) :func:`keep_following` marks it ``down`` and restarts it.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final

import aiomqtt
import structlog

from tablectl.controller.core.time import format_ts
from tablectl.controller.mqtt.security import ClientSecurity
from tablectl.controller.tools.dashboard.floor import Floor, Link, LinkState
from tablectl.controller.tools.summary import printable
from tablectl.drivers.connection import Backoff

log = structlog.get_logger("tablectl.dashboard")

LEAVES: Final = ("status", "state", "outcome", "devices/+", "events", "alarms", "staff")
"""What the dashboard subscribes to under each table (``{prefix}/+/{leaf}``)."""
LOG_EVERY: Final = 60.0
"""Seconds between two log lines of one reason (malformed or refused messages)."""
RESTART: Final = 1.0
"""Seconds before a feed that died is started again."""


@dataclass(frozen=True)
class Broker:
    """Where the floor's tables publish: ``url`` as given (for the page), and how to log in."""

    host: str
    port: int
    url: str
    security: ClientSecurity = field(default_factory=ClientSecurity)

    def client(self, who: str) -> aiomqtt.Client:
        """A reader's connection (the dashboard's, a station's): a fresh client id each time, so
        two readers never take over each other's session."""
        return aiomqtt.Client(
            self.host,
            self.port,
            identifier=f"tablectl-{who}-{uuid.uuid4().hex[:12]}",
            username=self.security.username,
            password=self.security.password,
            tls_context=self.security.tls_context,
            keepalive=10,
            timeout=5,
        )


class FloorFeed:
    """The floor and the live views waiting on it: :meth:`wait` returns once the floor changed
    since the version a view last rendered."""

    def __init__(self, floor: Floor, *, clock: Callable[[], float] = time.time) -> None:
        self.floor = floor
        self._clock = clock
        self._changed = asyncio.Event()
        self.closed = False
        """Set by :meth:`close`: the server is stopping, live views end their streams."""
        self.messages = 0
        """Messages received from the broker (its metrics)."""
        self.last_message: float | None = None
        """Wall-clock time of the last one (its metrics: a feed gone quiet)."""
        self.login_failures = 0
        """Logins refused (its metrics; counted by the app's login)."""
        self.restarts = 0
        """Times the feed died and was started again (its metrics)."""
        self._logged: dict[tuple[str, str], tuple[float, int]] = {}
        floor.on_reject = self._rejected

    def close(self) -> None:
        """End every live view (the server is stopping: an open stream would hold it up)."""
        self.closed = True
        self._wake()

    def ingest(self, topic: str, payload: bytes, *, retained: bool = False) -> None:
        """One message into the floor; never raises (a failure of the floor's own is counted
        ``internal`` and logged)."""
        self.messages += 1
        self.last_message = self._clock()
        try:
            changed = self.floor.ingest(topic, payload, retained=retained)
        except Exception as exc:  # one message never ends the feed
            self.floor.reject("malformed", "internal", topic, f"{type(exc).__name__}: {exc}")
            return
        if changed is not None:
            self._wake()

    def _rejected(self, counter: str, reason: str, topic: str, detail: str) -> None:
        """Log a refused message: the first of its reason at once, then one line per
        :data:`LOG_EVERY` seconds with how many there were."""
        now = self._clock()
        key = (counter, reason)
        last, since = self._logged.get(key, (None, 0))
        if last is not None and now - last < LOG_EVERY:
            self._logged[key] = (last, since + 1)
            return
        self._logged[key] = (now, 0)
        log.warning(
            f"dashboard_{counter}",
            reason=reason,
            topic=printable(topic, 200),
            detail=printable(detail, 200),
            more_since_last=since,
        )

    def set_link(self, state: LinkState, url: str, detail: str | None = None) -> None:
        """Say how the broker link is; a retry while lost or unreachable keeps saying since
        when."""
        before = self.floor.link
        if state == "connecting" and before.state in ("lost", "unreachable", "down"):
            return
        if before.state == state and before.detail == detail:
            return
        self.floor.set_link(Link(state, url, format_ts(self._clock()), detail))
        self._wake()

    def _wake(self) -> None:
        # Every waiter holds the old event: setting it wakes them all; new waiters get a new one.
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait(self, version: int) -> None:
        """Return when the floor's version differs from ``version`` (at once if it does), or
        the feed is closed."""
        if self.floor.version != version or self.closed:
            return
        await self._changed.wait()


async def keep_following(
    feed: FloorFeed,
    broker: Broker,
    *,
    run: Callable[[FloorFeed, Broker], Awaitable[None]] | None = None,
    restart: float = RESTART,
) -> None:
    """:func:`follow` (or ``run``) until cancelled, started again whenever it dies: the pages
    say "feed down since …" meanwhile, until the broker link is back."""
    run = run or follow
    while True:
        try:
            await run(feed, broker)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the feed died: say so, start it again
            detail = printable(f"{type(exc).__name__}: {exc}", 200)
            log.error("dashboard_feed_died", error=detail, exc_info=True)
            feed.restarts += 1
            feed.set_link("down", broker.url, detail)
        else:  # pragma: no cover - follow returns only when cancelled
            feed.set_link("down", broker.url, "the feed ended")
        await asyncio.sleep(restart)


async def follow(
    feed: FloorFeed,
    broker: Broker,
    *,
    first_delay: float = 0.5,
    max_delay: float = 10.0,
) -> None:
    """Follow the floor until cancelled, reconnecting with jittered backoff."""
    prefix = feed.floor.prefix
    filters = [f"{prefix}/+/{leaf}" for leaf in LEAVES]
    backoff = Backoff(first_delay, max_delay)
    connected = False
    while True:
        feed.set_link("connecting", broker.url)
        try:
            async with broker.client("dashboard") as client:
                await client.subscribe([(f, 1) for f in filters])
                feed.set_link("connected", broker.url)
                connected = True
                backoff.reset()
                async for message in client.messages:
                    payload = message.payload
                    if isinstance(payload, bytes | bytearray):
                        feed.ingest(str(message.topic), bytes(payload), retained=message.retain)
        except aiomqtt.MqttError as exc:
            state: LinkState = "lost" if connected else "unreachable"
            feed.set_link(state, broker.url, str(exc) or type(exc).__name__)
        await asyncio.sleep(backoff.next())
