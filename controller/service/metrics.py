"""Prometheus metrics: a text-format endpoint served with asyncio, no client library.

Why no ``prometheus_client``: what we expose is a dozen families computed from state the table
already keeps (driver counters, the journal's ``last_seq``, the publisher's trace), and the text
exposition format is a few lines of code. The library would add a dependency, a global registry
(awkward for several tables in one process, and for tests) and a thread-based HTTP server, where
we want the scrape served on the table's own event loop: a wedged loop then also stops answering
scrapes, which is the truth.

Two kinds of values:

* **counted as they happen**, from the runner's record listener (verdicts by code, outcomes by
  status and reason, journaled events per device) and the publisher's trace hook (publish
  latency, broker disconnects, commands). They live in :class:`TableMetrics`, which outlives a
  table restart inside a multi-table host, so counters stay monotonic;
* **read at scrape time** from the live objects (device availability and driver counters, outbox
  depth, journal size, broker connection), so they cost nothing between scrapes.

Label values that come from outside (a supervisor's free-text void reason, a command verb) are
bounded: past :data:`MAX_SERIES` distinct values a family folds new ones into ``"other"``, so a
client cannot grow the scrape without limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

import structlog

from tablectl.controller.core.errors import ConfigError

if TYPE_CHECKING:
    from tablectl.controller.journal.store import Journal
    from tablectl.controller.mqtt.publisher import Publisher
    from tablectl.controller.service.runner import TableRunner
    from tablectl.drivers.base import Driver

__all__ = [
    "CONTENT_TYPE",
    "LATENCY_BUCKETS",
    "MAX_SERIES",
    "MetricsRegistry",
    "MetricsServer",
    "TableMetrics",
    "parse_listen",
]

log = structlog.get_logger("tablectl.metrics")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format."""

LATENCY_BUCKETS: tuple[float, ...] = (
    0.0005,
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
    60.0,
)
"""Upper bounds (s) of the publish-latency histogram: the target is p50 ≤ 1.5 ms, p99 ≤ 5 ms
(DESIGN §8), and a broker outage shows up in the top buckets."""

MAX_SERIES = 64
"""Distinct label sets per family and table before new ones are counted as ``"other"``."""

_MAX_PENDING = 100_000
"""Journaled-but-unacknowledged seqs remembered for latency (a long broker outage drops the
oldest: those records are then not timed, rather than memory growing without bound)."""

_KNOWN_VERBS = frozenset({"clear_fault", "event", "status", "void"})
_DRIVER_COUNTERS = ("decode_errors", "disconnects", "open_failures")
"""Driver counters always exported (0 until they move), so dashboards see every series."""
_COUNTER_NAME = re.compile(r"^[a-z][a-z0-9_]*$")

_HEAD_LIMIT = 8192
_REQUEST_TIMEOUT = 5.0


# --- exposition ----------------------------------------------------------------------------------


@dataclass
class _Family:
    name: str
    kind: str
    help: str
    samples: list[tuple[str, Mapping[str, str], float]] = field(default_factory=list)


class _Exposition:
    """Collects samples per family (a family's samples must be contiguous in the output)."""

    def __init__(self) -> None:
        self._families: dict[str, _Family] = {}

    def family(self, name: str, kind: str, help_text: str) -> _Family:
        found = self._families.get(name)
        if found is None:
            found = self._families[name] = _Family(name, kind, help_text)
        return found

    def add(
        self, name: str, kind: str, help_text: str, labels: Mapping[str, str], value: float
    ) -> None:
        self.family(name, kind, help_text).samples.append((name, labels, value))

    def render(self) -> str:
        lines: list[str] = []
        for fam in self._families.values():
            lines.append(f"# HELP {fam.name} {_escape_help(fam.help)}")
            lines.append(f"# TYPE {fam.name} {fam.kind}")
            for name, labels, value in fam.samples:
                lines.append(f"{name}{_labels(labels)} {_number(value)}")
        return "\n".join(lines) + "\n"


def _escape_help(text: str) -> str:
    return text.replace("\\", "\\\\").replace("\n", "\\n")


def _escape_value(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(labels: Mapping[str, str]) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{k}="{_escape_value(v)}"' for k, v in labels.items()) + "}"


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    if float(value).is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(float(value))


# --- instruments ---------------------------------------------------------------------------------


class _Counts:
    """A labelled counter with a bound on distinct label sets (see :data:`MAX_SERIES`)."""

    def __init__(self, arity: int) -> None:
        self._arity = arity
        self.values: dict[tuple[str, ...], float] = {}

    def inc(self, key: tuple[str, ...], n: float = 1) -> None:
        if key not in self.values and len(self.values) >= MAX_SERIES:
            key = ("other",) * self._arity
        self.values[key] = self.values.get(key, 0) + n


class _Histogram:
    """Cumulative-bucket histogram (Prometheus semantics: ``le`` buckets, ``_sum``, ``_count``)."""

    def __init__(self, buckets: Sequence[float]) -> None:
        self.bounds = tuple(buckets)
        self.counts = [0] * len(self.bounds)
        self.total = 0
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.total += 1
        self.sum += value
        for index, bound in enumerate(self.bounds):
            if value <= bound:
                self.counts[index] += 1
                break

    def samples(
        self, name: str, labels: Mapping[str, str]
    ) -> Iterable[tuple[str, Mapping[str, str], float]]:
        running = 0
        for bound, count in zip(self.bounds, self.counts, strict=True):
            running += count
            yield f"{name}_bucket", {**labels, "le": _number(bound)}, running
        yield f"{name}_bucket", {**labels, "le": "+Inf"}, self.total
        yield f"{name}_sum", labels, self.sum
        yield f"{name}_count", labels, self.total


# --- one table -----------------------------------------------------------------------------------


class TableMetrics:
    """Everything measured about one table; survives restarts of the table in a host.

    Wire it as a runner listener (:meth:`on_record`) and the publisher's trace
    (:meth:`on_publisher`), then :meth:`attach` the live parts once the table is open and
    :meth:`detach` them when it closes.

    Args:
        table_id: the ``table`` label.
        clock: monotonic seconds (injected for tests).
    """

    def __init__(self, table_id: str, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.table_id = table_id
        self._clock = clock
        self.verdicts = _Counts(1)
        self.outcomes = _Counts(2)
        self.records = _Counts(1)
        self.device_events = _Counts(1)
        self.commands = _Counts(1)
        self.refused = _Counts(1)
        """Refused commands by code (a flood shows here at once; the journal gets one record per
        window, tablectl.controller.mqtt.refusals)."""
        self.restarts = 0
        self.disconnects = 0
        self.latency = _Histogram(LATENCY_BUCKETS)
        self._journaled_at: dict[int, float] = {}
        self._devices: frozenset[str] = frozenset()
        # Live parts while the table is open.
        self._journal: Journal | None = None
        self._runner: TableRunner | None = None
        self._drivers: list[Driver] = []
        self._publisher: Publisher | None = None
        self._marked = 0
        # Driver counters of previous incarnations, so a restart does not reset them.
        self._driver_base: dict[tuple[str, str], int] = {}

    # -- sources ---------------------------------------------------------------------------

    def on_record(self, record: Mapping[str, Any]) -> None:
        """Runner listener: called with every record right after it is journaled (cheap)."""
        kind = str(record.get("type"))
        self.records.inc((kind,))
        if kind == "verdict":
            self.verdicts.inc((str(record.get("code")),))
        elif kind == "outcome":
            reason = record.get("reason")
            self.outcomes.inc((str(record.get("status")), "" if reason is None else str(reason)))
        device = record.get("device")
        if isinstance(device, str) and device in self._devices:
            self.device_events.inc((device,))
        seq = record.get("seq")
        if isinstance(seq, int):
            if len(self._journaled_at) >= _MAX_PENDING:
                del self._journaled_at[next(iter(self._journaled_at))]
            self._journaled_at[seq] = self._clock()

    def on_publisher(self, what: str, details: Mapping[str, Any]) -> None:
        """Publisher trace hook: PUBACK timing, outbox marks, disconnects, commands."""
        if what == "puback":
            seq = details.get("seq")
            # The first PUBACK of a record times it (a record may go to several topics).
            started = self._journaled_at.pop(seq, None) if isinstance(seq, int) else None
            if started is not None:
                self.latency.observe(max(self._clock() - started, 0.0))
        elif what == "marked":
            up_to = details.get("up_to")
            if isinstance(up_to, int):
                self._marked = max(self._marked, up_to)
                pending = self._journaled_at
                while pending:
                    oldest = next(iter(pending))
                    if oldest > up_to:
                        break
                    del pending[oldest]
        elif what == "disconnected":
            self.disconnects += 1
        elif what == "command":
            verb = str(details.get("verb"))
            self.commands.inc((verb if verb in _KNOWN_VERBS else "other",))
        elif what == "command_refused":
            self.refused.inc((str(details.get("code")),))

    def attach(
        self,
        *,
        journal: Journal,
        drivers: Sequence[Driver],
        publisher: Publisher | None,
        runner: TableRunner | None = None,
    ) -> None:
        """Start reading live values from an open table."""
        self._runner = runner
        self._journal = journal
        self._drivers = list(drivers)
        self._devices = frozenset(d.device_id for d in drivers)
        self._publisher = publisher
        first_unpublished = journal.unpublished(1)
        self._marked = (
            int(first_unpublished[0]["seq"]) - 1 if first_unpublished else journal.last_seq
        )

    def detach(self) -> None:
        """The table closed: fold its driver counters into the base and drop the references."""
        for driver in self._drivers:
            for name, value in driver.counters.items():
                key = (driver.device_id, name)
                self._driver_base[key] = self._driver_base.get(key, 0) + value
        self._journal = None
        self._runner = None
        self._drivers = []
        self._publisher = None

    @property
    def attached(self) -> bool:
        return self._journal is not None

    @property
    def outbox_depth(self) -> int:
        """Journaled records not yet acknowledged by the broker (0 when detached)."""
        if self._journal is None:
            return 0
        return max(self._journal.last_seq - self._marked, 0)

    # -- collection ------------------------------------------------------------------------

    def collect(self, out: _Exposition) -> None:
        table = {"table": self.table_id}
        out.add("tablectl_table_up", "gauge", "1 while the table is open", table, self.attached)
        out.add(
            "tablectl_table_restarts_total",
            "counter",
            "Times the host restarted this table after it failed",
            table,
            self.restarts,
        )
        self._collect_devices(out, table)
        for (code,), n in sorted(self.verdicts.values.items()):
            out.add(
                "tablectl_verdicts_total",
                "counter",
                "Engine verdicts (rule violations) by code",
                {**table, "code": code},
                n,
            )
        for (status, reason), n in sorted(self.outcomes.values.items()):
            out.add(
                "tablectl_outcomes_total",
                "counter",
                "Round outcomes by status (settled/void) and void reason",
                {**table, "status": status, "reason": reason},
                n,
            )
        for (kind,), n in sorted(self.records.values.items()):
            out.add(
                "tablectl_journal_records_total",
                "counter",
                "Records journaled by this process, by type",
                {**table, "type": kind},
                n,
            )
        self._collect_journal(out, table)
        connected = self._publisher is not None and self._publisher.connected
        out.add(
            "tablectl_mqtt_connected", "gauge", "1 while the broker session is up", table, connected
        )
        out.add(
            "tablectl_mqtt_disconnects_total",
            "counter",
            "Broker connections lost or refused",
            table,
            self.disconnects,
        )
        for (verb,), n in sorted(self.commands.values.items()):
            out.add(
                "tablectl_commands_total",
                "counter",
                "Commands received on cmd/{verb}",
                {**table, "verb": verb},
                n,
            )
        for (code,), n in sorted(self.refused.values.items()):
            out.add(
                "tablectl_commands_refused_total",
                "counter",
                "Commands refused, by code (commands_disabled, unauthorised, field_too_long …)",
                {**table, "code": code},
                n,
            )
        name = "tablectl_publish_latency_seconds"
        fam = out.family(
            name, "histogram", "Journaled to PUBACK from the broker, per record (first route)"
        )
        fam.samples.extend(self.latency.samples(name, table))

    def _collect_devices(self, out: _Exposition, table: Mapping[str, str]) -> None:
        live: dict[tuple[str, str], int] = dict(self._driver_base)
        for driver in self._drivers:
            labels = {**table, "device": driver.device_id}
            out.add(
                "tablectl_device_available",
                "gauge",
                "1 while the device link is up and it talks",
                labels,
                driver.available,
            )
            for counter in _DRIVER_COUNTERS:
                live.setdefault((driver.device_id, counter), 0)
            for counter, value in driver.counters.items():
                key = (driver.device_id, counter)
                live[key] = live.get(key, 0) + value
        for (device_id,), n in sorted(self.device_events.values.items()):
            out.add(
                "tablectl_device_events_total",
                "counter",
                "Table events journaled from each device",
                {**table, "device": device_id},
                n,
            )
        for (device, counter), value in sorted(live.items()):
            if not _COUNTER_NAME.match(counter):
                continue
            out.add(
                f"tablectl_device_{counter}_total",
                "counter",
                f"Driver counter {counter!r} per device",
                {**table, "device": device},
                value,
            )

    def _collect_journal(self, out: _Exposition, table: Mapping[str, str]) -> None:
        journal = self._journal
        if journal is None:
            return
        runner = self._runner
        if runner is not None:
            outage = runner.outage
            out.add(
                "tablectl_journal_available",
                "gauge",
                "0 while the journal cannot write (fault journal_unavailable: the table is locked)",
                table,
                outage is None,
            )
            out.add(
                "tablectl_journal_outages_total",
                "counter",
                "Journal outages begun since the table started",
                table,
                runner.outages,
            )
            out.add(
                "tablectl_journal_outage_events_dropped",
                "gauge",
                "Events not journaled (so not acted on) in the current outage",
                table,
                0 if outage is None else outage.not_journaled,
            )
        out.add(
            "tablectl_journal_last_seq",
            "gauge",
            "seq of the newest journal record",
            table,
            journal.last_seq,
        )
        out.add(
            "tablectl_outbox_depth",
            "gauge",
            "Journaled records not yet acknowledged by the broker",
            table,
            self.outbox_depth,
        )
        out.add(
            "tablectl_journal_size_bytes",
            "gauge",
            "Journal file size including its write-ahead log",
            table,
            _journal_size(journal.path),
        )


def _journal_size(path: Path) -> int:
    size = 0
    for candidate in (path, path.with_name(path.name + "-wal")):
        with contextlib.suppress(OSError):
            size += os.stat(candidate).st_size
    return size


# --- the process -------------------------------------------------------------------------------


class MetricsRegistry:
    """All tables of this process; :meth:`render` is one scrape."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._tables: dict[str, TableMetrics] = {}
        self._clock = clock

    def table(self, table_id: str) -> TableMetrics:
        """The table's metrics, created on first use and kept across its restarts."""
        found = self._tables.get(table_id)
        if found is None:
            found = self._tables[table_id] = TableMetrics(table_id, clock=self._clock)
        return found

    def render(self) -> str:
        out = _Exposition()
        for table_id in sorted(self._tables):
            self._tables[table_id].collect(out)
        return out.render()


def parse_listen(text: str) -> tuple[str, int]:
    """``"HOST:PORT"`` (``[v6]:PORT`` for IPv6; port 0 picks a free one) → ``(host, port)``.

    Raises:
        ConfigError: not of that shape.
    """
    host, sep, port = text.rpartition(":")
    host = host.strip()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise ConfigError(f"metrics listen address {text!r}: expected HOST:PORT")
    return host, int(port)


class MetricsServer:
    """Serves ``GET /metrics`` for a registry until the context exits.

    HTTP/1.x, one request per connection (``Connection: close``): Prometheus scrapes are
    independent and infrequent, and this keeps the server small. A client that does not send its
    request within 5 s, or sends more than 8 KiB of head, is dropped.
    """

    def __init__(self, registry: MetricsRegistry, host: str, port: int) -> None:
        self.registry = registry
        self.host = host
        self.port = port
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> Self:
        try:
            self._server = await asyncio.start_server(
                self._handle, self.host, self.port, limit=_HEAD_LIMIT
            )
        except OSError as exc:
            raise ConfigError(
                f"metrics: cannot listen on {self.host}:{self.port}: {exc.strerror or exc}"
            ) from None
        self.port = int(self._server.sockets[0].getsockname()[1])
        log.info("metrics_listening", host=self.host, port=self.port)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.close()
            await server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_REQUEST_TIMEOUT):
                head = await reader.readuntil(b"\r\n\r\n")
            writer.write(self._respond(head))
            async with asyncio.timeout(_REQUEST_TIMEOUT):
                await writer.drain()
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _respond(self, head: bytes) -> bytes:
        parts = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ")
        method = parts[0]
        path = parts[1].split("?", 1)[0] if len(parts) > 1 else ""
        if method not in ("GET", "HEAD"):
            return _response(405, "text/plain", b"method not allowed\n", head_only=False)
        if path == "/metrics":
            try:
                body = self.registry.render().encode("utf-8")
            except Exception:  # a collection bug must not take the endpoint (or the table) down
                log.exception("metrics_render_failed")
                return _response(500, "text/plain", b"render failed\n", head_only=False)
            return _response(200, CONTENT_TYPE, body, head_only=method == "HEAD")
        if path == "/":
            body = b"tablectl metrics: /metrics\n"
            return _response(200, "text/plain", body, head_only=method == "HEAD")
        return _response(404, "text/plain", b"not found\n", head_only=False)


_REASONS = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}


def _response(status: int, content_type: str, body: bytes, *, head_only: bool) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS[status]}\r\n"
        f"Content-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode("ascii")
    return head if head_only else head + body
