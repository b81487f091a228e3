"""Pure roulette rules: wheels, derived result attributes, spin validity (rule-book ids in ids)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.config import validate_section
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import Direction, WinningNumber
from tablectl.controller.games.roulette import (
    AMERICAN_ORDER,
    BLACK,
    EUROPEAN_ORDER,
    RED,
    VARIANTS,
    Pocket,
    RouletteRules,
    Variant,
    check_spin,
    color,
    pockets,
    spin_result,
    validate_number,
    wheel_order,
)

# The betting layout, written out independently of the code under test: 12 rows of 3.
LAYOUT_ROWS = [(3 * r + 1, 3 * r + 2, 3 * r + 3) for r in range(12)]


# -- wheels -------------------------------------------------------------------------------------


def test_a31_red_and_black_split_1_to_36_evenly() -> None:
    assert len(RED) == 18
    assert len(BLACK) == 18
    assert set(range(1, 37)) == RED | BLACK


def test_a31_european_order_is_a_permutation_with_alternating_colours() -> None:
    assert sorted(EUROPEAN_ORDER) == list(range(37))
    assert EUROPEAN_ORDER[0] == 0
    colours = [color(n) for n in EUROPEAN_ORDER[1:]]
    # seed-002-004 §A.3.1: red and black alternate around the wheel; this cross-checks RED.
    assert all(a != b for a, b in itertools.pairwise(colours))
    assert colours[0] == "red"  # 32, next to zero


def test_seed001_44_american_order_has_00_opposite_0_and_alternating_colours() -> None:
    assert len(AMERICAN_ORDER) == 38
    assert set(AMERICAN_ORDER) == set(range(37)) | {"00"}
    assert AMERICAN_ORDER.index("00") == 19  # diametrically opposite 0
    for half in (AMERICAN_ORDER[1:19], AMERICAN_ORDER[20:]):
        colours = [color(n) for n in half]
        assert all(a != b for a, b in itertools.pairwise(colours))


@pytest.mark.parametrize(
    ("variant", "size", "has_00"),
    [("european", 37, False), ("french", 37, False), ("american", 38, True)],
)
def test_pocket_sets(variant: Variant, size: int, has_00: bool) -> None:
    assert len(pockets(variant)) == size
    assert ("00" in pockets(variant)) is has_00
    assert set(wheel_order(variant)) == pockets(variant)


@pytest.mark.parametrize(
    ("variant", "number", "valid"),
    [
        pytest.param("european", 0, True, id="V-RL-2-zero"),
        pytest.param("european", 36, True, id="V-RL-2-36"),
        pytest.param("european", 37, False, id="V-RL-2-37"),
        pytest.param("european", -1, False, id="V-RL-2-negative"),
        pytest.param("european", "00", False, id="V-RL-2-00-on-single-zero"),
        pytest.param("french", "00", False, id="seed001-4.5-00-on-french"),
        pytest.param("american", "00", True, id="seed001-4.4-00-on-american"),
        pytest.param("american", 37, False, id="seed001-4.4-37-on-american"),
        pytest.param("american", "0", False, id="string-0-is-not-0"),
        pytest.param("european", "17", False, id="string-17-is-not-17"),
        pytest.param("european", True, False, id="bool-is-not-1"),
        pytest.param("european", 17.0, False, id="float-is-not-17"),
        pytest.param("european", None, False, id="none"),
    ],
)
def test_validate_number(variant: Variant, number: object, valid: bool) -> None:
    assert validate_number(variant, number) is valid


# -- results ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "number", "expected"),
    [
        pytest.param(
            "european",
            17,
            {"color": "black", "parity": "odd", "range": "low", "dozen": 2, "column": 2},
            id="17",
        ),
        pytest.param(
            "european",
            36,
            {"color": "red", "parity": "even", "range": "high", "dozen": 3, "column": 3},
            id="36",
        ),
        pytest.param(
            "european",
            1,
            {"color": "red", "parity": "odd", "range": "low", "dozen": 1, "column": 1},
            id="1",
        ),
        pytest.param(
            "european",
            19,
            {"color": "red", "parity": "odd", "range": "high", "dozen": 2, "column": 1},
            id="19-first-high",
        ),
        pytest.param(
            "european",
            0,
            {"color": "green", "parity": None, "range": None, "dozen": None, "column": None},
            id="seed001-4.1-zero-is-nothing",
        ),
        pytest.param(
            "american",
            "00",
            {"color": "green", "parity": None, "range": None, "dozen": None, "column": None},
            id="seed001-4.4-00-is-nothing",
        ),
    ],
)
def test_spin_result_derived_attributes(
    variant: Variant, number: Pocket, expected: dict[str, Any]
) -> None:
    result = spin_result(variant, number, 6)
    assert {k: result[k] for k in expected} == expected
    assert result["number"] == number
    assert result["revolutions"] == 6


def test_spin_result_carries_the_wheel_data_and_the_43_keys() -> None:
    result = spin_result("european", 17, 6, ball_direction="ccw", rotor_direction="cw", spin=4711)
    assert result == {
        "number": 17,
        "color": "black",
        "revolutions": 6,
        "parity": "odd",
        "range": "low",
        "dozen": 2,
        "column": 2,
        "ball_direction": "ccw",
        "rotor_direction": "cw",
        "wheel_spin": 4711,
        "variant": "european",
        "la_partage": False,
    }


@pytest.mark.parametrize(
    ("variant", "number", "la_partage"),
    [
        pytest.param("french", 0, True, id="seed001-4.5-la-partage-on-zero"),
        pytest.param("french", 5, False, id="seed001-4.5-not-on-5"),
        pytest.param("european", 0, False, id="seed001-4.1-zero-loses"),
        pytest.param("american", 0, False, id="seed001-4.4-zero"),
        pytest.param("american", "00", False, id="seed001-4.4-double-zero"),
    ],
)
def test_la_partage_only_french_zero(variant: Variant, number: Pocket, la_partage: bool) -> None:
    assert spin_result(variant, number, None)["la_partage"] is la_partage


@pytest.mark.parametrize(
    ("variant", "number"),
    [("european", 37), ("european", "00"), ("french", "00"), ("american", -1)],
)
def test_v_rl_2_spin_result_refuses_a_number_not_on_the_wheel(
    variant: Variant, number: Pocket
) -> None:
    with pytest.raises(ValueError, match="not a pocket"):
        spin_result(variant, number, 5)


valid_spins = st.sampled_from(VARIANTS).flatmap(
    lambda v: st.tuples(st.just(v), st.sampled_from(sorted(pockets(v), key=str)))
)


@given(valid_spins, st.none() | st.integers(0, 50))
def test_derived_attributes_match_the_layout(
    spin: tuple[Variant, Pocket], revs: int | None
) -> None:
    variant, number = spin
    result = spin_result(variant, number, revs)
    assert result["variant"] == variant
    if number in (0, "00"):
        assert result["color"] == "green"
        assert (result["parity"], result["range"], result["dozen"], result["column"]) == (
            None,
            None,
            None,
            None,
        )
        return
    assert isinstance(number, int)
    (row,) = [r for r, cells in enumerate(LAYOUT_ROWS) if number in cells]
    assert result["dozen"] == row // 4 + 1
    assert result["column"] == LAYOUT_ROWS[row].index(number) + 1
    assert result["parity"] == ("even" if number % 2 == 0 else "odd")
    assert result["range"] == ("low" if number in range(1, 19) else "high")
    assert result["color"] == ("red" if number in RED else "black")
    assert result["la_partage"] is False


# -- rules config -------------------------------------------------------------------------------


def test_rules_defaults_are_the_strict_ones() -> None:
    rules = RouletteRules()
    assert rules.variant == "european"
    assert rules.min_revolutions == 4  # seed-000 RL-I2, regulatory R1
    assert rules.require_revolution_count is False
    assert rules.void_on_fault is True


def test_rou_311_three_rotations_is_configurable() -> None:
    rules = validate_section(
        RouletteRules, {"min_revolutions": 3, "variant": "french"}, source="t.toml", section="rules"
    )
    assert rules.min_revolutions == 3
    assert rules.variant == "french"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param({"min_revolution": 4}, "unknown key 'rules.min_revolution'", id="typo-key"),
        pytest.param({"min_revolutions": 0}, "rules.min_revolutions", id="zero-revolutions"),
        pytest.param({"min_revolutions": "4"}, "rules.min_revolutions", id="string-number"),
        pytest.param({"min_revolutions": True}, "rules.min_revolutions", id="bool-number"),
        pytest.param({"variant": "mexican"}, "rules.variant", id="unknown-variant"),
        pytest.param({"void_on_fault": "yes"}, "rules.void_on_fault", id="string-bool"),
    ],
)
def test_bad_rules_name_the_key_and_the_file(data: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        validate_section(RouletteRules, data, source="/etc/tablectl/RL-01.toml", section="rules")
    assert str(info.value).startswith("/etc/tablectl/RL-01.toml: ")


# -- spin validity ------------------------------------------------------------------------------


def spin(
    number: Pocket = 17,
    revolutions: int | None = 6,
    ball: Direction | None = "ccw",
    rotor: Direction | None = "cw",
) -> WinningNumber:
    return WinningNumber(
        number=number, revolutions=revolutions, ball_direction=ball, rotor_direction=rotor
    )


EUROPEAN = RouletteRules()
AMERICAN = RouletteRules(variant="american")
SEED_004 = RouletteRules(min_revolutions=3)
COUNT_REQUIRED = RouletteRules(require_revolution_count=True)


@pytest.mark.parametrize(
    ("rules", "event", "code"),
    [
        pytest.param(EUROPEAN, spin(), None, id="valid-spin"),
        pytest.param(EUROPEAN, spin(0), None, id="valid-zero"),
        pytest.param(AMERICAN, spin("00"), None, id="seed001-4.4-valid-00"),
        pytest.param(EUROPEAN, spin(37), "number_out_of_range", id="V-RL-2-37"),
        pytest.param(EUROPEAN, spin(-3), "number_out_of_range", id="V-RL-2-negative"),
        pytest.param(EUROPEAN, spin("00"), "number_out_of_range", id="V-RL-2-00-single-zero"),
        pytest.param(AMERICAN, spin(38), "number_out_of_range", id="seed001-4.4-38"),
        pytest.param(EUROPEAN, spin(ball="cw", rotor="cw"), "same_direction", id="R1-R2a-cw-cw"),
        pytest.param(
            EUROPEAN, spin(ball="ccw", rotor="ccw"), "same_direction", id="ROU-3.1.1-ccw-ccw"
        ),
        pytest.param(EUROPEAN, spin(ball=None, rotor="cw"), None, id="R1-ball-dir-unknown"),
        pytest.param(EUROPEAN, spin(ball="cw", rotor=None), None, id="R1-rotor-dir-unknown"),
        pytest.param(EUROPEAN, spin(revolutions=3), "min_revolutions", id="RL-I2-3-of-4"),
        pytest.param(EUROPEAN, spin(revolutions=0), "min_revolutions", id="RL-I2-0-of-4"),
        pytest.param(EUROPEAN, spin(revolutions=4), None, id="V-RL-1-exactly-4"),
        pytest.param(SEED_004, spin(revolutions=3), None, id="ROU-3.1.1-3-of-3"),
        pytest.param(SEED_004, spin(revolutions=2), "min_revolutions", id="ROU-3.1.1-2-of-3"),
        pytest.param(EUROPEAN, spin(revolutions=None), None, id="no-count-wheel-trusted"),
        pytest.param(
            COUNT_REQUIRED, spin(revolutions=None), "revolutions_unknown", id="no-count-required"
        ),
        pytest.param(COUNT_REQUIRED, spin(revolutions=9), None, id="count-required-given"),
        # Precedence: the most basic problem is named.
        pytest.param(
            EUROPEAN, spin(37, 1, "cw", "cw"), "number_out_of_range", id="precedence-range"
        ),
        pytest.param(
            EUROPEAN, spin(17, 1, "cw", "cw"), "same_direction", id="precedence-direction"
        ),
        pytest.param(COUNT_REQUIRED, spin(17, 2), "min_revolutions", id="precedence-revolutions"),
    ],
)
def test_check_spin(rules: RouletteRules, event: WinningNumber, code: str | None) -> None:
    assert check_spin(rules, event) == code


@given(
    st.integers(0, 36),
    st.integers(-5, 60),
    st.integers(1, 20),
    st.sampled_from([("cw", "ccw"), ("ccw", "cw")]),
)
def test_rl_i2_min_revolutions_is_exactly_a_threshold(
    number: int, revolutions: int, minimum: int, directions: tuple[Direction, Direction]
) -> None:
    rules = RouletteRules(min_revolutions=minimum)
    event = spin(number, revolutions, *directions)
    expected = "min_revolutions" if revolutions < minimum else None
    assert check_spin(rules, event) == expected
