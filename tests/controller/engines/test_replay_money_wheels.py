"""``tablectl replay`` over the money wheels of issue 14: Wheelbet, Spin & Win, Music Wheel and
Mega Wheel streams (tests/data/replay/), one outcome per round, the irregularities as verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.replay import DATA, replay, table_config


def _rounds(outcomes: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(o["status"], o["reason"]) for o in outcomes]


def _codes(verdicts: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(v["line"], v["verdict"]["code"]) for v in verdicts]


def test_l4345_wheelbet_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "WB-T1", "wheelbet")
    outcomes, verdicts = replay(capsys, config, DATA / "wheelbet.jsonl")
    assert _rounds(outcomes) == [
        ("settled", None),
        ("settled", None),  # L2091, C6: the divider stop was re-spun, bets standing
        ("void", "result_before_bets_closed"),
        ("settled", None),  # §2.2: no fault clause → held, confirmed (G4, C42)
        ("settled", None),
    ]
    results = [o["result"] for o in outcomes]
    # contracts §4.3: "00" is the string "00"; L4345 green; L4389 neither even nor odd.
    assert (results[0]["segment"], results[0]["number"], results[0]["color"]) == (
        "00",
        "00",
        "green",
    )
    assert results[0]["parity"] is None
    assert (results[1]["number"], results[1]["respins"], results[1]["row"]) == (17, 1, 2)
    assert results[2] == {"index": 0, "segment": "0"}
    assert (results[3]["number"], results[3]["dozen"]) == (0, None)
    assert (results[4]["number"], results[4]["parity"], results[4]["dozen"]) == (2, "even", 1)
    assert _codes(verdicts) == [(8, "respin"), (16, "device_fault"), (22, "segment_out_of_range")]


def test_l3969_spin_and_win_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "SW-T1", "spin_and_win")
    outcomes, verdicts = replay(capsys, config, DATA / "spin-and-win.jsonl")
    assert _rounds(outcomes) == [("settled", None)] * 3
    results = [o["result"] for o in outcomes]
    assert [(r["number"], r["color"]) for r in results] == [
        (0, "green"),
        (36, "red"),
        (17, "black"),
    ]
    assert results[1]["respins"] == 1  # the presenter's no_spin: repeated, bets stand
    # No RNG overlay at Spin & Win: a draw is refused, the round goes on.
    assert _codes(verdicts) == [(8, "respin"), (13, "rng_not_expected")]
    assert "rng" not in results[2]


def test_l4339_music_wheel_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "MW-T1", "music_wheel")
    outcomes, verdicts = replay(capsys, config, DATA / "music-wheel.jsonl")
    assert _rounds(outcomes) == [
        ("settled", None),
        ("settled", None),
        ("void", "rng_missing"),  # the bonus sector came after the spin started: no bonus
        ("settled", None),
    ]
    bonus = [o["result"].get("rng") for o in outcomes]
    # C26: 48's bonus is the one lit sector; 12's every sector of 12.
    assert bonus[0] == {
        "kind": "bonus_sector", "segment": "48", "index": 47, "multiplier": 3, "applies": True,
    }  # fmt: skip
    assert (bonus[1]["segment"], bonus[1]["index"], bonus[1]["applies"]) == ("12", None, True)
    assert outcomes[1]["result"]["index"] == 16  # another sector of 12 than the one lit (5)
    assert (bonus[3]["segment"], bonus[3]["applies"]) == ("2", False)
    assert _codes(verdicts) == [
        (14, "rng_after_spin"),
        (15, "rng_missing"),
        (17, "rng_before_bets_closed"),
        (20, "rng_duplicate"),
        (23, "rng_after_result"),
    ]
    assert verdicts[-1]["verdict"]["data"]["last_round"] == "MW-T1-000004"


def test_l3959_mega_wheel_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "MEGA-T1", "mega_wheel")
    outcomes, verdicts = replay(capsys, config, DATA / "mega-wheel.jsonl")
    assert _rounds(outcomes) == [
        ("settled", None),
        ("settled", None),  # drawn while the wheel turned: "before the wheel stops"
        ("void", "rng_missing"),  # the only draw was refused (x600 > x500, L3963)
        ("settled", None),
    ]
    lucky = [o["result"].get("rng") for o in outcomes]
    assert (lucky[0]["segment"], lucky[0]["multiplier"], lucky[0]["applies"]) == ("15", 200, True)
    assert (lucky[1]["segment"], lucky[1]["applies"]) == ("40", False)
    # The draw after the divider stop is refused; the first valid one (8) stands.
    assert (lucky[3]["segment"], lucky[3]["applies"], outcomes[3]["result"]["respins"]) == (
        "8", True, 1,
    )  # fmt: skip
    assert _codes(verdicts) == [
        (13, "rng_pick_invalid"),
        (15, "rng_missing"),
        (18, "rng_value_out_of_range"),
        (21, "respin"),
        (22, "rng_after_result"),
    ]


def test_mega_wheel_stream_with_a_supervisor_deciding_a_missing_draw(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # on_rng_missing = "hold": the round waits; the stream has no confirm, so the next
    # round_open is refused (decision_pending) and the rest of the stream cannot open rounds.
    config = table_config(tmp_path, "MEGA-T1", "mega_wheel", 'on_rng_missing = "hold"')
    outcomes, verdicts = replay(capsys, config, DATA / "mega-wheel.jsonl")
    assert _rounds(outcomes) == [("settled", None), ("settled", None)]
    assert [code for _, code in _codes(verdicts)][:3] == [
        "rng_pick_invalid",
        "rng_missing",
        "decision_pending",
    ]
