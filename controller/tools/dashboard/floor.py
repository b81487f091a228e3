"""The floor as the dashboard knows it: every table's published messages in, typed views out.

Pure. **Nothing on the broker is trusted** (contracts §7): messages are read bounded, type-checked,
and kept only as bounded snapshots; failures are counted, never raised. A record is used only if it
links to an accepted record at ``seq − 1`` (or provisionally); two that link at one ``seq`` are
shown as a fork (only a keyed journal tells them apart, docs/fleet.md). docs/dashboard.md.
"""

from __future__ import annotations

import bisect
import hashlib
from collections import Counter, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeVar

from tablectl.controller.core.bounded_json import MAX_BYTES, read_object
from tablectl.controller.core.errors import MalformedError
from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.games.roulette import Pocket
from tablectl.controller.tools.summary import clock_summary, summarize
from tablectl.controller.tools.watch import check_record, format_message

Level = Literal["ok", "warn", "fault"]
LinkState = Literal["connecting", "connected", "lost", "unreachable", "down"]
"""The broker link as the pages say it; ``down``: the feed itself failed and is restarting."""

HISTORY: Final = 500
"""Outcomes kept per table for its history page."""
SPINS: Final = 10_000
"""Winning numbers kept per roulette table for the billboard and the wheel statistics."""
SHOE_RECORDS: Final = 40_000
"""Card, shuffle and outcome records kept per card table for the shuffle statistics (about
a dozen 8-deck shoes)."""
ALARMS: Final = 20
MAX_TABLES: Final = 500
"""Tables the dashboard follows (a floor's; ``--max-tables``)."""
MAX_DEVICES: Final = 32
"""Devices per table (``--max-devices``)."""
MAX_AHEAD: Final = 1_000
"""Records past the table's ``state`` ``seq`` still shown (``--max-ahead``): a table publishes
its records before the state that describes them, a backlog after an outage included."""
STAFF_DAYS: Final = 30
"""Days of the archive the staff page counts (``--staff-days``)."""
LINKS: Final = 512
"""Records per table whose ``seq``, ``hash`` and ``prev_hash`` are kept to link and
de-duplicate the next ones."""
HELD: Final = 256
"""Outcomes (and spins, shoe records) kept beyond ``max_ahead`` past the state, waiting for a
state that covers them."""
MAX_ID: Final = 64
"""Characters of a table or device id (the config's own limit)."""
_TEXT: Final = 200
"""Characters kept of a published string (a phase, a round, a fault code, a detail)."""
_CODES: Final = 32
"""Fault codes kept per list."""
_SHOE_TYPES: Final = frozenset({"card", "shuffle_started", "shuffle_completed", "shoe_end"})
_RETAINED: Final = frozenset({"status", "state", "outcome", "device", "staff"})
PACE_WINDOW: Final = 3600.0
"""Seconds of outcomes, back from the newest, a tile's pace is measured over."""

T = TypeVar("T")


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
    hash: str | None = None
    """The record's ``hash`` (two records may claim one ``seq``: this tells them apart)."""

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


@dataclass(frozen=True, slots=True)
class OnDuty:
    """A person on duty as the retained ``staff`` topic names them (docs/station.md)."""

    person: str
    name: str | None
    since: str | None


@dataclass(frozen=True, slots=True)
class Staff:
    """Who is on duty at a table (its retained ``staff``): at most one dealer."""

    dealer: OnDuty | None
    supervisors: tuple[OnDuty, ...] = ()
    technicians: tuple[OnDuty, ...] = ()


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
    more_devices: int = 0
    """Devices left off the tile (beyond ``max_devices``)."""
    staff: Staff | None = None
    """``None``: the table publishes no ``staff`` (no roster)."""
    pace: float | None = None
    """Rounds per hour over the last hour of outcomes seen (:func:`pace`)."""

    @property
    def level(self) -> Level:
        if self.alerts:
            return "fault"
        return "warn" if self.warnings else "ok"


class RefusedError(Exception):
    """A well-formed message a bound or the chain refuses (``reason``: ``tables``, ``devices``,
    ``unlinked``), counted in :attr:`Floor.refused`."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason} ({detail})" if detail else reason)
        self.reason = reason
        self.detail = detail


# --- typed snapshots of the retained topics -----------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Status:
    state: str | None
    locked: bool
    faults: tuple[str, ...]
    journal: bool
    """It carries a journal outage's details."""


@dataclass(frozen=True, slots=True)
class _State:
    game: str | None
    phase: str | None
    round: str | None
    rounds: int | None
    seq: int | None
    faults: tuple[str, ...]
    devices: Mapping[str, tuple[str, ...]]
    """Latched faults per device (at most ``max_devices``)."""
    more_devices: int
    locked: bool
    journal_available: bool | None


@dataclass(frozen=True, slots=True)
class _Device:
    available: bool | None
    faults: tuple[str, ...]


@dataclass(slots=True)
class _Record:
    """A record seen on ``events`` (or ``outcome``): its predecessor's hash, whether it is used
    (``ok``), and whether it links to a used record (``anchored``; else it was taken for lack
    of one, provisionally)."""

    prev: str
    ok: bool
    anchored: bool


@dataclass
class _Table:
    name: str
    status: _Status | None = None
    state: _State | None = None
    staff: Staff | None = None
    devices: dict[str, _Device] = field(default_factory=dict)
    retained: dict[str, bytes] = field(default_factory=dict)
    """Digest of each retained topic's payload held (``status``, ``state``, ``outcome``,
    ``devices/{id}``): a repeat changes nothing, and a table with none left is gone."""
    outcomes: list[OutcomeEntry] = field(default_factory=list)
    """In ``seq`` order."""
    spins: list[tuple[int, str, Pocket]] = field(default_factory=list)
    """``(seq, hash, number)`` in ``seq`` order."""
    variant: str | None = None
    shoe_records: list[tuple[int, str, Mapping[str, Any]]] | None = None
    """``(seq, hash, record)`` in ``seq`` order (card tables only)."""
    alarms: deque[Alarm] = field(default_factory=lambda: deque(maxlen=ALARMS))
    alarm_keys: deque[tuple[int, str | None]] = field(
        default_factory=lambda: deque(maxlen=ALARMS * 4)
    )
    last_event: tuple[int, str, str] | None = None
    """``(seq, hash, line)`` of the newest event."""
    links: dict[int, dict[str, _Record]] = field(default_factory=dict)
    """The records seen, by ``seq`` then ``hash``."""
    linked: int = 0
    """Records in :attr:`links` (at most :data:`LINKS`)."""
    forgotten: int = 0
    """The newest ``seq`` whose records :attr:`links` no longer holds (the oldest go first): a
    record at or before it cannot be linked any more, so it is not shown."""
    rooted: tuple[tuple[int, int], frozenset[tuple[int, str]]] | None = None
    """:meth:`Floor._rooted`'s answer, for the table's version and state ``seq`` it is for."""
    conflict: int | None = None
    """The newest ``seq`` at which two different records both linked."""
    updated: str | None = None
    game: str | None = None
    version: int = 0
    heard: int = 0
    """The floor's version at the table's last message (the eviction order)."""


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=16).digest()


class Floor:
    """Every table under ``prefix`` (which may itself have levels, ``site/hall``)."""

    def __init__(
        self,
        prefix: str = "tablectl",
        *,
        history: int = HISTORY,
        max_tables: int = MAX_TABLES,
        max_devices: int = MAX_DEVICES,
        max_ahead: int = MAX_AHEAD,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.prefix = prefix.strip("/")
        self.history_size = max(1, history)
        self.max_tables = max(1, max_tables)
        self.max_devices = max(1, max_devices)
        self.max_ahead = max(0, max_ahead)
        self.max_bytes = max(1, max_bytes)
        self.version = 0
        """Counts every change, so a live view knows whether to look again."""
        self.link = Link()
        self.malformed: Counter[str] = Counter()
        """Messages that were no payload of a table's, by reason (``too_large``, ``not_json``,
        ``bad_number``, ``too_deep``, ``not_object``, ``bad_field``, ``bad_topic``,
        ``internal``)."""
        self.refused: Counter[str] = Counter()
        """Well-formed messages refused, by reason (``tables``, ``devices``, ``unlinked``)."""
        self.on_reject: Callable[[str, str, str, str], None] | None = None
        """Told of each message counted in :attr:`malformed` or :attr:`refused`:
        ``(counter, reason, topic, detail)`` (the subscriber logs them)."""
        self._tables: dict[str, _Table] = {}
        self._levels = len(self.prefix.split("/"))

    # --- in ------------------------------------------------------------------------------------

    def set_link(self, link: Link) -> None:
        if link != self.link:
            self.link = link
            self.version += 1

    def ingest(self, topic: str, payload: bytes, *, retained: bool = False) -> str | None:
        """Take one message; the table it changed, or ``None`` (not ours, a repeat, malformed,
        refused). Never raises for what a message holds."""
        try:
            return self._ingest(topic, payload)
        except MalformedError as exc:
            self.reject("malformed", exc.reason, topic, exc.detail)
        except RefusedError as exc:
            self.reject("refused", exc.reason, topic, exc.detail)
        return None

    def reject(self, counter: str, reason: str, topic: str, detail: str = "") -> None:
        """Count a message that changed nothing (also the subscriber's, for a failure of its
        own: ``internal``)."""
        (self.refused if counter == "refused" else self.malformed)[reason] += 1
        if self.on_reject is not None:
            self.on_reject(counter, reason, topic, detail)

    def _where(self, topic: str) -> tuple[str, str, str | None] | None:
        """``(table, kind, device)`` of a topic of ours, ``None`` for any other."""
        levels = topic.split("/")
        if levels[: self._levels] != self.prefix.split("/"):
            return None
        rest = levels[self._levels :]
        if len(rest) < 2 or not rest[0]:
            return None
        if len(rest) == 3 and rest[1] == "devices":
            if not rest[2] or len(rest[2]) > MAX_ID:
                raise MalformedError("bad_topic", "device id")
            kind, device = "device", rest[2]
        elif len(rest) == 2 and rest[1] in (
            "status",
            "state",
            "outcome",
            "events",
            "alarms",
            "staff",
        ):
            kind, device = rest[1], None
        else:
            return None
        if len(rest[0]) > MAX_ID:
            raise MalformedError("bad_topic", "table id")
        return rest[0], kind, device

    def _ingest(self, topic: str, payload: bytes) -> str | None:
        where = self._where(topic)
        if where is None:
            return None
        name, kind, device = where
        slot = f"devices/{device}" if device is not None else kind
        table = self._tables.get(name)
        if kind in _RETAINED and not payload:
            return self._clear(table, kind, slot, device)
        digest = _digest(payload) if kind in _RETAINED else b""
        if table is not None and kind in _RETAINED and table.retained.get(slot) == digest:
            return None  # a retained message handed out again
        body = read_object(payload, max_bytes=self.max_bytes)
        ts = _optional(body, "ts", str)
        if kind == "status":
            status = _status(body)
            table = self._table(name)
            table.status = status
        elif kind == "state":
            state = _state(body, self.max_devices)
            table = self._table(name)
            table.state = state
            table.game = state.game or table.game
        elif kind == "staff":
            staff = _staff(body)
            table = self._table(name)
            table.staff = staff
        elif kind == "device":
            assert device is not None
            health = _device(body)
            table = self._table(name)
            if device not in table.devices and len(table.devices) >= self.max_devices:
                raise RefusedError("devices", f"more than {self.max_devices}")
            table.devices[device] = health
        elif kind == "alarms":
            alarm, key = _alarm(body)
            table = self._table(name)
            if key is not None and key in table.alarm_keys:
                return None
            if key is not None:
                table.alarm_keys.append(key)
            table.alarms.append(alarm)
        elif not self._record(name, kind, topic, payload, body):
            return None
        table = self._tables[name]
        if kind in _RETAINED:
            table.retained[slot] = digest
        if ts is not None:
            table.updated = ts[:40]
        self.version += 1
        table.version += 1
        table.heard = self.version
        return name

    def _table(self, name: str) -> _Table:
        """The table ``name``, created if new: beyond ``max_tables`` the table heard from
        longest ago that holds no retained topic (a real table always holds its ``status``)
        makes room, else the new one is refused."""
        table = self._tables.get(name)
        if table is not None:
            return table
        if len(self._tables) >= self.max_tables:
            transient = [t for t in self._tables.values() if not t.retained]
            if not transient:
                raise RefusedError("tables", f"more than {self.max_tables}")
            del self._tables[min(transient, key=lambda t: t.heard).name]
        table = self._tables[name] = _Table(name)
        return table

    def _clear(self, table: _Table | None, kind: str, slot: str, device: str | None) -> str | None:
        """An empty retained payload: the topic is deleted; so is the table with its last."""
        if table is None or slot not in table.retained:
            return None
        del table.retained[slot]
        if kind == "status":
            table.status = None
        elif kind == "state":
            table.state = None
        elif kind == "staff":
            table.staff = None
        elif kind == "device" and device is not None:
            table.devices.pop(device, None)
        if not table.retained:
            del self._tables[table.name]
        self.version += 1
        table.version += 1
        return table.name

    # --- records: the chain --------------------------------------------------------------------

    def _record(
        self, name: str, kind: str, topic: str, payload: bytes, body: Mapping[str, Any]
    ) -> bool:
        """A record on ``events`` or ``outcome``: checked, linked, used. Whether it changed
        anything (a repeat does not)."""
        seq = check_record(body)
        record_hash, prev = str(body["hash"]), str(body["prev_hash"])
        outcome = kind == "outcome" or body.get("type") == "outcome"
        result = body.get("result")
        if result is not None and not isinstance(result, Mapping):
            raise MalformedError("bad_field", "result")
        line = None if outcome else format_message(topic, payload, table_level=self._levels)
        entry = self._entry(name, body, seq, record_hash) if outcome else None
        table = self._table(name)
        seen = table.links.get(seq) or {}
        if record_hash in seen:
            return kind == "outcome"  # a repeat (the retained copy of an outcome is news)
        if seq <= table.forgotten:
            # Older than what the dashboard still links: the table's own record of that seq
            # came long ago, so this one is a late copy or a forgery, and nothing can tell.
            raise RefusedError("unlinked", f"seq {seq}: before the records still linked")
        before = table.links.get(seq - 1) or {}
        anchored = any(r.ok and h == prev for h, r in before.items())
        linked_here = any(r.ok and r.anchored for r in seen.values())
        ok = anchored or not (_must_link(before) or linked_here)
        if anchored and linked_here:
            table.conflict = max(seq, table.conflict or 0)
        self._link(table, seq, record_hash, _Record(prev, ok, anchored))
        if not ok:
            raise RefusedError("unlinked", f"seq {seq}")
        dropped: set[tuple[int, str]] = set()
        if anchored:  # a linked record displaces the provisional ones at its seq
            for other, record in list(seen.items()):
                if record.ok and not record.anchored:
                    self._set(table, seq, other, ok=False)
                    dropped.add((seq, other))
        self._drop(table, dropped | self._recheck(table, seq))
        if entry is not None:
            self._outcome(table, entry, body)
        elif line is not None and (table.last_event is None or seq >= table.last_event[0]):
            text = line.text.removeprefix(f"{table.name} ").removeprefix("event ")
            table.last_event = (seq, record_hash, text[:_TEXT])
        if body.get("type") in _SHOE_TYPES:
            self._shoe(table, seq, record_hash, body)
        return True

    def _link(self, table: _Table, seq: int, record_hash: str, record: _Record) -> None:
        """Remember a record; beyond :data:`LINKS`, forget the records farthest past the
        table's state first (what the state does not cover yet, with what it held: nothing
        confirms it any more), else the oldest (the state confirmed them: what they held
        stays)."""
        table.links.setdefault(seq, {})[record_hash] = record
        table.linked += 1
        state = table.state.seq if table.state is not None else None
        while table.linked > LINKS:
            ahead = [at for at in table.links if state is not None and at > state + 1]
            victim = max(ahead) if ahead else min(table.links)
            records = table.links.pop(victim)
            table.linked -= len(records)
            if ahead:
                self._drop(table, {(victim, h) for h, r in records.items() if r.ok})
            else:
                table.forgotten = max(table.forgotten, victim)

    def _set(
        self, table: _Table, seq: int, record_hash: str, *, ok: bool, anchored: bool = False
    ) -> None:
        """Change a record's standing."""
        record = table.links[seq][record_hash]
        record.ok, record.anchored = ok, anchored and ok

    def _recheck(self, table: _Table, seq: int) -> set[tuple[int, str]]:
        """After a change at ``seq``, the records after it: one that links to a used record is
        anchored; one that does not is dropped where it had to link (a linked or a dropped
        record is there), with whatever linked to it; else it stays provisional. The dropped
        ``(seq, hash)``."""
        dropped: set[tuple[int, str]] = set()
        for at in range(seq, seq + LINKS):
            here, after = table.links.get(at), table.links.get(at + 1)
            if not here or not after:
                break
            good = {h for h, r in here.items() if r.ok}
            must = _must_link(here)
            changed = False
            for record_hash, record in list(after.items()):
                if not record.ok:
                    continue
                if record.prev in good:
                    if not record.anchored:
                        self._set(table, at + 1, record_hash, ok=True, anchored=True)
                        changed = True
                elif must:
                    self._set(table, at + 1, record_hash, ok=False)
                    dropped.add((at + 1, record_hash))
                    changed = True
                elif record.anchored:
                    self._set(table, at + 1, record_hash, ok=True, anchored=False)
                    changed = True
            if any(r.ok and r.anchored for r in after.values()):
                for record_hash, record in list(after.items()):
                    if record.ok and not record.anchored:
                        self._set(table, at + 1, record_hash, ok=False)
                        dropped.add((at + 1, record_hash))
                        changed = True
            if not changed:
                break
        return dropped

    def _rooted(self, table: _Table) -> frozenset[tuple[int, str]]:
        """The records past the table's state that are shown: those that link, record by
        record, to one the state covers (or that lack a predecessor but are just one past it:
        the state follows its records). A provisional island further ahead (someone's records
        that the table's own will contradict) is not."""
        state = table.state.seq if table.state is not None else None
        if state is None:
            return frozenset()
        if table.rooted is not None and table.rooted[0] == (table.version, state):
            return table.rooted[1]
        rooted: set[tuple[int, str]] = set()
        here = {h for h, r in (table.links.get(state) or {}).items() if r.ok}
        for at in range(state + 1, state + self.max_ahead + 1):
            records = table.links.get(at)
            if not records:
                break
            here = {
                h
                for h, r in records.items()
                if r.ok and ((r.anchored and r.prev in here) or at == state + 1)
            }
            if not here:
                break
            rooted.update((at, h) for h in here)
        table.rooted = ((table.version, state), frozenset(rooted))
        return table.rooted[1]

    def _drop(self, table: _Table, dropped: set[tuple[int, str]]) -> None:
        """Take what dropped records held out of the history, spins and shoe records."""
        if not dropped:
            return
        self.refused["unlinked"] += len(dropped)
        table.outcomes = [e for e in table.outcomes if (e.seq or 0, e.hash or "") not in dropped]
        table.spins = [s for s in table.spins if (s[0], s[1]) not in dropped]
        if table.shoe_records is not None:
            table.shoe_records = [r for r in table.shoe_records if (r[0], r[1]) not in dropped]
        if table.last_event is not None and table.last_event[:2] in dropped:
            table.last_event = None

    def limit(self, name: str) -> int | None:
        """The highest ``seq`` of the table shown: ``max_ahead`` past its state (``None``: no
        state with a ``seq`` yet, nothing to judge by)."""
        table = self._tables.get(name)
        state = table.state if table is not None else None
        if state is None or state.seq is None:
            return None
        return state.seq + self.max_ahead

    def _entry(
        self, name: str, body: Mapping[str, Any], seq: int, record_hash: str
    ) -> OutcomeEntry:
        result = body.get("result")
        status = str(body.get("status") or "settled")[:_TEXT]
        game = body.get("game")
        family = _family(game if isinstance(game, str) else None) or self.family(name)
        numbers = _numbers(result) if status == "settled" and family == "roulette" else ()
        reason = body.get("reason")
        return OutcomeEntry(
            seq=seq,
            round=_optional(body, "round", str),
            ts=_optional(body, "ts", str),
            status=status,
            reason=str(reason)[:_TEXT] if reason is not None else None,
            summary=summarize({**body, "table": name}),
            numbers=numbers,
            hash=record_hash,
        )

    def _outcome(self, table: _Table, entry: OutcomeEntry, body: Mapping[str, Any]) -> None:
        seq, record_hash = entry.seq or 0, entry.hash or ""
        keys = table.outcomes
        at = bisect.bisect_left(keys, seq, key=lambda e: e.seq or 0)
        if any(e.hash == record_hash for e in keys[at : at + 4] if e.seq == seq):
            return  # seen before the links forgot it
        limit = self.limit(table.name)
        if at == 0 and len(keys) >= self.history_size and (limit is None or seq <= limit):
            return  # older than anything kept
        keys.insert(at, entry)
        _trim(keys, lambda e: e.seq or 0, self.history_size, limit)
        result = body.get("result")
        if isinstance(result, Mapping) and isinstance(result.get("variant"), str):
            table.variant = result["variant"][:_TEXT]
        if isinstance(body.get("game"), str) and table.game is None:
            table.game = body["game"][:_TEXT]
        for number in entry.numbers:
            spin = (seq, record_hash, number)
            bisect.insort_right(table.spins, spin, key=lambda s: s[0])
        _trim(table.spins, lambda s: s[0], SPINS, limit)
        if table.shoe_records is not None:
            winner = result.get("winner") if isinstance(result, Mapping) else None
            record = {
                **_shoe_fields(body),
                "type": "outcome",
                "result": {"winner": winner if isinstance(winner, str) else None},
            }
            self._insert_shoe(table, seq, record_hash, record)

    def _shoe(self, table: _Table, seq: int, record_hash: str, body: Mapping[str, Any]) -> None:
        if table.shoe_records is None:
            table.shoe_records = []
        self._insert_shoe(table, seq, record_hash, _shoe_fields(body))

    def _insert_shoe(
        self, table: _Table, seq: int, record_hash: str, record: Mapping[str, Any]
    ) -> None:
        records = table.shoe_records
        assert records is not None
        at = bisect.bisect_left(records, seq, key=lambda r: r[0])
        if at < len(records) and records[at][0] == seq:
            return  # seen before the links forgot it
        records.insert(at, (seq, record_hash, record))
        _trim(records, lambda r: r[0], SHOE_RECORDS, self.limit(table.name))

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
        return _family(table.game) if table is not None else None

    def _shown(
        self, name: str, items: Sequence[T], seq: Callable[[T], int], key: Callable[[T], str]
    ) -> Sequence[T]:
        """``items`` (in ``seq`` order) as shown: up to the table's state ``seq`` (and one
        past it), and beyond only the records :meth:`_rooted` finds."""
        table = self._tables.get(name)
        state = table.state.seq if table is not None and table.state is not None else None
        if table is None or state is None:
            return items
        cut = bisect.bisect_right(items, state, key=seq)
        if cut == len(items):
            return items
        rooted = self._rooted(table)
        return [*items[:cut], *(i for i in items[cut:] if (seq(i), key(i)) in rooted)]

    def history(self, name: str) -> tuple[OutcomeEntry, ...]:
        """The table's outcomes, newest first."""
        table = self._tables.get(name)
        if table is None:
            return ()
        shown = self._shown(name, table.outcomes, _entry_seq, _entry_hash)
        return tuple(reversed(shown[-self.history_size :]))

    def alarms(self, name: str) -> tuple[Alarm, ...]:
        """The table's last alarms, newest first."""
        table = self._tables.get(name)
        return tuple(reversed(table.alarms)) if table is not None else ()

    def spins(self, name: str) -> tuple[Pocket, ...]:
        """The winning numbers seen, oldest first (both balls of a double-ball round)."""
        table = self._tables.get(name)
        if table is None:
            return ()
        shown = self._shown(name, table.spins, lambda s: s[0], lambda s: s[1])
        return tuple(s[2] for s in shown[-SPINS:])

    def variant(self, name: str) -> str:
        """The wheel's variant as its outcomes say (``european`` until one says otherwise)."""
        table = self._tables.get(name)
        return (table.variant if table is not None else None) or "european"

    def shoe_records(self, name: str) -> tuple[Mapping[str, Any], ...]:
        """The card table's shoe records (cards as published: a withheld one has no card)."""
        table = self._tables.get(name)
        records = table.shoe_records if table is not None else None
        if records is None:
            return ()
        return tuple(r[2] for r in self._shown(name, records, lambda r: r[0], lambda r: r[1]))

    def tile(self, name: str) -> Tile | None:
        table = self._tables.get(name)
        if table is None:
            return None
        state, status = table.state, table.status
        devices, more = _devices(state, table.devices, self.max_devices)
        faults = [f"{d.device}: {code}" for d in devices for code in d.faults]
        device_codes = {code for d in devices for code in d.faults}
        if state is not None:
            faults += [code for code in state.faults if code not in device_codes]
        if status is not None:
            faults += [code for code in status.faults if code not in faults]
        alerts: list[str] = []
        if status is not None and status.state == "offline":
            alerts.append("offline")
        if faults:
            alerts.append("latched fault")
        if (state is not None and state.journal_available is False) or (
            status is not None and status.journal and status.locked
        ):
            alerts.append("journal unavailable")
        if ((state is not None and state.locked) or (status is not None and status.locked)) and (
            not alerts
        ):
            alerts.append("locked")
        warnings = [f"{d.device} link down" for d in devices if d.available is False]
        if status is None:
            warnings.append("no status yet")
        if table.conflict is not None and table.conflict in table.links:
            warnings.append(f"two records claim seq {table.conflict}")
        history = self._shown(name, table.outcomes, _entry_seq, _entry_hash)
        event = table.last_event
        if event is not None and not self._shown(name, [event], lambda e: e[0], lambda e: e[1]):
            event = None
        return Tile(
            table=table.name,
            game=table.game,
            family=self.family(table.name),
            online=None if status is None else status.state == "online",
            phase=state.phase if state is not None else None,
            round=state.round if state is not None else None,
            rounds=state.rounds if state is not None else None,
            devices=devices,
            faults=tuple(faults[: _CODES * 2]),
            alerts=tuple(alerts),
            warnings=tuple(warnings),
            last_outcome=history[-1] if history else None,
            last_event=event[2] if event is not None else None,
            updated=table.updated,
            more_devices=more,
            staff=table.staff,
            pace=pace(history),
        )


# --- reading payloads: every field's type checked ----------------------------------------------


def _optional(body: Mapping[str, Any], name: str, kind: type[T]) -> T | None:
    """``body[name]`` if it is a ``kind`` (or absent/null: ``None``); strings cut to a bound.

    Raises:
        MalformedError: another type.
    """
    value = body.get(name)
    if value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise MalformedError("bad_field", name)
    return value[:_TEXT] if isinstance(value, str) else value  # type: ignore[return-value]


def _scalar(body: Mapping[str, Any], name: str) -> str | None:
    """A field shown as text: a string or a number (a plug-in's phase may be either)."""
    value = body.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise MalformedError("bad_field", name)
    return str(value)[:_TEXT]


def _codes(body: Mapping[str, Any], name: str) -> tuple[str, ...]:
    """A list of fault codes (strings), at most :data:`_CODES` of them."""
    value = body.get(name)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise MalformedError("bad_field", name)
    return tuple(sorted({code[:_TEXT] for code in value[: _CODES * 4]})[:_CODES])


def _flag(body: Mapping[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise MalformedError("bad_field", name)
    return bool(value)


def _status(body: Mapping[str, Any]) -> _Status:
    journal = body.get("journal")
    if journal is not None and not isinstance(journal, Mapping):
        raise MalformedError("bad_field", "journal")
    return _Status(
        state=_optional(body, "state", str),
        locked=_flag(body, "locked"),
        faults=_codes(body, "faults"),
        journal=journal is not None,
    )


def _state(body: Mapping[str, Any], max_devices: int) -> _State:
    journal = body.get("journal")
    if journal is not None and not isinstance(journal, Mapping):
        raise MalformedError("bad_field", "journal")
    available = journal.get("available") if journal is not None else None
    if available is not None and not isinstance(available, bool):
        raise MalformedError("bad_field", "journal.available")
    listed = body.get("devices")
    if listed is not None and not isinstance(listed, Mapping):
        raise MalformedError("bad_field", "devices")
    devices: dict[str, tuple[str, ...]] = {}
    for device, entry in (listed or {}).items():
        if not isinstance(entry, Mapping):
            raise MalformedError("bad_field", "devices")
        codes = _codes(entry, "faults")
        if len(device) <= MAX_ID and len(devices) < max_devices:
            devices[device] = codes
    seq = _optional(body, "seq", int)
    return _State(
        game=_optional(body, "game", str),
        phase=_scalar(body, "phase"),
        round=_scalar(body, "round"),
        rounds=_optional(body, "rounds", int),
        seq=seq,
        faults=_codes(body, "faults"),
        devices=devices,
        more_devices=len(listed or {}) - len(devices),
        locked=_flag(body, "locked"),
        journal_available=available,
    )


def _on_duty(entry: object, field: str) -> OnDuty:
    if not isinstance(entry, Mapping):
        raise MalformedError("bad_field", field)
    person = _optional(entry, "person", str)
    if person is None or len(person) > MAX_ID:
        raise MalformedError("bad_field", f"{field}.person")
    return OnDuty(person, _optional(entry, "name", str), _optional(entry, "since", str))


def _staff(body: Mapping[str, Any]) -> Staff:
    """The retained ``staff``: every person checked, at most :data:`_CODES` per role."""
    dealer = body.get("dealer")
    crews: list[tuple[OnDuty, ...]] = []
    for role in ("supervisors", "technicians"):
        listed = body.get(role)
        if listed is not None and not isinstance(listed, list):
            raise MalformedError("bad_field", role)
        crews.append(tuple(_on_duty(entry, role) for entry in (listed or [])[:_CODES]))
    return Staff(None if dealer is None else _on_duty(dealer, "dealer"), *crews)


def pace(outcomes: Sequence[OutcomeEntry]) -> float | None:
    """Rounds per hour: the outcomes (in ``seq`` order) of the :data:`PACE_WINDOW` before the
    newest, their count less one over the time from the first to the last (``None``: fewer
    than two, or no time between them). Voids are rounds too."""
    times: list[float] = []
    for entry in reversed(outcomes):
        moment = parse_ts_seconds(entry.ts)
        if moment is None:
            continue
        if times and times[0] - moment > PACE_WINDOW:
            break
        times.append(moment)
    span = max(times, default=0.0) - min(times, default=0.0)
    return (len(times) - 1) * 3600 / span if len(times) > 1 and span > 0 else None


def _device(body: Mapping[str, Any]) -> _Device:
    return _Device(available=_optional(body, "available", bool), faults=_codes(body, "faults"))


def _alarm(body: Mapping[str, Any]) -> tuple[Alarm, tuple[int, str | None] | None]:
    """An alarm and its de-duplication key (``(seq, hash)``; ``None``: not from the journal,
    a journal outage's own)."""
    kind = _optional(body, "type", str)
    if kind is None:
        raise MalformedError("bad_field", "type")
    seq = _optional(body, "seq", int)
    key = (seq, _optional(body, "hash", str)) if seq is not None else None
    clock = kind in ("clock_step", "clock_confirmed")
    for name in ("step_s", "before", "after", "by", "role", "suspect") if clock else ():
        _scalar(body, name)
    suspect = body.get("suspect")
    detail = clock_summary(body) if clock else _scalar(body, "detail")
    alarm = Alarm(
        ts=_optional(body, "ts", str),
        raised=kind not in ("fault_cleared", "clock_confirmed") and suspect is not False,
        code=kind if clock else _scalar(body, "code") or "?",
        device="clock" if clock else _scalar(body, "device") or "?",
        detail=detail[:_TEXT] if detail else None,
    )
    return alarm, key


def _shoe_fields(body: Mapping[str, Any]) -> dict[str, Any]:
    """The fields the shuffle statistics read, each of its type or left out."""
    out: dict[str, Any] = {"seq": body["seq"], "type": body.get("type")}
    for name in ("ts", "card", "game", "status"):
        if isinstance(body.get(name), str):
            out[name] = body[name][:_TEXT]
    if body.get("type") == "card" and "card" not in out:
        out["card"] = None  # withheld, or no card at all: its place in the shoe, no tally
    cards = body.get("cards")
    if isinstance(cards, int) and not isinstance(cards, bool):
        out["cards"] = cards
    return out


def _trim(items: list[T], seq: Callable[[T], int], keep: int, limit: int | None) -> None:
    """Bound a list in ``seq`` order: at most :data:`HELD` items past ``limit`` (the farthest
    ones go) and ``keep`` up to it (the oldest go)."""
    cut = len(items) if limit is None else bisect.bisect_right(items, limit, key=seq)
    if len(items) - cut > HELD:
        del items[cut + HELD :]
    if cut > keep:
        del items[: cut - keep]


def _must_link(records: Mapping[str, _Record]) -> bool:
    """Whether a record after ``records`` (the ones at its ``seq - 1``) has to link to one of
    them: when one of them is linked itself, or was dropped (nothing follows a forgery). Only
    provisional ones, or none at all: the dashboard lacks continuity."""
    return any(r.anchored or not r.ok for r in records.values())


def _entry_seq(entry: OutcomeEntry) -> int:
    return entry.seq or 0


def _entry_hash(entry: OutcomeEntry) -> str:
    return entry.hash or ""


def _family(game: str | None) -> str | None:
    entry = CATALOG.get(game or "")
    return entry.family if entry is not None else None


def _devices(
    state: _State | None, published: Mapping[str, _Device], most: int
) -> tuple[tuple[DeviceHealth, ...], int]:
    """Each device from ``state.devices`` (latched faults) and ``devices/{id}`` (link), at most
    ``most`` of them, and how many more there are."""
    listed: Mapping[str, tuple[str, ...]] = state.devices if state is not None else {}
    names = sorted({*listed, *published})
    more = len(names) - most + (state.more_devices if state is not None else 0)
    out = []
    for name in names[:most]:
        own = published.get(name)
        codes = {*listed.get(name, ()), *(own.faults if own is not None else ())}
        out.append(
            DeviceHealth(
                device=name,
                available=own.available if own is not None else None,
                faults=tuple(sorted(codes)),
            )
        )
    return tuple(out), max(0, more)


def _numbers(result: Any) -> tuple[Pocket, ...]:
    """The pockets a roulette result settled: ``number``, or a double ball's ``numbers``."""
    if not isinstance(result, Mapping):
        return ()
    found = result.get("numbers") if "numbers" in result else [result.get("number")]
    pockets: list[Pocket] = []
    for n in found if isinstance(found, list) else ():
        if n == "00":
            pockets.append("00")
        elif isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 36:
            pockets.append(n)
    return tuple(pockets[:2])
