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

The modules: :mod:`.exposition` (the text format and the instruments), :mod:`.tables`
(:class:`TableMetrics` per table, :class:`MetricsRegistry` of the process) and :mod:`.server`
(the HTTP endpoint).
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
