"""The dashboard's HTML, built as strings with every published value escaped.

No template engine: four small pages, and one helper (:func:`_t`) applied to every broker value is
easy to check. Pages are made of *fragments* with a stable ``id`` that the live stream sends again
when they change, so live and reloaded pages are the same HTML. No inline script or style (CSP).
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal
from urllib.parse import quote, urlencode

from tablectl.controller.games.roulette import Pocket, color
from tablectl.controller.tools.dashboard.billboard import LAST, WINDOW, Ball, Billboard, billboard
from tablectl.controller.tools.dashboard.charts import (
    Figures,
    as_variant,
    shuffle_figures,
    wheel_figures,
)
from tablectl.controller.tools.dashboard.floor import Floor, OutcomeEntry, Staff, Tile
from tablectl.controller.tools.dashboard.staff import StaffFigures
from tablectl.controller.tools.diag.stats.staff import RATES, duty_text, figure_text
from tablectl.controller.tools.summary import printable

View = Literal["floor", "table", "billboard", "stats", "staff"]


@dataclass(frozen=True, slots=True)
class Fragment:
    """An element of a page: ``html`` replaces the element ``id``, or is appended to the
    element ``parent`` when the page does not have it yet (a table that just appeared); an
    empty ``html`` removes it (a table that is gone)."""

    id: str
    html: str
    parent: str | None = None


TEXT: Final = 200
"""Characters of a published value shown (ids are at most 64: the floor refuses longer)."""
_CODE: Final = 100
"""Characters of a fault code (``device: code``) on a tile."""
_SAFE_ID: Final = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _t(value: object, limit: int = TEXT) -> str:
    """A value for the page: printable on one line, bounded, escaped (every value from the
    broker goes through here)."""
    return html.escape(printable(value, limit), quote=True)


def element_id(kind: str, table: str) -> str:
    """The id of a table's element, ``tile-ROU-01``: the id as is when it is a config's id
    (``[A-Za-z0-9_-]``), else a digest of it, so that two names that print alike (one with a
    bidi control) never share an element."""
    if _SAFE_ID.fullmatch(table):
        return f"{kind}-{table}"
    return f"{kind}-x{hashlib.sha256(table.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


def _path(*parts: str) -> str:
    return "/" + "/".join(quote(p, safe="") for p in parts)


def _time(ts: str | None) -> str:
    if not ts:
        return ""
    shown = ts[11:19] if len(ts) >= 19 else ts
    return f'<time datetime="{_t(ts)}">{_t(shown)}</time>'


def _round(table: str, round_id: str | None) -> str:
    if not round_id:
        return "–"
    return "#" + round_id.removeprefix(f"{table}-")


# --- fragments ----------------------------------------------------------------------------------


def banner(floor: Floor) -> Fragment:
    """The broker link: hidden while connected; a red banner when lost (never stale data
    silently)."""
    link = floor.link
    if link.state == "down":
        detail = f" ({_t(link.detail)})" if link.detail else ""
        text = (
            f"feed down since {_time(link.since)}{detail}: showing the last known state, "
            "restarting …"
        )
        return Fragment(
            "banner", f'<div id="banner" class="banner lost down" role="alert">{text}</div>'
        )
    if link.state == "connected":
        return Fragment("banner", '<div id="banner" class="banner ok" hidden></div>')
    if link.state == "connecting":
        text = f"connecting to {_t(link.url)} …"
        return Fragment("banner", f'<div id="banner" class="banner connecting">{text}</div>')
    detail = f" ({_t(link.detail)})" if link.detail else ""
    if link.state == "unreachable":
        text = f"cannot reach the broker {_t(link.url)}{detail}: retrying …"
    else:
        text = (
            f"broker lost at {_time(link.since)}{detail}: showing the last known state, "
            "reconnecting …"
        )
    return Fragment("banner", f'<div id="banner" class="banner lost" role="alert">{text}</div>')


def _links(tile: Tile) -> str:
    links = [f'<a href="{_path("table", tile.table)}">history</a>']
    if tile.family == "roulette":
        links.append(f'<a href="{_path("billboard", tile.table)}">billboard</a>')
    if tile.family in ("roulette", "cards"):
        links.append(f'<a href="{_path("stats", tile.table)}">statistics</a>')
    return f'<nav class="links">{" ".join(links)}</nav>'


def _device(device: str, available: bool | None, faults: tuple[str, ...]) -> str:
    state = "fault" if faults else "down" if available is False else "ok"
    said = "fault" if faults else "link down" if available is False else "ok"
    if available is None and not faults:
        said = "–"
    return (
        f'<li class="device {state}" data-device="{_t(device)}">'
        f'<span class="name">{_t(device)}</span> <span class="health">{_t(said)}</span></li>'
    )


def _outcome_line(table: str, outcome: OutcomeEntry | None) -> str:
    if outcome is None:
        return '<p class="last-outcome none">no outcome yet</p>'
    kind = "void" if outcome.status == "void" else "settled"
    return (
        f'<p class="last-outcome {kind}" data-seq="{_t(outcome.seq or "")}">'
        f"{_balls(outcome.numbers)}{_t(_round(table, outcome.round))} {_t(outcome.text)}</p>"
    )


def tile(floor: Floor, table: str) -> Fragment:
    """A table's tile (see :class:`~tablectl.controller.tools.dashboard.floor.Tile`)."""
    found = floor.tile(table)
    element = element_id("tile", table)
    if found is None:
        return Fragment(element, "", "tiles")
    t = found
    stale = " stale" if floor.link.state in ("lost", "unreachable", "down") else ""
    online = "–" if t.online is None else "online" if t.online else "offline"
    faults = "".join(f'<li class="fault">{_t(f, _CODE)}</li>' for f in t.faults)
    more = f'<li class="more">+{t.more_devices} more</li>' if t.more_devices else ""
    alerts = " · ".join([*t.alerts, *t.warnings])
    rounds = f"<small>{t.rounds} played</small>" if t.rounds is not None else ""
    event = f'<p class="last-event">{_t(t.last_event)}</p>' if t.last_event else ""
    body = (
        f'<article id="{_t(element)}" class="tile level-{t.level}{stale}" '
        f'data-table="{_t(t.table)}" data-level="{t.level}">'
        f'<header><h2><a href="{_path("table", t.table)}">{_t(t.table)}</a></h2>'
        f'<span class="game">{_t(t.game or "unknown game")}</span></header>'
        f'<dl class="facts"><dt>phase</dt><dd class="phase">{_t(t.phase or "–")}</dd>'
        f'<dt>round</dt><dd class="round">{_t(_round(t.table, t.round))} {rounds}</dd>'
        f'<dt>status</dt><dd class="status">{online}</dd>'
        f"<dt>updated</dt><dd>{_time(t.updated)}</dd>{_crew(t.staff)}{_pace(t.pace)}</dl>"
        f'<ul class="devices">'
        f"{''.join(_device(d.device, d.available, d.faults) for d in t.devices)}{more}</ul>"
        f'<ul class="faults">{faults}</ul>'
        f'<p class="alerts">{_t(alerts)}</p>'
        f"{_outcome_line(t.table, t.last_outcome)}{event}{_links(t)}</article>"
    )
    return Fragment(element, body, "tiles")


def _crew(staff: Staff | None) -> str:
    """Who is on duty, for a table that publishes it (a roster's; none: nothing shown)."""
    if staff is None:
        return ""
    dealer = staff.dealer
    if dealer is None:
        shown = '<dd class="dealer none">nobody on duty</dd>'
    else:
        since = f" <small>since {_time(dealer.since)}</small>" if dealer.since else ""
        shown = (
            f'<dd class="dealer" data-person="{_t(dealer.person)}">'
            f"{_t(dealer.name or dealer.person)}{since}</dd>"
        )
    others = [*(("supervisor", p) for p in staff.supervisors)]
    others += [("technician", p) for p in staff.technicians]
    crew = ", ".join(f"{_t(p.name or p.person)} ({role})" for role, p in others)
    return f"<dt>dealer</dt>{shown}" + (
        f'<dt>crew</dt><dd class="crew">{crew}</dd>' if crew else ""
    )


def _pace(pace: float | None) -> str:
    if pace is None:
        return ""
    return f'<dt>pace</dt><dd class="pace">{pace:.0f} rounds/h</dd>'


def _balls(numbers: Iterable[Pocket]) -> str:
    return "".join(
        f'<span class="ball {color(n)}" data-number="{_t(n)}">{_t(n)}</span>' for n in numbers
    )


def history(floor: Floor, table: str) -> Fragment:
    entries = floor.history(table)
    element = element_id("history", table)
    rows = "".join(
        f'<tr class="{_t(e.status)}" data-seq="{_t(e.seq or "")}">'
        f"<td>{_time(e.ts)}</td><td>{_t(_round(table, e.round))}</td>"
        f"<td>{_t(e.status)}{' ' + _t(e.reason) if e.reason else ''}</td>"
        f'<td class="summary">{_balls(e.numbers)}{_t(e.text)}</td></tr>'
        for e in entries
    )
    body = (
        f'<section id="{_t(element)}" class="history"><h2>results ({len(entries)} of the last '
        f"{floor.history_size} kept)</h2><table><thead><tr><th>time</th><th>round</th>"
        f"<th>status</th><th>outcome</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )
    return Fragment(element, body)


def alarms(floor: Floor, table: str) -> Fragment:
    element = element_id("alarms", table)
    items = "".join(
        f'<li class="{"raised" if a.raised else "cleared"}">{_time(a.ts)} '
        f"{'raised' if a.raised else 'cleared'} <code>{_t(a.code)}</code> on {_t(a.device)}"
        f"{': ' + _t(a.detail) if a.detail else ''}</li>"
        for a in floor.alarms(table)
    )
    body = (
        f'<section id="{_t(element)}" class="alarms"><h2>alarms</h2>'
        f"<ul>{items or '<li>none seen</li>'}</ul></section>"
    )
    return Fragment(element, body)


def _ball(ball: Ball, *, latest: bool = False, count: bool = False) -> str:
    extra = " latest" if latest else ""
    times = f"<small>×{ball.count}</small>" if count else ""
    return (
        f'<li class="ball {ball.color}{extra}" data-number="{_t(ball.number)}">'
        f"{_t(ball.number)}{times}</li>"
    )


def billboard_fragment(floor: Floor, table: str) -> Fragment:
    board: Billboard = billboard(floor.spins(table), as_variant(floor.variant(table)))
    element = element_id("billboard", table)
    strip = "".join(_ball(b, latest=i == 0) for i, b in enumerate(board.last))
    strip = strip or '<li class="waiting">waiting for the first spin</li>'
    hot = "".join(_ball(b, count=True) for b in board.hot)
    cold = "".join(_ball(b, count=True) for b in board.cold)
    groups = "".join(
        f'<div class="group"><h3>{_t(title)}</h3>'
        + "".join(
            f'<div class="share" data-label="{_t(s.label)}">'
            f'<span class="label">{_t(s.label)}</span>'
            f'<progress max="100" value="{s.percent:.1f}"></progress>'
            f'<span class="pct">{s.percent:.0f}%</span></div>'
            for s in shares
        )
        + "</div>"
        for title, shares in board.groups
    )
    body = (
        f'<section id="{_t(element)}" class="billboard" data-spins="{board.spins}">'
        f'<h1>{_t(table)}</h1><ol class="last-numbers" aria-label="last {LAST} numbers">'
        f"{strip}</ol>"
        f'<div class="hotcold"><div class="hot"><h2>hot</h2><ol>{hot}</ol></div>'
        f'<div class="cold"><h2>cold</h2><ol>{cold}</ol></div></div>'
        f'<div class="shares">{groups}</div>'
        f'<p class="note">last {min(board.spins, WINDOW)} spins (of up to {WINDOW})</p>'
        "</section>"
    )
    return Fragment(element, body)


def _figures_html(kind: str, table: str, figures: Figures, version: int) -> str:
    lines = "".join(f"<li>{_t(line)}</li>" for line in figures.lines)
    image = ""
    if figures.svg is not None:
        src = f"{_path('svg', table, kind + '.svg')}?{urlencode({'v': version})}"
        image = f'<img class="chart" src="{_t(src)}" alt="{_t(kind)} statistics of {_t(table)}">'
    verdict = f" {figures.verdict}" if figures.verdict else ""
    return f'<div class="figures {kind}{verdict}"><ul>{lines}</ul>{image}</div>'


def stats_fragment(floor: Floor, table: str) -> Fragment:
    element = element_id("stats", table)
    family = floor.family(table)
    if family == "roulette":
        spins = floor.spins(table)
        figures = wheel_figures(table, spins, as_variant(floor.variant(table)))
        inner = _figures_html("wheel", table, figures, len(spins))
    elif family == "cards":
        records = floor.shoe_records(table)
        inner = _figures_html("shuffle", table, shuffle_figures(table, records), len(records))
    else:
        inner = "<p>no statistics for this game (wheel bias and shuffle tests only)</p>"
    return Fragment(element, f'<section id="{_t(element)}" class="stats">{inner}</section>')


def fragments(floor: Floor, view: View, table: str | None = None) -> list[Fragment]:
    """Every fragment of a page, as the live stream sends them."""
    out = [banner(floor)]
    if view == "staff":
        return out  # the archive's figures: read when the page is
    if view == "floor" or table is None:
        return out + [tile(floor, name) for name in floor.tables()]
    if view == "table":
        return [*out, tile(floor, table), history(floor, table), alarms(floor, table)]
    if view == "billboard":
        return [*out, billboard_fragment(floor, table)]
    return [*out, stats_fragment(floor, table)]


# --- pages --------------------------------------------------------------------------------------


def page(floor: Floor, view: View, table: str | None = None) -> str:
    """A whole page; its fragments are live (``data-stream``)."""
    parts = fragments(floor, view, table)
    query = {"view": view, **({"table": table} if table is not None else {})}
    stream = f"/stream?{urlencode(query)}"
    if view == "floor" or table is None:
        title = "floor"
        tiles = "".join(f.html for f in parts[1:])
        waiting = "" if tiles else f'<p class="waiting">waiting for tables on {_where(floor)}</p>'
        main = f'<h1>floor</h1>{waiting}<div id="tiles" class="tiles">{tiles}</div>'
    else:
        title = {"table": "results", "billboard": "billboard", "stats": "statistics"}[view]
        main = "".join(f.html for f in parts[1:])
        if view == "table":
            main = (
                f'<h1>{_t(table)}</h1><div id="tiles" class="tiles single">{parts[1].html}</div>'
                + "".join(f.html for f in parts[2:])
            )
        elif view == "stats":
            main = f"<h1>{_t(table)}: statistics</h1>{main}"
    return _document(
        f"{title}{' · ' + table if table else ''}",
        view,
        stream,
        parts[0].html,
        main,
        floor=floor,
    )


def staff_page(floor: Floor, figures: StaffFigures | None) -> str:
    """The figures by dealer from the archive (``None``: the dashboard has no archive)."""
    if figures is None:
        inner = (
            '<p class="no-archive">No archive: the figures by dealer are read from the floor\'s'
            " archive. Start the dashboard with <code>--archive-dsn</code> to see them here"
            " (or run <code>tablectl diag stats --by dealer</code> on a table's journal).</p>"
        )
    elif figures.error is not None:
        inner = f'<p class="error" role="alert">the archive cannot be read: {_t(figures.error)}</p>'
    else:
        inner = _dealers(figures)
    main = f'<h1>staff</h1><section id="staff" class="staff">{inner}</section>'
    return _document("staff", "staff", "/stream?view=staff", banner(floor).html, main, floor=floor)


def _dealers(figures: StaffFigures) -> str:
    rows = []
    for report in figures.reports:
        t = report.tally
        rates = "".join(f'<td class="num">{figure_text(t.per_100(what))}</td>' for what in RATES)
        flags = "; ".join(report.flags)
        person = t.person or "–"
        rows.append(
            f'<tr class="{"flagged" if flags else "ok"}" data-dealer="{_t(person)}">'
            f"<td>{_t(person)}</td><td>{_t(t.name or ('nobody on duty' if not t.person else ''))}"
            f"</td><td>{_t(', '.join(sorted(t.tables)))}</td>"
            f'<td class="num rounds">{t.rounds}</td><td class="num">{duty_text(t.duty)}</td>'
            f'<td class="num pace">{figure_text(t.pace)}</td>{rates}'
            f'<td class="flags">{_t(flags or "ok")}</td></tr>'
        )
    notes = "".join(f"<li>{_t(line)}</li>" for line in figures.notes)
    image = ""
    if figures.svg is not None:
        src = f"/staff.svg?{urlencode({'at': figures.read_at})}"
        image = f'<img class="chart" src="{_t(src)}" alt="rounds per hour and results by dealer">'
    head = "".join(
        f"<th>{h}</th>"
        for h in (
            "dealer",
            "name",
            "tables",
            "rounds",
            "on duty",
            "rounds/h",
            "voids",
            "misdeals",
            "manual",
            "deal errors",
            "flags (test)",
        )
    )
    body = "".join(rows) or '<tr><td colspan="11">no outcome in the archive yet</td></tr>'
    return (
        f'<p class="source">the last {figures.days} days of {_t(figures.where)}, read at '
        f"{_time(figures.read_at)}; voids, misdeals, manual entries and deal errors per 100 rounds"
        f" (docs/station.md)</p><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>"
        f'</table><ul class="notes">{notes}</ul>{image}'
    )


def not_found_page(floor: Floor, what: str) -> str:
    return _document(
        "not found", "floor", "", "", f"<h1>not found</h1><p>{_t(what)}</p>", floor=floor
    )


def _where(floor: Floor) -> str:
    return f"{_t(floor.link.url or 'the broker')} under {_t(floor.prefix)}/"


def _document(
    title: str, view: str, stream: str, banner_html: str, main: str, *, floor: Floor
) -> str:
    links = '<a href="/">floor</a> <a href="/staff">staff</a>'
    nav = "" if view == "billboard" else f'<nav class="top">{links}</nav>'
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_t(title)} · tablectl</title>"
        '<link rel="stylesheet" href="/static/dashboard.css">'
        '<script src="/static/dashboard.js" defer></script></head>'
        f'<body class="view-{view}" data-stream="{_t(stream)}">{nav}'
        f'{banner_html}<div id="live" class="live" hidden>live updates lost: reconnecting …</div>'
        f"<main>{main}</main>"
        f"<footer>read-only: what the tables publish on {_where(floor)}</footer></body></html>"
    )
