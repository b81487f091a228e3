"""The roulette round engine: rounds, voids and verdicts, driven by normalized events."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller import engines
from controller.engines import ENGINES, Engine, build_engine
from controller.engines.roulette import RouletteEngine
from controller.errors import ConfigError
from controller.events import (
    BallDrawn,
    BallLaunched,
    BetsClosed,
    Card,
    Confirm,
    CutCard,
    Fault,
    FaultCleared,
    NoSpin,
    RoundOpen,
    Segment,
    ShuffleCompleted,
    ShuffleStarted,
    TableEvent,
    Void,
    WinningNumber,
)
from controller.games.roulette import RouletteRules, validate_number
from controller.outcomes import EngineOutput, Outcome, Verdict

TABLE = "RL-01"
TS = "2026-11-30T10:00:00.000000Z"


def make(**rules: Any) -> RouletteEngine:
    return RouletteEngine(TABLE, RouletteRules(**rules))


def feed(engine: RouletteEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def summary(outputs: Sequence[EngineOutput]) -> list[tuple[str, ...]]:
    """Outcomes as (round, status, reason); verdicts as ("verdict", code)."""
    rows: list[tuple[str, ...]] = []
    for o in outputs:
        if isinstance(o, Outcome):
            rows.append((o.round, o.status, str(o.reason)))
        else:
            rows.append(("verdict", o.code))
    return rows


R1 = f"{TABLE}-000001"
R2 = f"{TABLE}-000002"
GOOD = WinningNumber(number=17, revolutions=6, ball_direction="ccw", rotor_direction="cw", ts=TS)


# -- a whole round --------------------------------------------------------------------------


def test_settled_round_publishes_the_43_result() -> None:
    engine = make()
    out = feed(
        engine,
        [
            RoundOpen(),
            BallLaunched(rotor_direction="cw", spin=812),
            BetsClosed(),
            WinningNumber(number=17, revolutions=6, ball_direction="ccw", ts=TS),
        ],
    )
    assert out == [
        Outcome(
            table=TABLE,
            game="roulette",
            round=R1,
            status="settled",
            reason=None,
            ts=TS,
            result={
                "number": 17,
                "color": "black",
                "revolutions": 6,
                "parity": "odd",
                "range": "low",
                "dozen": 2,
                "column": 2,
                "ball_direction": "ccw",
                # filled from the launch: the result event did not carry them
                "rotor_direction": "cw",
                "wheel_spin": 812,
                "variant": "european",
                "la_partage": False,
            },
        )
    ]
    assert engine.snapshot() == {
        "phase": "idle",
        "round": None,
        "rounds": 1,
        "faults": [],
        "ball_in_play": False,
        "last_number": 17,
    }


def test_round_ids_count_up_from_next_round_and_honour_given_ids() -> None:
    engine = RouletteEngine(TABLE, next_round=42)
    rounds = []
    for opener in (RoundOpen(), RoundOpen(round="disputed-7"), RoundOpen()):
        feed(engine, [opener, BetsClosed()])
        rounds.append(engine.current_round)
        feed(engine, [GOOD])
    assert rounds == [f"{TABLE}-000042", "disputed-7", f"{TABLE}-000044"]


def test_next_round_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="next_round"):
        RouletteEngine(TABLE, next_round=0)


def test_snapshot_tracks_phase_and_ball_in_play() -> None:
    engine = make()
    seen = []
    for event in (RoundOpen(), BallLaunched(), BetsClosed()):
        engine.apply(event)
        snap = engine.snapshot()
        seen.append((snap["phase"], snap["round"], snap["ball_in_play"]))
    assert seen == [("open", R1, False), ("open", R1, True), ("closed", R1, True)]
    json.dumps(engine.snapshot())


# -- voids ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("events", "reason", "result"),
    [
        pytest.param(
            [RoundOpen(), BallLaunched(), GOOD],
            "result_before_bets_closed",
            {"number": 17},
            id="V-RL-3-ROU-2.1.1-result-while-open",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), WinningNumber(number=8, revolutions=3)],
            "min_revolutions",
            {"number": 8},
            id="RL-I2-three-revolutions",
        ),
        pytest.param(
            [
                RoundOpen(),
                BallLaunched(rotor_direction="cw"),
                BetsClosed(),
                WinningNumber(number=8, revolutions=9, ball_direction="cw"),
            ],
            "same_direction",
            {"number": 8},
            id="R1-R2a-same-direction-rotor-from-launch",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), WinningNumber(number="00", revolutions=9)],
            "number_out_of_range",
            {"number": "00"},
            id="V-RL-2-00-on-european",
        ),
        pytest.param(
            [RoundOpen(), BallLaunched(), NoSpin(reason="foreign_object")],
            "foreign_object",
            None,
            id="RL-I1-no-spin-while-open",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), BallLaunched(), NoSpin(reason="ball_out_of_wheel")],
            "ball_out_of_wheel",
            None,
            id="R2d-no-spin-while-closed",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), NoSpin(reason="  ")],
            "no_spin",
            None,
            id="RL-I1-no-spin-without-reason",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), Void(reason="dealer_error", by="pitboss")],
            "dealer_error",
            None,
            id="V-RL-5-GEN-11-supervisor-void",
        ),
        pytest.param(
            [RoundOpen(), Void(reason="")],
            "supervisor_void",
            None,
            id="V-RL-5-supervisor-void-without-reason",
        ),
        pytest.param(
            [RoundOpen(), BetsClosed(), Fault(code="sensor_stuck")],
            "device_fault",
            None,
            id="G1-G3-ROU-2.1.6-fault-mid-round",
        ),
    ],
)
def test_void_outcomes(
    events: list[TableEvent], reason: str, result: dict[str, Any] | None
) -> None:
    engine = make()
    assert feed(engine, events[:-1]) == []
    last = events[-1]
    (outcome,) = engine.apply(last)
    assert outcome == Outcome(
        table=TABLE,
        game="roulette",
        round=R1,
        status="void",
        reason=reason,
        result=result,
        ts=last.ts,
    )
    assert engine.phase == "idle"
    assert engine.current_round is None
    assert engine.snapshot()["last_number"] is None  # a void's number was never a result


def test_rou_311_three_revolutions_settle_with_seed_004_rules() -> None:
    engine = make(min_revolutions=3)
    (out,) = feed(engine, [RoundOpen(), BetsClosed(), WinningNumber(number=8, revolutions=3)])
    assert isinstance(out, Outcome)
    assert (out.status, out.result and out.result["number"]) == ("settled", 8)


def test_revolutions_unknown_when_the_table_requires_a_count() -> None:
    engine = make(require_revolution_count=True)
    (out,) = feed(engine, [RoundOpen(), BetsClosed(), WinningNumber(number=8)])
    assert summary([out]) == [(R1, "void", "revolutions_unknown")]


def test_american_00_settles_green() -> None:
    engine = make(variant="american")
    (out,) = feed(engine, [RoundOpen(), BetsClosed(), WinningNumber(number="00", revolutions=5)])
    assert isinstance(out, Outcome)
    assert out.result is not None
    assert (out.status, out.result["number"], out.result["color"]) == ("settled", "00", "green")


def test_round_open_mid_round_abandons_it_then_opens_the_next() -> None:
    engine = make()
    out = feed(engine, [RoundOpen(), BallLaunched(), BetsClosed(), RoundOpen(ts=TS)])
    assert out == [
        Outcome(table=TABLE, game="roulette", round=R1, status="void", reason="round_abandoned",
                ts=TS)
    ]  # fmt: skip
    assert engine.current_round == R2
    assert engine.snapshot()["ball_in_play"] is False
    assert summary(feed(engine, [BetsClosed(), GOOD])) == [(R2, "settled", "None")]


# -- faults ---------------------------------------------------------------------------------


def test_r14_r18_fault_latches_and_locks_play_until_cleared() -> None:
    engine = make()
    out = feed(
        engine,
        [
            RoundOpen(),
            Fault(code="motor"),
            Fault(code="no_ball"),
            RoundOpen(),  # refused: latched
            FaultCleared(code="motor"),
            RoundOpen(),  # still refused: no_ball
        ],
    )
    assert summary(out) == [
        (R1, "void", "device_fault"),
        ("verdict", "fault_latched"),
        ("verdict", "fault_latched"),
    ]
    verdict = out[1]
    assert isinstance(verdict, Verdict)
    assert verdict.rule == "R14"
    assert "motor, no_ball" in verdict.message
    assert engine.snapshot()["faults"] == ["no_ball"]
    assert engine.current_round is None
    feed(engine, [FaultCleared(code="no_ball"), RoundOpen()])
    assert engine.current_round == R2  # the refused opens did not use up round numbers
    assert engine.snapshot()["faults"] == []


def test_r23_without_void_on_fault_the_round_stays_in_play() -> None:
    engine = make(void_on_fault=False)
    out = feed(engine, [RoundOpen(), BetsClosed(), Fault(code="rotor_slow"), GOOD])
    assert summary(out) == [(R1, "settled", "None")]
    assert engine.snapshot()["faults"] == ["rotor_slow"]
    assert summary(engine.apply(RoundOpen())) == [("verdict", "fault_latched")]


def test_fault_while_idle_latches_without_an_outcome() -> None:
    engine = make()
    assert engine.apply(Fault(code="door_open")) == []
    assert engine.faults == frozenset({"door_open"})


# -- refused events -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "event", "phase"),
    [
        pytest.param([], GOOD, "idle", id="V-RL-3-result-with-no-round"),
        pytest.param([], BetsClosed(), "idle", id="bets-closed-with-no-round"),
        pytest.param([], BallLaunched(), "idle", id="launch-with-no-round"),
        pytest.param([], NoSpin(reason="x"), "idle", id="V-RL-5-no-spin-with-no-round"),
        pytest.param([], Void(reason="x"), "idle", id="void-with-no-round"),
        pytest.param([RoundOpen(), BetsClosed()], BetsClosed(), "closed", id="bets-closed-twice"),
        pytest.param([RoundOpen()], Confirm(), "open", id="confirm-nothing-pending"),
        pytest.param([], Confirm(), "idle", id="confirm-idle"),
        pytest.param([RoundOpen()], FaultCleared(code="x"), "open", id="clear-unlatched-fault"),
    ],
)
def test_unexpected_events_are_verdicts_and_change_nothing(
    setup: list[TableEvent], event: TableEvent, phase: str
) -> None:
    engine = make()
    feed(engine, setup)
    before = engine.snapshot()
    (verdict,) = engine.apply(event)
    assert isinstance(verdict, Verdict)
    assert verdict.code == "unexpected_event"
    assert verdict.data == {"event": event.type, "phase": phase}
    assert verdict.round == engine.current_round
    assert engine.snapshot() == before


@pytest.mark.parametrize(
    "event",
    [
        Card(card="KH"),
        CutCard(),
        ShuffleStarted(),
        ShuffleCompleted(cards=416),
        BallDrawn(ball=7),
        Segment(index=3),
    ],
    ids=lambda e: e.type,
)
def test_other_games_events_are_not_for_this_game(event: TableEvent) -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed()])
    before = engine.snapshot()
    assert summary(engine.apply(event)) == [("verdict", "not_for_this_game")]
    assert engine.snapshot() == before


def test_a_reused_round_id_is_refused() -> None:
    engine = make()
    feed(engine, [RoundOpen(round="A"), BetsClosed(), GOOD])
    assert summary(engine.apply(RoundOpen(round="A"))) == [("verdict", "duplicate_round")]
    feed(engine, [RoundOpen(round="B")])
    assert summary(engine.apply(RoundOpen(round="B"))) == [("verdict", "duplicate_round")]
    assert engine.current_round == "B"


def test_an_auto_id_skips_one_a_given_id_already_took() -> None:
    engine = make()
    feed(engine, [RoundOpen(round=R2), BetsClosed(), GOOD, RoundOpen()])
    # The first open used n=1 under the name R2; n=2 would be R2 again, so n=3 is used.
    assert engine.current_round == f"{TABLE}-000003"


# -- registry -------------------------------------------------------------------------------


def test_build_engine_validates_rules() -> None:
    engine: Engine = build_engine(
        TABLE, "roulette", {"min_revolutions": 3}, source="t.toml", next_round=7
    )
    assert isinstance(engine, RouletteEngine)
    assert engine.game == "roulette"
    assert engine.rules.min_revolutions == 3
    engine.apply(RoundOpen())
    assert engine.current_round == f"{TABLE}-000007"


def test_build_engine_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"t\.toml: unknown game 'craps' \(known: .*roulette"):
        build_engine(TABLE, "craps", {}, source="t.toml")


def test_build_engine_bad_rules_name_key_and_file() -> None:
    with pytest.raises(ConfigError, match=r"t\.toml: unknown key 'rules\.decks'"):
        build_engine(TABLE, "roulette", {"decks": 8}, source="t.toml")


def test_build_engine_unloadable_engine_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(engines, "ENGINES", {**ENGINES, "ghost": ("controller.no_such", "X")})
    with pytest.raises(ConfigError, match="engine for game 'ghost' cannot be loaded"):
        build_engine(TABLE, "ghost", {}, source="t.toml")


# -- properties -----------------------------------------------------------------------------

directions = st.none() | st.sampled_from(["cw", "ccw"])
events = st.one_of(
    st.builds(RoundOpen, round=st.none() | st.sampled_from(["A", "B", f"{TABLE}-000003"])),
    st.builds(BetsClosed),
    st.builds(BallLaunched, rotor_direction=directions, spin=st.none() | st.integers(0, 9)),
    st.builds(
        WinningNumber,
        number=st.integers(-1, 38) | st.just("00"),
        revolutions=st.none() | st.integers(0, 8),
        ball_direction=directions,
        rotor_direction=directions,
    ),
    st.builds(NoSpin, reason=st.sampled_from(["", "misspin", "foreign_object"])),
    st.builds(Void, reason=st.sampled_from(["", "dealer_error"])),
    st.builds(Fault, code=st.sampled_from(["motor", "sensor"])),
    st.builds(FaultCleared, code=st.sampled_from(["motor", "sensor"])),
    st.builds(Confirm),
    st.builds(Card, card=st.just("KH")),
    st.builds(Segment, index=st.just(1)),
)


@st.composite
def plausible_rounds(draw: st.DrawFn) -> list[TableEvent]:
    """A round in the usual order, launch before or after the close, valid or not."""
    launch: list[TableEvent] = [draw(st.builds(BallLaunched, rotor_direction=directions))]
    launch_first = draw(st.booleans())
    return [
        RoundOpen(),
        *(launch if launch_first else []),
        BetsClosed(),
        *([] if launch_first else launch),
        draw(
            st.builds(
                WinningNumber,
                number=st.integers(0, 36) | st.just("00"),
                revolutions=st.none() | st.integers(2, 9),
                ball_direction=directions,
            )
        ),
    ]


# Rounds in order often enough to settle some, loose events to break them in every place.
sequences = st.lists(st.one_of(plausible_rounds(), events.map(lambda e: [e])), max_size=25).map(
    lambda chunks: [e for chunk in chunks for e in chunk]
)

rule_sets = st.builds(
    RouletteRules,
    variant=st.sampled_from(["european", "american", "french"]),
    min_revolutions=st.integers(1, 5),
    require_revolution_count=st.booleans(),
    void_on_fault=st.booleans(),
)


@settings(max_examples=300)
@given(rule_sets, sequences)
def test_any_sequence_never_raises_and_each_round_ends_once(
    rules: RouletteRules, sequence: list[TableEvent]
) -> None:
    engine = RouletteEngine(TABLE, rules)
    opened: list[str] = []
    ended: list[str] = []
    closed_rounds: set[str] = set()
    for event in sequence:
        before = engine.snapshot()
        round_before = engine.current_round
        out = engine.apply(event)
        if round_before is not None and event.type == "bets_closed" and not out:
            closed_rounds.add(round_before)
        if engine.current_round is not None and engine.current_round != round_before:
            opened.append(engine.current_round)
        for o in out:
            json.dumps(o.to_payload())  # publishable as it is
            if isinstance(o, Outcome):
                ended.append(o.round)
                assert o.round in opened
                assert o.ts == event.ts
                if o.status == "settled":
                    # V-RL-3: settled only after bets closed; V-RL-1/2: checks held.
                    assert o.round in closed_rounds
                    assert o.result is not None
                    assert validate_number(rules.variant, o.result["number"])
                    revs = o.result["revolutions"]
                    assert revs is None or revs >= rules.min_revolutions
                    assert revs is not None or not rules.require_revolution_count
                    assert o.result["ball_direction"] is None or (
                        o.result["ball_direction"] != o.result["rotor_direction"]
                    )
                else:
                    assert o.reason
        if out and all(isinstance(o, Verdict) for o in out):
            assert engine.snapshot() == before  # a refusal changes nothing
        snap = engine.snapshot()
        assert (snap["phase"] == "idle") == (engine.current_round is None)
        if engine.current_round is not None:
            assert rules.void_on_fault is False or not snap["faults"]
    assert len(ended) == len(set(ended))  # each round ends at most once; ids never reused
    assert len(opened) == len(set(opened))
    assert engine.snapshot()["rounds"] == len(opened)
