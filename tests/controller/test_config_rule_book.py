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


# -- refusals: the key, the rule line, and what the book says ------------------------------------


def case(game: str, rules: dict[str, Any], key: str, rule: str, *says: str, name: str) -> Any:
    """A refusal: ``rules`` on ``game`` name ``rules.{key}``, then ``rule`` (the whole rule line:
    the book and its lines), and say each of ``says``."""
    return pytest.param(game, rules, key, rule, says, id=name)


REFUSALS = [
    # The scenarios. L2537: a Lucky 6/60 drum's faces, colours, zones, size and order.
    case(
        "lucky6",
        {**L6_60, "values": [9] * 60},
        "values",
        "seed-001 L2537",
        "270",
        "540",
        name="L2537-faces-sum-to-270",
    ),
    case(
        "lucky6",
        {**L6_60, "values": [10, *L6_FACES[1:]]},
        "values",
        "seed-001 L2537",
        "ball 1",
        name="L2537-faces-are-digits",
    ),
    case(
        "lucky6",
        {**L6_60, "colors": {"red": list(range(1, 41)), "blue": list(range(41, 61))}},
        "colors",
        "seed-001 L2537",
        "30 red, 30 blue",
        "40 red, 20 blue",
        name="L2537-30-red-30-blue",
    ),
    # Without the map the red and blue sums bets 11–14 settle on (L2561–2567) are missing.
    case(
        "lucky6",
        {"variant": "lucky6_60", "values": L6_FACES},
        "colors",
        "seed-001 L2537",
        "colour map",
        name="L2561-needs-its-colour-map",
    ),
    case(
        "lucky6",
        {**L6_60, "colors": {"red": list(range(1, 31)), "blue": list(range(31, 61))}},
        "colors",
        "seed-001 L2537",
        "red 135, blue 135",
        name="L2537-red-138-blue-132",
    ),
    case("lucky6", {**L6_60, "zones": ["A", "B"]}, "zones", "seed-001 L2537", name="L2537-zones"),
    case("lucky6", {**L6_60, "order": "read"}, "order", "seed-001 L2537", name="L2537-order"),
    case(
        "keno",
        {**L6_60, "draw": 3, "zones": ["A", "B", "C"]},
        "draw",
        "seed-001 L2537",
        name="L2537-size",
    ),
    case(
        "fruitrace",
        {"panel": ["blue"] * 4 + ["red"] * 2 + ["yellow"] * 3 + ["orange"]},
        "panel",
        "seed-001 L2907",
        "3 blue, 3 red, 3 yellow, 1 orange",
        "4 blue, 2 red",
        name="L2907-panel-3-3-3-1",
    ),
    case(
        "mega_wheel",
        {"segments": ["7"] * 54},
        "segments",
        "seed-001 L3957",
        "1, 2, 5, 8, 10, 15, 20, 30, 40",
        "got 7",
        name="L3957-the-nine-numbers",
    ),
    case(
        "mega_wheel",
        {"segments": ["1", "2", "5", "8", "10", "15", "20", "30", "40"] * 5},
        "segments",
        "seed-001 L3957",
        "54 sectors, got 45",
        name="L3957-54-sectors",
    ),
    # §3 cards: the joker games hold their own jokers; the decks, the book's ranks.
    case(
        "poker_with_joker",
        {"jokers_per_deck": 2},
        "jokers_per_deck",
        "seed-001 L455",
        name="L455-one",
    ),
    case("jokerbet", {"jokers_per_deck": 1}, "jokers_per_deck", "seed-001 L3157", name="L3157-two"),
    case(
        "card_poker",
        {"variant": "poker_with_joker", "jokers_per_deck": 0},
        "jokers_per_deck",
        "seed-001 L455",
        name="L455-variant",
    ),
    case(
        "baccarat",
        {"ranks": "6789TJQKA"},
        "ranks",
        "seed-001 L1499, seed-004 BAC 1.3.1",
        name="L1499-baccarat-52",
    ),
    case(
        "blackjack",
        {"ranks": "A6789TJQK"},
        "ranks",
        "seed-001 L193, seed-000 BJ-E1, seed-004 BJ 1.5",
        name="BJ1.5-blackjack-52",
    ),
    case(
        "dragon_tiger",
        {"ranks": "A23456789TJQ"},
        "ranks",
        "seed-001 L1803, L1778, L2619",
        name="L1803-dragon-tiger",
    ),
    case("three_card_poker", {"ranks": "6789TJQKA"}, "ranks", "seed-000 PKH-01", name="PKH-01-3cp"),
    case("card_poker", {"ranks": "6789TJQKA"}, "ranks", "seed-001 L291", name="L291-card-poker"),
    case("bet21", {"ranks": "A23456789TJQK"}, "ranks", "seed-001 L3499", name="L3499-21bet-36"),
    # §6 ball drums: balls, numbering, count, bonus balls, order.
    case("lucky7", {"draw": 6}, "draw", "seed-001 L2319", name="L2319-7-balls"),
    case("lucky7", {"balls": 45}, "balls", "seed-001 L2319", name="L2319-of-42"),
    case("lucky7", {"lowest": 0}, "lowest", "seed-001 L2319", name="L2319-from-1"),
    case("lucky7", {"order": "position"}, "order", "seed-001 L2319", name="L2319-tube"),
    case("lucky5", {"order": "read"}, "order", "seed-001 L2123", name="L2123-cylinders"),
    case("lucky7", {"bonus": 1}, "bonus", "seed-001 L2319", name="L2319-no-bonus"),
    case("mega_ball", {"bonus": 3}, "bonus", "seed-001 L2859, L2863", name="L2863-one-or-two"),
    case(
        "mega_ball",
        {"bonus_min": 0},
        "bonus_min",
        "seed-001 L2859, L2863",
        name="L2863-at-least-one",
    ),
    case("lotto_5_35", {"bonus": 0}, "bonus", "seed-001 L4575, L4579", name="L4579-the-6th-ball"),
    case("bingo37", {"balls": 38}, "balls", "seed-001 L4587", name="L4587-37"),
    case("bingo38", {"draw": 2}, "draw", "seed-001 L4615", name="L4615-one"),
    case("keno_express", {"balls": 80}, "balls", "seed-001 L2101", name="L2101-1-to-100"),
    case("one_bet", {"draw": 2}, "draw", "seed-001 L3323-3325", name="L3323-one-of-37"),
    # §6 colours: the book's maps and sizes.
    case(
        "lucky5",
        {"colors": {"white": list(range(1, 19)), "blue": list(range(19, 37))}},
        "colors",
        "seed-001 L2123",
        name="L2123-four-colours-of-9",
    ),
    case(
        "lucky7",
        {"colors": {"black": list(range(1, 22)), "red": list(range(22, 43))}},
        "colors",
        "seed-001 L2319",
        name="L2319-black-and-yellow",
    ),
    case(
        "lucky6",
        {"colors": {"green": list(range(1, 25)), "blue": list(range(25, 49))}},
        "colors",
        "seed-001 L2945-2963",
        name="L2945-the-listed-map",
    ),
    case(
        "mega6",
        {"colors": {"white": list(range(1, 26)), "pink": list(range(26, 50))}},
        "colors",
        "seed-001 L4195",
        name="L4195-odd-white-even-pink",
    ),
    case(
        "super_six",
        {"colors": {"red": list(range(1, 25)), "green": list(range(25, 49))}},
        "colors",
        "seed-001 L4253",
        name="L4253-eight-colours-of-6",
    ),
    case("lucky6", {"prefix_sums": []}, "prefix_sums", "seed-001 L3031", name="L3031-first-5"),
    # §6.12–6.13: Fruitrace's wins, Cash or Crash's balls.
    case(
        "fruitrace",
        {"panel_min_matches": 3},
        "panel_min_matches",
        "seed-001 L2909",
        name="L2909-4",
    ),
    case("fruitrace", {"panel_solo": "blue"}, "panel_solo", "seed-001 L2909", name="L2909-7-only"),
    case(
        "fruitrace",
        {"colors": {"blue": [1, 2, 3, 4], "red": [5, 6], "yellow": [7, 8, 9], "orange": [10]}},
        "colors",
        "seed-001 L2907",
        name="L2907-balls",
    ),
    case(
        "cash_or_crash",
        {"colors": {"green": list(range(1, 21)), "red": list(range(21, 28)), "gold": [28]}},
        "colors",
        "seed-001 L4399",
        name="L4399-19-8-1",
    ),
    # §5 wheels.
    case(
        "dream_catcher",
        {"multipliers": {"2x": 2, "7x": 5}},
        "multipliers",
        "seed-001 L1765-1766",
        name="L1766",
    ),
    case(
        "monopoly",
        {"bonus_rolls": {"2_rolls": 2, "4_rolls": 3}},
        "bonus_rolls",
        "seed-001 L1897",
        name="L1897",
    ),
    case("crazy_time", {"bonus": ["pachinko"]}, "bonus", "seed-001 L2049", name="L2049-bonus"),
    case(
        "wheel_of_fortune",
        {"min_revolutions": 2},
        "min_revolutions",
        "seed-001 L2471",
        name="L2471-3-turns",
    ),
    case(
        "wheel_of_fortune",
        {"colors": {"cup": "gold"}},
        "colors",
        "seed-001 L2471",
        name="L2471-colours",
    ),
    case("wheelbet", {"number_facts": False}, "number_facts", "seed-001 L4349-4389", name="L4389"),
    case(
        "wheelbet",
        {"colors": WHEELBET_ONE_MORE_BLACK, "color_counts": {"red": 17, "black": 19, "green": 2}},
        "colors",
        "seed-001 L4345",
        name="L4345-18-18-2",
    ),
    case(
        "spin_and_win",
        {"number_facts": False},
        "number_facts",
        "seed-001 L3973-3979",
        name="L3977",
    ),
    case(
        "spin_and_win", {"colors": {"0": "blue"}}, "colors", "seed-001 L3969, L3975", name="L3975"
    ),
    case("mega_wheel", {"rng": "none"}, "rng", "seed-001 L3961", name="L3961-lucky-number"),
    case(
        "mega_wheel",
        {"rng_max_multiplier": 1000},
        "rng_max_multiplier",
        "seed-001 L3965",
        name="L3965-x500",
    ),
    case("music_wheel", {"rng_before": "stop"}, "rng_before", "seed-001 L4339", name="L4339"),
    case(
        "music_wheel",
        {"colors": {"2": "red", "4": "red"}},
        "colors",
        "seed-001 L4337",
        name="L4337-colours",
    ),
    case(
        "dream_catcher",
        {"colors": {"1": "red", "40": "red"}},
        "colors",
        "seed-001 L1750-1766",
        name="L1750",
    ),
    # §4 roulette.
    case("double_ball_roulette", {"balls": 1}, "balls", "seed-001 L119", name="L119-two-balls"),
    case("roulette", {"balls": 2}, "balls", "seed-001 L95", name="L95-one-ball"),
    case("lightning_roulette", {"lightning": False}, "lightning", "seed-001 L113-115", name="L115"),
    case(
        "roulette", {"lightning": True}, "lightning", "seed-001 L113-115", name="L113-not-roulette"
    ),
    # seed-001 C40: a table may pick another preset of its family; it is that preset's book.
    case(
        "lucky7",
        {"variant": "mega6", "draw": 7},
        "draw",
        "seed-001 L4195",
        name="C40-variant-mega6",
    ),
    case(
        "dream_catcher",
        {"variant": "mega_wheel", "rng": "none"},
        "rng",
        "seed-001 L3961",
        name="C40-variant-mega-wheel",
    ),
]
"""Every ``[rules]`` value that contradicts a book, by book line; ids are the lines cited."""


@pytest.mark.parametrize(("game", "rules", "key", "rule", "says"), REFUSALS)
def test_a_fact_of_the_rule_book_cannot_be_overridden(
    game: str, rules: dict[str, Any], key: str, rule: str, says: tuple[str, ...]
) -> None:
    message = refused(game, rules, key, rule)
    # The key, then the whole rule line, then what is wrong.
    assert message.startswith(f"{SOURCE}: rules.{key}: {rule}: "), message
    for text in says:
        assert text in message, message


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


def test_the_joker_games_still_deal_jokers() -> None:
    for game, jokers in JOKER_GAMES.items():
        assert load_rules(game, {}, source=SOURCE).rules.jokers_per_deck == jokers
        assert load_rules(game, {"jokers_per_deck": jokers}, source=SOURCE).rules.jokers_per_deck
    picked = load_rules("card_poker", {"variant": "poker_with_joker"}, source=SOURCE)
    assert picked.rules.jokers_per_deck == 1


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
    # The order a table writes its ranks in.
    assert load_rules("baccarat", {"ranks": "23456789TJQKA"}, source=SOURCE).rules.ranks
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


CLI_REFUSALS = [
    pytest.param(
        "baccarat.example.toml",
        {"[rules]\n": "[rules]\njokers_per_deck = 1\n"},
        "jokers_per_deck",
        "seed-001 §3.0 (4), seed-001 L1499, seed-004 BAC 1.3.1",
        ("baccarat cannot play jokers",),
        id="baccarat-shoe-with-jokers",
    ),
    pytest.param(
        "lucky7.example.toml",
        {'game = "lucky7"': 'game = "lucky6"', "[rules]\n": _faces_toml([9] * 60)},
        "values",
        "seed-001 L2537",
        ("sum to 270, got 540",),
        id="lucky6_60-face-map-not-the-books",
    ),
]
"""An example config changed to contradict its book: the file, the key, the rule line, what."""


@pytest.mark.parametrize("command", ["check-config", "run"])
@pytest.mark.parametrize(("example", "replace", "key", "rule", "says"), CLI_REFUSALS)
def test_cli_refuses_a_config_against_the_book(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    example: str,
    replace: dict[str, str],
    key: str,
    rule: str,
    says: tuple[str, ...],
) -> None:
    config = _example_with(tmp_path, example, replace)
    argv = (
        ["check-config", str(config)]
        if command == "check-config"
        else ["run", "--config", str(config)]
    )
    assert main(argv) == 78
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{config}: rules.{key}: {rule}: " in err
    for text in says:
        assert text in err, err


def test_cli_accepts_the_books_lucky6_60(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    replace = {'game = "lucky7"': 'game = "lucky6"', "[rules]\n": _faces_toml(L6_FACES)}
    config = _example_with(tmp_path, "lucky7.example.toml", replace)
    assert main(["check-config", str(config)]) == 0, capsys.readouterr().err
    assert capsys.readouterr().out.rstrip().endswith("OK")
