"""What a table hands to MQTT: its committed records, latest-value slots, ``status``, alarms.

Apart from the publisher so the runner depends on this small surface only (contracts §4.3). The
journal's file is read only for what was not handed: a start's backlog, a long broker outage, a
time-based anchor.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import (
    SCHEMA,
    WITHHELD_AUTH,
    Committed,
    JournalRecord,
    StoredRow,
    canonical_json,
    withheld_mac,
)
from tablectl.controller.mqtt.topics import Topics

HANDED_RECORDS: Final = 256
"""Committed records the outbox keeps as handed, not yet acknowledged: it normally trails the
journal by a batch or two; past this (a broker down) the oldest are dropped and it reads the
file instead."""


def _utc_now() -> datetime:
    return datetime.now(UTC)


def withholds(kind: str, record: Mapping[str, Any]) -> bool:
    """The one withholding rule: a card dealt face down goes out without its face (seed-000 L79:
    nothing that tells a card before its reveal leaves the table). The archive re-checks with the
    same rule (:func:`tablectl.controller.archive.chains.is_withheld`), so the two cannot drift
    apart."""
    return kind == "card" and record.get("face_down") is True


def withheld_form(
    kind: str, record: Mapping[str, Any], key: bytes | None = None
) -> dict[str, Any] | None:
    """The record as published when it :func:`withholds` part of it, ``None`` when published whole.
    With the ``key`` it carries :data:`~tablectl.controller.journal.WITHHELD_AUTH`, the MAC of that
    body: its ``auth`` vouches only for the ``hash``, which covers the face the archive never
    sees."""
    return _withheld(record, key) if withholds(kind, record) else None


def _withheld(record: Mapping[str, Any], key: bytes | None) -> dict[str, Any]:
    published = dict(record)
    published["card"] = None
    published.pop("barcode", None)
    published["withheld"] = True
    if key is not None:
        published[WITHHELD_AUTH] = withheld_mac(key, published)
    return published


def published_form(record: JournalRecord, key: bytes | None = None) -> bytes:
    """What goes on the wire for a journal record read back (``cmd/resend``): byte for byte what the
    outbox sent."""
    published = withheld_form(record.type, record.fields, key)
    return canonical_json(record.fields if published is None else published).encode("utf-8")


def published_payload(kind: str, stored: bytes, key: bytes | None = None) -> bytes:
    """:func:`published_form` of a record read back as its stored body (the file's backlog):
    the body as is, or its :func:`withheld_form` (the decision is the card's own
    ``face_down``)."""
    if kind != "card":
        return stored
    published = withheld_form(kind, json.loads(stored), key)
    return stored if published is None else canonical_json(published).encode("utf-8")


class Outbound:
    """What a table says on MQTT besides its journal: latest-value slots, ``status``, alarms.

    Built first and given to both the table and the :class:`Publisher`, so neither is wired to the
    other; the attributes are the publisher's to read and reset.
    """

    def __init__(
        self,
        topics: Topics,
        *,
        now: Callable[[], datetime] = _utc_now,
        key: bytes | None = None,
    ) -> None:
        self.topics = topics
        self.now = now
        self.key = key
        # Latest-value slots: topic -> serialized payload; dirty = still to publish (ordered).
        self.slots: dict[str, bytes] = {}
        self.dirty: dict[str, None] = {}
        # Extra fields of the retained status (a journal outage locks the table).
        self.status_extra: dict[str, Any] = {}
        # Messages that are not journal records (an alarm the journal cannot take yet): sent
        # once, in order, on the current connection; lost with it (status/state carry the same).
        self.transient: list[tuple[str, bytes]] = []
        # cmd/resend's records: sent behind live play, a chunk at a time (Publisher).
        self.resends: deque[tuple[str, bytes]] = deque()
        # Committed rows not yet acknowledged, in seq order, as handed (HANDED_RECORDS at most).
        self._handed: deque[StoredRow] = deque()
        # Something may be in the journal that was not handed: the drain reads the file next.
        self._unhanded = True
        self.renew()

    def renew(self) -> None:
        """Fresh events (asyncio primitives bind to the loop they are first used in): at every
        start of the publisher."""
        self.wakeup = asyncio.Event()
        self.slots_changed = asyncio.Event()
        self.connected = asyncio.Event()
        self.resend_waiting = asyncio.Event()

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        """Hand the outbox what a commit wrote (:meth:`Journal.commit`), in ``seq`` order; the
        drain publishes it from here. ``withheld``: the positions of the records it publishes in
        their :func:`withheld_form` (the runner decided which, once). Cheap; from the event
        loop's thread."""
        rows = committed.rows
        if withheld:
            rows = list(rows)
            for index in withheld:
                seq, kind, _ = rows[index]
                published = _withheld(committed.records[index].fields, self.key)
                rows[index] = (seq, kind, canonical_json(published).encode("utf-8"))
        handed = self._handed
        handed.extend(rows)
        while len(handed) > HANDED_RECORDS:
            handed.popleft()  # the drain then reads the file from where it is
        self.wakeup.set()

    def notify(self) -> None:
        """Tell the outbox that the journal has records it was not handed (a time-based anchor,
        a tool's append): the drain reads the file for them. From the event loop's thread."""
        self._unhanded = True
        self.wakeup.set()

    def handed(self, limit: int, after: int) -> list[StoredRow] | None:
        """The oldest ``limit`` handed records past ``after``; ``None`` when the journal's file must
        be read instead (then call :meth:`read_file` with what it found)."""
        handed = self._handed
        while handed and handed[0][0] <= after:
            handed.popleft()
        if self._unhanded:
            self._unhanded = False
            return None
        if not handed:
            return []
        if handed[0][0] != after + 1 or handed[-1][0] - handed[0][0] >= len(handed):
            return None  # a gap before or among them: a record that was not handed
        return list(itertools.islice(handed, limit))

    def read_file(self, *, exhausted: bool) -> None:
        """The drain read the journal's file after :meth:`handed` said so: ``exhausted``, it
        found all there was; else (more than one read's worth, or the read failed) the file is
        read again next."""
        if not exhausted:
            self._unhanded = True

    def set_retained(self, topic: str, payload: Mapping[str, Any]) -> None:
        """Set a latest-value slot (see :meth:`Publisher.set_retained`)."""
        self.slots[topic] = canonical_json({"schema": SCHEMA, **payload}).encode("utf-8")
        self.dirty[topic] = None
        self.slots_changed.set()

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        """:meth:`set_retained` under the table's topics (``state``, ``devices/{id}``)."""
        self.set_retained(f"{self.topics.base}/{suffix}", payload)

    def set_status(self, extra: Mapping[str, Any]) -> None:
        """Merge ``extra`` into the retained ``status`` (birth and every update after it).

        The Last Will still says offline: only a live controller can say it is locked.
        """
        self.status_extra = dict(extra)
        self.set_retained(self.topics.status, self.birth())

    def publish_once(self, topic: str, payload: Mapping[str, Any]) -> None:
        """Publish a message that is not a journal record (see :meth:`Publisher.publish_once`)."""
        if not self.connected.is_set():
            return
        data = canonical_json({"schema": SCHEMA, **payload}).encode("utf-8")
        self.transient.append((topic, data))
        self.slots_changed.set()

    def republish(self, payloads: Sequence[bytes]) -> bool:
        """Publish journal records again on ``events`` (``cmd/resend``), behind live play, a chunk
        at a time, so a resend never delays an outcome by more than one small chunk.

        On ``events`` only: the retained ``outcome`` and ``anchor`` must keep the newest record.
        ``False`` when no connection is up; what a lost connection did not send is not sent again.
        """
        if not self.connected.is_set():
            return False
        events = self.topics.events
        self.resends.extend((events, payload) for payload in payloads)
        self.resend_waiting.set()
        return True

    def alarm(self, payload: Mapping[str, Any]) -> None:
        """:meth:`publish_once` on the table's ``alarms``."""
        self.publish_once(self.topics.alarms, payload)

    def birth(self) -> dict[str, Any]:
        """The retained ``status`` of a live controller."""
        return {
            "schema": SCHEMA,
            "state": "online",
            "table": self.topics.table_id,
            "ts": format_moment(self.now()),
            **self.status_extra,
        }
