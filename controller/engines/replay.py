"""``tablectl replay``: re-validate a stream of normalized events, offline.

The same engine that ran live runs here over a JSONL file (contracts §4.4), so a disputed round is
judged by the same rules. No broker, no device, no journal. One outcome per line on stdout; bad
lines and verdicts go to stderr with their line number and never stop the replay.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from tablectl.controller.core.errors import EventFormatError
from tablectl.controller.core.events import event_from_json
from tablectl.controller.core.outcomes import Outcome, ShoeReport, Verdict
from tablectl.controller.engines import Engine


@dataclass
class ReplayReport:
    """Counts of what a replay saw."""

    events: int = 0
    outcomes: int = 0
    verdicts: int = 0
    errors: int = 0


def replay_lines(
    engine: Engine, lines: Iterable[str], report: ReplayReport
) -> Iterator[tuple[int, Outcome | Verdict | ShoeReport | EventFormatError]]:
    """Feed each non-blank line to ``engine``; yield ``(line_number, conclusion or error)``."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            event = event_from_json(line)
        except EventFormatError as exc:
            report.errors += 1
            yield number, exc
            continue
        report.events += 1
        for output in engine.apply(event):
            if isinstance(output, Outcome):
                report.outcomes += 1
            elif isinstance(output, Verdict):
                report.verdicts += 1
            yield number, output


def run_replay(engine: Engine, source: TextIO, out: TextIO, err: TextIO) -> ReplayReport:
    """Print outcomes as JSON lines to ``out``; verdicts and errors to ``err``."""
    report = ReplayReport()
    for number, item in replay_lines(engine, source, report):
        if isinstance(item, Outcome):
            out.write(json.dumps(item.to_payload(), separators=(",", ":")) + "\n")
        elif isinstance(item, Verdict):
            payload: dict[str, Any] = {"line": number, "verdict": item.to_payload()}
            err.write(json.dumps(payload, separators=(",", ":")) + "\n")
        elif isinstance(item, ShoeReport):
            shoe_end = {"line": number, "shoe_end": item.to_payload()}
            err.write(json.dumps(shoe_end, separators=(",", ":")) + "\n")
        else:
            err.write(f"line {number}: {item}\n")
    return report
