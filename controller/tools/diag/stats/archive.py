"""``diag stats --dsn``: the same reports across the floor's tables and months, from the archive
(R17: trends over months need more than one table's 90 days). Each table's window is a
:class:`~.wheel.RowSource` like a journal file, so the readings and maths are the same."""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Awaitable, Callable, Generator, Iterator
from datetime import datetime
from typing import TYPE_CHECKING, TextIO

from tablectl.controller.journal import AUTHORSHIP_UNVERIFIED
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.stats.shoes import journal_game
from tablectl.controller.tools.diag.stats.wheel import RowSource

if TYPE_CHECKING:
    from tablectl.controller.archive.reader import ArchiveReader
    from tablectl.controller.tools.diag.stats.command import StatsRequest

RunOne = Callable[..., Awaitable[int]]
"""``run_stats`` itself, for one table's window (passed in: no import cycle with the command)."""


def month_windows(
    since: datetime | None, until: datetime | None, first: datetime, last: datetime
) -> Iterator[tuple[datetime, datetime]]:
    """Calendar months (UTC) from ``since`` (or ``first``, the oldest record's time) to ``until``
    (or just past ``last``), each cut to the window."""
    from tablectl.controller.archive.schema import month_of  # noqa: PLC0415

    start = since or first
    end = until or last
    month = month_of(start)
    while month.start < end or (until is None and month.start <= end):
        lower, upper = max(month.start, start), month.next().start
        if until is not None:
            upper = min(upper, until)
        if lower < upper:
            yield lower, upper
        month = month.next()


async def run_archive_stats(
    request: StatsRequest, run_one: RunOne, *, out: TextIO, err: TextIO, as_json: bool
) -> int:
    """One report per table over the window, or per table and month with ``per_month``. 0 unless a
    table asked for by name has no statistics to give."""
    if request.config is not None or request.journal is not None or request.device is not None:
        raise DiagError("--dsn reads the archive: not with --config, --journal or --device")
    from tablectl.controller.archive.reader import (  # noqa: PLC0415 - psycopg only here
        open_archive,
        table_ids,
        verified_reader,
    )

    assert request.dsn is not None
    status = 0
    notes = err if as_json else out  # JSON lines stay JSON; the notes go beside them
    with open_archive(request.dsn) as archive:
        named = bool(request.tables)
        tables = list(request.tables) or table_ids(archive)
        if not tables:
            raise DiagError(f"{archive.where}: the archive holds no table's records")
        for table in tables:
            whole = verified_reader(archive, table, key=request.key)
            game = journal_game(whole)
            if game is None:
                line = f"{table}: no outcome, shuffle or card in the archive: nothing to analyse"
                note(err if named else out, line, named)
                status = max(status, int(named))
                continue
            windows: list[tuple[datetime | None, datetime | None]] = [
                (request.since, request.until)
            ]
            if request.per_month:
                span = archive.query(
                    "SELECT min(ts), max(ts) FROM records WHERE table_id = %s", (table,)
                )[0]
                windows = list(month_windows(request.since, request.until, span[0], span[1]))
            variant = request.variant or (_variant(whole) if game == "roulette" else None)
            for since, until in windows:
                source = whole.window(since, until)
                one = dataclasses.replace(
                    request, dsn=None, journal=source, game=game, variant=variant
                )
                try:
                    status = max(status, await run_one(one, out=out, err=err, as_json=as_json))
                except DiagError as exc:  # this table's game has no statistics: say so, go on
                    note(err if named else out, f"{table}: {exc}", named)
                    status = max(status, int(named))
                    break
                left_out(notes, source)
                if not as_json:
                    out.write("\n")
    if request.key is None:
        note(notes, AUTHORSHIP_UNVERIFIED, error=False)
    return status


def left_out(stream: TextIO, source: ArchiveReader) -> None:
    """Say what the report did not count: records past the verified head, and (with the key)
    records whose own ``auth`` is not the table's."""
    after = source.unverified()
    if after:
        note(
            stream,
            f"{source.table}: {after} record(s) after the archive's verified head"
            f" (seq {source.through}) left out: not yet verified in their chain",
            error=False,
        )
    if source.refused:
        note(
            stream,
            f"{source.table}: {source.refused} record(s) left out: their auth does not match the"
            " table's key (forged or stripped)",
            error=False,
        )


def _variant(source: RowSource) -> str | None:
    """The wheel a roulette table's newest outcome names (``result.variant``): no config says
    it here, and an american wheel's 38 pockets must not be tested as 37."""
    rows = source.rows(("outcome",))
    try:
        for count, (_seq, _kind, body) in enumerate(rows):
            if count >= 100:  # voids say nothing of the wheel; a hundred in a row: give up
                break
            with contextlib.suppress(ValueError, AttributeError, KeyError, TypeError):
                variant = json.loads(body)["result"].get("variant")
                if isinstance(variant, str):
                    return variant
        return None
    finally:
        if isinstance(rows, Generator):
            rows.close()


def note(stream: TextIO, line: str, error: bool) -> None:
    stream.write(f"tablectl diag stats: {line}\n" if error else f"{line}\n")
    stream.flush()
