"""``diag stats --by dealer``: per dealer, the rounds dealt and their pace, voids, misdeals, manual
entries and deal errors, and each game's results against theory (R17: trends by staff).

Read from a journal or from the archive's verified records like the other reports, tested with
:mod:`.maths`; what "on duty", "pace" and "manual entry" mean is docs/station.md "Statistics by
staff". A staff event the table refused (its verdict follows it) changed nobody's duty.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
from collections import Counter
from collections.abc import Generator, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final, TextIO

from tablectl.controller.core.crew import DEALER_CHANGE_MID_ROUND, NOT_ON_DUTY
from tablectl.controller.core.events import EVENT_TYPES
from tablectl.controller.core.time import format_moment, parse_ts
from tablectl.controller.games.roulette import VARIANTS, Variant, pockets, wheel_order
from tablectl.controller.tools.diag.errors import DiagError
from tablectl.controller.tools.diag.render import emit_json, table
from tablectl.controller.tools.diag.stats.maths import FrequencyTest, frequency_test
from tablectl.controller.tools.diag.stats.plots import Bar, Chart
from tablectl.controller.tools.diag.stats.shuffle import MIN_EXPECTED, result_model
from tablectl.controller.tools.diag.stats.shuffle_report import (
    frequency_json,
    frequency_text,
    model_json,
)
from tablectl.controller.tools.diag.stats.wheel import (
    Pocket,
    RowSource,
    check_variant,
    ordered_pockets,
    row_source,
)

if TYPE_CHECKING:
    from tablectl.controller.tools.diag.stats.command import StatsRequest

PROCEDURES: Final = frozenset(
    {
        "round_open",
        "bets_closed",
        "confirm",
        "staff_on",
        "staff_off",
        "void",
        "fault_cleared",
        "deal_error",
    }
)
"""Events keyed in by hand that are no reading a device missed: the station's routine actions,
a supervisor's void or fault clear, and deal errors (counted on their own)."""

_REFUSALS: Final = frozenset({DEALER_CHANGE_MID_ROUND, NOT_ON_DUTY})
_TYPES: Final = (*EVENT_TYPES, "outcome", "verdict")
RATES: Final = ("voids", "misdeals", "manual", "deal_errors")
RATE_TEST: Final = "poisson_z_vs_floor_rate"
"""A dealer's count against their rounds times the floor's rate (every dealer's count over
every dealer's rounds): z = (count - expected) / sqrt(expected), judged where 5 are expected."""


@dataclass
class DealerTally:
    """What one dealer (``None``: rounds opened with nobody on duty) did in the reading."""

    person: str | None
    name: str | None = None
    tables: set[str] = field(default_factory=set)
    rounds: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    """Of each of :data:`RATES`: voids, misdeals, manual entries, deal errors."""
    duty: float = 0.0
    """Seconds on duty as a dealer (docs/station.md)."""
    results: dict[tuple[str, str], Counter[Pocket]] = field(default_factory=dict)
    """``(game, variant)`` → settled results: a roulette number, a card game's winner."""

    @property
    def pace(self) -> float | None:
        """Rounds per hour on duty (``None``: no time on duty read)."""
        return self.rounds * 3600 / self.duty if self.duty > 0 else None

    def per_100(self, what: str) -> float | None:
        count = self.counts[what]
        return 100 * count / self.rounds if self.rounds else None


@dataclass
class _Stint:
    person: str
    start: datetime
    last: datetime | None = None
    """Its newest round's outcome: where a stint still open at the end of the reading ends."""


class DutyReader:
    """Tables' records, each table in ``seq`` order, into :class:`DealerTally` per dealer."""

    def __init__(self, variant: Variant) -> None:
        self.variant = variant
        self.tallies: dict[str | None, DealerTally] = {}
        self.tables: set[str] = set()
        self._stint: _Stint | None = None

    def tally(self, person: str | None) -> DealerTally:
        return self.tallies.setdefault(person, DealerTally(person))

    def read(self, source: RowSource) -> None:
        self._stint = None
        pending: tuple[int, str, Mapping[str, Any]] | None = None
        for seq, kind, record in _records(source):
            if isinstance(record.get("table"), str):
                self.tables.add(record["table"])
            if kind == "verdict":
                data = record.get("data")
                event = data.get("event") if isinstance(data, dict) else None
                if pending and seq == pending[0] + 1 and event == pending[1]:
                    pending = None  # refused: nobody's duty changed
                continue
            if pending is not None:
                self._staff(pending[1], pending[2])
                pending = None
            if kind in ("staff_on", "staff_off"):
                if record.get("role") == "dealer" and isinstance(record.get("person"), str):
                    pending = (seq, kind, record)
            elif kind == "outcome":
                self._outcome(record)
            elif kind == "deal_error":
                self.tally(self._on_duty()).counts["deal_errors"] += 1
            elif record.get("manual") is True and kind not in PROCEDURES:
                self.tally(self._on_duty()).counts["manual"] += 1
        if pending is not None:
            self._staff(pending[1], pending[2])
        if self._stint is not None:
            self._close(self._stint.last or self._stint.start)

    def _on_duty(self) -> str | None:
        return None if self._stint is None else self._stint.person

    def _close(self, at: datetime) -> None:
        stint, self._stint = self._stint, None
        if stint is not None:
            self.tally(stint.person).duty += max(0.0, (at - stint.start).total_seconds())

    def _staff(self, kind: str, record: Mapping[str, Any]) -> None:
        person, ts = record["person"], parse_ts(record.get("ts"))
        if ts is None:
            return
        if kind == "staff_off":
            if self._on_duty() == person:
                self._close(ts)
            return
        if isinstance(record.get("name"), str):
            self.tally(person).name = record["name"]
        if self._on_duty() != person:
            self._close(ts)  # a dealer change: the previous dealer's stint ends here
            self._stint = _Stint(person, ts)

    def _outcome(self, record: Mapping[str, Any]) -> None:
        dealer = record.get("dealer") if isinstance(record.get("dealer"), str) else None
        tally = self.tally(dealer)
        tally.rounds += 1
        if isinstance(record.get("table"), str):
            tally.tables.add(record["table"])
        ts = parse_ts(record.get("ts"))
        if dealer is not None and ts is not None:
            if self._stint is None:  # the reading starts in their stint (a window, a rotation)
                self._stint = _Stint(dealer, ts)
            if self._stint.person == dealer:
                self._stint.last = ts
        if record.get("status") == "void":
            tally.counts["voids"] += 1
            tally.counts["misdeals"] += record.get("reason") == "misdeal"
        elif record.get("status") == "settled":
            self._result(tally, record)

    def _result(self, tally: DealerTally, record: Mapping[str, Any]) -> None:
        game, result = record.get("game"), record.get("result")
        if not isinstance(game, str) or not isinstance(result, dict):
            return
        if game == "roulette":
            named = result.get("variant")
            variant = next((v for v in VARIANTS if v == named), self.variant)
            number = result.get("number")
            if not isinstance(number, bool) and number in pockets(variant):
                tally.results.setdefault((game, variant), Counter())[number] += 1
        elif isinstance(result.get("winner"), str):
            tally.results.setdefault((game, ""), Counter())[result["winner"]] += 1


def _records(source: RowSource) -> list[tuple[int, str, Mapping[str, Any]]]:
    """The records that matter, oldest first: staff events, outcomes, refusals of staff events,
    deal errors and manual events (the bulk of a card table's journal, its cards, is skipped
    before it is parsed)."""
    kept: list[tuple[int, str, Mapping[str, Any]]] = []
    rows = source.rows(_TYPES)
    try:
        for seq, kind, body in rows:
            if kind == "verdict" and not any(code in body for code in _REFUSALS):
                continue
            if kind in PROCEDURES - {"staff_on", "staff_off", "deal_error"}:
                continue
            if kind not in ("outcome", "verdict", "staff_on", "staff_off", "deal_error") and (
                '"manual"' not in body
            ):
                continue
            try:
                record = json.loads(body)
            except ValueError:
                continue
            if isinstance(record, dict):
                kept.append((seq, kind, record))
    finally:
        if isinstance(rows, Generator):
            rows.close()
    kept.reverse()
    return kept


# --- the tests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RateTest:
    """One dealer's count of one kind against the floor's rate (:data:`RATE_TEST`)."""

    what: str
    count: int
    rounds: int
    floor_per_100: float
    expected: float
    z: float | None
    """``None``: fewer than :data:`MIN_EXPECTED` expected, not judged."""
    flagged: bool


@dataclass(frozen=True)
class GameResults:
    """One dealer's settled results of one game against theory."""

    game: str
    variant: str | None
    """A roulette wheel's (its numbers and sectors are tested); ``None``: a card game's."""
    rounds: int
    alpha: float
    """Each test's risk level: the report's over the dealers who played the game."""
    tests: Mapping[str, FrequencyTest] = field(default_factory=dict)
    """A wheel's ``numbers`` and ``sectors``; a card game's ``results`` (its winners against
    :func:`.shuffle.result_model`, named ``model``)."""
    model: str | None = None

    @property
    def flagged(self) -> bool:
        return any(t.flagged for t in self.tests.values())


_LABELS: Final = {"numbers": "numbers", "sectors": "wheel sectors", "results": "results"}


@dataclass(frozen=True)
class DealerReport:
    tally: DealerTally
    rates: tuple[RateTest, ...]
    games: tuple[GameResults, ...]

    @property
    def flags(self) -> list[str]:
        """What is flagged, each with the test that flagged it."""
        found = [f"{r.what} per 100 rounds ({RATE_TEST})" for r in self.rates if r.flagged]
        for g in self.games:
            name = g.game + (f" {g.variant}" if g.variant else "")
            found += [
                f"{name} {_LABELS[what]} (chi-square / {test.sigma:g} sigma)"
                for what, test in g.tests.items()
                if test.flagged
            ]
        return found


def _rates(tally: DealerTally, floor: Iterable[DealerTally], sigma: float) -> list[RateTest]:
    dealers = [t for t in floor if t.person is not None]
    rounds = sum(t.rounds for t in dealers)
    tests = []
    for what in RATES:
        total = sum(t.counts[what] for t in dealers)
        rate = total / rounds if rounds else 0.0
        count = tally.counts[what]
        expected = tally.rounds * rate
        judged = len(dealers) > 1 and expected >= MIN_EXPECTED
        z = (count - expected) / math.sqrt(expected) if judged else None
        flagged = z is not None and abs(z) > sigma
        tests.append(RateTest(what, count, tally.rounds, 100 * rate, expected, z, flagged))
    return tests


def sectors(variant: Variant, size: int) -> list[tuple[str, tuple[Pocket, ...]]]:
    """The wheel cut into sectors of ``size`` neighbouring pockets, clockwise from 0 (the last
    one shorter when ``size`` does not divide it), each named by its pockets."""
    order = wheel_order(variant)
    cut = [tuple(order[i : i + size]) for i in range(0, len(order), size)]
    return [(" ".join(str(p) for p in sector), sector) for sector in cut]


def _test(
    counts: Mapping[Any, int], probabilities: Mapping[Any, float], alpha: float, sigma: float
) -> FrequencyTest:
    """χ² and σ flags, a σ flag only where 5 are expected (a dealer's sample is small)."""
    return frequency_test(
        counts, probabilities, alpha=alpha, sigma=sigma, sigma_min_expected=MIN_EXPECTED
    )


def _game_results(
    key: tuple[str, str],
    counts: Counter[Pocket],
    *,
    alpha: float,
    sigma: float,
    sector: int,
    winners_seen: Iterable[str],
) -> GameResults:
    game, variant_name = key
    n = sum(counts.values())
    if game == "roulette":
        variant = next(v for v in VARIANTS if v == variant_name)
        cut = sectors(variant, sector)
        total = len(wheel_order(variant))
        by_sector = {name: sum(counts[p] for p in set_) for name, set_ in cut}
        numbers = ordered_pockets(variant)
        return GameResults(
            game,
            variant,
            n,
            alpha,
            {
                "numbers": _test(counts, dict.fromkeys(numbers, 1 / len(numbers)), alpha, sigma),
                "sectors": _test(by_sector, {k: len(v) / total for k, v in cut}, alpha, sigma),
            },
        )
    model = result_model(game, {}, list(winners_seen))
    if model is None:
        return GameResults(game, None, n, alpha)
    test = _test({str(k): v for k, v in counts.items()}, model.probabilities, alpha, sigma)
    return GameResults(game, None, n, alpha, {"results": test}, model.label)


def dealer_reports(
    tallies: Mapping[str | None, DealerTally], *, alpha: float | None, sigma: float, sector: int
) -> list[DealerReport]:
    """Every dealer's tests; a game's results at its risk level over the number of dealers who
    played it (Bonferroni: forty dealers tested at 0.025 would flag one fair dealer a report)."""
    from tablectl.controller.tools.diag.stats.command import (  # noqa: PLC0415 - no cycle
        SHUFFLE_ALPHA,
        WHEEL_ALPHA,
    )

    players: Counter[tuple[str, str]] = Counter()
    seen: dict[str, set[str]] = {}
    for tally in tallies.values():
        if tally.person is not None:
            players.update(tally.results.keys())
        for (game, _), counts in tally.results.items():
            seen.setdefault(game, set()).update(str(k) for k in counts)
    ordered = sorted(tallies.values(), key=lambda t: (t.person is None, t.person or ""))
    reports = []
    for tally in ordered:
        games = []
        for key in sorted(tally.results):
            level = alpha if alpha is not None else WHEEL_ALPHA if key[0] == "roulette" else None
            level = SHUFFLE_ALPHA if level is None else level
            each = level / max(1, players[key])
            games.append(
                _game_results(
                    key,
                    tally.results[key],
                    alpha=each,
                    sigma=sigma,
                    sector=sector,
                    winners_seen=sorted(seen[key[0]]),
                )
            )
        rates = _rates(tally, tallies.values(), sigma) if tally.person is not None else []
        reports.append(DealerReport(tally, tuple(rates), tuple(games)))
    return reports


# --- output -------------------------------------------------------------------------------------


def duty_text(seconds: float) -> str:
    """Time on duty as ``2h05`` (``-``: none)."""
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}" if seconds > 0 else "-"


def figure_text(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def report_json(
    reports: list[DealerReport], *, source: str, tables: Iterable[str]
) -> dict[str, Any]:
    dealers = []
    for report in reports:
        t = report.tally
        dealers.append(
            {
                "dealer": t.person,
                "name": t.name,
                "tables": sorted(t.tables),
                "rounds": t.rounds,
                **{what: t.counts[what] for what in RATES},
                "on_duty_seconds": t.duty,
                "pace_per_hour": t.pace,
                "per_100": {what: t.per_100(what) for what in RATES},
                "rates": [{**dataclasses.asdict(r), "test": RATE_TEST} for r in report.rates],
                "games": [
                    {
                        "game": g.game,
                        "variant": g.variant,
                        "rounds": g.rounds,
                        "alpha": g.alpha,
                        "numbers": frequency_json(g.tests.get("numbers")),
                        "sectors": frequency_json(g.tests.get("sectors")),
                        "results": model_json(g.model, g.tests.get("results")),
                        "flagged": g.flagged,
                    }
                    for g in report.games
                ],
                "flags": report.flags,
                "flagged": bool(report.flags),
            }
        )
    return {"kind": "dealers", "source": source, "tables": sorted(tables), "dealers": dealers}


def render_text(out: TextIO, reports: list[DealerReport], *, source: str, sigma: float) -> None:
    out.write(f"rounds by dealer, {source}\n")
    if not reports:
        out.write("no outcome in the reading: nothing to count\n")
        return
    rows = []
    for report in reports:
        t = report.tally
        rates = [figure_text(t.per_100(what)) for what in RATES]
        name = t.name if t.person is not None else "(nobody on duty)"
        row = (t.person, name, t.rounds, duty_text(t.duty), figure_text(t.pace), *rates)
        rows.append(row)
    headers = ("dealer", "name", "rounds", "on duty", "per hour", "voids", "misdeals")
    out.write(table((*headers, "manual", "deal errors"), rows, right="2345678") + "\n")
    out.write("(voids, misdeals, manual entries and deal errors per 100 rounds)\n")
    flagged = [(r.tally.person, r.flags) for r in reports if r.flags]
    for report in reports:
        for g in report.games:
            who = f"{report.tally.person or '(nobody on duty)'}"
            variant = f" ({g.variant})" if g.variant else ""
            label = g.model or g.game
            out.write(f"\n{who}, {g.game}{variant}: {g.rounds} settled, risk level {g.alpha:.3g}\n")
            for kind, test in g.tests.items():
                cards = kind == "results"
                title = f"results ({label})" if cards else _LABELS[kind]
                unit = "rounds" if cards else "spins"
                frequency_text(out, title, test, rows=cards, what=unit)
    out.write(
        f"\nrates: {RATE_TEST.replace('_', ' ')}, beyond {sigma:g} sigma where "
        f"{MIN_EXPECTED:g} are expected\n"
    )
    for person, flags in flagged:
        out.write(f"FLAGGED {person}: {'; '.join(flags)}\n")
    if not flagged:
        out.write("overall: no test flagged\n")
    out.flush()


def charts(reports: list[DealerReport], sector: int) -> list[Chart]:
    """Pace per dealer against the floor's, then each dealer's results: roulette by wheel
    sector, a card game's winners as a percentage of their expectation."""
    dealers = [r for r in reports if r.tally.person is not None]
    rounds = sum(r.tally.rounds for r in dealers)
    duty = sum(r.tally.duty for r in dealers)
    shown: list[Chart] = [
        Chart(
            title="rounds per hour on duty, by dealer",
            x_label="dealer",
            y_label="rounds per hour",
            bars=tuple(Bar(str(r.tally.person), r.tally.pace or 0.0) for r in dealers),
            reference=rounds * 3600 / duty if duty > 0 else None,
            reference_label="the floor's pace",
        )
    ]
    for report in dealers:
        for g in report.games:
            who = report.tally.person
            sectors, results = g.tests.get("sectors"), g.tests.get("results")
            if sectors is not None and g.variant is not None:
                full = sectors.n * sector / len(wheel_order(check_variant(g.variant)))
                shown.append(
                    Chart(
                        title=f"{who}: spins per sector of {sector} neighbouring pockets",
                        x_label="sector (its pockets, clockwise)",
                        y_label="spins",
                        bars=tuple(Bar(str(f.number), f.count) for f in sectors.frequencies),
                        reference=full,
                        reference_label=f"expected per {sector} pockets",
                    )
                )
            elif results is not None:
                bars = tuple(
                    Bar(str(f.number), 100 * f.count / f.expected if f.expected else 0.0)
                    for f in results.frequencies
                )
                shown.append(
                    Chart(
                        title=f"{who}: {g.game} results, % of expected",
                        x_label="result",
                        y_label="% of expected",
                        bars=bars,
                        reference=100.0,
                    )
                )
    return shown


def window_text(since: datetime | None, until: datetime | None) -> str:
    if since is None and until is None:
        return ""
    start = format_moment(since, "seconds") if since else "…"
    end = format_moment(until, "seconds") if until else "…"
    return f" [{start}, {end})"


def check_request(by: str, *, last: int | None, device: str | None, per_month: bool) -> None:
    if by != "dealer":
        raise DiagError(f"--by {by!r}: statistics are grouped by dealer only")
    if last is not None or device is not None or per_month:
        raise DiagError(
            "--by dealer reads every round of the window: not with --last, --device or"
            " --per-month (give --since and --until for a month)"
        )


async def run_by_dealer(request: StatsRequest, *, out: TextIO, err: TextIO, as_json: bool) -> int:
    """The report of a journal, or of the archive's tables over the window (one report for
    all of them: a dealer works at several tables)."""
    from tablectl.controller.tools.diag.stats.command import resolve_sources  # noqa: PLC0415

    assert request.by is not None
    check_request(request.by, last=request.last, device=request.device, per_month=request.per_month)
    if request.dsn is None:
        config, journal, variant = resolve_sources(request)
        reader = DutyReader(variant)
        reader.read(row_source(journal))
        if config is not None:
            reader.tables.add(config.table.id)
        return _report(request, reader, f"journal {journal}", out=out, as_json=as_json)
    reader, where, notes = read_archive(request)
    status = _report(request, reader, where, out=out, as_json=as_json)
    stream = err if as_json else out  # JSON stays one document; the notes go beside it
    stream.write(notes)
    stream.flush()
    return status


def read_archive(request: StatsRequest) -> tuple[DutyReader, str, str]:
    """The archive's tables (``request.tables``, else all) over the window: the reading, where
    it was read, and the lines saying what it left out (also the dashboard's staff page)."""
    if request.config is not None or request.journal is not None:
        raise DiagError("--dsn reads the archive: not with --config or --journal")
    from tablectl.controller.archive.reader import (  # noqa: PLC0415 - psycopg only here
        open_archive,
        table_ids,
        verified_reader,
    )
    from tablectl.controller.journal import AUTHORSHIP_UNVERIFIED  # noqa: PLC0415
    from tablectl.controller.tools.diag.stats.archive import left_out, note  # noqa: PLC0415

    assert request.dsn is not None
    reader = DutyReader(check_variant(request.variant or "european"))
    notes = io.StringIO()
    with open_archive(request.dsn) as archive:
        for table_id in list(request.tables) or table_ids(archive):
            source = verified_reader(
                archive, table_id, since=request.since, until=request.until, key=request.key
            )
            reader.read(source)
            left_out(notes, source)
        where = f"archive {archive.where}{window_text(request.since, request.until)}"
    if request.key is None:
        note(notes, AUTHORSHIP_UNVERIFIED, error=False)
    return reader, where, notes.getvalue()


def _report(
    request: StatsRequest, reader: DutyReader, source: str, *, out: TextIO, as_json: bool
) -> int:
    from tablectl.controller.tools.diag.stats.command import (  # noqa: PLC0415
        render_charts,
        write_svg,
    )

    reports = dealer_reports(
        reader.tallies, alpha=request.alpha, sigma=request.sigma, sector=request.sector
    )
    shown = charts(reports, request.sector)
    if as_json:
        emit_json(out, report_json(reports, source=source, tables=reader.tables))
    else:
        render_text(out, reports, source=source, sigma=request.sigma)
        render_charts(out, shown[:1], request.columns)  # the pace; the rest in the SVG
    write_svg(request.svg, shown, f"rounds by dealer, {source}")
    return 0
