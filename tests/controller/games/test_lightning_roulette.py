"""Lightning Roulette (seed-001 L113–115; seed-000 §4 L245–265): the rules of the RNG's lightning
numbers, the engine's rounds around them, and the replay fixture."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import (
    BallLaunched,
    BetsClosed,
    Confirm,
    Fault,
    NoSpin,
    RngDraw,
    RngPick,
    RoundOpen,
    TableEvent,
    Void,
    WinningNumber,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import Engine, build_engine, load_rules
from tablectl.controller.engines.roulette import RouletteEngine
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.lightning_roulette import (
    DEFAULT_MULTIPLIERS,
    check_lightning,
    with_lightning,
)
from tablectl.controller.games.roulette import spin_result
from tests.support.replay import replay, table_config

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"
TS = "2026-11-30T10:00:00.000000Z"


def make(**rules: Any) -> RouletteEngine:
    engine = build_engine("LR-1", "lightning_roulette", rules, source="test")
    assert isinstance(engine, RouletteEngine)
    return engine


def feed(engine: Engine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    return [out for event in events for out in engine.apply(event)]


def draw(*picks: tuple[int | str, int | None]) -> RngDraw:
    return RngDraw(numbers=tuple(RngPick(value=v, multiplier=m) for v, m in picks))


def codes(outputs: Sequence[EngineOutput]) -> list[str]:
    """Verdicts as their code, outcomes as ``status:reason``."""
    rows: list[str] = []
    for o in outputs:
        if isinstance(o, Verdict):
            rows.append(o.code)
        elif isinstance(o, Outcome):
            rows.append(f"{o.status}:{o.reason or ''}")
    return rows


SPIN = WinningNumber(number=17, revolutions=6, ball_direction="ccw", rotor_direction="cw", ts=TS)
OPENED: list[TableEvent] = [RoundOpen(), BallLaunched(rotor_direction="cw"), BetsClosed()]


# -- the picks (pure) -----------------------------------------------------------------------------


def check(*picks: tuple[int | str, int | None], variant: str = "european") -> Any:
    return check_lightning(
        draw(*picks).numbers,
        variant=variant,  # type: ignore[arg-type]
        multipliers=DEFAULT_MULTIPLIERS,
        count=(1, 5),
    )


@pytest.mark.parametrize(
    ("picks", "code", "reason"),
    [
        # seed-000 L255: "one to five numbers are drawn".
        pytest.param([(17, 300)], None, None, id="l255_one_number"),
        pytest.param([(n, 50) for n in range(5)], None, None, id="l255_five_numbers"),
        pytest.param([(n, 50) for n in range(6)], "rng_pick_invalid", "count", id="l255_six"),
        # seed-000 L256–265: the multipliers are 50 … 500 (no 75, no 450, no 1000).
        pytest.param([(8, 75)], "rng_pick_invalid", "multiplier", id="l256_75x"),
        pytest.param([(8, 1000)], "rng_pick_invalid", "multiplier", id="l256_1000x"),
        pytest.param([(8, 500), (9, 50)], None, None, id="l256_the_ends"),
        # seed-001 L115: "lucky numbers" are numbers of the wheel; each has its "lucky win".
        pytest.param([(37, 100)], "rng_value_out_of_range", None, id="l115_37"),
        pytest.param([("17", 100)], "rng_value_out_of_range", None, id="l115_string"),
        pytest.param([("00", 100)], "rng_value_out_of_range", None, id="l115_00_single_zero"),
        pytest.param([(0, 500)], None, None, id="l115_zero_is_a_number"),
        pytest.param([(4, 100), (4, 50)], "rng_pick_invalid", "repeated", id="l115_twice"),
        pytest.param([(4, None)], "rng_pick_invalid", "no_multiplier", id="l115_no_win"),
    ],
)
def test_l255_l265_l115_lightning_picks(
    picks: list[tuple[int | str, int | None]], code: str | None, reason: str | None
) -> None:
    found = check(*picks)
    if code is None:
        assert found == tuple(picks)
        return
    assert isinstance(found, Finding)
    assert (found.code, found.data.get("reason")) == (code, reason)
    assert found.rule.startswith("seed-001 L113-115")


def test_l115_an_american_wheels_lightning_number_may_be_00() -> None:
    assert check(("00", 200), variant="american") == (("00", 200),)


def test_l248_the_multiplier_is_the_winning_numbers_and_none_for_another_number() -> None:
    result = spin_result("european", 17, 6)
    lightning = ((17, 300), (4, 50))
    assert with_lightning(result, lightning)["multiplier"] == 300
    other = with_lightning(spin_result("european", 5, 6), lightning)
    assert other["multiplier"] is None
    assert other["lightning"] == [{"value": 17, "multiplier": 300}, {"value": 4, "multiplier": 50}]
    # A supervisor's settlement of a round without a draw: base odds.
    assert with_lightning(result, ())["multiplier"] is None


# -- the rules (config) ---------------------------------------------------------------------------


def test_the_preset_is_seed_000s_draw() -> None:
    rules = load_rules("lightning_roulette")
    assert rules.lightning is True
    assert tuple(rules.lightning_multipliers) == DEFAULT_MULTIPLIERS
    assert (rules.lightning_min, rules.lightning_max) == (1, 5)
    assert rules.on_rng_missing == "void"


@pytest.mark.parametrize(
    ("rules", "match"),
    [
        ({"lightning_min": 3, "lightning_max": 2}, "lightning_min"),
        ({"lightning_multipliers": [0]}, "lightning_multipliers"),
        ({"balls": 2}, "no rule book's game plays both"),
        ({"on_rng_missing": "settle"}, "on_rng_missing"),
    ],
)
def test_bad_lightning_rules_are_config_errors(rules: dict[str, Any], match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        load_rules("lightning_roulette", rules, source="t.toml")


# -- the engine -----------------------------------------------------------------------------------


def test_l115_a_lightning_number_settles_with_its_multiplier() -> None:
    engine = make()
    out = feed(engine, [*OPENED, draw((17, 300), (4, 50)), SPIN])
    (outcome,) = out
    assert isinstance(outcome, Outcome)
    assert outcome.game == "lightning_roulette"
    assert outcome.result is not None
    assert outcome.result["number"] == 17
    assert outcome.result["lightning"] == [
        {"value": 17, "multiplier": 300},
        {"value": 4, "multiplier": 50},
    ]
    assert outcome.result["multiplier"] == 300
    # Every roulette field is there: a consumer of roulette results reads it as one.
    assert {"color", "revolutions", "parity", "dozen", "column"} <= set(outcome.result)
    assert engine.snapshot()["lightning"] is None  # the round ended


def test_the_snapshot_shows_the_rounds_lightning_numbers_once_drawn() -> None:
    engine = make()
    feed(engine, [*OPENED, draw((9, 100))])
    assert engine.snapshot()["lightning"] == [{"value": 9, "multiplier": 100}]


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        # seed-001 L115 "at the end of the time of betting": not while bets are open.
        pytest.param(
            [RoundOpen(), draw((9, 100)), BetsClosed(), draw((9, 100)), SPIN],
            ["rng_before_bets_closed", "settled:"],
            id="l115_before_bets_closed",
        ),
        # One draw a round.
        pytest.param(
            [*OPENED, draw((9, 100)), draw((10, 100)), SPIN],
            ["rng_duplicate", "settled:"],
            id="l115_duplicate",
        ),
        # §2.2 (d): committed before the result; after it, it is refused.
        pytest.param(
            [*OPENED, draw((17, 100)), SPIN, draw((17, 500))],
            ["settled:", "rng_after_result"],
            id="s22d_after_result",
        ),
        # No round yet: the machine refuses it.
        pytest.param([draw((17, 100))], ["unexpected_event"], id="no_round"),
        # A refused draw leaves the round without one: the result is rng_missing.
        pytest.param(
            [*OPENED, draw((40, 100)), SPIN],
            ["rng_value_out_of_range", "rng_missing", "void:rng_missing"],
            id="l115_bad_draw_then_missing",
        ),
    ],
)
def test_l115_the_draw_comes_once_between_bets_closed_and_the_result(
    events: list[TableEvent], expected: list[str]
) -> None:
    assert codes(feed(make(), events)) == expected


def test_l115_no_draw_by_the_result_voids_the_round_by_default() -> None:
    out = feed(make(), [*OPENED, SPIN])
    assert codes(out) == ["rng_missing", "void:rng_missing"]
    assert isinstance(out[1], Outcome)
    assert out[1].result == {"number": 17}


def test_g4_on_rng_missing_hold_waits_for_a_confirm_at_the_base_odds() -> None:
    engine = make(on_rng_missing="hold")
    out = feed(engine, [*OPENED, SPIN])
    assert codes(out) == ["rng_missing"]
    assert engine.phase == "held"
    # The wheel goes on, the draw comes late, a hand-entered number: all refused while held.
    late = feed(
        engine,
        [RoundOpen(), draw((17, 500)), WinningNumber(number=3, manual=True), BetsClosed()],
    )
    assert codes(late) == [
        "decision_pending",
        "rng_after_result",
        "decision_pending",
        "decision_pending",
    ]
    (settled,) = feed(engine, [Confirm()])
    assert isinstance(settled, Outcome)
    assert settled.status == "settled"
    assert settled.result is not None
    assert (settled.result["number"], settled.result["multiplier"]) == (17, None)
    assert settled.result["lightning"] == []
    assert engine.snapshot()["last_number"] == 17


def test_g4_a_held_round_may_be_voided_instead() -> None:
    engine = make(on_rng_missing="hold")
    feed(engine, [*OPENED, SPIN])
    (void,) = feed(engine, [Void(reason="rng_link_down")])
    assert isinstance(void, Outcome)
    assert (void.status, void.reason, void.result) == ("void", "rng_link_down", {"number": 17})


def test_confirm_cannot_settle_a_round_held_for_two_readings() -> None:
    """R22: a result_mismatch hold waits for a void or the number by hand, not a confirm."""
    engine = make(on_result_mismatch="hold")
    mismatch = WinningNumber(number=17, status_number=18, revolutions=6)
    assert codes(feed(engine, [*OPENED, draw((17, 300)), mismatch])) == ["result_mismatch"]
    assert codes(feed(engine, [Confirm()])) == ["decision_pending"]
    (settled,) = feed(engine, [WinningNumber(number=17, manual=True)])
    assert isinstance(settled, Outcome)
    assert settled.result is not None
    assert settled.result["multiplier"] == 300


@pytest.mark.parametrize(
    ("ending", "reason"),
    [
        (NoSpin(reason="misspin"), "misspin"),
        (Void(reason="foreign_object"), "foreign_object"),
        (Fault(code="ss2_fault_5"), "device_fault"),
    ],
)
def test_rl_i1_a_void_spins_result_names_its_lightning_numbers(
    ending: TableEvent, reason: str
) -> None:
    """seed-000 §3.4: "Spread and Lightning RNG results from the invalid spin must be discarded
    and redrawn": the void says which were drawn, and the next round draws anew."""
    engine = make()
    (void,) = feed(engine, [*OPENED, draw((9, 100)), ending])
    assert isinstance(void, Outcome)
    assert (void.reason, void.result) == (reason, {"lightning": [{"value": 9, "multiplier": 100}]})


def test_plain_roulette_still_refuses_a_draw_and_a_confirm_as_it_always_did() -> None:
    engine = build_engine("R-1", "roulette", {}, source="test")
    out = feed(engine, [*OPENED, draw((9, 100)), Confirm(), SPIN])
    assert codes(out) == ["unexpected_event", "unexpected_event", "settled:"]
    assert isinstance(out[0], Verdict)
    assert "'rng_draw' is not allowed in state 'closed'" in out[0].message
    assert isinstance(out[2], Outcome)
    assert out[2].result is not None
    assert "lightning" not in out[2].result


# -- properties -----------------------------------------------------------------------------------

events = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(BallLaunched, rotor_direction=st.sampled_from(["cw", "ccw", None])),
    st.builds(
        WinningNumber,
        number=st.integers(-1, 38),
        revolutions=st.one_of(st.none(), st.integers(0, 12)),
        manual=st.booleans(),
    ),
    st.builds(
        RngDraw,
        numbers=st.lists(
            st.builds(
                RngPick,
                value=st.integers(-1, 38),
                multiplier=st.sampled_from([None, 50, 75, 300, 500]),
            ),
            min_size=1,
            max_size=7,
        ).map(tuple),
    ),
    st.builds(Confirm),
    st.builds(NoSpin, reason=st.just("misspin")),
    st.builds(Void, reason=st.just("x")),
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(["void", "hold"]), st.lists(events, max_size=50))
def test_every_settled_lightning_spin_pays_exactly_its_own_draw(
    on_missing: str, sequence: list[TableEvent]
) -> None:
    """However the events come: a settled spin carries the last accepted draw of its round (and
    only a confirmed hold carries none); its multiplier is its number's in that draw."""
    engine = make(on_rng_missing=on_missing)
    accepted: list[dict[str, Any]] | None = None
    for event in sequence:
        outputs = engine.apply(event)
        if isinstance(event, RngDraw) and not outputs:
            accepted = [{"value": p.value, "multiplier": p.multiplier} for p in event.numbers]
        for out in outputs:
            if not isinstance(out, Outcome):
                continue
            if out.status == "settled":
                assert out.result is not None
                drawn = out.result["lightning"]
                assert drawn == (accepted if not isinstance(event, Confirm) else [])
                lookup = {pick["value"]: pick["multiplier"] for pick in drawn}
                assert out.result["multiplier"] == lookup.get(out.result["number"])
                assert 1 <= len(drawn) <= 5 or isinstance(event, Confirm)
            accepted = None


# -- replay (contracts §4.4) -----------------------------------------------------------------------


def test_replay_of_the_lightning_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "LR-T1", "lightning_roulette")
    found, verdicts = replay(capsys, config, DATA / "lightning-roulette.jsonl")
    assert [(o["status"], o["reason"]) for o in found] == [
        ("settled", None),
        ("settled", None),
        ("void", "rng_missing"),
        ("settled", None),
        ("void", "min_revolutions"),
    ]
    assert [o["result"].get("multiplier") for o in found] == [300, None, None, 250, None]
    assert found[4]["result"]["lightning"] == [{"value": 21, "multiplier": 50}]
    assert [v["verdict"]["code"] for v in verdicts] == [
        "rng_before_bets_closed",
        "rng_duplicate",
        "rng_missing",
        "rng_after_result",
        "rng_value_out_of_range",
        "rng_pick_invalid",
    ]
