"""A clock step never makes retention delete a young journal (issue 25, defect 2), end to end.

Reproduced on f239be4: a roulette table with the defaults ``rotate_days = 1``, ``retention_days =
90``, run for a few seconds at wall-clock offsets −3 d, −2 d, −1 d, 0, then +100 d twice: at the
second +100 d start ``prune`` deleted every rotated file (at most 4 days old in real time) and
``verify`` called it normal retention.

Real parts only: ``tablectl simulate ss2`` on a pty (real time), ``tablectl run`` as a process
under libfaketime (Debian's ``faketime``; the offset from a file, ``CLOCK_BOOTTIME`` left real
with ``FAKETIME_DONT_FAKE_MONOTONIC=1``), stopped with SIGTERM after a couple of rounds that the
broker acknowledged (so every rotated file is prunable as far as publishing goes), a Mosquitto of
the fixture, ``/metrics`` over HTTP and ``tablectl verify`` over the folder.

On one boot ``CLOCK_BOOTTIME`` says seconds passed between the runs, so each day the wall clock
moves between them is a step too: the −2 d, −1 d and 0 starts journal a +1 d ``clock_step``, the
first +100 d start a +100 d one. The second +100 d start journals none — the clock runs on from
the journal's last reading — but the clock stays suspect (nobody confirmed it), so retention stays
suspended. A supervisor's signed ``cmd/clock_confirm`` ends the suspicion; the next start prunes,
and the discount (the steps journaled since each file) keeps every file: none is 90 days old in
real time. A step back (0 then −30 d) is found as well, and the clock's return (0 again) ends it.
And a step the running watch had no time to see — the clock set 100 days ahead and the table
stopped at once — is journaled all the same (by ``power_off``), so the next start deletes nothing
(it used to take the stepped clock for the truth and delete the files of days before).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import subprocess
import sys
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.journal.files import list_archives
from tablectl.controller.journal.retention import retired_log_path
from tablectl.controller.mqtt.security import sign_command
from tests.fault.harness import (
    PREFIX,
    Collector,
    Lane,
    faketime_env,
    faketime_library,
    read_journal,
    records,
    set_clock_offset,
)
from tests.support.live_journal import read_rows
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.processes import REPO

pytestmark = [
    pytest.mark.broker,
    pytest.mark.slow,
    pytest.mark.timeout(150),
    pytest.mark.skipif(faketime_library() is None, reason="needs libfaketime (apt faketime)"),
]

DAY = 86_400.0
SLACK = 60.0
"""Seconds a journaled step may differ from the offsets' difference (start-up, a busy machine)."""
KEY = "5f0c1e9a" * 8
SUPERVISOR = "FM-0042"


class Table:
    """One roulette table whose controller runs under libfaketime at an offset set per run."""

    def __init__(self, name: str, workdir: Path, broker: MosquittoProcess, **options: Any) -> None:
        self.offset_file = workdir / "faketime"
        self.offset_file.parent.mkdir(parents=True, exist_ok=True)
        set_clock_offset(self.offset_file, "+0")
        self.metrics = free_port()
        self.lane = Lane(
            name,
            workdir,
            broker.url,
            journal=workdir / "journal" / "journal.sqlite",
            extra_config=f'[metrics]\nlisten = "127.0.0.1:{self.metrics}"',
            env=faketime_env(self.offset_file),
            **options,
        )
        self.lane.journal.parent.mkdir(parents=True, exist_ok=True)
        self.runs: list[list[dict[str, Any]]] = []
        """Each run's records, in order."""
        self.logs: list[str] = []
        """Each run's controller log."""

    @property
    def table(self) -> str:
        return self.lane.table

    def found(self) -> list[dict[str, Any]]:
        return list(records(read_journal(self.lane.journal)))

    async def run(
        self, offset: str, collector: Collector, *, rounds: int = 2, during: Any = None
    ) -> list[dict[str, Any]]:
        """Start at ``offset``, play ``rounds`` rounds (``during(self)`` then), SIGTERM; the run's
        records."""
        lane = self.lane
        set_clock_offset(self.offset_file, offset)
        before = self.found()
        last = before[-1]["seq"] if before else 0
        log_at = lane.ctl_log.stat().st_size if lane.ctl_log.exists() else 0
        lane.start_ctl()
        try:
            power_on = await _wait_for(
                lambda: next(
                    (r for r in self.found() if r["seq"] > last and r["type"] == "power_on"), None
                ),
                20,
                f"{self.table} at {offset}: power_on",
                lane,
            )

            def settled() -> int:
                return sum(
                    b'"status":"settled"' in payloads[0]
                    for seq, payloads in collector.events[self.table].items()
                    if seq > power_on["seq"]
                )

            await collector.wait(lambda: settled() >= rounds, 30, f"{self.table}: {rounds} rounds")
            if during is not None:
                await during(self)
        except AssertionError as exc:
            raise AssertionError(f"{exc}\n{lane.log_tail()}") from None
        code = await lane.stop_ctl()
        assert code == 0, f"{self.table} at {offset}: exit {code}\n{lane.log_tail()}"
        found = self.found()
        wanted = {r["seq"] for r in found}
        await collector.wait(lambda: wanted <= collector.seqs(self.table), 10, "all published")
        assert _unpublished(lane.journal) == 0, f"{self.table}: records left unacknowledged"
        self.logs.append(lane.ctl_log.read_bytes()[log_at:].decode("utf-8", "replace"))
        run = [r for r in found if r["seq"] > last]
        self.runs.append(run)
        return run

    def state(self, collector: Collector) -> dict[str, Any]:
        """The newest ``state`` the table published."""
        views = [json.loads(d) for t, d in collector.other[self.table] if t == "state"]
        assert views, f"{self.table}: no state published"
        latest: dict[str, Any] = views[-1]
        return latest

    def metric(self, name: str) -> float:
        url = f"http://127.0.0.1:{self.metrics}/metrics"
        with urllib.request.urlopen(url, timeout=5) as answer:
            text = answer.read().decode()
        values = re.findall(rf"^{name}(?:\{{[^}}]*\}})? (\S+)$", text, re.MULTILINE)
        assert len(values) == 1, f"{name}: {values}"
        return float(values[0])


async def _wait_for(
    probe: Any,
    timeout: float,  # noqa: ASYNC109 - a bound named in the failure
    what: str,
    lane: Lane,
) -> Any:
    deadline = asyncio.get_running_loop().time() + timeout
    while (found := probe()) is None:
        if lane.ctl is not None and lane.ctl.poll() is not None:
            raise AssertionError(f"{what}: the controller exited ({lane.ctl.returncode})")
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(0.05)
    return found


def _unpublished(live: Path) -> int:
    total = 0
    for path in [*(a.path for a in list_archives(live)), live]:
        rows = read_rows(path, "SELECT count(*) FROM records WHERE published = 0")
        total += rows[0][0] if rows else 0
    return total


def _steps(run: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in run if r["type"] == "clock_step"]


def _check_step(record: dict[str, Any], step: float, *, suspect: bool = True) -> None:
    """A ``clock_step`` of about ``step`` seconds, its ``before``/``after`` that far apart."""
    before, after = parse_ts_seconds(record["before"]), parse_ts_seconds(record["after"])
    assert before is not None
    assert after is not None
    assert abs(record["step_s"] - step) < SLACK, record
    assert abs((after - before) - record["step_s"]) < 1.0, record
    assert record["suspect"] is suspect, record
    assert record["clock"]["boot_id"], record


def _check_times(found: list[dict[str, Any]]) -> None:
    """Journal times never go backwards but at a ``clock_step`` (the record that says so)."""
    back = [
        (prev["seq"], prev["ts"], record["seq"], record["type"], record["ts"])
        for prev, record in itertools.pairwise(found)
        if (parse_ts_seconds(record["ts"]) or 0) < (parse_ts_seconds(prev["ts"]) or 0)
    ]
    assert all(kind == "clock_step" for _, _, _, kind, _ in back), back


def _check_kept(table: Table) -> None:
    """Nothing was ever retired: no retirement log, the rotated files and the live one hold
    every ``seq`` from 1, and ``tablectl verify`` over the folder passes."""
    live = table.lane.journal
    assert not retired_log_path(live).exists(), retired_log_path(live).read_text()
    rows = read_journal(live)
    assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
    for log in table.logs:
        assert "journal_file_retired" not in log
    verified = subprocess.run(
        [sys.executable, "-m", "tablectl", "verify", str(live.parent)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        check=False,
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith(f"OK: {len(rows)} records, hash chain intact"), (
        verified.stdout
    )


async def _confirm(
    table: Table, collector: Collector, broker: MosquittoProcess, *, signed: bool = True
) -> None:
    """A supervisor confirms the clock: signed with the role's key, stamped by the supervisor's
    own (right) clock, 100 days behind the table's — allowed while the clock is suspect (or, on
    a lab table, unsigned)."""
    assert table.state(collector).get("clock", {}).get("suspect") is True
    assert table.metric("tablectl_clock_suspect") == 1.0
    request: dict[str, Any] = {"id": f"confirm-{len(table.runs)}", "by": SUPERVISOR}
    if signed:
        del request["by"]
        request = sign_command(
            request,
            verb="clock_confirm",
            table=table.table,
            role="supervisor",
            key=KEY.encode(),
            by=SUPERVISOR,
            ts=datetime.now(UTC),
        )
    mark = len(collector.other[table.table])
    async with aiomqtt.Client(broker.host, broker.port) as client:
        await client.publish(
            f"{PREFIX}/{table.table}/cmd/clock_confirm", json.dumps(request), qos=1
        )

    def replies() -> list[dict[str, Any]]:
        return [
            json.loads(d)
            for t, d in collector.other[table.table][mark:]
            if t == "cmd/clock_confirm/reply"
        ]

    await collector.wait(lambda: bool(replies()), 10, "the clock_confirm reply")
    reply = replies()[-1]
    assert reply["ok"] is True, reply
    await collector.wait(
        lambda: "clock" not in table.state(collector), 5, "a state without a suspect clock"
    )
    assert table.metric("tablectl_clock_suspect") == 0.0


async def _forward(tmp_path: Path, broker: MosquittoProcess, collector: Collector) -> None:
    key = tmp_path / "keys" / "supervisor.key"
    key.parent.mkdir()
    key.write_text(KEY + "\n", encoding="ascii")
    key.chmod(0o600)
    table = Table(
        "CF", tmp_path / "forward", broker, security=f'roles = {{ supervisor = "{key}" }}'
    )
    await asyncio.to_thread(table.lane.start_sim, ["--seed", "25"])
    try:
        for offset in ("-3d", "-2d", "-1d", "+0"):
            await table.run(offset, collector)
        first, *days = table.runs
        assert not _steps(first)
        for run in days:
            (step,) = _steps(run)
            _check_step(step, DAY)
            assert run[0]["type"] == "clock_step", run[0]  # journaled before power_on
        mark = len(collector.other[table.table])

        # The first start 100 days ahead: the step journaled (before / after), on alarms.
        run = await table.run("+100d", collector)
        (step,) = _steps(run)
        _check_step(step, 100 * DAY)
        assert (step["detected"], run[0]["type"]) == ("start", "clock_step"), run[:2]
        alarms = [json.loads(d) for t, d in collector.other[table.table][mark:] if t == "alarms"]
        assert any(a.get("type") == "clock_step" for a in alarms), alarms

        # The second: the clock is where the journal's last reading says it should be (no new
        # step), yet still unconfirmed: suspect, and retention held at power_on.
        async def suspect(t: Table) -> None:
            assert t.state(collector).get("clock", {}).get("suspect") is True
            assert t.metric("tablectl_clock_suspect") == 1.0

        run = await table.run("+100d", collector, during=suspect)
        assert not _steps(run), _steps(run)
        assert "retention_suspended" in table.logs[-1]
        # Rotated by then (rotate_days = 1; at a round's start after a day, anywhere after two,
        # once the broker has every record of the live file): the files retention would judge.
        rotated = [a.path.name for a in list_archives(table.lane.journal)]
        assert len(rotated) >= 2, rotated

        # A supervisor confirms; the next start prunes (no hold), and deletes nothing: by the
        # discount, every file is seconds old in real time.
        run = await table.run("+100d", collector, during=lambda t: _confirm(t, collector, broker))
        (confirmed,) = [r for r in run if r["type"] == "clock_confirmed"]
        assert (confirmed["by"], confirmed["role"]) == (SUPERVISOR, "supervisor"), confirmed
        run = await table.run("+100d", collector)
        assert not _steps(run)
        assert "retention_suspended" not in table.logs[-1]
        power_on = next(r for r in run if r["type"] == "power_on")
        assert power_on["clock"]["discount_s"] == pytest.approx(103 * DAY, abs=SLACK)
        assert [a.path.name for a in list_archives(table.lane.journal)] == rotated
        found = table.found()
        _check_times(found)
        _check_kept(table)
    finally:
        table.lane.stop()


async def _back(tmp_path: Path, broker: MosquittoProcess, collector: Collector) -> None:
    table = Table("CB", tmp_path / "back", broker)
    await asyncio.to_thread(table.lane.start_sim, ["--seed", "26"])
    try:
        await table.run("+0", collector)
        run = await table.run("-30d", collector)
        (step,) = _steps(run)
        _check_step(step, -30 * DAY)
        assert run[0] is step
        previous = table.runs[0][-1]
        assert (parse_ts_seconds(step["ts"]) or 0) < (parse_ts_seconds(previous["ts"]) or 0)
        assert "retention_suspended" in table.logs[-1]
        # The clock set right again: back on the course it had before the step.
        run = await table.run("+0", collector)
        (returned,) = _steps(run)
        _check_step(returned, 30 * DAY, suspect=False)
        assert returned["detected"] == "returned", returned
        assert "retention_suspended" not in table.logs[-1]
        _check_times(table.found())
        _check_kept(table)
    finally:
        table.lane.stop()


async def _step_then_stop(tmp_path: Path, broker: MosquittoProcess, collector: Collector) -> None:
    """A step the running watch had no time to see (it looks once a second): the clock, just
    confirmed, set 100 days ahead and the table stopped at once. ``power_off`` must not take the
    stepped clock for the truth: its reading was the next start's reference, so no step was
    found and that start's retention deleted the rotated file of three days before as 100 days
    old."""
    table = Table("CS", tmp_path / "stop", broker)
    await asyncio.to_thread(table.lane.start_sim, ["--seed", "27"])

    async def confirm_step_and_stop(t: Table) -> None:
        await _confirm(t, collector, broker, signed=False)
        set_clock_offset(t.offset_file, "+100d")

    try:
        await table.run("-3d", collector)
        await table.run("+0", collector, during=confirm_step_and_stop)
        assert len(list_archives(table.lane.journal)) >= 1  # the -3 d run, rotated at 0
        run = await table.run("+100d", collector)
        steps = [*_steps(table.runs[1]), *_steps(run)]
        assert [round(s["step_s"] / DAY) for s in steps] == [3, 100], steps
        _check_step(steps[-1], 100 * DAY)
        assert "retention_suspended" in table.logs[-1]
        _check_times(table.found())
        _check_kept(table)
    finally:
        table.lane.stop()


async def test_clock_steps_across_restarts_never_delete_a_young_journal(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    collector = Collector(mosquitto.host, mosquitto.port)
    await collector.connect()
    try:
        async with asyncio.TaskGroup() as group:
            group.create_task(_forward(tmp_path, mosquitto, collector))
            group.create_task(_back(tmp_path, mosquitto, collector))
            group.create_task(_step_then_stop(tmp_path, mosquitto, collector))
    finally:
        await collector.disconnect()
