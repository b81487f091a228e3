"""``tablectl replay`` over the recorded streams of the issue-14 card games: Red Dog, Draw Hi-Lo,
Rock Paper Scissors, Blackjack Turbo, Golden Wealth and Lightning Baccarat, and War of Bets'
second betting round (``tests/data/replay/*.jsonl``, one per game). Each names its seed lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.replay import DATA, replay, table_config


def _run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], game: str, stream: str, rules: str = ""
) -> tuple[list[dict[str, Any]], list[tuple[int, str]]]:
    outcomes, diagnostics = replay(capsys, table_config(tmp_path, "T1", game, rules), DATA / stream)
    verdicts = [(d["line"], d["verdict"]["code"]) for d in diagnostics if "verdict" in d]
    assert all(o["game"] == game for o in outcomes)
    return outcomes, verdicts


def _ends(outcomes: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(o["status"], o["reason"]) for o in outcomes]


SETTLED = ("settled", None)


def test_l1591_red_dog_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes, verdicts = _run(tmp_path, capsys, "red_dog", "red-dog.jsonl")
    assert _ends(outcomes) == [SETTLED] * 4 + [("void", "device_fault"), SETTLED]
    assert [o["result"]["result"] for o in outcomes if o["status"] == "settled"] == [
        "win",  # the third card between, after a Ride
        "push",  # consecutive: refunded
        "three_of_a_kind",  # 11:1
        "lose",  # dealt before the window closed, then confirmed
        "lose",
    ]
    assert outcomes[0]["result"]["rides"] == [1]
    assert verdicts == [(23, "card_before_decisions"), (35, "decision_refused")]


def test_l1595_draw_hi_lo_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes, verdicts = _run(tmp_path, capsys, "draw_hi_lo", "draw-hi-lo.jsonl")
    assert _ends(outcomes) == [SETTLED, SETTLED, SETTLED, ("void", "misdeal"), SETTLED]
    assert [o["result"]["direction"] for o in outcomes if o["status"] == "settled"] == [
        "higher",
        "tie",
        "lower",
        "higher",
    ]
    assert outcomes[3]["result"]["remedy"] == "refund"  # seed-001 G1 L59
    assert verdicts == [(17, "wrong_card_count"), (20, "decision_refused")]


def test_l2871_rock_paper_scissors_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes, verdicts = _run(tmp_path, capsys, "rock_paper_scissors", "rock-paper-scissors.jsonl")
    assert _ends(outcomes) == [SETTLED, SETTLED, ("void", "foreign_card"), SETTLED]
    zones = [
        (o["result"]["silver"]["card"], o["result"]["gold"]["card"])
        for o in outcomes
        if o["status"] == "settled"
    ]
    assert zones == [("RK", "SC"), ("PA", "PA"), ("SC", "RK")]
    assert verdicts == [(13, "rank_not_in_deck")]


def test_l3075_blackjack_turbo_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes, verdicts = _run(tmp_path, capsys, "blackjack_turbo", "blackjack-turbo.jsonl")
    assert _ends(outcomes) == [SETTLED] * 4
    hands = [o["result"]["boxes"][0]["hands"] for o in outcomes]
    assert [h[0]["result"] for h in hands] == ["win", "lose", "lose", "win"]
    assert outcomes[2]["result"]["dealer"]["blackjack"] is True
    assert len(hands[3]) == 2  # split once (L3085)
    assert verdicts == [
        (11, "extra_card"),  # after the game's deal: not played
        (12, "shuffle_required"),  # "shuffled at the start of each game"
        (21, "insurance_not_allowed"),  # L3077: no insurance
        (41, "split_not_allowed"),  # L3085: once
        (42, "double_not_allowed"),  # L3083: only on the starting hand
    ]


def test_l4123_lightning_baccarat_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes, verdicts = _run(tmp_path, capsys, "lightning_baccarat", "lightning-baccarat.jsonl")
    assert _ends(outcomes) == [SETTLED, SETTLED, ("void", "rng_missing"), SETTLED]
    assert [o["result"]["multiplier"] for o in outcomes if o["status"] == "settled"] == [
        16,  # KH 2x, 9C 8x in the Player's natural
        4,  # the Banker's natural: 5H 4x (4C is not the drawn 4H: rank and suit)
        2 * 8 * 4,  # a tie takes both hands: KH, 9C, QS
    ]
    assert verdicts == [
        (11, "rng_before_bets_closed"),
        (14, "rng_duplicate"),
        (21, "rng_missing"),
        (22, "rng_after_result"),
    ]


def test_l4021_golden_wealth_baccarat_stream(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outcomes, verdicts = _run(
        tmp_path, capsys, "golden_wealth_baccarat", "golden-wealth-baccarat.jsonl"
    )
    assert _ends(outcomes) == [SETTLED, SETTLED]
    first = outcomes[0]["result"]
    assert first["winner"] == "banker"
    assert first["gold_cards"] == {"player": ["AS", "2D", "9C"], "banker": ["KH", "QS"]}
    assert first["multipliers"] == {"player": 5 * 3 * 8, "banker": 2 * 3, "tie": 5 * 3 * 8 * 6}
    assert verdicts == [(5, "rng_pick_invalid"), (6, "rng_value_out_of_range")]


def test_l2625_war_of_bets_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outcomes, verdicts = _run(
        tmp_path, capsys, "dragon_tiger", "war-of-bets.jsonl", 'variant = "war_of_bets"'
    )
    assert _ends(outcomes) == [SETTLED] * 3 + [("void", "rescanned_card")]
    assert [o["result"]["winner"] for o in outcomes[:3]] == ["player", "war", "player"]
    assert verdicts == [
        (15, "unexpected_event"),  # the second round closed before the player's card
        (17, "card_before_decisions"),  # the dealer's card before it closed: held, confirmed
        (23, "duplicate_barcode"),  # L2619: a barcode read twice
    ]
    # Without the second round (second_bets = false) the same stream holds at the confirms.
    outcomes, _ = _run(
        tmp_path,
        capsys,
        "dragon_tiger",
        "war-of-bets.jsonl",
        'variant = "war_of_bets"\nsecond_bets = false',
    )
    assert outcomes[0]["result"] == {"winner": "player", "player": "KH", "dealer": "2C"}
