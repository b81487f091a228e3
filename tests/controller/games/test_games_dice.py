"""Pure dice rules (controller/games/dice): each game's facts, named after the seed lines they
come from (seed-001 §7, ``../shared/seeds/001_*.txt`` line numbers), and properties against small
independent oracles."""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import RngPick
from tablectl.controller.engines import load_rules
from tablectl.controller.games.catalog import DICE_PRESETS
from tablectl.controller.games.dice import (
    CrapsState,
    DiceRules,
    DiceVariant,
    check_picks,
    check_tumble,
    craps_result,
    decide,
    dice_duel_result,
    lightning_result,
    read_dice,
    roll_result,
    sic_bo_result,
    tumble_seconds,
)
from tablectl.controller.games.dice.lightning_dice import rng_order
from tablectl.controller.games.findings import Finding

faces = st.integers(min_value=1, max_value=6)


def rules(game: str, **overrides: Any) -> DiceRules:
    """A dice preset of the catalog with ``overrides`` on top (the engines' loader)."""
    loaded: DiceRules = load_rules(game, overrides)
    return loaded


# -- Sic Bo (seed-001 L5: named, no rules; the industry game) -------------------------------------


def test_l5_sic_bo_big_and_small_lose_on_a_triple() -> None:
    assert sic_bo_result([4, 4, 4]) | {"dice": None} == {
        "dice": None, "total": 12, "triple": True, "double": [4], "big": False, "small": False,
        "odd": False,
    }  # fmt: skip
    assert sic_bo_result([2, 2, 2])["small"] is False
    # 3 and 18 are triples: neither Big nor Small.
    assert (sic_bo_result([1, 1, 1])["small"], sic_bo_result([6, 6, 6])["big"]) == (False, False)


@pytest.mark.parametrize(
    ("dice", "total", "big", "small"),
    [
        pytest.param([1, 1, 2], 4, False, True, id="L5-industry-small-from-4"),
        pytest.param([1, 4, 5], 10, False, True, id="L5-industry-small-to-10"),
        pytest.param([1, 4, 6], 11, True, False, id="L5-industry-big-from-11"),
        pytest.param([5, 6, 6], 17, True, False, id="L5-industry-big-to-17"),
    ],
)
def test_l5_sic_bo_big_11_to_17_small_4_to_10(
    dice: list[int], total: int, big: bool, small: bool
) -> None:
    result = sic_bo_result(dice)
    assert (result["total"], result["big"], result["small"]) == (total, big, small)


def test_l5_sic_bo_double_is_every_value_shown_at_least_twice() -> None:
    assert sic_bo_result([3, 5, 3])["double"] == [3]
    assert sic_bo_result([6, 6, 6])["double"] == [6]  # a triple shows its value twice too
    assert sic_bo_result([1, 2, 3])["double"] == []


def test_l5_sic_bo_odd_is_the_parity_of_the_total_even_on_a_triple() -> None:
    assert sic_bo_result([1, 1, 1])["odd"] is True
    assert sic_bo_result([2, 2, 2])["odd"] is False
    assert sic_bo_result([1, 2, 2])["odd"] is True


def _sic_bo_oracle(dice: tuple[int, ...]) -> dict[str, Any]:
    """Written from the layout's point of view: each bet spot asks whether it wins."""
    a, b, c = sorted(dice)
    total = a + b + c
    triple = a == c
    doubles = [v for v in range(1, 7) if [a, b, c].count(v) >= 2]
    return {
        "dice": list(dice),
        "total": total,
        "triple": triple,
        "double": doubles,
        "big": not triple and 11 <= total <= 17,
        "small": not triple and 4 <= total <= 10,
        "odd": total in (3, 5, 7, 9, 11, 13, 15, 17),
    }


def test_l5_sic_bo_every_one_of_the_216_outcomes_against_an_oracle() -> None:
    outcomes = list(itertools.product(range(1, 7), repeat=3))
    assert len(outcomes) == 216
    for dice in outcomes:
        assert sic_bo_result(dice) == _sic_bo_oracle(dice), dice
    # The industry's odds rest on these counts: 105 Big, 105 Small, 6 triples.
    assert sum(sic_bo_result(d)["big"] for d in outcomes) == 105
    assert sum(sic_bo_result(d)["small"] for d in outcomes) == 105
    assert sum(sic_bo_result(d)["triple"] for d in outcomes) == 6


@given(st.tuples(faces, faces, faces), st.permutations(range(3)))
def test_sic_bo_facts_do_not_depend_on_the_dice_order(
    dice: tuple[int, int, int], order: list[int]
) -> None:
    shuffled = [dice[i] for i in order]
    assert sic_bo_result(shuffled) | {"dice": None} == sic_bo_result(dice) | {"dice": None}


# -- Craps (seed-001 §7.2 L2745–2805) -------------------------------------------------------------


@pytest.mark.parametrize(
    ("total", "decision", "point_after"),
    [
        *[pytest.param(t, "natural", None, id=f"L2789-come-out-{t}-natural") for t in (7, 11)],
        *[pytest.param(t, "craps", None, id=f"L2789-come-out-{t}-craps") for t in (2, 3, 12)],
        *[
            pytest.param(t, "point_set", t, id=f"L2757-come-out-{t}-sets-the-point")
            for t in (4, 5, 6, 8, 9, 10)
        ],
    ],
)
def test_l2789_come_out_decisions(total: int, decision: str, point_after: int | None) -> None:
    got, after = decide(CrapsState(), total)
    assert (got, after.point) == (decision, point_after)


def test_l2751_come_out_4_sets_the_point() -> None:
    result, after = craps_result(CrapsState(), [1, 3])
    assert result | {"dice": None} == {
        "dice": None, "total": 4, "phase": "come_out", "point": None, "puck": "off",
        "decision": "point_set", "next_phase": "point", "next_point": 4, "field": True,
        "hardway": False,
    }  # fmt: skip
    assert after == CrapsState(4)
    assert after.puck == "on"


@pytest.mark.parametrize(
    ("point", "total", "decision", "point_after"),
    [
        pytest.param(4, 4, "point_made", None, id="L2757-point-4-made"),
        pytest.param(10, 10, "point_made", None, id="L2757-point-10-made"),
        pytest.param(6, 7, "seven_out", None, id="L2787-point-6-seven-out"),
        pytest.param(8, 11, None, 8, id="L2757-point-8-eleven-no-decision"),
        pytest.param(8, 2, None, 8, id="L2757-point-8-craps-no-decision"),
        pytest.param(5, 9, None, 5, id="L2757-point-5-another-point-number-no-decision"),
    ],
)
def test_l2757_point_phase_until_the_point_or_seven(
    point: int, total: int, decision: str | None, point_after: int | None
) -> None:
    got, after = decide(CrapsState(point), total)
    assert (got, after.point) == (decision, point_after)


def test_l2757_the_puck_is_off_on_the_come_out_and_on_in_the_point_phase() -> None:
    assert CrapsState().to_dict() == {"phase": "come_out", "point": None, "puck": "off"}
    assert CrapsState(9).to_dict() == {"phase": "point", "point": 9, "puck": "on"}


def test_l2805_hardways_are_pairs_totalling_4_6_8_10_and_l2769_the_field() -> None:
    hard = {
        t for a in range(1, 7) if craps_result(CrapsState(), [a, a])[0]["hardway"] for t in [a + a]
    }
    assert hard == {4, 6, 8, 10}
    assert craps_result(CrapsState(), [3, 5])[0]["hardway"] is False  # easy 8
    field = {
        a + b
        for a in range(1, 7)
        for b in range(1, 7)
        if craps_result(CrapsState(), [a, b])[0]["field"]
    }
    assert field == {2, 3, 4, 9, 10, 11, 12}


def test_a_craps_point_is_a_point_number() -> None:
    with pytest.raises(ValueError, match="craps point"):
        CrapsState(7)


def _craps_reference(totals: list[int]) -> list[tuple[str | None, int | None]]:
    """A second, plain reading of L2757/L2789: (decision, point before the roll) per roll."""
    point: int | None = None
    out: list[tuple[str | None, int | None]] = []
    for total in totals:
        before = point
        if point is None:
            if total in (7, 11):
                decision: str | None = "natural"
            elif total in (2, 3, 12):
                decision = "craps"
            else:
                decision, point = "point_set", total
        elif total == point:
            decision, point = "point_made", None
        elif total == 7:
            decision, point = "seven_out", None
        else:
            decision = None
        out.append((decision, before))
    return out


@given(st.lists(st.tuples(faces, faces), max_size=60))
def test_random_craps_sessions_follow_the_reference_model(rolls: list[tuple[int, int]]) -> None:
    state = CrapsState()
    expected = _craps_reference([a + b for a, b in rolls])
    for (a, b), (decision, before) in zip(rolls, expected, strict=True):
        result, state = craps_result(state, [a, b])
        assert (result["decision"], result["point"]) == (decision, before)
        assert result["puck"] == ("off" if before is None else "on")
        assert result["next_point"] == state.point
        assert result["next_phase"] == state.phase


# -- Dice Duel (seed-001 §7.1 L2681–2743) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("red", "blue", "winner"),
    [
        pytest.param(5, 2, "red", id="L2683-red-higher-wins"),
        pytest.param(1, 6, "blue", id="L2683-blue-higher-wins"),
        pytest.param(3, 3, "draw", id="L2683-equal-is-a-draw"),
    ],
)
def test_l2683_the_higher_die_wins_equal_is_a_draw(red: int, blue: int, winner: str) -> None:
    assert dice_duel_result(red, blue)["winner"] == winner


def test_l2701_to_l2743_the_facts_of_the_28_bets() -> None:
    assert dice_duel_result(3, 4) == {
        "red": 3, "blue": 4, "winner": "blue", "total": 7, "red_odd": True, "blue_odd": False,
        "total_odd": True, "red_over": False, "blue_over": True,
    }  # fmt: skip


@given(faces, faces)
def test_dice_duel_winner_is_symmetric(red: int, blue: int) -> None:
    swap = {"red": "blue", "blue": "red", "draw": "draw"}
    assert dice_duel_result(blue, red)["winner"] == swap[dice_duel_result(red, blue)["winner"]]
    assert (dice_duel_result(red, blue)["winner"] == "draw") is (red == blue)


# -- Lightning Dice (seed-001 §7.3 L3067–3069) -----------------------------------------------------


def test_l3069_a_lightning_total_pays_its_multiplier_another_the_base_odds() -> None:
    lightning = ((11, 100), (4, 500))
    hit = lightning_result([3, 4, 4], lightning)
    assert hit == {
        "dice": [3, 4, 4],
        "total": 11,
        "lightning": [{"value": 11, "multiplier": 100}, {"value": 4, "multiplier": 500}],
        "multiplier": 100,
    }
    assert lightning_result([1, 2, 3], lightning)["multiplier"] is None


@pytest.mark.parametrize(
    ("picks", "code"),
    [
        pytest.param([(11, 100), (3, 50), (18, 1000)], None, id="L3069-totals-3-to-18"),
        pytest.param([(2, 100)], "rng_value_out_of_range", id="L3069-2-is-no-total"),
        pytest.param([(19, 100)], "rng_value_out_of_range", id="L3069-19-is-no-total"),
        pytest.param([("11", 100)], "rng_value_out_of_range", id="L3069-a-string-is-no-total"),
        pytest.param([(11, 100), (11, 50)], "rng_pick_invalid", id="L3069-one-number-twice"),
        pytest.param([(11, None)], "rng_pick_invalid", id="L3069-each-has-a-multiplier"),
    ],
)
def test_l3069_lightning_numbers(picks: list[tuple[Any, int | None]], code: str | None) -> None:
    checked = check_picks([RngPick(v, m) for v, m in picks])
    if code is None:
        assert checked == tuple(picks)
    else:
        assert isinstance(checked, Finding)
        assert checked.code == code


@pytest.mark.parametrize(
    ("expected", "stage", "drawn", "code"),
    [
        (True, "closed", False, None),
        (True, "betting", False, "rng_before_bets_closed"),
        (True, "rolling", False, "rng_after_roll"),
        (True, "ended", False, "rng_after_result"),
        (True, "closed", True, "rng_duplicate"),
        (False, "closed", False, "rng_not_expected"),
    ],
)
def test_l3069_the_lightning_strikes_after_betting_and_before_the_drop_once(
    expected: bool, stage: Any, drawn: bool, code: str | None
) -> None:
    refused = rng_order(expected=expected, stage=stage, drawn=drawn)
    assert (refused[0] if refused else None) == code


@given(st.tuples(faces, faces, faces), st.sets(st.integers(3, 18), min_size=1, max_size=5))
def test_the_multiplier_is_the_totals_pick(dice: tuple[int, int, int], values: set[int]) -> None:
    lightning = tuple((v, v * 10) for v in sorted(values))
    result = lightning_result(dice, lightning)
    assert result["multiplier"] == (sum(dice) * 10 if sum(dice) in values else None)


# -- the [rules] model and the shared checks -------------------------------------------------------


def test_the_presets_are_the_variants_and_all_valid() -> None:
    assert tuple(DICE_PRESETS) == get_args(DiceVariant)
    for game in DICE_PRESETS:
        loaded = rules(game)
        assert loaded.variant == game
        assert loaded.rng_draw is (game == "lightning_dice")
        assert loaded.on_fault == "void"  # G1, G3: no dice game has a malfunction clause
        assert loaded.on_roll_invalid == "reroll"
    assert rules("dice_duel").colors == ["red", "blue"]
    assert rules("sic_bo").min_tumble_seconds == 3.0


@pytest.mark.parametrize(
    ("game", "overrides", "message"),
    [
        ("sic_bo", {"dice": 2}, "sic_bo is played with 3 dice"),
        ("craps", {"colors": ["red"]}, "1 colours for 2 dice"),
        ("craps", {"colors": ["red", "red"]}, "each die needs its own colour"),
        ("dice_duel", {"colors": ["red", "green"]}, "red.*blue"),
        ("dice_duel", {"colors": None}, "red.*blue"),
        ("sic_bo", {"min_tumble_seconds": -1}, "min_tumble_seconds"),
        ("sic_bo", {"on_fault": "ignore"}, "on_fault"),
        ("sic_bo", {"shaker": True}, "shaker"),
        ("lightning_dice", {"min_tumble_seconds": "2"}, "min_tumble_seconds"),
    ],
)
def test_bad_rules_are_config_errors(game: str, overrides: Mapping[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_rules(game, overrides, source="t.toml")


def test_read_dice_puts_the_dice_in_the_tables_colour_order() -> None:
    duel = rules("dice_duel")
    assert read_dice(duel, (3, 6), ["blue", "red"], None) == (6, 3)
    assert read_dice(duel, (3, 6), None, None) == (3, 6)  # no colours: the fixed order
    assert read_dice(rules("craps"), (2, 5), ["white", "white"], None) == (2, 5)


@pytest.mark.parametrize(
    ("game", "dice", "colors", "confidence", "code"),
    [
        ("sic_bo", (1, 2), None, None, "wrong_dice_count"),
        ("craps", (1, 2, 3), None, None, "wrong_dice_count"),
        ("dice_duel", (1, 2), ["red", "green"], None, "wrong_colors"),
        ("dice_duel", (1, 2), ["red"], None, "wrong_colors"),
        ("craps", (1, 2), ["white"], None, "wrong_colors"),
    ],
)
def test_read_dice_refuses_what_the_game_is_not_played_with(
    game: str, dice: tuple[int, ...], colors: list[str] | None, confidence: float | None, code: str
) -> None:
    found = read_dice(rules(game), dice, colors, confidence)
    assert isinstance(found, Finding)
    assert found.code == code


def test_read_dice_refuses_a_reader_less_sure_than_the_table_asks() -> None:
    sure = rules("sic_bo", min_confidence=0.9)
    found = read_dice(sure, (1, 2, 3), None, 0.5)
    assert isinstance(found, Finding)
    assert found.code == "low_confidence"
    assert read_dice(sure, (1, 2, 3), None, 0.95) == (1, 2, 3)
    assert read_dice(sure, (1, 2, 3), None, None) == (1, 2, 3)  # a reader without a figure


def test_tumble_seconds_from_the_events_times() -> None:
    start = "2026-11-30T12:00:00.000000Z"
    assert tumble_seconds(start, "2026-11-30T12:00:02.500000Z") == 2.5
    assert tumble_seconds(None, "2026-11-30T12:00:02.500000Z") is None
    assert tumble_seconds(start, "2026-11-30T12:00:02") is None  # naive: no time at all


@pytest.mark.parametrize(
    ("overrides", "rolled", "seconds", "code"),
    [
        ({}, True, 3.0, None),
        ({}, True, 2.9, "short_tumble"),
        ({}, True, None, None),  # no times (a hand-written stream): not timed
        ({}, False, None, "roll_not_seen"),
        ({"require_roll_started": False}, False, None, None),
        ({"min_tumble_seconds": 0}, True, 0.1, None),
    ],
)
def test_check_tumble(
    overrides: dict[str, Any], rolled: bool, seconds: float | None, code: str | None
) -> None:
    found = check_tumble(rules("sic_bo", **overrides), rolled=rolled, seconds=seconds)
    assert (found.code if found else None) == code
    if found is not None:
        assert found.data["reroll"] is True


def test_roll_result_is_the_games() -> None:
    come_out = CrapsState()
    assert roll_result(rules("sic_bo"), (1, 2, 3), craps=come_out)[0]["total"] == 6
    result, after = roll_result(rules("craps"), (4, 4), craps=come_out)
    assert (result["decision"], after) == ("point_set", CrapsState(8))
    blue_first = rules("dice_duel", colors=["blue", "red"])
    assert roll_result(blue_first, (2, 5), craps=come_out)[0]["red"] == 5
    lightning = roll_result(
        rules("lightning_dice"), (6, 6, 6), craps=come_out, lightning=((18, 9),)
    )
    assert lightning[0]["multiplier"] == 9
