"""The fault suite's own bookkeeping: cutting a journal into rounds (runs in the plain suite)."""

from __future__ import annotations

from typing import Any

from tests.fault.harness import split_rounds


def _r(seq: int, kind: str, ts: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "type": kind, "ts": ts, **fields}


def test_a_round_ends_at_its_concluding_event_not_at_its_outcome() -> None:
    # A group commit journals a batch's events before their conclusions.
    rows = [
        _r(1, "round_open", "a"),
        _r(2, "bets_closed", "b"),
        _r(3, "winning_number", "c"),
        _r(4, "round_open", "d"),
        _r(5, "outcome", "c", round="R1"),
    ]
    (_outcome, ended), *_ = split_rounds(rows)[0]
    assert [r["seq"] for r in ended] == [1, 2, 3]
    assert [r["seq"] for r in split_rounds(rows)[1]] == [4]


def test_the_next_rounds_open_read_with_the_result_is_the_next_rounds() -> None:
    # Seen in the fault suite: the wheel's result and its next round_open in one read (one ts).
    rows = [
        _r(1, "round_open", "a"),
        _r(2, "bets_closed", "b"),
        _r(3, "winning_number", "c"),
        _r(4, "round_open", "c"),
        _r(5, "outcome", "c", round="R1", status="settled"),
        _r(6, "bets_closed", "e"),
    ]
    done, pending = split_rounds(rows)
    assert [r["seq"] for r in done[0][1]] == [1, 2, 3]
    assert [r["seq"] for r in pending] == [4, 6]


def test_a_round_read_in_one_batch_keeps_its_own_open() -> None:
    rows = [
        _r(1, "round_open", "c"),
        _r(2, "bets_closed", "c"),
        _r(3, "winning_number", "c"),
        _r(4, "outcome", "c", round="R1", status="settled"),
    ]
    assert [r["seq"] for r in split_rounds(rows)[0][0][1]] == [1, 2, 3]


def test_an_abandoned_round_does_not_take_the_open_that_abandoned_it() -> None:
    rows = [
        _r(1, "round_open", "a"),
        _r(2, "round_open", "b"),
        _r(3, "outcome", "b", round="R1", status="void", reason="round_abandoned"),
    ]
    done, pending = split_rounds(rows)
    assert [r["seq"] for r in done[0][1]] == [1]
    assert [r["seq"] for r in pending] == [2]
