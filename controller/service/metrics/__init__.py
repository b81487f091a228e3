"""Prometheus metrics: a text-format endpoint served with asyncio, no client library.

``prometheus_client`` would add a global registry and a thread server, where a scrape on the
table's own loop stops answering when the loop wedges, which is the truth. Counters outlive a table
restart; gauges are read at scrape time; outside label values fold into ``"other"``.
"""

from tablectl.controller.service.metrics.exposition import CONTENT_TYPE, MAX_SERIES
from tablectl.controller.service.metrics.server import MetricsServer, parse_listen
from tablectl.controller.service.metrics.tables import (
    LATENCY_BUCKETS,
    MetricsRegistry,
    TableMetrics,
)

__all__ = [
    "CONTENT_TYPE",
    "LATENCY_BUCKETS",
    "MAX_SERIES",
    "MetricsRegistry",
    "MetricsServer",
    "TableMetrics",
    "parse_listen",
]
