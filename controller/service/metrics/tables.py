"""What is measured about each table, and the registry of all tables of the process.

See :mod:`tablectl.controller.service.metrics` for the two kinds of values (counted as they
happen, read at scrape time).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tablectl.controller.journal import JournalRecord
from tablectl.controller.service.metrics.exposition import Counts, Exposition, Histogram
from tablectl.controller.service.runner.hold import ENGINE_DEVICE, ENGINE_ERROR
from tablectl.drivers.clock import SYSTEM_CLOCK, Clock

if TYPE_CHECKING:
    from tablectl.controller.journal import Journal
    from tablectl.controller.mqtt.publisher import Publisher
    from tablectl.controller.service.runner import TableRunner
    from tablectl.drivers.base import Driver

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
(contracts §8), and a broker outage shows up in the top buckets."""

_MAX_PENDING = 100_000
"""Journaled-but-unacknowledged seqs remembered for latency (a long broker outage drops the
oldest: those records are then not timed, rather than memory growing without bound)."""

_KNOWN_VERBS = frozenset({"clear_fault", "event", "status", "void"})
_DRIVER_COUNTERS = ("decode_errors", "disconnects", "open_failures")
"""Driver counters always exported (0 until they move), so dashboards see every series."""
_COUNTER_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


class TableMetrics:
    """Everything measured about one table; survives restarts of the table in a host. A runner
    listener and the publisher's trace; :meth:`attach` the live parts while the table is open."""

    def __init__(self, table_id: str, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self.table_id = table_id
        self._clock = clock
        self.verdicts = Counts(1)
        self.outcomes = Counts(2)
        self.records = Counts(1)
        self.device_events = Counts(1)
        self.commands = Counts(1)
        self.refused = Counts(1)
        """Refused commands by code (a flood shows here at once; the journal gets one record per
        window, tablectl.controller.mqtt.refusals)."""
        self.restarts = 0
        self.disconnects = 0
        self.latency = Histogram(LATENCY_BUCKETS)
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
        self._first_seen: dict[tuple[str, str], float] = {}
        """Wall time a latched fault was first scraped, for one the scan has no time for."""

    # -- sources ---------------------------------------------------------------------------

    def on_record(self, record: JournalRecord) -> None:
        """Runner listener: called with every record right after it is journaled (cheap)."""
        kind = record.type
        self.records.inc((kind,))
        if kind == "verdict":
            self.verdicts.inc((str(record.get("code")),))
        elif kind == "outcome":
            reason = record.get("reason")
            self.outcomes.inc((str(record.get("status")), "" if reason is None else str(reason)))
        device = record.get("device")
        if isinstance(device, str) and device in self._devices:
            self.device_events.inc((device,))
        if len(self._journaled_at) >= _MAX_PENDING:
            del self._journaled_at[next(iter(self._journaled_at))]
        self._journaled_at[record.seq] = self._clock.monotonic()

    def on_publisher(self, what: str, details: Mapping[str, Any]) -> None:
        """Publisher trace hook: PUBACK timing, outbox marks, disconnects, commands."""
        if what == "puback":
            seq = details.get("seq")
            # The first PUBACK of a record times it (a record may go to several topics).
            started = self._journaled_at.pop(seq, None) if isinstance(seq, int) else None
            if started is not None:
                self.latency.observe(max(self._clock.monotonic() - started, 0.0))
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
        self._marked = first_unpublished[0].seq - 1 if first_unpublished else journal.last_seq

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

    def collect(self, out: Exposition) -> None:
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
        self._collect_latched(out, table)
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

    def _collect_devices(self, out: Exposition, table: Mapping[str, str]) -> None:
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

    def _collect_latched(self, out: Exposition, table: Mapping[str, str]) -> None:
        """Each latched fault with the time it was latched: the ``ts`` of its journaled
        ``fault`` record, which the restart scan keeps across restarts (checkpoint or replay);
        the alert on a fault latched too long is ``time() - this``."""
        runner = self._runner
        if runner is None:
            return
        since = runner.state.scan.latched_since
        seen = self._first_seen
        for device, codes in sorted(runner.latches.journaled.items()):
            for code in sorted(codes):
                latched_at = since.get((device, code))
                if latched_at is None:  # not expected: then since it was first scraped
                    latched_at = seen.setdefault((device, code), self._clock.now())
                out.add(
                    "tablectl_fault_latched_since_seconds",
                    "gauge",
                    "Unix time a fault still latched was journaled (per device and code)",
                    {**table, "device": device, "code": code},
                    latched_at,
                )

    def _collect_journal(self, out: Exposition, table: Mapping[str, str]) -> None:
        journal = self._journal
        if journal is None:
            return
        runner = self._runner
        if runner is not None:
            outage = runner.state.outage
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
                runner.state.outages,
            )
            out.add(
                "tablectl_journal_outage_events_dropped",
                "gauge",
                "Events not journaled (so not acted on) in the current outage",
                table,
                0 if outage is None else outage.not_journaled,
            )
            out.add(
                "tablectl_engine_error_held",
                "gauge",
                "1 while an engine_error holds the round for a supervisor (the table is locked)",
                table,
                ENGINE_ERROR in runner.latches.journaled.get(ENGINE_DEVICE, ()),
            )
            out.add(
                "tablectl_engine_errors_total",
                "counter",
                "Exceptions the engine raised since the table started (each an engine_error)",
                table,
                runner.state.engine_errors,
            )
            watch = runner.clock_watch
            if watch is not None:
                out.add(
                    "tablectl_clock_suspect",
                    "gauge",
                    "1 while a clock_step is not confirmed (retention suspended)",
                    table,
                    watch.suspect is not None,
                )
                out.add(
                    "tablectl_clock_steps_total",
                    "counter",
                    "Wall-clock steps detected since the table started",
                    table,
                    watch.steps,
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

    def __init__(self, *, clock: Clock = SYSTEM_CLOCK) -> None:
        self._tables: dict[str, TableMetrics] = {}
        self._clock = clock

    def table(self, table_id: str) -> TableMetrics:
        """The table's metrics, created on first use and kept across its restarts."""
        found = self._tables.get(table_id)
        if found is None:
            found = self._tables[table_id] = TableMetrics(table_id, clock=self._clock)
        return found

    def render(self) -> str:
        out = Exposition()
        for table_id in sorted(self._tables):
            self._tables[table_id].collect(out)
        return out.render()
