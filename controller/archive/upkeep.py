"""What the archiver does besides storing: verifying, asking for what is missing, saying how it is.

It reads the *stored* rows back on its own connection and cadence, so archivers sharing a floor
verify the same chains. Bounded per pass, loops over rows read, never over ``seq`` ranges (a gap
may span 2**63); it awaits between tables, so SIGTERM is taken within one pass.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import structlog

from tablectl.controller.archive.chains import MAX_RESEND
from tablectl.controller.archive.db import Connections, lost_errors
from tablectl.controller.archive.gate.admission import MAX_SEQ, Head, Limits, refusal_of
from tablectl.controller.archive.status import ArchiveStatus
from tablectl.controller.archive.verifier import RESENDS_PER_TABLE, TablePass, Verifier
from tablectl.controller.core.bounded_json import read_object
from tablectl.controller.core.errors import MalformedError
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.mqtt.topics import Topics
from tablectl.drivers.clock import Clock

if TYPE_CHECKING:
    import psycopg

log = structlog.get_logger("tablectl.archive")


_LOST: Final = lost_errors()


@dataclass(frozen=True)
class ResendSigner:
    """Signs the archive's ``cmd/resend`` requests with a role's key (``tablectl archive
    --resend-key``): a table with ``[security]`` answers only its ``resend`` role
    (docs/security.md)."""

    role: str
    key: bytes = field(repr=False)
    by: str

    def sign(self, request: Mapping[str, Any], table: str) -> dict[str, Any]:
        """``request`` signed for ``table``'s ``cmd/resend`` (a fresh nonce and time)."""
        return sign_command(
            request, verb="resend", table=table, role=self.role, key=self.key, by=self.by
        )


@dataclass(frozen=True)
class Cadence:
    """How often the upkeep does what (seconds; see the module doc)."""

    gap_timeout: float = 5.0
    probe_after: float = 30.0
    status_every: float = 5.0
    sweep_every: float = 60.0
    verify_after: float = 0.25
    resend_per_table: int = RESENDS_PER_TABLE
    """``cmd/resend`` requests for one table in one pass at most (``--resend-per-table``)."""
    resend_per_pass: int = 100
    """``cmd/resend`` requests in one pass at most, probes included (``--resend-per-pass``)."""


@dataclass
class _Quiet:
    """What the probe of a quiet table knows: when its last record came, when it was asked."""

    arrived: float
    probed: float | None = None
    probes: int = 0


class Upkeep:
    """The archiver's verification loop, resends (signed: a table with ``[security]`` answers only
    those), probes and status."""

    def __init__(
        self,
        status: ArchiveStatus,
        verifier: Verifier,
        cadence: Cadence,
        connections: Connections,
        *,
        send: Callable[[str, dict[str, Any], bool], None],
        clock: Clock,
        limits: Limits | None = None,
        signer: ResendSigner | None = None,
    ) -> None:
        self.status = status
        self._signer = signer
        self.limits = limits or Limits()
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
        self._heads: dict[str, Head] = {}
        self._requests = 0
        self._budget = 0

    # -- what the consumer tells ---------------------------------------------------------------

    def stored(self, newest: Mapping[str, int], tables: frozenset[str]) -> None:
        """A batch was committed: ``newest`` ``seq`` per table received, ``tables`` stored into
        (walked soon); the tables are not quiet."""
        now = self._clock.monotonic()
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

    def head(self, table: str) -> Head | None:
        """``table``'s verified head as last read (``None``: nothing verified, or not known)."""
        return self._heads.get(table)

    def reply(self, table: str, payload: bytes) -> tuple[str, str] | None:
        """A table answered a ``cmd/resend``: counted when it answers this archiver; ``(reason,
        detail)`` when the message is no reply at all. Never raises."""
        limits = self.limits
        try:
            reply = read_object(payload, max_bytes=limits.max_bytes, max_depth=limits.max_depth)
        except MalformedError as malformed:
            return refusal_of(malformed)
        ident = reply.get("id")
        if not isinstance(ident, str) or not ident.startswith(self._id_head()):
            return None  # another requester's
        self.status.counters.resend_replies += 1
        if reply.get("ok") is not True:
            self.status.counters.resend_refused += 1
            code = reply.get("code")
            log.warning(
                "archive_resend_refused",
                table=table,
                code=code[:64] if isinstance(code, str) else None,
            )
        return None

    # -- the loop ------------------------------------------------------------------------------

    async def load(self) -> None:
        """What ``archive_tables`` knows at start: the breaks (listed in the status) and the
        verified heads (admission's windows, until the tables' first passes)."""
        conn = await self._db.get("verify")
        async with conn.transaction():
            rows = await (
                await conn.execute(
                    "SELECT table_id, verified_seq, verified_ts, chain_broken_at, broken_reason"
                    " FROM archive_tables WHERE verified_seq > 0 OR chain_broken_at IS NOT NULL"
                )
            ).fetchall()
        for table, seq, ts, broken_at, reason in rows:
            if int(seq) > 0:
                self._heads[str(table)] = Head(int(seq), ts)
            if broken_at is not None:
                self.status.known_break(str(table), int(broken_at), str(reason or ""))

    async def run(self, stop: asyncio.Event) -> None:
        """Verify, resend, probe and say the status until ``stop`` (see the module doc)."""
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
            now = self._clock.monotonic()
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
                self._budget = cadence.resend_per_pass
                for table in sorted(tables):
                    await self._verify(conn, table)
            except _LOST as exc:
                await self._db.lost("verify", exc)
                continue
            self._probe(now)
            for alarm in self.status.held_alarms(now):  # what a flood's alarms held back
                self._send(self.status.alarms_topic, alarm, False)
            if now - last_status >= cadence.status_every:
                self._send(self.status.status_topic, self.status.status(self._clock.wall()), True)
                last_status = now

    async def _verify(self, conn: psycopg.AsyncConnection[tuple[Any, ...]], table: str) -> None:
        """One pass of ``table``; a failure of this table's pass (not of the connection) is
        logged and retried later, and does not stop the floor's."""
        import psycopg  # noqa: PLC0415 - optional extra

        resends = max(0, min(self.cadence.resend_per_table, self._budget))
        try:
            result = await self._verifier.verify(conn, table, self._clock.wall(), resends=resends)
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
        table = result.table
        # The pass's last_seq is within the table's seq horizon; what was stored is admitted.
        self._last_seq[table] = max(self._last_seq.get(table, 0), result.last_seq)
        head = result.head
        if head is not None:
            self._heads[table] = head
        for alarm in self.status.passed(result, self._clock.wall()):
            log.warning("archive_alarm", **{k: v for k, v in alarm.items() if k != "schema"})
            self._send(self.status.alarms_topic, alarm, False)
        for first, last in result.requests:  # bounded: the verifier's plan (plan_resends)
            self._ask(table, first, last)
        self._budget -= len(result.requests)

    def _probe(self, now: float) -> None:
        """Ask a quiet table for anything after the newest record stored (a lost tail); what
        is left of the pass's resend budget at most (the others at a later pass)."""
        after = self.cadence.probe_after
        for table, quiet in self._quiet.items():
            if self._budget <= 0:
                return
            since = quiet.probed if quiet.probed is not None else quiet.arrived
            if now - since < after * (2 ** min(quiet.probes, 6)):
                continue
            last = self._last_seq.get(table, 0)
            quiet.probed, quiet.probes = now, quiet.probes + 1
            if last >= MAX_SEQ:
                continue
            self._ask(table, last + 1, min(MAX_SEQ, last + MAX_RESEND))
            self._budget -= 1

    def _id_head(self) -> str:
        return f"archive-{self.status.name}-"

    def _ask(self, table: str, first: int, last: int) -> None:
        self._requests += 1
        self.status.counters.resend_requests += 1
        request: dict[str, Any] = {
            "id": f"{self._id_head()}{self._requests}",
            "from_seq": first,
            "to_seq": last,
        }
        if self._signer is not None:
            request = self._signer.sign(request, table)
        topic = Topics(self.status.prefix, table).command("resend")
        self._send(topic, request, False)
        log.info("archive_resend", table=table, from_seq=first, to_seq=last)
