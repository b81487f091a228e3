"""The per-table verification pass over the stored rows, and the gaps it keeps.

One transaction per table, its ``archive_tables`` row locked ``FOR UPDATE SKIP LOCKED``: another
archiver at it means come back at the next sweep. Gaps are looked for only up to the table's
``seq`` horizon, so a hostile ``seq`` 2**63-1 is no gap to fill.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

import structlog

from tablectl.controller.archive.chains import (
    MAX_RESEND,
    ChainBreak,
    ChainState,
    Gap,
    GapChange,
    StoredRow,
    Walk,
    find_gaps,
    plan_resends,
    reconcile_gaps,
    resends_due,
    walk,
)
from tablectl.controller.archive.gate.admission import Head, Limits, seq_horizon

if TYPE_CHECKING:
    import psycopg

log = structlog.get_logger("tablectl.archive")

PAGE: Final = 2_000
"""Rows read per query of a walk."""

PAGES_PER_PASS: Final = 10
"""Pages one pass walks at most (keeps the transaction short; the next pass goes on)."""

RESENDS_PER_TABLE: Final = 4
"""``cmd/resend`` requests planned for one table in one pass at most (by default)."""

WINDOW: Final = 50_000
"""``seq`` values after the head read to list gaps (a gap further on is found once the first
ones are filled)."""


@dataclass(frozen=True)
class KeyRing:
    """The tables' journal keys for anchor checks: one per table, or one for all."""

    default: bytes | None = field(default=None, repr=False)
    per_table: Mapping[str, bytes] = field(default_factory=dict, repr=False)

    def key(self, table: str) -> bytes | None:
        return self.per_table.get(table, self.default)


@dataclass(frozen=True)
class TablePass:
    """What one verification pass of a table found (for counters, alarms and resends)."""

    table: str
    walk: Walk
    gaps: GapChange
    resends: list[Gap]
    last_seq: int
    broke: ChainBreak | None = None
    """A break first seen in this pass (the alarm); an older one stays in ``walk.state``."""
    requests: list[tuple[int, int]] = field(default_factory=list)
    """The ``cmd/resend`` ranges to ask for (``resends``' first records, bounded)."""
    verified_ts: datetime | None = None
    """The verified head's own ``ts`` (admission's window)."""

    @property
    def head(self) -> Head | None:
        """The verified head for admission (``None``: nothing verified yet)."""
        state = self.walk.state
        return Head(state.verified_seq, self.verified_ts) if state.verified_seq else None


def _state(row: tuple[Any, ...]) -> ChainState:
    seq, digest, broken_at, reason = row
    return ChainState(int(seq), digest, broken_at, reason)


class Verifier:
    """Verifies tables one pass at a time."""

    def __init__(self, keys: KeyRing, gap_timeout: float, limits: Limits | None = None) -> None:
        self.keys = keys
        self.gap_timeout = timedelta(seconds=gap_timeout)
        self.limits = limits or Limits()

    async def verify(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        table: str,
        now: datetime,
        *,
        resends: int = RESENDS_PER_TABLE,
    ) -> TablePass | None:
        """One pass of ``table``; ``None`` when another transaction holds it. ``resends``: requests
        planned at most."""
        async with conn.transaction():
            head = await (
                await conn.execute(
                    "SELECT verified_seq, verified_hash, chain_broken_at, broken_reason, last_seq,"
                    " verified_ts FROM archive_tables WHERE table_id = %s FOR UPDATE SKIP LOCKED",
                    (table,),
                )
            ).fetchone()
            if head is None:
                return None
            before = _state(head[:4])
            last_seq = int(head[4])
            before_ts: datetime | None = head[5]
            head_ts = before_ts
            state = before
            result = Walk(state)
            for _ in range(PAGES_PER_PASS):
                rows = await (
                    await conn.execute(
                        "SELECT seq, hash, prev_hash, type, raw, ts FROM records"
                        " WHERE table_id = %s AND seq >= %s ORDER BY seq, ts LIMIT %s",
                        (table, state.verified_seq, PAGE),
                    )
                ).fetchall()
                stored = [StoredRow(int(s), h, p, t, bytes(r)) for s, h, p, t, r, _ in rows]
                step = walk(table, state, stored, key=self.keys.key(table))
                if step.state.verified_seq != state.verified_seq:
                    head_ts = next(
                        (row[5] for row in rows if int(row[0]) == step.state.verified_seq), None
                    )
                result = Walk(
                    step.state,
                    result.checked + step.checked,
                    result.withheld + step.withheld,
                    result.anchors + step.anchors,
                    step.broke,
                    step.stopped_at_gap,
                )
                state = step.state
                if stored:
                    last_seq = max(last_seq, stored[-1].seq)
                if step.broke or step.stopped_at_gap or len(stored) < PAGE or not step.checked:
                    break
            conflict = await (
                await conn.execute(
                    "SELECT seq FROM archive_conflicts WHERE table_id = %s ORDER BY seq LIMIT 1",
                    (table,),
                )
            ).fetchone()
            if conflict is not None and (state.broken_at is None or conflict[0] < state.broken_at):
                seq = int(conflict[0])
                why = f"a second, different record for seq {seq} (kept in archive_conflicts)"
                # The head stays where it is: nothing from the conflicting seq on is vouched for.
                keep = min(state.verified_seq, seq - 1)
                if keep < state.verified_seq:
                    digest = await (
                        await conn.execute(
                            "SELECT hash FROM records WHERE table_id = %s AND seq = %s LIMIT 1",
                            (table, keep),
                        )
                    ).fetchone()
                    state = ChainState(keep, str(digest[0]) if digest else None)
                    head_ts = None  # read again below
                state = ChainState(state.verified_seq, state.verified_hash, seq, why)
                result = Walk(state, result.checked, result.withheld, result.anchors)
            if state.verified_seq and head_ts is None:
                found = await (
                    await conn.execute(
                        "SELECT ts FROM records WHERE table_id = %s AND seq = %s"
                        " ORDER BY ts LIMIT 1",
                        (table, state.verified_seq),
                    )
                ).fetchone()
                head_ts = found[0] if found else None
            if not state.verified_seq:
                head_ts = None
            horizon = seq_horizon(
                Head(state.verified_seq, head_ts) if state.verified_seq else None, now, self.limits
            )
            gaps, reach = await self._gaps(conn, table, state.verified_seq, now, horizon)
            # The newest seq known of the table, within its horizon (a row stored beyond it, by
            # an archiver before admission existed, is not the table's tail).
            known = [state.verified_seq, reach, *(g.to_seq + 1 for g in gaps.open)]
            last_seq = max(seq for seq in [*known, last_seq] if seq <= horizon)
            requests, due = plan_resends(
                resends_due(gaps.open, now, self.gap_timeout), resends, MAX_RESEND
            )
            changed = state != before or last_seq != int(head[4]) or head_ts != before_ts
            if changed or gaps.open or gaps.filled:
                await self._write(
                    conn,
                    table,
                    state=state,
                    head_ts=head_ts,
                    last_seq=last_seq,
                    gaps=gaps,
                    due=due,
                    now=now,
                )
        broke = None
        if state.broken_at is not None and before.broken_at != state.broken_at:
            broke = ChainBreak(table, state.broken_at, state.broken_reason or "chain broken")
        return TablePass(table, result, gaps, due, last_seq, broke, requests, head_ts)

    async def _gaps(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        table: str,
        after: int,
        now: datetime,
        horizon: int,
    ) -> tuple[GapChange, int]:
        """The table's gaps after ``after`` up to ``horizon``, and the last ``seq`` stored within
        it. A gap kept from before the horizon existed is cut to it; one wholly beyond it is
        dropped."""
        seqs = [
            int(s[0])
            for s in await (
                await conn.execute(
                    "SELECT DISTINCT seq FROM records WHERE table_id = %s AND seq > %s"
                    " AND seq <= %s ORDER BY seq LIMIT %s",
                    (table, after, horizon, WINDOW),
                )
            ).fetchall()
        ]
        ranges = find_gaps(after, seqs)
        old = await (
            await conn.execute(
                "SELECT from_seq, to_seq, since, requested_at, requests FROM archive_gaps"
                " WHERE table_id = %s ORDER BY from_seq",
                (table,),
            )
        ).fetchall()
        known = [
            Gap(table, int(a), min(int(b), horizon), since, at, int(n))
            for a, b, since, at, n in old
            if int(a) <= horizon
        ]
        if len(known) < len(old) or any(int(b) > horizon for _, b, *_ in old):
            log.warning("archive_gap_cut", table=table, horizon=horizon)
        change = reconcile_gaps(table, known, ranges, now)
        reach = seqs[-1] if seqs else after
        beyond = [g for g in change.filled if g.to_seq > reach]
        if beyond:  # nothing stored after it within the horizon: a lost tail, not filled
            change = GapChange(
                change.open, [g for g in change.filled if g.to_seq <= reach], change.opened
            )
        return change, reach

    @staticmethod
    async def _write(
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        table: str,
        *,
        state: ChainState,
        head_ts: datetime | None,
        last_seq: int,
        gaps: GapChange,
        due: list[Gap],
        now: datetime,
    ) -> None:
        asked = {(g.from_seq, g.to_seq) for g in due}
        await conn.execute("DELETE FROM archive_gaps WHERE table_id = %s", (table,))
        for gap in gaps.open:
            requested = (gap.from_seq, gap.to_seq) in asked
            await conn.execute(
                "INSERT INTO archive_gaps (table_id, from_seq, to_seq, since, requested_at,"
                " requests) VALUES (%s, %s, %s, %s, %s, %s)",
                (
                    table,
                    gap.from_seq,
                    gap.to_seq,
                    gap.since,
                    now if requested else gap.requested_at,
                    gap.requests + requested,
                ),
            )
        await conn.execute(
            "UPDATE archive_tables SET verified_seq = %s, verified_hash = %s, verified_ts = %s,"
            " last_seq = %s, chain_broken_at = %s, broken_reason = %s, updated_at = now()"
            " WHERE table_id = %s",
            (
                state.verified_seq,
                state.verified_hash,
                head_ts,
                last_seq,
                state.broken_at,
                state.broken_reason,
                table,
            ),
        )

    @staticmethod
    async def tables(conn: psycopg.AsyncConnection[tuple[Any, ...]]) -> list[str]:
        """Every table the archive knows (a sweep verifies them all)."""
        async with conn.transaction():
            rows = await (
                await conn.execute("SELECT table_id FROM archive_tables ORDER BY table_id")
            ).fetchall()
        return [str(r[0]) for r in rows]
