"""Pure rules of the money wheels of issue 14 (Wheelbet, Spin & Win, Music Wheel, Mega Wheel's
overlay, the Top Slot) and the presets' revolution minimums. Rule ids in the test names (seed-001
line numbers; ../shared/seeds/001_*.txt)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import pytest

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import RngPick
from tablectl.controller.engines import load_rules
from tablectl.controller.games import roulette
from tablectl.controller.games.catalog import WHEEL_PRESETS
from tablectl.controller.games.findings import Finding
from tablectl.controller.games.wheel import (
    Overlay,
    WheelRules,
    check_overlay,
    draw_order,
    kind,
    number_facts,
    number_of,
    overlay_data,
    spin_result,
)


def rules_of(variant: str, overrides: Mapping[str, Any] | None = None) -> WheelRules:
    loaded: WheelRules = load_rules(variant, dict(overrides or {}))
    return loaded


def landing(rules: WheelRules, label: str) -> dict[str, Any]:
    """The result of one counted spin stopping on the first ``label`` of the layout."""
    index = rules.segments.index(label)
    return spin_result(rules, [{"segment": label, "index": index}])


# -- layouts --------------------------------------------------------------------------------------


def test_l4345_wheelbet_38_sectors_1_to_36_0_and_00_18_red_18_black_2_green() -> None:
    rules = rules_of("wheelbet")
    assert rules.size == 38
    assert Counter(rules.segments) == Counter([*(str(n) for n in range(37)), "00"])
    assert rules.colors is not None
    assert Counter(rules.colors[s] for s in rules.segments) == {"red": 18, "black": 18, "green": 2}
    assert (rules.colors["0"], rules.colors["00"]) == ("green", "green")


def test_l4345_a_configured_colour_map_must_keep_the_books_colour_counts() -> None:
    colors = {**(rules_of("wheelbet").colors or {}), "1": "black"}  # 17 red, 19 black
    with pytest.raises(ConfigError, match="color_counts"):
        rules_of("wheelbet", {"colors": colors})
    with pytest.raises(ConfigError, match="without a colour"):
        rules_of("wheelbet", {"colors": {"0": "green"}})


def test_l3969_spin_and_win_segments_0_to_36_in_roulette_colours() -> None:
    rules = rules_of("spin_and_win")
    assert sorted(rules.segments, key=int) == [str(n) for n in range(37)]
    assert rules.colors is not None
    assert Counter(rules.colors.values()) == {"red": 18, "black": 18, "green": 1}


def test_default_orders_and_colours_are_the_roulette_wheels() -> None:
    # An assumption (the book gives no order or map): the roulette wheels' data, kept equal.
    assert rules_of("wheelbet").segments == [str(p) for p in roulette.AMERICAN_ORDER]
    assert rules_of("spin_and_win").segments == [str(p) for p in roulette.EUROPEAN_ORDER]
    colors = rules_of("spin_and_win").colors or {}
    assert {int(s) for s, c in colors.items() if c == "red"} == set(roulette.RED)


def test_l4337_music_wheel_54_sectors_of_its_seven_numbers_counts_unchecked() -> None:
    rules = rules_of("music_wheel")
    assert rules.size == 54
    assert set(rules.segments) == {"2", "4", "6", "12", "16", "24", "48"}
    assert rules.counts is None  # [GAP]: the rule book gives no counts
    assert (rules.rng, rules.rng_before, rules.rng_single) == ("bonus_sector", "spin", ["16", "48"])


def test_l3959_mega_wheel_draws_a_lucky_number_before_the_stop_up_to_x500() -> None:
    rules = rules_of("mega_wheel")
    assert (rules.rng, rules.rng_before, rules.rng_max_multiplier) == ("lucky_number", "stop", 500)


@pytest.mark.parametrize(
    ("variant", "min_revolutions", "direction"),
    [
        pytest.param("wheel_of_fortune", 3, "cw", id="l2471-at-least-3-full-spins-clockwise"),
        pytest.param("dream_catcher", 0, None, id="l1748-1768-no-turn-rule"),
        pytest.param("monopoly", 0, None, id="l1861-1940-no-turn-rule"),
        pytest.param("crazy_time", 0, None, id="l2047-2097-no-turn-rule"),
        pytest.param("mega_wheel", 0, None, id="l3955-3965-no-turn-rule"),
        pytest.param("spin_and_win", 0, None, id="l3969-after-one-spin"),
        pytest.param("music_wheel", 0, None, id="l4337-stops-completely"),
        pytest.param("wheelbet", 0, None, id="l4345-no-turn-rule"),
    ],
)
def test_the_revolution_minimum_is_on_where_the_book_asks_for_full_turns(
    variant: str, min_revolutions: int, direction: str | None
) -> None:
    rules = rules_of(variant)
    assert (rules.min_revolutions, rules.direction) == (min_revolutions, direction)


def test_every_wheel_preset_is_a_catalog_game() -> None:
    for variant in WHEEL_PRESETS:
        assert rules_of(variant).variant == variant


# -- numbers --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("label", "number"),
    [
        pytest.param("00", "00", id="design-4.3-00-is-the-string-00"),
        pytest.param("0", 0, id="l3969-zero"),
        pytest.param("36", 36, id="l4345-36"),
        pytest.param("coin_flip", None, id="l2049-a-symbol"),
    ],
)
def test_number_of_a_label(label: str, number: int | str | None) -> None:
    assert number_of(label) == number


def test_design_4_3_wheelbet_00_is_a_number_segment_published_as_00() -> None:
    rules = rules_of("wheelbet")
    result = landing(rules, "00")
    assert (result["segment"], result["number"], result["kind"]) == ("00", "00", "number")
    assert kind(rules, "00") == "number"
    assert result["color"] == "green"


@pytest.mark.parametrize(
    ("number", "parity", "dozen", "row"),
    [
        pytest.param("00", None, None, None, id="l4389-00-neither-even-nor-odd"),
        pytest.param(0, None, None, None, id="l4389-0-neither-even-nor-odd"),
        pytest.param(1, "odd", 1, 1, id="l4363-l4385-1-first-dozen-row-i"),
        pytest.param(12, "even", 1, 3, id="l4363-12-first-dozen-row-iii"),
        pytest.param(13, "odd", 2, 1, id="l4363-13-second-dozen"),
        pytest.param(35, "odd", 3, 2, id="l4385-35-row-ii"),
        pytest.param(36, "even", 3, 3, id="l3975-36-third-range"),
    ],
)
def test_number_facts(
    number: int | str, parity: str | None, dozen: int | None, row: int | None
) -> None:
    assert number_facts(number) == {"parity": parity, "dozen": dozen, "row": row}


def test_number_facts_need_number_labels() -> None:
    with pytest.raises(ConfigError, match="not numbers"):
        rules_of("dream_catcher", {"number_facts": True})


def test_other_wheels_results_are_unchanged_by_the_number_facts() -> None:
    result = landing(rules_of("dream_catcher"), "10")
    assert set(result) == {"segment", "index", "kind", "number", "multiplier", "spins", "respins"}


# -- RNG overlays ---------------------------------------------------------------------------------


def picks(*values: int | str, multiplier: int | None = 100) -> tuple[RngPick, ...]:
    return tuple(RngPick(value=v, multiplier=multiplier) for v in values)


TOP_SLOT = {"rng": "top_slot"}


@pytest.mark.parametrize(
    ("variant", "overrides", "drawn", "expected"),
    [
        pytest.param("mega_wheel", {}, picks(15), Overlay("lucky_number", "15", None, 100),
                     id="l3959-one-number"),
        pytest.param("mega_wheel", {}, picks("15"), Overlay("lucky_number", "15", None, 100),
                     id="l3959-the-number-as-its-label"),
        pytest.param("mega_wheel", {"rng_scope": "segment"}, picks(14),
                     Overlay("lucky_number", "15", 14, 100), id="industry-one-lit-segment"),
        pytest.param("music_wheel", {}, picks(47, multiplier=None),
                     Overlay("bonus_sector", "48", 47, None), id="l4339-c26-48-one-sector"),
        pytest.param("music_wheel", {}, picks(5, multiplier=None),
                     Overlay("bonus_sector", "12", None, None), id="l4339-12-every-sector"),
        pytest.param("music_wheel", {"rng_single": ["2", "4", "6", "12", "16", "24", "48"]},
                     picks(5), Overlay("bonus_sector", "12", 5, 100), id="c26-other-reading"),
        pytest.param("crazy_time", TOP_SLOT, picks("coin_flip", multiplier=10),
                     Overlay("top_slot", "coin_flip", None, 10), id="l2051-top-slot-aligned"),
        pytest.param("crazy_time", TOP_SLOT, picks("5", multiplier=None),
                     Overlay("top_slot", "5", None, None), id="l2057-top-slot-miss"),
    ],
)  # fmt: skip
def test_check_overlay_accepts(
    variant: str, overrides: dict[str, Any], drawn: tuple[RngPick, ...], expected: Overlay
) -> None:
    assert check_overlay(rules_of(variant, overrides), drawn) == expected


@pytest.mark.parametrize(
    ("variant", "overrides", "drawn", "code", "reason"),
    [
        pytest.param("mega_wheel", {}, picks(15, 20), "rng_pick_invalid", "count",
                     id="l3959-one-number-only"),
        pytest.param("mega_wheel", {}, picks(3), "rng_value_out_of_range", None,
                     id="l3957-not-a-number-of-the-wheel"),
        pytest.param("mega_wheel", {}, picks(15, multiplier=None), "rng_pick_invalid",
                     "no_multiplier", id="l3963-odds-drawn-with-the-number"),
        pytest.param("mega_wheel", {}, picks(15, multiplier=501), "rng_pick_invalid",
                     "multiplier", id="l3963-up-to-x500"),
        pytest.param("mega_wheel", {"rng_scope": "segment"}, picks(54), "rng_value_out_of_range",
                     None, id="industry-segment-off-the-wheel"),
        pytest.param("music_wheel", {}, picks("12"), "rng_value_out_of_range", None,
                     id="l4339-the-device-lights-a-sector-index"),
        pytest.param("music_wheel", {}, picks(True), "rng_value_out_of_range", None,
                     id="l4339-a-bool-is-no-index"),
        pytest.param("crazy_time", TOP_SLOT, picks("7x"), "rng_value_out_of_range", None,
                     id="l2051-not-a-bet-spot"),
    ],
)  # fmt: skip
def test_check_overlay_refuses(
    variant: str,
    overrides: dict[str, Any],
    drawn: tuple[RngPick, ...],
    code: str,
    reason: str | None,
) -> None:
    found = check_overlay(rules_of(variant, overrides), drawn)
    assert isinstance(found, Finding)
    assert (found.code, found.data.get("reason")) == (code, reason)


@pytest.mark.parametrize(
    ("overlay", "label", "index", "applies"),
    [
        pytest.param(Overlay("lucky_number", "15", None, 200), "15", 41, True,
                     id="l3963-any-sector-of-the-lucky-number"),
        pytest.param(Overlay("lucky_number", "15", None, 200), "20", 19, False, id="l3963-miss"),
        pytest.param(Overlay("bonus_sector", "48", 47, None), "48", 47, True, id="c26-that-one"),
        pytest.param(Overlay("bonus_sector", "16", 11, None), "16", 28, False,
                     id="c26-another-16-has-no-bonus"),
        pytest.param(Overlay("top_slot", "5", None, None), "5", 2, False, id="l2057-no-alignment"),
        pytest.param(Overlay("top_slot", "5", None, 3), "5", 2, True, id="l2057-aligned"),
    ],
)  # fmt: skip
def test_which_multiplier_applies(overlay: Overlay, label: str, index: int, applies: bool) -> None:
    assert overlay.applies(label, index) is applies
    assert overlay_data(overlay, (label, index))["applies"] is applies
    assert overlay_data(overlay)["applies"] is None


@pytest.mark.parametrize(
    ("variant", "stage", "drawn", "code"),
    [
        pytest.param("dream_catcher", "closed", False, "rng_not_expected", id="no-overlay"),
        pytest.param("mega_wheel", "betting", False, "rng_before_bets_closed",
                     id="s2.2d-after-bets-close"),
        pytest.param("mega_wheel", "closed", False, None, id="l3959-bets-closed"),
        pytest.param("mega_wheel", "result", False, "rng_after_result", id="l3959-before-the-stop"),
        pytest.param("mega_wheel", "ended", False, "rng_after_result", id="after-the-round"),
        pytest.param("mega_wheel", "closed", True, "rng_duplicate", id="l3959-one-a-round"),
        pytest.param("music_wheel", "spinning", False, "rng_after_spin",
                     id="l4339-before-start-of-the-spin"),
    ],
)  # fmt: skip
def test_draw_order(variant: str, stage: Any, drawn: bool, code: str | None) -> None:
    refused = draw_order(rules_of(variant), stage, drawn=drawn)
    assert (refused[0] if refused else None) == code


@pytest.mark.parametrize(
    ("variant", "overrides", "message"),
    [
        pytest.param("mega_wheel", {"rng_single": ["15"]}, "only a bonus_sector", id="single"),
        pytest.param("crazy_time", {"rng": "top_slot", "rng_scope": "segment"}, "top_slot",
                     id="l2051-top-slot-names-a-label"),
        pytest.param("monopoly", {"rng": "lucky_number", "dice_bonus": True}, "dice bonus",
                     id="no-such-game"),
        pytest.param("music_wheel", {"rng_single": ["7"]}, "not segments", id="single-label"),
        pytest.param("mega_wheel", {"rng": "lightning"}, "rules.rng", id="unknown-overlay"),
        pytest.param("mega_wheel", {"rng_max_multiplier": 0}, "rng_max_multiplier", id="max"),
    ],
)  # fmt: skip
def test_overlay_parameters_must_fit(variant: str, overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        rules_of(variant, overrides)
