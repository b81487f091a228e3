"""The dice round engine: rounds, re-rolls with bets standing, faults, stray results, the RNG's
order, and craps' point carried across rounds — in play, through a checkpoint's pickle and through
a journal replay."""

from __future__ import annotations

import asyncio
import io
import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    Confirm,
    Dice,
    Fault,
    FaultCleared,
    RngDraw,
    RngPick,
    RollInvalid,
    RollStarted,
    RoundOpen,
    TableEvent,
    Void,
    parse_event,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.core.time import format_ts
from tablectl.controller.engines import build_engine, load_rules
from tablectl.controller.engines.dice import DiceEngine
from tablectl.controller.journal import Journal
from tablectl.controller.service.checkpoint import (
    Checkpoints,
    RecoveryState,
    _GameStateUnpickler,
    fingerprint,
)
from tablectl.controller.service.recovery import JournalScan
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock
from tests.support.replay import DATA, replay, table_config

TABLE = "DT-01"
T0 = 1_796_040_000.0  # 2026-11-30T12:00:00Z


class Clock:
    """Event times: each call moves on by ``seconds`` (the engine reads time only from events)."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self, seconds: float = 1.0) -> str:
        self.now += seconds
        return format_ts(self.now)


def make(game: str, **overrides: Any) -> DiceEngine:
    return DiceEngine(TABLE, load_rules(game, overrides), game=game)


def feed(engine: DiceEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def summary(outputs: Sequence[EngineOutput]) -> list[tuple[str, ...]]:
    return [
        (o.status, str(o.reason)) if isinstance(o, Outcome) else ("verdict", o.code)
        for o in outputs
        if isinstance(o, Outcome | Verdict)
    ]


def outcomes(outputs: Sequence[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def result(outputs: Sequence[EngineOutput]) -> dict[str, Any]:
    (outcome,) = outcomes(outputs)
    assert outcome.result is not None
    return outcome.result


def opened(clock: Clock) -> list[TableEvent]:
    return [RoundOpen(ts=clock(5)), BetsClosed(ts=clock(20))]


def roll(clock: Clock, dice: Sequence[int], tumble: float = 6.0, **kw: Any) -> list[TableEvent]:
    return [RollStarted(ts=clock(1)), Dice(dice=tuple(dice), ts=clock(tumble), **kw)]


def picks(*pairs: tuple[int | str, int | None]) -> RngDraw:
    return RngDraw(numbers=tuple(RngPick(v, m) for v, m in pairs))


# -- rounds ---------------------------------------------------------------------------------------


def test_a_sic_bo_round() -> None:
    clock, engine = Clock(), make("sic_bo")
    out = feed(engine, [*opened(clock), *roll(clock, [2, 5, 5], tumble=7.5)])
    (outcome,) = outcomes(out)
    assert (outcome.round, outcome.game, outcome.status) == (f"{TABLE}-000001", "sic_bo", "settled")
    assert outcome.result == {
        "dice": [2, 5, 5], "total": 12, "triple": False, "double": [5], "big": True,
        "small": False, "odd": False, "rerolls": 0, "tumble_seconds": 7.5,
    }  # fmt: skip
    assert outcome.ts == format_ts(clock.now)
    assert engine.phase == "idle"
    assert engine.snapshot()["last"] == {"round": outcome.round, "dice": [2, 5, 5], "total": 12}


def test_a_dice_duel_reader_reporting_blue_first() -> None:
    clock, engine = Clock(), make("dice_duel")
    out = feed(engine, [*opened(clock), *roll(clock, [3, 6], colors=("blue", "red"))])
    assert result(out)["red"] == 6
    assert result(out)["winner"] == "red"


def test_a_reroll_keeps_the_round_and_its_bets() -> None:
    # seed-001 §7 [GAP]: a cocked die gives no result; the industry rolls again, bets standing.
    clock, engine = Clock(), make("sic_bo")
    out = feed(engine, [*opened(clock), RollStarted(ts=clock(1))])
    out += engine.apply(RollInvalid(code="die_cocked", detail="on the rim", ts=clock(7)))
    (verdict,) = out
    assert isinstance(verdict, Verdict)
    assert (verdict.code, verdict.round) == ("die_cocked", f"{TABLE}-000001")
    assert verdict.data | {"message": None} == {
        "event": "roll_invalid", "phase": "rolling", "detail": "on the rim", "reroll": True,
        "rerolls": 1, "message": None,
    }  # fmt: skip
    assert engine.phase == "closed"
    out = feed(engine, roll(clock, [1, 3, 6]))
    assert result(out)["rerolls"] == 1
    assert outcomes(out)[0].round == f"{TABLE}-000001"


def test_a_short_tumble_is_rolled_again_never_a_result() -> None:
    clock, engine = Clock(), make("sic_bo")  # min_tumble_seconds = 3
    out = feed(engine, [*opened(clock), *roll(clock, [6, 6, 2], tumble=1.2)])
    assert summary(out) == [("verdict", "short_tumble")]
    assert out[0].data["tumble_seconds"] == 1.2  # type: ignore[union-attr]
    out = feed(engine, roll(clock, [3, 3, 5], tumble=7.5))
    assert (result(out)["dice"], result(out)["rerolls"]) == ([3, 3, 5], 1)


def test_a_result_without_a_roll_started() -> None:
    clock = Clock()
    shaker = make("sic_bo")  # require_roll_started: a shaker reports its start
    out = feed(shaker, [*opened(clock), Dice(dice=(1, 2, 3), ts=clock(8))])
    assert summary(out) == [("verdict", "roll_not_seen")]
    thrown = make("craps")  # a hand throw may be seen only at rest: not timed
    out = feed(thrown, [*opened(clock), Dice(dice=(3, 4), ts=clock(8))])
    assert result(out)["tumble_seconds"] is None


def test_on_roll_invalid_void_voids_with_the_readers_code() -> None:
    clock, engine = Clock(), make("craps", on_roll_invalid="void")
    out = feed(engine, [*opened(clock), RollStarted(ts=clock()), RollInvalid(code="no_wall_hit")])
    assert summary(out) == [("void", "no_wall_hit")]


def test_a_result_before_bets_closed_voids_the_round() -> None:
    clock, engine = Clock(), make("sic_bo")
    out = feed(engine, [RoundOpen(ts=clock()), RollStarted(ts=clock())])
    assert summary(out) == [("verdict", "roll_before_bets_closed")]
    out = engine.apply(Dice(dice=(1, 2, 3), ts=clock()))
    assert summary(out) == [("void", "result_before_bets_closed")]
    assert outcomes(out)[0].result == {"dice": [1, 2, 3], "total": 6}


def test_refused_reads_then_the_right_one() -> None:
    clock, engine = Clock(), make("dice_duel", min_confidence=0.9)
    out = feed(engine, [*opened(clock), RollStarted(ts=clock())])
    out += engine.apply(Dice(dice=(1, 2, 3), ts=clock(2)))
    out += engine.apply(Dice(dice=(1, 2), colors=("red", "green"), ts=clock()))
    out += engine.apply(Dice(dice=(1, 2), colors=("red", "blue"), confidence=0.5, ts=clock()))
    out += engine.apply(Dice(dice=(1, 2), colors=("red", "blue"), confidence=0.95, ts=clock()))
    assert summary(out) == [
        ("verdict", "wrong_dice_count"),
        ("verdict", "wrong_colors"),
        ("verdict", "low_confidence"),
        ("settled", "None"),
    ]
    assert result(out)["winner"] == "blue"


# -- faults and supervisors ------------------------------------------------------------------------


def test_g1_g3_a_fault_after_bets_closed_voids_the_round() -> None:
    clock, engine = Clock(), make("lightning_dice")
    out = feed(engine, [*opened(clock), picks((11, 100)), RollStarted(ts=clock())])
    out += engine.apply(Fault(code="tower_jam", ts=clock()))
    assert summary(out) == [("void", "device_fault")]
    assert outcomes(out)[0].result == {"lightning": [{"value": 11, "multiplier": 100}]}
    assert engine.faults == {"tower_jam"}
    # R14: no round opens while the fault is latched.
    assert summary(engine.apply(RoundOpen(ts=clock()))) == [("verdict", "fault_latched")]
    engine.apply(FaultCleared(code="tower_jam", ts=clock()))
    assert engine.apply(RoundOpen(ts=clock())) == []


def test_r14_a_fault_while_betting_latches_and_bets_stay_open() -> None:
    clock, engine = Clock(), make("sic_bo")
    out = feed(engine, [RoundOpen(ts=clock()), Fault(code="dome_open"), BetsClosed(ts=clock())])
    assert summary(out) == [("verdict", "fault_latched")]
    assert engine.phase == "open"


def test_c42_on_fault_decide_holds_and_confirm_judges_the_dice_read_meanwhile() -> None:
    clock, engine = Clock(), make("craps", on_fault="decide")
    out = feed(engine, [*opened(clock), RollStarted(ts=clock()), Fault(code="camera_lag")])
    assert summary(out) == [("verdict", "device_fault")]
    assert engine.snapshot()["held"] == "device_fault"
    out = feed(engine, [Dice(dice=(2, 2), ts=clock(2)), RoundOpen(ts=clock())])
    assert summary(out) == [("verdict", "decision_pending")]
    out = engine.apply(Confirm(ts=clock()))
    assert (result(out)["decision"], result(out)["tumble_seconds"]) == ("point_set", 2.0)
    # A supervisor's void of a held round: the dice so far go into the void's result.
    engine.apply(FaultCleared(code="camera_lag"))
    out = feed(engine, [*opened(clock), Fault(code="camera_lag2"), Dice(dice=(6, 1))])
    out += engine.apply(Void(reason="", ts=clock()))
    assert summary(out)[-1] == ("void", "supervisor_void")
    assert outcomes(out)[0].result == {
        "dice": [6, 1], "total": 7, "phase": "point", "point": 4, "puck": "on",
    }  # fmt: skip


def test_g3_on_fault_reroll_rolls_again_once_the_fault_is_cleared() -> None:
    # A shaker's motion fault mid-shake: no result was taken, so it cannot affect one (G3).
    clock, engine = Clock(), make("dice_duel", on_fault="reroll")
    out = feed(engine, [*opened(clock), RollStarted(ts=clock()), Fault(code="motion", ts=clock())])
    assert summary(out) == [("verdict", "device_fault")]
    assert out[0].data | {"phase": None} == {  # type: ignore[union-attr]
        "event": "fault", "phase": None, "fault": "motion", "reroll": True, "rerolls": 1,
    }  # fmt: skip
    # R14: nothing counts until the device reports the fault cleared.
    out = feed(engine, roll(clock, [5, 2], colors=("red", "blue")))
    assert summary(out) == [("verdict", "fault_latched"), ("verdict", "fault_latched")]
    engine.apply(FaultCleared(code="motion", ts=clock()))
    out = feed(engine, roll(clock, [5, 2], tumble=2.0, colors=("red", "blue")))
    assert (result(out)["winner"], result(out)["rerolls"]) == ("red", 1)


def test_confirm_with_nothing_held_and_stray_events_are_refused() -> None:
    engine = make("craps")
    assert summary(engine.apply(Confirm())) == [("verdict", "unexpected_event")]
    assert summary(engine.apply(RollInvalid(code="die_cocked"))) == [
        ("verdict", "unexpected_event")
    ]
    assert summary(engine.apply(Card(card="KH"))) == [("verdict", "not_for_this_game")]


# -- stray results ---------------------------------------------------------------------------------


def test_a_repeated_result_after_the_round_is_a_duplicate_else_outside_the_round() -> None:
    clock, engine = Clock(), make("sic_bo")
    feed(engine, [*opened(clock), *roll(clock, [2, 5, 5])])
    out = engine.apply(Dice(dice=(2, 5, 5), ts=clock()))
    assert summary(out) == [("verdict", "duplicate_result")]
    assert out[0].data["last_round"] == f"{TABLE}-000001"  # type: ignore[union-attr]
    assert summary(engine.apply(Dice(dice=(1, 5, 5)))) == [("verdict", "result_outside_round")]
    # A roll between rounds: the same dice again are a new (stray) result, not a repeat.
    engine.apply(RollStarted(ts=clock()))
    assert summary(engine.apply(Dice(dice=(2, 5, 5)))) == [("verdict", "result_outside_round")]


def test_a_repeated_dice_duel_result_in_another_colour_order_is_a_duplicate() -> None:
    clock, engine = Clock(), make("dice_duel")
    feed(engine, [*opened(clock), *roll(clock, [6, 1], colors=("red", "blue"))])
    out = engine.apply(Dice(dice=(1, 6), colors=("blue", "red"), ts=clock()))
    assert summary(out) == [("verdict", "duplicate_result")]
    assert out[0].data["dice"] == [6, 1]  # type: ignore[union-attr]


# -- lightning ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            [RoundOpen(), picks((11, 100)), BetsClosed(), RollStarted(), picks((11, 100))],
            [("verdict", "rng_before_bets_closed"), ("verdict", "rng_after_roll")],
            id="L3069-after-betting-before-the-drop",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), picks((11, 100)), picks((12, 100))],
            [("verdict", "rng_duplicate")],
            id="L3069-once-a-round",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), picks((19, 100)), picks(("KH", 2)), picks((5, 2), (5, 3))],
            [
                ("verdict", "rng_value_out_of_range"),
                ("verdict", "rng_value_out_of_range"),
                ("verdict", "rng_pick_invalid"),
            ],
            id="L3069-totals-3-18-each-once",
        ),
        pytest.param([picks((11, 100))], [("verdict", "unexpected_event")], id="no-round-yet"),
    ],
)
def test_rng_order(events: list[TableEvent], expected: list[tuple[str, ...]]) -> None:
    assert summary(feed(make("lightning_dice", require_roll_started=False), events)) == expected


def test_rng_after_the_result_and_at_a_game_without_rng() -> None:
    clock, engine = Clock(), make("lightning_dice")
    feed(engine, [*opened(clock), picks((11, 100)), *roll(clock, [1, 2, 3])])
    assert summary(engine.apply(picks((11, 100)))) == [("verdict", "rng_after_result")]
    sic_bo = make("sic_bo")
    assert summary(feed(sic_bo, [*opened(clock), picks((11, 100))])) == [
        ("verdict", "rng_not_expected")
    ]


def test_the_lightning_numbers_stand_through_a_reroll() -> None:
    clock, engine = Clock(), make("lightning_dice")
    out = feed(engine, [*opened(clock), picks((11, 100), (4, 500)), *roll(clock, [5, 5, 1], 0.5)])
    assert summary(out) == [("verdict", "short_tumble")]
    assert engine.snapshot()["lightning"] == [
        {"value": 11, "multiplier": 100},
        {"value": 4, "multiplier": 500},
    ]
    out = feed(engine, roll(clock, [1, 1, 2], 3.0))
    assert (result(out)["total"], result(out)["multiplier"]) == (4, 500)


def test_a_lightning_result_without_lightning_numbers() -> None:
    clock, engine = Clock(), make("lightning_dice")
    out = feed(engine, [*opened(clock), *roll(clock, [1, 2, 6])])
    assert summary(out) == [("verdict", "rng_missing"), ("void", "rng_missing")]
    assert outcomes(out)[0].result == {"dice": [1, 2, 6], "total": 9}
    held = make("lightning_dice", on_rng_missing="hold")
    out = feed(held, [*opened(clock), *roll(clock, [1, 2, 6]), Dice(dice=(6, 6, 6))])
    assert summary(out) == [("verdict", "rng_missing"), ("verdict", "decision_pending")]
    assert held.phase == "held"
    out = held.apply(Confirm(ts=clock()))  # G4: settled at the base odds
    assert (result(out)["dice"], result(out)["lightning"], result(out)["multiplier"]) == (
        [1, 2, 6],
        [],
        None,
    )


# -- craps: the point across rounds ----------------------------------------------------------------


def craps_rolls(engine: DiceEngine, clock: Clock, *rolls: Sequence[int]) -> list[dict[str, Any]]:
    return [result(feed(engine, [*opened(clock), *roll(clock, dice, 2.0)])) for dice in rolls]


def test_l2757_the_point_is_carried_from_roll_to_roll_and_a_void_leaves_it() -> None:
    clock, engine = Clock(), make("craps")
    first, second = craps_rolls(engine, clock, [4, 5], [3, 3])
    assert (first["decision"], first["puck"], first["next_point"]) == ("point_set", "off", 9)
    assert (second["point"], second["puck"], second["decision"]) == (9, "on", None)
    assert engine.snapshot()["craps"] == {"phase": "point", "point": 9, "puck": "on"}
    # A fault void, a supervisor void and an abandoned round: none of them is a roll.
    feed(
        engine,
        [*opened(clock), RollStarted(ts=clock()), Fault(code="cam"), FaultCleared(code="cam")],
    )
    feed(engine, [*opened(clock), Void(reason="dice_left_table"), RoundOpen(), RoundOpen()])
    engine.apply(Void(reason="end"))
    (third,) = craps_rolls(engine, clock, [6, 1])
    assert (third["point"], third["decision"], third["next_phase"]) == (9, "seven_out", "come_out")
    assert engine.snapshot()["craps"]["puck"] == "off"


def test_the_craps_point_survives_a_checkpoints_pickle() -> None:
    clock, engine = Clock(), make("craps")
    craps_rolls(engine, clock, [5, 5])
    feed(engine, [*opened(clock), RollStarted(ts=clock())])  # a roll under way
    state = RecoveryState(engine, JournalScan(), {})
    loaded = _GameStateUnpickler(io.BytesIO(pickle.dumps(state))).load().engine
    assert loaded.snapshot() == engine.snapshot()
    assert loaded.craps.point == 10
    ending = Dice(dice=(4, 6), ts=clock(2))
    assert loaded.apply(ending) == engine.apply(ending)
    assert loaded.craps.point is None


def _events(name: str) -> list[TableEvent]:
    lines = (DATA / name).read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


def _runner(journal: Journal, game: str, *, every: int = 10_000, store: bool = True) -> TableRunner:
    checkpoints = None
    if store:
        checkpoints = Checkpoints(journal.path, "T1", fingerprint(table="T1", game=game, rules={}))
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", game, {}, source="test"),
        journal=journal,
        clock=ManualClock(T0),
        checkpoints=checkpoints,
        checkpoint_every=every,
    )


def test_the_craps_point_is_rebuilt_by_replaying_the_journal(tmp_path: Path) -> None:
    events = _events("dice-craps.jsonl")
    cut = next(i for i, e in enumerate(events) if isinstance(e, Fault))  # point 9 is on
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        live = _runner(journal, "craps")
        for event in events[:cut]:
            live.committer.handle(event)
        expected = live.engine.snapshot()
    assert expected["craps"] == {"phase": "point", "point": 9, "puck": "on"}
    with Journal(tmp_path / "j.sqlite", "T1") as journal:
        restarted = _runner(journal, "craps", store=False)  # the full replay, no checkpoint
        assert restarted.restart.recover() > 0
        assert restarted.engine.snapshot() == expected
        later = [restarted.committer.handle(e) for e in events[cut:]]
    ends = [
        (r["status"], r["result"].get("decision"))
        for rs in later
        for r in rs
        if r.type == "outcome"
    ]
    assert ends == [
        ("void", None),
        ("settled", None),
        ("settled", "seven_out"),
        ("settled", "natural"),
    ]


@pytest.mark.parametrize(
    ("game", "stream"),
    [
        ("sic_bo", "dice-sic-bo.jsonl"),
        ("craps", "dice-craps.jsonl"),
        ("dice_duel", "dice-duel.jsonl"),
        ("lightning_dice", "dice-lightning.jsonl"),
    ],
)
def test_a_checkpoint_in_play_then_a_crash_rebuilds_what_a_full_replay_does(
    tmp_path: Path, game: str, stream: str
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "T1") as journal:
        runner = _runner(journal, game, every=7)
        # The live path one event at a time, periodic checkpoints included.
        asyncio.run(_step_each(runner, _events(stream)))
        written = runner.restart.checkpoints.seq if runner.restart.checkpoints else 0
        total = journal.last_seq
    copy = tmp_path / "full.sqlite"
    copy.write_bytes(path.read_bytes())
    with Journal(copy, "T1") as journal:
        full = _runner(journal, game, store=False)
        full.restart.recover()
    with Journal(path, "T1") as journal:
        restarted = _runner(journal, game)
        assert restarted.restart.recover() <= total - written
        assert restarted.engine.snapshot() == full.engine.snapshot()


# -- properties -----------------------------------------------------------------------------------

event_strategy = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(RollStarted),
    st.builds(Dice, dice=st.lists(st.integers(1, 6), min_size=1, max_size=4).map(tuple)),
    st.builds(RollInvalid, code=st.sampled_from(["die_cocked", "no_wall_hit"])),
    st.builds(
        RngDraw,
        numbers=st.lists(
            st.builds(RngPick, value=st.integers(1, 20), multiplier=st.integers(1, 9)),
            min_size=1,
            max_size=3,
        ).map(tuple),
    ),
    st.builds(Confirm),
    st.builds(Void, reason=st.just("x")),
    st.builds(Fault, code=st.just("cam")),
    st.builds(FaultCleared, code=st.just("cam")),
)


@settings(max_examples=300)
@given(
    st.sampled_from(["sic_bo", "craps", "dice_duel", "lightning_dice"]),
    st.sampled_from(["void", "decide", "reroll"]),
    st.lists(event_strategy, max_size=60),
)
def test_any_sequence_never_raises_and_every_result_is_the_games(
    game: str, on_fault: str, events: list[TableEvent]
) -> None:
    engine = make(game, on_fault=on_fault, require_roll_started=False)
    ended: list[str] = []
    point: int | None = None
    for event in events:
        for output in engine.apply(event):
            if not isinstance(output, Outcome):
                continue
            assert output.round not in ended
            ended.append(output.round)
            if output.status != "settled" or output.result is None:
                continue
            dice = output.result.get("dice") or [output.result["red"], output.result["blue"]]
            assert len(dice) == engine.rules.dice
            if game == "craps":
                assert output.result["point"] == point
                point = output.result["next_point"]
    assert engine.craps.point == point


# -- replay (contracts §4.4): one outcome per roll -------------------------------------------------


@pytest.mark.parametrize(
    ("game", "stream", "statuses"),
    [
        ("sic_bo", "dice-sic-bo.jsonl", "SSSSVVS"),
        ("craps", "dice-craps.jsonl", "SSSSSSVSSS"),
        ("dice_duel", "dice-duel.jsonl", "SSSSSV"),
        ("lightning_dice", "dice-lightning.jsonl", "SSVSS"),
    ],
)
def test_replay_prints_one_outcome_per_roll(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], game: str, stream: str, statuses: str
) -> None:
    config = table_config(tmp_path, "DT-T1", game)
    found, verdicts = replay(capsys, config, DATA / stream)
    rounds = sum(isinstance(e, RoundOpen) for e in _events(stream))
    assert len(found) == rounds
    assert [o["round"] for o in found] == [f"DT-T1-{n:06d}" for n in range(1, rounds + 1)]
    assert "".join("S" if o["status"] == "settled" else "V" for o in found) == statuses
    assert all(o["schema"] == 1 and o["game"] == game for o in found)
    assert all("verdict" in v for v in verdicts)


def test_replay_craps_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    found, verdicts = replay(
        capsys, table_config(tmp_path, "CR-T1", "craps"), DATA / "dice-craps.jsonl"
    )
    rows = [
        (o["result"]["decision"], o["result"]["point"], o["result"]["puck"])
        if o["status"] == "settled"
        else (o["reason"], o["result"]["point"], o["result"]["puck"])
        for o in found
    ]
    assert rows == [
        ("point_set", None, "off"),
        (None, 4, "on"),
        ("point_made", 4, "on"),
        ("natural", None, "off"),
        ("craps", None, "off"),
        ("point_set", None, "off"),
        ("device_fault", 9, "on"),  # C31 aside, a void roll leaves the point on
        (None, 9, "on"),
        ("seven_out", 9, "on"),
        ("natural", None, "off"),
    ]
    assert [v["verdict"]["code"] for v in verdicts] == ["no_wall_hit"]


def test_replay_lightning_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "LD-T1", "lightning_dice")
    found, verdicts = replay(capsys, config, DATA / "dice-lightning.jsonl")
    assert [o["result"].get("multiplier") for o in found] == [100, None, None, 1000, 150]
    assert [v["verdict"]["code"] for v in verdicts] == [
        "rng_missing",
        "rng_before_bets_closed",
        "rng_duplicate",
        "rng_value_out_of_range",
        "rng_after_result",
    ]


def test_every_code_is_documented() -> None:
    from tablectl.controller.core.dice_events import ROLL_INVALID_CODES  # noqa: PLC0415
    from tablectl.controller.engines import dice as engine  # noqa: PLC0415
    from tablectl.controller.games.dice import lightning_dice, rules  # noqa: PLC0415

    codes = {
        value
        for module in (engine, lightning_dice, rules)
        for name, value in vars(module).items()
        if name.isupper() and isinstance(value, str) and value.islower() and " " not in value
    } - {"idle", "open", "closed", "rolling", "held"}
    codes |= set(ROLL_INVALID_CODES)
    assert {"short_tumble", "rng_after_result", "duplicate_result"} <= codes
    root = Path(__file__).resolve().parents[3] / "docs"
    for page in ("games/dice.md", "verdicts.md"):
        text = (root / page).read_text(encoding="utf-8")
        assert {c for c in codes if f"`{c}`" not in text} == set(), page


async def _step_each(runner: TableRunner, events: Sequence[TableEvent]) -> None:
    for event in events:
        await runner.step([event])
