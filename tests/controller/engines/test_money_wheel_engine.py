"""The wheel engine with an RNG overlay (Mega Wheel's lucky number, Music Wheel's bonus sector,
Crazy Time's Top Slot) and the numbered wheels (Wheelbet, Spin & Win): when a draw counts, what
a result without one is, and what the outcome says. Rule ids in the test ids."""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.events import (
    BetsClosed,
    Confirm,
    Fault,
    FaultCleared,
    NoSpin,
    RngDraw,
    RngPick,
    RoundOpen,
    Segment,
    TableEvent,
    Void,
    WheelSpin,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import load_rules
from tablectl.controller.engines.wheel import RNG_MISSING, WheelEngine


def make(game: str, **overrides: Any) -> WheelEngine:
    return WheelEngine("W-01", load_rules(game, overrides), game=game)


def feed(engine: WheelEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
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


def at(game: str, label: str, **kw: Any) -> Segment:
    return Segment(index=load_rules(game).segments.index(label), **kw)


def draw(value: int | str, multiplier: int | None = 100) -> RngDraw:
    return RngDraw(numbers=(RngPick(value=value, multiplier=multiplier),))


def start() -> list[TableEvent]:
    return [RoundOpen(), BetsClosed()]


MEGA = "mega_wheel"
MUSIC = "music_wheel"
SETTLED = ("settled", "None")

SCENARIOS = [
    pytest.param(
        MEGA, {}, [*start(), draw(15), WheelSpin(), at(MEGA, "15")], [SETTLED],
        id="l3959-drawn-after-bets-close",
    ),
    pytest.param(
        MEGA, {}, [*start(), WheelSpin(), draw(15), at(MEGA, "20")], [SETTLED],
        id="l3959-drawn-while-the-wheel-turns",
    ),
    pytest.param(
        MEGA, {}, [RoundOpen(), draw(15), BetsClosed(), draw(15), at(MEGA, "1")],
        [("verdict", "rng_before_bets_closed"), SETTLED],
        id="s2.2d-not-while-betting-is-open",
    ),
    pytest.param(
        MEGA, {}, [*start(), draw(15), draw(20), at(MEGA, "1")],
        [("verdict", "rng_duplicate"), SETTLED], id="l3959-one-lucky-number-a-game",
    ),
    pytest.param(
        MEGA, {}, [*start(), at(MEGA, "1", on_divider=True), draw(15), at(MEGA, "1")],
        [("verdict", "respin"), ("verdict", "rng_after_result"), ("verdict", RNG_MISSING),
         ("void", RNG_MISSING)],
        id="l3959-not-after-a-stop",
    ),
    pytest.param(
        MEGA, {}, [*start(), WheelSpin(), at(MEGA, "1")],
        [("verdict", RNG_MISSING), ("void", RNG_MISSING)], id="g1-g3-missing-draw-voids",
    ),
    pytest.param(
        MEGA, {"on_rng_missing": "hold"}, [*start(), at(MEGA, "1"), at(MEGA, "2"), Confirm()],
        [("verdict", RNG_MISSING), ("verdict", "decision_pending"), SETTLED],
        id="g4-missing-draw-held-then-settled",
    ),
    pytest.param(
        MEGA, {"on_rng_missing": "hold"}, [*start(), at(MEGA, "1"), draw(15), Void(reason="")],
        [("verdict", RNG_MISSING), ("verdict", "rng_after_result"),
         ("void", "supervisor_void")],
        id="g4-held-result-is-not-rescued-by-a-late-draw",
    ),
    pytest.param(
        MEGA, {}, [*start(), WheelSpin(), Fault(code="sensor"), draw(15),
                   FaultCleared(code="sensor"), Confirm(), at(MEGA, "15")],
        [("verdict", "device_fault"), SETTLED], id="c42-held-before-the-stop-takes-the-draw",
    ),
    pytest.param(
        MEGA, {}, [*start(), draw(3), draw(15, None), draw(15), at(MEGA, "1")],
        [("verdict", "rng_value_out_of_range"), ("verdict", "rng_pick_invalid"), SETTLED],
        id="l3963-refused-picks-leave-the-round-open",
    ),
    pytest.param(
        MEGA, {}, [draw(15)], [("verdict", "unexpected_event")], id="no-round-yet",
    ),
    pytest.param(
        MUSIC, {}, [*start(), draw(5, None), WheelSpin(), at(MUSIC, "12")], [SETTLED],
        id="l4339-before-start-of-the-spin",
    ),
    pytest.param(
        MUSIC, {}, [*start(), WheelSpin(), draw(5, None), at(MUSIC, "12")],
        [("verdict", "rng_after_spin"), ("verdict", RNG_MISSING), ("void", RNG_MISSING)],
        id="l4339-after-the-spin-started",
    ),
    pytest.param(
        MUSIC, {}, [*start(), WheelSpin(), NoSpin(reason="stalled"), draw(5), at(MUSIC, "2")],
        [("verdict", "respin"), ("verdict", "rng_after_spin"), ("verdict", RNG_MISSING),
         ("void", RNG_MISSING)],
        id="l4339-a-repeated-spin-is-no-second-chance",
    ),
    pytest.param(
        "crazy_time", {"rng": "top_slot"},
        [*start(), WheelSpin(), draw("coin_flip", 10), at("crazy_time", "coin_flip")], [SETTLED],
        id="l2051-top-slot-with-the-spin",
    ),
    pytest.param(
        "crazy_time", {}, [*start(), draw("coin_flip", 10), at("crazy_time", "1")],
        [("verdict", "rng_not_expected"), SETTLED], id="l2051-top-slot-opt-in",
    ),
    pytest.param(
        "dream_catcher", {}, [*start(), draw(5), at("dream_catcher", "5")],
        [("verdict", "rng_not_expected"), SETTLED], id="l1754-no-rng-at-dream-catcher",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("game", "overrides", "events", "expected"), SCENARIOS)
def test_rounds(
    game: str, overrides: dict[str, Any], events: list[TableEvent], expected: list[tuple[str, ...]]
) -> None:
    assert summary(feed(make(game, **overrides), events)) == expected


def result_of(outputs: Sequence[EngineOutput]) -> dict[str, Any]:
    (outcome,) = [o for o in outputs if isinstance(o, Outcome)]
    assert outcome.result is not None
    return outcome.result


def test_l3963_the_lucky_numbers_odds_apply_to_every_sector_of_it() -> None:
    engine = make(MEGA)
    rules = engine.rules
    second = [i for i, s in enumerate(rules.segments) if s == "15"][-1]
    result = result_of(feed(engine, [*start(), draw(15, 250), Segment(index=second)]))
    assert result["rng"] == {
        "kind": "lucky_number", "segment": "15", "index": None, "multiplier": 250, "applies": True,
    }  # fmt: skip
    assert result["multiplier"] == 1  # the wheel's own chain factor is unchanged


def test_g4_a_held_round_settled_without_its_draw_says_so() -> None:
    engine = make(MEGA, on_rng_missing="hold")
    feed(engine, [*start(), at(MEGA, "5")])
    assert engine.snapshot()["held"] is True
    result = result_of(feed(engine, [Confirm()]))
    assert (result["segment"], result["rng"]) == ("5", None)


def test_a_void_carries_the_draw_so_far() -> None:
    engine = make(MEGA)
    (outcome,) = feed(engine, [*start(), draw(40, 500), Void(reason="studio")])
    assert isinstance(outcome, Outcome)
    assert outcome.result is not None
    assert outcome.result["rng"]["segment"] == "40"
    assert outcome.result["rng"]["applies"] is None


def test_the_state_topic_shows_the_draw_only_on_overlay_wheels() -> None:
    engine = make(MUSIC)
    feed(engine, [*start(), draw(47, None)])
    assert engine.snapshot()["rng"] == {
        "kind": "bonus_sector", "segment": "48", "index": 47, "multiplier": None, "applies": None,
    }  # fmt: skip
    assert "rng" not in make("dream_catcher").snapshot()


def test_design_4_3_wheelbet_outcome_00() -> None:
    result = result_of(feed(make("wheelbet"), [*start(), at("wheelbet", "00")]))
    assert (result["number"], result["color"], result["parity"]) == ("00", "green", None)


def test_an_engine_with_a_draw_in_play_pickles_for_checkpoints() -> None:
    engine = make(MEGA)
    feed(engine, [*start(), draw(15, 200)])
    copy = pickle.loads(pickle.dumps(engine))  # noqa: S301 - our own bytes
    assert summary(feed(copy, [at(MEGA, "15")])) == [SETTLED]


# -- properties -----------------------------------------------------------------------------------

events = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(WheelSpin),
    st.builds(Segment, index=st.integers(-1, 55), on_divider=st.booleans()),
    st.builds(NoSpin, reason=st.just("stalled")),
    st.builds(Confirm),
    st.builds(Void, reason=st.just("x")),
    st.builds(Fault, code=st.just("sensor")),
    st.builds(FaultCleared, code=st.just("sensor")),
    st.builds(
        draw,
        value=st.one_of(st.integers(-1, 56), st.sampled_from(["15", "48", "x"])),
        multiplier=st.one_of(st.none(), st.integers(1, 700)),
    ),
)


@settings(max_examples=300)
@given(
    st.sampled_from([MEGA, MUSIC]),
    st.sampled_from(["void", "hold"]),
    st.lists(events, max_size=40),
)
def test_a_settled_overlay_round_carries_a_draw_taken_in_time(
    game: str, on_missing: str, stream: list[TableEvent]
) -> None:
    """§2.2 (d): a settled round's overlay was drawn after bets closed and before the spin
    (Music Wheel) or the stop (Mega Wheel); only a supervisor settles one without it."""
    engine = make(game, on_rng_missing=on_missing)
    rules = engine.rules
    taken: RngDraw | None = None
    phase_at_draw = ""
    for event in stream:
        before = engine.phase
        outputs = engine.apply(event)
        if isinstance(event, RngDraw) and not outputs:
            taken, phase_at_draw = event, before
        for output in outputs:
            if not isinstance(output, Outcome):
                continue
            if output.status == "settled":
                assert output.result is not None
                lucky = output.result["rng"]
                if lucky is None:
                    assert isinstance(event, Confirm)
                    assert on_missing == "hold"
                else:
                    assert taken is not None
                    assert phase_at_draw in (
                        ("closed", "held") if game == MUSIC else ("closed", "spinning", "held")
                    )
                    label, index = output.result["segment"], output.result["index"]
                    assert rules.segments[index] == label
                    hit = (
                        label == lucky["segment"]
                        if lucky["index"] is None
                        else index == lucky["index"]
                    )
                    assert lucky["applies"] is hit
            taken = None
