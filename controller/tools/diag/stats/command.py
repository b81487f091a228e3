"""``diag stats``: wheel bias or shuffle randomness, whichever the table's game calls for (from the
config, else from the journal itself). Kept apart from the reading and the maths so those stay
usable without an output format."""

from __future__ import annotations

import io
import shutil
import textwrap
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal, TextIO

from tablectl.controller.config import TableConfig, load_config
from tablectl.controller.games.roulette import Variant, wheel_order
from tablectl.controller.tools.diag.devices.plugins import DeviceStatistics
from tablectl.controller.tools.diag.errors import DiagError, PortHeldError
from tablectl.controller.tools.diag.link import Link
from tablectl.controller.tools.diag.render import emit_json, table, too_few_text
from tablectl.controller.tools.diag.stats.maths import BiasReport, SerialCorrelation
from tablectl.controller.tools.diag.stats.plots import (
    Chart,
    position_chart,
    svg_document,
    text_lines,
    wheel_charts,
)
from tablectl.controller.tools.diag.stats.wheel import (
    RowSource,
    Window,
    check_variant,
    device_report,
    read_spins,
    wheel_report,
)
from tablectl.controller.tools.diag.target import resolve_target


@dataclass(frozen=True)
class StatsRequest:
    """What ``diag stats`` was asked for (mirrors its flags)."""

    config: Path | None = None
    journal: Path | RowSource | None = None
    """A journal file, or one table's window of the archive (``--dsn`` sets it per table)."""
    variant: str | None = None
    last: int | None = None
    alpha: float | None = None
    """``None``: 0.025 for a wheel (R24), 0.05 for a shuffler (R5)."""
    sigma: float = 3.0
    device: str | None = None
    svg: Path | None = None
    """Also write the report's charts to this SVG file."""
    sector: int = 5
    """Pockets per sector in the wheel's sector chart."""
    width: int | None = None
    """Text charts' width; ``None``: the terminal's (80 when it has none)."""
    dsn: str | None = None
    """Read the floor's archive instead of a journal: a report per table (``tables``, default
    every table in it) over ``since``/``until``, or one per month of it (``per_month``)."""
    tables: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    per_month: bool = False
    game: str | None = None
    """The table's game when no config says it (the archive's newest outcome, for a window
    that holds none)."""
    key: bytes | None = None
    """With ``dsn``: the tables' journal key; only records whose own ``auth`` it matches count
    (``None``: authorship unverified, said in the report)."""
    by: str | None = None
    """``"dealer"``: one report of every dealer's rounds instead of a table's (:mod:`.staff`)."""

    @property
    def columns(self) -> int:
        if self.width is not None:
            return self.width
        return shutil.get_terminal_size((80, 24)).columns


WHEEL_ALPHA = 0.025
"""Regulatory R24: the wheel's χ² at risk level 0.025."""
SHUFFLE_ALPHA = 0.05
"""Regulatory R5: the shuffler's χ² at 95 % confidence."""

Kind = Literal["wheel", "shuffle"]


def _kind(
    config: TableConfig | None, journal: Path | RowSource, known: str | None = None
) -> tuple[Kind, str | None]:
    """Wheel or shuffle statistics, and the game, from the config or else the journal."""
    from tablectl.controller.tools.diag.stats.shoes import journal_game  # noqa: PLC0415
    from tablectl.controller.tools.diag.stats.shuffle import (  # noqa: PLC0415
        CARD_GAMES,
        SHORT_DECK_GAMES,
    )

    game = config.table.game if config is not None else known or journal_game(journal)
    if game is None or game == "roulette":
        return "wheel", "roulette"
    if game in CARD_GAMES:
        return "shuffle", game
    if game == "cards":  # a journal with shoes but no outcome yet
        return "shuffle", None
    where = config.source if config is not None else journal
    if game in SHORT_DECK_GAMES:
        raise DiagError(
            f"{where}: {game!r} deals from a deck without every rank, and the shuffle tests "
            f"expect each of the 13 ranks at 1/13: they would flag any shuffle"
        )
    raise DiagError(
        f"{where}: diag stats analyses roulette wheels and card shoes "
        f"({', '.join(sorted(CARD_GAMES))}); this table plays {game!r}"
    )


def resolve_sources(request: StatsRequest) -> tuple[TableConfig | None, Path | RowSource, Variant]:
    config = load_config(request.config) if request.config is not None else None
    if config is None and request.journal is None:
        raise DiagError("give --config FILE (or --journal FILE)")
    journal = request.journal or (config.journal.path if config is not None else None)
    assert journal is not None
    name = request.variant
    if name is None:
        configured = config.rules.get("variant", "european") if config is not None else None
        name = configured if isinstance(configured, str) else "european"
    return config, journal, check_variant(name)


def _table_id(config: TableConfig | None, journal: Path | RowSource) -> str | None:
    if config is not None:
        return config.table.id
    return None if isinstance(journal, Path) else journal.table


async def run_stats(request: StatsRequest, *, out: TextIO, err: TextIO, as_json: bool) -> int:
    """Print the report; 1 if the wheel was asked for and could not be reached, else 0."""
    if request.by is not None:
        from tablectl.controller.tools.diag.stats.staff import run_by_dealer  # noqa: PLC0415

        return await _fitted(
            request, out, as_json, lambda o: run_by_dealer(request, out=o, err=err, as_json=as_json)
        )
    if request.dsn is not None:
        from tablectl.controller.tools.diag.stats.archive import run_archive_stats  # noqa: PLC0415

        return await run_archive_stats(request, run_stats, out=out, err=err, as_json=as_json)
    config = load_config(request.config) if request.config is not None else None
    if config is None and request.journal is None:
        raise DiagError("give --config FILE (or --journal FILE)")
    journal = request.journal or (config.journal.path if config is not None else None)
    assert journal is not None
    kind, game = _kind(config, journal, request.game)
    return await _fitted(
        request,
        out,
        as_json,
        lambda o: _run_kind(request, config, journal, kind, game, out=o, err=err, json=as_json),
    )


async def _fitted(
    request: StatsRequest, out: TextIO, as_json: bool, run: Callable[[TextIO], Awaitable[int]]
) -> int:
    if as_json or not out.isatty():  # a pipe or a file keeps whole lines (grep, less -S)
        return await run(out)
    text = io.StringIO()  # a terminal: every line of the report fitted to its width
    try:
        return await run(text)
    finally:
        out.write(fit_lines(text.getvalue(), request.columns))
        out.flush()


async def _run_kind(
    request: StatsRequest,
    config: TableConfig | None,
    journal: Path | RowSource,
    kind: Kind,
    game: str | None,
    *,
    out: TextIO,
    err: TextIO,
    json: bool,
) -> int:
    if kind == "shuffle":
        return _run_shuffle(request, config, journal, game, out=out, as_json=json)
    return await _run_wheel(request, out=out, err=err, as_json=json)


def fit_lines(text: str, width: int) -> str:
    """The text report within ``width`` columns: a longer line (a journal path, a window's
    rounds and times, a verdict) is wrapped at spaces, its continuation indented two more than
    the line; the charts are drawn to the width already and pass unchanged."""
    fitted: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            fitted.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip())]
        fitted += textwrap.wrap(
            line, max(width, 20), subsequent_indent=indent + "  ", break_on_hyphens=False
        )
    return "\n".join(fitted)


def _run_shuffle(
    request: StatsRequest,
    config: TableConfig | None,
    journal: Path | RowSource,
    game: str | None,
    *,
    out: TextIO,
    as_json: bool,
) -> int:
    from tablectl.controller.tools.diag.stats.shoes import read_shoes  # noqa: PLC0415
    from tablectl.controller.tools.diag.stats.shuffle import (  # noqa: PLC0415
        result_model,
        shuffle_report,
    )
    from tablectl.controller.tools.diag.stats.shuffle_report import (  # noqa: PLC0415
        ShuffleView,
        render_shuffle,
        shuffle_json,
    )

    played = game or "a card game"
    if request.variant is not None:
        raise DiagError(f"--variant is a roulette wheel's; this table plays {played}")
    if request.device is not None:
        raise DiagError(
            f"--device asks a wheel for its own statistics (SS2 *w, *W); this table plays "
            f"{played}, whose shuffler keeps none: its randomness is read from the journal"
        )
    window = read_shoes(journal, last=request.last)
    model = None
    if game is not None:
        rules = config.rules if config is not None else {}
        model = result_model(game, rules, [w for shoe in window.shoes for w in shoe.results])
    report = shuffle_report(
        window,
        model=model,
        alpha=request.alpha if request.alpha is not None else SHUFFLE_ALPHA,
        sigma=request.sigma,
    )
    table_id = _table_id(config, journal)
    view = ShuffleView(table_id, journal, game, window, report, request.last)
    charts = [
        position_chart(what, test)
        for what, test in (("rank", report.rank_by_position), ("suit", report.suit_by_position))
        if test is not None and test.positions > 0
    ]
    if as_json:
        emit_json(out, shuffle_json(view))
    else:
        render_shuffle(out, view)
        render_charts(out, charts, request.columns)
    write_svg(request.svg, charts, f"shuffle randomness, table {table_id or '-'}")
    return 0


def render_charts(out: TextIO, charts: list[Chart], width: int) -> None:
    for chart in charts:
        out.write("\n" + "\n".join(text_lines(chart, width=width)) + "\n")
    out.flush()


def write_svg(path: Path | None, charts: list[Chart], title: str) -> None:
    if path is None:
        return
    try:
        path.write_text(svg_document(charts, title=title), encoding="utf-8")
    except OSError as exc:
        raise DiagError(f"{path}: cannot write the SVG: {exc.strerror or exc}") from None


async def _run_wheel(request: StatsRequest, *, out: TextIO, err: TextIO, as_json: bool) -> int:
    config, journal, variant = resolve_sources(request)
    window = read_spins(journal, variant, last=request.last)
    alpha = request.alpha if request.alpha is not None else WHEEL_ALPHA
    report = wheel_report(window, variant, alpha=alpha, sigma=request.sigma)
    device: DeviceStatistics | None = None
    device_error: str | None = None
    if request.device is not None:
        if request.config is None:
            raise DiagError("--device needs --config to find the device")
        target = resolve_target(request.config, request.device)
        try:
            async with Link(target.diagnostics.open_stream(), target.diagnostics.port) as link:
                device = await target.diagnostics.statistics(link)
        except PortHeldError as exc:
            device_error = str(exc)
    device_bias = (
        device_report(dict(device.counts), variant, alpha=alpha, sigma=request.sigma)
        if device is not None and device.counts
        else None
    )
    table_id = _table_id(config, journal)
    charts = wheel_charts(report, wheel_order(variant), request.sector) if window.spins else []
    if as_json:
        emit_json(
            out,
            {
                "table": table_id,
                "journal": str(journal),
                "kind": "wheel",
                "variant": variant,
                "window": _window_json(window, request.last),
                "journal_stats": bias_json(report),
                "device": _device_json(request.device, device, device_bias, device_error),
            },
        )
    else:
        _render(
            out,
            table_id=table_id,
            journal=journal,
            variant=variant,
            window=window,
            report=report,
            last=request.last,
        )
        render_charts(out, charts, request.columns)
        if device is not None:
            _render_device(out, request.device or "", device, device_bias)
    write_svg(request.svg, charts, f"wheel bias, table {table_id or '-'} ({variant})")
    if device_error is not None:
        err.write(f"tablectl diag stats: {device_error}\n")
        return 1
    return 0


def _window_json(window: Window, last: int | None) -> dict[str, Any]:
    first, final = (window.spins[0], window.spins[-1]) if window.spins else (None, None)
    return {
        "requested_last": last,
        "spins": len(window.spins),
        "voids_skipped": window.voids,
        "invalid_skipped": window.invalid,
        "first": None if first is None else {"round": first.round, "ts": first.ts},
        "last": None if final is None else {"round": final.round, "ts": final.ts},
    }


def _serial_json(serial: SerialCorrelation | None) -> dict[str, Any] | None:
    if serial is None:
        return None
    return {"r": serial.r, "z": serial.z, "p_value": serial.p_value, "flagged": serial.flagged}


def bias_json(report: BiasReport) -> dict[str, Any]:
    return {
        "spins": report.spins,
        "pockets": report.pockets,
        "flagged": report.flagged,
        "chi_square": {
            "value": report.chi_square,
            "dof": report.dof,
            "p_value": report.p_value,
            "alpha": report.alpha,
            "flagged": report.chi_flagged,
            "verdict": report.chi_verdict,
            "needed": report.needed,
            "expected_per_cell": report.spins / report.pockets,
        },
        "sigma": report.sigma,
        "frequencies": [
            {
                "number": f.number,
                "count": f.count,
                "expected": f.expected,
                "z": f.z,
                "flagged": f.flagged,
            }
            for f in report.frequencies
        ],
        "serial_correlation": {
            "by_number": _serial_json(report.serial_by_number),
            "by_wheel_position": _serial_json(report.serial_by_position),
        },
    }


def _device_json(
    name: str | None,
    device: DeviceStatistics | None,
    bias: BiasReport | None,
    error: str | None,
) -> dict[str, Any] | None:
    if name is None:
        return None
    out: dict[str, Any] = {"device": name, "error": error}
    if device is not None:
        out |= {
            "chi_square": device.chi_square,
            "percent": device.percent,
            "counts": {str(k): v for k, v in device.counts.items()},
            "notes": list(device.notes),
            "table_stats": bias_json(bias) if bias is not None else None,
        }
    return out


def _flag(flagged: bool) -> str:
    return "FLAGGED" if flagged else "ok"


def _chi_text(report: BiasReport) -> str:
    if report.chi_verdict == "too_few":
        return too_few_text(report.needed, "spins")
    text = _flag(report.chi_flagged)
    if report.needed > 0:  # flagged all the same: say the sample is small
        text += f" (on few spins: {report.needed} more for an expected 5 per cell)"
    return text


def _serial_text(label: str, serial: SerialCorrelation | None) -> str:
    if serial is None:
        return f"  {label}: not enough spins"
    return (
        f"  {label}: r = {serial.r:+.4f}, z = {serial.z:+.2f}, p = {serial.p_value:.4f}"
        f"  {_flag(serial.flagged)}"
    )


def render_bias(out: TextIO, report: BiasReport, *, serial: bool) -> None:
    out.write(
        f"chi-square = {report.chi_square:.2f} with {report.dof} dof, "
        f"p = {report.p_value:.4f} (risk level {report.alpha:g})  {_chi_text(report)}\n"
    )
    if serial:
        out.write("lag-1 serial correlation:\n")
        out.write(_serial_text("by number        ", report.serial_by_number) + "\n")
        out.write(_serial_text("by wheel position", report.serial_by_position) + "\n")
    flagged = report.flagged_numbers
    beyond = ", ".join(f"{f.number} ({f.count}, z {f.z:+.1f})" for f in flagged) or "none"
    out.write(f"numbers beyond {report.sigma:g} sigma: {beyond}\n")
    rows = [
        (f.number, f.count, f"{f.expected:.1f}", f"{f.z:+.2f}", "FLAG" if f.flagged else "")
        for f in report.frequencies
    ]
    out.write(table(("number", "count", "expected", "z", ""), rows, right="0123") + "\n")


def _render(
    out: TextIO,
    *,
    table_id: str | None,
    journal: Path | RowSource,
    variant: Variant,
    window: Window,
    report: BiasReport,
    last: int | None,
) -> None:
    source = f"journal {journal}" if isinstance(journal, Path) else str(journal)
    out.write(f"wheel bias, table {table_id or '-'}, {source} ({variant}, ")
    out.write(f"{report.pockets} pockets)\n")
    span = f"last {last}" if last is not None else "all"
    out.write(f"window: {span} settled spins: {len(window.spins)}")
    if window.spins:
        first, final = window.spins[0], window.spins[-1]
        out.write(f" (rounds {first.round} .. {final.round}, {first.ts} .. {final.ts})")
    out.write(f"; skipped {window.voids} void, {window.invalid} invalid\n")
    if not window.spins:
        out.write("no settled spins in the journal window: nothing to test\n")
        return
    render_bias(out, report, serial=True)
    verdict = "FLAGGED: look at this wheel" if report.flagged else "no test flagged"
    if not report.flagged and report.needed > 0:
        verdict += f" (but too few spins to trust the chi-square: {report.needed} more needed)"
    out.write(f"overall: {verdict}\n")
    out.flush()


def _render_device(
    out: TextIO, name: str, device: DeviceStatistics, bias: BiasReport | None
) -> None:
    out.write(f"\nthe wheel's own statistics ({name}):\n")
    if device.chi_square is not None:
        out.write(f"  *w chi-square {device.chi_square:.2f} ({device.percent:.1f} %)\n")
    for note in device.notes:
        out.write(f"  note: {note}\n")
    if bias is not None:
        out.write(f"  *W table: {bias.spins} results\n")
        render_bias(out, bias, serial=False)
    out.flush()
