"""Composition root: one table config → journal, engine, drivers, publisher, runner.

Everything that is built from configuration is built and checked here, before anything starts, so
a bad driver key or a bad ``[rules]`` value fails at startup with a clear message, not mid-shift.
The process around the tables (systemd, the metrics endpoint, signals) is
:mod:`tablectl.controller.service.process`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from tablectl.controller.config import TableConfig, device_error, validate_device
from tablectl.controller.core.errors import ConfigError, JournalError
from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import Engine, build_engine
from tablectl.controller.journal import Journal, JournalRecord, KeyedAnchors
from tablectl.controller.mqtt.authority import (
    authority_for,
    describe_security,
    insecure_commands,
)
from tablectl.controller.mqtt.broker import EmbeddedBroker
from tablectl.controller.mqtt.outbound import Outbound
from tablectl.controller.mqtt.publisher import Publisher, TraceHook, broker_address
from tablectl.controller.mqtt.security import ClientSecurity, client_security
from tablectl.controller.mqtt.topics import Topics
from tablectl.controller.secrets import read_journal_key
from tablectl.controller.service.checkpoint import Checkpoints, fingerprint
from tablectl.controller.service.clock import ClockWatch, read_clock
from tablectl.controller.service.metrics.server import parse_listen
from tablectl.controller.service.metrics.tables import TableMetrics
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.staff.roster import roster_for
from tablectl.drivers.base import Driver, MessageDriver
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.errors import DriverConfigError, DriverError
from tablectl.drivers.registry import get_driver_class
from tablectl.drivers.transports.pubsub import BrokerEndpoint

log = structlog.get_logger("tablectl.app")


def build_engine_for(config: TableConfig, *, next_round: int = 1) -> Engine:
    """The game engine named by ``[table] game``, with ``[rules]`` validated."""
    return build_engine(
        config.table.id,
        config.table.game,
        config.engine_rules,
        source=config.source,
        next_round=next_round,
    )


def table_broker(config: TableConfig, broker: tuple[str, int] | None = None) -> BrokerEndpoint:
    """The table's own ``[mqtt]`` broker as a device on it reaches it: where the publisher
    connects (``broker`` when the caller started one, else the url or the embedded listener),
    with the same TLS context and login, read now.

    Raises:
        ConfigError: the url, or a secret or certificate file of ``[mqtt]`` (named).
    """
    mqtt = config.mqtt
    if broker is not None:
        host, port = broker
    elif mqtt.url == "embedded":
        host, port = mqtt.embedded_address
    else:
        host, port, _tls = broker_address(mqtt.url)
    security = client_security(mqtt) if mqtt.url != "embedded" else ClientSecurity()
    return BrokerEndpoint(
        host,
        port,
        username=security.username,
        password=security.password,
        tls_context=security.tls_context,
    )


def build_drivers(
    config: TableConfig,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    broker: tuple[str, int] | None = None,
) -> list[Driver]:
    """Instantiate (not open) every configured device; driver keys are validated strictly.

    ``extra`` gives constructor keywords per device id that a config file cannot express
    (e.g. a simulated pyusb backend in tests and the demo). A device that is a service on a
    broker (a :class:`MessageDriver`, e.g. ``mqtt-dice``) also gets ``table_broker``: the
    table's own broker (:func:`table_broker`; ``broker`` as for :func:`open_table`), which it
    uses unless its entry names a ``url`` of its own.

    Raises:
        ConfigError: ``FILE: devices[i] (id …, driver …): PROBLEM`` (:func:`device_error`), for
            an unknown driver, a bad driver key, a missing or malformed ``port``.
    """
    drivers: list[Driver] = []
    endpoint: BrokerEndpoint | None = None  # built once, for the first message driver
    for index, device in enumerate(config.devices):
        try:
            cls = get_driver_class(device.driver)
        except DriverError as exc:
            raise device_error(config, index, str(exc)) from None
        settings = validate_device(cls.settings_model, config, index)
        kwargs = dict((extra or {}).get(device.id, {}))
        if issubclass(cls, MessageDriver) and "table_broker" not in kwargs:
            endpoint = endpoint or table_broker(config, broker)
            kwargs["table_broker"] = endpoint
        try:
            drivers.append(cls(device.id, device.port, settings, **kwargs))
        except DriverError as exc:  # what the driver checks itself: port, key combinations
            problem = exc.problem if isinstance(exc, DriverConfigError) else str(exc)
            raise device_error(config, index, problem) from None
    return drivers


def check_config(config: TableConfig) -> list[str]:
    """Everything ``run`` checks of a config, without opening anything; a summary for the CLI.

    ``run`` calls it first as well (:func:`~tablectl.controller.service.process.run_table`,
    ``tablectl.controller.service.host.check_host``), before it binds a socket or opens a journal or
    a device: what passes here starts, what fails here fails the start with the same message. Secret
    files are read (their content and mode).

    Raises:
        ConfigError: one line starting with the config file (``FILE: …``), then the key or the
            secret file at fault.
    """
    try:
        return _check_config(config)
    except ConfigError as exc:
        text = str(exc)
        if text.startswith(f"{config.source}: "):
            raise
        # Secret-file and address errors name the key and their own file, not the config's.
        raise ConfigError(f"{config.source}: {text}") from None


def _check_config(config: TableConfig) -> list[str]:
    engine = build_engine_for(config)
    drivers = build_drivers(config)
    if config.mqtt.url != "embedded":
        broker_address(config.mqtt.url)
    if config.metrics.listen is not None:
        parse_listen(config.metrics.listen)
    lines = [
        f"table {config.table.id}: game {engine.game}",
        f"mqtt {config.mqtt.url} prefix {config.mqtt.topic_prefix}",
        f"journal {config.journal.path}",
    ]
    lines += [f"device {d.device_id}: {type(d).__name__} on {d.where}" for d in drivers]
    lines += describe_security(config)
    anchors = journal_anchors(config)
    if anchors is None:
        lines.append(
            "journal: no key_file: the hash chain proves order, not authorship (R13: set"
            " [journal] key_file)"
        )
    else:
        lines.append(
            f"journal: keyed anchors every {anchors.every} records or {anchors.seconds:g} s,"
            f" key {config.journal.key_file}"
        )
    return lines


def journal_anchors(config: TableConfig) -> KeyedAnchors | None:
    """The journal's keyed evidence (``[journal] key_file``,
    :mod:`tablectl.controller.journal.anchors`; R13, R15), its key read now; ``None`` without a key
    file.

    Raises:
        ConfigError: naming the key file (missing, readable by group/others, too short).
    """
    section = config.journal
    if section.key_file is None:
        return None
    return KeyedAnchors(
        read_journal_key(section.key_file),
        every=section.anchor_every,
        seconds=section.anchor_seconds,
    )


ANCHOR_TICK = 1.0
"""Seconds between two looks of :func:`anchor_timer`: a record waits for its time-based anchor
at most ``anchor_seconds`` plus this."""


async def anchor_timer(
    journal: Journal,
    on_journaled: Callable[[], None],
    *,
    tick: float = ANCHOR_TICK,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Journal the time-based anchors of a keyed journal until cancelled (a quiet table's
    records would otherwise wait for ``anchor_every`` more). ``on_journaled`` wakes the outbox.
    ``clock`` paces the looks and measures the wait (monotonic) and stamps the anchor (wall).

    A failed write is logged once per outage and retried at the next tick: the runner's own
    appends are what report and alarm a journal outage. The write runs on the journal's own
    thread, as the runner's commits do, so a slow disk stalls this table only.
    """
    failing = False
    while True:
        await clock.sleep(tick)
        due = functools.partial(journal.anchor_if_due, clock.monotonic(), format_ts(clock.now()))
        try:
            stored = await asyncio.wrap_future(journal.in_writer(due))
        except JournalError as exc:
            if not failing:
                log.warning("journal_anchor_failed", error=str(exc))
            failing = True
            continue
        failing = False
        if stored is not None:
            on_journaled()


@dataclass
class TableApp:
    """The running parts of one table (exposed for tests and the demo)."""

    config: TableConfig
    journal: Journal
    runner: TableRunner
    publisher: Publisher


@contextlib.asynccontextmanager
async def open_table(
    config: TableConfig,
    *,
    broker: tuple[str, int] | None = None,
    listeners: Sequence[Callable[[JournalRecord], None]] = (),
    trace: TraceHook | None = None,
    driver_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> AsyncIterator[TableApp]:
    """Open the journal, recover, connect the publisher; yield the app (not yet running).

    ``listeners`` get every record the runner journals (metrics, readiness); ``trace`` is the
    publisher's observation hook (metrics). Both must be cheap and must not raise.
    ``driver_kwargs`` are extra constructor keywords per device id (see :func:`build_drivers`).
    ``clock`` is the table's one clock: the journal's, the outbound's, the publisher's, the
    runner's.
    """
    drivers = build_drivers(config, driver_kwargs, broker=broker)
    config.journal.path.parent.mkdir(parents=True, exist_ok=True)
    anchors = journal_anchors(config)
    journal_key = anchors.key if anchors is not None else None
    journal = Journal(
        config.journal.path,
        config.table.id,
        rotate_bytes=config.journal.rotate_bytes,
        rotate_days=config.journal.rotate_days,
        retention_days=config.journal.retention_days,
        anchors=anchors,
        clock=clock,
    )
    if not journal.keyed:
        log.warning(
            "journal_not_keyed",
            hint="no [journal] key_file: the hash chain proves order, not authorship",
        )
    try:
        # Recovery replays the journaled events in order through a fresh engine (from the last
        # checkpoint on, when there is a valid one), so round numbers, phase and latched faults
        # come back exactly as they were.
        engine = build_engine_for(config)
        checkpoints = Checkpoints(
            config.journal.path,
            config.table.id,
            fingerprint(table=config.table.id, game=config.table.game, rules=config.engine_rules),
        )
        topics = Topics(config.mqtt.topic_prefix, config.table.id)
        if broker is not None:
            host, port = broker
        else:
            host, port, _tls = broker_address(config.mqtt.url)
        # What the table says besides its journal: written by the runner, sent by the publisher
        # built below with the same outbound (and the runner's command handler).
        outbound = Outbound(topics, key=journal_key, now=clock.wall)
        runner = TableRunner(
            table_id=config.table.id,
            engine=engine,
            journal=journal,
            drivers=drivers,
            outputs=outbound,
            clock=clock,
            betting=config.betting,
            listeners=listeners,
            checkpoints=checkpoints,
            checkpoint_every=config.journal.checkpoint_every,
            authority=authority_for(config),
            insecure_commands=insecure_commands(config),
            roster=roster_for(config),
            clock_watch=ClockWatch(
                max_step=config.clock.max_step_seconds, read=functools.partial(read_clock, clock)
            ),
        )
        replayed = runner.restart.recover()
        # Power-on is journaled before anything else happens (R21); it also decides what to do with
        # a round the last run left in play (tablectl.controller.service.recovery).
        runner.restart.power_on()
        log.info("journal_recovered", events=replayed, last_seq=journal.last_seq)
        publisher = Publisher(
            config.mqtt,
            topics,
            journal,
            host=host,
            port=port,
            on_command=runner.commands.command,
            outbound=outbound,
            trace=trace,
            clock=clock,
        )
        async with publisher:
            reason = "error"
            try:
                yield TableApp(config=config, journal=journal, runner=runner, publisher=publisher)
                reason = "shutdown"
            except asyncio.CancelledError:
                reason = "shutdown"  # SIGTERM / SIGINT / the host stopping the table
                raise
            finally:
                # Inside the publisher's scope: its final flush publishes the record too.
                runner.restart.power_off(reason)
    finally:
        for driver in drivers:
            await driver.aclose()
        journal.close()


# --- readiness --------------------------------------------------------------------------------

READY_TIMEOUT = 30.0
"""Seconds a table waits for its devices' first connect attempt and the broker before it reports
ready anyway. Bounded on purpose: with the broker down the table must still journal (contracts §7:
broker down for an hour), and an unbounded wait would let systemd's start timeout kill it in a
loop. The unit's ``TimeoutStartSec`` is larger than this."""

_ATTEMPT_COUNTERS = ("open_failures", "disconnects")


class _Readiness:
    """Which devices have had their first connect attempt (a runner listener).

    A device counts once it is available, or its driver counted a failed open or a lost link,
    or it produced a journaled event (e.g. ``device_unavailable`` for a silent wheel).
    """

    def __init__(self) -> None:
        self._reported: set[str] = set()

    def on_record(self, record: JournalRecord) -> None:
        device = record.get("device")
        if isinstance(device, str):
            self._reported.add(device)

    def pending(self, drivers: Sequence[Driver]) -> list[str]:
        """The ids of ``drivers`` that had no first connect attempt yet."""
        return [
            d.device_id
            for d in drivers
            if not (
                d.available
                or d.device_id in self._reported
                or any(d.counters.get(name) for name in _ATTEMPT_COUNTERS)
            )
        ]


async def _wait_ready(app: TableApp, readiness: _Readiness, limit: float) -> list[str]:
    """Wait (bounded) for the broker session and every device's first attempt; what is missing."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(limit):
            await app.publisher.wait_connected()
            # Polled: availability and driver counters are plain attributes, not events, and this
            # runs for well under a second at startup.
            while readiness.pending(app.runner.drivers):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
    missing = [f"device {device}" for device in readiness.pending(app.runner.drivers)]
    if not app.publisher.connected:
        missing.append("broker")
    return missing


TableReady = Callable[[TableApp, Sequence[str]], None]
"""``on_ready(app, missing)``: the table is running; ``missing`` is empty or names what the bounded
readiness wait gave up on (``"broker"``, ``"device wheel"``)."""


async def serve_table(
    config: TableConfig,
    *,
    broker: tuple[str, int] | None = None,
    metrics: TableMetrics | None = None,
    on_ready: TableReady | None = None,
    on_closed: Callable[[], None] | None = None,
    ready_timeout: float = READY_TIMEOUT,
    clock: Clock = SYSTEM_CLOCK,
) -> None:
    """Run one table until cancelled or until it fails; no signals, no systemd.

    The unit a multi-table host supervises (``tablectl.controller.service.host``). Every log line
    emitted in this task and the tasks it starts carries ``table`` (structlog contextvars are per
    task, so tables in one process do not mix). ``"embedded"`` brokers are started here unless
    ``broker`` is set.
    """
    with structlog.contextvars.bound_contextvars(table=config.table.id):
        async with contextlib.AsyncExitStack() as stack:
            if broker is None and config.mqtt.url == "embedded":
                embedded = await stack.enter_async_context(
                    EmbeddedBroker(*config.mqtt.embedded_address)
                )
                broker = (embedded.host, embedded.port)
            readiness = _Readiness()
            listeners: list[Callable[[JournalRecord], None]] = [readiness.on_record]
            if metrics is not None:
                listeners.append(metrics.on_record)
            app = await stack.enter_async_context(
                open_table(
                    config,
                    broker=broker,
                    listeners=listeners,
                    trace=metrics.on_publisher if metrics is not None else None,
                    clock=clock,
                )
            )
            if on_closed is not None:
                stack.callback(on_closed)
            if metrics is not None:
                metrics.attach(
                    journal=app.journal,
                    drivers=app.runner.drivers,
                    publisher=app.publisher,
                    runner=app.runner,
                )
                stack.callback(metrics.detach)
            async with asyncio.TaskGroup() as group:
                group.create_task(app.runner.run(), name=f"table:{config.table.id}")
                if app.journal.keyed:
                    group.create_task(
                        anchor_timer(
                            app.journal,
                            app.publisher.notify,
                            tick=min(ANCHOR_TICK, config.journal.anchor_seconds / 4),
                            clock=clock,
                        ),
                        name=f"anchors:{config.table.id}",
                    )
                missing = await _wait_ready(app, readiness, ready_timeout)
                if missing:
                    log.warning("table_running_degraded", waiting_for=missing)
                else:
                    log.info("table_ready")
                if on_ready is not None:
                    on_ready(app, missing)
