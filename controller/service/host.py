"""Several tables in one process: a studio server (``tablectl run --config A --config B …``).

Each table is its own supervised task, restarted with backoff while the others go on; a table that
*blocks* the loop stalls all and the watchdog restarts the host (so keep hosts small). Configs are
checked before any table starts: they fail the start, not a restart loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from pathlib import Path

import structlog

from tablectl.controller.config import TableConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.mqtt.broker import EmbeddedBroker
from tablectl.controller.service.app import READY_TIMEOUT, check_config, serve_table
from tablectl.controller.service.process import Service, run_until_signal, service_scope
from tablectl.controller.service.systemd import Notifier
from tablectl.drivers.base import Backoff
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

log = structlog.get_logger("tablectl.host")

RESTART_MIN_DELAY = 1.0
"""Seconds before the first restart of a failed table (then doubling, jittered)."""
RESTART_MAX_DELAY = 60.0
"""Cap of the restart backoff; a run that lasted longer than this resets it."""


def check_host(configs: Sequence[TableConfig]) -> None:
    """Every table's config as ``run`` checks it, plus what must differ between tables (table id,
    journal file, MQTT client id)."""
    if not configs:
        raise ConfigError("no table config given")
    seen: dict[str, dict[object, str]] = {"table id": {}, "journal path": {}, "mqtt client_id": {}}
    for config in configs:
        check_config(config)
        keys: dict[str, object] = {
            "table id": config.table.id,
            "journal path": Path(config.journal.path).resolve(),
            "mqtt client_id": config.mqtt.client_id or f"tablectl-{config.table.id}",
        }
        for what, key in keys.items():
            other = seen[what].get(key)
            if other is not None:
                raise ConfigError(f"{config.source}: same {what} as {other} ({key})")
            seen[what][key] = config.source


async def supervise_table(
    config: TableConfig,
    service: Service,
    *,
    broker: tuple[str, int] | None = None,
    ready_timeout: float = READY_TIMEOUT,
    min_delay: float = RESTART_MIN_DELAY,
    max_delay: float = RESTART_MAX_DELAY,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Run one table until cancelled, restarting it with backoff whenever it fails; ``clock``
    is the table's and times the restarts (monotonic)."""
    table_id = config.table.id
    metrics = service.table_metrics(table_id)
    backoff = Backoff(min_delay, max_delay)
    with structlog.contextvars.bound_contextvars(table=table_id):
        while True:
            started = clock.monotonic()
            try:
                await serve_table(
                    config,
                    broker=broker,
                    metrics=metrics,
                    on_ready=service.table_ready,
                    on_closed=lambda: service.table_closed(table_id),
                    ready_timeout=ready_timeout,
                    clock=clock,
                )
                log.error("table_stopped_unexpectedly")
            except Exception as exc:  # isolation: whatever one table raises, the others go on
                log.exception("table_failed", error=f"{type(exc).__name__}: {exc}")
            if metrics is not None:
                metrics.restarts += 1
            if clock.monotonic() - started > max_delay:
                backoff.reset()
            delay = backoff.next()
            log.warning("table_restarting", delay=round(delay, 3))
            await clock.sleep(delay)


async def run_tables(
    configs: Sequence[TableConfig],
    *,
    broker: tuple[str, int] | None = None,
    metrics_listen: str | None = None,
    ready_timeout: float = READY_TIMEOUT,
    min_delay: float = RESTART_MIN_DELAY,
    max_delay: float = RESTART_MAX_DELAY,
    notifier: Notifier | None = None,
) -> None:
    """Run several tables in this process until SIGTERM/SIGINT (or cancellation).

    ``READY=1`` goes out at the latest ``ready_timeout`` + 1 s after start: a table failing to start
    must not hold up the others'. ``broker`` overrides every config's broker (tests).
    """
    check_host(configs)
    async with service_scope(metrics_listen=metrics_listen, notifier=notifier) as service:
        service.expect(c.table.id for c in configs)
        await run_until_signal(
            _host(
                configs,
                service,
                broker=broker,
                ready_timeout=ready_timeout,
                min_delay=min_delay,
                max_delay=max_delay,
            ),
            on_signal=service.stopping,
        )


async def _host(
    configs: Sequence[TableConfig],
    service: Service,
    *,
    broker: tuple[str, int] | None,
    ready_timeout: float,
    min_delay: float,
    max_delay: float,
) -> None:
    async with contextlib.AsyncExitStack() as stack:
        embedded: dict[tuple[str, int], tuple[str, int]] = {}
        if broker is None:
            for config in configs:
                address = config.mqtt.embedded_address
                if config.mqtt.url == "embedded" and address not in embedded:
                    started = await stack.enter_async_context(EmbeddedBroker(*address))
                    embedded[address] = (started.host, started.port)
        async with asyncio.TaskGroup() as group:
            group.create_task(service.ready_deadline(ready_timeout + 1), name="host:ready")
            for config in configs:
                table_broker = broker or embedded.get(config.mqtt.embedded_address)
                if broker is None and config.mqtt.url != "embedded":
                    table_broker = None
                group.create_task(
                    supervise_table(
                        config,
                        service,
                        broker=table_broker,
                        ready_timeout=ready_timeout,
                        min_delay=min_delay,
                        max_delay=max_delay,
                    ),
                    name=f"host:{config.table.id}",
                )
