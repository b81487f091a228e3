"""The runner's step (journal → engine → journal), recovery from the journal, and commands.

In-process with a real SQLite journal; no broker (the publisher is exercised in integration).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import (
    Fault,
    RoundOpen,
    TableEvent,
)
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal
from tablectl.controller.service.clock import ClockWatch
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.service.runner.ticks import Ticks
from tests.support.clocks import WallClock
from tests.support.events import roulette_spin

TS = "2026-11-30T10:00:00.000000Z"


def _runner(journal: Journal) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "roulette", {}, source="test"),
        journal=journal,
        clock=WallClock(lambda: 1_764_496_800.0),
        insecure_commands=True,  # a lab table: these tests send unsigned commands
    )


def _types(journal: Journal) -> list[str]:
    return [r["type"] for r in journal.records()]


def test_every_event_is_journaled_before_its_outcome(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        for event in roulette_spin(17):
            runner.committer.handle(event)
        assert _types(journal) == [
            "round_open",
            "ball_launched",
            "bets_closed",
            "winning_number",
            "outcome",
        ]
        outcome = list(journal.records())[-1]
        assert outcome["round"] == "T1-000001"
        assert outcome["result"]["number"] == 17
        assert journal.verify() == 5


def test_restart_continues_rounds_and_seq(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        for event in (
            roulette_spin(1) + roulette_spin(2)[:2]
        ):  # the second round is mid-spin at the "crash"
            runner.committer.handle(event)
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        assert runner.restart.recover() == 6
        assert runner.engine.current_round == "T1-000002"
        for event in roulette_spin(2)[2:] + roulette_spin(3):
            runner.committer.handle(event)
        outcomes = [r for r in journal.records() if r["type"] == "outcome"]
        assert [(o["round"], o["result"]["number"]) for o in outcomes] == [
            ("T1-000001", 1),
            ("T1-000002", 2),
            ("T1-000003", 3),
        ]
        seqs = [r["seq"] for r in journal.records()]
        assert seqs == list(range(1, len(seqs) + 1))
        journal.verify()


def test_recovery_journals_an_outcome_the_crash_left_out(tmp_path: Path) -> None:
    # A crash after "winning_number journaled" and before "outcome journaled".
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        journal.append([_event_record(e) for e in roulette_spin(23)])
    with Journal(path, "T1") as journal:
        _runner(journal).restart.recover()
        last = list(journal.records())[-1]
        assert last["type"] == "outcome"
        assert (last["round"], last["status"], last["result"]["number"]) == (
            "T1-000001",
            "settled",
            23,
        )
    with Journal(path, "T1") as journal:  # and only once
        _runner(journal).restart.recover()
        assert _types(journal).count("outcome") == 1


def _event_record(event: TableEvent) -> dict[str, Any]:
    from tablectl.controller.core.events import event_to_dict  # noqa: PLC0415

    return event_to_dict(event)


def test_latched_faults_survive_a_restart(tmp_path: Path) -> None:
    # Regulatory R18: a fault persists across power cycles until cleared.
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        _runner(journal).committer.handle(Fault(ts=TS, device="wheel", code="ss2_fault_5"))
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        runner.restart.recover()
        assert runner.latches.journaled["wheel"] == {"ss2_fault_5"}
        records = runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
        assert records[-1]["type"] == "verdict"
        assert records[-1]["code"] == "fault_latched"


async def test_void_command_voids_the_round_and_is_journaled_as_manual(tmp_path: Path) -> None:
    import asyncio  # noqa: PLC0415

    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        task = asyncio.create_task(runner.run())
        try:
            runner.committer.handle(RoundOpen(ts=TS, device="wheel"))
            reply = await runner.commands.command(
                "void",
                json.dumps(
                    {"id": "c1", "reason": "foreign_object", "by": "pit", "round": "T1-000001"}
                ).encode(),
            )
        finally:
            task.cancel()
        assert reply["ok"] is True
        assert reply["id"] == "c1"
        assert [(o["status"], o["reason"]) for o in reply["outputs"]] == [
            ("void", "foreign_object")
        ]
        void = next(r for r in journal.records() if r["type"] == "void")
        assert void["manual"] is True
        assert void["by"] == "pit"


@pytest.mark.parametrize(
    ("verb", "payload", "error"),
    [
        ("void", b"{not json", "payload is not JSON"),
        ("void", b"[1, 2]", "payload must be a JSON object"),
        ("void", b'{"id": 1}', "void needs a non-empty string 'reason'"),
        ("void", b'{"reason": "x", "by": 5}', "'by' must be a string"),
        ("event", b'{"event": {"type": "card"}}', "bad card event: card: Field required"),
        ("event", b'{"event": 3}', "event needs an 'event' object"),
        # An unhashable type was a TypeError ("internal error") until hypothesis found it.
        ("event", b'{"event": {"type": []}}', "unknown event type []"),
        ("event", b'{"event": {"type": {"a": 1}}}', "unknown event type {'a': 1}"),
        ("clear_fault", b'{"device": "wheel", "code": "x"}', "fault 'x' is not latched"),
        ("reboot", b"{}", "unknown command 'reboot'"),
    ],
)
async def test_bad_commands_get_a_specific_error_and_change_nothing(
    tmp_path: Path, verb: str, payload: bytes, error: str
) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        reply = await runner.commands.command(verb, payload)
        assert reply["ok"] is False
        assert error in reply["error"]
        assert list(journal.records()) == []  # a refusal changes nothing and is not one record
        # Its verdict is the audit trail (R19): counted, journaled with its window's record.
        runner.refusals.flush(force=True)
        [record] = journal.records()
        assert record["type"] == "commands_refused"
        assert record["count"] == 1
        [entry] = record["codes"].values()
        assert error in entry["first"]["reason"]
        assert entry["first"]["verb"] == verb


async def test_manual_event_command(tmp_path: Path) -> None:
    import asyncio  # noqa: PLC0415

    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal)
        task = asyncio.create_task(runner.run())
        try:
            for event in roulette_spin(4)[:3]:
                runner.committer.handle(event)
            # The ball sensor failed: the dealer keys the number in (contracts §4.4 cmd/event).
            body = {"id": 7, "event": {"type": "winning_number", "number": 4}}
            reply = await runner.commands.command("event", json.dumps(body).encode())
        finally:
            task.cancel()
        assert reply["ok"] is True
        assert reply["outputs"][0]["result"]["number"] == 4
        manual = [r for r in journal.records() if r.get("manual")]
        assert [r["type"] for r in manual] == ["winning_number"]


def test_recovery_after_a_batch_whose_conclusions_were_not_journaled(tmp_path: Path) -> None:
    # Journals written before one commit per batch (events first, then their conclusions in a
    # second commit) may hold several events without their outcomes. All must be recovered.
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        journal.append([_event_record(e) for e in roulette_spin(5) + roulette_spin(6)])
    with Journal(path, "T1") as journal:
        _runner(journal).restart.recover()
        outcomes = [r for r in journal.records() if r["type"] == "outcome"]
        assert [(o["round"], o["result"]["number"]) for o in outcomes] == [
            ("T1-000001", 5),
            ("T1-000002", 6),
        ]


async def test_a_tables_periodic_work_is_one_scheduler_each_job_when_due() -> None:
    seen: list[str] = []

    async def every_50ms() -> float | None:
        seen.append("fast")
        return 0.05 if seen.count("fast") < 3 else None  # then done

    async def once() -> None:
        seen.append("once")

    async def never() -> None:
        raise AssertionError("not scheduled")

    ticks = Ticks()
    ticks.add("fast", 0.05, every_50ms)
    ticks.add("once", 0.075, once)
    ticks.add("off", None, never)
    assert ticks.names == ["fast", "once"]
    await asyncio.wait_for(ticks.run(), timeout=5)  # returns once every job is done
    assert sorted(seen) == ["fast", "fast", "fast", "once"]
    assert seen[0] == "fast"


def test_the_runner_schedules_what_its_table_needs(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = TableRunner(
            table_id="T1",
            engine=build_engine("T1", "roulette", {}, source="test"),
            journal=journal,
            clock=WallClock(lambda: 1_764_496_800.0),
            clock_watch=ClockWatch(max_step=5.0),
        )
        # No gate before power_on, no betting timer for a wheel (mode "device").
        assert runner.ticks().names == ["outage", "refusals", "clock"]
