"""The floor's archive in tests: ``tablectl archive`` as a real process, and what it must hold.

Shared by the integration tests (tests/integration/test_archive*.py) and the fault suite's
archive lane: an :class:`ArchiverProcess` that can be killed and restarted like systemd would,
and the contract of :func:`check_archived` — the archive holds every journaled record exactly
once, byte for byte as published, and each table's chain verifies end to end in the archive.
"""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from tablectl.controller.config import load_config
from tablectl.controller.core.time import format_moment
from tablectl.controller.engines.replay import run_replay
from tablectl.controller.mqtt.outbound import published_payload
from tablectl.controller.service.app import build_engine_for
from tablectl.controller.tools.cli import main as tablectl
from tests.fault.harness import Lane
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Received, Subscriber
from tests.support.processes import REPO, end_process, log_tail

__all__ = [
    "ArchiverProcess",
    "KeyedLane",
    "archive_state",
    "archived_outcomes",
    "check_archived",
    "journal_bodies",
    "replayed_outcomes",
    "same_outcomes",
    "wait_archived",
    "wait_played",
    "wait_subscribed",
    "write_key",
]


class KeyedLane(Lane):
    """A fault-suite table whose journal is keyed: anchors every 20 records and every second,
    which the archive checks with its copy of the key."""

    def __init__(self, name: str, workdir: Path, broker_url: str, *, key_file: Path) -> None:
        super().__init__(name, workdir, broker_url)
        self.key_file = key_file

    def write_config(self, port: str | None = None) -> Path:
        path = super().write_config(port)
        keyed = f'checkpoint_every = 7\nkey_file = "{self.key_file}"\nanchor_every = 20\n'
        text = path.read_text(encoding="utf-8").replace("checkpoint_every = 7\n", keyed, 1)
        path.write_text(text, encoding="utf-8")
        return path


def write_key(path: Path) -> Path:
    """A journal key file outside any journal's folder, owner-only (as the config demands)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("a" * 32, encoding="utf-8")
    path.chmod(0o600)
    return path


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


@dataclass
class ArchiverProcess:
    """``tablectl archive`` with its log; ``start`` again after ``kill`` (as systemd would)."""

    workdir: Path
    url: str
    dsn: str
    name: str = "archive"
    prefix: str = "it"
    extra: Sequence[str] = ()
    proc: subprocess.Popen[bytes] | None = field(default=None, init=False)
    starts: int = field(default=0, init=False)
    started: str = field(default="", init=False)
    """When :meth:`start` last ran, as the archiver writes its ``ts`` (UTC, ``Z``)."""

    @property
    def status_topic(self) -> str:
        return f"{self.prefix}/_archive/{self.name}/status"

    @property
    def log(self) -> Path:
        return self.workdir / f"archive-{self.name}.log"

    def start(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.started = format_moment(datetime.now(UTC))
        args = [
            *("--log-format", "json", "archive"),
            *("--url", self.url, "--dsn", self.dsn, "--prefix", self.prefix),
            *("--name", self.name, "--gap-timeout", "1", "--probe-after", "2"),
            *self.extra,
        ]
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tablectl", *args],
                stdout=subprocess.DEVNULL,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=_child_env(),
                cwd=REPO,
            )
        self.starts += 1

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self, sig: int = signal.SIGKILL) -> int | None:
        proc, self.proc = self.proc, None
        return None if proc is None else end_process(proc, sig)

    def log_tail(self, chars: int = 3000) -> str:
        return log_tail(self.log, chars)


async def wait_subscribed(
    broker: MosquittoProcess,
    archivers: Sequence[ArchiverProcess],
    timeout: float = 30.0,  # noqa: ASYNC109
) -> None:
    """Each archiver connected and subscribed since its last start: its ``online`` status, which
    it sends right after its subscriptions. An archiver still starting misses what is published
    meanwhile on a topic it reads alone (``cmd/resend/reply``: not a shared subscription)."""

    def online(message: Received, archiver: ArchiverProcess) -> bool:
        status = message.json()
        return status.get("state") == "online" and str(status.get("ts", "")) >= archiver.started

    async with Subscriber(broker.host, broker.port, [a.status_topic for a in archivers]) as seen:
        await seen.wait_until(
            lambda got: all(
                any(m.topic == a.status_topic and online(m, a) for m in got) for a in archivers
            ),
            timeout=timeout,
        )


def journal_bodies(journal: Path, key: bytes | None = None) -> dict[int, bytes]:
    """``seq`` → the bytes the table publishes for it (read beside a live writer); ``key``: the
    journal's, which a card published withheld carries the MAC of (``withheld_auth``)."""
    rows = read_rows(journal, "SELECT seq, type, body FROM records ORDER BY seq")
    return {int(s): published_payload(str(t), str(b).encode("utf-8"), key) for s, t, b in rows}


@dataclass(frozen=True)
class ArchivedTable:
    """What the archive holds of one table."""

    rows: list[tuple[int, bytes]]
    verified_seq: int
    broken_at: int | None
    gaps: int
    conflicts: int

    @property
    def seqs(self) -> list[int]:
        return [seq for seq, _ in self.rows]


def archive_state(dsn: str, table: str) -> ArchivedTable:
    """The archive's rows and verification state of ``table`` (empty when unknown)."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT seq, raw FROM records WHERE table_id = %s ORDER BY seq", (table,)
        ).fetchall()
        head = conn.execute(
            "SELECT verified_seq, chain_broken_at FROM archive_tables WHERE table_id = %s",
            (table,),
        ).fetchone()
        gaps = conn.execute("SELECT count(*) FROM archive_gaps WHERE table_id = %s", (table,))
        conflicts = conn.execute(
            "SELECT count(*) FROM archive_conflicts WHERE table_id = %s", (table,)
        )
        gap_count = int(str(gaps.fetchone()[0]))  # type: ignore[index]
        conflict_count = int(str(conflicts.fetchone()[0]))  # type: ignore[index]
    verified, broken = (int(head[0]), head[1]) if head else (0, None)
    return ArchivedTable(
        [(int(s), bytes(r)) for s, r in rows], verified, broken, gap_count, conflict_count
    )


def _caught_up(dsn: str, table: str, upto: int) -> bool:
    try:
        state = archive_state(dsn, table)
    except psycopg.Error:
        return False  # the server is being restarted
    have = set(state.seqs)
    return all(seq in have for seq in range(1, upto + 1)) and state.verified_seq >= upto


async def wait_archived(
    dsn: str,
    tables: dict[str, Path],
    timeout: float = 30.0,  # noqa: ASYNC109 - a bound reported in the failure
    *,
    archivers: Sequence[ArchiverProcess] = (),
) -> None:
    """Wait until the archive holds and has verified every record journaled by now.

    The tables may still be running (what they journal after this call is not waited for): a
    gap can only be filled while its table runs, so a test waits with the tables up, stops
    them, and waits once more for their last records.
    """
    bounds = {t: max(journal_bodies(j), default=0) for t, j in tables.items()}
    deadline = time.monotonic() + timeout
    while True:
        pending = [
            t for t, upto in bounds.items() if not await asyncio.to_thread(_caught_up, dsn, t, upto)
        ]
        if not pending:
            return
        if time.monotonic() >= deadline:
            details = []
            for table in pending:
                state = archive_state(dsn, table)
                missing = sorted(set(range(1, bounds[table] + 1)) - set(state.seqs))
                details.append(
                    f"{table}: {len(state.rows)} rows, journal at {bounds[table]}, verified "
                    f"{state.verified_seq}, missing {missing[:15]}, gaps {state.gaps}"
                )
            logs = "\n".join(a.log_tail(1500) for a in archivers)
            raise AssertionError(
                f"archive incomplete after {timeout}s: {'; '.join(details)}\n{logs}"
            )
        await asyncio.sleep(0.2)


async def wait_played(
    lanes: Sequence[Lane],
    outcomes: int = 2,
    timeout: float = 45.0,  # noqa: ASYNC109 - a bound reported in the failure
) -> None:
    """Wait until every lane's journal holds ``outcomes`` outcomes more than when called (its
    controller started, connected its wheel, and plays: a slow start-up on a loaded machine is
    not a reason to stop a table that never ran)."""

    def count(lane: Lane) -> int:
        return sum(b'"type":"outcome"' in body for body in journal_bodies(lane.journal).values())

    start = {lane.table: count(lane) for lane in lanes}
    deadline = time.monotonic() + timeout
    while True:
        behind = [lane for lane in lanes if count(lane) < start[lane.table] + outcomes]
        if not behind:
            return
        if time.monotonic() >= deadline:
            raise AssertionError(
                f"tables not playing after {timeout}s: {[lane.table for lane in behind]}\n"
                + "\n".join(lane.log_tail() for lane in behind)
            )
        await asyncio.sleep(0.2)


def check_archived(dsn: str, table: str, journal: Path) -> int:
    """The contract: every journaled record once, as published, and the chain verified.

    Returns the number of records checked.
    """
    wanted = journal_bodies(journal)
    assert wanted, f"{table}: nothing journaled"
    state = archive_state(dsn, table)
    assert len(state.rows) == len(set(state.seqs)), f"{table}: a seq stored twice"
    assert state.seqs == sorted(wanted), f"{table}: archive seqs differ from the journal's"
    for seq, raw in state.rows:
        assert raw == wanted[seq], f"{table}: seq {seq} archived as {raw[:100]!r}"
    assert state.verified_seq == max(wanted), f"{table}: verified to {state.verified_seq} only"
    assert state.broken_at is None, f"{table}: chain broken at {state.broken_at}"
    assert (state.gaps, state.conflicts) == (0, 0), f"{table}: gaps or conflicts left"
    return len(state.rows)


def archived_outcomes(dsn: str, table: str) -> list[dict[str, object]]:
    """The table's ``outcome`` records in the archive, in ``seq`` order."""
    with psycopg.connect(dsn, connect_timeout=5) as conn:
        rows = conn.execute(
            "SELECT raw FROM records WHERE table_id = %s AND type = 'outcome' ORDER BY seq",
            (table,),
        ).fetchall()
    return [json.loads(bytes(r[0])) for r in rows]


def replayed_outcomes(dsn: str, table: str, config: Path, workdir: Path) -> list[dict[str, object]]:
    """``tablectl export --dsn … --all`` of the table, replayed with its config: the outcomes."""
    events = workdir / f"{table}.export.jsonl"
    code = tablectl(["export", "--dsn", dsn, "--table", table, "--all", "--out", str(events)])
    assert code == 0, f"{table}: export from the archive failed ({code})"
    engine = build_engine_for(load_config(config))
    out, err = io.StringIO(), io.StringIO()
    with events.open(encoding="utf-8") as source:
        report = run_replay(engine, source, out, err)
    assert report.errors == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def same_outcomes(archived: list[dict[str, object]], replayed: list[dict[str, object]]) -> bool:
    """Round, status, reason and result agree, outcome by outcome."""

    def key(outcome: dict[str, object]) -> tuple[object, ...]:
        result = json.dumps(outcome.get("result"), sort_keys=True)
        return (outcome.get("round"), outcome.get("status"), outcome.get("reason"), result)

    return [key(o) for o in archived] == [key(o) for o in replayed]
