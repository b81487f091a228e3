"""The per-table verification pass over the stored rows, and the gaps it keeps.

One pass for one table, in one transaction: lock its ``archive_tables`` row (``FOR UPDATE SKIP
LOCKED``: when another archiver is verifying it, or storing a batch of it, this one moves on and
comes back at its next sweep), read its rows after the verified head page by page, walk them
(:func:`tablectl.controller.archive.chains.walk`), turn a kept conflict into a break, list the
missing ranges after the head, reconcile them with ``archive_gaps``, decide which are due for a
resend, and write the new head. The caller publishes the resend requests and the alarms after
the commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from tablectl.controller.archive.chains import (
    ChainBreak,
    ChainState,
    Gap,
    GapChange,
    StoredRow,
    Walk,
    find_gaps,
    reconcile_gaps,
    resends_due,
    walk,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PAGE", "WINDOW", "KeyRing", "TablePass", "Verifier"]

PAGE: Final = 2_000
"""Rows read per query of a walk."""

PAGES_PER_PASS: Final = 10
"""Pages one pass walks at most (keeps the transaction short; the next pass goes on)."""

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


def _state(row: tuple[Any, ...]) -> ChainState:
    seq, digest, broken_at, reason = row
    return ChainState(int(seq), digest, broken_at, reason)


class Verifier:
    """Verifies tables one pass at a time (see the module doc).

    Args:
        keys: anchor keys per table.
        gap_timeout: how long a missing ``seq`` may be missing before a resend is asked.
    """

    def __init__(self, keys: KeyRing, gap_timeout: float) -> None:
        self.keys = keys
        self.gap_timeout = timedelta(seconds=gap_timeout)

    async def verify(
        self, conn: psycopg.AsyncConnection[tuple[Any, ...]], table: str, now: datetime
    ) -> TablePass | None:
        """One pass of ``table``; ``None`` when another transaction holds it (come back later).

        Raises:
            psycopg.Error: the database failed (the pass is rolled back).
        """
        async with conn.transaction():
            head = await (
                await conn.execute(
                    "SELECT verified_seq, verified_hash, chain_broken_at, broken_reason, last_seq"
                    " FROM archive_tables WHERE table_id = %s FOR UPDATE SKIP LOCKED",
                    (table,),
                )
            ).fetchone()
            if head is None:
                return None
            before = _state(head[:4])
            last_seq = int(head[4])
            state = before
            result = Walk(state)
            for _ in range(PAGES_PER_PASS):
                rows = await (
                    await conn.execute(
                        "SELECT seq, hash, prev_hash, type, raw FROM records"
                        " WHERE table_id = %s AND seq >= %s ORDER BY seq, ts LIMIT %s",
                        (table, state.verified_seq, PAGE),
                    )
                ).fetchall()
                stored = [StoredRow(int(s), h, p, t, bytes(r)) for s, h, p, t, r in rows]
                step = walk(table, state, stored, key=self.keys.key(table))
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
                state = ChainState(state.verified_seq, state.verified_hash, seq, why)
                result = Walk(state, result.checked, result.withheld, result.anchors)
            gaps = await self._gaps(conn, table, state.verified_seq, now)
            last_seq = max([last_seq, *(g.to_seq + 1 for g in gaps.open)])
            due = resends_due(gaps.open, now, self.gap_timeout)
            changed = state != before or last_seq != int(head[4])
            if changed or gaps.open or gaps.filled:
                await self._write(
                    conn, table, state=state, last_seq=last_seq, gaps=gaps, due=due, now=now
                )
        broke = None
        if state.broken_at is not None and before.broken_at != state.broken_at:
            broke = ChainBreak(table, state.broken_at, state.broken_reason or "chain broken")
        return TablePass(table, result, gaps, due, last_seq, broke)

    async def _gaps(
        self,
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        table: str,
        after: int,
        now: datetime,
    ) -> GapChange:
        seqs = await (
            await conn.execute(
                "SELECT DISTINCT seq FROM records WHERE table_id = %s AND seq > %s"
                " ORDER BY seq LIMIT %s",
                (table, after, WINDOW),
            )
        ).fetchall()
        ranges = find_gaps(after, [int(s[0]) for s in seqs])
        old = await (
            await conn.execute(
                "SELECT from_seq, to_seq, since, requested_at, requests FROM archive_gaps"
                " WHERE table_id = %s ORDER BY from_seq",
                (table,),
            )
        ).fetchall()
        known = [Gap(table, int(a), int(b), since, at, int(n)) for a, b, since, at, n in old]
        return reconcile_gaps(table, known, ranges, now)

    @staticmethod
    async def _write(
        conn: psycopg.AsyncConnection[tuple[Any, ...]],
        table: str,
        *,
        state: ChainState,
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
            "UPDATE archive_tables SET verified_seq = %s, verified_hash = %s, last_seq = %s,"
            " chain_broken_at = %s, broken_reason = %s, updated_at = now() WHERE table_id = %s",
            (
                state.verified_seq,
                state.verified_hash,
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
