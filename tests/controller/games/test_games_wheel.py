"""Pure money-wheel rules: layouts, spin validity, multiplier chains (rule ids in ids)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import Direction, Segment
from tablectl.controller.engines import load_rules
from tablectl.controller.games.catalog import WHEEL_PRESETS, spread
from tablectl.controller.games.wheel import (
    WheelRules,
    check_spin,
    kind,
    spin_result,
)


def catalog_rules(variant: str, overrides: Mapping[str, Any] | None = None) -> WheelRules:
    """A money-wheel preset of the catalog, ``overrides`` on top (the engines' loader)."""
    rules: WheelRules = load_rules("dream_catcher", {"variant": variant, **(overrides or {})})
    return rules


# -- layouts --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "size", "counts"),
    [
        pytest.param(
            "dream_catcher", 54,
            {"1": 23, "2": 15, "5": 7, "10": 4, "20": 2, "40": 1, "2x": 1, "7x": 1},
            id="seed001-5.1-L1758-L1766-dream-catcher-54",
        ),
        pytest.param(
            "monopoly", 54,
            {"1": 22, "2": 15, "5": 7, "10": 4, "chance": 2, "2_rolls": 3, "4_rolls": 1},
            id="seed001-5.2-L1865-monopoly-54",
        ),
        pytest.param(
            "crazy_time", 54,
            {"1": 21, "2": 13, "5": 7, "10": 4, "cash_hunt": 2, "pachinko": 2, "coin_flip": 4,
             "crazy_time": 1},
            id="seed001-5.3-L2049-crazy-time-54",
        ),
        pytest.param(
            "wheel_of_fortune", 19, {**{str(n): 1 for n in range(1, 19)}, "cup": 1},
            id="seed001-5.4-L2471-19-sectors",
        ),
    ],
)  # fmt: skip
def test_default_layouts_have_the_rule_books_counts(
    variant: str, size: int, counts: dict[str, int]
) -> None:
    rules = catalog_rules(variant)
    assert rules.size == size
    assert Counter(rules.segments) == Counter(counts)


def test_seed001_5_5_l3957_mega_wheel_numbers_54_sectors_counts_unchecked() -> None:
    rules = catalog_rules("mega_wheel")
    assert rules.size == 54
    assert set(rules.segments) == {"1", "2", "5", "8", "10", "15", "20", "30", "40"}
    assert rules.counts is None  # [GAP]: the rule book gives no counts


def test_spread_is_deterministic_and_keeps_counts() -> None:
    counts = [("a", 5), ("b", 3), ("c", 1)]
    order = spread(counts)
    assert order == spread(counts)
    assert Counter(order) == Counter(dict(counts))
    # evenly spread: the three b's are not adjacent
    positions = [i for i, label in enumerate(order) if label == "b"]
    assert all(b - a > 1 for a, b in itertools.pairwise(positions))


def test_a_configured_layout_must_match_the_rule_books_counts() -> None:
    layout = list(catalog_rules("dream_catcher").segments)
    layout[0], layout[1] = layout[1], layout[0]  # another physical order: fine
    assert catalog_rules("dream_catcher", {"segments": layout}).segments == layout
    layout[0] = "40"  # a second 40: not the rule book's wheel
    with pytest.raises(ConfigError, match="do not match counts"):
        catalog_rules("dream_catcher", {"segments": layout})
    # ... unless the table states its own counts (another operator's wheel)
    own = dict(Counter(layout))
    assert catalog_rules("dream_catcher", {"segments": layout, "counts": own}).size == 54


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"multipliers": {"3x": 3}}, "not segments", id="multiplier-not-on-wheel"),
        pytest.param({"multipliers": {"2x": 0}}, "factors", id="multiplier-factor"),
        pytest.param({"bonus": ["2x"]}, "both a multiplier and a bonus", id="multiplier-and-bonus"),
        pytest.param({"open_chain": ["5"]}, "not multiplier", id="open-chain-not-a-multiplier"),
        pytest.param({"min_revolutions": 3}, "needs a direction", id="L2471-turns-in-a-direction"),
        pytest.param({"direction": "up"}, "direction", id="direction-literal"),
        pytest.param({"colors": {"77": "red"}}, "not segments", id="colour-not-on-wheel"),
        pytest.param({"pins": 54}, "pins", id="unknown-key"),
    ],
)
def test_rules_reject_inconsistent_parameters(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        catalog_rules("dream_catcher", overrides)


@pytest.mark.parametrize(
    ("variant", "label", "expected"),
    [
        pytest.param("dream_catcher", "2x", "multiplier", id="seed001-5.1-L1752-2x"),
        pytest.param("dream_catcher", "40", "number", id="seed001-5.1-L1754-number"),
        pytest.param("crazy_time", "coin_flip", "bonus", id="seed001-5.3-L2059-bonus"),
        pytest.param("monopoly", "chance", "multiplier", id="seed001-5.2-L1875-chance-chains"),
        pytest.param("monopoly", "4_rolls", "bonus", id="seed001-5.2-L1891-rolls-bonus"),
        pytest.param("wheel_of_fortune", "cup", "symbol", id="seed001-5.4-L2471-cup"),
    ],
)
def test_segment_kinds(variant: str, label: str, expected: str) -> None:
    assert kind(catalog_rules(variant), label) == expected


@pytest.mark.parametrize(
    ("variant", "on_fault"),
    [
        pytest.param("dream_catcher", "void", id="seed001-5.1-L1768-malfunction-void"),
        pytest.param("crazy_time", "void", id="seed001-5.3-L2097-malfunction-void"),
        pytest.param("monopoly", "decide", id="seed001-2.2-C42-no-clause"),
        pytest.param("wheel_of_fortune", "decide", id="seed001-2.2-C42-no-clause-wheel"),
        pytest.param("mega_wheel", "decide", id="seed001-2.2-C42-no-clause-mega"),
    ],
)
def test_malfunction_remedy_per_rule_book(variant: str, on_fault: str) -> None:
    assert catalog_rules(variant).on_fault == on_fault


# -- spin validity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "segment", "spin_direction", "reason"),
    [
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=3, direction="cw"), None, None,
            id="seed001-5.4-L2471-3-clockwise-turns-succeed",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=2, direction="cw"), None,
            "min_revolutions", id="seed001-5.4-L2471-2-turns-repeat",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=5, direction="ccw"), None,
            "wrong_direction", id="seed001-5.4-L2471-counterclockwise-repeat",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=5), "cw", None,
            id="seed001-5.4-L2471-direction-from-the-spin",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=5), None,
            "direction_unknown", id="seed001-C37-direction-must-be-known",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, direction="cw"), None,
            "revolutions_unknown", id="seed001-C37-turns-must-be-known",
        ),
        pytest.param(
            "wheel_of_fortune", Segment(index=3, revolutions=9, direction="cw", on_divider=True),
            None, "on_divider", id="seed001-5.3-L2091-C6-divider",
        ),
        pytest.param(
            "dream_catcher", Segment(index=3, on_divider=True), None, "on_divider",
            id="seed001-C6-divider-every-wheel",
        ),
        pytest.param(
            "dream_catcher", Segment(index=3), None, None,
            id="seed001-5.1-GAP-no-rotation-rule",
        ),
    ],
)  # fmt: skip
def test_check_spin(
    variant: str, segment: Segment, spin_direction: Direction | None, reason: str | None
) -> None:
    assert check_spin(catalog_rules(variant), segment, spin_direction) == reason


def test_seed001_c6_divider_respin_can_be_switched_off() -> None:
    rules = catalog_rules("dream_catcher", {"divider_respin": False})
    assert check_spin(rules, Segment(index=0, on_divider=True)) is None


# -- results --------------------------------------------------------------------------------------


def _spin(rules_variant: str, label: str) -> dict[str, Any]:
    rules = catalog_rules(rules_variant)
    return {"segment": label, "index": rules.segments.index(label)}


def test_seed001_5_1_l1754_2x_then_7x_then_5_is_5_with_multiplier_14() -> None:
    rules = catalog_rules("dream_catcher")
    spins = [_spin("dream_catcher", s) for s in ("2x", "7x", "5")]
    result = spin_result(rules, spins)
    assert (result["segment"], result["multiplier"], result["number"]) == ("5", 14, 5)
    assert result["index"] == rules.segments.index("5")
    assert [s["segment"] for s in result["spins"]] == ["2x", "7x", "5"]


def test_a_single_spin_has_multiplier_1() -> None:
    result = spin_result(catalog_rules("dream_catcher"), [_spin("dream_catcher", "40")])
    assert (result["segment"], result["multiplier"], result["kind"]) == ("40", 1, "number")


@pytest.mark.parametrize(
    "spins",
    [
        pytest.param([], id="no-spin"),
        pytest.param([{"segment": "5", "index": 99}], id="index-off-the-wheel"),
        pytest.param([{"segment": "40", "index": 0}], id="index-not-that-label"),
    ],
)
def test_spin_result_refuses_what_is_not_a_result(spins: list[dict[str, Any]]) -> None:
    with pytest.raises(ValueError, match="spin"):
        spin_result(catalog_rules("dream_catcher"), spins)


def test_a_chain_is_made_of_multipliers_only() -> None:
    spins = [_spin("dream_catcher", "5"), _spin("dream_catcher", "10")]
    with pytest.raises(ValueError, match="not a multiplier"):
        spin_result(catalog_rules("dream_catcher"), spins)


@given(st.lists(st.sampled_from(["2x", "7x"]), max_size=6), st.sampled_from(["1", "2", "40"]))
def test_multipliers_multiply(chain: list[str], last: str) -> None:
    spins = [_spin("dream_catcher", s) for s in [*chain, last]]
    expected = 1
    for s in chain:
        expected *= {"2x": 2, "7x": 7}[s]
    assert spin_result(catalog_rules("dream_catcher"), spins)["multiplier"] == expected


def test_presets_are_all_valid() -> None:
    for variant in WHEEL_PRESETS:
        assert catalog_rules(variant).variant == variant
