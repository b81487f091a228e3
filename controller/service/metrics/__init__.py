"""Prometheus metrics: a text-format endpoint served with asyncio, no client library.

Why no ``prometheus_client``: a dozen families from state we already keep; the library would add a
global registry (awkward for several tables and tests) and a thread server, where a scrape on the
table's own loop stops answering when the loop wedges, which is the truth. Counters live in
:class:`TableMetrics` (outlives a table restart, stays monotonic); gauges are read at scrape time.
Outside label values fold into ``"other"`` past :data:`MAX_SERIES`. Modules: :mod:`.exposition`,
:mod:`.tables`, :mod:`.server`.
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
