"""What the panels show, as data: MQTT messages in, one :class:`TableView` per table out.

Per table the retained topics as they last were, the last :data:`HISTORY` outcomes as published,
and a tally for the demo's exit summary. Pure: the caller stamps each message with its time.
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final

from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.tools.summary import summarize
from tablectl.controller.tools.watch import Line, format_message

HISTORY: Final = 72
"""Outcomes kept per table: a bead road of 6 rows × 12 columns, or a long roulette strip."""
FOOTER: Final = 200
"""Lines kept for the footer (the layout shows the newest that fit)."""
_TEXT_LIMIT: Final = 48
_FOLD: Final = 30
"""How far back in the footer a repeated log line is folded into."""


def clean(value: Any, limit: int = _TEXT_LIMIT) -> str:
    """A published string made safe for one line of a panel: printable, no braces, bounded."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(value))
    text = text.replace("{", "(").replace("}", ")")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class ResultMark:
    """One published outcome: its round, settled or void, the result as published, its line."""

    round: str
    """The round's number without the table (``000123``)."""
    status: str
    reason: str | None
    game: str
    result: Mapping[str, Any]
    """The outcome's ``result`` (read-only; empty for a void without one)."""
    summary: str
    """The one-line summary without the table (``#000123 17 black (6 turns)``) nor the dealer
    (the panel's border names the dealer on duty; the footer's line keeps the round's)."""


@dataclass(frozen=True, slots=True)
class DeviceHealth:
    """A device's retained ``devices/{id}``: link and latched faults."""

    device: str
    available: bool
    faults: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class StampedLine:
    """A footer line: local time and the one-line view (outcome, alarm, status, event, log)."""

    stamp: str
    line: Line
    key: str = ""
    """A log line's text without its table: the same warning from several tables folds."""
    count: int = 1

    def text(self) -> str:
        return f"{self.stamp} {self.line.text}"


@dataclass(frozen=True, slots=True)
class TableTally:
    """What a table did while watched: for the demo's exit summary (and ``--rounds``)."""

    table: str
    game: str
    outcomes: int = 0
    voids: Mapping[str, int] = field(default_factory=dict)
    """Void reason → count."""
    faults: Mapping[str, int] = field(default_factory=dict)
    """Alarm code raised → count."""


@dataclass(frozen=True, slots=True)
class TableView:
    """One table's panel, as data (everything from what the table published)."""

    table: str
    game: str
    family: str
    """The engine family (:data:`~tablectl.controller.games.catalog.ENGINE_FAMILIES`), or
    ``other`` for a game outside the catalog."""
    kind: str
    """The card game's class (``Baccarat``), the family otherwise: picks the renderer."""
    online: bool | None
    phase: str | None
    round: str | None
    rounds: int | None
    devices: tuple[DeviceHealth, ...]
    faults: tuple[str, ...]
    """Latched fault codes (the ``state``'s, and each device's)."""
    locked: bool
    journal_ok: bool
    outbox: int | None
    """Records journaled earlier and not yet acknowledged by the broker (``state.outbox``)."""
    live: Mapping[str, Any]
    """The round in play as ``state`` shows it (balls so far, the shoe, the craps point…)."""
    results: tuple[ResultMark, ...]
    """The newest last."""
    dealer: str | None = None
    """The dealer on duty as the retained ``staff`` (or ``state``) says: ``Name (ID)``."""


class _Table:
    """The mutable per-table record behind a :class:`TableView`."""

    def __init__(self, table: str) -> None:
        self.table = table
        self.game = ""
        self.status: Mapping[str, Any] = {}
        self.state: Mapping[str, Any] = {}
        self.devices: dict[str, Mapping[str, Any]] = {}
        self.staff: Mapping[str, Any] | None = None
        """The retained ``staff`` (docs/station.md); ``None``: the table never published one."""
        self.results: deque[ResultMark] = deque(maxlen=HISTORY)
        self.outcomes = 0
        self.voids: Counter[str] = Counter()
        self.faults: Counter[str] = Counter()

    def view(self) -> TableView:
        game = str(self.state.get("game") or self.game or "")
        entry = CATALOG.get(game)
        family = entry.family if entry is not None else "other"
        kind = entry.name if entry is not None and family == "cards" else family
        state = self.state
        latched: list[str] = [clean(code) for code in state.get("faults") or () if code]
        for name, device in _mapping(state.get("devices")).items():
            for code in _mapping(device).get("faults") or ():
                latched.append(f"{clean(code)} ({clean(name, 16)})")
        for code in self.status.get("faults") or ():
            latched.append(clean(code))
        journal = _mapping(state.get("journal"))
        outbox = _mapping(state.get("outbox")).get("pending")
        online = self.status.get("state")
        return TableView(
            table=self.table,
            game=game,
            family=family,
            kind=kind,
            online=None if online is None else online == "online",
            phase=_text(state.get("phase")),
            round=_round_number(self.table, state.get("round")),
            rounds=state.get("rounds") if isinstance(state.get("rounds"), int) else None,
            devices=tuple(
                DeviceHealth(
                    clean(name, 16),
                    bool(device.get("available")),
                    tuple(clean(c) for c in device.get("faults") or ()),
                )
                for name, device in sorted(self.devices.items())
            ),
            faults=tuple(dict.fromkeys(latched)),
            locked=bool(state.get("locked")) or bool(self.status.get("locked")),
            journal_ok=journal.get("available", True) is not False,
            outbox=outbox if isinstance(outbox, int) else None,
            live=MappingProxyType(dict(state)),
            results=tuple(self.results),
            dealer=self.dealer(),
        )

    def dealer(self) -> str | None:
        return _on_duty(self.staff if self.staff is not None else self.state.get("staff"))

    def tally(self) -> TableTally:
        return TableTally(
            self.table,
            str(self.state.get("game") or self.game or ""),
            self.outcomes,
            dict(self.voids),
            dict(self.faults),
        )


class Floor:
    """Every table seen under a topic filter: feed it messages, read views and footer lines.
    ``table_level``: the table's index among a topic's levels."""

    def __init__(
        self,
        *,
        table_level: int = 1,
        kinds: frozenset[str] = frozenset({"outcome", "alarm", "status", "other"}),
    ) -> None:
        self._level = table_level
        self.kinds = kinds
        self._tables: dict[str, _Table] = {}
        self.footer: deque[StampedLine] = deque(maxlen=FOOTER)
        self.version = 0
        """Bumped at every change (the live view redraws when it moved)."""

    def feed(self, topic: str, payload: bytes, *, stamp: str) -> Line | None:
        """Take one message (already de-duplicated, as by :class:`~tablectl.controller.tools.watch
        .MessageFilter`); return its footer line, if it has one."""
        levels = topic.split("/")
        if len(levels) <= self._level + 1:
            return None
        table = self._table(levels[self._level])
        leaf = "/".join(levels[self._level + 1 :])
        body = _json_object(payload)
        before = _on_duty(table.staff)
        if body is not None:
            self._take(table, leaf, body)
        line = format_message(topic, payload, table_level=self._level)
        dealer = _on_duty(table.staff)
        if leaf == "staff" and dealer not in (None, before):  # a dealer signed on: say who
            line = Line("status", table.table, f"{table.table} dealer {dealer} on duty")
        self.version += 1
        if line is not None and line.kind in self.kinds:
            self.footer.append(StampedLine(stamp, line))
        return line

    def log(self, text: str, *, stamp: str, table: str = "") -> None:
        """A log line for the footer (what the process would have written to stderr); the same
        text as a recent one (from another table, say) replaces it, counted (``(×5)``)."""
        key = text
        count = 1
        for index in range(len(self.footer) - 1, max(len(self.footer) - _FOLD, 0) - 1, -1):
            earlier = self.footer[index]
            if earlier.key == key:
                count += earlier.count
                del self.footer[index]
                break
        shown = clean(text, 200) + (f" (×{count})" if count > 1 else f" [{table}]" if table else "")
        self.footer.append(StampedLine(stamp, Line("other", table, shown), key, count))
        self.version += 1

    def tables(self) -> list[TableView]:
        """Every table seen, in the order they first appeared."""
        return [table.view() for table in self._tables.values()]

    def tallies(self) -> list[TableTally]:
        return [table.tally() for table in self._tables.values()]

    def tally(self, table: str) -> TableTally | None:
        found = self._tables.get(table)
        return None if found is None else found.tally()

    # -- helpers --------------------------------------------------------------------------------

    def _table(self, name: str) -> _Table:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = _Table(name)
        return table

    def _take(self, table: _Table, leaf: str, body: Mapping[str, Any]) -> None:
        if leaf == "status":
            table.status = body
        elif leaf == "state":
            table.state = body
            table.game = str(body.get("game") or table.game)
        elif leaf == "staff":
            table.staff = body
        elif leaf.startswith("devices/"):
            table.devices[leaf.removeprefix("devices/")] = body
        elif leaf == "outcome":
            table.game = str(body.get("game") or table.game)
            mark = _mark(table.table, body)
            table.results.append(mark)
            table.outcomes += 1
            if mark.status == "void":
                table.voids[mark.reason or "no reason"] += 1
        elif leaf == "alarms" and body.get("type") == "fault":
            table.faults[clean(body.get("code"))] += 1


def _mark(table: str, body: Mapping[str, Any]) -> ResultMark:
    result = body.get("result")
    line = summarize({**body, "table": table, "dealer": None})
    reason = body.get("reason")
    return ResultMark(
        round=_round_number(table, body.get("round")) or "",
        status=str(body.get("status") or "settled"),
        reason=clean(reason) if reason else None,
        game=str(body.get("game") or ""),
        result=MappingProxyType(dict(result)) if isinstance(result, Mapping) else _EMPTY,
        summary=line.removeprefix(f"{table} ").removeprefix(table),
    )


_EMPTY: Final[Mapping[str, Any]] = MappingProxyType({})


def _json_object(payload: bytes) -> Mapping[str, Any] | None:
    try:
        body = json.loads(payload)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _on_duty(staff: Any) -> str | None:
    """The dealer of a ``staff`` view (docs/station.md) as ``Name (ID)``; ``None``: nobody."""
    dealer = _mapping(_mapping(staff).get("dealer"))
    name, person = dealer.get("name"), dealer.get("person")
    if not person:
        return None
    return f"{clean(name, 32)} ({clean(person, 32)})" if name else clean(person, 32)


def _text(value: Any) -> str | None:
    return None if value is None else clean(value, 24)


def _round_number(table: str, round_id: Any) -> str | None:
    if not isinstance(round_id, str) or not round_id:
        return None
    return clean(round_id.removeprefix(f"{table}-"), 24)
