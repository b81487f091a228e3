"""``cmd/resend``: publish again, on ``events``, journal records a consumer missed.

Why: a floor's archive (docs/fleet.md) stores every record of every table; what it missed — an
archiver killed between PUBACK and commit, a bridge cut while the central broker restarted —
it notices as a gap in a table's ``seq`` and asks the table for it::

    cmd/resend {"id": "…", "from_seq": 120, "to_seq": 180}
    → cmd/resend/reply {"ok": true, "count": 61, "from_seq": 120, "to_seq": 180,
                        "first_seq": 120, "published_seq": 4711}

``to_seq`` in the reply is how far the request is answered (a request over the cap or beyond
the budget is answered in part: ask again from ``to_seq + 1``); ``first_seq`` the first record
sent (later than ``from_seq`` when the journal no longer holds the start: retention), ``null``
when none was; ``published_seq`` the newest record the table has published.

The records go out on ``events`` byte for byte as the outbox sent them (a face-down card still
withheld: :func:`tablectl.controller.mqtt.outbound.published_payload`), only records the outbox
has already published (``published_seq``: the newest; a later one is the outbox's to send
first), and never to the retained ``outcome``/``anchor`` (they keep the newest).

A read (:data:`tablectl.controller.mqtt.authority.READ_VERBS`): it needs no role, because it
discloses nothing that was not published and changes nothing (docs/security.md). Its cost is
bounded instead: at most :data:`MAX_RESEND` records per request (the reply's ``to_seq`` says
where it stopped; ask again for the rest) and :data:`RESEND_RATE` records per second per table
with a burst of :data:`MAX_RESEND`, beyond which it is refused ``rate_limited``. Not journaled
(like ``status``): a resend changes nothing, and a flood of them must not fill the disk.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.core.errors import ControllerError
from tablectl.controller.journal import Journal, canonical_json
from tablectl.controller.service.runner.views import TableOutputs

__all__ = [
    "MAX_RESEND",
    "RATE_LIMITED",
    "RESEND_RATE",
    "ResendBudget",
    "ResendRefusedError",
    "ResendRequest",
    "Resender",
]

MAX_RESEND: Final = 10_000
"""Records one ``cmd/resend`` publishes at most (and the budget's burst)."""

RESEND_RATE: Final = 1_000.0
"""Records per second a table resends on average: about a tenth of what its outbox can publish,
so filling an hour's gap of a busy table takes seconds while live play goes first."""

RATE_LIMITED: Final = "rate_limited"
"""The refusal code of a resend beyond the table's budget (retry after ``retry_after`` s)."""

_MAX_SEQ: Final = 2**63 - 1


class ResendRefusedError(ControllerError):
    """A resend request refused: ``code`` is the reply's (``bad_request``, ``rate_limited``)."""

    def __init__(self, code: str, why: str) -> None:
        super().__init__(why)
        self.code = code


@dataclass(frozen=True)
class ResendRequest:
    """A valid request: the inclusive ``seq`` range asked for."""

    from_seq: int
    to_seq: int

    @classmethod
    def parse(cls, request: Mapping[str, Any]) -> ResendRequest:
        """The range of a decoded ``cmd/resend`` body.

        Raises:
            ResendRefusedError: ``bad_request``: not two integers 1 ≤ from_seq ≤ to_seq.
        """
        first, last = _seq(request, "from_seq"), _seq(request, "to_seq")
        if last < first:
            raise ResendRefusedError("bad_request", f"to_seq {last} is before from_seq {first}")
        return cls(first, last)


def _seq(request: Mapping[str, Any], name: str) -> int:
    value = request.get(name)
    if type(value) is not int or not 1 <= value <= _MAX_SEQ:  # bool is no seq
        why = f"resend needs an integer {name} ≥ 1, got {value!r}"
        raise ResendRefusedError("bad_request", why)
    return value


class ResendBudget:
    """A token bucket of records: ``rate`` per second, at most ``burst`` saved up."""

    def __init__(self, rate: float = RESEND_RATE, burst: int = MAX_RESEND) -> None:
        self.rate = rate
        self.burst = burst
        self._tokens = float(burst)
        self._at: float | None = None

    def _refill(self, now: float) -> None:
        if self._at is not None and now > self._at:
            self._tokens = min(float(self.burst), self._tokens + (now - self._at) * self.rate)
        self._at = now if self._at is None else max(self._at, now)

    def take(self, wanted: int, now: float) -> int:
        """Up to ``wanted`` records granted now (0 when the bucket is empty)."""
        self._refill(now)
        granted = min(wanted, math.floor(self._tokens))
        self._tokens -= granted
        return max(granted, 0)

    def give_back(self, unused: int) -> None:
        """Return tokens granted but not spent (records that the journal no longer holds)."""
        self._tokens = min(float(self.burst), self._tokens + unused)

    def retry_after(self) -> float:
        """Seconds until one record's worth is saved up again."""
        return max(0.0, (1 - self._tokens) / self.rate)


def _read(journal: Journal, first: int, last: int) -> tuple[list[tuple[str, bytes]], int, int]:
    """``(records, seq of the first, published_seq)`` of ``first..last``, clamped to what the
    outbox published; runs in a worker thread (the journal is thread-safe)."""
    pending = journal.unpublished_payloads(1)
    published = pending[0][0] - 1 if pending else journal.last_seq
    out: list[tuple[str, bytes]] = []
    start = 0
    if first <= published:
        for record in journal.records(first - 1):
            if record.seq > min(last, published):
                break
            start = start or record.seq
            out.append((record.type, canonical_json(record.fields).encode("utf-8")))
    return out, start, published


class Resender:
    """Answers ``cmd/resend`` for one table (see the module doc).

    Args:
        journal: the table's journal (read in a worker thread).
        outputs: where the records are published (the publisher's Outbound).
        clock: seconds for the rate budget (the command desk's clock).
        budget: the table's rate budget (a fresh default one when unset).
    """

    def __init__(
        self,
        journal: Journal,
        outputs: TableOutputs,
        clock: Callable[[], float],
        budget: ResendBudget | None = None,
    ) -> None:
        self._journal = journal
        self._outputs = outputs
        self._clock = clock
        self.budget = budget or ResendBudget()

    async def resend(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """Queue the asked records on ``events``; the reply's fields (without ``id``/``ok``).

        Raises:
            ResendRefusedError: a bad range, an empty budget, or no broker connection.
        """
        asked = ResendRequest.parse(request)
        last = min(asked.to_seq, asked.from_seq + MAX_RESEND - 1)
        granted = self.budget.take(last - asked.from_seq + 1, self._clock())
        if granted == 0:
            wait = self.budget.retry_after()
            why = f"resend budget spent ({RESEND_RATE:g} records/s): retry in {wait:.1f} s"
            raise ResendRefusedError(RATE_LIMITED, why)
        last = asked.from_seq + granted - 1
        records, start, published = await asyncio.to_thread(
            _read, self._journal, asked.from_seq, last
        )
        self.budget.give_back(granted - len(records))
        if records and not self._outputs.republish(records):
            self.budget.give_back(len(records))
            raise ResendRefusedError("offline", "no broker connection to publish on")
        return {
            "count": len(records),
            "from_seq": asked.from_seq,
            # Covered up to here (sent, or no longer in the journal): ask again after it.
            "to_seq": max(min(last, published), asked.from_seq - 1),
            "first_seq": start or None,
            "published_seq": published,
        }
