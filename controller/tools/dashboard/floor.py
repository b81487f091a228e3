"""The floor as the dashboard knows it: every table's published messages in, typed views out.

Pure (no I/O, no clock: times arrive in the payloads, and the subscriber passes its own): the
subscriber feeds :meth:`Floor.ingest` each MQTT message, and the pages read :class:`Tile`,
:class:`OutcomeEntry` and the spins back. Only what the topics carry is kept (docs/mqtt.md): the
retained ``status``, ``state``, ``outcome`` and ``devices/{id}``, the live ``events`` and
``alarms``. Commands (``cmd/…``) and anything else under the prefix are ignored.

De-duplication follows the contract: an event once per ``(table, seq)`` (the outbox may deliver a
record twice after a reconnect), a retained message once per payload (a broker hands it out
again on every subscribe), and an outcome once whether it came on ``outcome`` or ``events``.
Memory is bounded per table: the last ``history`` outcomes, the last ``spins`` winning numbers,
the records of the last shoes and the last alarms.

A tile is **red** (:attr:`Tile.level` ``"fault"``) when the table cannot play: a latched fault
(a device's or the engine's), a lock (a journal outage), or its status ``offline`` (the Last
Will). It is amber (``"warn"``) when a device link is down or the table has not said yet whether
it is online.
"""

from __future__ import annotations

import bisect
import json
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.games.roulette import Pocket
from tablectl.controller.tools.summary import clock_summary, summarize
from tablectl.controller.tools.watch import MessageFilter, format_message

__all__ = [
    "Alarm",
    "DeviceHealth",
    "Floor",
    "Level",
    "Link",
    "LinkState",
    "OutcomeEntry",
    "Pocket",
    "Tile",
]

Level = Literal["ok", "warn", "fault"]
LinkState = Literal["connecting", "connected", "lost", "unreachable"]

HISTORY: Final = 500
"""Outcomes kept per table for its history page."""
SPINS: Final = 10_000
"""Winning numbers kept per roulette table for the billboard and the wheel statistics."""
SHOE_RECORDS: Final = 40_000
"""Card, shuffle and outcome records kept per card table for the shuffle statistics (about
a dozen 8-deck shoes)."""
ALARMS: Final = 20
_SHOE_TYPES: Final = frozenset({"card", "shuffle_started", "shuffle_completed", "shoe_end"})
_SHOE_FIELDS: Final = ("seq", "type", "ts", "card", "cards", "game", "status")


@dataclass(frozen=True, slots=True)
class DeviceHealth:
    """One device as its table publishes it: link up or down (``None``: not said yet), latched
    faults."""

    device: str
    available: bool | None
    faults: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OutcomeEntry:
    """One published outcome: its one-line summary and, for a wheel, the numbers it settled."""

    seq: int | None
    round: str | None
    ts: str | None
    status: str
    reason: str | None
    summary: str
    """The one-line summary, ``TABLE #ROUND text`` (``tools/summary.py``)."""
    numbers: tuple[Pocket, ...] = ()

    @property
    def text(self) -> str:
        """The summary without its head (table and round), where they are shown apart."""
        head, _, rest = self.summary.partition(" ")
        if rest.startswith("#"):
            _, _, rest = rest.partition(" ")
        return rest or head


@dataclass(frozen=True, slots=True)
class Alarm:
    ts: str | None
    raised: bool
    code: str
    device: str
    detail: str | None


@dataclass(frozen=True, slots=True)
class Link:
    """The dashboard's own link to the broker. ``since`` is when it entered this state."""

    state: LinkState = "connecting"
    url: str = ""
    since: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class Tile:
    """What a table's tile shows. ``alerts`` say why it is red, ``warnings`` why amber."""

    table: str
    game: str | None
    family: str | None
    online: bool | None
    phase: str | None
    round: str | None
    rounds: int | None
    devices: tuple[DeviceHealth, ...]
    faults: tuple[str, ...]
    """Latched fault codes, ``device: code`` (or the bare code for the engine's own)."""
    alerts: tuple[str, ...]
    warnings: tuple[str, ...]
    last_outcome: OutcomeEntry | None
    last_event: str | None
    updated: str | None

    @property
    def level(self) -> Level:
        if self.alerts:
            return "fault"
        return "warn" if self.warnings else "ok"


@dataclass
class _Table:
    name: str
    status: Mapping[str, Any] = field(default_factory=dict)
    state: Mapping[str, Any] = field(default_factory=dict)
    devices: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    outcomes: list[OutcomeEntry] = field(default_factory=list)
    spins: deque[Pocket] = field(default_factory=lambda: deque(maxlen=SPINS))
    variant: str | None = None
    shoe_records: deque[Mapping[str, Any]] | None = None
    alarms: deque[Alarm] = field(default_factory=lambda: deque(maxlen=ALARMS))
    last_event: str | None = None
    updated: str | None = None
    game: str | None = None
    version: int = 0


class Floor:
    """Every table under ``prefix`` (see the module docstring).

    Args:
        prefix: the topic prefix (``tablectl``; may itself have levels, ``site/hall``).
        history: outcomes kept per table.
    """

    def __init__(self, prefix: str = "tablectl", *, history: int = HISTORY) -> None:
        self.prefix = prefix.strip("/")
        self.history_size = max(1, history)
        self.version = 0
        """Counts every change, so a live view knows whether to look again."""
        self.link = Link()
        self._tables: dict[str, _Table] = {}
        self._levels = len(self.prefix.split("/"))
        # Events are remembered floor-wide: a redelivery after a reconnect may repeat minutes
        # of a hundred tables' records.
        self._seen = MessageFilter(table_level=self._levels, capacity=65_536)
        self._records: OrderedDict[tuple[str, str, int | None], None] = OrderedDict()

    # --- in ------------------------------------------------------------------------------------

    def set_link(self, link: Link) -> None:
        if link != self.link:
            self.link = link
            self.version += 1

    def ingest(self, topic: str, payload: bytes, *, retained: bool = False) -> str | None:
        """Take one message; the table it changed, or ``None`` (not ours, a repeat, not JSON)."""
        levels = topic.split("/")
        if levels[: self._levels] != self.prefix.split("/"):
            return None
        rest = levels[self._levels :]
        if len(rest) < 2 or not rest[0]:
            return None
        name, leaf = rest[0], "/".join(rest[1:])
        kind = "device" if len(rest) == 3 and rest[1] == "devices" else leaf
        if kind not in ("status", "state", "outcome", "events", "alarms", "device"):
            return None
        if not self._seen.is_new(topic, payload, retained=retained):
            return None
        try:
            body = json.loads(payload)
        except ValueError:
            return None
        if not isinstance(body, dict):
            return None
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = _Table(name)
        if isinstance(body.get("ts"), str):
            table.updated = body["ts"]
        if isinstance(body.get("game"), str):
            table.game = body["game"]
        if kind == "status":
            table.status = body
        elif kind == "state":
            table.state = body
        elif kind == "device":
            table.devices[rest[2]] = body
        elif kind == "outcome":
            self._outcome(table, body)
        elif kind == "alarms":
            self._alarm(table, body)
        else:
            self._event(table, topic, payload, body)
        self.version += 1
        table.version += 1
        return name

    def _event(self, table: _Table, topic: str, payload: bytes, body: Mapping[str, Any]) -> None:
        kind = body.get("type")
        if kind == "outcome":
            self._outcome(table, body)
            return
        line = format_message(topic, payload, table_level=self._levels)
        if line is not None:
            table.last_event = line.text.removeprefix(f"{table.name} ").removeprefix("event ")
        if kind in _SHOE_TYPES:
            if table.shoe_records is None:
                table.shoe_records = deque(maxlen=SHOE_RECORDS)
            table.shoe_records.append({k: body[k] for k in _SHOE_FIELDS if k in body})

    def _outcome(self, table: _Table, body: Mapping[str, Any]) -> None:
        seq = _seq(body)
        if not self._once(("outcome", table.name, seq)):
            return
        result = body.get("result")
        status = str(body.get("status") or "settled")
        numbers = _numbers(result) if status == "settled" and self._is_wheel(table) else ()
        if isinstance(result, Mapping) and isinstance(result.get("variant"), str):
            table.variant = result["variant"]
        reason = body.get("reason")
        entry = OutcomeEntry(
            seq=seq,
            round=body.get("round") if isinstance(body.get("round"), str) else None,
            ts=body.get("ts") if isinstance(body.get("ts"), str) else None,
            status=status,
            reason=str(reason) if reason is not None else None,
            summary=summarize({**body, "table": table.name}),
            numbers=numbers,
        )
        # In seq order, whatever order a redelivery brings them in.
        keys = [e.seq if e.seq is not None else -1 for e in table.outcomes]
        at = len(keys) if seq is None else bisect.bisect_right(keys, seq)
        table.outcomes.insert(at, entry)
        del table.outcomes[: max(0, len(table.outcomes) - self.history_size)]
        table.spins.extend(numbers)
        if table.shoe_records is not None:
            winner = result.get("winner") if isinstance(result, Mapping) else None
            record = {k: body[k] for k in _SHOE_FIELDS if k in body}
            table.shoe_records.append({**record, "type": "outcome", "result": {"winner": winner}})

    def _once(self, key: tuple[str, str, int | None]) -> bool:
        """First time this record (kind, table, seq) is seen; a record without seq always is."""
        if key[2] is None:
            return True
        if key in self._records:
            return False
        self._records[key] = None
        if len(self._records) > 4096 * max(1, len(self._tables)):
            self._records.popitem(last=False)
        return True

    def _alarm(self, table: _Table, body: Mapping[str, Any]) -> None:
        # The journal's alarms carry their record's seq (a redelivery repeats it); a journal
        # outage's own raise and clear have none.
        if not self._once(("alarm", table.name, _seq(body))):
            return
        detail = body.get("detail")
        kind = body.get("type")
        clock = kind in ("clock_step", "clock_confirmed")
        if clock:
            detail = clock_summary(body)
        table.alarms.append(
            Alarm(
                ts=body.get("ts") if isinstance(body.get("ts"), str) else None,
                raised=kind not in ("fault_cleared", "clock_confirmed")
                and body.get("suspect") is not False,
                code=str(kind if clock else body.get("code") or "?"),
                device="clock" if clock else str(body.get("device") or "?"),
                detail=str(detail) if detail else None,
            )
        )

    def _is_wheel(self, table: _Table) -> bool:
        return self.family(table.name) == "roulette"

    # --- out -----------------------------------------------------------------------------------

    def tables(self) -> list[str]:
        return sorted(self._tables)

    def table_version(self, name: str) -> int:
        """Counts the changes of one table (-1: not seen), so a view of it redraws only then."""
        table = self._tables.get(name)
        return table.version if table is not None else -1

    def family(self, name: str) -> str | None:
        """The catalog family of the table's game (``None``: unknown, e.g. a plug-in game)."""
        table = self._tables.get(name)
        entry = CATALOG.get(table.game or "") if table is not None else None
        return entry.family if entry is not None else None

    def history(self, name: str) -> tuple[OutcomeEntry, ...]:
        """The table's outcomes, newest first."""
        table = self._tables.get(name)
        return tuple(reversed(table.outcomes)) if table is not None else ()

    def alarms(self, name: str) -> tuple[Alarm, ...]:
        """The table's last alarms, newest first."""
        table = self._tables.get(name)
        return tuple(reversed(table.alarms)) if table is not None else ()

    def spins(self, name: str) -> tuple[Pocket, ...]:
        """The winning numbers seen, oldest first (both balls of a double-ball round)."""
        table = self._tables.get(name)
        return tuple(table.spins) if table is not None else ()

    def variant(self, name: str) -> str:
        """The wheel's variant as its outcomes say (``european`` until one says otherwise)."""
        table = self._tables.get(name)
        return (table.variant if table is not None else None) or "european"

    def shoe_records(self, name: str) -> tuple[Mapping[str, Any], ...]:
        """The card table's shoe records (cards as published: a withheld one has no card)."""
        table = self._tables.get(name)
        records = table.shoe_records if table is not None else None
        return tuple(records) if records is not None else ()

    def tile(self, name: str) -> Tile | None:
        table = self._tables.get(name)
        if table is None:
            return None
        state, status = table.state, table.status
        devices = _devices(state, table.devices)
        faults = [f"{d.device}: {code}" for d in devices for code in d.faults]
        device_codes = {code for d in devices for code in d.faults}
        engine = _list(state.get("faults"))
        faults += [str(code) for code in engine if code not in device_codes]
        faults += [str(c) for c in _list(status.get("faults")) if str(c) not in faults]
        alerts: list[str] = []
        if status.get("state") == "offline":
            alerts.append("offline")
        if faults:
            alerts.append("latched fault")
        journal = state.get("journal")
        if (isinstance(journal, Mapping) and journal.get("available") is False) or (
            isinstance(status.get("journal"), Mapping) and status.get("locked")
        ):
            alerts.append("journal unavailable")
        if (state.get("locked") or status.get("locked")) and not alerts:
            alerts.append("locked")
        warnings = [f"{d.device} link down" for d in devices if d.available is False]
        if not status:
            warnings.append("no status yet")
        round_id = state.get("round")
        rounds = state.get("rounds")
        return Tile(
            table=table.name,
            game=table.game,
            family=self.family(table.name),
            online=None if not status else status.get("state") == "online",
            phase=str(state["phase"]) if state.get("phase") is not None else None,
            round=str(round_id) if round_id is not None else None,
            rounds=rounds if isinstance(rounds, int) and not isinstance(rounds, bool) else None,
            devices=devices,
            faults=tuple(faults),
            alerts=tuple(alerts),
            warnings=tuple(warnings),
            last_outcome=table.outcomes[-1] if table.outcomes else None,
            last_event=table.last_event,
            updated=table.updated,
        )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _devices(
    state: Mapping[str, Any], published: Mapping[str, Mapping[str, Any]]
) -> tuple[DeviceHealth, ...]:
    """Each device from ``state.devices`` (latched faults) and ``devices/{id}`` (link)."""
    listed = _mapping(state.get("devices"))
    out = []
    for name in sorted({*listed, *published}):
        own = published.get(name, {})
        codes = [*_list(_mapping(listed.get(name)).get("faults")), *_list(own.get("faults"))]
        available = own.get("available")
        out.append(
            DeviceHealth(
                device=str(name),
                available=available if isinstance(available, bool) else None,
                faults=tuple(sorted({str(c) for c in codes})),
            )
        )
    return tuple(out)


def _seq(body: Mapping[str, Any]) -> int | None:
    seq = body.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def _numbers(result: Any) -> tuple[Pocket, ...]:
    """The pockets a roulette result settled: ``number``, or a double ball's ``numbers``."""
    if not isinstance(result, Mapping):
        return ()
    found = result.get("numbers") if "numbers" in result else [result.get("number")]
    pockets: list[Pocket] = []
    for n in _list(found):
        if n == "00":
            pockets.append("00")
        elif isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 36:
            pockets.append(n)
    return tuple(pockets)
