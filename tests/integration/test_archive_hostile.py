"""The floor's archive against a hostile publisher (issue 26, items 1, 2 and 4), with real parts.

A real table (``tablectl simulate ss2`` + ``tablectl run``) plays on a real Mosquitto while
``tablectl archive`` — a real process, as systemd runs it — stores its records in a real
PostgreSQL. An attacker who can publish on the broker (one message each, no key) sends what was
reproduced on main:

1. a record with ``seq`` 2**63-1 (and 10**9): the verifier built resend requests over the whole
   gap in one synchronous loop — archiving froze, SIGTERM was ignored, and a restart hung again
   (the gap was stored);
2. poison: a record dated 9999-12 and deep JSON on ``cmd/resend/reply`` each ended the process,
   and the message came back at every restart (with ``--share``, every archiver of the group);
4. ~4,000 small records each in a different month: a partition each, until PostgreSQL ran out
   of shared memory.

Each test shows the archiver alive, still archiving the real table, the hostile messages in
``archive_quarantine`` with their reason (counted, alarmed), a bounded number of ``cmd/resend``
requests, and SIGTERM answered within a couple of seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import signal
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiomqtt
import psycopg
import pytest

from tablectl.controller.archive.ingest import Ingest, parse_published
from tablectl.controller.archive.schema import migrate
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import canonical_json
from tests.controller.archive.published import publish_journal
from tests.fault.harness import Lane
from tests.support.archive import ArchiverProcess, wait_archived, wait_played, wait_subscribed
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Received, Subscriber
from tests.support.postgres import PostgresServer, private_postgres
from tests.support.tables import sample, scrape
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.slow, pytest.mark.timeout(150)]

PREFIX = "it"
MAX_SEQ = 2**63 - 1
STOP_WITHIN = 3.0
"""Seconds SIGTERM may take to end the archiver (it stores its last batch, says goodbye)."""


# -- helpers ------------------------------------------------------------------------------------


def _record(table: str, seq: int, ts: str | None = None, **extra: Any) -> bytes:
    """A record with the journal's envelope (a forger needs no key for that)."""
    fields: dict[str, Any] = {
        "table": table,
        "seq": seq,
        "ts": ts or format_moment(datetime.now(UTC)),
        "type": "outcome",
        "round": f"{table}-000001",
        "status": "settled",
        "result": {"number": 17},
        "prev_hash": hashlib.sha256(b"prev %d" % seq).hexdigest(),
        "hash": hashlib.sha256(b"hash %d" % seq).hexdigest(),
        **extra,
    }
    return canonical_json(fields).encode("utf-8")


async def _publish(
    broker: MosquittoProcess, messages: Sequence[tuple[str, bytes]], *, retain: bool = False
) -> None:
    async with aiomqtt.Client(broker.host, broker.port, timeout=30) as client:
        for topic, payload in messages:
            await client.publish(topic, payload, qos=1, retain=retain)


def _rows(dsn: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        return conn.execute(sql.encode(), params).fetchall()


def _quarantined(dsn: str) -> list[tuple[str, int | None, str, int, int, int]]:
    """``(table, seq, reason, size, bytes kept, times)`` of every quarantined message (none
    while the table does not exist: the archiver migrates it at start)."""
    try:
        rows = _rows(
            dsn,
            "SELECT table_id, seq, reason, size, length(payload), times FROM archive_quarantine",
        )
    except psycopg.Error:
        return []
    return [(str(t), s, str(r), int(z), int(k), int(n)) for t, s, r, z, k, n in rows]


async def _wait_quarantined(
    dsn: str,
    count: int,
    archivers: Sequence[ArchiverProcess],
    timeout: float = 20.0,  # noqa: ASYNC109
) -> None:
    """Wait for ``count`` rows in the quarantine (fails with what is there and the logs)."""
    deadline = time.monotonic() + timeout
    while len(rows := await asyncio.to_thread(_quarantined, dsn)) < count:
        if time.monotonic() > deadline:
            logs = "\n".join(a.log_tail(2000) for a in archivers)
            raise AssertionError(f"{len(rows)} quarantined, not {count}: {rows}\n{logs}")
        await asyncio.sleep(0.1)


def _reasons(dsn: str) -> dict[tuple[str, int], str]:
    """``(table, seq)`` → reason of the quarantined records that have a ``seq``."""
    return {(t, s): r for t, s, r, *_ in _quarantined(dsn) if s is not None}


def _stop_promptly(archiver: ArchiverProcess) -> None:
    """SIGTERM: exit 0 within :data:`STOP_WITHIN` seconds."""
    assert archiver.alive, archiver.log_tail()
    start = time.monotonic()
    code = archiver.kill(signal.SIGTERM)
    took = time.monotonic() - start
    assert code == 0, (code, archiver.log_tail())
    assert took < STOP_WITHIN, f"SIGTERM took {took:.1f} s\n{archiver.log_tail()}"


@contextlib.contextmanager
def _table(tmp_path: Path, broker: MosquittoProcess, name: str) -> Iterator[Lane]:
    """A real roulette table playing on ``broker`` (prefix ``it``, table ``FT-{name}``)."""
    lane = Lane(name, tmp_path / f"table-{name}", broker.url)
    try:
        lane.start_sim()
        lane.start_ctl()
        yield lane
    finally:
        lane.stop()


@contextlib.asynccontextmanager
async def _watching(broker: MosquittoProcess) -> AsyncIterator[Subscriber]:
    """Every resend request and every archiver's alarms and status."""
    filters = [f"{PREFIX}/+/cmd/resend", f"{PREFIX}/_archive/+/alarms"]
    async with Subscriber(broker.host, broker.port, filters) as watcher:
        yield watcher


def _resends(watcher: Subscriber, table: str | None = None) -> list[dict[str, Any]]:
    return [
        m.json()
        for m in watcher.messages
        if m.topic.endswith("/cmd/resend") and (table is None or m.topic.split("/")[1] == table)
    ]


def _alarms(watcher: Subscriber, code: str) -> list[dict[str, Any]]:
    return [
        alarm
        for m in watcher.messages
        if m.topic.endswith("/alarms") and (alarm := m.json()).get("code") == code
    ]


async def _archiving(dsn: str, lane: Lane, archivers: Sequence[ArchiverProcess]) -> None:
    """The table plays two more outcomes and the archive has all its records, verified."""
    await wait_played([lane], 2)
    await wait_archived(dsn, {lane.table: lane.journal}, 40, archivers=archivers)
    for archiver in archivers:
        assert archiver.alive, archiver.log_tail()


# -- 1. one record hangs the floor's archive ------------------------------------------------------


async def test_a_seq_far_ahead_is_quarantined_and_asks_for_nothing(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    archiver = ArchiverProcess(tmp_path, mosquitto.url, postgres_dsn)
    async with _watching(mosquitto) as watcher:
        with _table(tmp_path, mosquitto, "SEQ") as lane:
            archiver.start()
            try:
                await wait_played([lane], 1)
                await wait_archived(postgres_dsn, {lane.table: lane.journal}, 40)
                hostile = [
                    (f"{PREFIX}/{lane.table}/events", _record(lane.table, MAX_SEQ)),
                    (f"{PREFIX}/{lane.table}/events", _record(lane.table, 10**9)),
                    (f"{PREFIX}/GHOST/events", _record("GHOST", MAX_SEQ)),
                    (f"{PREFIX}/GHOST/anchor", _record("GHOST", 10**9)),
                ]
                await _publish(mosquitto, hostile)
                # A few gap timeouts (1 s here) later: alive, archiving the table, and no request
                # towards the hostile seqs (the table's own are probes of a quiet moment:
                # --probe-after 2 here).
                await asyncio.sleep(4)
                await _archiving(postgres_dsn, lane, [archiver])
                asked = _resends(watcher)
                assert not _resends(watcher, "GHOST"), asked[:10]
                assert len(asked) <= 30, asked[:10]
                assert all(r["to_seq"] < 10**6 for r in asked), asked[:10]
                # Quarantined with their reason, never stored (so no gap towards them).
                want = {(lane.table, MAX_SEQ), (lane.table, 10**9), ("GHOST", MAX_SEQ)}
                want.add(("GHOST", 10**9))
                await wait_until(
                    lambda: asyncio.to_thread(lambda: want <= set(_reasons(postgres_dsn))),
                    timeout=20,
                    what="the far-ahead records quarantined",
                )
                kept = _reasons(postgres_dsn)
                assert {kept[key] for key in want} == {"seq_ahead"}, kept
                assert not _rows(postgres_dsn, "SELECT 1 FROM records WHERE seq >= %s", 10**6)
                alarms = _alarms(watcher, "quarantined")
                assert {(a["table"], a["seq"], a["reason"]) for a in alarms} >= {
                    (lane.table, MAX_SEQ, "seq_ahead")
                }
                _stop_promptly(archiver)
            finally:
                archiver.kill()


async def test_a_gap_stored_before_the_fix_does_not_hang_a_restart(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    # The archive as the archiver before admission left it: OLD's seq 1 and a hostile
    # 2**63-1 stored, the gap 2..2**63-2 open and asked for five times.
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        migrate(conn)
    first = publish_journal(tmp_path / "old.sqlite", "OLD", rounds=1, key=None)[0]
    now = datetime.now(UTC)
    stored = [
        parse_published("OLD", first.payload),
        parse_published("OLD", _record("OLD", MAX_SEQ, format_moment(now - timedelta(hours=1)))),
    ]

    async def store() -> None:
        conn = await psycopg.AsyncConnection.connect(postgres_dsn)
        try:
            await Ingest().store(conn, stored)
        finally:
            await conn.close()

    await store()
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("UPDATE archive_tables SET last_seq = %s WHERE table_id = 'OLD'", (MAX_SEQ,))
        conn.execute(
            "INSERT INTO archive_gaps (table_id, from_seq, to_seq, since, requested_at, requests)"
            " VALUES ('OLD', 2, %s, %s, %s, 5)",
            (MAX_SEQ - 1, now - timedelta(hours=1), now - timedelta(minutes=10)),
        )
    archiver = ArchiverProcess(tmp_path, mosquitto.url, postgres_dsn)
    async with _watching(mosquitto) as watcher:
        with _table(tmp_path, mosquitto, "RST") as lane:
            archiver.start()
            try:
                await _archiving(postgres_dsn, lane, [archiver])
                await asyncio.sleep(3)  # passes, sweeps (at start), gap timeouts of 1 s
                old = _resends(watcher, "OLD")
                assert len(old) <= 8, old[:10]
                assert all(r["to_seq"] - r["from_seq"] < 10_000 for r in old), old[:10]
                assert len(_resends(watcher)) <= 16
                # OLD's seq 1 is verified; the gap towards the hostile row is cut, not asked for.
                head = _rows(
                    postgres_dsn,
                    "SELECT verified_seq, last_seq FROM archive_tables WHERE table_id = 'OLD'",
                )
                assert head[0][0] == 1, head
                assert head[0][1] < 10**9, head
                gaps = _rows(postgres_dsn, "SELECT to_seq FROM archive_gaps WHERE table_id = 'OLD'")
                assert all(int(to) < 10**9 for (to,) in gaps), gaps
                _stop_promptly(archiver)
                archiver.start()  # and again: a restart finds nothing to hang on
                await _archiving(postgres_dsn, lane, [archiver])
                _stop_promptly(archiver)
            finally:
                archiver.kill()


# -- 2. poison messages crash-loop the archiver ---------------------------------------------------


def _deep(levels: int) -> bytes:
    return b"[" * levels + b"]" * levels


def _poison(table: str) -> tuple[list[tuple[str, bytes]], bytes]:
    """What crashed the archiver, and worse: the messages and the 100 KB record among them."""
    events = f"{PREFIX}/{table}/events"
    reply = f"{PREFIX}/{table}/cmd/resend/reply"
    big = _record(table, 3, padding="x" * 100_000)  # > 64 KiB, < the packet cap
    surrogate = _record(table, 5, note="SURROGATE").replace(b"SURROGATE", b"\\ud800")
    poison = [
        (events, _record(table, 2, "9999-12-31T23:59:59.000000Z")),
        (f"{PREFIX}/NEW-1/events", _record("NEW-1", 1, "9999-12-31T23:59:59Z")),
        (f"{PREFIX}/NEW-2/events", _record("NEW-2", 1, "0001-01-01T00:00:00+01:00")),
        (f"{PREFIX}/NEW-3/events", _record("NEW-3", 1, "1700-01-01T00:00:00Z")),
        (reply, _deep(30_000)),
        (reply, _deep(50_000)),
        (reply, b'{"id":"archive-a1-1","ok":false,"code":' + _deep(500) + b"}"),
        (events, _deep(30_000)),
        (events, b'{"seq":[1]}'),
        (events, b'{"type":[]}'),
        (events, b"\xff\xfe not even UTF-8"),
        (events, _record(table, 4).replace(b'"number":17', b'"number":NaN')),
        (events, surrogate),
        (events, big),
        (events, b"{" * 10 * 1024 * 1024),  # 10 MB: the broker drops it (v5 cap)
    ]
    return poison, big


async def test_poison_messages_are_quarantined_and_kill_no_archiver_of_a_group(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    port = free_port()
    share = ["--share", "group"]
    metrics = ["--metrics-listen", f"127.0.0.1:{port}"]
    archivers = [
        ArchiverProcess(tmp_path, mosquitto.url, postgres_dsn, name="a1", extra=[*share, *metrics]),
        ArchiverProcess(tmp_path, mosquitto.url, postgres_dsn, name="a2", extra=share),
    ]
    async with _watching(mosquitto) as watcher:
        with _table(tmp_path, mosquitto, "PSN") as lane:
            events = f"{PREFIX}/{lane.table}/events"
            reply = f"{PREFIX}/{lane.table}/cmd/resend/reply"
            for archiver in archivers:
                archiver.start()
            try:
                await _group_ready(mosquitto, postgres_dsn, lane, archivers)
                poison, big = _poison(lane.table)
                await _publish(mosquitto, poison)
                await _wait_quarantined(postgres_dsn, 11, archivers)
                kept = _reasons(postgres_dsn)
                assert kept[(lane.table, 2)] == "ts_ahead", kept
                assert kept[("NEW-1", 1)] == "ts_ahead", kept
                assert kept[("NEW-3", 1)] == "ts_too_old", kept
                rows = _quarantined(postgres_dsn)
                by_reason: dict[str, list[tuple[int, int]]] = {}
                for _table_id, _seq, reason, size, length, _times in rows:
                    by_reason.setdefault(reason, []).append((size, length))
                assert len(by_reason["too_deep"]) == 1, rows  # the 60 KB list on events
                assert by_reason["too_large"] == [(len(big), 65_536)], rows  # its start kept
                assert len(by_reason["not_json"]) == 3, rows  # bytes, NaN, a lone surrogate
                assert len(by_reason["not_record"]) == 3, rows  # seq [1], type [], year 0
                assert ("NEW-2", None, "not_record") in {r[:3] for r in rows}, rows
                assert len(rows) == 11, rows
                # Nothing of it in records; nothing of 10 MB anywhere.
                assert not _rows(postgres_dsn, "SELECT 1 FROM records WHERE table_id LIKE 'NEW-%%'")
                assert not _rows(postgres_dsn, "SELECT 1 FROM records WHERE length(raw) > 65536")
                # Counted and alarmed with the topic and the reason; the replies too (each
                # archiver reads every reply: that subscription is not shared).
                await watcher.wait_until(
                    lambda _: (
                        {(reply, "too_deep"), (reply, "too_large"), (events, "too_deep")}
                        <= {(a["topic"], a["reason"]) for a in _alarms(watcher, "malformed")}
                    ),
                    timeout=20,  # one may be held back for the rest of its 10 s window
                )
                ahead = {(a["table"], a["reason"]) for a in _alarms(watcher, "quarantined")}
                assert (lane.table, "ts_ahead") in ahead, ahead
                counted = await _counters(mosquitto, ("a1", "a2"), "malformed", 8 + 2 * 3)
                assert counted["quarantined"] == 11, counted
                body = await _scraped_metrics(port)
                assert "# TYPE tablectl_archive_quarantined_total counter" in body
                # Alive, archiving; and the poison acknowledged: a restart does not bring it back.
                await _archiving(postgres_dsn, lane, archivers)
                for archiver in archivers:
                    _stop_promptly(archiver)
                for archiver in archivers:
                    archiver.start()
                await _archiving(postgres_dsn, lane, archivers)
                await asyncio.sleep(2)
                again = _quarantined(postgres_dsn)
                assert len(again) == 11, again
                assert all(times == 1 for *_, times in again), again
                for archiver in archivers:
                    _stop_promptly(archiver)
            finally:
                for archiver in archivers:
                    archiver.kill()


async def _group_ready(
    broker: MosquittoProcess, dsn: str, lane: Lane, archivers: Sequence[ArchiverProcess]
) -> None:
    """The table played, the group archived it, and every archiver of the group is subscribed
    (each counts the poison's replies: that subscription is not shared)."""
    await wait_played([lane], 1)
    await wait_archived(dsn, {lane.table: lane.journal}, 40)
    await wait_subscribed(broker, archivers)


async def _counters(
    broker: MosquittoProcess, names: Sequence[str], counter: str, at_least: int
) -> dict[str, int]:
    """The archivers' counters summed (from their retained status, sent every 5 s), once
    ``counter`` reached ``at_least``."""
    topics = [f"{PREFIX}/_archive/{name}/status" for name in names]

    def total(seen: list[Received]) -> dict[str, int]:
        summed: dict[str, int] = {}
        for topic in topics:
            mine = [m for m in seen if m.topic == topic]
            if mine:
                for name, value in mine[-1].json()["counters"].items():
                    summed[name] = summed.get(name, 0) + int(value)
        return summed

    async with Subscriber(broker.host, broker.port, topics) as reader:
        seen = await reader.wait_until(
            lambda seen: total(seen).get(counter, 0) >= at_least, timeout=15
        )
        return total(seen)


async def _scraped_metrics(port: int) -> str:
    status, body = await scrape(port)
    assert status == 200, body
    return body


# -- 4. a partition flood takes the database down -------------------------------------------------


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL of this test's own: a flood must not be tried on the session's server."""
    with private_postgres() as server:
        yield server


FLOOD = 4_000


def _months_ago(now: datetime, months: int) -> str:
    index = now.year * 12 + now.month - 1 - months
    return f"{index // 12:04d}-{index % 12 + 1:02d}-15T12:00:00Z"


async def test_a_partition_flood_is_quarantined_and_the_floor_goes_on(
    tmp_path: Path, mosquitto: MosquittoProcess, own_postgres: PostgresServer
) -> None:
    dsn = own_postgres.new_database()
    port = free_port()
    archiver = ArchiverProcess(
        tmp_path, mosquitto.url, dsn, extra=["--metrics-listen", f"127.0.0.1:{port}"]
    )
    now = datetime.now(UTC)
    # ~300 bytes each, each in another month: 333 years around now, 40 tables of 100 records.
    flood = [
        (
            f"{PREFIX}/FLOOD-{n % 40:02d}/events",
            _record(f"FLOOD-{n % 40:02d}", n // 40 + 1, _months_ago(now, 3_000 - n)),
        )
        for n in range(FLOOD)
    ]
    assert 250 <= len(flood[0][1]) <= 400
    async with _watching(mosquitto) as watcher:
        with _table(tmp_path, mosquitto, "FLD") as lane:
            archiver.start()
            try:
                await wait_played([lane], 1)
                await wait_archived(dsn, {lane.table: lane.journal}, 40)
                before = _partitions(dsn)
                started = time.monotonic()
                # In waves the broker can queue (Mosquitto keeps 1,000 messages for a client by
                # default and drops the rest: a loaded machine's archiver must not miss any).
                for start in range(0, FLOOD, 500):
                    await _publish(mosquitto, flood[start : start + 500])
                    await _wait_judged(dsn, port, archiver, start + 500)
                    assert len(_partitions(dsn)) <= 16, sorted(_partitions(dsn))
                # The months inside the window only: 400 days back, an hour ahead.
                made = _partitions(dsn) - before
                assert len(_partitions(dsn)) <= 16, sorted(_partitions(dsn))
                assert len(made) <= 14, sorted(made)
                assert _admitted(dsn) <= 15 * 40, _admitted(dsn)
                body = await _scraped_metrics(port)
                too_old = sample(
                    body,
                    "tablectl_archive_quarantined_total",
                    archive="archive",
                    reason="ts_too_old",
                )
                ahead = sample(
                    body, "tablectl_archive_quarantined_total", archive="archive", reason="ts_ahead"
                )
                assert (too_old or 0) >= 2_900, body
                assert (ahead or 0) >= 900, body
                # Kept for forensics at the quarantine's pace (1,000 rows a minute), the rest
                # counted; alarmed, at most 10 alarms a code in 10 s.
                rows = _rows(dsn, "SELECT count(*) FROM archive_quarantine")[0][0]
                skipped = sample(body, "tablectl_archive_quarantine_skipped_total")
                assert skipped is not None
                assert rows + skipped >= too_old + ahead, (rows, skipped)
                minutes = (time.monotonic() - started) / 60
                assert 900 <= rows <= 1_000 * (1 + minutes) + 50, (rows, minutes)
                alarms = _alarms(watcher, "quarantined")
                assert 1 <= len(alarms) <= 10 * (6 * minutes + 2), (len(alarms), minutes)
                # What the limit held back is told once its window is over.
                await watcher.wait_until(
                    lambda _: any(a.get("suppressed") for a in _alarms(watcher, "quarantined")),
                    timeout=15,
                )
                # The real table's archiving never stopped.
                await _archiving(dsn, lane, [archiver])
                _stop_promptly(archiver)
            finally:
                archiver.kill()


async def _wait_judged(dsn: str, port: int, archiver: ArchiverProcess, count: int) -> None:
    """Wait until ``count`` records of the flood are stored or quarantined (by the metrics)."""
    deadline = time.monotonic() + 60
    while True:
        body = await _scraped_metrics(port)
        judged = sum(
            sample(body, "tablectl_archive_quarantined_total", reason=reason) or 0
            for reason in ("ts_ahead", "ts_too_old", "ts_behind")
        )
        admitted = await asyncio.to_thread(_admitted, dsn)
        if judged + admitted >= count:
            return
        if time.monotonic() > deadline:
            counters = [line for line in body.splitlines() if "_total" in line]
            raise AssertionError(
                f"flood: {judged} quarantined, {admitted} stored of {count}: {counters}\n"
                + archiver.log_tail(3000)
            )
        await asyncio.sleep(0.2)


def _partitions(dsn: str) -> set[str]:
    rows = _rows(
        dsn,
        "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
        " WHERE i.inhparent = 'records'::regclass",
    )
    return {str(name) for (name,) in rows}


def _admitted(dsn: str) -> int:
    return int(_rows(dsn, "SELECT count(*) FROM records WHERE table_id LIKE 'FLOOD-%%'")[0][0])


def test_the_payloads_are_what_the_issue_says() -> None:
    assert len(_deep(30_000)) < 65_536 < len(_deep(50_000)) < 65_536 * 2
    record = json.loads(_record("T", MAX_SEQ))
    assert record["seq"] == 2**63 - 1
