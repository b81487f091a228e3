"""What the archiver does besides storing: verifying what was stored, asking for what is missing,
and saying how it is.

Why apart from :mod:`tablectl.controller.archive.consumer` (which receives and stores): this side
reads the *stored* rows back, per table, on its own database connection and its own cadence, so
several archivers sharing the work verify the same chains whoever stored what
(:mod:`tablectl.controller.archive.verifier`). Three cadences keep a floor of 2,000 mostly
healthy tables cheap:

* a table stored into is walked :attr:`Cadence.verify_after` seconds later (the batches
  committed meanwhile gather: a draining backlog is walked thousands of rows per pass, not a
  pass per batch);
* a table with an open gap, or one another archiver held locked, again every half gap timeout;
* every table once a :attr:`Cadence.sweep_every` (rows another archiver stored and could not
  verify before it died).

Gaps due for a resend are asked for on the table's ``cmd/resend`` (at most :data:`MAX_RESEND`
records a request); a table quiet for :attr:`Cadence.probe_after` seconds is asked for anything
after its newest stored record (a lost *tail*). The retained ``status`` goes out every
:attr:`Cadence.status_every` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

import structlog

from tablectl.controller.archive.db import Connections, lost_errors
from tablectl.controller.archive.status import ArchiveStatus
from tablectl.controller.archive.verifier import TablePass, Verifier
from tablectl.controller.mqtt.topics import Topics

if TYPE_CHECKING:
    import psycopg

__all__ = ["MAX_RESEND", "Cadence", "Upkeep"]

log = structlog.get_logger("tablectl.archive")

MAX_RESEND: Final = 10_000
"""Records asked per ``cmd/resend`` (the table's cap: it answers at most this many)."""


_LOST: Final = lost_errors()


@dataclass(frozen=True)
class Cadence:
    """How often the upkeep does what (seconds; see the module doc)."""

    gap_timeout: float = 5.0
    probe_after: float = 30.0
    status_every: float = 5.0
    sweep_every: float = 60.0
    verify_after: float = 0.25


@dataclass
class _Quiet:
    """What the probe of a quiet table knows: when its last record came, when it was asked."""

    arrived: float
    probed: float | None = None
    probes: int = 0


class Upkeep:
    """The archiver's verification loop, resends, probes and status (see the module doc).

    Args:
        status: the archiver's counters and view of the floor (its topics name it).
        verifier: the per-table verification pass.
        cadence: how often.
        connections: the archiver's; this uses its ``verify`` connection.
        send: queues ``(topic, payload, retain)`` for the broker.
        clock: wall clock for gap ages and alarm times.
    """

    def __init__(
        self,
        status: ArchiveStatus,
        verifier: Verifier,
        cadence: Cadence,
        connections: Connections,
        *,
        send: Callable[[str, dict[str, Any], bool], None],
        clock: Callable[[], datetime],
    ) -> None:
        self.status = status
        self.cadence = cadence
        self._verifier = verifier
        self._db = connections
        self._send = send
        self._clock = clock
        self._dirty: set[str] = set()
        self._retry: set[str] = set()
        self._dirty_event = asyncio.Event()
        self._quiet: dict[str, _Quiet] = {}
        self._last_seq: dict[str, int] = {}
        self._requests = 0

    # -- what the consumer tells ---------------------------------------------------------------

    def stored(self, newest: Mapping[str, int], tables: frozenset[str]) -> None:
        """A batch was committed: ``newest`` ``seq`` per table received, ``tables`` stored into
        (walked soon); the tables are not quiet."""
        now = asyncio.get_running_loop().time()
        for table, seq in newest.items():
            quiet = self._quiet.get(table)
            if quiet is None:
                self._quiet[table] = _Quiet(now)
            else:
                quiet.arrived, quiet.probed, quiet.probes = now, None, 0
            self._last_seq[table] = max(self._last_seq.get(table, 0), seq)
        if tables:
            self._dirty |= tables
            self._dirty_event.set()

    def reply(self, table: str, payload: bytes) -> None:
        """A table answered a ``cmd/resend``: counted when it answers this archiver."""
        try:
            reply = json.loads(payload)
        except ValueError:
            return
        if not isinstance(reply, dict) or not str(reply.get("id", "")).startswith(self._id_head()):
            return
        self.status.counters.resend_replies += 1
        if reply.get("ok") is not True:
            self.status.counters.resend_refused += 1
            log.warning("archive_resend_refused", table=table, code=reply.get("code"))

    # -- the loop ------------------------------------------------------------------------------

    async def load_breaks(self) -> None:
        """The breaks already known (kept in ``archive_tables``): listed in the status."""
        conn = await self._db.get("verify")
        async with conn.transaction():
            rows = await (
                await conn.execute(
                    "SELECT table_id, chain_broken_at, broken_reason FROM archive_tables"
                    " WHERE chain_broken_at IS NOT NULL"
                )
            ).fetchall()
        for table, seq, reason in rows:
            self.status.known_break(str(table), int(seq), str(reason or ""))

    async def run(self, stop: asyncio.Event) -> None:
        """Verify, resend, probe and say the status until ``stop`` (see the module doc)."""
        loop = asyncio.get_running_loop()
        cadence = self.cadence
        last_sweep = last_retry = last_status = -1e9
        retry_every = max(0.5, cadence.gap_timeout / 2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(retry_every, cadence.status_every)):
                    await self._dirty_event.wait()
                # Let batches gather: one pass walks what several committed.
                await asyncio.sleep(cadence.verify_after)
            self._dirty_event.clear()
            now = loop.time()
            try:
                conn = await self._db.get("verify")
                tables = set(self._dirty)
                if now - last_retry >= retry_every:
                    tables |= self._retry
                    tables |= {gap.table for gap in self.status.open_gaps()}
                    last_retry = now
                if now - last_sweep >= cadence.sweep_every:
                    tables |= set(await self._verifier.tables(conn))
                    last_sweep = now
                for table in sorted(tables):
                    await self._verify(conn, table)
            except _LOST as exc:
                await self._db.lost("verify", exc)
                continue
            self._probe(now)
            if now - last_status >= cadence.status_every:
                self._send(self.status.status_topic, self.status.status(self._clock()), True)
                last_status = now

    async def _verify(self, conn: psycopg.AsyncConnection[tuple[Any, ...]], table: str) -> None:
        """One pass of ``table``; a failure of this table's pass (not of the connection) is
        logged and retried later, and does not stop the floor's."""
        import psycopg  # noqa: PLC0415 - optional extra

        try:
            result = await self._verifier.verify(conn, table, self._clock())
        except _LOST:
            raise
        except psycopg.Error as exc:  # a bug or bad data: this table, not the floor
            log.exception("archive_verify_failed", table=table, error=str(exc))
            self._retry.add(table)
            return
        self._dirty.discard(table)
        if result is None:
            self._retry.add(table)  # another archiver holds it: later
            return
        self._retry.discard(table)
        self._passed(result)

    def _passed(self, result: TablePass) -> None:
        self._last_seq[result.table] = max(self._last_seq.get(result.table, 0), result.last_seq)
        for alarm in self.status.passed(result, self._clock()):
            log.warning("archive_alarm", **{k: v for k, v in alarm.items() if k != "schema"})
            self._send(self.status.alarms_topic, alarm, False)
        for gap in result.resends:
            for first in range(gap.from_seq, gap.to_seq + 1, MAX_RESEND):
                self._ask(gap.table, first, min(gap.to_seq, first + MAX_RESEND - 1))

    def _probe(self, now: float) -> None:
        """Ask a quiet table for anything after the newest record stored (a lost tail)."""
        after = self.cadence.probe_after
        for table, quiet in self._quiet.items():
            since = quiet.probed if quiet.probed is not None else quiet.arrived
            if now - since < after * (2 ** min(quiet.probes, 6)):
                continue
            last = self._last_seq.get(table, 0)
            self._ask(table, last + 1, last + MAX_RESEND)
            quiet.probed, quiet.probes = now, quiet.probes + 1

    def _id_head(self) -> str:
        return f"archive-{self.status.name}-"

    def _ask(self, table: str, first: int, last: int) -> None:
        self._requests += 1
        self.status.counters.resend_requests += 1
        request = {"id": f"{self._id_head()}{self._requests}", "from_seq": first, "to_seq": last}
        topic = Topics(self.status.prefix, table).command("resend")
        self._send(topic, request, False)
        log.info("archive_resend", table=table, from_seq=first, to_seq=last)
