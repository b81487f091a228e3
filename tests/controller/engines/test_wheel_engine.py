"""The money-wheel round engine: spins, re-spins, multiplier chains, voids and verdicts."""

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
    Confirm,
    Fault,
    FaultCleared,
    NoSpin,
    RoundOpen,
    Segment,
    TableEvent,
    Void,
    WheelSpin,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import ENGINES, build_engine, load_rules
from tablectl.controller.engines.wheel import WheelEngine
from tablectl.controller.games.wheel import WheelRules


def catalog_rules(variant: str, overrides: Mapping[str, Any] | None = None) -> WheelRules:
    """A money-wheel preset of the catalog, ``overrides`` on top (the engines' loader)."""
    rules: WheelRules = load_rules("dream_catcher", {"variant": variant, **(overrides or {})})
    return rules


TABLE = "DC-01"


def make(variant: str = "dream_catcher", **overrides: Any) -> WheelEngine:
    return WheelEngine(TABLE, catalog_rules(variant, overrides), game=variant)


def feed(engine: WheelEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
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
            reason = o.data.get("reason")
            rows.append(("verdict", o.code, *([reason] if reason else [])))
    return rows


def outcomes(outputs: Sequence[EngineOutput]) -> list[Outcome]:
    return [o for o in outputs if isinstance(o, Outcome)]


def at(variant: str, label: str, **kw: Any) -> Segment:
    """The segment event for the first segment labelled ``label`` in the preset's layout."""
    return Segment(index=catalog_rules(variant).segments.index(label), **kw)


def start() -> list[TableEvent]:
    return [RoundOpen(), BetsClosed()]


# -- "Done when" ----------------------------------------------------------------------------------


def test_done_a_19_sector_spin_with_2_clockwise_turns_is_a_respin_not_a_result() -> None:
    # seed-001 §5.4 L2471: "The round is considered succeeded if the wheel made at least 3 full
    # spins clockwise"; otherwise "the spin must be repeated" with the same bets.
    engine = make("wheel_of_fortune")
    out = feed(
        engine,
        [*start(), WheelSpin(direction="cw"), at("wheel_of_fortune", "7", revolutions=2)],
    )
    assert summary(out) == [("verdict", "respin", "min_revolutions")]
    assert outcomes(out) == []
    assert engine.current_round == "DC-01-000001"  # bets stand: same round
    out = feed(engine, [WheelSpin(direction="cw"), at("wheel_of_fortune", "12", revolutions=4)])
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert (outcome.result["segment"], outcome.result["respins"]) == ("12", 1)
    assert outcome.round == "DC-01-000001"


def test_done_dream_catcher_2x_then_7x_then_5_is_one_round_with_multiplier_14() -> None:
    # seed-001 §5.1 L1754: "2x, then … 7x, and … 5 … (5 to 1) x 2 x 7".
    engine = make("dream_catcher")
    spins = [
        *start(),
        WheelSpin(),
        at("dream_catcher", "2x"),
        WheelSpin(),
        at("dream_catcher", "7x"),
        WheelSpin(),
        at("dream_catcher", "5"),
    ]
    out = feed(engine, spins)
    (outcome,) = outcomes(out)
    assert summary(out) == [("settled", "None")]
    assert outcome.result is not None
    assert outcome.result["segment"] == "5"
    assert outcome.result["index"] == catalog_rules("dream_catcher").segments.index("5")
    assert outcome.result["multiplier"] == 14
    assert [s["segment"] for s in outcome.result["spins"]] == ["2x", "7x", "5"]


# -- rounds ---------------------------------------------------------------------------------------

DC = "dream_catcher"
WOF = "wheel_of_fortune"

SCENARIOS = [
    pytest.param(
        DC, [*start(), WheelSpin(), at(DC, "40")], [("settled", "None")],
        id="seed001-5.1-L1754-one-spin",
    ),
    pytest.param(
        DC, [*start(), at(DC, "10")], [("settled", "None")],
        id="sensor-reports-stops-only",
    ),
    pytest.param(
        DC, [*start(), at(DC, "10", on_divider=True), at(DC, "20")],
        [("verdict", "respin", "on_divider"), ("settled", "None")],
        id="seed001-5.3-L2091-C6-divider-respin",
    ),
    pytest.param(
        WOF, [*start(), WheelSpin(direction="ccw"), at(WOF, "3", revolutions=5)],
        [("verdict", "respin", "wrong_direction")],
        id="seed001-5.4-L2471-counterclockwise-respin",
    ),
    pytest.param(
        WOF, [*start(), WheelSpin(direction="ccw"), WheelSpin(direction="cw"),
              at(WOF, "cup", revolutions=3)],
        [("settled", "None")],
        id="seed001-5.4-L2471-ccw-then-cw-3-turns",
    ),
    pytest.param(
        WOF, [*start(), WheelSpin(direction="cw"), at(WOF, "3")],
        [("verdict", "respin", "revolutions_unknown")],
        id="seed001-C37-turns-must-be-counted",
    ),
    pytest.param(
        DC, [*start(), WheelSpin(), NoSpin(reason="wheel_stalled"), WheelSpin(), at(DC, "1")],
        [("verdict", "respin", "wheel_stalled"), ("settled", "None")],
        id="seed001-5.4-L2471-spin-repeated-by-the-dealer",
    ),
    pytest.param(
        DC, [RoundOpen(), at(DC, "1")], [("void", "result_before_bets_closed")],
        id="V-RL-3-analogue-result-before-bets-closed",
    ),
    pytest.param(
        DC, [*start(), WheelSpin(), Fault(code="sensor")], [("void", "device_fault")],
        id="seed001-5.1-L1768-malfunction-void-bets-returned",
    ),
    pytest.param(
        "crazy_time", [*start(), at("crazy_time", "coin_flip")], [("settled", "None")],
        id="seed001-5.3-L2059-bonus-segment-is-a-result",
    ),
    pytest.param(
        "monopoly", [*start(), WheelSpin(), Fault(code="sensor"), at("monopoly", "5"), Confirm()],
        [("verdict", "device_fault"), ("settled", "None")],
        id="seed001-C42-fault-decided-by-supervisor",
    ),
    pytest.param(
        "monopoly", [*start(), WheelSpin(), Fault(code="sensor"), Confirm(), at("monopoly", "5")],
        [("verdict", "device_fault"), ("settled", "None")],
        id="seed001-C42-resume-then-manual-segment",
    ),
    pytest.param(
        "monopoly", [*start(), at("monopoly", "chance"), Confirm()], [("settled", "None")],
        id="seed001-5.2-L1877-C25-cash-chance-ends-the-round",
    ),
    pytest.param(
        DC, [*start(), at(DC, "2x"), Confirm()], [("verdict", "unexpected_event")],
        id="seed001-5.1-L1754-multiplier-chain-must-go-on",
    ),
    pytest.param(
        DC, [*start(), at(DC, "2x"), RoundOpen()], [("void", "round_abandoned")],
        id="R15-round-abandoned-mid-chain",
    ),
    pytest.param(
        DC, [*start(), at(DC, "2x"), BetsClosed()], [("verdict", "unexpected_event")],
        id="seed001-5.1-L1754-no-betting-between-chained-spins",
    ),
    pytest.param(
        DC, [*start(), Segment(index=54)], [("verdict", "segment_out_of_range")],
        id="layout-index-off-the-wheel",
    ),
    pytest.param(DC, [at(DC, "1")], [("verdict", "unexpected_event")], id="practice10-no-round"),
    pytest.param(
        DC, [*start(), BallDrawn(ball=3)], [("verdict", "not_for_this_game")],
        id="DESIGN-4.4-not-for-this-game",
    ),
    pytest.param(
        DC, [*start(), Void(reason="")], [("void", "supervisor_void")], id="GEN-supervisor-void",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("variant", "events", "expected"), SCENARIOS)
def test_rounds(variant: str, events: list[TableEvent], expected: list[tuple[str, ...]]) -> None:
    assert summary(feed(make(variant), events)) == expected


def test_a_respin_inside_a_chain_keeps_the_multiplier() -> None:
    engine = make(DC)
    out = feed(
        engine,
        [*start(), at(DC, "7x"), at(DC, "10", on_divider=True), at(DC, "2x"), at(DC, "1")],
    )
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert (outcome.result["multiplier"], outcome.result["respins"]) == (14, 1)


def test_r14_a_fault_during_betting_latches_and_bets_stay_open() -> None:
    engine = make(DC)
    assert summary(feed(engine, [RoundOpen(), Fault(code="sensor"), BetsClosed()])) == [
        ("verdict", "fault_latched")
    ]
    assert summary(feed(engine, [FaultCleared(code="sensor"), BetsClosed(), at(DC, "1")])) == [
        ("settled", "None")
    ]


def test_a_held_round_refuses_a_new_round() -> None:
    engine = make("monopoly")
    out = feed(engine, [*start(), Fault(code="sensor"), RoundOpen()])
    assert summary(out) == [("verdict", "device_fault"), ("verdict", "decision_pending")]


def test_void_result_carries_the_spins_so_far() -> None:
    engine = make(DC)
    out = feed(engine, [*start(), at(DC, "2x"), Fault(code="sensor")])
    assert outcomes(out)[0].result == {
        "spins": [
            {
                "segment": "2x",
                "index": catalog_rules(DC).segments.index("2x"),
                "revolutions": None,
                "direction": None,
            }
        ],
        "respins": 0,
    }


def test_snapshot() -> None:
    engine = make(DC)
    feed(engine, [*start(), at(DC, "2x")])
    snap = engine.snapshot()
    assert (snap["phase"], snap["multiplier"], len(snap["spins"])) == ("chained", 2, 1)
    feed(engine, [at(DC, "20")])
    assert engine.snapshot()["last"] == {"segment": "20", "multiplier": 2}
    assert not engine.conceals(at(DC, "1"))


# -- construction ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "game", sorted(g for g, (m, _) in ENGINES.items() if m == "tablectl.controller.engines.wheel")
)
def test_every_registered_wheel_game_builds_from_its_preset(game: str) -> None:
    engine = build_engine("T1", game, {}, source="t.toml")
    assert isinstance(engine, WheelEngine)
    assert engine.game == game


@pytest.mark.parametrize(
    ("game", "rules", "message"),
    [
        ("dream_catcher", {"variant": "roulette"}, "rules.variant: no wheel preset"),
        ("dream_catcher", {"segments": ["1", "2"]}, "do not match counts"),
        ("wheel_of_fortune", {"min_revolutions": -1}, "rules.min_revolutions"),
        ("dream_catcher", {"pins": True}, "unknown key 'rules.pins'"),
    ],
)
def test_bad_rules_are_config_errors(game: str, rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        build_engine("T1", game, rules, source="t.toml")


def test_a_table_layout_from_config() -> None:
    layout = [str(n) for n in range(18, 0, -1)] + ["cup"]
    engine = build_engine("T1", "wheel_of_fortune", {"segments": layout}, source="t")
    assert isinstance(engine, WheelEngine)
    out = engine.apply(RoundOpen()) + engine.apply(BetsClosed())
    out += engine.apply(Segment(index=0, revolutions=3, direction="cw"))
    (outcome,) = outcomes(out)
    assert outcome.result is not None
    assert outcome.result["segment"] == "18"


# -- properties -----------------------------------------------------------------------------------

event_strategy = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(WheelSpin, direction=st.sampled_from([None, "cw", "ccw"])),
    st.builds(
        Segment,
        index=st.integers(-1, 56),
        revolutions=st.one_of(st.none(), st.integers(0, 6)),
        direction=st.sampled_from([None, "cw", "ccw"]),
        on_divider=st.booleans(),
    ),
    st.builds(NoSpin, reason=st.sampled_from(["", "stalled"])),
    st.builds(Confirm),
    st.builds(Void, reason=st.just("x")),
    st.builds(Fault, code=st.just("sensor")),
    st.builds(FaultCleared, code=st.just("sensor")),
)


@settings(max_examples=300)
@given(
    st.sampled_from(["dream_catcher", "wheel_of_fortune", "monopoly", "crazy_time"]),
    st.lists(event_strategy, max_size=50),
)
def test_any_sequence_never_raises_and_a_bad_spin_is_never_a_result(
    variant: str, events: list[TableEvent]
) -> None:
    engine = make(variant)
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
                assert rules.segments[output.result["index"]] == output.result["segment"]
                for spin in output.result["spins"]:
                    if variant == "wheel_of_fortune":
                        assert spin["direction"] == "cw"
                        assert spin["revolutions"] >= 3
                for spin in output.result["spins"][:-1]:
                    assert spin["segment"] in rules.multipliers
