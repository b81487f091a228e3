"""``cmd/resend``: publish again, on ``events``, journal records a consumer missed.

A floor's archive (docs/fleet.md) that sees a gap in a table's ``seq`` asks for it::

    cmd/resend {"id": "…", "from_seq": 120, "to_seq": 180}
    → cmd/resend/reply {"ok": true, "count": 61, "from_seq": 120, "to_seq": 180,
                        "first_seq": 120, "published_seq": 4711}

Reply ``to_seq``: how far it is answered (ask again from ``to_seq + 1``); ``first_seq``: the first
record sent (later after retention; ``null`` if none). Records go out byte for byte as first
published (face-down cards still withheld), only up to ``published_seq``, never to the retained
topics, queued behind live play (:meth:`tablectl.controller.mqtt.outbound.Outbound.republish`).

Cost control (docs/security.md): signed by a ``resend`` role with ``[security]``; each requester has
a budget of :data:`RESEND_RATE` records/s, burst :data:`MAX_RESEND`; a request the budget cannot
cover whole is refused ``rate_limited``, never granted in part. Not journaled.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.core.errors import ControllerError
from tablectl.controller.journal import Journal
from tablectl.controller.mqtt.outbound import published_form
from tablectl.controller.service.runner.views import TableOutputs
from tablectl.drivers.clock import Clock

MAX_RESEND: Final = 10_000
"""Records one ``cmd/resend`` publishes at most (and the budget's burst)."""

RESEND_RATE: Final = 1_000.0
"""Records per second a table resends on average: about a tenth of what its outbox can publish,
so filling an hour's gap of a busy table takes seconds while live play goes first."""

RATE_LIMITED: Final = "rate_limited"
"""The refusal code of a resend beyond the table's budget (retry after ``retry_after`` s)."""

_MAX_SEQ: Final = 2**63 - 1

ANONYMOUS: Final = "anonymous"
"""The requester of unsigned requests (a table without ``[security]`` roles)."""

MAX_REQUESTERS: Final = 32
"""Requesters' budgets kept (signers are role holders: few; the least recent goes first)."""


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

    def take_all(self, wanted: int, now: float) -> bool:
        """Take ``wanted`` records' worth if the bucket holds them all; else take nothing."""
        self._refill(now)
        if self._tokens < wanted:
            return False
        self._tokens -= wanted
        return True

    def give_back(self, unused: int) -> None:
        """Return tokens granted but not spent (records that the journal no longer holds)."""
        self._tokens = min(float(self.burst), self._tokens + unused)

    def retry_after(self, wanted: int = 1) -> float:
        """Seconds until ``wanted`` records' worth is saved up again."""
        return max(0.0, (min(wanted, self.burst) - self._tokens) / self.rate)


def _read(
    journal: Journal, first: int, last: int, key: bytes | None
) -> tuple[list[bytes], int, int]:
    """``(payloads as published, seq of the first, published_seq)`` of ``first..last``, clamped
    to what the outbox published; runs in a worker thread (the journal is thread-safe)."""
    pending = journal.unpublished_payloads(1)
    published = pending[0][0] - 1 if pending else journal.last_seq
    out: list[bytes] = []
    start = 0
    if first <= published:
        for record in journal.records(first - 1):
            if record.seq > min(last, published):
                break
            start = start or record.seq
            out.append(published_form(record, key))
    return out, start, published


class Resender:
    """Answers ``cmd/resend`` for one table (see the module doc).

    Args:
        journal: the table's journal (read in a worker thread).
        outputs: where the records are published (the publisher's Outbound).
        clock: the rate budget's time (the command desk's clock, wall seconds).
        budget: the table's rate budget (a fresh default one when unset).
    """

    def __init__(
        self,
        journal: Journal,
        outputs: TableOutputs,
        clock: Clock,
        budget: ResendBudget | None = None,
    ) -> None:
        self._journal = journal
        self._outputs = outputs
        self._clock = clock
        self._budgets: OrderedDict[str, ResendBudget] = OrderedDict()
        self._budgets[ANONYMOUS] = budget or ResendBudget()

    @property
    def budget(self) -> ResendBudget:
        """The budget of unsigned requests (a table without roles)."""
        return self._budgets[ANONYMOUS]

    def budget_of(self, requester: str) -> ResendBudget:
        """``requester``'s budget (a fresh one for a new requester; at most
        :data:`MAX_REQUESTERS` kept, the least recently used forgotten first)."""
        found = self._budgets.get(requester)
        if found is None:
            found = self._budgets[requester] = ResendBudget(self.budget.rate, self.budget.burst)
            while len(self._budgets) > MAX_REQUESTERS:
                oldest = next(k for k in self._budgets if k != ANONYMOUS)
                del self._budgets[oldest]
        self._budgets.move_to_end(requester)
        return found

    async def resend(
        self, request: Mapping[str, Any], requester: str = ANONYMOUS
    ) -> dict[str, Any]:
        """Queue the asked records on ``events``; the reply's fields (without ``id``/``ok``).

        Raises:
            ResendRefusedError: a bad range, a budget that cannot cover the request, or no
                broker connection.
        """
        asked = ResendRequest.parse(request)
        # Only what the outbox has published can be resent: what is asked beyond it costs
        # nothing (the journal keeps the acknowledged seq in memory: no read to decide).
        acknowledged = self._journal.acknowledged_seq
        last = min(asked.to_seq, asked.from_seq + MAX_RESEND - 1, acknowledged)
        wanted = max(0, last - asked.from_seq + 1)
        budget = self.budget_of(requester)
        if wanted and not budget.take_all(wanted, self._clock.now()):
            wait = budget.retry_after(wanted)
            why = (
                f"resend budget of {requester} spent ({RESEND_RATE:g} records/s): "
                f"{wanted} records in {wait:.1f} s"
            )
            raise ResendRefusedError(RATE_LIMITED, f"{why} (retry in {wait:.1f} s)")
        if not wanted:
            return {
                "count": 0,
                "from_seq": asked.from_seq,
                "to_seq": max(acknowledged, asked.from_seq - 1),
                "first_seq": None,
                "published_seq": acknowledged,
            }
        records, start, published = await asyncio.to_thread(
            _read, self._journal, asked.from_seq, last, self._outputs.key
        )
        budget.give_back(wanted - len(records))
        if records and not self._outputs.republish(records):
            budget.give_back(len(records))
            raise ResendRefusedError("offline", "no broker connection to publish on")
        return {
            "count": len(records),
            "from_seq": asked.from_seq,
            # Covered up to here (sent, or no longer in the journal): ask again after it.
            "to_seq": max(min(last, published), asked.from_seq - 1),
            "first_seq": start or None,
            "published_seq": published,
        }
