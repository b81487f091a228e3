"""``diag stats`` on a card table: the shuffle-randomness report as text or JSON.

The reading is :mod:`tablectl.controller.tools.diag.stats.shoes`, the tests are
:mod:`tablectl.controller.tools.diag.stats.shuffle`; this module only presents them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from tablectl.controller.tools.diag.render import table, too_few_text
from tablectl.controller.tools.diag.stats.maths import (
    FrequencyTest,
    PositionOutlier,
    PositionTest,
    RepetitionTest,
    SerialCorrelation,
)
from tablectl.controller.tools.diag.stats.shoes import ShoeWindow
from tablectl.controller.tools.diag.stats.shuffle import ShuffleReport
from tablectl.controller.tools.diag.stats.wheel import RowSource

_SHOWN_OUTLIERS = 10


@dataclass(frozen=True)
class ShuffleView:
    """What one report shows: the table, the journal, the window read and its tests."""

    table_id: str | None
    journal: Path | RowSource
    """A journal file, or one table's window of the archive (printed as it names itself)."""
    game: str | None
    window: ShoeWindow
    report: ShuffleReport
    last: int | None


def _flag(flagged: bool) -> str:
    return "FLAGGED" if flagged else "ok"


def judged(flagged: bool, needed: int, what: str = "shoes") -> str:
    """``ok``/``FLAGGED``, or "too few" for a pass on a sample under 5 expected per cell (a
    flag stays a flag, marked as resting on few shoes, or whatever ``what`` counts)."""
    if flagged:
        return "FLAGGED" + (
            f" (on few {what}: {needed} more for an expected 5 per cell)" if needed > 0 else ""
        )
    return too_few_text(needed, what) if needed > 0 else "ok"


# --- JSON ---------------------------------------------------------------------------------------


def _window_json(window: ShoeWindow, last: int | None) -> dict[str, Any]:
    first, final = (window.shoes[0], window.shoes[-1]) if window.shoes else (None, None)
    return {
        "requested_last": last,
        "shoes": len(window.shoes),
        "in_progress_skipped": window.in_progress,
        "empty_shuffles_skipped": window.empty,
        "cards_outside_a_shoe": window.outside,
        "invalid_records": window.invalid,
        "first": None if first is None else {"shuffle_seq": first.shuffle_seq, "ts": first.ts},
        "last": None if final is None else {"shuffle_seq": final.shuffle_seq, "ts": final.ts},
    }


def _outlier_json(outlier: PositionOutlier) -> dict[str, Any]:
    return {
        "position": outlier.position,
        "most_frequent": outlier.category,
        "count": outlier.count,
        "shoes": outlier.shoes,
        "p_value": outlier.p_value,
    }


def _position_json(test: PositionTest | None) -> dict[str, Any] | None:
    if test is None:
        return None
    return {
        "positions": test.positions,
        "shoes": test.shoes,
        "chi_square": test.chi_square,
        "dof": test.dof,
        "p_value": test.p_value,
        "alpha": test.alpha,
        "outlier_alpha": test.outlier_alpha,
        "outliers": [_outlier_json(o) for o in test.outliers],
        "least_uniform": None if test.least_p is None else _outlier_json(test.least_p),
        "sum_flagged": test.sum_flagged,
        "flagged": test.flagged,
        "verdict": test.sum_verdict,
        "needed": test.needed,
        "position_chi_square": list(test.position_chi),
        "position_shoes": list(test.position_shoes),
    }


def frequency_json(test: FrequencyTest | None) -> dict[str, Any] | None:
    if test is None:
        return None
    return {
        "n": test.n,
        "chi_square": test.chi_square,
        "dof": test.dof,
        "p_value": test.p_value,
        "alpha": test.alpha,
        "sigma": test.sigma,
        "frequencies": [
            {
                "value": f.number,
                "count": f.count,
                "expected": f.expected,
                "z": f.z,
                "flagged": f.flagged,
            }
            for f in test.frequencies
        ],
        "flagged": test.flagged,
        "verdict": test.chi_verdict,
        "needed": test.needed,
    }


def model_json(label: str | None, test: FrequencyTest | None) -> dict[str, Any] | None:
    """A results test with the model it tests against."""
    return None if test is None else {"model": label, **(frequency_json(test) or {})}


def _serial_json(serial: SerialCorrelation | None) -> dict[str, Any] | None:
    if serial is None:
        return None
    return {"r": serial.r, "z": serial.z, "p_value": serial.p_value, "flagged": serial.flagged}


def _repetition_json(test: RepetitionTest | None) -> dict[str, Any] | None:
    if test is None:
        return None
    return {
        "matches": test.matches,
        "compared": test.compared,
        "rate": test.rate,
        "expected": test.expected,
        "z": test.z,
        "p_value": test.p_value,
        "flagged": test.flagged,
    }


def shuffle_json(view: ShuffleView) -> dict[str, Any]:
    """The whole report as one JSON document (``diag stats --json`` on a card table)."""
    report = view.report
    lengths = report.lengths
    return {
        "table": view.table_id,
        "journal": str(view.journal),
        "kind": "shuffle",
        "game": view.game,
        "window": _window_json(view.window, view.last),
        "shuffle_stats": {
            "shoes": report.shoes,
            "cards": report.cards,
            "unreadable": report.unreadable,
            "jokers": report.jokers,
            "cards_per_shoe": None
            if lengths is None
            else {"min": lengths[0], "median": lengths[1], "max": lengths[2]},
            "alpha": report.alpha,
            "supplementary_alpha": report.supplementary_alpha,
            "sigma": report.sigma,
            "rank_by_position": _position_json(report.rank_by_position),
            "suit_by_position": _position_json(report.suit_by_position),
            "first_card": {
                "rank": frequency_json(report.first_rank),
                "suit": frequency_json(report.first_suit),
            },
            "serial_correlation": _serial_json(report.serial),
            "repetition": _repetition_json(report.repetition),
            "results": model_json(report.results_label, report.results),
            "tests": report.tests,
            "notes": list(report.notes),
            "flagged": report.flagged,
        },
    }


# --- text ---------------------------------------------------------------------------------------


def _outlier_text(outlier: PositionOutlier) -> str:
    return (
        f"{outlier.position} ({outlier.category} {outlier.count} of {outlier.shoes}, "
        f"p {outlier.p_value:.1e})"
    )


def _position_text(out: TextIO, what: str, test: PositionTest | None) -> None:
    label = f"{what} by position"
    if test is None:
        return
    if test.positions == 0:
        out.write(f"  {label}: no position reached by enough shoes\n")
        return
    out.write(
        f"  {label}: chi-square = {test.chi_square:.1f} with {test.dof} dof, "
        f"p = {test.p_value:.4f} (risk level {test.alpha:.3g})  "
        f"{judged(test.sum_flagged, test.needed)}\n"
    )
    limit = f"p < {test.outlier_alpha:.3g}/{test.positions}"
    if test.outliers:
        shown = ", ".join(_outlier_text(o) for o in test.outliers[:_SHOWN_OUTLIERS])
        more = len(test.outliers) - _SHOWN_OUTLIERS
        out.write(
            f"    positions where one {what} came up too often ({limit}): "
            f"{shown}{' and more' if more > 0 else ''}  FLAGGED\n"
        )
    elif test.least_p is not None:
        out.write(
            f"    least uniform position: {_outlier_text(test.least_p)}; none beyond {limit}\n"
        )


def frequency_text(
    out: TextIO, label: str, test: FrequencyTest, *, rows: bool, what: str = "shoes"
) -> None:
    out.write(
        f"  {label}: chi-square = {test.chi_square:.2f} with {test.dof} dof, "
        f"p = {test.p_value:.4f} (n = {test.n})  {judged(test.flagged, test.needed, what)}\n"
    )
    beyond = test.flagged_categories
    if beyond:
        listed = ", ".join(f"{f.number} ({f.count}, z {f.z:+.1f})" for f in beyond)
        out.write(f"    beyond {test.sigma:g} sigma: {listed}\n")
    if rows:
        cells = [
            (f.number, f.count, f"{f.expected:.1f}", f"{f.z:+.2f}", "FLAG" if f.flagged else "")
            for f in test.frequencies
        ]
        body = table(("", "count", "expected", "z", ""), cells, right="123")
        out.write("".join(f"    {line}\n" for line in body.splitlines()))


def _too_few_overall(report: ShuffleReport) -> str:
    """What is too small to trust in a window with no flag: the largest shortfall."""
    needs = {
        name: test.needed
        for name, test in (
            ("rank_by_position", report.rank_by_position),
            ("suit_by_position", report.suit_by_position),
        )
        if test is not None and test.positions > 0
    } | {
        name: test.needed
        for name, test in (
            ("first_card_rank", report.first_rank),
            ("first_card_suit", report.first_suit),
        )
        if test is not None
    }
    short = {name: n for name, n in needs.items() if n > 0}
    if not short:
        return ""
    return (
        f", but too few shoes to trust {', '.join(short)} "
        f"({max(short.values())} more needed for an expected 5 per cell)"
    )


def render_shuffle(out: TextIO, view: ShuffleView) -> None:
    """The report for a technician (``diag stats`` on a card table)."""
    table_id, journal, game = view.table_id, view.journal, view.game
    window, report, last = view.window, view.report, view.last
    out.write(f"shuffle randomness, table {table_id or '-'} ({game or 'card game'}), ")
    out.write(f"journal {journal}\n" if isinstance(journal, Path) else f"{journal}\n")
    span = f"last {last}" if last is not None else "all"
    out.write(f"window: {span} dealt shoes: {len(window.shoes)}")
    if window.shoes:
        first, final = window.shoes[0], window.shoes[-1]
        out.write(f" (shuffles at seq {first.shuffle_seq} .. {final.shuffle_seq}, ")
        out.write(f"{first.ts} .. {final.ts})")
    out.write(
        f"; skipped {window.in_progress} shoe in progress, {window.empty} empty shuffle(s), "
        f"{window.outside} card(s) before any shuffle\n"
    )
    if not window.shoes:
        out.write("no dealt shoe in the journal window: nothing to test\n")
        out.flush()
        return
    if report.lengths is not None:
        low, median, high = report.lengths
        out.write(
            f"cards: {report.cards} ({low} .. {high} per shoe, median {median:g}); "
            f"{report.jokers} joker(s), {report.unreadable} unreadable left out of the tallies\n"
        )
    out.write(
        f"risk level {report.alpha:g} for R5's chi-square (rank by position), "
        f"{report.supplementary_alpha:.3g} for each supplementary test (Bonferroni)\n"
    )
    rank, suit = report.rank_by_position, report.suit_by_position
    if rank is not None and suit is not None:
        out.write(
            f"card at each position against uniform ({rank.positions} positions reached by "
            f"at least half of the {report.shoes} shoes):\n"
        )
        _position_text(out, "rank", rank)
        _position_text(out, "suit", suit)
    if report.first_rank is not None and report.first_suit is not None:
        out.write("first card of each shoe:\n")
        frequency_text(out, "rank", report.first_rank, rows=True)
        frequency_text(out, "suit", report.first_suit, rows=False)
    serial = report.serial
    if serial is None:
        out.write("lag-1 serial correlation of ranks within a shoe: not enough cards\n")
    else:
        out.write(
            f"lag-1 serial correlation of ranks within a shoe: r = {serial.r:+.4f}, "
            f"z = {serial.z:+.2f}, p = {serial.p_value:.4f}  {_flag(serial.flagged)}\n"
        )
    repetition = report.repetition
    if repetition is not None:
        out.write(
            f"same card at the same position as the previous shoe: {repetition.matches} of "
            f"{repetition.compared}, expected {repetition.expected:.1f} "
            f"(1 in {1 / repetition.rate:.1f}), z = {repetition.z:+.2f}, "
            f"p = {repetition.p_value:.4f}  {_flag(repetition.flagged)}\n"
        )
    if report.results is not None:
        out.write(f"results against theory ({report.results_label}):\n")
        frequency_text(out, "winners", report.results, rows=True)
    for note in report.notes:
        out.write(f"note: {note}\n")
    tests = report.tests
    flagged = [name for name, is_flagged in tests.items() if is_flagged]
    if flagged:
        out.write(
            f"overall: FLAGGED ({len(flagged)} of {len(tests)} tests: {', '.join(flagged)}): "
            "look at this shuffler (and at the shoe's handling)\n"
        )
    else:
        out.write(f"overall: no test flagged ({len(tests)} tests){_too_few_overall(report)}\n")
    out.flush()
