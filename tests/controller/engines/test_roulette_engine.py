"""The roulette round engine: rounds, voids and verdicts, driven by normalized events."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller import engines
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import (
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
    event_from_json,
    event_to_dict,
)
from tablectl.controller.core.mapping import to_table_event
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import ENGINES, Engine, build_engine
from tablectl.controller.engines.roulette import RouletteEngine
from tablectl.controller.games.roulette import RouletteRules, validate_number
from tablectl.controller.service.recovery import Interrupted, JournalScan
from tablectl.controller.tools.cli import main as cli_main
from tablectl.drivers import events as dev
from tablectl.drivers.ss2.driver import SS2Settings
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.ss2.protocol import Decoder

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
    with pytest.raises(ConfigError, match=r"t\.toml: unknown game 'pai_gow' \(known: .*roulette"):
        build_engine(TABLE, "pai_gow", {}, source="t.toml")


def test_build_engine_bad_rules_name_key_and_file() -> None:
    with pytest.raises(ConfigError, match=r"t\.toml: unknown key 'rules\.decks'"):
        build_engine(TABLE, "roulette", {"decks": 8}, source="t.toml")


def test_build_engine_unloadable_engine_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(
        engines, "ENGINES", {**ENGINES, "ghost": ("tablectl.controller.no_such", "X")}
    )
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


# -- issue 11: is the result this round's, read consistently, from a rule-abiding spin? -------
#
# A: the wheel's spin number ties a winning_number to its round (seed-001 G1/G3, R15).
# B: the wheel's two readings of one spin must agree (regulatory R22).
# C: the rotor may not change its direction during play (seed-001 §4.1 L95).


def _open(spin: int | None = 6, launch: int | None = 6, rotor: str | None = "cw") -> list[Any]:
    """A round opened at ``spin``, its ball launched at ``launch`` (None: no launch), closed."""
    events: list[Any] = [RoundOpen(spin=spin)]
    if launch is not None:
        events.append(BallLaunched(spin=launch, rotor_direction=rotor))  # type: ignore[arg-type]
    return [*events, BetsClosed()]


def _result(**fields: Any) -> WinningNumber:
    base: dict[str, Any] = {"number": 17, "revolutions": 6, "ball_direction": "ccw", "ts": TS}
    return WinningNumber(**{**base, **fields})


@pytest.mark.parametrize(
    ("events", "reason", "extra"),
    [
        pytest.param(
            [*_open(6, 6), _result(spin=15)],
            "spin_mismatch",
            {
                "wheel_spin": 15,
                "round_spin": 6,
                "detail": "winning number of spin 15 for a round opened at spin 6",
            },
            id="A-G1-R15-result-of-another-spin",
        ),
        pytest.param(
            [*_open(6, 15), _result(spin=15)],
            "spin_mismatch",
            {
                "wheel_spin": 15,
                "round_spin": 6,
                "detail": "winning number of spin 15 for a round opened at spin 6",
            },
            id="A-launch-and-result-of-a-later-spin",
        ),
        pytest.param(
            [*_open(None, 15), _result(spin=6)],
            "spin_mismatch",
            {
                "wheel_spin": 6,
                "round_spin": 15,
                "detail": "winning number of spin 6 for a round launched at spin 15",
            },
            id="A-round-opened-by-hand-spin-from-the-launch",
        ),
        pytest.param(
            [*_open(256, 256), _result(spin=1)],
            "spin_mismatch",
            {
                "wheel_spin": 1,
                "round_spin": 256,
                "detail": "winning number of spin 1 for a round opened at spin 256",
            },
            id="A-counter-wrapped",
        ),
        pytest.param(
            [RoundOpen(spin=6), BallLaunched(spin=6), _result(spin=15)],
            "spin_mismatch",
            {
                "wheel_spin": 15,
                "round_spin": 6,
                "detail": "winning number of spin 15 for a round opened at spin 6",
            },
            id="A-another-spin-comes-before-result-before-bets-closed",
        ),
        pytest.param(
            [*_open(6, None), _result(spin=6)],
            "launch_not_seen",
            {
                "wheel_spin": 6,
                "launch_spin": None,
                "detail": "winning number of spin 6, but the round saw no ball launch",
            },
            id="A-no-launch-seen",
        ),
        pytest.param(
            [*_open(6, 15), _result(spin=6)],
            "launch_not_seen",
            {
                "wheel_spin": 6,
                "launch_spin": 15,
                "detail": "winning number of spin 6, but the round saw the launch of spin 15",
            },
            id="A-only-another-spins-launch-seen",
        ),
        pytest.param(
            [*_open(), _result(spin=6, status_number=18)],
            "result_mismatch",
            {
                "status_number": 18,
                "detail": "the wheel reported 17 on its number line and 18 on its status line "
                "for the same spin",
            },
            id="B-R22-bare-line-and-status-line-disagree",
        ),
        pytest.param(
            [*_open(), _result(spin=6, rotor_direction="ccw", ball_direction="cw")],
            "rotor_direction_changed",
            {
                "launch_rotor_direction": "cw",
                "rotor_direction": "ccw",
                "detail": "the rotor turned cw at the launch and ccw at the result",
            },
            id="C-L95-rotor-reversed-before-same-direction",
        ),
        pytest.param(
            [
                *_open(rotor="cw"),
                _result(spin=6, status_number=18, rotor_direction="ccw"),
            ],
            "result_mismatch",
            {
                "status_number": 18,
                "detail": "the wheel reported 17 on its number line and 18 on its status line "
                "for the same spin",
            },
            id="B-before-C",
        ),
    ],
)
def test_result_checks_void_with_reason_and_detail(
    events: list[TableEvent], reason: str, extra: dict[str, Any]
) -> None:
    engine = make()
    out = feed(engine, events)
    assert out == [
        Outcome(
            table=TABLE,
            game="roulette",
            round=R1,
            status="void",
            reason=reason,
            result={"number": 17, **extra},
            ts=TS,
        )
    ]
    assert engine.snapshot()["last_number"] is None
    assert engine.phase == "idle"


@pytest.mark.parametrize(
    "events",
    [
        pytest.param([*_open(6, 6), _result(spin=6)], id="A-same-spin"),
        pytest.param([*_open(6, 6), _result()], id="A-result-without-spin-no-check"),
        pytest.param([*_open(None, None), _result()], id="A-no-spins-anywhere-as-before"),
        pytest.param(
            [*_open(None, None), BallLaunched(), _result(spin=6)], id="A-launch-spin-unknown"
        ),
        pytest.param(
            [
                RoundOpen(spin=6),
                BallLaunched(spin=6, rotor_direction="cw"),
                BetsClosed(),
                BallLaunched(spin=6, rotor_direction="ccw"),
                _result(spin=6, rotor_direction="ccw", ball_direction="cw"),
            ],
            id="C-relaunch-the-last-launch-counts",
        ),
        pytest.param([*_open(), _result(spin=6, status_number=17)], id="B-readings-agree"),
        pytest.param(
            [*_open(rotor=None), _result(spin=6, rotor_direction="ccw", ball_direction="cw")],
            id="C-launch-direction-unknown",
        ),
        pytest.param([*_open(), _result(spin=6, rotor_direction="cw")], id="C-rotor-kept-its-way"),
    ],
)
def test_result_checks_let_a_good_spin_settle(events: list[TableEvent]) -> None:
    engine = make()
    (out,) = feed(engine, events)
    assert isinstance(out, Outcome)
    assert (out.status, out.reason) == ("settled", None)


def test_b_00_and_0_are_different_pockets() -> None:
    engine = make(variant="american")
    (out,) = feed(engine, [*_open(), _result(number="00", spin=6, status_number=0)])
    assert summary([out]) == [(R1, "void", "result_mismatch")]


def test_a_journal_outage_that_lost_spins_6_to_14_voids_round_6() -> None:
    """The reproduction of issue 11: round 6 opened at wheel spin 6; the events of spins 6-14
    were lost; spin 15's launch, close and result reached the engine."""
    engine = make()
    for spin in range(1, 6):
        (out,) = feed(engine, [*_open(spin, spin), _result(spin=spin, ts=f"t{spin}")])
        assert isinstance(out, Outcome)
        assert out.status == "settled"
    feed(engine, [RoundOpen(spin=6), BallLaunched(spin=6, rotor_direction="cw")])
    spin_15: list[TableEvent] = [
        BallLaunched(spin=15, rotor_direction="ccw"),
        BetsClosed(),
        _result(number=32, spin=15, rotor_direction="ccw", ball_direction="cw"),
    ]
    out6 = feed(engine, spin_15)
    assert summary(out6) == [(f"{TABLE}-000006", "void", "spin_mismatch")]
    (void,) = out6
    assert isinstance(void, Outcome)
    assert void.result is not None
    assert void.result["detail"] == "winning number of spin 15 for a round opened at spin 6"
    assert engine.snapshot()["last_number"] == 17  # spin 15's 32 was never a result here


# B with on_result_mismatch = "hold": the round waits for a supervisor (R22, seed-000 GEN-11).


def _held() -> RouletteEngine:
    engine = make(on_result_mismatch="hold")
    feed(engine, _open())
    (verdict,) = engine.apply(_result(spin=6, status_number=18))
    assert isinstance(verdict, Verdict)
    assert (verdict.code, verdict.rule, verdict.round) == ("result_mismatch", "R22", R1)
    assert verdict.data == {
        "event": "winning_number",
        "phase": "closed",
        "number": 17,
        "status_number": 18,
    }
    assert "waits for a supervisor" in verdict.message
    assert (engine.phase, engine.current_round) == ("held", R1)
    return engine


@pytest.mark.parametrize(
    "event",
    [
        pytest.param(RoundOpen(spin=7), id="next-game-opens"),
        pytest.param(BallLaunched(spin=7), id="next-launch"),
        pytest.param(BetsClosed(), id="next-close"),
        pytest.param(NoSpin(reason="misspin"), id="next-no-spin"),
        pytest.param(_result(spin=7), id="next-result"),
        pytest.param(_result(spin=6, status_number=17), id="same-spin-from-the-device"),
    ],
)
def test_b_hold_refuses_the_wheels_own_events(event: TableEvent) -> None:
    engine = _held()
    before = engine.snapshot()
    (verdict,) = engine.apply(event)
    assert isinstance(verdict, Verdict)
    assert (verdict.code, verdict.rule) == ("decision_pending", "R22; seed-000 GEN-11")
    assert "result_mismatch" in verdict.message
    assert engine.snapshot() == before


def test_b_hold_ends_with_the_supervisors_void() -> None:
    engine = _held()
    out = engine.apply(Void(reason="wheel_malfunction", by="FM-1", manual=True, ts=TS))
    assert summary(out) == [(R1, "void", "wheel_malfunction")]
    assert engine.phase == "idle"
    assert summary(feed(engine, [*_open(7, 7), _result(spin=7)])) == [(R2, "settled", "None")]


def test_b_hold_ends_with_a_number_entered_by_hand_on_the_spin_the_wheel_measured() -> None:
    engine = make(on_result_mismatch="hold", require_revolution_count=True)
    feed(engine, [*_open(), _result(spin=6, status_number=18, revolutions=7)])
    (out,) = engine.apply(WinningNumber(number=18, manual=True, ts=TS))
    assert isinstance(out, Outcome)
    assert out.status == "settled"
    assert out.result is not None
    # The number is the supervisor's; revolutions, directions and spin are the wheel's.
    assert (out.result["number"], out.result["revolutions"]) == (18, 7)
    assert (out.result["wheel_spin"], out.result["rotor_direction"]) == (6, "cw")
    assert engine.snapshot()["last_number"] == 18


def test_b_hold_a_number_entered_by_hand_is_still_checked() -> None:
    engine = _held()
    (out,) = engine.apply(WinningNumber(number=37, manual=True, ts=TS))
    assert summary([out]) == [(R1, "void", "number_out_of_range")]


def test_b_hold_a_fault_only_latches_and_the_hold_survives_a_replay() -> None:
    engine = _held()
    assert engine.apply(Fault(code="ss2_sensor_fault")) == []
    assert (engine.phase, engine.faults) == ("held", frozenset({"ss2_sensor_fault"}))
    assert engine.apply(FaultCleared(code="ss2_sensor_fault")) == []
    assert engine.phase == "held"
    # Rebuilt from its events (a restart replays the journal), the round is still held.
    rebuilt = make(on_result_mismatch="hold")
    feed(rebuilt, [*_open(), _result(spin=6, status_number=18)])
    assert rebuilt.snapshot() == engine.snapshot()


def test_b_a_held_round_is_not_for_the_restart_gate() -> None:
    """After a restart the held round stays with the supervisor: the restart gate (which would
    void it once the wheel shows its next spin) only takes rounds in play."""
    engine = _held()
    assert Interrupted.of(engine.snapshot(), "roulette", JournalScan(), 0.0) is None
    feed(engine, [Void(reason="x")])
    feed(engine, _open())
    assert Interrupted.of(engine.snapshot(), "roulette", JournalScan(), 0.0) is not None


def test_b_hold_is_not_for_a_result_of_another_spin() -> None:
    engine = make(on_result_mismatch="hold")
    out = feed(engine, [*_open(), _result(spin=9, status_number=18)])
    assert summary(out) == [(R1, "void", "spin_mismatch")]


def test_on_result_mismatch_is_validated() -> None:
    engine = build_engine(TABLE, "roulette", {"on_result_mismatch": "hold"}, source="t.toml")
    assert isinstance(engine, RouletteEngine)
    assert engine.rules.on_result_mismatch == "hold"
    assert RouletteRules().on_result_mismatch == "void"
    with pytest.raises(ConfigError, match=r"t\.toml: .*rules\.on_result_mismatch"):
        build_engine(TABLE, "roulette", {"on_result_mismatch": "pay"}, source="t.toml")


def test_the_stack_from_mapped_device_events_carries_spin_and_both_readings() -> None:
    """What the SS2 interpreter reports reaches the engine inside the normalized events."""
    device: list[dev.DeviceEvent] = [
        dev.WheelReady(device="wheel", at=1.0, spin=6),
        dev.BallLaunched(device="wheel", at=2.0, spin=6, rotor_direction="cw"),
        dev.NoMoreBets(device="wheel", at=3.0, spin=6),
        dev.WheelSettled(
            device="wheel", at=4.0, number=17, spin=6, rotor_direction="cw", status_number=18
        ),
    ]
    events = [to_table_event(e) for e in device]
    assert [getattr(e, "spin", None) for e in events] == [6, 6, None, 6]
    result = events[-1]
    assert isinstance(result, WinningNumber)
    assert (result.status_number, result.rotor_direction) == (18, "cw")
    assert summary(feed(make(), events)) == [(R1, "void", "result_mismatch")]
    # The journal's JSON form round-trips the new field; without it nothing changes.
    assert event_from_json(json.dumps(event_to_dict(result))) == result
    assert "status_number" not in event_to_dict(dataclasses.replace(result, status_number=None))


SPIN_GAP = Path(__file__).resolve().parents[2] / "data" / "replay" / "roulette-spin-gap.jsonl"


def test_the_stack_replays_the_journal_of_the_outage_as_a_void(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11 as the journal kept it (exported events; seqs 5 and 11 are the outcomes): round
    6 opened at spin 6, spins 6-14 were never journaled, then spin 15's launch, close and
    result. ``tablectl replay`` re-validates it: void ``spin_mismatch``, never settled."""
    config = tmp_path / "table.toml"
    config.write_text(
        f"""[table]
id = "ROU-T1"
game = "roulette"
[mqtt]
url = "mqtt://127.0.0.1:1"
[journal]
path = "{tmp_path / "j.sqlite"}"
[[devices]]
id = "wheel"
driver = "cammegh-ss2"
port = "socket://127.0.0.1:1"
""",
        encoding="utf-8",
    )
    assert cli_main(["replay", "--config", str(config), str(SPIN_GAP)]) == 0
    found = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(o["round"], o["status"], o["reason"]) for o in found] == [
        ("ROU-T1-000001", "settled", None),
        ("ROU-T1-000002", "void", "spin_mismatch"),
        ("ROU-T1-000003", "settled", None),
    ]
    assert found[1]["result"] == {
        "number": 32,
        "wheel_spin": 15,
        "round_spin": 6,
        "detail": "winning number of spin 15 for a round opened at spin 6",
    }
    assert [o["result"]["wheel_spin"] for o in (found[0], found[2])] == [5, 16]


def _wire(data: bytes) -> list[TableEvent]:
    interpreter = SS2Interpreter("wheel", SS2Settings())
    decoder = Decoder()
    out: list[TableEvent] = []
    for i, message in enumerate(decoder.feed(data)):
        out += [to_table_event(e) for e in interpreter.feed(message, 1000.0 + i / 2)]
    return out


@pytest.mark.parametrize(
    ("wire", "reason"),
    [
        pytest.param(
            b"*X;2;006;34;0;150;0\r\n*X;3;006;34;0;141;1\r\n*X;4;006;34;0;139;1\r\n"
            b"17\r\n*X;5;006;18;0;138;1\r\n",
            "result_mismatch",
            id="B-bare-17-status-18",
        ),
        pytest.param(
            b"*X;2;006;34;0;150;0\r\n*X;3;006;34;0;141;1\r\n*X;4;006;34;0;139;0\r\n"
            b"17\r\n*X;5;006;17;0;138;0\r\n",
            "rotor_direction_changed",
            id="C-rotor-reversed-in-state-4",
        ),
        pytest.param(
            b"*X;2;006;34;0;150;0\r\n*X;3;006;34;0;141;1\r\n*X;4;006;34;0;139;1\r\n"
            b"17\r\n*X;5;006;17;0;138;1\r\n",
            None,
            id="a-good-spin",
        ),
    ],
)
def test_the_stack_from_wire_bytes(wire: bytes, reason: str | None) -> None:
    (out,) = [o for o in feed(make(), _wire(wire)) if isinstance(o, Outcome)]
    assert (out.status, out.reason) == ("settled" if reason is None else "void", reason)


# -- properties of A, B, C --------------------------------------------------------------------

spins = st.none() | st.sampled_from([5, 6, 7, 256, 1])


@st.composite
def checked_rounds(draw: st.DrawFn) -> list[TableEvent]:
    """Rounds with spin numbers, both readings and rotor directions, right and wrong."""
    opened = draw(spins)
    events: list[TableEvent] = [RoundOpen(spin=opened)]
    for _ in range(draw(st.integers(0, 2))):
        launch = draw(st.sampled_from([opened, opened, 7]) if opened is not None else spins)
        events.append(BallLaunched(spin=launch, rotor_direction=draw(directions)))
    events.append(BetsClosed())
    number = draw(st.integers(0, 36))
    events.append(
        WinningNumber(
            number=number,
            revolutions=draw(st.none() | st.integers(3, 9)),
            ball_direction=draw(directions),
            rotor_direction=draw(directions),
            spin=draw(st.sampled_from([opened, opened]) | spins),
            status_number=draw(st.none() | st.just(number) | st.integers(0, 36)),
            manual=draw(st.booleans()),
        )
    )
    return events


checked_sequences = st.lists(
    st.one_of(checked_rounds(), checked_rounds(), events.map(lambda e: [e])), max_size=20
).map(lambda chunks: [e for chunk in chunks for e in chunk])


@settings(max_examples=300)
@given(
    st.builds(
        RouletteRules,
        variant=st.sampled_from(["european", "american"]),
        min_revolutions=st.integers(1, 5),
        void_on_fault=st.booleans(),
        on_result_mismatch=st.sampled_from(["void", "hold"]),
    ),
    checked_sequences,
)
def test_no_result_of_another_spin_or_disputed_or_reversed_ever_settles(
    rules: RouletteRules, sequence: list[TableEvent]
) -> None:
    """A: a winning_number whose spin is not its round's (or without the round's own launch)
    never settles; B: nor one whose two readings disagree; C: nor one whose rotor turned the
    other way than at the launch. And the engine still never raises, each round ends once."""
    engine = RouletteEngine(TABLE, rules)
    round_spin: int | None = None
    launch: BallLaunched | None = None
    held: WinningNumber | None = None
    ended: list[str] = []
    for event in sequence:
        phase, round_before = engine.phase, engine.current_round
        out = engine.apply(event)
        outcomes = [o for o in out if isinstance(o, Outcome)]
        for o in outcomes:
            ended.append(o.round)
            if o.status != "settled":
                continue
            assert isinstance(event, WinningNumber)
            result = event
            if phase == "held":  # a number entered by hand settles the spin the wheel measured
                assert event.manual
                assert held is not None
                result = dataclasses.replace(event, spin=event.spin or held.spin)
            if result.spin is not None:
                expected = round_spin if round_spin is not None else (launch and launch.spin)
                assert expected is None or result.spin == expected  # A
                assert launch is not None  # A
                assert launch.spin in (None, result.spin)  # A
            if result.status_number is not None:
                assert result.status_number == result.number  # B
            if launch is not None and launch.rotor_direction and result.rotor_direction:
                assert launch.rotor_direction == result.rotor_direction  # C
        if out and all(isinstance(o, Verdict) for o in out) and engine.phase != "held":
            assert engine.current_round == round_before
        if engine.phase == "held" and phase != "held":
            assert isinstance(event, WinningNumber)
            held = event
            assert rules.on_result_mismatch == "hold"
        # The model of the round the engine is in (its own bookkeeping, re-derived).
        if engine.current_round != round_before:
            round_spin = event.spin if isinstance(event, RoundOpen) else None
            launch = None
        if isinstance(event, BallLaunched) and not out and engine.current_round is not None:
            launch = event
    assert len(ended) == len(set(ended))
