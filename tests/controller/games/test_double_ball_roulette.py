"""Double Ball Roulette (seed-001 §4.3 L117–177): the facts its bets are settled on, which ball a
number is, the engine's rounds of two balls, and the replay fixture."""

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
    EventFormatError,
    Fault,
    NoSpin,
    RoundOpen,
    TableEvent,
    Void,
    WinningNumber,
    event_to_dict,
    parse_event,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import Engine, build_engine, load_rules
from tablectl.controller.games.double_ball import pair_result, place_ball
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.roulette import Pocket, spin_result
from tests.support.replay import replay, table_config

DATA = Path(__file__).resolve().parents[2] / "data" / "replay"


def make(**rules: Any) -> Engine:
    return build_engine("DB-1", "double_ball_roulette", rules, source="test")


def feed(engine: Engine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    return [out for event in events for out in engine.apply(event)]


def codes(outputs: Sequence[EngineOutput]) -> list[str]:
    """Verdicts as their code, outcomes as ``status:reason``."""
    rows: list[str] = []
    for o in outputs:
        if isinstance(o, Verdict):
            rows.append(o.code)
        elif isinstance(o, Outcome):
            rows.append(f"{o.status}:{o.reason or ''}")
    return rows


def ball(number: Pocket, which: int | None = None, revolutions: int | None = 6) -> WinningNumber:
    return WinningNumber(number=number, ball=which, revolutions=revolutions)  # type: ignore[arg-type]


def pair(a: Pocket, b: Pocket) -> dict[str, Any]:
    return pair_result(spin_result("european", a, 6), spin_result("european", b, 6))


OPENED: list[TableEvent] = [RoundOpen(), BallLaunched(rotor_direction="cw"), BetsClosed()]


# -- the facts of the bets (pure) -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "key", "value"),
    [
        # L133: internal bets win on either ball, twice on both: the two numbers.
        pytest.param(17, 32, "numbers", [17, 32], id="l133_internal_either_ball"),
        # L137/L167: a column wins when both balls are in it.
        pytest.param(1, 34, "both_column", 1, id="l137_l167_same_column"),
        pytest.param(1, 2, "both_column", None, id="l137_other_columns"),
        # L139/L168: a dozen likewise.
        pytest.param(13, 24, "both_dozen", 2, id="l139_l168_same_dozen"),
        pytest.param(12, 13, "both_dozen", None, id="l139_other_dozens"),
        # L141/L143, L169/L170: red, black: both balls.
        pytest.param(1, 3, "both_color", "red", id="l141_l169_both_red"),
        pytest.param(2, 4, "both_color", "black", id="l143_l170_both_black"),
        pytest.param(1, 2, "both_color", None, id="l141_mixed"),
        pytest.param(0, 0, "both_color", None, id="l141_zero_is_green"),
        # L145/L171, C5: "red or black" read as one of each.
        pytest.param(1, 2, "red_and_black", True, id="l145_l171_red_and_black"),
        pytest.param(1, 3, "red_and_black", False, id="l145_both_red"),
        pytest.param(0, 2, "red_and_black", False, id="l145_zero"),
        # L147/L149, L172/L173: even, odd; zero has no parity.
        pytest.param(2, 36, "both_parity", "even", id="l147_l172_both_even"),
        pytest.param(1, 35, "both_parity", "odd", id="l149_l173_both_odd"),
        pytest.param(0, 2, "both_parity", None, id="l147_zero"),
        # L151/L153, L174/L175: 1-18, 19-36.
        pytest.param(1, 18, "both_range", "low", id="l151_l174_both_low"),
        pytest.param(19, 36, "both_range", "high", id="l153_l175_both_high"),
        pytest.param(18, 19, "both_range", None, id="l151_split"),
        # L155/L176: two balls on any number; L157/L177: on the selected one (numbers[0]).
        pytest.param(7, 7, "same_number", True, id="l155_l176_same_number"),
        pytest.param(0, 0, "same_number", True, id="l157_l177_both_on_zero"),
        pytest.param(7, 8, "same_number", False, id="l155_different"),
    ],
)
def test_l117_l177_the_facts_of_each_bet(a: int, b: int, key: str, value: Any) -> None:
    assert pair(a, b)[key] == value


def test_l119_the_result_keeps_each_balls_spin() -> None:
    result = pair(5, 32)
    assert [r["number"] for r in result["per_ball"]] == [5, 32]
    assert result["per_ball"][0] == spin_result("european", 5, 6)
    assert "balls" not in result  # the draws' key: the watch tool reads it as a draw
    assert set(result) == {
        "numbers", "same_number", "both_color", "red_and_black", "both_parity", "both_range",
        "both_dozen", "both_column", "per_ball", "variant",
    }  # fmt: skip


def test_an_american_double_ball_wheel_treats_00_as_a_pocket() -> None:
    double_zero = pair_result(spin_result("american", "00", 5), spin_result("american", "00", 5))
    assert (double_zero["same_number"], double_zero["both_color"]) == (True, None)
    mixed = pair_result(spin_result("american", 0, 5), spin_result("american", "00", 5))
    assert mixed["same_number"] is False


@pytest.mark.parametrize(
    ("reported", "which", "balls", "expected"),
    [
        ({}, None, 2, 1),
        ({1: 17}, None, 2, 2),
        ({2: 17}, None, 2, 1),
        ({}, 2, 2, 2),
        ({1: 17}, 1, 2, "ball_already_reported"),
        ({}, 2, 1, "no_such_ball"),
        ({}, 1, 1, 1),
    ],
)
def test_l119_which_ball_a_number_is(
    reported: dict[int, Pocket], which: int | None, balls: int, expected: int | str
) -> None:
    placed = place_ball(reported, which, balls=balls)
    assert (placed.code if isinstance(placed, Finding) else placed) == expected


# -- the contract: an optional ``ball`` on winning_number ------------------------------------------


def test_ball_is_optional_and_left_out_when_unset() -> None:
    assert event_to_dict(WinningNumber(number=17)) == {"type": "winning_number", "number": 17}
    tagged = parse_event({"type": "winning_number", "number": 17, "ball": 2})
    assert event_to_dict(tagged) == {"type": "winning_number", "number": 17, "ball": 2}
    for bad in (3, 0, "2", True):
        with pytest.raises(EventFormatError, match="ball"):
            parse_event({"type": "winning_number", "number": 17, "ball": bad})


# -- the rules (config) ---------------------------------------------------------------------------


def test_the_preset_plays_two_balls_and_refuses_a_hold() -> None:
    assert load_rules("double_ball_roulette").balls == 2
    with pytest.raises(ConfigError, match='on_result_mismatch = "void"'):
        load_rules("double_ball_roulette", {"on_result_mismatch": "hold"}, source="t.toml")
    with pytest.raises(ConfigError, match="balls"):
        load_rules("roulette", {"balls": 3}, source="t.toml")


# -- the engine -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        pytest.param([ball(17), ball(32)], [17, 32], id="l119_device_order"),
        pytest.param([ball(32, 2), ball(17)], [17, 32], id="l119_second_ball_first"),
        pytest.param([ball(8, 1), ball(8, 2)], [8, 8], id="l119_both_tagged_same_pocket"),
    ],
)
def test_l119_the_spin_settles_once_both_balls_are_in(
    numbers: list[TableEvent], expected: list[int]
) -> None:
    engine = make()
    first = feed(engine, [*OPENED, numbers[0]])
    assert first == []
    assert isinstance(numbers[0], WinningNumber)
    assert list(engine.snapshot()["balls"].values()) == [numbers[0].number]
    assert engine.phase == "closed"
    (outcome,) = feed(engine, [numbers[1]])
    assert isinstance(outcome, Outcome)
    assert outcome.status == "settled"
    assert outcome.result is not None
    assert outcome.result["numbers"] == expected
    assert engine.snapshot()["last_numbers"] == expected
    assert engine.snapshot()["balls"] == {}


@pytest.mark.parametrize(
    ("events", "expected", "result"),
    [
        # seed-000 RL-I2: fewer than 4 revolutions is "no spin": one such ball voids both.
        pytest.param(
            [ball(3), ball(12, revolutions=2)],
            ["void:min_revolutions"],
            {"number": 12, "ball": 2, "numbers": [3, 12]},
            id="rl_i2_second_ball_short",
        ),
        pytest.param(
            [ball(37)],
            ["void:number_out_of_range"],
            {"number": 37, "ball": 1, "numbers": [37]},
            id="v_rl_2_no_such_pocket",
        ),
        # L97 (ball out of the wheel) applied to both balls [GAP].
        pytest.param(
            [ball(5), NoSpin(reason="ball_out_of_wheel")],
            ["void:ball_out_of_wheel"],
            {"numbers": [5]},
            id="l97_one_ball_out",
        ),
        pytest.param(
            [ball(5), Fault(code="ss2_fault_5")], ["void:device_fault"], {"numbers": [5]}, id="g1"
        ),
        pytest.param(
            [ball(5), Void(reason="foreign_object")],
            ["void:foreign_object"],
            {"numbers": [5]},
            id="rl_i1_supervisor",
        ),
        # R15: a second reading of one ball is no second ball.
        pytest.param(
            [ball(5, 1), ball(6, 1), ball(7)],
            ["ball_already_reported", "settled:"],
            None,
            id="r15_repeat_refused",
        ),
        # A new round abandons a spin with one ball in.
        pytest.param(
            [ball(5), RoundOpen()], ["void:round_abandoned"], {"numbers": [5]}, id="r15_abandoned"
        ),
    ],
)
def test_one_bad_ball_voids_the_spin(
    events: list[TableEvent], expected: list[str], result: dict[str, Any] | None
) -> None:
    out = feed(make(), [*OPENED, *events])
    assert codes(out) == expected
    if result is not None:
        (outcome,) = [o for o in out if isinstance(o, Outcome)]
        assert outcome.result == result


def test_v_rl_3_a_ball_before_bets_closed_voids_the_spin() -> None:
    out = feed(make(), [RoundOpen(), ball(14, 2)])
    assert codes(out) == ["void:result_before_bets_closed"]


def test_a_one_ball_table_refuses_ball_two_and_takes_ball_one() -> None:
    engine = build_engine("R-1", "roulette", {}, source="test")
    out = feed(engine, [*OPENED, ball(5, 2), ball(5, 1)])
    assert codes(out) == ["no_such_ball", "settled:"]


# -- properties -----------------------------------------------------------------------------------

events = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(BallLaunched),
    st.builds(
        WinningNumber,
        number=st.integers(-1, 37),
        revolutions=st.one_of(st.none(), st.integers(0, 9)),
        ball=st.sampled_from([None, 1, 2]),
        manual=st.booleans(),
    ),
    st.builds(NoSpin, reason=st.just("misspin")),
    st.builds(Void, reason=st.just("x")),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(events, max_size=60))
def test_every_settled_spin_has_two_valid_balls_of_its_own_round(
    sequence: list[TableEvent],
) -> None:
    """However the events come: a settled spin is two pockets, each reported in its round after
    bets closed with enough revolutions (or none counted), and each ball once."""
    engine = make()
    in_round: list[WinningNumber] = []
    closed = False
    for event in sequence:
        if isinstance(event, BetsClosed) and engine.phase == "open":
            closed = True
        outputs = engine.apply(event)
        if isinstance(event, WinningNumber) and not outputs and closed:
            in_round.append(event)
        for out in outputs:
            if not isinstance(out, Outcome):
                continue
            if out.status == "settled":
                assert isinstance(event, WinningNumber)
                taken = [*in_round, event]
                assert out.result is not None
                assert sorted(out.result["numbers"]) == sorted(e.number for e in taken)
                assert all(0 <= n <= 36 for n in out.result["numbers"])
                assert all(e.revolutions is None or e.revolutions >= 4 for e in taken)
                tags = [e.ball for e in taken if e.ball is not None]
                assert len(tags) == len(set(tags))
            in_round, closed = [], False
        if isinstance(event, RoundOpen) and engine.phase == "open":
            in_round, closed = [], False


# -- replay (contracts §4.4) -----------------------------------------------------------------------


def test_replay_of_the_double_ball_fixture(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "DB-T1", "double_ball_roulette")
    found, verdicts = replay(capsys, config, DATA / "double-ball-roulette.jsonl")
    assert [(o["status"], o["reason"]) for o in found] == [
        ("settled", None),
        ("settled", None),
        ("settled", None),
        ("void", "min_revolutions"),
        ("void", "ball_out_of_wheel"),
        ("void", "result_before_bets_closed"),
    ]
    assert [o["result"]["numbers"] for o in found] == [
        [17, 17],
        [5, 32],
        [8, 10],
        [12, 3],
        [0],
        [14],
    ]
    assert found[0]["result"]["same_number"] is True
    assert found[1]["result"]["both_color"] == "red"
    assert [v["verdict"]["code"] for v in verdicts] == ["ball_already_reported"]


def test_every_code_of_the_two_games_is_documented() -> None:
    from tablectl.controller.games import double_ball, rng  # noqa: PLC0415

    codes = {double_ball.BALL_ALREADY_REPORTED, double_ball.NO_SUCH_BALL}
    # What the roulette engine answers an rng_draw with (the shared module has more games').
    codes |= {
        rng.RNG_MISSING,
        rng.RNG_BEFORE_BETS_CLOSED,
        rng.RNG_DUPLICATE,
        rng.RNG_AFTER_RESULT,
        rng.RNG_VALUE_OUT_OF_RANGE,
        rng.RNG_PICK_INVALID,
    }
    docs = Path(__file__).resolve().parents[3] / "docs"
    for page in ("games/roulette.md", "verdicts.md"):
        text = (docs / page).read_text(encoding="utf-8")
        assert {c for c in codes if f"`{c}`" not in text} == set(), page


@pytest.mark.parametrize("game", ["double_ball_roulette", "lightning_roulette"])
def test_r12_a_restart_confirms_either_games_round_by_the_wheels_spin(game: str) -> None:
    """Regulatory R12: as a roulette round, by the SS2's spin number (not by a device's link
    coming back, as a card table's): the same spin resumes, another voids."""
    from tablectl.controller.service.recovery import Interrupted, RestartGate  # noqa: PLC0415

    def gate() -> RestartGate:
        round_ = Interrupted(round="T1-000002", game=game, phase="closed", spin=7, outage=1.0)
        return RestartGate(round_, devices=["wheel"], now=0.0)

    same = gate()
    assert same.at_start() is None
    assert same.device_available("wheel") is None  # a link back is no confirmation
    assert same.on_event(BallLaunched(device="wheel", spin=7), 7, 0.0).decision == "resume"
    other = gate()
    assert other.on_event(BallLaunched(device="wheel", spin=8), 8, 0.0).decision == "void"
