"""``tablectl replay`` over ball-draw and money-wheel streams: one outcome per round, the
irregularities as verdicts on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.replay import DATA, replay
from tests.support.replay import table_config as _config


def _replay(
    capsys: pytest.CaptureFixture[str], config: Path, events: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    outcomes, diagnostics = replay(capsys, config, events)
    return outcomes, diagnostics


def test_lucky7_stream_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "L7-T1", "lucky7", "min_mixing_seconds = 30")
    outcomes, verdicts = _replay(capsys, config, DATA / "lucky7.jsonl")
    assert [(o["round"], o["status"], o["reason"]) for o in outcomes] == [
        ("L7-T1-000001", "settled", None),
        ("L7-T1-000002", "settled", None),
        # seed-001 §6.2 L2319 / C38: six balls, then the tube is full.
        ("L7-T1-000003", "void", "draw_not_taken_place"),
        ("L7-T1-000004", "void", "ball_before_bets_closed"),
        ("L7-T1-000005", "settled", None),
        ("L7-T1-000006", "settled", None),
    ]
    assert len({o["round"] for o in outcomes}) == len(outcomes)
    assert all(o["schema"] == 1 and o["game"] == "lucky7" for o in outcomes)
    results = [o["result"] for o in outcomes]
    # L2319: the first 7 of the 8 balls in the tube.
    assert results[0]["balls"] == [3, 14, 27, 8, 41, 22, 9]
    assert (results[0]["sum"], results[0]["odd"], results[0]["even"]) == (124, 4, 3)
    # contracts §6: 14 read at a second slot is never drawn twice; the re-read of slot 3 is 30.
    assert results[1]["balls"] == [7, 14, 30, 1, 2, 40, 42]
    assert results[2] == {"balls": [11, 12, 13, 15, 16, 17], "expected": 7}
    assert results[4]["balls"] == [19, 20, 21, 22, 23, 24, 25]
    assert results[5]["balls"] == [31, 32, 33, 34, 36, 37, 38]
    codes = [(v["line"], v["verdict"]["code"]) for v in verdicts]
    assert (11, "extra_ball") in codes  # the 8th ball's line
    assert [c for _, c in codes] == [
        "extra_ball",
        "duplicate_ball",
        "reread_required",
        "reread_required",
        "device_fault",
    ]
    extra = verdicts[0]["verdict"]
    assert (extra["round"], extra["data"]["ball"]) == ("L7-T1-000001", 35)


def test_lucky7_stream_minimum_mixing_from_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Round 1 mixed 66 s before its first ball, round 2 66 s: 70 s is too long for both (R16).
    config = _config(tmp_path, "L7-T1", "lucky7", "min_mixing_seconds = 70")
    outcomes, _ = _replay(capsys, config, DATA / "lucky7.jsonl")
    assert [o["reason"] for o in outcomes[:2]] == ["mixing_too_short", "mixing_too_short"]


def test_dream_catcher_stream_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "DC-T1", "dream_catcher")
    outcomes, verdicts = _replay(capsys, config, DATA / "dream-catcher.jsonl")
    assert [(o["round"], o["status"], o["reason"]) for o in outcomes] == [
        ("DC-T1-000001", "settled", None),
        ("DC-T1-000002", "settled", None),
        ("DC-T1-000003", "settled", None),
        # seed-001 §5.1 L1768: "Any malfunction cancels the game round … Bets are returned".
        ("DC-T1-000004", "void", "device_fault"),
        ("DC-T1-000005", "void", "result_before_bets_closed"),
        ("DC-T1-000006", "settled", None),
    ]
    assert len({o["round"] for o in outcomes}) == len(outcomes)
    results = [o["result"] for o in outcomes]
    assert (results[0]["segment"], results[0]["multiplier"]) == ("10", 1)
    # L1754: 2x, then 7x, then 5 → one round, multiplier 14.
    assert (results[1]["segment"], results[1]["multiplier"]) == ("5", 14)
    assert [s["segment"] for s in results[1]["spins"]] == ["2x", "7x", "5"]
    assert (results[2]["segment"], results[2]["respins"]) == ("20", 1)
    assert (results[5]["segment"], results[5]["multiplier"]) == ("40", 7)
    assert [(v["verdict"]["code"], v["verdict"]["data"]["reason"]) for v in verdicts] == [
        ("respin", "on_divider")
    ]
