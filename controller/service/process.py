"""The process around the tables: systemd readiness and watchdog, the metrics endpoint, signals.
:func:`run_table` is ``tablectl run`` for one table; a multi-table host uses the same parts."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable, Sequence
from typing import Any

import structlog

from tablectl.controller.config import TableConfig
from tablectl.controller.service.app import (
    READY_TIMEOUT,
    TableApp,
    check_config,
    serve_table,
)
from tablectl.controller.service.metrics.server import MetricsServer, parse_listen
from tablectl.controller.service.metrics.tables import MetricsRegistry, TableMetrics
from tablectl.controller.service.stopping import until_signal
from tablectl.controller.service.systemd import Notifier, watchdog_interval, watchdog_pings

log = structlog.get_logger("tablectl.app")


class Service:
    """Process-level plumbing shared by ``run_table`` and a multi-table host: ``READY=1``,
    ``STATUS=``, the watchdog pings from the loop, ``STOPPING=1``, and the metrics registry."""

    def __init__(self, notifier: Notifier, metrics: MetricsRegistry | None) -> None:
        self.notifier = notifier
        self.metrics = metrics
        self.metrics_server: MetricsServer | None = None
        self.apps: dict[str, TableApp] = {}
        self._expected: set[str] = set()
        self._reported: dict[str, Sequence[str]] = {}
        self._ready_sent = False
        self._stopping = False

    def expect(self, table_ids: Iterable[str]) -> None:
        """The tables whose readiness ``READY=1`` waits for."""
        self._expected.update(table_ids)

    def table_metrics(self, table_id: str) -> TableMetrics | None:
        return self.metrics.table(table_id) if self.metrics is not None else None

    def table_ready(self, app: TableApp, missing: Sequence[str]) -> None:
        """A table finished its readiness wait (``missing`` is what it gave up on)."""
        table_id = app.config.table.id
        self.apps[table_id] = app
        self._reported[table_id] = missing
        if self._expected <= set(self._reported):
            self.send_ready()

    def table_closed(self, table_id: str) -> None:
        self.apps.pop(table_id, None)

    def send_ready(self) -> None:
        """``READY=1`` (once). Also called by the deadline when a table never comes up."""
        if self._ready_sent or self._stopping:
            return
        self._ready_sent = True
        self.notifier.ready(self.status_line())
        # Logged from a fresh context: this runs inside the last table's task, whose bound
        # ``table`` would mislabel a line about the whole process.
        asyncio.get_running_loop().call_soon(
            lambda: log.info(
                "service_ready", tables=sorted(self.apps), sd_notify=self.notifier.enabled
            ),
            context=contextvars.Context(),
        )

    async def ready_deadline(self, delay: float) -> None:
        """Send ``READY=1`` after ``delay`` s even if a table is still failing to start."""
        await asyncio.sleep(delay)
        if not self._ready_sent:
            log.warning("service_ready_without", tables=sorted(self._expected - set(self.apps)))
            self.send_ready()

    def stopping(self) -> None:
        """``STOPPING=1`` (once): a signal arrived, the outbox is being flushed."""
        if not self._stopping:
            self._stopping = True
            self.notifier.stopping("stopping: flushing the outbox")

    def status_line(self) -> str:
        """One line for ``systemctl status``: per table devices up, broker, seq, faults."""
        if self._stopping:
            return "stopping"
        parts: list[str] = []
        for table_id in sorted(self._expected | set(self.apps)):
            app = self.apps.get(table_id)
            if app is None:
                parts.append(f"{table_id} starting")
                continue
            drivers = app.runner.drivers
            up = sum(1 for d in drivers if d.available)
            faults = sum(len(codes) for codes in app.runner.latches.journaled.values())
            broker = "up" if app.publisher.connected else "DOWN"
            seq = app.journal.last_seq
            text = f"{table_id} devices {up}/{len(drivers)} broker {broker} seq {seq}"
            parts.append(text + (f" faults {faults}" if faults else ""))
        return "; ".join(parts) or "starting"


@contextlib.asynccontextmanager
async def service_scope(
    *, metrics_listen: str | None = None, notifier: Notifier | None = None
) -> AsyncIterator[Service]:
    """Start the metrics endpoint (if ``metrics_listen``) and the watchdog; yield the service."""
    notifier = notifier if notifier is not None else Notifier.from_environ()
    service = Service(notifier, MetricsRegistry() if metrics_listen else None)
    async with contextlib.AsyncExitStack() as stack:
        if metrics_listen is not None and service.metrics is not None:
            host, port = parse_listen(metrics_listen)
            service.metrics_server = await stack.enter_async_context(
                MetricsServer(service.metrics, host, port)
            )
        pings = asyncio.create_task(
            watchdog_pings(notifier, watchdog_interval(), status=service.status_line),
            name="systemd:watchdog",
        )
        try:
            yield service
        finally:
            service.stopping()
            pings.cancel()
            await asyncio.wait({pings})
            notifier.close()


async def run_table(
    config: TableConfig,
    *,
    broker: tuple[str, int] | None = None,
    on_ready: Callable[[TableApp], None] | None = None,
    metrics_listen: str | None = None,
    ready_timeout: float = READY_TIMEOUT,
    notifier: Notifier | None = None,
) -> None:
    """Run one table until cancelled or SIGTERM/SIGINT (``tablectl run``).

    Config errors are raised before any socket, journal or device is opened: a bad config must not
    leave a metrics port answering, or half a journal.
    """
    check_config(config)
    if metrics_listen is not None:
        parse_listen(metrics_listen)
    async with service_scope(metrics_listen=metrics_listen, notifier=notifier) as service:
        service.expect([config.table.id])

        def ready(app: TableApp, missing: Sequence[str]) -> None:
            service.table_ready(app, missing)
            if on_ready is not None:
                on_ready(app)

        await run_until_signal(
            serve_table(
                config,
                broker=broker,
                metrics=service.table_metrics(config.table.id),
                on_ready=ready,
                on_closed=lambda: service.table_closed(config.table.id),
                ready_timeout=ready_timeout,
            ),
            on_signal=service.stopping,
        )


async def run_until_signal(
    work: Coroutine[Any, Any, None], *, on_signal: Callable[[], None] | None = None
) -> None:
    """Await ``work``; SIGTERM/SIGINT cancel it, the graceful way out (``on_signal`` first)."""

    def stopping() -> None:
        log.info("table_stopping")
        if on_signal is not None:
            on_signal()

    await until_signal(work, on_signal=stopping)
