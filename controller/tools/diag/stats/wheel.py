"""``diag stats``: wheel bias from the journal (read-only) and, if asked, from the wheel itself.

Why the journal: it is the source of truth, it holds every settled outcome, and reading it needs
no device, so the statistics can be read while the table runs. The file is opened through a
``mode=ro`` URI: a technician's query can never write to a regulated log, and SQLite's WAL
mode lets it read while the service appends. Only ``settled`` roulette outcomes count (a void
spin has no number a wheel could be biased towards).

The wheel's own figures (SS2 ``*w`` chi-square, ``*W`` winning-number table) need the serial
port, which the running service holds exclusively; asking for them then fails with a message
saying so, after the journal statistics have been shown.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.games.roulette import VARIANTS, Variant, pockets, wheel_order
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.stats.maths import BiasReport, analyse_counts, analyse_spins

__all__ = [
    "Spin",
    "Window",
    "check_variant",
    "connect_read_only",
    "device_report",
    "ordered_pockets",
    "read_spins",
    "wheel_report",
]

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


def read_spins(path: Path, variant: Variant, *, last: int | None = None) -> Window:
    """The last ``last`` (all when ``None``) settled outcomes of ``path``, oldest first.

    Raises:
        DiagError: the file is missing or is not a journal.
    """
    valid = pockets(variant)
    spins: list[Spin] = []
    voids = invalid = 0
    conn = connect_read_only(path)
    try:
        cursor = conn.execute(
            "SELECT seq, body FROM records WHERE type = 'outcome' ORDER BY seq DESC"
        )
        for seq, body in cursor:
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
    except sqlite3.Error as exc:
        raise DiagError(f"{path}: cannot read journal: {exc}") from None
    finally:
        conn.close()
    spins.reverse()
    return Window(tuple(spins), voids, invalid)


def wheel_report(
    window: Window, variant: Variant, *, alpha: float = 0.025, sigma: float = 3.0
) -> BiasReport:
    """The bias report of a journal window (frequencies, χ², serial correlation)."""
    return analyse_spins(
        [s.number for s in window.spins],
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
