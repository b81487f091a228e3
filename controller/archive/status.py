"""What an archiver says about itself: counters, alarms and its retained status (pure).

Topics ``{prefix}/_archive/{name}/status`` (retained, Last Will) and ``…/alarms`` with stable codes
(docs/fleet.md). ``malformed`` and ``quarantined`` are limited to :data:`ALARMS_PER_WINDOW` per
:data:`ALARM_WINDOW` (a flood is one hostile publisher), the next one saying how many were
``suppressed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

from tablectl.controller.archive.chains import ChainBreak, Gap
from tablectl.controller.archive.gate.admission import Quarantined
from tablectl.controller.archive.verifier import KeyRing, TablePass
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import SCHEMA

ARCHIVE_LEVEL: Final = "_archive"
"""The topic level under the prefix that holds archivers' own topics."""

_LISTED: Final = 100
"""Gaps and breaks listed in the retained status at most (the counters say how many)."""

ALARM_WINDOW: Final = 10.0
"""Seconds over which ``malformed`` and ``quarantined`` alarms are limited (each code apart)."""
ALARMS_PER_WINDOW: Final = 10
"""``malformed`` or ``quarantined`` alarms sent a window at most."""


@dataclass
class Counters:
    """Totals since start (see the module doc)."""

    received: int = 0
    stored: int = 0
    duplicates: int = 0
    malformed: int = 0
    conflicts: int = 0
    late: int = 0
    batches: int = 0
    db_errors: int = 0
    verified: int = 0
    withheld: int = 0
    anchors: int = 0
    resend_requests: int = 0
    gaps_filled: int = 0
    resend_replies: int = 0
    resend_refused: int = 0
    quarantined: int = 0
    """Messages refused (each in ``quarantined_by_reason`` too)."""
    quarantine_skipped: int = 0
    """Of those, not written to ``archive_quarantine`` (over its rows a minute)."""


@dataclass
class TableView:
    """What the archiver knows of one table (its metrics read it)."""

    verified_seq: int = 0
    last_seq: int = 0
    broken: ChainBreak | None = None
    gaps: list[Gap] = field(default_factory=list)
    """Gaps open (asked for once older than the gap timeout, again until filled)."""
    received_at: datetime | None = None
    """When a batch holding a record of the table was last stored by this archiver."""


class ArchiveStatus:
    """The archiver's view of the floor, fed by verification passes; builds its payloads. Without a
    table's key, what it stores is in order, not proven the table's."""

    def __init__(
        self, prefix: str, name: str, share: str | None = None, keys: KeyRing | None = None
    ) -> None:
        self.prefix = prefix
        self.name = name
        self.share = share
        self.keys = keys or KeyRing()
        self.counters = Counters()
        self.quarantined_by_reason: dict[str, int] = {}
        """Messages quarantined per reason code (admission's ``REASONS``)."""
        self.db_available = True
        self._tables: dict[str, TableView] = {}
        self._throttle: dict[str, _Throttle] = {}

    @property
    def status_topic(self) -> str:
        return f"{self.prefix}/{ARCHIVE_LEVEL}/{self.name}/status"

    @property
    def alarms_topic(self) -> str:
        return f"{self.prefix}/{ARCHIVE_LEVEL}/{self.name}/alarms"

    def _alarm(self, code: str, now: datetime, **fields: Any) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "archive": self.name,
            "code": code,
            "ts": format_moment(now),
            **fields,
        }

    def passed(self, result: TablePass, now: datetime) -> list[dict[str, Any]]:
        """Take in a verification pass; return the alarms it raises."""
        view = self._tables.setdefault(result.table, TableView())
        state = result.walk.state
        view.verified_seq, view.last_seq = state.verified_seq, result.last_seq
        self.counters.verified += result.walk.checked
        self.counters.withheld += result.walk.withheld
        self.counters.anchors += result.walk.anchors
        if state.broken_at is not None:
            view.broken = ChainBreak(result.table, state.broken_at, state.broken_reason or "")
        view.gaps = list(result.gaps.open)
        alarms = []
        if result.broke is not None:
            broke = result.broke
            alarms.append(
                self._alarm(
                    "chain_broken", now, table=broke.table, seq=broke.seq, reason=broke.reason
                )
            )
        for gap in result.resends:
            alarms.append(self._gap_alarm("gap", gap, now, requests=gap.requests + 1))
        for gap in result.gaps.filled:
            if gap.requests:
                self.counters.gaps_filled += 1
                alarms.append(self._gap_alarm("gap_filled", gap, now))
        return alarms

    def _gap_alarm(self, code: str, gap: Gap, now: datetime, **extra: Any) -> dict[str, Any]:
        return self._alarm(
            code,
            now,
            table=gap.table,
            from_seq=gap.from_seq,
            to_seq=gap.to_seq,
            since=format_moment(gap.since),
            **extra,
        )

    def known_break(self, table: str, seq: int, reason: str) -> None:
        """A break found at start (already alarmed by whoever found it): listed in the status."""
        self._tables.setdefault(table, TableView()).broken = ChainBreak(table, seq, reason)

    def received(self, tables: Iterable[str], now: datetime) -> None:
        """Records of ``tables`` were stored (new or again) at ``now``."""
        for table in tables:
            self._tables.setdefault(table, TableView()).received_at = now

    def tables(self) -> Mapping[str, TableView]:
        """Every table this archiver has seen, by id (read-only: for its metrics)."""
        return MappingProxyType(self._tables)

    def conflict(self, table: str, seq: int, now: datetime) -> dict[str, Any]:
        self.counters.conflicts += 1
        return self._alarm("conflict", now, table=table, seq=seq)

    def malformed(
        self, topic: str, reason: str, detail: str, now: datetime, *, monotonic: float
    ) -> dict[str, Any] | None:
        """A message on ``topic`` that is no journal record (a reply that is no reply): counted;
        the alarm, or ``None`` while alarms of the code are limited (see the module doc)."""
        self.counters.malformed += 1
        return self._limited(
            "malformed", now, monotonic, topic=topic[:200], reason=reason, detail=detail[:400]
        )

    def quarantine(
        self, item: Quarantined, now: datetime, *, monotonic: float
    ) -> dict[str, Any] | None:
        """A message quarantined: counted per reason (and as ``malformed`` when it is no
        record); the alarm (``malformed`` or ``quarantined``), or ``None`` while limited."""
        self.counters.quarantined += 1
        self.quarantined_by_reason[item.reason] = self.quarantined_by_reason.get(item.reason, 0) + 1
        if item.malformed:
            return self.malformed(item.topic, item.reason, item.detail, now, monotonic=monotonic)
        return self._limited(
            "quarantined",
            now,
            monotonic,
            table=item.table[:64],
            seq=item.seq,
            reason=item.reason,
            detail=item.detail[:400],
        )

    def _limited(
        self, code: str, now: datetime, monotonic: float, **fields: Any
    ) -> dict[str, Any] | None:
        throttle = self._throttle.setdefault(code, _Throttle())
        return throttle.offer(self._alarm(code, now, **fields), monotonic)

    def held_alarms(self, monotonic: float) -> list[dict[str, Any]]:
        """The alarms held back in windows that are over: for each code, the last one held,
        saying how many more were (``suppressed``) — so a flood that ended is still told whole.
        Called often (the upkeep's loop)."""
        alarms = (throttle.flush(monotonic) for throttle in self._throttle.values())
        return [alarm for alarm in alarms if alarm is not None]

    def database(self, available: bool, detail: str, now: datetime) -> dict[str, Any] | None:
        """The database's availability changed (an alarm) or not (``None``)."""
        if available == self.db_available:
            return None
        self.db_available = available
        if not available:
            self.counters.db_errors += 1
        code = "db_available" if available else "db_unavailable"
        return self._alarm(code, now, detail=detail)

    def open_gaps(self) -> list[Gap]:
        return [g for view in self._tables.values() for g in view.gaps]

    def broken(self) -> list[ChainBreak]:
        return [v.broken for v in self._tables.values() if v.broken is not None]

    def status(self, now: datetime) -> dict[str, Any]:
        """The retained status of a live archiver."""
        gaps = sorted(self.open_gaps(), key=lambda g: g.since)
        broken = sorted(self.broken(), key=lambda b: b.table)
        return {
            "schema": SCHEMA,
            "archive": self.name,
            "state": "online",
            "ts": format_moment(now),
            "share": self.share,
            "db": "available" if self.db_available else "unavailable",
            "tables": len(self._tables),
            "counters": asdict(self.counters),
            "quarantined": dict(sorted(self.quarantined_by_reason.items())),
            "gaps_open": len(gaps),
            "missing": sum(g.size for g in gaps),
            "gaps": [
                {
                    "table": g.table,
                    "from_seq": g.from_seq,
                    "to_seq": g.to_seq,
                    "since": format_moment(g.since),
                    "requests": g.requests,
                }
                for g in gaps[:_LISTED]
            ],
            "broken": [asdict(b) for b in broken[:_LISTED]],
            "authorship": self.authorship(),
        }

    def authorship(self) -> dict[str, Any]:
        """Whether the records stored are proven the tables' own (issue 26): ``keyed`` (a key
        for every table: forged records are quarantined on arrival), ``partial`` (keys for the
        tables named; ``unverified`` lists the others seen), or ``unverified`` (no key)."""
        if self.keys.default is not None:
            return {"state": "keyed"}
        unkeyed = sorted(t for t in self._tables if t not in self.keys.per_table)
        if not self.keys.per_table:
            return {"state": "unverified", "note": "no --key: order proven, not authorship"}
        return {"state": "partial", "unverified": unkeyed[:_LISTED]}

    def offline(self, now: datetime | None = None) -> dict[str, Any]:
        """The Last Will; with ``now``, the goodbye of an orderly stop, with the final counters."""
        if now is None:
            return {"schema": SCHEMA, "archive": self.name, "state": "offline"}
        return {**self.status(now), "state": "offline"}


class _Throttle:
    """At most :data:`ALARMS_PER_WINDOW` a :data:`ALARM_WINDOW`; counts what it holds back and
    keeps the last one held (sent by :meth:`flush` once the window is over, or said by the next
    one sent)."""

    def __init__(self) -> None:
        self._start = -1e18
        self._sent = 0
        self._held = 0
        self._last: dict[str, Any] | None = None

    def offer(self, alarm: dict[str, Any], now: float) -> dict[str, Any] | None:
        """``alarm`` to send now (with ``suppressed`` when some were held before it), or
        ``None``: held back."""
        if now - self._start >= ALARM_WINDOW:
            self._start, self._sent = now, 0
        if self._sent >= ALARMS_PER_WINDOW:
            self._held += 1
            self._last = alarm
            return None
        self._sent += 1
        if self._held:
            alarm = {**alarm, "suppressed": self._held}
        self._held, self._last = 0, None
        return alarm

    def flush(self, now: float) -> dict[str, Any] | None:
        """The last alarm held back, once its window is over (``suppressed``: how many more)."""
        if self._last is None or now - self._start < ALARM_WINDOW:
            return None
        alarm = self._last
        if self._held > 1:
            alarm = {**alarm, "suppressed": self._held - 1}
        self._start, self._sent, self._held, self._last = now, 1, 0, None
        return alarm
