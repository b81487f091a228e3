"""Fruitrace (seed-001 §6.12, L2905–2941) and Cash or Crash (§6.13, L4397–4409): ball draws settled
on a comparison panel and on a ladder. Presets, result facts, the draw's end, the engine's rounds
and the replays; rule tests are named after the seed lines they hold."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError, RuleError
from tablectl.controller.core.events import BallDrawn, BetsClosed, RoundOpen, TableEvent, TubeFull
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine, load_rules
from tablectl.controller.engines.draw import DrawEngine
from tablectl.controller.games.draw import DrawRules, draw_result, ladder_end
from tablectl.controller.games.draw_round import Draw
from tests.support.replay import DATA, replay, table_config

GREEN = list(range(1, 20))
RED = list(range(20, 28))
GOLD = 28


def rules(game: str, overrides: Mapping[str, Any] | None = None) -> DrawRules:
    loaded: DrawRules = load_rules(game, dict(overrides or {}), source="t.toml")
    return loaded


def engine(game: str) -> DrawEngine:
    built = build_engine("D-1", game, {}, source="t.toml")
    assert isinstance(built, DrawEngine)
    return built


def feed(table: DrawEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    return [o for e in events for o in table.apply(e)]


def balls(*numbers: int) -> list[TableEvent]:
    return [BallDrawn(ball=n) for n in numbers]


# -- presets ---------------------------------------------------------------------------------------


def test_l2907_fruitrace_ten_symbol_balls_all_into_the_tube() -> None:
    fruit = rules("fruitrace")
    assert (fruit.balls, fruit.draw, fruit.order) == (10, 10, "read")
    # "three blue balls with plums, three red … cherries, three yellow … lemons, and one orange
    # ball with the number 7"
    assert {c: len(m) for c, m in (fruit.colors or {}).items()} == {
        "blue": 3, "red": 3, "yellow": 3, "orange": 1,
    }  # fmt: skip
    # The panel shows the same symbols (its order is a [GAP]: the book's listing order).
    assert sorted(fruit.panel or []) == sorted(
        c for c, members in (fruit.colors or {}).items() for _ in members
    )
    assert (fruit.panel_min_matches, fruit.panel_solo) == (4, "orange")


def test_l4399_cash_or_crash_19_green_8_red_1_golden() -> None:
    crash = rules("cash_or_crash")
    assert crash.balls == 28
    assert crash.colors == {"green": GREEN, "red": RED, "gold": [GOLD]}
    assert (crash.crash_color, crash.shield_color) == ("red", "gold")
    # 20 levels (19 green + 1 golden raise the blimp); at most one red is shielded: 21 balls.
    assert (crash.draw, crash.slots) == (20, 21)


@pytest.mark.parametrize(
    ("game", "overrides", "message"),
    [
        ("fruitrace", {"panel": ["blue"] * 9}, "panel: 9 positions"),
        ("fruitrace", {"panel": ["blue"] * 9 + ["purple"]}, "'purple' is not a colour"),
        ("fruitrace", {"panel_solo": "pink"}, "panel_solo"),
        ("lucky7", {"panel_solo": "orange"}, "panel_solo needs a panel"),
        ("cash_or_crash", {"crash_color": "purple"}, "crash_color"),
        ("cash_or_crash", {"shield_color": "red"}, "the same colour"),
        ("cash_or_crash", {"draw": 21}, "exceeds the balls that raise the blimp"),
        ("cash_or_crash", {"order": "position"}, "draw order"),
        ("lucky7", {"shield_color": "gold"}, "needs a crash_color"),
    ],
)
def test_inconsistent_panel_and_ladder_rules_are_config_errors(
    game: str, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        rules(game, overrides)


# -- Fruitrace: matches with the panel -------------------------------------------------------------


@pytest.mark.parametrize(
    ("tube", "matches", "match_class"),
    [
        pytest.param([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 10, "10", id="l2927-ten-matches"),
        pytest.param([4, 5, 7, 8, 9, 1, 2, 3, 6, 10], 1, "solo", id="l2915-only-the-7"),
        pytest.param([1, 4, 5, 2, 8, 9, 3, 6, 7, 10], 3, None, id="l2911-7-and-two-fruits-lose"),
        pytest.param([1, 2, 4, 3, 7, 8, 5, 6, 9, 10], 4, "4", id="l2911-7-and-three-fruits-is-4"),
        pytest.param([1, 4, 7, 2, 5, 8, 3, 10, 9, 6], 3, None, id="l2909-three-fruits-no-win"),
        pytest.param([10, 2, 3, 4, 5, 6, 7, 8, 9, 1], 8, "8", id="l2925-eight"),
        pytest.param([2, 3, 1, 5, 6, 4, 8, 9, 7, 10], 10, "10", id="balls-of-a-colour-alike"),
        pytest.param([4, 2, 3, 1, 5, 6, 7, 8, 9, 10], 8, "8", id="one-swap-costs-two"),
    ],
)
def test_fruitrace_matches_with_the_comparison_panel(
    tube: list[int], matches: int, match_class: str | None
) -> None:
    result = draw_result(rules("fruitrace"), tube)
    assert (result["matches"], result["match_class"]) == (matches, match_class)
    assert len(result["matched"]) == matches
    assert sum(result["matched_colors"].values()) == matches


@given(st.permutations(list(range(1, 11))))
def test_l2927_nine_matches_cannot_happen(tube: list[int]) -> None:
    # §6.12 [DERIVED]: the panel holds the tube's symbols; if nine positions match, so does the
    # tenth. The classes are 7-only, 4, 5, 6, 7, 8, 10.
    result = draw_result(rules("fruitrace"), tube)
    assert result["matches"] != 9
    assert result["match_class"] in (None, "solo", "4", "5", "6", "7", "8", "10")
    solo = result["matched"] == [10]  # only the orange 7 at its place
    assert (result["match_class"] == "solo") is solo


# -- Cash or Crash: the ladder ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("drawn", "taken", "levels", "crashed", "shielded"),
    [
        pytest.param([3, 11, 20], 3, [1, 2, 2], True, [], id="l4407-red-ends-the-game"),
        pytest.param([20], 1, [0], True, [], id="l4407-first-ball-red"),
        pytest.param([28, 21, 5, 22], 4, [1, 1, 2, 2], True, [2], id="l4405-shield-takes-one-red"),
        pytest.param([28, 5, 6, 21, 22], 5, [1, 2, 3, 3, 3], True, [4], id="l4405-the-next-red"),
        pytest.param([*GREEN, GOLD], 20, list(range(1, 21)), False, [], id="top-level"),
        pytest.param(
            [GOLD, 20, *GREEN], 21, [1, 1, *range(2, 21)], False, [2], id="top-after-a-shield"
        ),
    ],
)
def test_l4401_l4407_the_blimp_climbs_until_a_red_ball_or_the_top(
    drawn: list[int], taken: int, levels: list[int], crashed: bool, shielded: list[int]
) -> None:
    crash = rules("cash_or_crash")
    assert ladder_end(crash, drawn) == taken
    assert ladder_end(crash, drawn[: taken - 1]) is None  # it goes on until that ball
    result = draw_result(crash, drawn[:taken])
    assert (result["levels"], result["crashed"], result["shielded"]) == (levels, crashed, shielded)
    assert result["level"] == levels[-1]
    assert result["top"] is (not crashed)
    assert result["ball_colors"][-1] == ("red" if crashed else result["ball_colors"][-1])


def test_a_crash_draw_that_has_not_ended_is_no_result() -> None:
    with pytest.raises(RuleError, match="does not end"):
        draw_result(rules("cash_or_crash"), [1, 2, 3])


@settings(max_examples=300)
@given(st.permutations([*GREEN, *RED, GOLD]))
def test_any_drum_order_ends_by_crash_or_top_within_21_balls(order: list[int]) -> None:
    crash = rules("cash_or_crash")
    taken = ladder_end(crash, order)
    assert taken is not None
    assert 1 <= taken <= crash.slots
    result = draw_result(crash, order[:taken])
    assert result["crashed"] is not result["top"]
    assert result["levels"] == sorted(result["levels"])  # the blimp never goes down
    assert len(result["shielded"]) <= 1  # one golden ball, one shield
    reds = [b for b in order[:taken] if b in RED]
    assert len(reds) == len(result["shielded"]) + (1 if result["crashed"] else 0)


def test_the_draw_is_complete_at_the_crash_and_later_balls_are_extras() -> None:
    draw = Draw(rules("cash_or_crash"))
    for ball in (4, 9):
        assert draw.read(BallDrawn(ball=ball)) == []
        assert not draw.complete()
    draw.read(BallDrawn(ball=23))
    assert draw.complete()
    assert draw.complete(ended=True)
    draw.read(BallDrawn(ball=12))
    result, extras = draw.result()
    assert (result["balls"], extras) == ([4, 9, 23], [12])


# -- the engine ------------------------------------------------------------------------------------


def test_cash_or_crash_outcome_comes_with_the_crash_ball_and_flags_what_follows() -> None:
    table = engine("cash_or_crash")
    out = feed(table, [RoundOpen(), BetsClosed(), *balls(3, 28, 22, 7, 26, 9)])
    outcomes = [o for o in out if isinstance(o, Outcome)]
    assert [(o.status, o.result["balls"] if o.result else None) for o in outcomes] == [
        ("settled", [3, 28, 22, 7, 26])
    ]
    assert [v.code for v in out if isinstance(v, Verdict)] == ["extra_ball"]
    assert table.phase == "drawn"


def test_cash_or_crash_the_drum_ending_before_the_crash_is_no_draw() -> None:
    out = feed(engine("cash_or_crash"), [RoundOpen(), BetsClosed(), *balls(3, 4), TubeFull()])
    assert [(o.status, o.reason) for o in out if isinstance(o, Outcome)] == [
        ("void", "draw_not_taken_place")
    ]


def test_fruitrace_settles_on_the_tenth_ball() -> None:
    out = feed(engine("fruitrace"), [RoundOpen(), BetsClosed(), *balls(*range(1, 11))])
    (outcome,) = [o for o in out if isinstance(o, Outcome)]
    assert outcome.result is not None
    assert (outcome.result["matches"], outcome.result["match_class"]) == (10, "10")


# -- the replays -----------------------------------------------------------------------------------


def test_fruitrace_stream_replays_to_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "FR-T1", "fruitrace")
    outcomes, diagnostics = replay(capsys, config, DATA / "fruitrace.jsonl")
    assert [(o["status"], o["reason"]) for o in outcomes] == [
        *[("settled", None)] * 5,
        ("void", "ball_before_bets_closed"),
        ("void", "draw_not_taken_place"),  # nine balls, then the tube is full (L2319 by analogy)
    ]
    settled = [o["result"] for o in outcomes[:5]]
    assert [(r["matches"], r["match_class"]) for r in settled] == [
        (10, "10"), (1, "solo"), (3, None), (4, "4"), (2, None),
    ]  # fmt: skip
    # A ball read twice is held and re-read, never placed twice (contracts §6).
    assert settled[4]["balls"] == [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
    codes = [d["verdict"]["code"] for d in diagnostics if "verdict" in d]
    assert codes == ["duplicate_ball", "reread_required"]


def test_cash_or_crash_stream_replays_to_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "CC-T1", "cash_or_crash")
    outcomes, diagnostics = replay(capsys, config, DATA / "cash-or-crash.jsonl")
    assert [(o["status"], o["reason"]) for o in outcomes] == [
        *[("settled", None)] * 3,
        ("void", "ball_before_bets_closed"),
        *[("settled", None)] * 2,
    ]
    facts = [
        (o["result"]["level"], o["result"]["crashed"], o["result"]["shielded"])
        for o in outcomes
        if o["status"] == "settled"
    ]
    assert facts == [(2, True, []), (2, True, [2]), (20, False, [12]), (0, True, []), (1, True, [])]
    extra = [d["verdict"] for d in diagnostics if "verdict" in d]
    assert [(v["code"], v["data"]["ball"]) for v in extra] == [
        ("extra_ball", 24),
        ("extra_ball", 26),
    ]
