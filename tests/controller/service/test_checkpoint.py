"""Recovery checkpoints: a restart from a checkpoint rebuilds exactly what a full replay does.

In-process with real SQLite journals and real checkpoint files; the state under test is the
engines' own (no mocks). The comparison is always against a full replay of the same journal.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import json
import os
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import Fault, TableEvent, parse_event
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal, canonical_json
from tablectl.controller.service.checkpoint import (
    Checkpoints,
    RecoveryState,
    checkpoint_path,
    fingerprint,
)
from tablectl.controller.service.recovery import JournalScan
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"
CLOCK = 1_764_496_800.0

# (game, rules, normalized event stream): every engine family with state across rounds.
STREAMS = [
    pytest.param("roulette", {}, "roulette-rounds.jsonl", id="roulette"),
    pytest.param("lightning_roulette", {}, "lightning-roulette.jsonl", id="roulette-rng"),
    pytest.param("double_ball_roulette", {}, "double-ball-roulette.jsonl", id="roulette-2-balls"),
    pytest.param("baccarat", {"decks": 8}, "baccarat-shoe.jsonl", id="baccarat-shoe"),
    pytest.param("dragon_tiger", {}, "dragon-tiger.jsonl", id="dragon-tiger"),
    pytest.param("lucky7", {}, "lucky7.jsonl", id="draw"),
    pytest.param("dream_catcher", {}, "dream-catcher.jsonl", id="wheel"),
    pytest.param("cash_or_crash", {}, "cash-or-crash.jsonl", id="draw-ladder"),
    pytest.param("fan_tan", {}, "fan-tan.jsonl", id="beads"),
    pytest.param("poker_room_holdem", {}, "poker-room.jsonl", id="poker-room"),
    pytest.param("mega_wheel", {}, "mega-wheel.jsonl", id="wheel-rng-overlay"),
    pytest.param("lightning_baccarat", {}, "lightning-baccarat.jsonl", id="cards-rng-overlay"),
    pytest.param(
        "dragon_tiger", {"variant": "war_of_bets"}, "war-of-bets.jsonl", id="cards-bet-window"
    ),
    pytest.param("rock_paper_scissors", {}, "rock-paper-scissors.jsonl", id="cards-symbols"),
]


def _events(name: str) -> list[TableEvent]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


def _runner(
    journal: Journal, game: str, rules: dict[str, Any], *, every: int = 10_000, store: bool = True
) -> TableRunner:
    checkpoints = None
    if store:
        checkpoints = Checkpoints(
            journal.path, "T1", fingerprint(table="T1", game=game, rules=rules)
        )
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", game, rules, source="test"),
        journal=journal,
        clock=ManualClock(CLOCK),
        checkpoints=checkpoints,
        checkpoint_every=every,
    )


def _state(runner: TableRunner) -> tuple[Any, ...]:
    return (
        runner.engine.snapshot(),
        runner.engine.current_round,
        runner.state.scan,
        runner.latches.journaled,
        runner.state.scan.previous,
    )


def _full_replay(path: Path, game: str, rules: dict[str, Any]) -> tuple[Any, ...]:
    """What a restart without any checkpoint rebuilds (a copy of the journal: it appends)."""
    copy = path.with_name("full-" + path.name)
    copy.write_bytes(path.read_bytes())
    with Journal(copy, "T1") as journal:
        runner = _runner(journal, game, rules, store=False)
        runner.restart.recover()
        return _state(runner)


@pytest.mark.parametrize(("game", "rules", "stream"), STREAMS)
def test_a_checkpoint_in_play_then_a_crash_rebuilds_what_a_full_replay_does(
    tmp_path: Path, game: str, rules: dict[str, Any], stream: str
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, game, rules, every=7)
        # The live path one event at a time, periodic checkpoints included.
        asyncio.run(_step_each(runner, _events(stream)))
        # Records after the last checkpoint whatever the stream's length (handle() alone never
        # checkpoints), then the "crash": no power_off.
        runner.committer.handle(Fault(ts="2026-11-30T11:00:00.000000Z", device="x", code="jam"))
        written = runner.restart.checkpoints.seq if runner.restart.checkpoints else 0
        total = journal.last_seq
    assert 0 < written < total  # the crash (no power_off) leaves records after the checkpoint
    expected = _full_replay(path, game, rules)
    with Journal(path, "T1") as journal:
        runner = _runner(journal, game, rules)
        replayed = runner.restart.recover()
        assert replayed <= total - written  # only the tail was replayed
        assert _state(runner) == expected
        assert journal.last_seq == total  # nothing re-derived that was not already journaled


@pytest.mark.parametrize(("game", "rules", "stream"), STREAMS)
def test_an_orderly_stop_checkpoints_so_the_next_start_replays_nothing(
    tmp_path: Path, game: str, rules: dict[str, Any], stream: str
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, game, rules)
        runner.restart.recover()
        runner.restart.power_on()
        for event in _events(stream):
            runner.committer.handle(event)
        runner.restart.power_off("shutdown")
        last = journal.last_seq
    expected = _full_replay(path, game, rules)
    with Journal(path, "T1") as journal:
        runner = _runner(journal, game, rules)
        assert runner.restart.recover() == 0
        assert _state(runner) == expected
        assert runner.state.scan.previous == "power_off"
        assert runner.state.scan.power_ons == 1
        assert journal.last_seq == last


def test_latched_faults_survive_a_restart_from_a_checkpoint(tmp_path: Path) -> None:
    """R18: a fault stays latched until cleared, checkpoint or not."""
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", {})
        runner.committer.handle(
            Fault(ts="2026-11-30T10:00:00.000000Z", device="wheel", code="sensor")
        )
        runner.restart.power_off("shutdown")
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", {})
        assert runner.restart.recover() == 0
        assert runner.latches.journaled == {"wheel": {"sensor"}}


def test_a_long_replay_checkpoints_as_it_goes(tmp_path: Path) -> None:
    """A first start after an upgrade replays in full, saving progress on the way: a start that
    systemd kills half-way does not begin again from the first record."""
    path = tmp_path / "j.sqlite"
    events = _events("roulette-rounds.jsonl") * 3
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", {}, store=False)
        for event in events:
            runner.committer.handle(event)
    saved: list[int] = []
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", {}, every=10)
        assert runner.restart.checkpoints is not None
        original = runner.restart.checkpoints.save

        def spy(seq: int, record_hash: str, state: RecoveryState) -> bool:
            saved.append(seq)
            return original(seq, record_hash, state)

        runner.restart.checkpoints.save = spy  # type: ignore[method-assign]
        runner.restart.recover()
        assert len(saved) >= 3
        assert saved == sorted(saved)
        assert saved[-1] == journal.last_seq


# --- when a checkpoint is not used ------------------------------------------------------------


def _stopped_table(path: Path) -> int:
    """A roulette journal with a checkpoint at its end; returns its number of events."""
    events = _events("roulette-rounds.jsonl")
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", {})
        for event in events:
            runner.committer.handle(event)
        runner.restart.power_off("shutdown")
    return len(events)


def _restart(path: Path, rules: dict[str, Any] | None = None) -> tuple[int, tuple[Any, ...]]:
    with Journal(path, "T1") as journal:
        runner = _runner(journal, "roulette", rules or {})
        return runner.restart.recover(), _state(runner)


def _rewrite(
    path: Path, header: dict[str, Any] | None = None, payload: bytes | None = None
) -> None:
    file = checkpoint_path(path)
    head, _, body = file.read_bytes().partition(b"\n")
    fields = json.loads(head)
    if payload is not None:
        body = payload
        fields["sha256"] = hashlib.sha256(body).hexdigest()
    fields.update(header or {})
    file.write_bytes(canonical_json(fields).encode() + b"\n" + body)


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: checkpoint_path(p).write_bytes(checkpoint_path(p).read_bytes()[:-40]), "digest"),
        (lambda p: checkpoint_path(p).write_bytes(b"garbage"), "no header"),
        (lambda p: checkpoint_path(p).write_bytes(b"{not json\n..."), "unreadable"),
        (lambda p: _rewrite(p, {"hash": "0" * 64}), "another history"),
        (lambda p: _rewrite(p, {"seq": 10_000}), "past the journal's end"),
        (lambda p: _rewrite(p, {"table": "T2"}), "table"),
        (lambda p: _rewrite(p, {"fingerprint": "f" * 64}), "other code or rules"),
        (lambda p: _rewrite(p, {"schema": 99}), "unknown format"),
        (lambda p: _rewrite(p, payload=pickle.dumps({"not": "a state"})), "not a recovery state"),
    ],
    ids=[
        "torn",
        "garbage",
        "bad-header",
        "other-chain",
        "past-end",
        "other-table",
        "other-code",
        "schema",
        "wrong-object",
    ],
)
def test_a_damaged_or_foreign_checkpoint_means_a_full_replay(
    tmp_path: Path, damage: Any, reason: str
) -> None:
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    expected = _full_replay(path, "roulette", {})
    damage(path)
    assert reason in _ignored(path)
    replayed, state = _restart(path)
    assert replayed == total  # every event again
    assert state == expected


def _ignored(path: Path) -> str:
    """Why a fresh load of the checkpoint does not use it (what ``checkpoint_ignored`` logs)."""
    with Journal(path, "T1") as journal:
        store = Checkpoints(path, "T1", fingerprint(table="T1", game="roulette", rules={}))
        assert store.load(journal) is None
        return store.ignored or ""


def test_changed_rules_replay_in_full(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    replayed, _ = _restart(path, {"min_revolutions": 5})
    assert replayed == total


def _stack_global(module: str, name: str, arg: str) -> bytes:
    """A protocol-4 pickle calling ``module``.``name``(``arg``) (STACK_GLOBAL, then REDUCE)."""

    def text(value: str) -> bytes:
        raw = value.encode()
        return b"\x8c" + bytes([len(raw)]) + raw  # SHORT_BINUNICODE

    return b"\x80\x04" + text(module) + text(name) + b"\x93" + text(arg) + b"\x85R."


class _Planted:
    """A pickle that would run a shell command if its globals were resolved freely."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize(
    "planted",
    [
        lambda marker: pickle.dumps(_Planted(marker)),
        # getattr reaching a function's globals: only game methods may be looked up.
        lambda _: (
            b"cbuiltins\ngetattr\n(ccontroller.engines.baccarat\n_new_coup\nS'__globals__'\ntR."
        ),
        # A class outside the game packages (the journal opens files).
        lambda _: pickle.dumps(Journal),
        # A dotted name through an allowed module's imports (protocol 4 resolves those).
        lambda marker: _stack_global(
            "tablectl.controller.service.checkpoint", "os.popen", f"touch {marker}"
        ),
        # A function imported into an allowed module, not defined there.
        lambda marker: _stack_global(
            "tablectl.controller.service.checkpoint", "canonical_json", str(marker)
        ),
    ],
    ids=["os.system", "getattr-globals", "journal-class", "dotted-import", "imported-function"],
)
def test_a_planted_pickle_runs_nothing_and_is_ignored(tmp_path: Path, planted: Any) -> None:
    marker = tmp_path / "pwned"
    payload = planted(marker)
    path = tmp_path / "j.sqlite"
    total = _stopped_table(path)
    _rewrite(path, payload=payload)
    reason = _ignored(path)
    assert "not allowed in a checkpoint" in reason or "not a game method" in reason
    replayed, _ = _restart(path)
    assert replayed == total
    assert not marker.exists()


def test_the_checkpoint_is_written_atomically(tmp_path: Path) -> None:
    """A leftover temp file from a crash mid-write is not read; the last good one is."""
    path = tmp_path / "j.sqlite"
    _stopped_table(path)
    leftover = checkpoint_path(path).with_name(checkpoint_path(path).name + ".tmp")
    leftover.write_bytes(b"half a checkpoint")
    replayed, _ = _restart(path)
    assert replayed == 0


def test_an_unwritable_checkpoint_only_makes_the_next_start_slower(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    checkpoint_path(path).mkdir()  # cannot be replaced by a file
    total = _stopped_table(path)
    replayed, _ = _restart(path)
    assert replayed == total


def test_the_state_round_trips_through_the_restricted_unpickler() -> None:
    """Every game engine (all 38 keys) pickles and loads back through the allowlist."""
    from tablectl.controller.engines import ENGINES  # noqa: PLC0415
    from tablectl.controller.service.checkpoint import _GameStateUnpickler  # noqa: PLC0415

    for game in sorted(ENGINES):
        engine = build_engine("T1", game, {}, source="test")
        state = RecoveryState(engine, JournalScan(), {"shoe": {"jam"}})
        loaded = _GameStateUnpickler(io.BytesIO(pickle.dumps(state))).load()
        assert loaded.engine.snapshot() == engine.snapshot(), game
        assert type(loaded.engine) is type(engine), game


async def _step_each(runner: TableRunner, events: Sequence[TableEvent]) -> None:
    for event in events:
        await runner.step([event])
