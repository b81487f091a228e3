"""The shoes of a card table's journal, for ``diag stats``: a reading of the journal, not a
statistic.

A shoe is the cards between a ``shuffle_completed`` and the next shuffle (position 1 the first
card, the burn card included; face-down cards are journaled in full). A shoe still being dealt is
not counted, so "the last N shoes" does not change mid-shoe; cards before the first shuffle read
have no known position and are left out.
"""

from __future__ import annotations

import json
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tablectl.controller.tools.diag.stats.wheel import RowSource, row_source

_TYPES: Final = ("card", "shuffle_started", "shuffle_completed", "shoe_end", "outcome")


@dataclass(frozen=True)
class Shoe:
    """One shuffle's cards as the journal has them, in the order they came out."""

    shuffle_seq: int
    ts: str | None
    cards: tuple[str, ...]
    results: tuple[str, ...] = ()
    """The winners of the settled rounds dealt from this shoe (``banker``, ``dragon``, …)."""
    voids: int = 0
    shuffler_count: int | None = None


@dataclass(frozen=True)
class ShoeWindow:
    """The shoes a report covers, and what was left out (the shoe in progress, empty shuffles, cards
    before any shuffle)."""

    shoes: tuple[Shoe, ...]
    in_progress: int = 0
    empty: int = 0
    outside: int = 0
    invalid: int = 0
    game: str | None = None


@dataclass
class _Building:
    seq: int
    ts: str | None
    count: int | None
    cards: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)
    voids: int = 0
    ended: bool = False

    def freeze(self) -> Shoe:
        return Shoe(
            self.seq, self.ts, tuple(self.cards), tuple(self.results), self.voids, self.count
        )


def _rows(source: RowSource, last: int | None) -> list[tuple[int, str, str]]:
    """The records that matter, oldest first; with ``last``, only back to the shuffle that
    starts the oldest shoe needed (plus one, for a shoe in progress)."""
    rows: list[tuple[int, str, str]] = []
    dealt = 0
    shoes = 0
    cursor = source.rows(_TYPES)
    for seq, kind, body in cursor:
        rows.append((seq, kind, body))
        if kind == "card":
            dealt += 1
        elif kind == "shuffle_started":
            dealt = 0
        elif kind == "shuffle_completed":
            shoes += dealt > 0
            dealt = 0
            if last is not None and shoes > last:
                break
    if isinstance(cursor, Generator):
        cursor.close()  # a journal's connection closes now, not when collected
    rows.reverse()
    return rows


def read_shoes(source: Path | RowSource, *, last: int | None = None) -> ShoeWindow:
    """The last ``last`` (all when ``None``) dealt shoes of ``source``, oldest first."""
    rows = _rows(row_source(source), last)
    parser = _ShoeParser()
    for seq, kind, body in rows:
        parser.feed(seq, kind, body)
    return parser.window(last)


def shoes_from_records(
    records: Iterable[Mapping[str, Any]], *, last: int | None = None
) -> ShoeWindow:
    """The same reading of records already decoded, in ``seq`` order: the dashboard's, from the
    published ``events`` (where a face-down card is withheld: ``"card": null``, so it keeps its
    position and is left out of the tallies like any code that is no card). Records of other
    types are ignored.
    """
    parser = _ShoeParser()
    for record in records:
        kind, seq = record.get("type"), record.get("seq")
        if kind in _TYPES and isinstance(seq, int):
            parser.feed_record(seq, str(kind), record)
    return parser.window(last)


class _ShoeParser:
    """Journal records in ``seq`` order → shoes (see the module docstring)."""

    def __init__(self) -> None:
        self.shoes: list[Shoe] = []
        self.empty = self.outside = self.invalid = 0
        self.game: str | None = None
        self.current: _Building | None = None

    def _close(self) -> None:
        shoe, self.current = self.current, None
        if shoe is None:
            return
        if shoe.cards:
            self.shoes.append(shoe.freeze())
        else:
            self.empty += 1

    def feed(self, seq: int, kind: str, body: str) -> None:
        try:
            record = json.loads(body)
        except ValueError:
            record = None
        if not isinstance(record, dict):
            self.invalid += 1
            return
        self.feed_record(seq, kind, record)

    def feed_record(self, seq: int, kind: str, record: Mapping[str, Any]) -> None:
        if kind in ("shuffle_started", "shuffle_completed"):
            self._close()
            if kind == "shuffle_completed":
                ts, count = record.get("ts"), record.get("cards")
                self.current = _Building(
                    seq,
                    ts if isinstance(ts, str) else None,
                    count if isinstance(count, int) and not isinstance(count, bool) else None,
                )
        elif kind == "shoe_end":
            if self.current is not None:
                self.current.ended = True
        elif kind == "card":
            code = record.get("card")
            if self.current is None:
                self.outside += 1
            else:
                self.current.cards.append(code if isinstance(code, str) else "")
        elif kind == "outcome":
            if isinstance(record.get("game"), str):
                self.game = record["game"]
            if self.current is not None:
                _add_outcome(self.current, record)

    def window(self, last: int | None) -> ShoeWindow:
        in_progress = 0
        if self.current is not None and not self.current.ended:
            in_progress = 1
            self.current = None
        self._close()
        shoes = self.shoes if last is None else self.shoes[-last:] if last > 0 else []
        return ShoeWindow(
            tuple(shoes), in_progress, self.empty, self.outside, self.invalid, self.game
        )


def _add_outcome(shoe: _Building, record: Mapping[str, Any]) -> None:
    if record.get("status") == "void":
        shoe.voids += 1
        return
    result = record.get("result")
    winner = result.get("winner") if isinstance(result, dict) else None
    if record.get("status") == "settled" and isinstance(winner, str):
        shoe.results.append(winner)


def _newest(source: RowSource, types: tuple[str, ...]) -> tuple[int, str, str] | None:
    rows = source.rows(types)
    try:
        return next(iter(rows), None)
    finally:
        if isinstance(rows, Generator):
            rows.close()


def journal_game(source: Path | RowSource) -> str | None:
    """What the table plays, without ``--config``: the newest outcome's ``game``; else ``"cards"``
    when it holds shuffles or cards; else ``None``."""
    rows = row_source(source)
    row = _newest(rows, ("outcome",))
    if row is not None:
        try:
            game = json.loads(row[2]).get("game")
        except (ValueError, AttributeError):
            game = None
        if isinstance(game, str):
            return game
    return "cards" if _newest(rows, ("shuffle_completed", "card")) is not None else None
