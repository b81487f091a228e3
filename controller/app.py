"""Composition root: one table config → journal, engine, drivers, publisher, runner.

Everything that is built from configuration is built and checked here, before anything starts, so
a bad driver key or a bad ``[rules]`` value fails at startup with a clear message, not mid-shift.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import structlog

from controller.broker import EmbeddedBroker
from controller.config import TableConfig, validate_section
from controller.engines import Engine, build_engine
from controller.errors import ConfigError
from controller.journal import Journal
from controller.publisher import Publisher, broker_address
from controller.runner import TableRunner
from controller.topics import Topics
from drivers.base import Driver
from drivers.errors import DriverError
from drivers.registry import get_driver_class

__all__ = [
    "TableApp",
    "build_drivers",
    "build_engine_for",
    "check_config",
    "open_table",
    "run_table",
    "run_until_signal",
]

log = structlog.get_logger("tablectl.app")


def build_engine_for(config: TableConfig, *, next_round: int = 1) -> Engine:
    """The game engine named by ``[table] game``, with ``[rules]`` validated."""
    return build_engine(
        config.table.id,
        config.table.game,
        config.rules,
        source=config.source,
        next_round=next_round,
    )


def build_drivers(config: TableConfig) -> list[Driver]:
    """Instantiate (not open) every configured device; driver keys are validated strictly."""
    drivers: list[Driver] = []
    for index, device in enumerate(config.devices):
        try:
            cls = get_driver_class(device.driver)
        except DriverError as exc:
            raise ConfigError(f"{config.source}: devices[{index}].driver: {exc}") from None
        settings = validate_section(
            cls.settings_model,
            device.options,
            source=config.source,
            section=f"devices[{index}]",
        )
        drivers.append(cls(device.id, device.port, settings))
    return drivers


def check_config(config: TableConfig) -> list[str]:
    """Everything ``run`` would check before starting; returns a summary (raises ConfigError)."""
    engine = build_engine_for(config)
    drivers = build_drivers(config)
    lines = [
        f"table {config.table.id}: game {engine.game}",
        f"mqtt {config.mqtt.url} prefix {config.mqtt.topic_prefix}",
        f"journal {config.journal.path}",
    ]
    lines += [f"device {d.device_id}: {type(d).__name__} on {d.port}" for d in drivers]
    return lines


@dataclass
class TableApp:
    """The running parts of one table (exposed for tests and the demo)."""

    config: TableConfig
    journal: Journal
    runner: TableRunner
    publisher: Publisher


@contextlib.asynccontextmanager
async def open_table(
    config: TableConfig, *, broker: tuple[str, int] | None = None
) -> AsyncIterator[TableApp]:
    """Open the journal, recover, connect the publisher; yield the app (not yet running)."""
    drivers = build_drivers(config)
    config.journal.path.parent.mkdir(parents=True, exist_ok=True)
    journal = Journal(config.journal.path, config.table.id)
    try:
        # Recovery replays every journaled event in order through a fresh engine, so round
        # numbers (and phase, and latched faults) come back exactly as they were.
        engine = build_engine_for(config)
        topics = Topics(config.mqtt.topic_prefix, config.table.id)
        if broker is not None:
            host, port = broker
        else:
            host, port, _tls = broker_address(config.mqtt.url)
        publisher_box: list[Publisher] = []
        runner = TableRunner(
            table_id=config.table.id,
            engine=engine,
            journal=journal,
            drivers=drivers,
            on_journaled=lambda: publisher_box[0].notify() if publisher_box else None,
            publish_retained=lambda suffix, payload: (
                publisher_box[0].set_retained(f"{topics.base}/{suffix}", payload)
                if publisher_box
                else None
            ),
            clock=time.time,
            betting=config.betting,
        )
        replayed = runner.recover()
        log.info("journal_recovered", events=replayed, last_seq=journal.last_seq)
        publisher = Publisher(
            config.mqtt, topics, journal, host=host, port=port, on_command=runner.command
        )
        publisher_box.append(publisher)
        async with publisher:
            yield TableApp(config=config, journal=journal, runner=runner, publisher=publisher)
    finally:
        for driver in drivers:
            await driver.aclose()
        journal.close()


async def run_table(
    config: TableConfig,
    *,
    broker: tuple[str, int] | None = None,
    on_ready: Callable[[TableApp], None] | None = None,
) -> None:
    """Run one table until cancelled or SIGTERM/SIGINT. ``"embedded"`` starts a broker too."""
    async with contextlib.AsyncExitStack() as stack:
        if broker is None and config.mqtt.url == "embedded":
            embedded = await stack.enter_async_context(
                EmbeddedBroker(*config.mqtt.embedded_address)
            )
            broker = (embedded.host, embedded.port)
        app = await stack.enter_async_context(open_table(config, broker=broker))
        if on_ready is not None:
            on_ready(app)
        await run_until_signal(app.runner.run())


async def run_until_signal(work: Coroutine[Any, Any, None]) -> None:
    """Await ``work``; SIGTERM/SIGINT cancel it, which is the graceful way out."""
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(work)
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, task.cancel)
    try:
        await task
    except asyncio.CancelledError:
        log.info("table_stopping")
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)
