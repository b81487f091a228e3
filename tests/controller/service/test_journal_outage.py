"""The runner under a journal outage, for every engine family (tablectl.controller.service.outage).

The journal is real (SQLite, fsync'd) and only its ``append`` is gated: a real disk cannot be
made to refuse one chosen transaction, so :class:`GatedJournal` raises the error a full disk
gives (``JournalWriteError``) while ``full`` is set. The end-to-end case on a real full tmpfs,
with a simulated wheel and a broker, is tests/integration/test_journal_outage.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import Fault, RoundOpen, TableEvent, parse_event
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Committed, Journal
from tablectl.controller.service.runner import TableRunner
from tests.support.clocks import WallClock
from tests.support.journals import GatedJournal

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"
CLOCK = 1_764_496_800.0

STREAMS = [
    pytest.param("roulette", {}, "roulette-rounds.jsonl", id="roulette"),
    pytest.param("baccarat", {"decks": 8}, "baccarat-shoe.jsonl", id="baccarat"),
    pytest.param("dragon_tiger", {}, "dragon-tiger.jsonl", id="dragon-tiger"),
    pytest.param("lucky7", {}, "lucky7.jsonl", id="draw"),
    pytest.param("dream_catcher", {}, "dream-catcher.jsonl", id="wheel"),
]


class Sinks:
    """The runner's outputs (``TableOutputs``), recorded: alarms, status extras, ``state``."""

    key: bytes | None = None

    def __init__(self) -> None:
        self.alarms: list[dict[str, Any]] = []
        self.status: list[dict[str, Any]] = []
        self.state: list[dict[str, Any]] = []

    def committed(self, committed: Committed, withheld: Collection[int] = ()) -> None:
        pass

    def set_view(self, suffix: str, payload: Mapping[str, Any]) -> None:
        if suffix == "state":
            self.state.append(dict(payload))

    def alarm(self, payload: Mapping[str, Any]) -> None:
        self.alarms.append(dict(payload))

    def set_status(self, extra: Mapping[str, Any]) -> None:
        self.status.append(dict(extra))


def _runner(journal: Journal, game: str, rules: dict[str, Any], sinks: Sinks) -> TableRunner:
    clock = iter(CLOCK + i for i in range(1_000_000))
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", game, rules, source="test"),
        journal=journal,
        clock=WallClock(lambda: next(clock)),
        outputs=sinks,
        insecure_commands=True,
    )


def _events(name: str) -> list[TableEvent]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


async def _feed(runner: TableRunner, events: Sequence[TableEvent]) -> None:
    for event in events:
        await runner.step([event])  # the queue's step, without the loop


@pytest.mark.parametrize(("game", "rules", "stream"), STREAMS)
async def test_an_outage_mid_round_voids_it_and_the_next_rounds_play(
    tmp_path: Path, game: str, rules: dict[str, Any], stream: str
) -> None:
    events = _events(stream)
    opens = [i for i, e in enumerate(events) if isinstance(e, RoundOpen)]
    assert len(opens) >= 3, "the stream needs rounds after the outage"
    cut = opens[1] + 2  # two events into the second round
    sinks = Sinks()
    with GatedJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, game, rules, sinks)
        await _feed(runner, events[:cut])
        in_play = runner.engine.current_round
        assert in_play is not None
        before = journal.last_seq

        journal.full = True
        rest = events[cut:]
        lost = rest[: opens[2] - cut]  # the rest of this round: dealt while the disk was full
        await _feed(runner, lost)
        assert runner.state.outage is not None
        assert journal.last_seq == before  # nothing journaled, so nothing acted on
        assert runner.engine.current_round == in_play
        assert sinks.alarms[-1]["code"] == "journal_unavailable"
        assert sinks.alarms[-1]["type"] == "fault"
        assert sinks.status[-1]["locked"] is True
        assert sinks.status[-1]["faults"] == ["journal_unavailable"]
        assert sinks.state[-1]["locked"] is True
        assert sinks.state[-1]["journal"]["available"] is False
        assert sinks.state[-1]["journal"]["events_not_journaled"] == len(lost)
        reply = await runner.commands.command("void", b'{"id": 1, "reason": "foreign_object"}')
        assert (reply["ok"], reply["code"]) == (False, "journal_unavailable")

        journal.full = False
        runner._resume()  # what the watch task does every 0.5 s
        assert runner.state.outage is None
        new = list(journal.records(before))
        assert [r["type"] for r in new] == ["void", "outcome", "fault", "fault_cleared"]
        void, outcome, fault, clear = new
        assert (void["reason"], void["by"]) == ("journal_outage", "controller")
        assert (outcome["round"], outcome["status"], outcome["reason"]) == (
            in_play,
            "void",
            "journal_outage",
        )
        assert fault["code"] == clear["code"] == "journal_unavailable"
        assert fault["device"] == "journal"
        assert fault["since"] == clear["since"] == sinks.alarms[0]["ts"] < clear["ts"]
        assert f"{len(lost)} event(s) not journaled" in fault["detail"]
        assert sinks.alarms[-1]["type"] == "fault_cleared"
        assert sinks.status[-1] == {"locked": False, "faults": []}
        assert runner.engine.current_round is None
        assert not runner.latches.journaled.get("journal")

        # The next rounds play normally.
        await _feed(runner, rest[len(lost) :])
        after = list(journal.records(clear["seq"]))
        assert any(r["type"] == "outcome" and r["status"] == "settled" for r in after), after
        assert journal.verify() == journal.last_seq


async def test_a_refused_batch_journals_neither_the_event_nor_its_outcome(tmp_path: Path) -> None:
    """The event that decides a round and its outcome are one commit: a full disk at that event
    journals neither, the engine is rolled back to before it, and the round is voided
    (``journal_outage``) when writing resumes — never settled on an event the journal lacks."""
    events = _events("roulette-rounds.jsonl")
    decided = next(i for i, e in enumerate(events) if e.type == "winning_number")
    sinks = Sinks()
    with GatedJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, "roulette", {}, sinks)
        await _feed(runner, events[:decided])
        before, engine_before = journal.last_seq, runner.engine.snapshot()
        journal.full = True
        await _feed(runner, [events[decided]])
        assert runner.state.outage is not None
        assert journal.last_seq == before
        assert runner.engine.snapshot() == engine_before
        journal.full = False
        runner._resume()
        records = list(journal.records(before))
        assert [r["type"] for r in records] == ["void", "outcome", "fault", "fault_cleared"]
        assert (records[1]["status"], records[1]["reason"]) == ("void", "journal_outage")
        assert journal.verify() == journal.last_seq
        # A restart rebuilds the same and journals nothing more (nothing was owed).
        last = journal.last_seq
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        again = _runner(journal, "roulette", {}, Sinks())
        again.restart.recover()
        assert journal.last_seq == last


async def test_a_device_fault_during_the_outage_is_latched_afterwards(tmp_path: Path) -> None:
    """R18: a fault must persist; the one that arrived while the journal was out is kept."""
    sinks = Sinks()
    with GatedJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, "roulette", {}, sinks)
        journal.full = True
        await _feed(runner, [Fault(device="wheel", code="ss2_fault_5")])
        journal.full = False
        runner._resume()
        types = [(r["type"], r.get("code")) for r in journal.records()]
        assert types == [
            ("fault", "journal_unavailable"),
            ("fault_cleared", "journal_unavailable"),
            ("fault", "ss2_fault_5"),
        ]
        assert runner.latches.journaled["wheel"] == {"ss2_fault_5"}


async def test_the_watch_ends_the_outage_without_an_event(tmp_path: Path) -> None:
    sinks = Sinks()
    with GatedJournal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, "roulette", {}, sinks)
        journal.full = True
        await _feed(runner, [RoundOpen(device="wheel")])
        assert runner.state.outage is not None
        journal.full = False
        watch = asyncio.create_task(runner.ticks().run())  # the probe: every 0.5 s
        try:
            async with asyncio.timeout(2):
                while runner.state.outage is not None:  # noqa: ASYNC110
                    await asyncio.sleep(0.01)
        finally:
            watch.cancel()
        # Idle when it began (the round_open was never journaled): nothing to void.
        assert [r["type"] for r in journal.records()] == ["fault", "fault_cleared"]
