"""Refused commands, counted per window and journaled as one ``commands_refused`` record.

Anyone on ``cmd/+`` can send refusals as fast as the broker forwards them (300 once made 302
fsync'd records in 4 s); the audit trail (R15, R19) needs how many, of which kind, who came first.
Spent nonces are listed (at most :data:`MAX_NONCES`) so a restart remembers them. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

REFUSAL_WINDOW: Final = 10.0
"""Seconds of refusals folded into one ``commands_refused`` record."""

MAX_NONCES: Final = 256
"""Nonces of signed-but-refused commands kept per window (their signers hold a role key, so
there are few); a restart reads them back so none can be replayed (``nonces`` in the record)."""

MAX_CODES: Final = 32
"""Distinct refusal codes kept per window (codes are ours, so this is never reached in
practice; past it a code is counted as ``other``)."""


@dataclass
class _Window:
    started: float
    started_ts: str
    count: int = 0
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    nonces: list[str] = field(default_factory=list)


class RefusalLog:
    """The current window of refused commands."""

    def __init__(self, window: float = REFUSAL_WINDOW) -> None:
        self.window = window
        self._current: _Window | None = None

    @property
    def pending(self) -> int:
        """Refusals not journaled yet."""
        return 0 if self._current is None else self._current.count

    def add(self, now: float, ts: str, code: str, details: Mapping[str, Any]) -> None:
        """Count one refusal; the first of each code in a window keeps its ``details``."""
        current = self._current
        if current is None:
            current = self._current = _Window(now, ts)
        current.count += 1
        nonce = details.get("nonce")
        if isinstance(nonce, str) and len(current.nonces) < MAX_NONCES:
            current.nonces.append(nonce)
        if code not in current.codes and len(current.codes) >= MAX_CODES:
            code = "other"
        entry = current.codes.get(code)
        if entry is None:
            current.codes[code] = {"count": 1, "first": {"ts": ts, **details}}
        else:
            entry["count"] += 1

    def due(self, now: float) -> bool:
        """Whether the current window has run its time."""
        return self._current is not None and now - self._current.started >= self.window

    def take(self, ts: str) -> dict[str, Any] | None:
        """The window's ``commands_refused`` record (and start a new window), or ``None``."""
        current, self._current = self._current, None
        if current is None:
            return None
        record: dict[str, Any] = {
            "type": "commands_refused",
            "ts": ts,
            "since": current.started_ts,
            "count": current.count,
            "codes": current.codes,
        }
        if current.nonces:
            record["nonces"] = current.nonces
        return record

    def put_back(self, record: Mapping[str, Any], now: float) -> None:
        """A window whose record the journal refused: keep its counts for the next one."""
        codes = record.get("codes")
        if not isinstance(codes, Mapping):
            return
        current = self._current
        if current is None:
            current = self._current = _Window(now, str(record.get("since")))
        else:
            current.started_ts = str(record.get("since"))
        nonces = record.get("nonces")
        if isinstance(nonces, list):
            current.nonces = [*nonces, *current.nonces][:MAX_NONCES]
        for code, entry in codes.items():
            mine = current.codes.setdefault(code, {"count": 0, "first": entry["first"]})
            mine["count"] += entry["count"]
            mine["first"] = entry["first"]
            current.count += entry["count"]
