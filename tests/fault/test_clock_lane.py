"""The clock-step lane: the wall clock stepped forward and back, while a table runs and across
restarts (issue 25, defect 2).

Two roulette lanes (``simulate ss2`` at 50× and ``tablectl run``, as in every lane), each
controller under libfaketime with its wall-clock offset in a file the lane rewrites
(:func:`tests.fault.harness.faketime_env`; ``CLOCK_BOOTTIME`` stays real, as on a machine whose
clock someone sets). The injections, in turn on each lane, by steps of ±1 day, +100 days, −30
days, ±10 minutes, back to the course the clock had before it became suspect, or a drift of 45 s
that is no step (the bound, ``[clock] max_step_seconds``, is 120 s):

* the clock stepped while the table runs;
* stepped while the controller is down, after an orderly stop (SIGTERM) or a kill -9;
* stepped, and at once an orderly stop or a kill -9 (the step the running watch had no time to
  see: found by ``power_off`` or at the next start, never taken as the truth).

A model of the clock watch (:class:`ClockModel`) says what each injection must journal: one
``clock_step`` (``suspect: true``, of the step's size), the clock's return (``suspect: false``),
or nothing; and a supervisor's ``cmd/clock_confirm`` now and then ends a suspicion
(``clock_confirmed``). After every injection: the lane's invariants (:func:`check_lane`: nothing
lost, nothing divergent, every outcome published once per seq), each step on ``alarms``, the
retained ``state`` suspect exactly while the model is, journal times that go back only at a
``clock_step``, nothing ever retired by retention (rotation by days happens: nothing is 90 days
old in real time), and a new settled round. At the end the project's verifier takes the whole set
of files.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.journal.files import list_archives
from tablectl.controller.journal.retention import retired_log_path, verify_chain
from tests.fault.conftest import scaled
from tests.fault.harness import (
    PREFIX,
    Collector,
    FaultReport,
    Lane,
    alive,
    check_journal,
    check_lane,
    faketime_env,
    faketime_library,
    power_ons,
    progress,
    read_journal,
    records,
    set_clock_offset,
    wait_power_on,
)
from tests.support.mosquitto import MosquittoProcess

pytestmark = [
    pytest.mark.fault,
    pytest.mark.broker,
    pytest.mark.timeout(240),
    pytest.mark.skipif(faketime_library() is None, reason="needs libfaketime (apt faketime)"),
]

CLOCK_LANES = 2
CLOCK_STEPS_PER_LANE = 12

DAY = 86_400.0
BOUND = 120.0
"""``[clock] max_step_seconds`` (the default)."""
SLACK = 30.0
"""Seconds a journaled step may differ from the offsets' difference (a busy machine's start)."""
DRIFT = 45.0
"""A change of the clock within the bound: no step. Forward only: a clock set back by less than
the bound holds journal times at the newest one until it catches up (they never go back without a
``clock_step``), and the power records' readings then stand on that time — the watch measures
from the journal's newest time, as it should, but this model would have to follow it."""
LOW, HIGH = -60 * DAY, 250 * DAY
"""The offsets the lane keeps within."""

RUNNING = "clock stepped while the table runs"
DOWN = "clock stepped while down (after SIGTERM)"
KILLED = "clock stepped while down (after kill -9)"
THEN_STOP = "clock stepped, then SIGTERM at once"
THEN_KILL = "clock stepped, then kill -9 at once"
_KINDS = (RUNNING, DOWN, THEN_KILL, RUNNING, KILLED, THEN_STOP)


@dataclass
class ClockModel:
    """What the table's clock watch (tablectl.controller.service.clock) must conclude.

    ``offset``: the wall clock's offset now; ``course``: the offset of the watch's reference (the
    newest reading it trusts: set at a start, a stop, a step, a return, a confirmation);
    ``trusted``: while suspect, the offset of the course before the first unconfirmed step.
    """

    offset: float = 0.0
    course: float = 0.0
    trusted: float | None = None
    step: float = 0.0
    """The last :meth:`moved`'s distance from the course: a journaled ``step_s``."""

    @property
    def suspect(self) -> bool:
        return self.trusted is not None

    def moved(self, offset: float) -> str | None:
        """The clock is at ``offset`` now: ``"step"``, ``"returned"`` or ``None``."""
        self.offset = offset
        self.step = offset - self.course
        if abs(self.step) <= BOUND:
            return None
        course, self.course = self.course, offset
        if self.trusted is not None and abs(offset - self.trusted) <= BOUND:
            self.trusted = None
            return "returned"
        if self.trusted is None:
            self.trusted = course
        return "step"

    def rebased(self) -> None:
        """A reading within the bound (a start, an orderly stop) becomes the watch's course."""
        self.course = self.offset

    def confirmed(self) -> None:
        self.trusted = None
        self.course = self.offset

    def next_offset(self, rng: random.Random) -> float:
        """A step forward or back (or a drift within the bound, or the clock's return)."""
        choices = [DAY, -DAY, 100 * DAY, -30 * DAY, 600.0, -600.0]
        if self.trusted is not None:
            choices += [self.trusted - self.offset] * 2
        offset = self.offset + rng.choice(choices)
        if rng.random() < 0.12:
            offset = self.course + DRIFT
        if not LOW <= offset <= HIGH:
            offset = self.offset - 30 * DAY if offset > HIGH else self.offset + DAY
        return offset


class ClockLane:
    """A :class:`Lane` whose controller runs under libfaketime, and its :class:`ClockModel`."""

    def __init__(self, name: str, workdir: Path, broker: MosquittoProcess) -> None:
        self.offset_file = workdir / "faketime"
        workdir.mkdir(parents=True, exist_ok=True)
        set_clock_offset(self.offset_file, 0)
        self.lane = Lane(name, workdir, broker.url, env=faketime_env(self.offset_file))
        self.model = ClockModel()
        self.broker = broker

    def set(self, offset: float) -> None:
        set_clock_offset(self.offset_file, offset)


def _clock_records(lane: Lane, after: int) -> list[dict[str, Any]]:
    return [
        r
        for r in records(read_journal(lane.journal))
        if r["seq"] > after and r["type"] in ("clock_step", "clock_confirmed")
    ]


async def _inject(clock: ClockLane, kind: str, offset: float) -> str | None:
    """One injection; returns what the model says it must journal."""
    lane, model = clock.lane, clock.model
    before = power_ons(lane)
    if kind == RUNNING:
        clock.set(offset)
        return model.moved(offset)
    if kind in (DOWN, KILLED):
        if kind == DOWN:
            await lane.stop_ctl()
            model.rebased()  # power_off's reading
        else:
            lane.kill_ctl(signal.SIGKILL)
        clock.set(offset)
        lane.start_ctl()
        expected = model.moved(offset)
    else:
        clock.set(offset)
        if kind == THEN_STOP:
            await lane.stop_ctl()
        else:
            lane.kill_ctl(signal.SIGKILL)
        # Found by power_off or at the next start, whichever: one record either way.
        expected = model.moved(offset)
        lane.start_ctl()
    await wait_power_on(lane, before)
    model.rebased()  # power_on's reading
    return expected


async def _expect(
    clock: ClockLane,
    expected: str | None,
    step: float,
    after: int,
    mark: int,
    collector: Collector,
    report: FaultReport,
) -> dict[str, Any] | None:
    """The journal says what the model says: one ``clock_step`` of ``step`` seconds (suspect
    or the return), on ``alarms``, or none; and the retained state agrees. Returns the step."""
    lane = clock.lane
    table = lane.table
    record: dict[str, Any] | None = None
    if expected is None:
        await asyncio.sleep(2.5)  # the running watch looks once a second
        found = _clock_records(lane, after)
        assert not found, f"{table}: a drift of {step:+.0f} s journaled {found}"
        report.check("a clock change within the bound journals nothing")
    else:
        deadline = time.monotonic() + 10
        while not (found := _clock_records(lane, after)):
            assert time.monotonic() < deadline, (
                f"{table}: no clock_step for a step of {step:+.0f} s ({expected})\n"
                f"{lane.log_tail()}"
            )
            await asyncio.sleep(0.1)
        await asyncio.sleep(0.3)
        found = _clock_records(lane, after)
        assert len(found) == 1, f"{table}: one step of {step:+.0f} s journaled as {found}"
        (record,) = found
        assert record["type"] == "clock_step", record
        assert record["suspect"] is (expected == "step"), (expected, record)
        if expected == "returned":
            assert record["detected"] == "returned", record
        assert abs(record["step_s"] - step) < SLACK, (step, record)
        before, after_ts = parse_ts_seconds(record["before"]), parse_ts_seconds(record["after"])
        assert before is not None
        assert after_ts is not None
        assert abs(after_ts - before - record["step_s"]) < 1.0, record
        report.check("clock step journaled (clock_step: before, after, step_s)")
        _stays_back(lane, record, report)

        def alarmed() -> bool:
            return any(
                t == "alarms" and json.loads(d).get("seq") == record["seq"]
                for t, d in collector.other[table][mark:]
            )

        await collector.wait(alarmed, 10, f"{table}: clock_step seq {record['seq']} on alarms")
        report.check("clock step on alarms")

    def state_agrees() -> bool:
        views = [json.loads(d) for t, d in collector.other[table][mark:] if t == "state"]
        return bool(views) and ("clock" in views[-1]) is clock.model.suspect

    await collector.wait(state_agrees, 10, f"{table}: state suspect={clock.model.suspect}")
    report.check("retained state: clock suspect exactly while unconfirmed")
    return record


async def _confirm(clock: ClockLane, collector: Collector, report: FaultReport) -> None:
    """A supervisor confirms the clock (a lab table: unsigned)."""
    lane = clock.lane
    table = lane.table
    after = read_journal(lane.journal)[-1].seq
    mark = len(collector.other[table])
    request = {"id": f"confirm-{after}", "by": "FM-0042"}
    async with aiomqtt.Client(clock.broker.host, clock.broker.port) as client:
        await client.publish(f"{PREFIX}/{table}/cmd/clock_confirm", json.dumps(request), qos=1)

    def reply() -> dict[str, Any] | None:
        for t, d in collector.other[table][mark:]:
            if t == "cmd/clock_confirm/reply" and json.loads(d).get("id") == request["id"]:
                answer: dict[str, Any] = json.loads(d)
                return answer
        return None

    await collector.wait(lambda: reply() is not None, 10, f"{table}: clock_confirm reply")
    answer = reply()
    assert answer is not None
    assert answer["ok"] is True, answer
    found = _clock_records(lane, after)
    assert [r["type"] for r in found] == ["clock_confirmed"], found
    clock.model.confirmed()
    report.check("a supervisor's clock_confirm ends the suspicion (clock_confirmed)")


def _stays_back(lane: Lane, step: dict[str, Any], report: FaultReport) -> None:
    """After a step back (or the clock's return from ahead), journal times follow the stepped
    clock: no record after it is stamped with the time stepped away from (an event read before
    the step and journaled after its record would hold every later time there: not_before).
    Checked before the lane's next injection, so no later step is in between."""
    if step["step_s"] >= 0:
        return
    at = parse_ts_seconds(step["ts"]) or 0
    bound = min(10 * 60, -step["step_s"] / 2)  # well past the seconds the lane plays on
    ahead = [
        (r["seq"], r["type"], r["ts"])
        for r in records(read_journal(lane.journal))
        if r["seq"] > step["seq"] and (parse_ts_seconds(r["ts"]) or 0) - at > bound
    ]
    assert not ahead, f"{lane.table}: after the step back at seq {step['seq']}: {ahead[:5]}"
    report.check("after a step back, journal times follow the stepped clock")


def _check_clock_journal(lane: Lane, report: FaultReport) -> None:
    """Times go back only at a ``clock_step``; nothing retired; one chain across the files."""
    found = list(records(read_journal(lane.journal)))
    back = [
        (prev["seq"], record["seq"], record["type"])
        for prev, record in itertools.pairwise(found)
        if (parse_ts_seconds(record["ts"]) or 0) < (parse_ts_seconds(prev["ts"]) or 0)
    ]
    assert all(kind == "clock_step" for _, _, kind in back), f"{lane.table}: {back}"
    report.check("journal times go back only at a clock_step")
    retired = retired_log_path(lane.journal)
    assert not retired.exists(), f"{lane.table}: retention deleted {retired.read_text()}"
    report.check("retention deleted nothing younger than 90 days of real time")


async def _clock_steps(
    clock: ClockLane, collector: Collector, report: FaultReport, n: int, seed: int
) -> None:
    rng = random.Random(seed)
    lane, model = clock.lane, clock.model
    await asyncio.to_thread(lane.start_sim, ["--seed", str(seed)])
    lane.start_ctl()
    await progress(lane, collector, report)
    kinds = itertools.cycle(_KINDS[seed % len(_KINDS) :] + _KINDS[: seed % len(_KINDS)])
    for _ in range(n):
        kind = next(kinds)
        offset = model.next_offset(rng)
        after = read_journal(lane.journal)[-1].seq
        mark = len(collector.other[lane.table])
        expected = await _inject(clock, kind, offset)
        report.inject(kind)
        step = await _expect(clock, expected, model.step, after, mark, collector, report)
        alive(lane, report)
        await check_lane(lane, collector, report)
        _check_clock_journal(lane, report)
        await progress(lane, collector, report)
        if step is not None:
            _stays_back(lane, step, report)
        if model.suspect and rng.random() < 0.3:
            await _confirm(clock, collector, report)
    if model.suspect:
        await _confirm(clock, collector, report)
    await check_lane(lane, collector, report)
    await lane.stop_ctl()
    rows = read_journal(lane.journal)
    check_journal(rows, report)
    _check_clock_journal(lane, report)
    found = list(records(rows))
    assert found[-1]["type"] == "power_off", f"{lane.table}: last record {found[-1]['type']}"
    (chain,) = verify_chain([lane.journal.parent])
    assert (chain.first_seq, chain.last_seq, chain.retired_through) == (1, len(rows), 0), chain
    report.check("tablectl's own verifier accepts the rotated files and the live one")
    rotated = len(list_archives(lane.journal))
    report.observe("journal files rotated by a stepped clock (none retired)", rotated)
    steps = [r for r in found if r["type"] == "clock_step"]
    report.observe("clock_step records journaled", len(steps))
    report.observe("of which the clock's return", sum(not r["suspect"] for r in steps))


async def test_clock_steps(
    tmp_path: Path, mosquitto: MosquittoProcess, collector: Collector, fault_report: FaultReport
) -> None:
    started = time.monotonic()
    clocks = [ClockLane(f"C{i}", tmp_path / f"c{i}", mosquitto) for i in range(CLOCK_LANES)]
    try:
        async with asyncio.TaskGroup() as group:
            for i, clock in enumerate(clocks):
                group.create_task(
                    _clock_steps(
                        clock, collector, fault_report, scaled(CLOCK_STEPS_PER_LANE), 1300 + i
                    )
                )
    finally:
        for clock in clocks:
            clock.lane.stop()
    fault_report.seconds["clock step"] = time.monotonic() - started
