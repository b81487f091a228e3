"""The Prometheus endpoints of the floor's own processes, ``tablectl archive`` and ``dashboard``:
the tables' exposition and endpoint, values read at scrape time from what each process keeps.
Alerts: docs/operations.md, "Runbook: alerts"."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Final

from tablectl.controller.service.metrics.exposition import Exposition
from tablectl.controller.service.metrics.server import MetricsServer, Scraped, parse_listen

if TYPE_CHECKING:
    from tablectl.controller.archive.consumer import Archiver
    from tablectl.controller.tools.dashboard.subscriber import FloorFeed

_ARCHIVE_COUNTERS: Final = {
    "received": "Messages received on the tables' events/anchor topics",
    "stored": "Records stored (new rows)",
    "duplicates": "Records received again and already stored",
    "malformed": "Messages that were no journal record of their table",
    "conflicts": "Second, different records for a table and seq",
    "late": "Records of a month already detached",
    "batches": "Batches committed",
    "db_errors": "Times the database went away",
    "verified": "Records verified in their table's chain",
    "withheld": "Records verified whose published body the table withheld (face-down cards)",
    "anchors": "Keyed anchors checked",
    "resend_requests": "cmd/resend requests sent to tables (gaps and probes of quiet tables)",
    "gaps_filled": "Gaps reported and then filled",
    "resend_replies": "Replies of tables to this archiver's cmd/resend",
    "resend_refused": "Of those, refusals",
    "quarantine_skipped": "Quarantined messages not written to archive_quarantine (its rows a"
    " minute were used up)",
}
"""The archiver's counters (docs/fleet.md), each exported as ``tablectl_archive_NAME_total``."""


def check_listen(text: str | None) -> tuple[str, int] | None:
    """``--metrics-listen``'s ``HOST:PORT`` checked before anything starts (``None``: off).

    Raises:
        ConfigError: not of that shape.
    """
    return None if text is None else parse_listen(text)


@contextlib.asynccontextmanager
async def serving(scraped: Scraped, listen: str | None) -> AsyncIterator[MetricsServer | None]:
    """Serve ``scraped`` on ``listen`` while the block runs (nothing when ``listen`` is None).

    Raises:
        ConfigError: a malformed address, or one that cannot be bound (one line).
    """
    address = check_listen(listen)
    if address is None:
        yield None
        return
    async with MetricsServer(scraped, *address) as server:
        yield server


def _by_reason(
    out: Exposition,
    name: str,
    help_text: str,
    counts: Mapping[str, int],
    labels: Mapping[str, str] | None = None,
) -> None:
    """A counter family with one sample per ``reason`` (sorted)."""
    out.family(name, "counter", help_text)
    for reason, count in sorted(counts.items()):
        out.add(name, "counter", "", {**(labels or {}), "reason": reason}, count)


class ArchiveMetrics:
    """``tablectl archive``'s scrape: its links, counters and each table it has seen.

    Labels: ``archive`` (its ``--name``), and ``table`` per table.
    """

    def __init__(self, archiver: Archiver) -> None:
        self._archiver = archiver

    def render(self) -> str:
        archiver = self._archiver
        status = archiver.status
        out = Exposition()
        labels = {"archive": status.name}
        out.add(
            "tablectl_archive_broker_connected",
            "gauge",
            "1 while the archiver's broker connection is up and subscribed",
            labels,
            archiver.connected,
        )
        out.add(
            "tablectl_archive_db_available",
            "gauge",
            "1 while the archive's PostgreSQL takes writes (0: nothing is acknowledged)",
            labels,
            status.db_available,
        )
        for name, value in asdict(status.counters).items():
            if name == "quarantined":
                continue  # per reason, below
            out.add(
                f"tablectl_archive_{name}_total",
                "counter",
                _ARCHIVE_COUNTERS.get(name, f"Archiver counter {name!r}"),
                labels,
                value,
            )
        _by_reason(
            out,
            "tablectl_archive_quarantined_total",
            "Messages the archive refused to store in records (kept in archive_quarantine), by"
            " reason",
            status.quarantined_by_reason,
            labels,
        )
        views = status.tables()
        for table in sorted(views):
            view = views[table]
            per_table = {**labels, "table": table}
            if view.received_at is not None:
                out.add(
                    "tablectl_archive_last_record_timestamp_seconds",
                    "gauge",
                    "Unix time this archiver last stored a record of the table",
                    per_table,
                    view.received_at.timestamp(),
                )
            out.add(
                "tablectl_archive_gaps_open",
                "gauge",
                "Gaps open in the table's seq (asked for with cmd/resend past the gap timeout)",
                per_table,
                len(view.gaps),
            )
            out.add(
                "tablectl_archive_missing_records",
                "gauge",
                "Records missing in those gaps",
                per_table,
                sum(gap.size for gap in view.gaps),
            )
            out.add(
                "tablectl_archive_chain_broken",
                "gauge",
                "1 when the table's chain does not verify in the archive (alarm chain_broken)",
                per_table,
                view.broken is not None,
            )
        return out.render()


class DashboardMetrics:
    """``tablectl dashboard``'s scrape: its feed from the floor's broker."""

    def __init__(self, feed: FloorFeed) -> None:
        self._feed = feed

    def render(self) -> str:
        feed = self._feed
        floor = feed.floor
        out = Exposition()
        out.add(
            "tablectl_dashboard_broker_connected",
            "gauge",
            "1 while the dashboard's broker connection is up and subscribed",
            {},
            floor.link.state == "connected",
        )
        out.add(
            "tablectl_dashboard_last_message_timestamp_seconds",
            "gauge",
            "Unix time of the last message from the floor's broker (0: none yet)",
            {},
            feed.last_message or 0.0,
        )
        out.add(
            "tablectl_dashboard_messages_total",
            "counter",
            "Messages received from the floor's broker",
            {},
            feed.messages,
        )
        out.add(
            "tablectl_dashboard_tables",
            "gauge",
            "Tables on the floor page",
            {},
            len(floor.tables()),
        )
        _by_reason(
            out,
            "tablectl_dashboard_malformed_total",
            "Messages from the broker that were no payload of a table's, by reason (too_large, "
            "not_json, bad_number, too_deep, not_object, bad_field, bad_topic, internal): ignored",
            floor.malformed,
        )
        _by_reason(
            out,
            "tablectl_dashboard_refused_total",
            "Well-formed messages refused, by reason (tables, devices: a bound; unlinked: a "
            "record that does not link to the table's chain)",
            floor.refused,
        )
        out.add(
            "tablectl_dashboard_login_failures_total",
            "counter",
            "Failed logins (a wrong name or password, or too many attempts at once)",
            {},
            feed.login_failures,
        )
        out.add(
            "tablectl_dashboard_feed_restarts_total",
            "counter",
            "Times the dashboard's feed from the broker died and was started again",
            {},
            feed.restarts,
        )
        return out.render()
