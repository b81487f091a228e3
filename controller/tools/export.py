"""``tablectl export``: a round, a time range or everything, as normalized events for a dispute.

The contracts §4.4 JSONL ``tablectl replay`` reads: events only, so the rules run again must
conclude the same by themselves (``--records``: the stored records too). Read-only and verified
first; from the journal or the archive (which holds face-down cards withheld, so such a round
exports from the journal).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO, runtime_checkable

from tablectl.controller.core.errors import TimeFormatError
from tablectl.controller.core.events import EVENT_TYPES
from tablectl.controller.core.outcomes import Outcome
from tablectl.controller.core.time import parse_moment, parse_ts
from tablectl.controller.engines import Engine, build_engine
from tablectl.controller.engines.replay import ReplayReport, replay_lines
from tablectl.controller.journal import (
    AUTH,
    AUTHORSHIP_UNVERIFIED,
    ENVELOPE,
    JournalRecord,
    canonical_json,
)
from tablectl.controller.tools.journal_reader import ExportError, JournalReader

if TYPE_CHECKING:
    from tablectl.controller.config import TableConfig


class RecordSource(Protocol):
    """Where an export reads a table's records by ``seq``: its journal files
    (:class:`~tablectl.controller.tools.journal_reader.JournalReader`) or the floor's archive
    (:class:`~tablectl.controller.archive.reader.ArchiveReader`); each verifies what it hands out.
    """

    @property
    def first_seq(self) -> int:
        """The oldest ``seq`` the source holds."""
        ...

    @property
    def files(self) -> Sequence[object]:
        """What is read (files, or the archive), for messages."""
        ...

    def records(self, first: int = 1, last: int | None = None) -> Iterator[JournalRecord]:
        """Records with ``first <= seq <= last``, in order."""
        ...

    def backwards(self, before: int) -> Iterator[JournalRecord]:
        """Records with ``seq < before``, newest first."""
        ...

    def find_outcome(self, round_id: str) -> JournalRecord | None:
        """The (last) outcome record of ``round_id``."""
        ...


@runtime_checkable
class WindowedSource(Protocol):
    """A source that reads a time window itself (the archive: only the months it touches)."""

    def between(self, since: datetime | None, until: datetime | None) -> Iterator[JournalRecord]:
        """Records with ``since <= ts < until`` in ``seq`` order."""
        ...


JOURNAL_FIELDS = ENVELOPE
"""What the journal adds to an event; not part of the normalized event (replay refuses it)."""


@dataclass
class ExportedRange:
    """What an export wrote: the events, and the records (conclusions included) they span."""

    events: list[dict[str, Any]]
    records: list[JournalRecord]
    """Every journal record from the first exported event to the last record concerned (for a
    round: its outcome), as stored."""
    reproduced: bool | None = None
    """A round export checked by replay: whether the events reproduce the journal's outcome
    (``None``: not checked, no engine given)."""


def to_event_line(record: JournalRecord) -> dict[str, Any]:
    """A journaled event record → the normalized event (with ``seq``) that replay reads."""
    return {k: v for k, v in record.fields.items() if k not in JOURNAL_FIELDS}


_DECIDING_WINDOW = 1024
"""Records searched back from an outcome for its deciding event: a group commit journals at most
256 events before their conclusions, so the event is well within this."""


def _is_event(record: JournalRecord) -> bool:
    return record.type in EVENT_TYPES


def export_round(
    reader: RecordSource,
    round_id: str,
    engine_factory: Callable[[], Engine] | None = None,
) -> ExportedRange:
    """The events of one round: from the end of the round before to the event that decided it.

    A card dealt between two coups belongs to the next one (baccarat BAC-I2) and a round may inherit
    from further back, so with ``engine_factory`` earlier starts are tried until one reproduces the
    journal's outcome. An open round is not exported: its face-down cards are not revealed yet.
    """
    outcome = reader.find_outcome(round_id)
    if outcome is None:
        raise ExportError(
            f"round {round_id!r} has no outcome in {', '.join(map(str, reader.files))}"
            " (unknown, retired, or still in progress)"
        )
    deciding = _deciding_event(reader, outcome)
    opening = None
    if deciding is not None:
        for record in reader.backwards(deciding.seq):
            if record.type == "round_open":
                opening = record
                break
    if deciding is None or opening is None:
        raise ExportError(f"round {round_id!r}: no round_open before its outcome in the journal")
    default, starts = _candidate_starts(reader, round_id, opening.seq, deciding.seq)
    if engine_factory is None:
        return _range(reader, outcome, opening, deciding, default)
    expected = {k: v for k, v in outcome.fields.items() if k not in _NOT_IN_PAYLOAD}
    attempt = None
    for start in starts:
        attempt = _range(reader, outcome, opening, deciding, start)
        if _replays_to(engine_factory(), attempt.events, round_id) == expected:
            attempt.reproduced = True
            return attempt
    assert attempt is not None  # starts always holds the round_open itself
    attempt.reproduced = False
    return attempt


_NOT_IN_PAYLOAD = frozenset({"type", "seq", "hash", "prev_hash", AUTH})

_ROUNDS_BACK = 200
"""How many rounds back a self-checking round export looks for a start that reproduces the
outcome (more than a shoe's coups)."""


def _range(
    reader: RecordSource,
    outcome: JournalRecord,
    opening: JournalRecord,
    deciding: JournalRecord,
    start: int,
) -> ExportedRange:
    records = list(reader.records(start, outcome.seq))
    events = [to_event_line(r) for r in records if _is_event(r) and r.seq <= deciding.seq]
    # Every round_open in the export gets its round's id (ours, and earlier rounds' when the
    # export reaches back), so replay numbers the rounds as the journal did.
    ids = {opening.seq: outcome.get("round")}
    for record in records:
        if record.type == "outcome" and record is not records[-1]:
            decided = _deciding_event(reader, record)
            opened = decided and next(
                (r for r in reversed(records) if r.type == "round_open" and r.seq < decided.seq),
                None,
            )
            if opened:
                ids.setdefault(opened.seq, record.get("round"))
    for event in events:
        if event["type"] == "round_open" and event.get("round") is None and event["seq"] in ids:
            event["round"] = ids[event["seq"]]
    return ExportedRange(events=events, records=records)


def _candidate_starts(
    reader: RecordSource, round_id: str, opening: int, deciding: int
) -> tuple[int, list[int]]:
    """Where a round's export may start: ``(default, candidates)``: just after the previous round's
    deciding event, then earlier rounds' (up to :data:`_ROUNDS_BACK`), then the oldest record."""
    found: list[int] = []
    for record in reader.backwards(deciding):
        if len(found) >= _ROUNDS_BACK:
            break
        if record.type != "outcome" or record.get("round") == round_id:
            continue
        before = _deciding_event(reader, record)
        if before is not None:
            found.append(min(before.seq + 1, opening))
    default = found[0] if found else opening
    candidates = list(dict.fromkeys([opening, *found, min(reader.first_seq, opening)]))
    return default, candidates


def _replays_to(
    engine: Engine, events: list[dict[str, Any]], round_id: str
) -> dict[str, Any] | None:
    report = ReplayReport()
    lines = (canonical_json(e) for e in events)
    for _, item in replay_lines(engine, lines, report):
        if isinstance(item, Outcome) and item.round == round_id:
            return item.to_payload()
    return None


def _deciding_event(reader: RecordSource, outcome: JournalRecord) -> JournalRecord | None:
    """The event that led to ``outcome``: the newest event before it with its ``ts`` (an engine
    stamps a conclusion with the deciding event's time), searched within a group commit's reach,
    else the newest event before it."""
    deciding: JournalRecord | None = None
    for index, record in enumerate(reader.backwards(outcome.seq)):
        if index >= _DECIDING_WINDOW:
            break
        if _is_event(record):
            if deciding is None or record.ts == outcome.ts:
                deciding = record
            if record.ts == outcome.ts:
                break
    return deciding


def export_time_range(
    reader: RecordSource, since: datetime | None, until: datetime | None
) -> ExportedRange:
    """Events with ``since <= ts < until`` (either bound may be open), in ``seq`` order.

    Records whose ``ts`` is not an ISO time are left out of a time range.
    """
    events: list[dict[str, Any]] = []
    records: list[JournalRecord] = []
    read = reader.between(since, until) if isinstance(reader, WindowedSource) else reader.records()
    for record in read:
        moment = parse_ts(record.ts)
        inside = moment is not None and (since is None or moment >= since)
        inside = inside and (until is None or (moment is not None and moment < until))
        if inside:
            records.append(record)
            if _is_event(record):
                events.append(to_event_line(record))
    return ExportedRange(events=events, records=records)


def export_all(reader: RecordSource) -> ExportedRange:
    """Every event the files hold."""
    records = list(reader.records())
    return ExportedRange(
        events=[to_event_line(r) for r in records if _is_event(r)], records=records
    )


def write_lines(stream: TextIO, lines: Iterable[Mapping[str, Any]]) -> None:
    """One canonical JSON object per line."""
    for line in lines:
        stream.write(canonical_json(line) + "\n")


# -- CLI -------------------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``tablectl export --journal PATH (--round ID | --since ISO [--until ISO] | --all)``."""
    parser.add_argument(
        "--journal",
        type=Path,
        default=None,
        help="the journal file (its rotated files next to it are read too) or its folder;"
        " default: the config's [journal] path",
    )
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="the table config: a round export then replays itself with the table's rules and"
        " starts as far back as reproducing the journal's outcome takes",
    )
    parser.add_argument(
        "--dsn",
        metavar="DSN",
        default=None,
        help="read the floor's archive in PostgreSQL instead of a journal (with --table; e.g."
        " tablectl export --dsn postgresql://archive@db/tablectl --table ROU-01 --round"
        " ROU-01-000123; default: the journal)",
    )
    parser.add_argument(
        "--table",
        metavar="ID",
        default=None,
        help="with --dsn: the table's id (default: the config's [table] id)",
    )
    parser.add_argument(
        "--key",
        type=Path,
        metavar="FILE",
        default=None,
        help="with --dsn: the table's journal key ([journal] key_file's copy): every record"
        " exported must carry its own auth under it (default: none; authorship unverified)",
    )
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--round", metavar="ID", help="one round, from round_open to its outcome")
    what.add_argument("--since", metavar="ISO", help="events with ts >= ISO (Z or +01:00)")
    what.add_argument("--all", action="store_true", help="every event")
    parser.add_argument("--until", metavar="ISO", help="with --since: events with ts < ISO")
    parser.add_argument(
        "--out", type=Path, default=None, help="write the events here (default: stdout)"
    )
    parser.add_argument(
        "--records",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write the journal records spanned (conclusions and hashes included, verbatim)",
    )


def _moment(text: str | None, flag: str) -> datetime | None:
    if text is None:
        return None
    try:
        return parse_moment(text, flag)
    except TimeFormatError as exc:
        raise ExportError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    """Run ``tablectl export``; errors are raised for the CLI to print (exit 1)."""
    if args.until is not None and args.since is None:
        raise ExportError("--until needs --since")
    since, until = _moment(args.since, "--since"), _moment(args.until, "--until")
    engine_factory: Callable[[], Engine] | None = None
    journal: Path | None = args.journal
    config: TableConfig | None = None
    if args.config is not None:
        from tablectl.controller.config import load_config  # noqa: PLC0415 - only when asked for

        config = load_config(args.config)
        journal = journal or config.journal.path
        table_config = config

        def engine_factory() -> Engine:
            return build_engine(
                table_config.table.id,
                table_config.table.game,
                table_config.rules,
                source=table_config.source,
            )

    with _open_source(args, journal, config) as reader:
        if args.round is not None:
            exported = export_round(reader, args.round, engine_factory)
        elif args.all:
            exported = export_all(reader)
        else:
            exported = export_time_range(reader, since, until)
    if not exported.events:
        raise ExportError("no events in that range")
    withheld = sum(1 for e in exported.events if e.get("withheld") is True)
    if withheld:
        print(
            f"export: {withheld} card(s) in the archive were published face down (withheld):"
            " their faces are in the table's journal (export --journal), replay needs them",
            file=sys.stderr,
        )
    _write(args.out, exported.events)
    if args.records is not None:
        _write(args.records, [r.fields for r in exported.records])
    first, last = exported.events[0]["seq"], exported.events[-1]["seq"]
    print(f"export: {len(exported.events)} events, seq {first}-{last}", file=sys.stderr)
    if args.dsn is not None and args.key is None:
        print(f"export: {AUTHORSHIP_UNVERIFIED}", file=sys.stderr)
    if exported.reproduced is False:
        print(
            f"export: replaying the export with {args.config} does not reproduce the journal's"
            f" outcome of round {args.round} (rules changed since?)",
            file=sys.stderr,
        )
        return 1
    if exported.reproduced:
        print(
            f"export: replay reproduces the journal's outcome of round {args.round}",
            file=sys.stderr,
        )
    return 0


@contextlib.contextmanager
def _open_source(
    args: argparse.Namespace, journal: Path | None, config: TableConfig | None
) -> Iterator[RecordSource]:
    """The journal's files, or with ``--dsn`` the archive's records of the table."""
    if args.dsn is None:
        if args.table is not None or args.key is not None:
            raise ExportError("--table and --key go with --dsn (a journal holds one table)")
        if journal is None:
            raise ExportError("give --journal, or --config to take the journal from it")
        with JournalReader(journal) as reader:
            yield reader
        return
    if args.journal is not None:
        raise ExportError("--journal or --dsn: one source at a time")
    table = args.table or (config.table.id if config is not None else None)
    if table is None:
        raise ExportError("--dsn needs --table (or --config to take the table id from it)")
    # Lazily: psycopg is the archive extra's, and the journal export must not need it.
    from tablectl.controller.archive.reader import ArchiveReader, open_archive  # noqa: PLC0415

    key: bytes | None = None
    if args.key is not None:
        from tablectl.controller.secrets import read_journal_key  # noqa: PLC0415

        key = read_journal_key(args.key, "export --key")
    with open_archive(args.dsn) as archive:
        yield ArchiveReader(archive, table, key=key)


def _write(path: Path | None, lines: Sequence[Mapping[str, Any]]) -> None:
    if path is None or str(path) == "-":
        write_lines(sys.stdout, lines)
        return
    tmp = path.with_name(path.name + ".tmp")
    try:
        with tmp.open("w", encoding="utf-8") as stream:
            write_lines(stream, lines)
        shutil.move(tmp, path)
    except OSError as exc:
        raise ExportError(f"cannot write {path}: {exc.strerror or exc}") from None
