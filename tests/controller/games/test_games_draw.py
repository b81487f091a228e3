"""Pure ball-draw rules: presets, parameters, result facts, the draw's reads (rule ids in ids)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError
from tablectl.controller.core.events import BallDrawn
from tablectl.controller.engines import load_rules
from tablectl.controller.games.catalog import DRAW_PRESETS
from tablectl.controller.games.draw import (
    DrawRules,
    color_of,
    draw_result,
    in_range,
)
from tablectl.controller.games.draw_round import Draw


def catalog_rules(variant: str, overrides: Mapping[str, Any] | None = None) -> DrawRules:
    """A ball-draw preset of the catalog, ``overrides`` on top (the engines' loader)."""
    rules: DrawRules = load_rules("lucky7", {"variant": variant, **(overrides or {})})
    return rules


L6_60_RED = [*range(2, 31), 34]
"""A Lucky 6/60 drum as the rule book has it (L2537), faces ``(n - 1) % 10`` (each digit six
times, 270 in all): red balls 2–30 and 34 (faces 138), blue the other 30 (faces 132)."""
L6_60 = {
    "values": [n % 10 for n in range(60)],
    "colors": {"red": L6_60_RED, "blue": [b for b in range(1, 61) if b not in L6_60_RED]},
}


# -- presets: the rule book's parameters ----------------------------------------------------------


@pytest.mark.parametrize(
    ("variant", "balls", "lowest", "draw", "bonus", "order"),
    [
        pytest.param("lucky5", 36, 1, 5, 0, "position", id="seed001-6.1-L2123-5-of-36-cylinders"),
        pytest.param("lucky7", 42, 1, 7, 0, "read", id="seed001-6.2-L2319-7-of-42-tube"),
        pytest.param("lucky6", 48, 1, 35, 0, "read", id="seed001-6.4-L2945-35-of-48"),
        pytest.param("super_six", 48, 1, 35, 0, "read", id="seed001-6.5-L4253-35-of-48"),
        pytest.param("mega6", 49, 1, 6, 0, "read", id="seed001-6.6-L4195-6-of-49"),
        pytest.param("mega_ball", 51, 1, 20, 2, "read", id="seed001-6.7-L2859-L2863-20-of-51+1or2"),
        pytest.param("lotto_5_35", 35, 1, 5, 1, "read", id="seed001-6.8-L4579-5-of-35+1"),
        pytest.param("bingo37", 37, 1, 1, 0, "read", id="seed001-6.9-L4587-1-of-37"),
        pytest.param("bingo38", 38, 1, 1, 0, "read", id="seed001-6.10-L4615-1-of-38"),
        pytest.param("one_bet", 37, 0, 1, 0, "read", id="seed001-6.11-L3323-1-of-0..36"),
        pytest.param("keno", 80, 1, 20, 0, "read", id="DESIGN-4.2-keno-20-of-80"),
        pytest.param("keno_express", 100, 1, 1, 0, "read", id="seed001-6.14-L2101-C30-1-of-100"),
    ],
)
def test_presets_carry_the_rule_books_parameters(
    variant: str, balls: int, lowest: int, draw: int, bonus: int, order: str
) -> None:
    rules = catalog_rules(variant)
    assert (rules.balls, rules.lowest, rules.draw, rules.bonus, rules.order) == (
        balls,
        lowest,
        draw,
        bonus,
        order,
    )
    assert rules.variant == variant


def test_seed001_6_2_l2319_lucky7_flags_extras() -> None:
    assert catalog_rules("lucky7").extras == "flag"


def test_seed001_6_7_l2863_mega_ball_has_one_or_two_bonus_balls() -> None:
    rules = catalog_rules("mega_ball")
    assert (rules.slots_min, rules.slots) == (21, 22)


def test_seed001_6_3_l2537_c39_lucky6_60_needs_the_faces_of_its_balls() -> None:
    with pytest.raises(ConfigError, match="values"):
        catalog_rules("lucky6_60")
    rules = catalog_rules("lucky6_60", L6_60)
    assert (rules.balls, rules.draw, rules.order, rules.zones) == (
        60,
        6,
        "position",
        ["A", "B", "C"],
    )


@pytest.mark.parametrize(
    ("variant", "ball", "colour"),
    [
        pytest.param("lucky6", 1, "green", id="seed001-6.4-L2947-green-1"),
        pytest.param("lucky6", 42, "blue", id="seed001-6.4-blue-42"),
        pytest.param("lucky6", 48, "black", id="seed001-6.4-black-48"),
        pytest.param("lucky6", 43, "red", id="seed001-6.4-red-43"),
        pytest.param("mega6", 49, "white", id="seed001-6.6-L4195-odd-white"),
        pytest.param("mega6", 2, "pink", id="seed001-6.6-L4195-even-pink"),
        pytest.param("one_bet", 0, "green", id="seed001-6.11-L3325-0-green"),
        pytest.param("one_bet", 19, "red", id="seed001-6.11-L3325-19-red"),
        pytest.param("one_bet", 10, "black", id="seed001-6.11-L3325-10-black"),
    ],
)
def test_colour_maps_from_the_rule_book(variant: str, ball: int, colour: str) -> None:
    assert color_of(catalog_rules(variant), ball) == colour


@pytest.mark.parametrize("variant", ["lucky6", "mega6", "one_bet"])
def test_colour_maps_partition_the_drum(variant: str) -> None:
    rules = catalog_rules(variant)
    assert rules.colors is not None
    members = sorted(b for balls in rules.colors.values() for b in balls)
    assert members == list(range(rules.lowest, rules.highest + 1))
    if variant == "lucky6":
        assert {len(v) for v in rules.colors.values()} == {6}  # L2945: 6 balls of each colour


def test_seed001_c38_lucky5_and_lucky7_colour_maps_are_config() -> None:
    # L2123 / L2319 give the colour sizes but not the map: no preset invents one.
    assert catalog_rules("lucky5").colors is None
    assert catalog_rules("lucky7").colors is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        pytest.param({"draw": 43}, "exceeds the balls", id="k-greater-than-n"),
        pytest.param({"bonus": 36}, "exceeds the balls", id="k+bonus-greater-than-n"),
        pytest.param({"bonus_min": 1}, "bonus_min", id="bonus-min-above-bonus"),
        pytest.param({"colors": {"black": [1, 2], "yellow": [2]}}, "both", id="colour-twice"),
        pytest.param(
            {"colors": {"black": list(range(1, 42))}}, "without a colour", id="uncoloured"
        ),
        pytest.param({"colors": {"black": [0]}}, "not in the drum", id="colour-out-of-drum"),
        pytest.param({"values": [1, 2]}, "faces", id="values-count"),
        pytest.param({"prefix_sums": [8]}, "prefix_sums", id="prefix-beyond-k"),
        pytest.param({"draw": "7"}, "draw", id="strict-types"),
        pytest.param({"extras": "drop"}, "extras", id="extras-literal"),
        pytest.param({"min_quality": 101}, "min_quality", id="quality-bound"),
        pytest.param({"tube": 8}, "tube", id="unknown-key"),
    ],
)
def test_rules_reject_inconsistent_parameters(overrides: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        catalog_rules("lucky7", overrides)


def test_every_preset_but_lucky6_60_is_valid_as_is() -> None:
    for variant in DRAW_PRESETS:
        if variant != "lucky6_60":
            assert catalog_rules(variant).slots <= catalog_rules(variant).balls


@pytest.mark.parametrize(
    ("variant", "ball", "valid"),
    [
        pytest.param("lucky7", 1, True, id="seed001-6.2-lowest"),
        pytest.param("lucky7", 42, True, id="seed001-6.2-highest"),
        pytest.param("lucky7", 43, False, id="seed001-6-general-above"),
        pytest.param("lucky7", 0, False, id="seed001-6-general-zero"),
        pytest.param("one_bet", 0, True, id="seed001-6.11-L3325-zero-ball"),
        pytest.param("one_bet", 37, False, id="seed001-6.11-37"),
        pytest.param("lucky7", True, False, id="strict-bool-is-not-1"),
    ],
)
def test_in_range(variant: str, ball: object, valid: bool) -> None:
    assert in_range(catalog_rules(variant), ball) is valid


# -- results -------------------------------------------------------------------------------------


def test_result_facts_for_lucky7_with_a_configured_colour_map() -> None:
    # L2319: 21 black and 21 yellow (map from config, here odd black / even yellow).
    colours = {"black": list(range(1, 43, 2)), "yellow": list(range(2, 43, 2))}
    rules = catalog_rules("lucky7", {"colors": colours})
    result = draw_result(rules, [7, 12, 33, 1, 40, 2, 19])
    assert result["balls"] == [7, 12, 33, 1, 40, 2, 19]
    assert result["bonus"] == []
    assert (result["sum"], result["odd"], result["even"]) == (114, 4, 3)
    assert (result["first"], result["last"]) == (7, 19)
    assert result["colors"] == {"black": 4, "yellow": 3}
    assert result["color_sums"] == {"black": 60, "yellow": 54}  # L2343 "sum of yellow"
    assert result["ball_colors"][:2] == ["black", "yellow"]


def test_seed001_6_8_l4579_lotto_bonus_ball_is_apart_from_the_facts() -> None:
    result = draw_result(catalog_rules("lotto_5_35"), [1, 2, 3, 4, 5], [35])
    assert (result["balls"], result["bonus"], result["sum"]) == ([1, 2, 3, 4, 5], [35], 15)


def test_seed001_6_4_l3031_sum_of_the_first_5_balls() -> None:
    balls = list(range(48, 13, -1))  # 35 balls
    result = draw_result(catalog_rules("lucky6"), balls)
    assert result["prefix_sums"] == {"5": 48 + 47 + 46 + 45 + 44}
    assert sum(result["colors"].values()) == 35


def test_seed001_6_3_l2537_zones_read_two_digit_numbers_from_the_faces() -> None:
    rules = catalog_rules("lucky6_60", L6_60)  # ball n carries digit (n - 1) % 10
    result = draw_result(rules, [1, 8, 10, 13, 55, 60])
    assert result["values"] == [0, 7, 9, 2, 4, 9]
    assert result["zones"]["A"] == {"values": [0, 7], "number": "07", "sum": 7}
    assert result["zones"]["C"]["number"] == "49"
    assert result["sum"] == 31
    assert (result["odd"], result["even"]) == (3, 3)


@pytest.mark.parametrize(
    ("balls", "bonus"),
    [
        pytest.param([1, 2, 3, 4, 5, 6], [], id="seed001-6.2-too-few"),
        pytest.param([1, 2, 3, 4, 5, 6, 6], [], id="seed001-6-general-repeat"),
        pytest.param([1, 2, 3, 4, 5, 6, 43], [], id="seed001-6-general-out-of-range"),
        pytest.param([1, 2, 3, 4, 5, 6, 7], [7], id="seed001-6.8-bonus-from-the-remaining"),
    ],
)
def test_a_draw_that_breaks_the_rules_is_never_a_result(balls: list[int], bonus: list[int]) -> None:
    with pytest.raises(ValueError, match=r"result has|repeats|out of range"):
        draw_result(catalog_rules("lucky7"), balls, bonus)


# -- the draw: reads in, findings out -------------------------------------------------------------


def read(ball: int, **kw: Any) -> BallDrawn:
    return BallDrawn(ball=ball, **kw)


def run(rules: DrawRules, reads: list[BallDrawn]) -> tuple[Draw, list[str]]:
    draw = Draw(rules)
    codes: list[str] = []
    for r in reads:
        codes += [f.code for f in draw.read(r)]
    return draw, codes


@pytest.mark.parametrize(
    ("variant", "reads", "codes", "balls", "held"),
    [
        pytest.param(
            "lucky7", [read(n) for n in (5, 9, 1)], [], [5, 9, 1], False,
            id="seed001-6.2-tube-order-is-read-order",
        ),
        pytest.param(
            "lucky5",
            [read(30, position=3), read(2, position=1), read(17, position=2)],
            [], [2, 17, 30], False,
            id="seed001-6.1-L2123-cylinders-left-to-right",
        ),
        pytest.param(
            "lucky7", [read(5), read(43)], ["ball_out_of_range", "reread_required"], [5], True,
            id="seed001-6-general-out-of-range-held",
        ),
        pytest.param(
            "lucky7", [read(5, position=1), read(5, position=1)], ["duplicate_ball"], [5], False,
            id="DESIGN-6-same-ball-same-receiver-agrees",
        ),
        pytest.param(
            "lucky7", [read(5), read(5)], ["duplicate_ball", "reread_required"], [5], True,
            id="DESIGN-6-ball-read-twice-reread",
        ),
        pytest.param(
            "lucky7", [read(5, position=1), read(5, position=2)],
            ["duplicate_ball", "reread_required"], [5], True,
            id="DESIGN-6-ball-in-two-receivers-reread",
        ),
        pytest.param(
            "lucky7", [read(5, position=1), read(8, position=1)], ["reread_required"], [], True,
            id="DESIGN-6-receiver-read-disagrees",
        ),
        pytest.param(
            "lucky7", [read(5, quality=10)], ["reread_required"], [], True,
            id="GAP-low-quality-read-held",
        ),
        pytest.param(
            "lucky7", [read(5, quality=10, manual=True)], [], [5], False,
            id="GAP-manual-entry-trusted",
        ),
        pytest.param(
            "lucky5", [read(5)], ["position_missing"], [], False,
            id="seed001-6.1-positional-needs-position",
        ),
        pytest.param(
            "lucky5", [read(5, position=6)], ["position_out_of_range"], [], False,
            id="seed001-6.1-five-cylinders",
        ),
    ],
)  # fmt: skip
def test_reads(
    variant: str, reads: list[BallDrawn], codes: list[str], balls: list[int], held: bool
) -> None:
    draw, seen = run(catalog_rules(variant), reads)
    assert seen == codes
    assert draw.balls() == balls
    assert draw.held is held


@pytest.mark.parametrize(
    ("reads", "balls", "held"),
    [
        pytest.param([read(5, quality=10), read(5, quality=90)], [5], False, id="good-reread"),
        pytest.param([read(5, quality=10), read(6, quality=90)], [6], False, id="reread-decides"),
        pytest.param(
            [read(5, position=1), read(8, position=1), read(8, position=1)], [8], False,
            id="two-reads-agree-on-8",
        ),
        pytest.param(
            [read(5, position=1), read(8, position=1), read(5, position=1)], [5], False,
            id="two-reads-agree-on-5",
        ),
        pytest.param(
            [read(5, position=1), read(8, position=1), read(9, position=1)], [], True,
            id="three-reads-disagree",
        ),
        pytest.param([read(5), read(5), read(6)], [5, 6], False, id="reread-after-repeat"),
        pytest.param([read(5), read(5), read(5)], [5], True, id="repeat-again-still-held"),
        pytest.param([read(5), read(44), read(7)], [5, 7], False, id="reread-after-out-of-range"),
    ],
)  # fmt: skip
def test_rereads_settle_a_held_read(reads: list[BallDrawn], balls: list[int], held: bool) -> None:
    draw, _ = run(catalog_rules("lucky7"), reads)
    assert draw.balls() == balls
    assert draw.held is held


@pytest.mark.parametrize(
    ("reads", "balls"),
    [
        pytest.param([read(5, quality=10)], [5], id="confirm-places-a-low-quality-read"),
        pytest.param([read(5), read(5)], [5], id="confirm-drops-a-repeat-same-ball-twice"),
        pytest.param([read(5), read(50)], [5], id="confirm-drops-an-out-of-range-read"),
        pytest.param(
            [read(5, position=1), read(8, position=1)], [8], id="confirm-takes-the-latest-read"
        ),
    ],
)
def test_confirm_accepts_the_read_as_given_never_breaking_the_draw(
    reads: list[BallDrawn], balls: list[int]
) -> None:
    draw, _ = run(catalog_rules("lucky7"), reads)
    assert draw.confirm()
    assert draw.balls() == balls
    assert not draw.held
    assert not draw.confirm()


def test_seed001_6_2_l2319_a_held_read_keeps_its_place_in_the_tube() -> None:
    # Tube slot 3 read badly, then slots 4..8: the re-read of slot 3 is the 3rd ball.
    draw, _ = run(
        catalog_rules("lucky7"),
        [
            *(read(n, position=n) for n in (1, 2)),
            read(30, position=3, quality=5),
            *(read(n, position=n) for n in range(4, 9)),
            read(3, position=3),
        ],
    )
    assert draw.complete()
    result, extras = draw.result()
    assert result["balls"] == [1, 2, 3, 4, 5, 6, 7]
    assert extras == [8]


def test_without_positions_the_next_read_is_the_reread() -> None:
    # No receiver position: the drum re-reads a held ball before it releases the next one.
    draw, _ = run(catalog_rules("lucky7"), [read(1), read(30, quality=5), read(4), read(5)])
    assert draw.balls() == [1, 4, 5]


def test_seed001_6_7_l2863_variable_bonus_completes_when_the_drum_ends_the_draw() -> None:
    draw, _ = run(catalog_rules("mega_ball"), [read(n) for n in range(1, 22)])
    assert not draw.complete()
    assert draw.complete(ended=True)
    result, extras = draw.result()
    assert (len(result["balls"]), result["bonus"], extras) == (20, [21], [])


reads_strategy = st.lists(
    st.builds(
        BallDrawn,
        ball=st.integers(-2, 45),
        position=st.one_of(st.none(), st.integers(-1, 9)),
        quality=st.one_of(st.none(), st.integers(0, 100)),
        manual=st.booleans(),
    ),
    max_size=40,
)


@given(
    st.sampled_from(["lucky7", "lucky5", "lotto_5_35", "bingo37"]),
    reads_strategy,
    st.lists(st.booleans(), max_size=40),
)
def test_no_read_sequence_places_a_ball_twice_or_out_of_range(
    variant: str, reads: list[BallDrawn], confirms: list[bool]
) -> None:
    rules = catalog_rules(variant)
    draw = Draw(rules)
    for i, r in enumerate(reads):
        draw.read(r)
        if i < len(confirms) and confirms[i]:
            draw.confirm()
        balls = draw.balls()
        assert len(set(balls)) == len(balls)
        assert all(in_range(rules, b) for b in balls)
    if draw.complete():
        result, _ = draw.result()  # a complete draw is always a valid result
        assert len(result["balls"]) == rules.draw
