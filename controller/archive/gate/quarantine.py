"""``archive_quarantine``: the messages the archive refused, kept for forensics.

Bounded like everything a broker message can make the archive do: a row per distinct message,
at most ``keep_bytes`` of it, at most :data:`PER_MINUTE` rows a minute (the rest counted).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from tablectl.controller.archive.gate.admission import Quarantined

if TYPE_CHECKING:
    import psycopg

PER_MINUTE: Final = 1_000
"""Rows written a minute at most (and in one burst)."""

_TOPIC_CHARS: Final = 512
_TABLE_CHARS: Final = 128
_DETAIL_CHARS: Final = 400

_INSERT: Final = (
    "INSERT INTO archive_quarantine (topic, sha256, table_id, seq, ts, reason, detail, size,"
    " payload, received_at, last_received_at) VALUES"
    " (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    " ON CONFLICT (topic, sha256) DO UPDATE SET times = archive_quarantine.times + 1,"
    " last_received_at = EXCLUDED.last_received_at, reason = EXCLUDED.reason,"
    " detail = EXCLUDED.detail"
)


def _text(value: str, chars: int) -> str:
    """``value`` as PostgreSQL ``text`` holds it: cut, without NUL."""
    return value[:chars].replace("\x00", "\ufffd")


class QuarantineWriter:
    """Writes quarantined messages."""

    def __init__(self, keep_bytes: int, per_minute: int = PER_MINUTE) -> None:
        self.keep_bytes = keep_bytes
        self.per_minute = per_minute
        self._tokens = float(per_minute)
        self._at: float | None = None

    def take(self, count: int, now: float) -> int:
        """How many of ``count`` rows may be written at ``now`` (monotonic seconds)."""
        if self._at is not None:
            self._tokens = min(
                float(self.per_minute), self._tokens + (now - self._at) * self.per_minute / 60
            )
        self._at = now
        allowed = min(count, int(self._tokens))
        self._tokens -= allowed
        return allowed

    def rows(self, items: Sequence[Quarantined], now: datetime) -> list[tuple[Any, ...]]:
        """The rows of ``items`` (one per distinct topic and bytes)."""
        rows: dict[tuple[str, str], tuple[Any, ...]] = {}
        for item in items:
            topic = _text(item.topic, _TOPIC_CHARS)
            digest = hashlib.sha256(item.payload).hexdigest()
            rows[(topic, digest)] = (
                topic,
                digest,
                _text(item.table, _TABLE_CHARS),
                item.seq,
                item.ts,
                item.reason,
                _text(item.detail, _DETAIL_CHARS),
                len(item.payload),
                item.payload[: self.keep_bytes],
                now,
                now,
            )
        return list(rows.values())

    async def write(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        items: Sequence[Quarantined],
        now: datetime,
    ) -> None:
        """Write ``items`` (one transaction; the caller took their tokens)."""
        rows = self.rows(items, now)
        if not rows:
            return
        async with conn.transaction(), conn.cursor() as cur:
            await cur.executemany(_INSERT, rows)
