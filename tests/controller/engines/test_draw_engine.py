"""The ball-draw round engine: rounds, voids and verdicts, driven by normalized events."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import (
    BallDrawn,
    BetsClosed,
    Card,
    Confirm,
    Fault,
    FaultCleared,
    Mixing,
    RoundOpen,
    Segment,
    TableEvent,
    TubeFull,
    Void,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import ENGINES, build_engine, load_rules
from tablectl.controller.engines.draw import DrawEngine
from tablectl.controller.games.draw import DrawRules, in_range


def catalog_rules(variant: str, overrides: Mapping[str, Any] | None = None) -> DrawRules:
    """A ball-draw preset of the catalog, ``overrides`` on top (the engines' loader)."""
    rules: DrawRules = load_rules("lucky7", {"variant": variant, **(overrides or {})})
    return rules


TABLE = "L7-01"


def ts(seconds: float) -> str:
    return f"2026-11-30T10:{int(seconds) // 60:02d}:{seconds % 60:09.6f}Z"


def make(variant: str = "lucky7", **overrides: Any) -> DrawEngine:
    return DrawEngine(TABLE, catalog_rules(variant, overrides), game=variant)


def feed(engine: DrawEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def summary(outputs: Sequence[EngineOutput]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for o in outputs:
        if isinstance(o, Outcome):
            rows.append((o.status, str(o.reason)))
        elif isinstance(o, Verdict):
            rows.append(("verdict", o.code))
    return rows


def outcomes(outputs: Sequence[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def start() -> list[TableEvent]:
    return [RoundOpen(), BetsClosed()]


def balls(*numbers: int, positions: bool = False) -> list[TableEvent]:
    return [
        BallDrawn(ball=n, position=(i if positions else None)) for i, n in enumerate(numbers, 1)
    ]


# -- "Done when" ----------------------------------------------------------------------------------


def test_done_lucky7_eight_balls_in_the_tube_publish_the_first_7_and_flag_the_8th() -> None:
    # seed-001 §6.2 L2319: "If there are more than 7 balls in the tube, the first 7 balls are
    # counted, and the other balls are ignored."
    engine = make("lucky7")
    out = feed(engine, [*start(), *balls(3, 14, 27, 8, 41, 22, 9, 35), TubeFull()])
    assert summary(out) == [("settled", "None"), ("verdict", "extra_ball")]
    result = outcomes(out)[0].result
    assert result is not None
    assert result["balls"] == [3, 14, 27, 8, 41, 22, 9]
    extra = out[1]
    assert isinstance(extra, Verdict)
    assert extra.data["ball"] == 35
    assert extra.round == "L7-01-000001"
    assert extra.rule == "seed-001 §6.2 L2319"


def test_done_a_duplicate_read_never_yields_a_draw_with_a_repeated_ball() -> None:
    # contracts §6: a ball read twice → re-read; the repeat is never put into the draw.
    engine = make("lucky7")
    out = feed(engine, [*start(), *balls(3, 14, 27), BallDrawn(ball=14), BallDrawn(ball=8)])
    assert summary(out) == [("verdict", "duplicate_ball"), ("verdict", "reread_required")]
    out = feed(engine, balls(41, 22, 9, 35))
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["balls"] == [3, 14, 27, 8, 41, 22, 9]
    assert len(set(outcome.result["balls"])) == 7


# -- rounds ---------------------------------------------------------------------------------------


SCENARIOS = [
    pytest.param(
        "lucky7", [*start(), *balls(1, 2, 3, 4, 5, 6, 7)], [("settled", "None")],
        id="seed001-6.2-L2319-seven-balls-settle",
    ),
    pytest.param(
        "lucky7", [*start(), *balls(1, 2, 3, 4, 5, 6), TubeFull()],
        [("void", "draw_not_taken_place")],
        id="seed001-6.2-L2319-C38-six-balls-not-taken-place",
    ),
    pytest.param(
        "lucky7", [RoundOpen(), BallDrawn(ball=5)], [("void", "ball_before_bets_closed")],
        id="seed001-6.7-L2859-ball-before-bets-closed",
    ),
    pytest.param(
        "lucky7", [*start(), BallDrawn(ball=43)],
        [("verdict", "ball_out_of_range"), ("verdict", "reread_required")],
        id="seed001-6-general-out-of-range-held",
    ),
    pytest.param(
        "lucky7", [*start(), BallDrawn(ball=5, quality=3)], [("verdict", "reread_required")],
        id="GAP-low-quality-held",
    ),
    pytest.param(
        "lucky7", [*start(), BallDrawn(ball=5, quality=3), Confirm(), *balls(6, 7, 8, 9, 10, 11)],
        [("verdict", "reread_required"), ("settled", "None")],
        id="GAP-supervisor-confirms-the-read",
    ),
    pytest.param(
        "lucky7", [*start(), BallDrawn(ball=5, quality=3), Void(reason="misread")],
        [("verdict", "reread_required"), ("void", "misread")],
        id="GEN-supervisor-voids-a-held-draw",
    ),
    pytest.param(
        "lucky5", [*start(), *balls(30, 2, 17, 5, 9, positions=True)], [("settled", "None")],
        id="seed001-6.1-L2123-five-cylinders",
    ),
    pytest.param(
        "lotto_5_35", [*start(), *balls(1, 2, 3, 4, 5)], [],
        id="seed001-6.8-L4579-waits-for-the-6th",
    ),
    pytest.param(
        "lotto_5_35", [*start(), *balls(1, 2, 3, 4, 5, 35)], [("settled", "None")],
        id="seed001-6.8-L4579-6th-ball-settles",
    ),
    pytest.param(
        "mega_ball", [*start(), *balls(*range(1, 22)), TubeFull()], [("settled", "None")],
        id="seed001-6.7-L2863-one-mega-ball",
    ),
    pytest.param(
        "mega_ball", [*start(), *balls(*range(1, 23))], [("settled", "None")],
        id="seed001-6.7-L2863-two-mega-balls",
    ),
    pytest.param(
        "mega_ball", [*start(), *balls(*range(1, 20)), TubeFull()],
        [("void", "draw_not_taken_place")], id="seed001-6.7-19-balls-short",
    ),
    pytest.param(
        "bingo37", [*start(), BallDrawn(ball=37)], [("settled", "None")],
        id="seed001-6.9-L4587-one-ball",
    ),
    pytest.param(
        "lucky7", [*start(), *balls(1, 2), Fault(code="blower"), Confirm(), *balls(3, 4, 5, 6, 7)],
        [("verdict", "device_fault"), ("settled", "None")],
        id="seed001-C42-fault-decided-by-supervisor",
    ),
    pytest.param(
        "lucky7", [*start(), *balls(1, 2), Fault(code="blower"), Void(reason="device_fault")],
        [("verdict", "device_fault"), ("void", "device_fault")],
        id="seed001-G4-fault-voided-by-supervisor",
    ),
    pytest.param(
        "lucky7", [RoundOpen(), RoundOpen()], [("void", "round_abandoned")],
        id="R15-round-abandoned",
    ),
    pytest.param(
        "lucky7", [BallDrawn(ball=5)], [("verdict", "unexpected_event")],
        id="practice10-ball-with-no-round",
    ),
    pytest.param(
        "lucky7", [*start(), Segment(index=1)], [("verdict", "not_for_this_game")],
        id="DESIGN-4.4-not-for-this-game",
    ),
    pytest.param(
        "lucky7", [Confirm()], [("verdict", "unexpected_event")], id="practice10-nothing-held",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("variant", "events", "expected"), SCENARIOS)
def test_rounds(variant: str, events: list[TableEvent], expected: list[tuple[str, ...]]) -> None:
    assert summary(feed(make(variant), events)) == expected


def test_seed001_g1_fault_voids_when_the_table_says_so() -> None:
    engine = make("lucky7", on_fault="void")
    out = feed(engine, [*start(), *balls(1, 2), Fault(code="reader")])
    assert summary(out) == [("void", "device_fault")]
    assert outcomes(out)[0].result == {"balls": [1, 2]}


def test_r14_a_fault_during_betting_latches_and_bets_stay_open() -> None:
    engine = make("lucky7")
    out = feed(engine, [RoundOpen(), Fault(code="blower"), BetsClosed()])
    assert summary(out) == [("verdict", "fault_latched")]
    assert engine.phase == "open"
    out = feed(engine, [FaultCleared(code="blower"), BetsClosed(), *balls(1, 2, 3, 4, 5, 6, 7)])
    assert summary(out) == [("settled", "None")]


def test_r14_no_round_opens_while_a_fault_is_latched() -> None:
    engine = make("lucky7")
    assert summary(feed(engine, [Fault(code="blower"), RoundOpen()])) == [
        ("verdict", "fault_latched")
    ]
    assert engine.current_round is None


def test_a_held_draw_is_not_abandoned_by_a_new_round() -> None:
    engine = make("lucky7")
    out = feed(engine, [*start(), BallDrawn(ball=5, quality=1), RoundOpen()])
    assert summary(out) == [("verdict", "reread_required"), ("verdict", "decision_pending")]
    assert engine.current_round == "L7-01-000001"


def test_a_draw_completed_while_held_waits_for_the_hold() -> None:
    # The fault hold keeps the outcome back even when every ball is in (seed-001 G3/C42).
    engine = make("lucky7")
    out = feed(engine, [*start(), *balls(1, 2, 3), Fault(code="reader"), *balls(4, 5, 6, 7)])
    assert summary(out) == [("verdict", "device_fault")]
    assert summary(engine.apply(Confirm())) == [("settled", "None")]


def test_tube_full_while_held_is_judged_once_the_hold_is_settled() -> None:
    engine = make("lucky7")
    feed(engine, [*start(), *balls(1, 2, 3, 4, 5, 6), BallDrawn(ball=7, quality=1), TubeFull()])
    assert engine.phase == "held"
    assert summary(engine.apply(BallDrawn(ball=7, quality=99))) == [("settled", "None")]


def test_a_repeat_read_after_the_outcome_is_a_duplicate_not_an_extra() -> None:
    engine = make("lucky7")
    feed(engine, [*start(), *balls(1, 2, 3, 4, 5, 6, 7)])
    assert summary(engine.apply(BallDrawn(ball=7))) == [("verdict", "duplicate_ball")]
    assert summary(engine.apply(BallDrawn(ball=8))) == [("verdict", "extra_ball")]


def test_extras_ignore_reports_nothing() -> None:
    engine = make("lucky7", extras="ignore")
    out = feed(engine, [*start(), *balls(1, 2, 3, 4, 5, 6, 7, 8)])
    assert summary(out) == [("settled", "None")]


# -- mixing (regulatory R16) ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mixing", "first_ball_at", "expected"),
    [
        pytest.param([Mixing(on=True, ts=ts(0))], 30.0, [], id="R16-mixed-long-enough"),
        pytest.param(
            [Mixing(on=True, ts=ts(0))], 10.0, [("void", "mixing_too_short")],
            id="R16-mixed-too-short",
        ),
        pytest.param([], 30.0, [("void", "mixing_too_short")], id="R16-never-mixed"),
        pytest.param(
            [Mixing(on=True, ts=ts(0)), Mixing(on=False, ts=ts(5))], 60.0,
            [("void", "mixing_too_short")], id="R16-mixing-stopped-early",
        ),
        pytest.param(
            [Mixing(on=True)], 60.0, [("void", "mixing_too_short")],
            id="R16-unknown-duration-cannot-show-the-minimum",
        ),
    ],
)  # fmt: skip
def test_minimum_mixing_before_the_first_ball(
    mixing: list[TableEvent], first_ball_at: float, expected: list[tuple[str, ...]]
) -> None:
    engine = make("lucky7", min_mixing_seconds=20)
    events = [RoundOpen(ts=ts(0)), *mixing, BetsClosed(ts=ts(1))]
    events.append(BallDrawn(ball=4, ts=ts(first_ball_at)))
    assert summary(feed(engine, events)) == expected


def test_r16_mixing_is_checked_at_the_first_ball_even_after_a_fault_hold() -> None:
    engine = make("lucky7", min_mixing_seconds=20)
    events = [
        RoundOpen(ts=ts(0)),
        Mixing(on=True, ts=ts(0)),
        BetsClosed(ts=ts(1)),
        Fault(code="reader", ts=ts(2)),
        Confirm(ts=ts(3)),
        BallDrawn(ball=4, ts=ts(5)),
    ]
    assert summary(feed(engine, events)) == [
        ("verdict", "device_fault"),
        ("void", "mixing_too_short"),
    ]


# -- construction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game", sorted(g for g, (m, _) in ENGINES.items() if m == "tablectl.controller.engines.draw")
)
def test_every_registered_draw_game_builds_from_its_preset(game: str) -> None:
    engine = build_engine("T1", game, {}, source="t.toml")
    assert engine.game == game
    assert isinstance(engine, DrawEngine)


def test_rules_override_the_preset_and_pick_a_variant() -> None:
    red = [*range(2, 31), 34]  # L2537: 30 red (faces 138), 30 blue (132), faces (n - 1) % 10
    lucky6_60 = {
        "variant": "lucky6_60",
        "values": [n % 10 for n in range(60)],
        "colors": {"red": red, "blue": [b for b in range(1, 61) if b not in red]},
    }
    engine = build_engine("T1", "lucky6", lucky6_60, source="t")
    assert isinstance(engine, DrawEngine)
    assert (engine.game, engine.rules.balls, engine.rules.draw) == ("lucky6", 60, 6)
    engine = build_engine("T1", "keno", {"balls": 70}, source="t")
    assert isinstance(engine, DrawEngine)
    assert engine.rules.balls == 70


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"variant": "powerball"}, "rules.variant: no draw preset 'powerball'"),
        ({"draw": 0}, "rules.draw"),
        ({"tube": 3}, "unknown key 'rules.tube'"),
        ({"variant": "lucky6_60"}, "values"),
    ],
)
def test_bad_rules_are_config_errors_naming_the_key(rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_engine("T1", "lucky6", rules, source="t.toml")


def test_snapshot() -> None:
    engine = make("lucky7")
    feed(engine, [*start(), Mixing(on=True), *balls(4, 5), BallDrawn(ball=9, quality=2)])
    snap = engine.snapshot()
    assert snap["phase"] == "held"
    assert snap["balls"] == [4, 5]
    assert snap["held"] == [{"position": None, "read": 3, "reason": "low_quality"}]
    assert snap["mixing"] is True
    feed(engine, [BallDrawn(ball=9), *balls(10, 11, 12, 13)])
    snap = engine.snapshot()
    assert (snap["phase"], snap["round"], snap["last_balls"]) == (
        "drawn",
        None,
        [4, 5, 9, 10, 11, 12, 13],
    )
    assert not engine.conceals(BallDrawn(ball=1))


# -- properties -----------------------------------------------------------------------------------

event_strategy = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(
        BallDrawn,
        ball=st.integers(-1, 44),
        position=st.one_of(st.none(), st.integers(0, 9)),
        quality=st.one_of(st.none(), st.integers(0, 100)),
        manual=st.booleans(),
    ),
    st.builds(TubeFull),
    st.builds(Mixing, on=st.booleans()),
    st.builds(Confirm),
    st.builds(Void, reason=st.sampled_from(["", "misread"])),
    st.builds(Fault, code=st.sampled_from(["blower", "reader"])),
    st.builds(FaultCleared, code=st.sampled_from(["blower", "reader"])),
    st.builds(Card, card=st.just("KH")),
)


@settings(max_examples=300)
@given(
    st.sampled_from(["lucky7", "lucky5", "lotto_5_35", "mega_ball", "bingo38"]),
    st.sampled_from(["decide", "void"]),
    st.lists(event_strategy, max_size=60),
)
def test_any_sequence_never_raises_never_repeats_a_ball_and_ends_each_round_once(
    variant: str, on_fault: str, events: list[TableEvent]
) -> None:
    engine = make(variant, on_fault=on_fault)
    rules = engine.rules
    ended: list[str] = []
    for event in events:
        for output in engine.apply(event):
            if not isinstance(output, Outcome):
                continue
            assert output.round not in ended
            ended.append(output.round)
            if output.status == "settled":
                assert output.result is not None
                drawn = [*output.result["balls"], *output.result["bonus"]]
                assert len(output.result["balls"]) == rules.draw
                assert len(set(drawn)) == len(drawn)
                assert all(in_range(rules, b) for b in drawn)
        live = engine.snapshot()["balls"]
        assert len(set(live)) == len(live)
