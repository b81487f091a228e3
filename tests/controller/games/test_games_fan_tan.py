"""Fan Tan (seed-001 §8.1, L3981–4003): the bead count's rules, the engine's rounds, the event and
the replay. Rule tests are named after the seed lines they hold."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError, EventFormatError
from tablectl.controller.core.events import (
    Beads,
    BetsClosed,
    Card,
    Confirm,
    Dice,
    Fault,
    FaultCleared,
    RoundOpen,
    TableEvent,
    Void,
    event_to_dict,
    parse_event,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine, load_rules
from tablectl.controller.engines.beads import BeadEngine
from tablectl.controller.games.fan_tan import (
    BEADS_OUT_OF_RANGE,
    NO_BEADS,
    FanTanRules,
    check_count,
    fan_tan_result,
    last_line,
)
from tests.support.replay import DATA, replay, table_config


def engine(**rules: Any) -> BeadEngine:
    built = build_engine("FT-1", "fan_tan", rules, source="t.toml")
    assert isinstance(built, BeadEngine)
    return built


def feed(target: BeadEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    return [o for e in events for o in target.apply(e)]


def summary(outputs: Sequence[EngineOutput]) -> list[tuple[str, ...]]:
    return [
        (o.status, str(o.reason)) if isinstance(o, Outcome) else ("verdict", o.code)
        for o in outputs
        if isinstance(o, Outcome | Verdict)
    ]


START: Final = (RoundOpen(), BetsClosed())


# -- the rule: the last line of four ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("count", "beads", "big", "odd"),
    [
        pytest.param(1, 1, False, True, id="one-bead"),
        pytest.param(2, 2, False, False, id="two"),
        pytest.param(3, 3, True, True, id="three"),
        pytest.param(4, 4, True, False, id="four-is-a-full-last-line-not-zero"),
        pytest.param(5, 1, False, True, id="five"),
        pytest.param(27, 3, True, True, id="twenty-seven"),
        pytest.param(100, 4, True, False, id="hundred"),
    ],
)
def test_l3989_the_last_line_is_the_result(count: int, beads: int, big: bool, odd: bool) -> None:
    # L3985: lines of four; L3989: "the last four or fewer beads … 1, 2, 3 or 4 beads";
    # L3995 Big (3 or 4) / Small, L3997 Odd (1 or 3) / Even.
    assert fan_tan_result(count) == {"count": count, "beads": beads, "big": big, "odd": odd}


@given(st.integers(min_value=1, max_value=10**9))
def test_l3985_l3989_any_count_leaves_one_to_four_in_lines_of_four(count: int) -> None:
    beads = last_line(count)
    assert 1 <= beads <= 4
    assert (count - beads) % 4 == 0  # the rest was laid out in full lines of four
    result = fan_tan_result(count)
    assert result["big"] is (beads in (3, 4))
    assert result["odd"] is (beads in (1, 3))


def test_a_hand_entry_of_the_last_line_gives_the_same_result_as_the_full_count() -> None:
    for count in range(1, 200):
        assert last_line(last_line(count)) == last_line(count)


def test_l3989_gap_an_empty_cup_is_no_result() -> None:
    finding = check_count(FanTanRules(), 0)
    assert finding is not None
    assert finding.code == NO_BEADS


def test_max_beads_is_the_tables_own_figure() -> None:
    assert check_count(FanTanRules(), 10_000) is None  # unchecked by default (§8.1 [GAP])
    finding = check_count(FanTanRules(max_beads=120), 121)
    assert finding is not None
    assert finding.code == BEADS_OUT_OF_RANGE
    assert check_count(FanTanRules(max_beads=120), 120) is None


@pytest.mark.parametrize(
    ("rules", "message"),
    [
        ({"max_beads": 0}, "max_beads"),
        ({"max_beads": "100"}, "max_beads"),
        ({"beads": 4}, "beads"),
    ],
)
def test_bad_rules_are_config_errors_naming_the_key(rules: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_rules("fan_tan", rules, source="t.toml")


# -- the event -------------------------------------------------------------------------------------


def test_the_beads_event_is_strict_and_round_trips() -> None:
    event = parse_event({"type": "beads", "count": 27, "manual": True})
    assert event == Beads(count=27, manual=True)
    assert event_to_dict(event) == {"type": "beads", "count": 27, "manual": True}
    for bad in ({"count": -1}, {"count": "27"}, {"count": 2.0}, {}, {"count": 3, "line": 3}):
        with pytest.raises(EventFormatError, match="beads"):
            parse_event({"type": "beads", **bad})


# -- the engine ------------------------------------------------------------------------------------


def test_l3987_a_count_after_bets_closed_settles_the_round() -> None:
    table = engine()
    out = feed(table, [*START, Beads(count=27)])
    (outcome,) = [o for o in out if isinstance(o, Outcome)]
    assert (outcome.status, outcome.game, outcome.round) == ("settled", "fan_tan", "FT-1-000001")
    assert outcome.result == {"count": 27, "beads": 3, "big": True, "odd": True, "recounts": 0}
    assert table.snapshot()["last"] == outcome.result
    assert table.phase == "idle"


def test_l3987_a_count_while_the_beads_are_under_the_cup_voids_the_round() -> None:
    # "Players place bets during the time when the beads are under the cup": a count then is
    # a result before bets closed.
    out = feed(engine(), [RoundOpen(), Beads(count=9)])
    assert summary(out) == [("void", "result_before_bets_closed")]


@pytest.mark.parametrize(
    ("events", "expected"),
    [
        pytest.param(
            [*START, Beads(count=0), Beads(count=6)],
            [("verdict", NO_BEADS), ("settled", "None")],
            id="l3989-gap-empty-cup-recount",
        ),
        pytest.param(
            [*START, Fault(code="counter"), Beads(count=6)],
            [("verdict", "fault_latched")],
            id="r14-no-count-counts-while-a-fault-is-latched",
        ),
        pytest.param(
            [
                *START,
                Fault(code="counter"),
                Beads(count=6),
                FaultCleared(code="counter"),
                Beads(count=6),
            ],
            [("verdict", "fault_latched"), ("settled", "None")],
            id="r14-cleared-then-counted",
        ),
        pytest.param(
            [RoundOpen(), Fault(code="counter"), BetsClosed()],
            [("verdict", "fault_latched")],
            id="r14-bets-stay-open",
        ),
        pytest.param(
            [Fault(code="counter"), RoundOpen()],
            [("verdict", "fault_latched")],
            id="r14-no-round-opens",
        ),
        pytest.param(
            [*START, Void(reason="beads_spilled")],
            [("void", "beads_spilled")],
            id="g4-supervisor-void",
        ),
        pytest.param([*START, RoundOpen()], [("void", "round_abandoned")], id="r15-abandoned"),
        pytest.param([Beads(count=3)], [("verdict", "unexpected_event")], id="no-round"),
        pytest.param(
            [*START, Confirm()], [("verdict", "unexpected_event")], id="nothing-to-confirm"
        ),
        pytest.param(
            [*START, Card(card="KH"), Dice(dice=(1, 2))],
            [("verdict", "not_for_this_game"), ("verdict", "not_for_this_game")],
            id="other-families",
        ),
    ],
)
def test_rounds(events: list[TableEvent], expected: list[tuple[str, ...]]) -> None:
    assert summary(feed(engine(), events)) == expected


def test_a_recount_is_counted_in_the_result() -> None:
    out = feed(engine(max_beads=200), [*START, Beads(count=500), Beads(count=0), Beads(count=8)])
    assert summary(out) == [
        ("verdict", BEADS_OUT_OF_RANGE),
        ("verdict", NO_BEADS),
        ("settled", "None"),
    ]
    outcome = next(o for o in out if isinstance(o, Outcome))
    assert outcome.result is not None
    assert outcome.result["recounts"] == 2


EVENTS = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(Beads, count=st.integers(min_value=0, max_value=300)),
    st.builds(Void, reason=st.sampled_from(["", "spilled"])),
    st.builds(Confirm),
    st.builds(Fault, code=st.sampled_from(["counter", "camera"])),
    st.builds(FaultCleared, code=st.sampled_from(["counter", "camera"])),
    st.builds(Card, card=st.just("KH")),
)


@settings(max_examples=300)
@given(st.lists(EVENTS, max_size=40), st.sampled_from([None, 100]))
def test_any_sequence_never_raises_and_ends_each_round_once(
    events: list[TableEvent], max_beads: int | None
) -> None:
    table = engine(**({} if max_beads is None else {"max_beads": max_beads}))
    ended: list[str] = []
    for event in events:
        for output in table.apply(event):
            if isinstance(output, Outcome):
                assert output.round not in ended
                ended.append(output.round)
                if output.status == "settled":
                    assert output.result is not None
                    assert 1 <= output.result["beads"] <= 4
                    assert output.result["count"] >= 1
        assert table.phase in ("idle", "open", "closed")


# -- the replay ------------------------------------------------------------------------------------


def test_fan_tan_stream_replays_to_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = table_config(tmp_path, "FT-T1", "fan_tan")
    outcomes, diagnostics = replay(capsys, config, DATA / "fan-tan.jsonl")
    assert [(o["round"], o["status"], o["reason"]) for o in outcomes] == [
        ("FT-T1-000001", "settled", None),
        ("FT-T1-000002", "settled", None),
        ("FT-T1-000003", "void", "result_before_bets_closed"),
        ("FT-T1-000004", "settled", None),
        ("FT-T1-000005", "void", "beads_spilled"),
        ("FT-T1-000006", "settled", None),
    ]
    results = [o["result"] for o in outcomes]
    assert [r["beads"] for r in results if r and "beads" in r] == [3, 4, 1, 2]
    assert results[1]["recounts"] == 1  # the counter saw 0, the dealer keyed in 12
    codes = [(d["line"], d["verdict"]["code"]) for d in diagnostics if "verdict" in d]
    assert codes == [(6, NO_BEADS), (13, "fault_latched"), (22, "unexpected_event")]
