"""An engine that raises: every event is journaled, the round is held for a supervisor.

The engines are real; the one stand-in is :class:`Brittle`, a real baccarat engine with one
defect planted (it raises on a chosen card, as the baccarat engine raised on ``JK`` when a table
was configured with jokers): an engine defect is what this path exists for, and the real engines
have none we know of. The property test at the end drives every catalog game's real engine with
random well-formed events through the runner.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    FaultCleared,
    RoundOpen,
    TableEvent,
    parse_event,
)
from tablectl.controller.core.outcomes import EngineOutput
from tablectl.controller.engines import build_engine
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.journal import Journal
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.service.runner.hold import ENGINE_DEVICE, ENGINE_ERROR
from tests.support.clocks import WallClock

TS = "2026-11-30T10:00:00.000000Z"


class Brittle:
    """A real baccarat engine that raises ``error`` on ``card`` (a planted defect)."""

    def __init__(self, card: str, error: type[Exception]) -> None:
        self.inner = build_engine("T1", "baccarat", {}, source="test")
        self.card = card
        self.error = error

    @property
    def game(self) -> str:
        return self.inner.game

    @property
    def current_round(self) -> str | None:
        return self.inner.current_round

    @property
    def phase(self) -> str:
        return self.inner.phase

    @property
    def faults(self) -> frozenset[str]:
        return self.inner.faults

    def apply(self, event: TableEvent) -> list[EngineOutput]:
        if isinstance(event, Card) and event.card == self.card:
            raise self.error(f"cannot play {event.card}")
        return self.inner.apply(event)

    def snapshot(self) -> dict[str, Any]:
        return self.inner.snapshot()

    def conceals(self, event: TableEvent) -> bool:
        return self.inner.conceals(event)


def _runner(journal: Journal, engine: Any, **extra: Any) -> TableRunner:
    return TableRunner(
        table_id="T1",
        engine=engine,
        journal=journal,
        clock=WallClock(lambda: 1_764_496_800.0),
        insecure_commands=True,
        **extra,
    )


def _cards(*cards: str) -> list[TableEvent]:
    return [Card(ts=TS, device="shoe", card=c) for c in cards]


def _opening() -> list[TableEvent]:
    return [RoundOpen(ts=TS, device="shoe"), BetsClosed(ts=TS, device="shoe")]


@pytest.mark.parametrize("error", [ValueError, AttributeError, KeyError, ZeroDivisionError])
async def test_an_engine_error_journals_every_event_and_holds_the_round(
    tmp_path: Path, error: type[Exception]
) -> None:
    """The reproduction of issue 25 #3: ``JK 9H 2C`` then ``3D 4S 5S``; before, the cards after
    the joker vanished (``ValueError``) or the table process died (any other type)."""
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, Brittle("JK", error))
        events = [*_opening(), *_cards("JK", "9H", "2C"), *_cards("3D", "4S", "5S")]
        await runner.step(events[:5])  # the joker's batch
        await runner.step(events[5:])  # the next batch, held
        records = list(journal.records())
        kinds = [(r.type, r.get("card") or r.get("code")) for r in records]
        assert kinds == [
            ("round_open", None),
            ("bets_closed", None),
            ("fault", ENGINE_ERROR),  # before the card the engine could not take
            ("card", "JK"),
            ("card", "9H"),
            ("card", "2C"),
            ("card", "3D"),
            ("card", "4S"),
            ("card", "5S"),
        ]
        fault = records[2]
        assert fault["device"] == ENGINE_DEVICE
        assert fault["detail"].startswith(f"{error.__name__}: ")
        assert "cannot play JK" in fault["detail"]
        assert runner.latches.journaled[ENGINE_DEVICE] == {ENGINE_ERROR}
        assert runner.state.engine_errors == 1
        # Held: no outcome, the round still in play, however many cards come.
        assert runner.engine.current_round is not None
        assert not [r for r in records if r.type == "outcome"]
        assert journal.verify() == len(records)


async def test_a_held_round_waits_for_a_supervisor_void_and_clear(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, Brittle("JK", ValueError))
        await runner.step([*_opening(), *_cards("JK", "9H")])
        held = runner.engine.current_round
        assert held is not None
        task = asyncio.create_task(runner.run())
        try:
            reply = await runner.commands.command(
                "event", b'{"event": {"type": "card", "card": "2C"}}'
            )
            assert reply["ok"], reply  # a dealer's manual card is journaled too (and held)
            void = f'{{"reason": "misdeal", "round": "{held}"}}'.encode()
            reply = await runner.commands.command("void", void)
            assert reply["ok"], reply
            assert [(o["status"], o["reason"]) for o in reply["outputs"]] == [("void", "misdeal")]
            assert runner.latches.journaled[ENGINE_DEVICE] == {ENGINE_ERROR}  # voided, still held
            clear = f'{{"code": "{ENGINE_ERROR}", "device": "{ENGINE_DEVICE}"}}'.encode()
            reply = await runner.commands.command("clear_fault", clear)
            assert reply["ok"], reply
            assert runner.latches.journaled[ENGINE_DEVICE] == set()
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        # Playing again: a natural for the player.
        await runner.step([*_opening(), *_cards("4S", "2C", "4D", "3S")])
        outcomes = [r for r in journal.records() if r.type == "outcome"]
        assert [o["status"] for o in outcomes] == ["void", "settled"]
        assert outcomes[-1]["result"]["winner"] == "player"


async def test_a_replay_holds_where_play_held(tmp_path: Path) -> None:
    """Recovery feeds the engine exactly what play fed it: the fault stands before the event."""
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, Brittle("JK", KeyError))
        await runner.step([*_opening(), *_cards("JK", "9H", "2C", "3D")])
        live = runner.engine.snapshot()
    with Journal(path, "T1") as journal:
        # A fixed engine (an upgrade) replays the same journal: still held, same state.
        again = _runner(journal, build_engine("T1", "baccarat", {}, source="test"))
        again.restart.recover()
        assert again.engine.snapshot() == live
        assert again.latches.journaled[ENGINE_DEVICE] == {ENGINE_ERROR}
        assert [r.type for r in journal.records()].count("outcome") == 0


async def test_the_running_table_survives_an_engine_error_of_any_type(tmp_path: Path) -> None:
    """Through :meth:`TableRunner.run` (its task group): an ``AttributeError`` used to end it."""
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, Brittle("JK", AttributeError))
        task = asyncio.create_task(runner.run())
        try:
            for event in [*_opening(), *_cards("JK", "9H")]:
                await runner.queue.submit(event)
            assert not task.done()
            assert [r.type for r in journal.records()].count("card") == 2
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


async def test_a_void_for_a_held_round_from_before_the_error_is_not_lost_on_clear(
    tmp_path: Path,
) -> None:
    """Clearing without a void: the engine goes on from before the error (a supervisor's call),
    and the events it never saw stay in the journal, each with its seq."""
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        runner = _runner(journal, Brittle("JK", ValueError))
        await runner.step([*_opening(), *_cards("JK")])
        await runner.step([FaultCleared(ts=TS, device=ENGINE_DEVICE, code=ENGINE_ERROR)])
        assert runner.latches.journaled[ENGINE_DEVICE] == set()
        await runner.step(_cards("4S", "2C", "4D", "3S"))
        outcomes = [r for r in journal.records() if r.type == "outcome"]
        assert [o["result"]["winner"] for o in outcomes] == ["player"]
        assert [r.get("card") for r in journal.records() if r.type == "card"] == [
            "JK",
            *("4S", "2C", "4D", "3S"),
        ]


# --- every catalog game, random well-formed events, through the runner ------------------------

_RANKS = "A23456789TJQK"
_SUITS = "SHDC"
_CARDS = [r + s for r in _RANKS for s in _SUITS] + ["JK", "JK1", "JK2"]

_EVENTS: st.SearchStrategy[dict[str, Any]] = st.one_of(
    st.just({"type": "round_open"}),
    st.just({"type": "bets_closed"}),
    st.just({"type": "ball_launched", "rotor_direction": "cw"}),
    st.builds(
        lambda n, r: {"type": "winning_number", "number": n, "revolutions": r},
        st.integers(0, 36) | st.just("00"),
        st.integers(0, 12),
    ),
    st.builds(lambda c: {"type": "card", "card": c}, st.sampled_from(_CARDS)),
    st.just({"type": "cut_card"}),
    st.just({"type": "shuffle_started"}),
    st.builds(lambda n: {"type": "shuffle_completed", "cards": n}, st.integers(0, 520)),
    st.builds(lambda b: {"type": "ball_drawn", "ball": b}, st.integers(1, 90)),
    st.builds(lambda i: {"type": "segment", "index": i, "revolutions": 3}, st.integers(0, 60)),
    st.just({"type": "wheel_spin", "direction": "cw"}),
    st.builds(lambda on: {"type": "mixing", "on": on}, st.booleans()),
    st.builds(
        lambda d: {"type": "dice", "dice": d}, st.lists(st.integers(1, 6), min_size=1, max_size=3)
    ),
    st.just({"type": "roll_started"}),
    st.builds(lambda n: {"type": "beads", "count": n}, st.integers(1, 200)),
    st.builds(
        lambda box, action: {"type": "decision", "box": box, "action": action},
        st.integers(1, 7),
        st.sampled_from(["hit", "stand", "double", "fold", "play", "higher", "war"]),
    ),
    st.builds(
        lambda kind: {"type": "deal_error", "kind": kind},
        st.sampled_from(["card_exposed", "wrong_count"]),
    ),
    st.just({"type": "confirm"}),
    st.just({"type": "void", "reason": "supervisor"}),
    st.builds(
        lambda code: {"type": "fault", "code": code, "device": "dev"},
        st.sampled_from(["jam", "door_open"]),
    ),
    st.builds(
        lambda code: {"type": "fault_cleared", "code": code, "device": "dev"},
        st.sampled_from(["jam", "door_open", ENGINE_ERROR]),
    ),
    st.just({"type": "shoe_empty"}),
    st.just({"type": "shoe_removed"}),
    st.just({"type": "no_spin", "reason": "misfire"}),
    st.builds(lambda r: {"type": "read_error", "reason": r}, st.sampled_from(["unreadable"])),
)


@pytest.mark.parametrize("game", sorted(CATALOG))
@settings(
    max_examples=8,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(_EVENTS, min_size=1, max_size=40))
def test_every_event_of_every_game_is_journaled_whatever_the_engine_makes_of_it(
    game: str, tmp_path_factory: pytest.TempPathFactory, bodies: list[dict[str, Any]]
) -> None:
    events = [parse_event({**body, "ts": TS}) for body in bodies]
    path = tmp_path_factory.mktemp(game) / "j.sqlite"

    async def play() -> None:
        with Journal(path, "T1") as journal:
            runner = _runner(journal, build_engine("T1", game, {}, source="test"))
            # Two batches: a group commit and the next one (which may be held).
            half = len(events) // 2
            await runner.step(events[:half])
            await runner.step(events[half:])
            journaled = [r for r in journal.records() if r.get("device") != ENGINE_DEVICE]
            got = [r.type for r in journaled if r.type not in ("outcome", "verdict", "shoe_end")]
            assert got == [e.type for e in events]
            assert journal.verify() == journal.last_seq

    asyncio.run(play())


async def test_a_replay_that_raises_where_play_did_not_holds_from_there_once(
    tmp_path: Path,
) -> None:
    """An upgrade's engine that raises on an event the old one took: the start does not die; the
    table is held from that record on and the fault journaled once, not at every start."""
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, build_engine("T1", "baccarat", {}, source="test"))
        await runner.step([*_opening(), *_cards("4S", "9H", "4D", "3S")])
        assert [r.type for r in journal.records()].count("outcome") == 1
    for start in range(2):
        with Journal(path, "T1") as journal:
            again = _runner(journal, Brittle("9H", LookupError))
            again.restart.recover()
            faults = [r for r in journal.records() if r.get("device") == ENGINE_DEVICE]
            assert len(faults) == 1, start
            assert "LookupError: cannot play 9H" in faults[0]["detail"]
            assert again.latches.journaled[ENGINE_DEVICE] == {ENGINE_ERROR}
            assert again.engine.current_round is not None  # held mid-round, no second outcome
            assert journal.verify() == journal.last_seq
