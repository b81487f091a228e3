"""The staff page's figures: ``diag stats --by dealer`` over the floor's archive.

The same reading and tests as the command (docs/station.md "Statistics by staff"), over the last
``days`` of every table. A reading walks the archive, so it runs in a thread, at most once per
:data:`REFRESH` seconds, and every page view in between shows the one kept.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Final

from tablectl.controller.core.time import format_moment
from tablectl.controller.tools.dashboard.charts import SECTOR
from tablectl.controller.tools.dashboard.floor import STAFF_DAYS
from tablectl.controller.tools.diag.stats.command import StatsRequest
from tablectl.controller.tools.diag.stats.plots import svg_document
from tablectl.controller.tools.diag.stats.staff import (
    DealerReport,
    charts,
    dealer_reports,
    read_archive,
)
from tablectl.drivers.errors import TablectlError

REFRESH: Final = 300.0
"""Seconds a reading of the archive is shown before the next page view reads it again."""
RETRY: Final = 30.0
"""Seconds a failed reading (the archive down) is shown before the next view tries again."""


@dataclass(frozen=True)
class StaffFigures:
    """One reading: each dealer's report, or why there is none (``error``)."""

    reports: tuple[DealerReport, ...]
    where: str
    notes: tuple[str, ...]
    """What the reading left out, and whether authorship was checked."""
    read_at: str
    days: int
    svg: str | None = None
    error: str | None = None


@dataclass
class StaffSource:
    """The archive behind the staff page (``dsn`` ``None``: the dashboard has none)."""

    dsn: str | None
    _: KW_ONLY
    key: bytes | None = None
    days: int = STAFF_DAYS
    refresh: float = REFRESH
    clock: Callable[[], float] = time.time
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock, init=False, repr=False)
    _kept: tuple[float, StaffFigures] | None = field(default=None, init=False, repr=False)
    """Until when the reading is shown, and the reading."""

    async def figures(self) -> StaffFigures | None:
        """The newest reading (``None``: no archive); one reading at a time."""
        if self.dsn is None:
            return None
        async with self._lock:
            if self._kept is None or self.clock() >= self._kept[0]:
                read = await asyncio.to_thread(self._read, self.dsn)
                wait = min(RETRY, self.refresh) if read.error else self.refresh
                self._kept = (self.clock() + wait, read)
            return self._kept[1]

    def _read(self, dsn: str) -> StaffFigures:
        now = datetime.fromtimestamp(self.clock(), UTC)
        read_at = format_moment(now, "seconds")
        since = now - timedelta(days=self.days)
        request = StatsRequest(dsn=dsn, key=self.key, since=since, by="dealer")
        try:
            reader, where, notes = read_archive(request)
        except (TablectlError, ImportError) as exc:  # the page says why
            return StaffFigures((), "", (), read_at, self.days, error=str(exc))
        reports = dealer_reports(reader.tallies, alpha=None, sigma=3.0, sector=SECTOR)
        drawn = charts(reports, SECTOR)
        svg = svg_document(drawn, title="rounds by dealer") if reports else None
        lines = tuple(line for line in notes.splitlines() if line)
        return StaffFigures(tuple(reports), where, lines, read_at, self.days, svg)
