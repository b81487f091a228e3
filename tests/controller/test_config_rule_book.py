"""``[rules]`` that contradict the rule book are config errors (issue 25, items 3 and 4).

Every refusal names the key, the file and the rule (``controller/games/rule_book.py``); what the
book leaves open stays the table's, and every preset, example config and joker game still loads.
Rule ids: seed-001's source lines (``../shared/seeds/001_*.txt``) unless another book is named.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.config import load_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.engines import load_rules
from tablectl.controller.games import catalog
from tablectl.controller.tools.cli import main

REPO = Path(__file__).resolve().parents[2]
SOURCE = "t.toml"

# A Lucky 6/60 drum as L2537 has it: ball n carries the digit (n - 1) % 10 (each digit six
# times: 270), red balls 2–30 and 34 (their faces sum to 138), blue the other 30 (132).
L6_FACES = [n % 10 for n in range(60)]
L6_RED = [*range(2, 31), 34]
L6_BLUE = [b for b in range(1, 61) if b not in L6_RED]
L6_60: dict[str, Any] = {
    "variant": "lucky6_60",
    "values": L6_FACES,
    "colors": {"red": L6_RED, "blue": L6_BLUE},
}

WHEELBET_ONE_MORE_BLACK = {**catalog.WHEEL_PRESETS["wheelbet"]["colors"], "1": "black"}
"""Wheelbet's preset colours with 17 red and 19 black sectors (L4345: 18 and 18)."""

JOKER_GAMES = {"poker_with_joker": 1, "jokerbet": 2}
"""seed-001 §3.0 validator (4): jokers only in Poker with Joker (L455) and Jokerbet (L3157)."""
CARD_GAMES = sorted(g for g, e in catalog.CATALOG.items() if e.family == "cards")


def refused(game: str, rules: dict[str, Any], key: str, rule: str) -> str:
    """The one-line error for ``rules`` on ``game``: it names the file, the key and the rule."""
    with pytest.raises(ConfigError) as caught:
        load_rules(game, rules, source=SOURCE)
    message = str(caught.value)
    assert message.startswith(f"{SOURCE}: rules.{key}: "), message
    assert rule in message, message
    assert "\n" not in message
    return message


# -- the scenarios ------------------------------------------------------------------------


def test_seed001_l2537_lucky6_60_faces_are_digits_summing_to_270() -> None:
    nines = {**L6_60, "values": [9] * 60}
    message = refused("lucky6", nines, "values", "seed-001 L2537")
    assert "270" in message
    assert "540" in message
    ten = {**L6_60, "values": [10, *L6_FACES[1:]]}
    assert "ball 1" in refused("lucky6", ten, "values", "seed-001 L2537")


def test_seed001_l2537_lucky6_60_has_30_red_and_30_blue_balls() -> None:
    forty = {**L6_60, "colors": {"red": list(range(1, 41)), "blue": list(range(41, 61))}}
    message = refused("lucky6", forty, "colors", "seed-001 L2537")
    assert "30 red, 30 blue" in message
    assert "40 red, 20 blue" in message


def test_seed001_l2537_l2561_lucky6_60_needs_its_colour_map() -> None:
    """Without the map the red and blue sums bets 11–14 settle on (L2561–2567) are missing."""
    faces_only = {"variant": "lucky6_60", "values": L6_FACES}
    assert "colour map" in refused("lucky6", faces_only, "colors", "seed-001 L2537")


def test_seed001_l2537_lucky6_60_red_faces_sum_to_138_blue_to_132() -> None:
    halves = {**L6_60, "colors": {"red": list(range(1, 31)), "blue": list(range(31, 61))}}
    message = refused("lucky6", halves, "colors", "seed-001 L2537")
    assert "red 135, blue 135" in message


def test_seed001_l2537_lucky6_60_zones_and_size() -> None:
    refused("lucky6", {**L6_60, "zones": ["A", "B"]}, "zones", "seed-001 L2537")
    refused("lucky6", {**L6_60, "order": "read"}, "order", "seed-001 L2537")
    refused("keno", {**L6_60, "draw": 3, "zones": ["A", "B", "C"]}, "draw", "seed-001 L2537")


def test_seed001_l2907_fruitrace_panel_is_three_three_three_one() -> None:
    panel = ["blue"] * 4 + ["red"] * 2 + ["yellow"] * 3 + ["orange"]
    message = refused("fruitrace", {"panel": panel}, "panel", "seed-001 L2907")
    assert "3 blue, 3 red, 3 yellow, 1 orange" in message
    assert "4 blue, 2 red" in message


def test_seed001_l3957_mega_wheel_shows_the_nine_numbers() -> None:
    message = refused("mega_wheel", {"segments": ["7"] * 54}, "segments", "seed-001 L3957")
    assert "1, 2, 5, 8, 10, 15, 20, 30, 40" in message
    assert "got 7" in message
    short = ["1", "2", "5", "8", "10", "15", "20", "30", "40"] * 5
    assert "54 sectors, got 45" in refused("mega_wheel", {"segments": short}, "segments", "L3957")


@pytest.mark.parametrize("game", [g for g in CARD_GAMES if g not in JOKER_GAMES])
@pytest.mark.parametrize("jokers", [1, 2])
def test_seed001_3_0_4_games_without_jokers_refuse_them(game: str, jokers: int) -> None:
    """Baccarat, its variants, blackjack, dragon tiger, 21 Bet … — every card game of the catalog
    but Poker with Joker and Jokerbet (the poker room's own model pins its standard deck)."""
    if game.startswith("poker_room"):
        with pytest.raises(ConfigError, match=r"rules\.jokers_per_deck"):
            load_rules(game, {"jokers_per_deck": jokers}, source=SOURCE)
        return
    message = refused(game, {"jokers_per_deck": jokers}, "jokers_per_deck", "seed-001 §3.0 (4)")
    assert f"{game} cannot play jokers" in message


@pytest.mark.parametrize(
    ("game", "rules", "rule"),
    [
        pytest.param("poker_with_joker", {"jokers_per_deck": 2}, "seed-001 L455", id="L455-one"),
        pytest.param("jokerbet", {"jokers_per_deck": 1}, "seed-001 L3157", id="L3157-two"),
        pytest.param(
            "card_poker",
            {"variant": "poker_with_joker", "jokers_per_deck": 0},
            "seed-001 L455",
            id="L455-variant",
        ),
    ],
)
def test_joker_games_hold_their_own_jokers(game: str, rules: dict[str, Any], rule: str) -> None:
    refused(game, rules, "jokers_per_deck", rule)


def test_the_joker_games_still_deal_jokers() -> None:
    for game, jokers in JOKER_GAMES.items():
        assert load_rules(game, {}, source=SOURCE).rules.jokers_per_deck == jokers
        assert load_rules(game, {"jokers_per_deck": jokers}, source=SOURCE).rules.jokers_per_deck
    picked = load_rules("card_poker", {"variant": "poker_with_joker"}, source=SOURCE)
    assert picked.rules.jokers_per_deck == 1


@pytest.mark.parametrize(
    ("game", "ranks", "rule"),
    [
        pytest.param("baccarat", "6789TJQKA", "seed-001 L1499", id="L1499-baccarat-52"),
        pytest.param("blackjack", "A6789TJQK", "seed-004 BJ 1.5", id="BJ1.5-blackjack-52"),
        pytest.param("dragon_tiger", "A23456789TJQ", "seed-001 L1803", id="L1803-dragon-tiger"),
        pytest.param("three_card_poker", "6789TJQKA", "seed-000 PKH-01", id="PKH-01-3cp"),
        pytest.param("card_poker", "6789TJQKA", "seed-001 L291", id="L291-card-poker"),
        pytest.param("bet21", "A23456789TJQK", "seed-001 L3499", id="L3499-21bet-36"),
    ],
)
def test_decks_hold_the_books_ranks(game: str, ranks: str, rule: str) -> None:
    refused(game, {"ranks": ranks}, "ranks", rule)
    # The order a table writes its ranks in is its own.
    assert load_rules("baccarat", {"ranks": "23456789TJQKA"}, source=SOURCE).rules.ranks


# -- the other facts the books state --------------------------------------------------------------


@pytest.mark.parametrize(
    ("game", "rules", "key", "rule"),
    [
        # §6 ball drums: balls, numbering, count, bonus balls, order.
        pytest.param("lucky7", {"draw": 6}, "draw", "L2319", id="L2319-7-balls"),
        pytest.param("lucky7", {"balls": 45}, "balls", "L2319", id="L2319-of-42"),
        pytest.param("lucky7", {"lowest": 0}, "lowest", "L2319", id="L2319-from-1"),
        pytest.param("lucky7", {"order": "position"}, "order", "L2319", id="L2319-tube"),
        pytest.param("lucky5", {"order": "read"}, "order", "L2123", id="L2123-cylinders"),
        pytest.param("lucky7", {"bonus": 1}, "bonus", "L2319", id="L2319-no-bonus"),
        pytest.param("mega_ball", {"bonus": 3}, "bonus", "L2863", id="L2863-one-or-two"),
        pytest.param("mega_ball", {"bonus_min": 0}, "bonus_min", "L2863", id="L2863-at-least-one"),
        pytest.param("lotto_5_35", {"bonus": 0}, "bonus", "L4579", id="L4579-the-6th-ball"),
        pytest.param("bingo37", {"balls": 38}, "balls", "L4587", id="L4587-37"),
        pytest.param("bingo38", {"draw": 2}, "draw", "L4615", id="L4615-one"),
        pytest.param("keno_express", {"balls": 80}, "balls", "L2101", id="L2101-1-to-100"),
        pytest.param("one_bet", {"draw": 2}, "draw", "L3323", id="L3323-one-of-37"),
        # §6 colours: the book's maps and sizes.
        pytest.param(
            "lucky5",
            {"colors": {"white": list(range(1, 19)), "blue": list(range(19, 37))}},
            "colors",
            "L2123",
            id="L2123-four-colours-of-9",
        ),
        pytest.param(
            "lucky7",
            {"colors": {"black": list(range(1, 22)), "red": list(range(22, 43))}},
            "colors",
            "L2319",
            id="L2319-black-and-yellow",
        ),
        pytest.param(
            "lucky6",
            {"colors": {"green": list(range(1, 25)), "blue": list(range(25, 49))}},
            "colors",
            "L2945",
            id="L2945-the-listed-map",
        ),
        pytest.param(
            "mega6",
            {"colors": {"white": list(range(1, 26)), "pink": list(range(26, 50))}},
            "colors",
            "L4195",
            id="L4195-odd-white-even-pink",
        ),
        pytest.param(
            "super_six",
            {"colors": {"red": list(range(1, 25)), "green": list(range(25, 49))}},
            "colors",
            "L4253",
            id="L4253-eight-colours-of-6",
        ),
        pytest.param("lucky6", {"prefix_sums": []}, "prefix_sums", "L3031", id="L3031-first-5"),
        # §6.12–6.13: Fruitrace's wins, Cash or Crash's balls.
        pytest.param(
            "fruitrace", {"panel_min_matches": 3}, "panel_min_matches", "L2909", id="L2909-4"
        ),
        pytest.param("fruitrace", {"panel_solo": "blue"}, "panel_solo", "L2909", id="L2909-7-only"),
        pytest.param(
            "fruitrace",
            {"colors": {"blue": [1, 2, 3, 4], "red": [5, 6], "yellow": [7, 8, 9], "orange": [10]}},
            "colors",
            "L2907",
            id="L2907-balls",
        ),
        pytest.param(
            "cash_or_crash",
            {"colors": {"green": list(range(1, 21)), "red": list(range(21, 28)), "gold": [28]}},
            "colors",
            "L4399",
            id="L4399-19-8-1",
        ),
        # §5 wheels.
        pytest.param(
            "dream_catcher", {"multipliers": {"2x": 2, "7x": 5}}, "multipliers", "L1765", id="L1766"
        ),
        pytest.param(
            "monopoly",
            {"bonus_rolls": {"2_rolls": 2, "4_rolls": 3}},
            "bonus_rolls",
            "L1897",
            id="L1897",
        ),
        pytest.param("crazy_time", {"bonus": ["pachinko"]}, "bonus", "L2049", id="L2049-bonus"),
        pytest.param(
            "wheel_of_fortune",
            {"min_revolutions": 2},
            "min_revolutions",
            "L2471",
            id="L2471-3-turns",
        ),
        pytest.param(
            "wheel_of_fortune", {"colors": {"cup": "gold"}}, "colors", "L2471", id="L2471-colours"
        ),
        pytest.param("wheelbet", {"number_facts": False}, "number_facts", "L4349", id="L4389"),
        pytest.param(
            "wheelbet",
            {
                "colors": WHEELBET_ONE_MORE_BLACK,
                "color_counts": {"red": 17, "black": 19, "green": 2},
            },
            "colors",
            "L4345",
            id="L4345-18-18-2",
        ),
        pytest.param("spin_and_win", {"number_facts": False}, "number_facts", "L3973", id="L3977"),
        pytest.param("spin_and_win", {"colors": {"0": "blue"}}, "colors", "L3969", id="L3975"),
        pytest.param("mega_wheel", {"rng": "none"}, "rng", "L3961", id="L3961-lucky-number"),
        pytest.param(
            "mega_wheel",
            {"rng_max_multiplier": 1000},
            "rng_max_multiplier",
            "L3965",
            id="L3965-x500",
        ),
        pytest.param("music_wheel", {"rng_before": "stop"}, "rng_before", "L4339", id="L4339"),
        pytest.param(
            "music_wheel",
            {"colors": {"2": "red", "4": "red"}},
            "colors",
            "L4337",
            id="L4337-colours",
        ),
        pytest.param(
            "dream_catcher", {"colors": {"1": "red", "40": "red"}}, "colors", "L1750", id="L1750"
        ),
        # §4 roulette.
        pytest.param("double_ball_roulette", {"balls": 1}, "balls", "L119", id="L119-two-balls"),
        pytest.param("roulette", {"balls": 2}, "balls", "L95", id="L95-one-ball"),
        pytest.param("lightning_roulette", {"lightning": False}, "lightning", "L113", id="L115"),
        pytest.param("roulette", {"lightning": True}, "lightning", "L113", id="L113-not-roulette"),
    ],
)
def test_a_fact_of_the_rule_book_cannot_be_overridden(
    game: str, rules: dict[str, Any], key: str, rule: str
) -> None:
    message = refused(game, rules, key, rule)
    assert ": seed-001 L" in message


def test_a_variant_is_held_to_its_own_book() -> None:
    """seed-001 C40: a table may pick another preset of its family; it is that preset's book."""
    refused("lucky7", {"variant": "mega6", "draw": 7}, "draw", "seed-001 L4195")
    refused("dream_catcher", {"variant": "mega_wheel", "rng": "none"}, "rng", "seed-001 L3961")


# -- what stays the table's -----------------------------------------------------------------------


@pytest.mark.parametrize("game", sorted(catalog.CATALOG))
def test_every_catalog_preset_loads_with_its_default_rules(game: str) -> None:
    assert load_rules(game, {}, source=SOURCE) is not None


@pytest.mark.parametrize(
    ("family_game", "variant"),
    [("lucky7", v) for v in catalog.DRAW_PRESETS if v != "lucky6_60"]
    + [("dream_catcher", v) for v in catalog.WHEEL_PRESETS],
)
def test_every_family_preset_loads_as_a_variant(family_game: str, variant: str) -> None:
    assert load_rules(family_game, {"variant": variant}, source=SOURCE) is not None


def test_a_lucky6_60_drum_as_the_book_has_it_loads() -> None:
    rules = load_rules("lucky6", L6_60, source=SOURCE)
    assert (rules.balls, rules.draw, rules.zones) == (60, 6, ["A", "B", "C"])


@pytest.mark.parametrize(
    "example",
    sorted(REPO.glob("config/*.toml")),
    ids=lambda p: p.name,
)
def test_the_example_configs_still_load(example: Path) -> None:
    config = load_config(example)
    assert load_rules(config.table.game, config.rules, source=config.source) is not None


def test_what_the_book_leaves_open_stays_the_tables() -> None:
    # Lucky 5's and Lucky 7's colour maps are not given (L2123, L2319 [GAP]): any of the right size.
    fives = {
        c: list(range(1 + 9 * i, 10 + 9 * i))
        for i, c in enumerate(("red", "blue", "green", "white"))
    }
    assert load_rules("lucky5", {"colors": fives}, source=SOURCE).colors == fives
    # Fruitrace's panel order (L2907 [GAP]) and Cash or Crash's numbering are the studio's.
    panel = ["orange", *(["red"] * 3), *(["blue"] * 3), *(["yellow"] * 3)]
    assert load_rules("fruitrace", {"panel": panel}, source=SOURCE).panel == panel
    crash = {"gold": [1], "red": list(range(2, 10)), "green": list(range(10, 29))}
    assert load_rules("cash_or_crash", {"colors": crash}, source=SOURCE).colors == crash
    # Mega Wheel's counts (L3957 [GAP]), a wheel's physical order.
    labels = ["1", "2", "5", "8", "10", "15", "20", "30", "40"]
    mega = [*labels, *(["1"] * 45)]
    assert load_rules("mega_wheel", {"segments": mega}, source=SOURCE).size == 54
    # The number of decks, where the books disagree (blackjack: 6 in seed-000, 8 in seed-001).
    assert load_rules("blackjack", {"decks": 6}, source=SOURCE).rules.decks == 6


def test_a_table_that_states_its_own_counts_runs_its_own_wheel() -> None:
    """docs/games/wheels.md: another operator's wheel, or Crazy Time's 64-segment bonus wheel as a
    table of its own (its labels are not in the book, L2091 [GAP])."""
    own = load_rules("mega_wheel", {"segments": ["7"] * 54, "counts": {"7": 54}}, source=SOURCE)
    assert own.size == 54
    bonus_wheel = [*(["50"] * 60), "double", "double", "triple", "triple"]
    rules = {
        "segments": bonus_wheel,
        "counts": dict(Counter(bonus_wheel)),
        "bonus": [],
        "multipliers": {"double": 2, "triple": 3},
    }
    assert load_rules("crazy_time", rules, source=SOURCE).size == 64


# -- properties -----------------------------------------------------------------------------------


@given(
    st.permutations(
        list(zip(L6_FACES, ["red" if b in L6_RED else "blue" for b in range(1, 61)], strict=True))
    )
)
def test_any_numbering_of_a_valid_lucky6_60_drum_loads(balls: list[tuple[int, str]]) -> None:
    """The book fixes the drum (L2537), not which id each ball has: any permutation of the balls
    (face and colour together) is the same drum."""
    colours: dict[str, list[int]] = {"red": [], "blue": []}
    for ball, (_, colour) in enumerate(balls, 1):
        colours[colour].append(ball)
    rules = {"variant": "lucky6_60", "values": [f for f, _ in balls], "colors": colours}
    assert load_rules("lucky6", rules, source=SOURCE).values == [f for f, _ in balls]


@given(st.integers(0, 59), st.integers(1, 9))
def test_any_single_face_changed_is_refused(ball: int, shift: int) -> None:
    faces = list(L6_FACES)
    faces[ball] = (faces[ball] + shift) % 10
    message = refused("lucky6", {**L6_60, "values": faces}, "values", "seed-001 L2537")
    assert "270" in message


@given(st.permutations(["blue"] * 3 + ["red"] * 3 + ["yellow"] * 3 + ["orange"]), st.data())
def test_any_panel_order_loads_and_any_changed_symbol_is_refused(
    panel: list[str], data: st.DataObject
) -> None:
    assert load_rules("fruitrace", {"panel": panel}, source=SOURCE).panel == panel
    position = data.draw(st.integers(0, 9))
    other = data.draw(
        st.sampled_from(sorted({"blue", "red", "yellow", "orange"} - {panel[position]}))
    )
    changed = [*panel[:position], other, *panel[position + 1 :]]
    refused("fruitrace", {"panel": changed}, "panel", "seed-001 L2907")


MEGA = ["1", "2", "5", "8", "10", "15", "20", "30", "40"]


@given(st.lists(st.sampled_from(MEGA), min_size=45, max_size=45), st.randoms(use_true_random=False))
def test_any_mega_wheel_of_the_nine_numbers_loads_and_a_foreign_sector_is_refused(
    rest: list[str], random: Any
) -> None:
    layout = [*MEGA, *rest]
    random.shuffle(layout)
    assert load_rules("mega_wheel", {"segments": layout}, source=SOURCE).size == 54
    layout[random.randrange(54)] = "7"
    message = refused("mega_wheel", {"segments": layout}, "segments", "seed-001 L3957")
    assert re.search(r"got [0-9, ]*\b7\b", message)


# -- the CLI: check-config and run exit 78 --------------------------------------------------------


def _example_with(tmp_path: Path, example: str, replace: dict[str, str]) -> Path:
    text = (REPO / "config" / example).read_text(encoding="utf-8")
    for old, new in replace.items():
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / example.replace(".example", "")
    path.write_text(text, encoding="utf-8")
    return path


def _faces_toml(faces: list[int]) -> str:
    red = ", ".join(map(str, L6_RED))
    blue = ", ".join(map(str, L6_BLUE))
    return (
        f'[rules]\nvariant = "lucky6_60"\nvalues = [{", ".join(map(str, faces))}]\n'
        f"colors = {{ red = [{red}], blue = [{blue}] }}\n"
    )


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_cli_refuses_a_baccarat_shoe_with_jokers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    config = _example_with(
        tmp_path, "baccarat.example.toml", {"[rules]\n": "[rules]\njokers_per_deck = 1\n"}
    )
    argv = (
        ["check-config", str(config)]
        if command == "check-config"
        else ["run", "--config", str(config)]
    )
    assert main(argv) == 78
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{config}: rules.jokers_per_deck: seed-001 §3.0 (4)" in err
    assert "baccarat cannot play jokers" in err


@pytest.mark.parametrize("command", ["check-config", "run"])
def test_cli_refuses_a_lucky6_60_face_map_the_book_does_not_have(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    replace = {'game = "lucky7"': 'game = "lucky6"', "[rules]\n": _faces_toml([9] * 60)}
    config = _example_with(tmp_path, "lucky7.example.toml", replace)
    argv = (
        ["check-config", str(config)]
        if command == "check-config"
        else ["run", "--config", str(config)]
    )
    assert main(argv) == 78
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{config}: rules.values: seed-001 L2537: " in err


def test_cli_accepts_the_books_lucky6_60(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replace = {'game = "lucky7"': 'game = "lucky6"', "[rules]\n": _faces_toml(L6_FACES)}
    config = _example_with(tmp_path, "lucky7.example.toml", replace)
    assert main(["check-config", str(config)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.rstrip().endswith("OK")
