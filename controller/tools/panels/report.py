"""The demo's exit summary, one line a table (pure):
``ROU-DEMO roulette: 12 rounds, 1 void (same_direction), no fault; journal demo-journals/…``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tablectl.controller.tools.panels.model import TableTally


def tally_line(tally: TableTally, journal: Path | None = None) -> str:
    """One table's line: rounds, voids with their codes, faults raised, its journal."""
    rounds = f"{tally.outcomes} round{'s' if tally.outcomes != 1 else ''}"
    voids = sum(tally.voids.values())
    void_text = "no void" if not voids else f"{voids} void{'s' if voids > 1 else ''}"
    if voids:
        void_text += f" ({_counted(tally.voids)})"
    faults = sum(tally.faults.values())
    fault_text = "no fault" if not faults else f"{faults} fault{'s' if faults > 1 else ''}"
    if faults:
        fault_text += f" ({_counted(tally.faults)})"
    game = f" {tally.game}" if tally.game else ""
    line = f"{tally.table}{game}: {rounds}, {void_text}, {fault_text}"
    return f"{line}; journal {journal}" if journal is not None else line


def tally_lines(tallies: Sequence[TableTally], journals: Mapping[str, Path]) -> list[str]:
    """A line per table of ``journals`` (in its order), then any other table seen."""
    by_table = {tally.table: tally for tally in tallies}
    lines = [
        tally_line(by_table.get(table) or TableTally(table, ""), path)
        for table, path in journals.items()
    ]
    lines += [tally_line(t) for t in tallies if t.table not in journals]
    return lines


def _counted(counts: Mapping[str, int]) -> str:
    return ", ".join(code if n == 1 else f"{code} ×{n}" for code, n in sorted(counts.items()))
