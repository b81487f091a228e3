"""The hostile-publisher lane of the fault suite (issue 26, "Done when"): nothing on the broker is
trusted.

Three keyed roulette tables (``[journal] key_file``; signed commands, the archive signing its
``cmd/resend`` as the ``archive`` role) play on a real Mosquitto, with ``tablectl archive --key``
storing their records in a PostgreSQL of the lane's own and ``tablectl dashboard`` showing them.
Meanwhile a bounded generator (tests/support/hostile.py) publishes, without any key, on every
topic of the prefix, for the real tables' ids and made-up ones, retained and not: JSON of random
shapes and sizes built by hypothesis, and every payload issue 26 reproduced (seq 2**63-1, 10**9,
10**15, a record dated 9999-12, JSON nested 100,000 deep, ``{"seq":[1]}``, ``{"type":[]}``, a
retained deep ``status``, a retained ``state`` ``{"faults":[[1]]}``, a 10 MB record — the lane's
Mosquitto takes it: no ``max_packet_size`` —, a record in each of 300 months, a fabricated table,
20,000 ``devices/d*``, more fake tables than the dashboard's cap, bidi ids, unsigned
``cmd/resend`` bursts). A forger watches the tables' ``events`` and, on a table's ``bets_closed``
N, publishes a chain-valid outcome N+1 (the right ``prev_hash`` and sha256) with no ``auth`` or a
wrong one, ahead of the table's own.

After the generator stops and the tables have played on: every table's archived chain is its
journal, byte for byte as published, verified, nothing open; ``tablectl verify --dsn --key``
passes for every real table and reports no fake one OK; the archiver and the dashboard are alive
and current (each table's tile shows the journal's newest outcome) and the feed never failed;
every hostile record and every forgery sits in ``archive_quarantine`` (never ``records``),
alarmed; the partitions are the window's months only; and ``diag stats --dsn`` (with and without
the key) says what ``diag stats --journal`` says of each table.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiomqtt
import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.controller.archive.gate.quarantine import PER_MINUTE
from tablectl.controller.core.time import format_moment
from tablectl.controller.journal import AUTH
from tablectl.controller.journal.anchors import head_mac
from tablectl.controller.tools.dashboard.floor import MAX_DEVICES, MAX_TABLES
from tests.fault.conftest import scaled
from tests.fault.harness import FaultReport, alive
from tests.support.archive import (
    ArchiverProcess,
    KeyedLane,
    check_archived,
    journal_bodies,
    wait_archived,
    wait_played,
    write_key,
)
from tests.support.dashboard import Chain, dashboard_process, env, http_get, serving
from tests.support.hostile import (
    DEEP,
    FORGERIES,
    KINDS,
    MAX_MESSAGE,
    MAX_SEQ,
    MAX_SHAPE,
    Message,
    Sizes,
    counts,
    drawn,
    forge_next,
    hostile_messages,
    json_shapes,
    sha256,
    withheld_replay,
)
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.mqtt import Subscriber
from tests.support.postgres import PostgresServer, private_postgres
from tests.support.processes import REPO
from tests.support.tables import scrape
from tests.support.waiting import wait_until

PREFIX = "it"
SEED = 26
SHAPES = 200
"""Hypothesis examples drawn (each published a few times, at other sizes and on other topics)."""
GENERATE = 40.0
"""Seconds the generator spreads its single messages over (each flood is one burst)."""
FORGED_PER_TABLE = 8
"""Chain-valid forgeries per table (× ``TABLECTL_FAULT_SCALE``, at most :data:`MOST_FORGED`)."""
MOST_FORGED = 16
MOST = Sizes(shapes=900, months=350, forged_run=150, fabricated=150)
"""The floods' sizes at most, whatever the scale: what the archive refuses stays under what its
quarantine writes in a minute (:data:`PER_MINUTE`), so every refused record is there to check."""
STOP_WITHIN = 5.0
"""Seconds SIGTERM may take to end the archiver."""

_FLOODS = frozenset(
    {
        "partition flood (a record in each of hundreds of months)",
        "forged outcomes at seq 10^9 (a wheel's chi-square)",
        "fabricated table (a whole chain, no auth)",
        "devices/d* flood",
        "fake tables (beyond the dashboard's table cap)",
        "unsigned cmd/resend burst",
    }
)


def _sizes() -> Sizes:
    """The floods at ``TABLECTL_FAULT_SCALE`` (20,000 devices and 300 months at 1)."""
    return Sizes(
        shapes=min(scaled(600), MOST.shapes),
        months=min(scaled(300), MOST.months),
        forged_run=min(scaled(150), MOST.forged_run),
        fabricated=min(scaled(150), MOST.fabricated),
        devices=scaled(20_000),
        fake_tables=MAX_TABLES + scaled(100),
        resends=scaled(300),
    )


def _plan(seed: int, shapes: Sequence[Any], real: Sequence[str], sizes: Sizes) -> list[Message]:
    return hostile_messages(
        random.Random(seed),
        shapes,
        real=real,
        prefix=PREFIX,
        now=datetime.now(UTC),
        sizes=sizes,
        max_tables=MAX_TABLES,
        max_devices=MAX_DEVICES,
    )


def _json_or_none(payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except (ValueError, RecursionError):
        return None


# --- the generator's bounds, fast (no broker) ---------------------------------------------------


@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(seed=st.integers(0, 2**32 - 1), shapes=st.lists(json_shapes(), min_size=1, max_size=30))
def test_the_hostile_generator_is_bounded_and_holds_every_payload_of_the_issue(
    seed: int, shapes: list[Any]
) -> None:
    real = ["FT-H0", "FT-H1", "FT-H2"]
    small = Sizes(shapes=50, months=250, forged_run=20, fabricated=20, devices=100, resends=5)
    small = dataclasses.replace(small, fake_tables=MAX_TABLES + 1)
    messages = _plan(seed, shapes, real, small)
    assert set(counts(messages)) == set(KINDS)
    again = _plan(seed, shapes, real, small)
    assert [(m.topic, m.retain) for m in again] == [(m.topic, m.retain) for m in messages]
    assert [len(m.payload) for m in again] == [len(m.payload) for m in messages]
    for m in messages:
        assert m.topic.startswith(f"{PREFIX}/")
        # Publishable: no wildcard, no control character (Mosquitto disconnects for one).
        assert not any(c in "+#" or ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in m.topic)
        assert len(m.topic.encode("utf-8")) < 65_536
        assert len(m.payload) <= MAX_MESSAGE
        if m.kind == "random JSON shapes (hypothesis)":
            assert len(m.payload) <= MAX_SHAPE
    # Beyond the dashboard's caps.
    devices = Counter(m.table for m in messages if m.leaf.startswith("devices/d"))
    assert max(devices.values()) > MAX_DEVICES
    fakes = {m.table for m in messages if m.retain and m.leaf == "status"}
    assert len(fakes) > MAX_TABLES
    # Issue 26's payloads, each there.
    bodies = [_json_or_none(m.payload) for m in messages if len(m.payload) < 1_000_000]
    seqs = {b["seq"] for b in bodies if isinstance(b, dict) and type(b.get("seq")) is int}
    assert {MAX_SEQ, 10**9, 10**15} <= seqs
    assert any(b'"ts":"9999-12' in m.payload for m in messages)
    assert any(m.payload == b"[" * DEEP + b"]" * DEEP for m in messages)
    assert any(m.payload == b'{"seq":[1]}' for m in messages)
    assert any(m.payload == b'{"type":[]}' for m in messages)
    assert any(m.retain and m.leaf == "status" and m.payload.startswith(b"[[[[") for m in messages)
    faults = b'{"faults":[[1]]}'
    assert any(m.retain and m.leaf == "state" and m.payload == faults for m in messages)
    assert any(len(m.payload) >= 10 * 1024 * 1024 and m.leaf == "events" for m in messages)
    months = {b["ts"][:7] for b in bodies if isinstance(b, dict) and isinstance(b.get("ts"), str)}
    assert len(months) >= 250
    assert any("\u202e" in m.topic for m in messages)
    resends = [m for m in messages if m.leaf == "cmd/resend" and m.kind.startswith("unsigned")]
    assert len(resends) >= 3 * 5
    assert all(b"signature" not in m.payload for m in resends)


def test_what_the_archive_refuses_stays_within_its_quarantine_rate() -> None:
    """At the largest sizes of any scale, every record the archive refuses is written to the
    quarantine (the lane checks each one is there)."""
    shapes = drawn(json_shapes(40), 30, SEED)
    sizes = dataclasses.replace(MOST, devices=100, fake_tables=MAX_TABLES + 1, resends=5)
    messages = _plan(SEED, shapes, ["FT-H0", "FT-H1", "FT-H2"], sizes)
    refused = sum(m.archived for m in messages) + 3 * MOST_FORGED
    assert refused < PER_MINUTE, refused


# --- the forger ---------------------------------------------------------------------------------


class _Forger:
    """Publishes chain-valid forgeries right after the real tables' own records: on a table's
    ``bets_closed`` N an outcome N+1 (ahead of the table's own, still spinning); on a table's
    outcome N+1, another one with that outcome's ``auth``.

    The forger needs no key: sha256 over what the tables publish is enough. The lane's copy of
    the key only tells the tables' own records from the generator's on the same topics.
    """

    def __init__(
        self, broker: MosquittoProcess, tables: Sequence[str], key: bytes, rng: random.Random
    ) -> None:
        self.broker = broker
        self.key = key
        self.rng = rng
        self.tables = list(tables)
        self.per_table = 0
        self.forged: list[tuple[str, str, int, bytes]] = []
        """``(how, topic, seq, payload)`` of every forgery published."""
        self.first = 0
        """Forgeries published before the table's own record of their ``seq``."""
        self._pending: set[tuple[str, int]] = set()
        self._seen: dict[str, dict[int, dict[str, Any]]] = {t: {} for t in tables}
        self._template: dict[str, dict[str, Any]] = {}
        self._made: Counter[str] = Counter()
        self._hows = [h for h in FORGERIES if h != "auth of the genuine record"]
        self._task: asyncio.Task[None] | None = None
        self._client: aiomqtt.Client | None = None
        self.stopped = False

    async def start(self, per_table: int) -> None:
        self.per_table = per_table
        client = aiomqtt.Client(self.broker.host, self.broker.port, timeout=30)
        await client.__aenter__()
        for table in self.tables:
            await client.subscribe(f"{PREFIX}/{table}/events", qos=1)
        self._client = client
        self._task = asyncio.create_task(self._run(client), name="hostile-forger")

    async def stop(self) -> None:
        self.stopped = True
        task, client = self._task, self._client
        self._task = self._client = None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if client is not None:
            with contextlib.suppress(aiomqtt.MqttError):
                await client.__aexit__(None, None, None)

    def own(self, table: str, record: Any) -> bool:
        """The table's own record: its ``auth`` is the table's MAC of its ``seq`` and ``hash``."""
        if not isinstance(record, dict):
            return False
        seq, digest, auth = record.get("seq"), record.get("hash"), record.get(AUTH)
        if type(seq) is not int or not isinstance(digest, str) or not isinstance(auth, str):
            return False
        return auth == head_mac(self.key, table, seq, digest)

    async def _run(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            if self.stopped or not isinstance(payload, bytes) or len(payload) > 100_000:
                continue
            table = message.topic.value.split("/")[1]
            record = _json_or_none(payload)
            if self.own(table, record) and record.get("withheld") is not True:
                await self._genuine(client, table, record)

    async def _genuine(self, client: aiomqtt.Client, table: str, record: dict[str, Any]) -> None:
        seq = int(record["seq"])
        if (table, seq) in self._pending:
            self._pending.discard((table, seq))
            self.first += 1
        seen = self._seen[table]
        seen[seq] = record
        for old in [s for s in seen if s < seq - 50]:
            del seen[old]
        if self._made[table] >= self.per_table:
            return
        if record.get("type") == "outcome":
            self._template[table] = record
            before = seen.get(seq - 1)
            if before is not None and seq % 3 == 0:
                await self._forge(client, before, "auth of the genuine record", record)
        elif record.get("type") == "bets_closed":
            how = self._hows[self._made[table] % len(self._hows)]
            await self._forge(client, record, how, record)
            self._pending.add((table, seq + 1))

    async def _forge(
        self, client: aiomqtt.Client, after: dict[str, Any], how: str, auth_of: dict[str, Any]
    ) -> None:
        table = str(after["table"])
        payload = forge_next(
            after,
            self._template.get(table),
            how,
            self.rng,
            ts=format_moment(datetime.now(UTC)),
            auth_of=auth_of,
        )
        topic = f"{PREFIX}/{table}/events"
        await client.publish(topic, payload, qos=1)
        self._made[table] += 1
        self.forged.append((how, topic, int(after["seq"]) + 1, payload))


# --- the publisher ------------------------------------------------------------------------------


async def _publish(broker: MosquittoProcess, plan: Sequence[Message], seconds: float) -> float:
    """Publish the plan: single messages spread over ``seconds``, each flood as one burst.
    Returns the seconds it took."""
    started = time.monotonic()
    singles = sum(m.kind not in _FLOODS for m in plan)
    done = 0
    async with aiomqtt.Client(broker.host, broker.port, timeout=120) as client:
        for message in plan:
            await client.publish(
                message.topic, message.payload, qos=message.qos, retain=message.retain
            )
            if message.kind in _FLOODS:
                continue
            done += 1
            ahead = started + seconds * done / singles - time.monotonic()
            if ahead > 0:
                await asyncio.sleep(ahead)
    return time.monotonic() - started


# --- the floor ----------------------------------------------------------------------------------


def _secret(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o600)
    return path


class _Floor:
    """The lane's parts: three keyed tables with signed commands, an archiver with the key (and
    the archive role's key for its resends), a dashboard; metrics for both."""

    def __init__(self, tmp_path: Path, broker: MosquittoProcess, dsn: str, tables: int) -> None:
        keys = tmp_path / "keys"
        self.key_file = write_key(keys / "journal.key")
        self.key = self.key_file.read_bytes().strip()
        supervisor = _secret(keys / "supervisor.key", "s" * 32)
        archive = _secret(keys / "archive.key", "r" * 32)
        self.lanes = [
            KeyedLane(f"H{i}", tmp_path / f"h{i}", broker.url, key_file=self.key_file)
            for i in range(tables)
        ]
        for lane in self.lanes:  # signed commands: the generator's unsigned ones are refused
            lane.security = f'roles = {{ supervisor = "{supervisor}", archive = "{archive}" }}'
        self.dsn = dsn
        self.archive_metrics = free_port()
        self.archiver = ArchiverProcess(
            tmp_path,
            broker.url,
            dsn,
            extra=[
                *("--key", str(self.key_file), "--resend-key", str(archive)),
                *("--metrics-listen", f"127.0.0.1:{self.archive_metrics}"),
            ],
        )
        port, self.board_metrics = free_port(), free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.board_log = tmp_path / "dashboard.log"
        self.board_args = [
            *("--url", broker.url, "--prefix", PREFIX, "--listen", f"127.0.0.1:{port}"),
            *("--metrics-listen", f"127.0.0.1:{self.board_metrics}"),
        ]

    @property
    def journals(self) -> dict[str, Path]:
        return {lane.table: lane.journal for lane in self.lanes}

    async def start(self, board: subprocess.Popen[bytes]) -> None:
        await asyncio.gather(
            *(
                asyncio.to_thread(lane.start_sim, ["--seed", str(seed)])
                for seed, lane in enumerate(self.lanes, 2600)
            )
        )
        for lane in self.lanes:
            lane.start_ctl()
        self.archiver.start()
        await serving(board, self.board_log)
        await wait_played(self.lanes, 1)
        # Both readers follow the broker before anything hostile is sent: the archive has
        # every record so far, the dashboard each table's outcomes.
        await wait_archived(self.dsn, self.journals, 60, archivers=[self.archiver])
        await wait_until(
            lambda: asyncio.to_thread(self._board_follows),
            timeout=30,
            what="the dashboard to show every table's outcomes",
        )

    def _board_follows(self) -> bool:
        for table in self.journals:
            status, body, _ = http_get(f"{self.base}/table/{table}")
            if status != 200 or _CONNECTED not in body or _LAST.search(body) is None:
                return False
        return True

    def stop(self) -> None:
        self.archiver.kill()
        for lane in self.lanes:
            lane.stop()


@pytest.fixture
def lane_postgres() -> Iterator[PostgresServer]:
    with private_postgres() as server:
        yield server


# --- the lane -----------------------------------------------------------------------------------


@pytest.mark.fault
@pytest.mark.broker
@pytest.mark.timeout(400)
async def test_hostile_lane(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    lane_postgres: PostgresServer,
    fault_report: FaultReport,
) -> None:
    started = time.monotonic()
    report = fault_report
    floor = _Floor(tmp_path, mosquitto, lane_postgres.new_database(), 3)
    shapes = asyncio.create_task(asyncio.to_thread(drawn, json_shapes(40), SHAPES, SEED))
    forger = _Forger(mosquitto, list(floor.journals), floor.key, random.Random(SEED))
    watched = [f"{PREFIX}/_archive/+/alarms", f"{PREFIX}/+/cmd/resend"]
    watcher = Subscriber(mosquitto.host, mosquitto.port, watched)
    with dashboard_process(floor.board_args, floor.board_log) as board:
        try:
            await floor.start(board)
            plan = _plan(SEED, await shapes, list(floor.journals), _sizes())
            forgeries = 3 * min(scaled(FORGED_PER_TABLE), MOST_FORGED)
            assert sum(m.archived for m in plan) + forgeries < PER_MINUTE
            async with watcher:
                await forger.start(min(scaled(FORGED_PER_TABLE), MOST_FORGED))
                took = await _publish(mosquitto, plan, GENERATE)
                await forger.stop()
                _report_generated(report, plan, forger, took)
                await _play_on_and_check_alive(floor, board, report)
                ours = {m.payload for m in plan}
                await _check_alarms(watcher, ours, report)
                _check_resends(watcher, ours, floor.journals, report)
            for lane in floor.lanes:
                await lane.stop_ctl()
            await wait_archived(floor.dsn, floor.journals, 60, archivers=[floor.archiver])
            await _dashboard_current(floor.base, floor.journals, 30, report, final=True)
            await _observe_history(floor.base, floor.journals, report)
            await _check_board_metrics(floor.board_metrics, report)
            await _check_archive_metrics(floor.archive_metrics, report)
            stop = time.monotonic()
            assert floor.archiver.kill(signal.SIGTERM) == 0, floor.archiver.log_tail()
            assert time.monotonic() - stop < STOP_WITHIN, floor.archiver.log_tail()
            report.check("hostile: archiver stops promptly on SIGTERM (exit 0)")
        finally:
            await forger.stop()
            floor.stop()
    assert board.returncode == 0, floor.board_log.read_text(errors="replace")[-3000:]
    report.check("hostile: dashboard stops cleanly on SIGTERM (exit 0)")

    for lane in floor.lanes:
        n = check_archived(floor.dsn, lane.table, lane.journal)
        report.check("hostile: archived chain == journal, bytes as published, verified")
        report.observe("hostile: records archived", n)
    _check_quarantine(floor.dsn, plan, forger, floor.journals, report)
    _check_journals(floor.journals, report)
    await asyncio.to_thread(_check_verify, floor.dsn, floor.key_file, floor.journals, report)
    await asyncio.to_thread(_check_stats, floor.dsn, floor.key_file, floor.journals, report)
    report.seconds["hostile"] = time.monotonic() - started


def _report_generated(
    report: FaultReport, plan: Sequence[Message], forger: _Forger, took: float
) -> None:
    """Each kind is one injection; how many messages of it, an observation."""
    for kind, n in sorted(counts(plan).items()):
        report.inject(f"hostile: {kind}")
        report.observe(f"hostile messages: {kind}", n)
    for how, n in sorted(Counter(f[0] for f in forger.forged).items()):
        report.inject(f"hostile: chain-valid forged outcome, {how}")
        report.observe(f"hostile messages: chain-valid forged outcome, {how}", n)
    report.observe("hostile: forgeries published before the table's own record", forger.first)
    report.observe("hostile: seconds publishing", round(took))
    assert forger.forged, "no table closed its bets while the forger watched"
    assert forger.first, "no forgery was ahead of the table's own record"


async def _play_on_and_check_alive(
    floor: _Floor, board: subprocess.Popen[bytes], report: FaultReport
) -> None:
    """The tables play on; every process is alive; the dashboard and the archive are current
    while the tables play."""
    await wait_played(floor.lanes, 2, timeout=60)
    for lane in floor.lanes:
        alive(lane, report)
    assert board.poll() is None, floor.board_log.read_text(errors="replace")[-3000:]
    report.check("hostile: dashboard process alive")
    assert floor.archiver.alive, floor.archiver.log_tail()
    report.check("hostile: archiver process alive")
    await _dashboard_current(floor.base, floor.journals, 60, report, final=False)
    await wait_archived(floor.dsn, floor.journals, 120, archivers=[floor.archiver])
    report.check("hostile: archive caught up with every journal while the tables play")
    status, body, _ = await asyncio.to_thread(http_get, floor.base + "/")
    assert status == 200, body[:300]
    tiles = body.count('<article id="tile-')
    assert tiles <= MAX_TABLES, tiles
    assert len(body) < 1_000_000, len(body)
    report.observe("hostile: floor page tiles", tiles)
    report.observe("hostile: floor page KB", len(body) // 1024)
    report.check("hostile: floor page bounded (tiles within the cap, under 1 MB)")


# --- the checks ---------------------------------------------------------------------------------


def _rows(dsn: str, sql: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        return conn.execute(sql.encode(), params).fetchall()


def _tablectl(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tablectl", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
        cwd=REPO,
        check=False,
    )


def _last_outcome(journal: Path) -> tuple[int, str]:
    """``(seq, round)`` of the journal's newest outcome."""
    bodies = journal_bodies(journal)
    for seq in sorted(bodies, reverse=True):
        record = json.loads(bodies[seq])
        if record.get("type") == "outcome":
            return seq, str(record.get("round"))
    raise AssertionError(f"{journal}: no outcome")


_LAST = re.compile(r'<p class="last-outcome (?:settled|void)" data-seq="(\d+)">(.*?)</p>')
_CONNECTED = '<div id="banner" class="banner ok" hidden></div>'


async def _dashboard_current(
    base: str,
    journals: dict[str, Path],
    timeout: float,  # noqa: ASYNC109 - a bound named in the failure
    report: FaultReport,
    *,
    final: bool,
) -> None:
    """Each table's tile shows the journal's newest outcome (its seq and round), and the page
    says the feed is connected. While the tables play (``final`` false) a table counts once its
    tile and its journal agree at one look; once they stopped, at the last look."""
    deadline = time.monotonic() + timeout
    pending = dict(journals)
    while True:
        behind: dict[str, Any] = {}
        for table, journal in list(pending.items()):
            seq, round_id = await asyncio.to_thread(_last_outcome, journal)
            status, body, _ = await asyncio.to_thread(http_get, f"{base}/table/{table}")
            assert status == 200, (table, status, body[:300])
            shown = _LAST.search(body)
            short = "#" + round_id.removeprefix(f"{table}-")
            if (
                _CONNECTED in body
                and shown is not None
                and int(shown.group(1)) == seq
                and short in shown.group(2)
            ):
                if not final:
                    del pending[table]
            else:
                behind[table] = (seq, round_id, shown.group(0) if shown else None)
        if not behind and (final or not pending):
            break
        if time.monotonic() > deadline:
            raise AssertionError(f"dashboard not current after {timeout}s: {behind}")
        await asyncio.sleep(0.3)
    when = "after the tables stopped" if final else "while the tables play"
    report.check(f"hostile: dashboard current {when} (tile: the journal's newest outcome)", 3)


_ROW = re.compile(r'<tr class="[a-z_]+" data-seq="(\d+)">')


async def _observe_history(base: str, journals: dict[str, Path], report: FaultReport) -> None:
    """How many chain-valid forgeries the dashboard shows in a table's history: it holds no key,
    so an outcome that links is shown beside the table's own at its seq (and the tile warns:
    floor.py, "The chain"). Observed, not checked: only a keyed reader can tell them apart."""
    shown = 0
    for table, journal in journals.items():
        outcomes = Counter(
            seq
            for seq, body in (await asyncio.to_thread(journal_bodies, journal)).items()
            if b'"type":"outcome"' in body
        )
        _, body, _ = await asyncio.to_thread(http_get, f"{base}/table/{table}")
        rows = Counter(int(seq) for seq in _ROW.findall(body))
        shown += sum((rows - outcomes).values())
    report.observe("hostile: forged outcomes the dashboard shows in histories (no key)", shown)


async def _check_alarms(watcher: Subscriber, ours: set[bytes], report: FaultReport) -> None:
    """The archiver alarmed what it refused (forged, unauthenticated, malformed), with the
    reason; its alarms are its own, not the generator's on the same topic."""

    def reasons() -> set[tuple[str, str]]:
        found = set()
        for m in watcher.messages:
            mine = m.payload in ours or not m.topic.endswith("/alarms")
            alarm = None if mine else _json_or_none(m.payload)
            if isinstance(alarm, dict) and isinstance(alarm.get("reason"), str):
                found.add((str(alarm.get("code")), alarm["reason"]))
        return found

    wanted = {("quarantined", "forged"), ("quarantined", "unauthenticated")}
    await watcher.wait_until(lambda _: wanted <= reasons(), timeout=30)
    assert any(code == "malformed" for code, _ in reasons()), reasons()
    report.check("hostile: archive alarmed forged, unauthenticated and malformed messages")


def _check_resends(
    watcher: Subscriber, ours: set[bytes], journals: dict[str, Path], report: FaultReport
) -> None:
    """The archive asked the real tables only, a bounded number of times, for seqs they could
    have (none towards 2**63-1, 10**9 or 10**15: issue 26 #1)."""
    asked = [
        (m.topic.split("/")[1], m.json())
        for m in watcher.messages
        if m.topic.endswith("/cmd/resend") and m.payload not in ours
    ]
    report.observe("hostile: the archive's resend requests", len(asked))
    assert {table for table, _ in asked} <= set(journals), asked[:10]
    assert len(asked) <= 100, asked[:10]
    assert all(int(request["to_seq"]) < 10**6 for _, request in asked), asked[:10]
    report.check("hostile: the archive's resend requests bounded, real tables and seqs only")


def _check_journals(journals: dict[str, Path], report: FaultReport) -> None:
    """No unsigned command was accepted (none journaled as a ``command``); the refusals were
    journaled (``commands_refused``, one record a window)."""
    for table, journal in journals.items():
        records = [json.loads(body) for body in journal_bodies(journal).values()]
        accepted = [r for r in records if r["type"] == "command"]
        assert not accepted, (table, accepted[:3])
        refused = sum(int(r["count"]) for r in records if r["type"] == "commands_refused")
        assert refused > 0, table
        report.observe("hostile: commands refused (journaled)", refused)
    report.check("hostile: no unsigned command accepted by a table", len(journals))


def _metrics(body: str, name: str) -> dict[str, float]:
    """Every sample of ``name``: its labels' text → value."""
    out: dict[str, float] = {}
    for line in body.splitlines():
        if line.startswith((name + "{", name + " ")):
            key, _, value = line.rpartition(" ")
            out[key.removeprefix(name)] = float(value)
    return out


async def _check_board_metrics(port: int, report: FaultReport) -> None:
    status, body = await scrape(port)
    assert status == 200, body
    malformed = _metrics(body, "tablectl_dashboard_malformed_total")
    refused = _metrics(body, "tablectl_dashboard_refused_total")
    for reason, n in sorted(malformed.items()):
        report.observe(f"hostile: dashboard malformed {reason}", int(n))
    for reason, n in sorted(refused.items()):
        report.observe(f"hostile: dashboard refused {reason}", int(n))
    restarts = sum(_metrics(body, "tablectl_dashboard_feed_restarts_total").values())
    internal = malformed.get('{reason="internal"}', 0)
    assert (internal, restarts) == (0, 0), "the dashboard's feed failed on a message:\n" + body
    report.check("hostile: dashboard feed never failed (no internal error, no restart)")
    assert refused.get('{reason="tables"}', 0) > 0, body
    assert refused.get('{reason="devices"}', 0) > 0, body
    assert sum(_metrics(body, "tablectl_dashboard_tables").values()) <= MAX_TABLES, body
    report.check("hostile: dashboard held its table and device caps")


async def _check_archive_metrics(port: int, report: FaultReport) -> None:
    status, body = await scrape(port)
    assert status == 200, body
    quarantined = _metrics(body, "tablectl_archive_quarantined_total")
    for labels, n in sorted(quarantined.items()):
        reason = re.search(r'reason="([^"]+)"', labels)
        what = reason.group(1) if reason else labels
        report.observe(f"hostile: archive quarantined {what}", int(n))
    errors = [k for k, v in quarantined.items() if 'reason="error"' in k and v]
    assert not errors, "the archive failed to judge a message:\n" + body
    report.check("hostile: archive judged every message (no 'error' quarantine)")


def _check_quarantine(
    dsn: str,
    plan: Sequence[Message],
    forger: _Forger,
    journals: dict[str, Path],
    report: FaultReport,
) -> None:
    kept = {
        (str(topic), str(digest)): str(reason)
        for topic, digest, reason in _rows(
            dsn, "SELECT topic, sha256, reason FROM archive_quarantine"
        )
    }
    report.observe("hostile: quarantine rows", len(kept))
    for how, topic, seq, payload in forger.forged:
        reason = kept.get((topic, sha256(payload)))
        assert reason in ("forged", "unauthenticated"), (how, topic, seq, reason)
    report.check("hostile: every chain-valid forgery in archive_quarantine", len(forger.forged))
    stored = {str(t) for (t,) in _rows(dsn, "SELECT DISTINCT table_id FROM records")}
    assert stored == set(journals), stored
    known = {str(t) for (t,) in _rows(dsn, "SELECT table_id FROM archive_tables")}
    assert known == set(journals), known
    gaps = _rows(dsn, "SELECT table_id, from_seq, to_seq FROM archive_gaps")
    assert not gaps, gaps
    report.check("hostile: records, tables and gaps of the real tables only")
    forged_hashes = [json.loads(p)["hash"] for *_, p in forger.forged]
    found = _rows(dsn, "SELECT table_id, seq FROM records WHERE hash = ANY(%s)", forged_hashes)
    assert not found, found
    report.check("hostile: no forgery in records")
    # Every record the archive reads (events, anchor), refused one by one and kept, but for
    # what the broker never hands it (beyond its MQTT v5 Maximum Packet Size).
    refused = [m for m in plan if m.archived and len(m.payload) <= 65_536 + 1024]
    missing = [m for m in refused if (m.topic[:512], sha256(m.payload)) not in kept]
    assert not missing, [(m.kind, m.topic, m.payload[:80]) for m in missing[:10]]
    report.check("hostile: every hostile record in archive_quarantine", len(refused))
    partitions = _rows(
        dsn, "SELECT count(*) FROM pg_inherits WHERE inhparent = 'records'::regclass"
    )[0][0]
    assert int(partitions) <= 16, partitions
    report.check("hostile: partitions only for the window's months")


def _check_verify(dsn: str, key: Path, journals: dict[str, Path], report: FaultReport) -> None:
    done = _tablectl("verify", "--dsn", dsn, "--key", str(key))
    assert done.returncode == 0, done.stdout + done.stderr
    for table in journals:
        assert re.search(rf"^OK: {re.escape(table)}: ", done.stdout, re.M), done.stdout
    report.check("hostile: verify --dsn --key OK for every real table", len(journals))
    for fake in ("FAB-01", "GHOST-01", "FAKE-0000"):
        done = _tablectl("verify", "--dsn", dsn, "--key", str(key), "--table", fake)
        assert done.returncode != 0, (fake, done.stdout, done.stderr)
        assert "OK" not in done.stdout, (fake, done.stdout)
    report.check("hostile: verify --dsn --key reports no fake table OK", 3)


def _stats(proc: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    """The JSON documents ``diag stats --json`` printed."""
    assert proc.returncode == 0, proc.stderr[-2000:]
    decoder, text, at = json.JSONDecoder(), proc.stdout, 0
    found: list[dict[str, Any]] = []
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return found
        value, at = decoder.raw_decode(text, at)
        found.append(value)


def _differences(archive: dict[str, Any], journal: dict[str, Any]) -> list[str]:
    """Where two wheel reports differ: the window (spins, voids, first and last round) and
    every figure of the tests (chi-square, frequencies, serial correlation)."""
    differ = []
    for part in ("kind", "variant", "window", "journal_stats"):
        mine, theirs = archive.get(part), journal.get(part)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            for key in sorted(set(mine) | set(theirs)):
                if mine.get(key) != theirs.get(key):
                    differ.append(f"{part}.{key}: {mine.get(key)!r} != {theirs.get(key)!r}")
        elif mine != theirs:
            differ.append(f"{part}: {mine!r} != {theirs!r}")
    return differ


def _check_stats(dsn: str, key: Path, journals: dict[str, Path], report: FaultReport) -> None:
    for table, journal in journals.items():
        (mine,) = _stats(_tablectl("diag", "stats", "--journal", str(journal), "--json"))
        assert mine["window"]["spins"] > 0, mine["window"]
        for extra in ([], ["--key", str(key)]):
            (theirs,) = _stats(
                _tablectl("diag", "stats", "--dsn", dsn, "--table", table, "--json", *extra)
            )
            differ = _differences(theirs, mine)
            assert not differ, f"{table} {extra}: " + "; ".join(differ)
            report.check("hostile: diag stats --dsn (with and without --key) == --journal")


# --- a forgery with a valid auth ----------------------------------------------------------------


@pytest.mark.fault
@pytest.mark.broker
@pytest.mark.timeout(200)
async def test_a_replayed_auth_on_a_withheld_card_is_refused(
    tmp_path: Path, mosquitto: MosquittoProcess, lane_postgres: PostgresServer
) -> None:
    """One message: a record the table published (and the archive stored) with its ``seq``,
    ``prev_hash``, ``hash`` and ``auth`` on a body dressed as a face-down card. It must be
    quarantined (``unauthenticated``: no ``withheld_auth``), and the archive must go on
    verifying the table.

    A failure to set the floor up is a :class:`RuntimeError`, an error of the test, not of the
    archive."""
    floor = _Floor(tmp_path, mosquitto, lane_postgres.new_database(), 1)
    (lane,) = floor.lanes
    table = lane.table
    with dashboard_process(floor.board_args, floor.board_log) as board:
        try:
            try:
                await floor.start(board)
                await wait_archived(floor.dsn, floor.journals, 40, archivers=[floor.archiver])
            except AssertionError as exc:
                raise RuntimeError(f"the floor did not start: {exc}") from None
            bodies = journal_bodies(lane.journal)
            genuine = json.loads(bodies[max(bodies) - 2])
            payload = withheld_replay(genuine, round=genuine.get("round"))
            async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=30) as client:
                await client.publish(f"{PREFIX}/{table}/events", payload, qos=1)
            digest = sha256(payload)

            def judged() -> list[tuple[Any, ...]]:
                return _rows(
                    floor.dsn,
                    "SELECT 'quarantine', reason FROM archive_quarantine WHERE sha256 = %s"
                    " UNION ALL SELECT 'conflicts', NULL FROM archive_conflicts"
                    " WHERE table_id = %s AND sha256(raw) = decode(%s, 'hex')"
                    " UNION ALL SELECT 'records', NULL FROM records"
                    " WHERE table_id = %s AND sha256(raw) = decode(%s, 'hex')",
                    digest,
                    table,
                    digest,
                    table,
                    digest,
                )

            deadline = time.monotonic() + 20
            while not (where := await asyncio.to_thread(judged)):
                if time.monotonic() > deadline:
                    raise RuntimeError("the archiver never judged the replay")
                await asyncio.sleep(0.2)
            assert where == [("quarantine", "unauthenticated")], where  # no withheld_auth
            await wait_played(floor.lanes, 2)
            await lane.stop_ctl()
            await wait_archived(floor.dsn, floor.journals, 30, archivers=[floor.archiver])
        finally:
            floor.stop()
    check_archived(floor.dsn, table, lane.journal)


@pytest.mark.fault
@pytest.mark.broker
@pytest.mark.timeout(120)
async def test_the_dashboard_shows_no_forged_outcome_at_an_old_seq(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    """A table 700 records on; twenty forged zeros at seqs 50-69, linked to each other but to
    nothing of the table's. Not one may show (the lane saw dozens in the tables' histories)."""
    port = free_port()
    log = tmp_path / "dashboard.log"
    args = ["--url", mosquitto.url, "--prefix", PREFIX, "--listen", f"127.0.0.1:{port}"]
    chain = Chain("ROU-OLD")
    topic = f"{PREFIX}/{chain.table}"
    base = f"http://127.0.0.1:{port}"
    with dashboard_process(args, log) as board:
        try:
            await serving(board, log)
        except AssertionError as exc:
            raise RuntimeError(f"no dashboard: {exc}") from None
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=30) as client:

            async def publish(leaf: str, body: dict[str, Any], *, retain: bool = False) -> None:
                await client.publish(f"{topic}/{leaf}", json.dumps(body), qos=1, retain=retain)

            await publish("status", {"state": "online"}, retain=True)

            async def subscribed() -> bool:  # the retained status shown: it hears the table
                status, body, _ = await asyncio.to_thread(http_get, base + "/")
                return status == 200 and chain.table in body

            await wait_until(subscribed, timeout=30, what="the dashboard to hear the table")
            for n in range(350):
                await publish("events", chain.record("bets_closed"))
                await publish("events", chain.spin(n % 36 + 1))
            await publish("state", chain.state(), retain=True)
            forged = Chain(chain.table)
            forged.seq, forged.head = 49, "f" * 64
            for _ in range(20):
                await publish("events", forged.spin(0))
            await publish("events", chain.record("bets_closed"))
            await publish("events", chain.spin(7))  # after the forgeries: they were read
            await publish("state", chain.state(), retain=True)

        async def shows_the_last() -> bool:
            status, body, _ = await asyncio.to_thread(http_get, f"{base}/table/{chain.table}")
            found = _LAST.search(body)
            return status == 200 and found is not None and int(found.group(1)) == chain.seq

        deadline = time.monotonic() + 30
        while not await shows_the_last():
            if time.monotonic() > deadline:
                raise RuntimeError("the dashboard never showed the table's last outcome")
            await asyncio.sleep(0.2)
        _, body, _ = await asyncio.to_thread(http_get, f"{base}/table/{chain.table}")
    rows = [int(seq) for seq in _ROW.findall(body)]
    old = [seq for seq in rows if 50 <= seq <= 69]
    # The table's own outcomes at those seqs, once each: none of the forged zeros beside them.
    assert old == list(range(68, 49, -2)), f"forged outcomes shown at old seqs: {old}"
    missing = sorted(set(range(2, 704, 2)) - set(rows))
    assert len(rows) == 351, f"{len(rows)} rows; missing {missing}"
