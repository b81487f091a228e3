"""The one-line outcome summary (tablectl.controller.tools.summary), table-driven.

``tests/data/summary/outcomes.jsonl`` holds real outcome payloads, at least one settled outcome
for every catalog game key: replays of ``tests/data/replay/*.jsonl`` through the engines, short
synthetic streams for the draw and wheel presets without a recording, and the demo's simulated
card and dice tables (recorded from its broker). ``expected.txt`` is the line for each, in
order, as reviewed by hand; plain blackjack's settled line reuses its turbo variant's result (one
deal script, one result shape).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.tools.summary import MAX_LENGTH, clock_summary, facts, summarize

DATA = Path(__file__).resolve().parents[2] / "data" / "summary"
PAYLOADS = [json.loads(line) for line in (DATA / "outcomes.jsonl").read_text("utf-8").splitlines()]
EXPECTED = (DATA / "expected.txt").read_text("utf-8").splitlines()


def test_the_recorded_outcomes_cover_every_catalog_game() -> None:
    settled = {p["game"] for p in PAYLOADS if p["status"] == "settled"}
    assert set(CATALOG) <= settled
    assert len(EXPECTED) == len(PAYLOADS)


@pytest.mark.parametrize(
    ("payload", "expected"),
    list(zip(PAYLOADS, EXPECTED, strict=True)),
    ids=[f"{p['game']}-{p['round'][-3:]}" for p in PAYLOADS],
)
def test_every_recorded_outcome_has_its_line(payload: dict[str, Any], expected: str) -> None:
    assert summarize(payload) == expected


def _outcome(game: str, table: str, number: int, result: object, **extra: Any) -> dict[str, Any]:
    return {
        "schema": 1,
        "table": table,
        "game": game,
        "round": f"{table}-{number:06d}",
        "status": "settled",
        "reason": None,
        "result": result,
        **extra,
    }


@pytest.mark.parametrize(
    ("payload", "expected"),
    [
        (
            _outcome("roulette", "ROU-01", 123, {"number": 17, "color": "black", "revolutions": 6}),
            "ROU-01 #000123 17 black (6 turns)",
        ),
        (
            _outcome(
                "roulette", "ROU-01", 124, {"number": "00", "color": "green", "revolutions": None}
            ),
            "ROU-01 #000124 00 green",
        ),
        (
            _outcome(
                "baccarat",
                "BAC-01",
                42,
                {
                    "winner": "banker",
                    "player": {"cards": ["2C", "3S"], "total": 5},
                    "banker": {"cards": ["4D", "3H"], "total": 7},
                    "natural": False,
                    "player_pair": False,
                    "banker_pair": False,
                },
            ),
            "BAC-01 #000042 Banker 7–5  P 2C 3S / B 4D 3H",
        ),
        (
            _outcome(
                "sic_bo",
                "SB-01",
                9,
                {"dice": [4, 4, 4], "total": 12, "triple": True, "big": False, "small": False},
            ),
            "SB-01 #000009 4·4·4 = 12 triple",
        ),
        (
            _outcome(
                "craps",
                "CR-01",
                31,
                {"dice": [6, 3], "total": 9, "phase": "point", "point": 6, "decision": None},
            ),
            "CR-01 #000031 6+3=9 point 6 (no decision)",
        ),
        (
            _outcome("roulette", "ROU-01", 125, None, status="void", reason="min_revolutions"),
            "ROU-01 #000125 VOID min_revolutions",
        ),
        (
            _outcome("dream_catcher", "DC-01", 3, {"segment": "10", "index": 6, "multiplier": 7}),
            "DC-01 #000003 10 x7",
        ),
        (  # a plug-in game the catalog does not know: its scalar facts, no JSON
            _outcome("vendor_game", "VG-01", 1, {"winner": "east", "score": {"e": 3}, "n": [1, 2]}),
            "VG-01 #000001 winner=east n=1,2",
        ),
        (  # a catalog game whose result lacks what its family needs: the facts, no crash
            _outcome("sic_bo", "SB-01", 10, {"total": 9}),
            "SB-01 #000010 total=9",
        ),
    ],
)
def test_lines_from_the_docs(payload: dict[str, Any], expected: str) -> None:
    assert summarize(payload) == expected


def test_a_withheld_card_is_not_shown() -> None:
    # A void blackjack round publishes the dealer's hole card as null: the line names no card.
    void = next(p for p in PAYLOADS if p["game"] == "blackjack" and p["status"] == "void")
    assert void["result"]["cards"]["dealer"]["hole_card"] is None
    assert summarize(void).endswith("VOID round_abandoned")


ROULETTE = {"number": 17, "color": "black", "revolutions": 6}


def test_an_outcome_names_its_dealer_at_the_end() -> None:
    # docs/station.md: every outcome and void carries the dealer on duty when its round opened.
    settled = _outcome("roulette", "ROU-01", 123, ROULETTE, dealer="D-0142")
    assert summarize(settled) == "ROU-01 #000123 17 black (6 turns) · dealt by D-0142"
    void = _outcome("roulette", "ROU-01", 3, None, status="void", reason="misspin")
    voided = summarize({**void, "dealer": "D-0142"})
    assert voided == "ROU-01 #000003 VOID misspin · dealt by D-0142"
    # Without a dealer (a table without [staff]) the line is what it always was.
    assert summarize(_outcome("roulette", "ROU-01", 123, ROULETTE)) == (
        "ROU-01 #000123 17 black (6 turns)"
    )
    assert summarize(_outcome("roulette", "ROU-01", 123, ROULETTE, dealer=None)).endswith("turns)")


def test_a_long_line_is_cut_before_its_dealer() -> None:
    longest = max(PAYLOADS, key=lambda p: len(summarize(p)))
    assert len(summarize(longest)) + len(" · dealt by D-0177") > MAX_LENGTH
    line = summarize({**longest, "dealer": "D-0177"})
    assert len(line) == MAX_LENGTH
    assert line.endswith("… · dealt by D-0177")
    assert line.startswith(summarize(longest)[: MAX_LENGTH - len(" · dealt by D-0177") - 1])


def test_a_hostile_dealer_id_stays_one_short_line() -> None:
    dealer = "D-\u202e{x}\n" + "9" * 80
    line = summarize(_outcome("roulette", "ROU-01", 1, ROULETTE, dealer=dealer))
    assert line.startswith("ROU-01 #000001 17 black (6 turns) · dealt by D-(x) 999")
    assert not {"{", "\n", "\u202e"} & set(line)
    assert line.endswith("…")
    assert len(line) <= MAX_LENGTH


def test_facts_never_show_nested_values() -> None:
    assert facts({"a": {"b": 1}, "c": [{"d": 2}], "e": True, "f": None}) == "e"
    assert facts({}) == "settled"


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: (
        st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(
    game=st.sampled_from([*CATALOG, "not_a_game"]),
    result=st.dictionaries(
        st.sampled_from(
            [
                "number",
                "color",
                "dice",
                "total",
                "winner",
                "player",
                "banker",
                "balls",
                "segment",
                "boxes",
                "dealer",
                "board",
                "lightning",
                "per_ball",
                "rng",
                "bonus",
                "spins",
                "x",
            ]
        )
        | st.text(max_size=10),
        _json,
        max_size=8,
    ),
    table=st.text(min_size=1, max_size=20),
    status=st.sampled_from(["settled", "void"]),
    reason=st.none() | st.text(max_size=80),
    dealer=st.none() | st.text(max_size=60),
)
def test_no_line_is_long_or_json(
    game: str,
    result: dict[str, Any],
    table: str,
    status: str,
    reason: str | None,
    dealer: str | None,
) -> None:
    payload = _outcome(game, table, 1, result, status=status, reason=reason, dealer=dealer)
    line = summarize(payload)
    assert len(line) <= MAX_LENGTH
    assert "{" not in line
    assert "\n" not in line


@pytest.mark.parametrize("payload", PAYLOADS, ids=[p["game"] for p in PAYLOADS])
def test_recorded_lines_are_short_and_start_with_the_table(payload: dict[str, Any]) -> None:
    line = summarize(payload)
    assert len(line) <= MAX_LENGTH
    assert "{" not in line
    assert line.startswith(f"{payload['table']} #")


def test_a_clock_alarm_reads_as_one_line() -> None:
    step = {"type": "clock_step", "step_s": 8640000.0, "suspect": True}
    step |= {"before": "2026-12-01T10:00:00Z", "after": "2027-03-11T10:00:00Z"}
    assert clock_summary(step) == (
        "clock stepped 8640000.0 s: 2026-12-01T10:00:00Z -> 2027-03-11T10:00:00Z"
    )
    back = {"type": "clock_step", "suspect": False, "after": "2026-12-01T10:05:00Z"}
    assert clock_summary(back) == "clock returned to its course at 2026-12-01T10:05:00Z"
    ok = {"type": "clock_confirmed", "by": "FM-0042", "role": "supervisor"}
    assert clock_summary(ok) == "clock confirmed by FM-0042 (supervisor)"
