"""``diag stats``: wheel bias from the journal (read-only) and, if asked, from the wheel itself.

The journal is the source of truth and needs no device; opened ``mode=ro``, it can be read while
the table runs. Only ``settled`` roulette outcomes count. The wheel's own figures need the serial
port the service holds; asking then fails after the journal's statistics are shown.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from tablectl.controller.games.roulette import VARIANTS, Variant, pockets, wheel_order
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.stats.maths import BiasReport, analyse_counts, analyse_spins

Pocket = int | str


@dataclass(frozen=True)
class Spin:
    """One settled outcome from the journal."""

    seq: int
    round: str | None
    ts: str | None
    number: Pocket


@dataclass(frozen=True)
class Window:
    """The spins a report covers, and how many outcomes were left out and why."""

    spins: tuple[Spin, ...]
    voids: int = 0
    invalid: int = 0


def ordered_pockets(variant: Variant) -> list[Pocket]:
    """0–36 (and ``"00"`` last on an american wheel): the order reports list numbers in."""
    every = pockets(variant)
    return sorted((p for p in every if isinstance(p, int)), key=int) + (
        ["00"] if "00" in every else []
    )


def connect_read_only(path: Path) -> sqlite3.Connection:
    """The journal at ``path``, opened read-only (see the module docstring).

    Raises:
        DiagError: the file is missing or is not a journal.
    """
    if not path.is_file():
        raise DiagError(f"{path}: no such journal file")
    uri = path.resolve().as_uri() + "?mode=ro"
    try:
        conn = sqlite3.connect(uri, uri=True)
        conn.execute("SELECT 1 FROM records LIMIT 1").fetchall()
        return conn
    except sqlite3.Error as first:
        # A WAL journal in a directory we may not write to (a copy, a sandboxed state dir)
        # cannot get its -shm index; immutable=1 reads it without one. Only a fallback: it
        # does not see the service's newest, not yet checkpointed, appends.
        try:
            conn = sqlite3.connect(uri + "&immutable=1", uri=True)
            conn.execute("SELECT 1 FROM records LIMIT 1").fetchall()
            return conn
        except sqlite3.Error:
            raise DiagError(f"{path}: cannot read journal: {first}") from None


class RowSource(Protocol):
    """Where the statistics read a table's records: its journal file (:class:`JournalRows`) or
    the floor's archive (:class:`tablectl.controller.archive.reader.ArchiveReader`, one table
    and a time window). The maths and the readings (spins, shoes) are the same for both."""

    @property
    def table(self) -> str | None:
        """The table's id when the source knows it (the archive does; a journal file alone
        names it only inside its records)."""
        ...

    def rows(self, types: Sequence[str]) -> Iterator[tuple[int, str, str]]:
        """``(seq, type, body)`` of the records of ``types``, newest first."""
        ...


class JournalRows:
    """A journal file as a :class:`RowSource`, opened read-only for each reading."""

    table: str | None = None

    def __init__(self, path: Path) -> None:
        self.path = path

    def __str__(self) -> str:
        return str(self.path)

    def rows(self, types: Sequence[str]) -> Iterator[tuple[int, str, str]]:
        """See :class:`RowSource`.

        Raises:
            DiagError: the file is missing or is not a journal.
        """
        conn = connect_read_only(self.path)
        marks = ",".join("?" * len(types))
        try:
            cursor = conn.execute(
                f"SELECT seq, type, body FROM records WHERE type IN ({marks})"  # noqa: S608 - ?s
                " ORDER BY seq DESC",
                tuple(types),
            )
            for seq, kind, body in cursor:
                yield int(seq), str(kind), str(body)
        except sqlite3.Error as exc:
            raise DiagError(f"{self.path}: cannot read journal: {exc}") from None
        finally:
            conn.close()


def row_source(source: Path | RowSource) -> RowSource:
    """A journal path as its :class:`JournalRows`; any other source as it is."""
    return JournalRows(source) if isinstance(source, Path) else source


def read_spins(source: Path | RowSource, variant: Variant, *, last: int | None = None) -> Window:
    """The last ``last`` (all when ``None``) settled outcomes of ``source``, oldest first.

    Raises:
        DiagError: the file is missing or is not a journal.
    """
    valid = pockets(variant)
    spins: list[Spin] = []
    voids = invalid = 0
    rows = row_source(source).rows(("outcome",))
    try:
        for seq, _kind, body in rows:
            if last is not None and len(spins) >= last:
                break
            try:
                record = json.loads(body)
            except ValueError:
                invalid += 1
                continue
            if not isinstance(record, dict) or record.get("game", "roulette") != "roulette":
                continue
            if record.get("status") != "settled":
                voids += 1
                continue
            result = record.get("result")
            number = result.get("number") if isinstance(result, dict) else None
            if isinstance(number, bool) or number not in valid:
                invalid += 1
                continue
            spins.append(Spin(int(seq), record.get("round"), record.get("ts"), number))
    finally:
        if isinstance(rows, Generator):
            rows.close()  # a journal's connection closes now, not when collected
    spins.reverse()
    return Window(tuple(spins), voids, invalid)


def wheel_report(
    window: Window, variant: Variant, *, alpha: float = 0.025, sigma: float = 3.0
) -> BiasReport:
    """The bias report of a journal window (frequencies, χ², serial correlation)."""
    return numbers_report([s.number for s in window.spins], variant, alpha=alpha, sigma=sigma)


def numbers_report(
    numbers: Sequence[Pocket], variant: Variant, *, alpha: float = 0.025, sigma: float = 3.0
) -> BiasReport:
    """The same report from the winning numbers alone, oldest first: for a reader of the
    published outcomes (the dashboard) rather than of the journal."""
    return analyse_spins(
        numbers,
        ordered_pockets(variant),
        wheel_order=wheel_order(variant),
        alpha=alpha,
        sigma=sigma,
    )


def device_report(
    counts: dict[Pocket, int], variant: Variant, *, alpha: float = 0.025, sigma: float = 3.0
) -> BiasReport:
    """The same tests on the wheel's own ``*W`` table (counts only: no serial correlation)."""
    return analyse_counts(counts, ordered_pockets(variant), alpha=alpha, sigma=sigma)


def check_variant(name: str) -> Variant:
    """A ``[rules] variant`` value as a :data:`Variant`."""
    for variant in VARIANTS:
        if variant == name:
            return variant
    raise DiagError(f"unknown roulette variant {name!r} (one of {', '.join(VARIANTS)})")
