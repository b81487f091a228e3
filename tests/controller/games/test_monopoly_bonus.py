"""Monopoly Live's dice bonus: the roll-count rule, Jail, the board, the wheel engine's round.

Rule ids are seed-001 lines (``../shared/seeds/001_*.txt`` L1891–1921; digest §5.2, §7.4). The
board is not in the rule book: the squares are counted on the documented assumption (the standard
40-square board, Jail 10, Go to Jail 30; ``docs/verdicts.md`` "Monopoly's dice bonus").
"""

from __future__ import annotations

import asyncio
import io
import json
import pickle
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.controller.core.errors import ConfigError, RuleError
from tablectl.controller.core.events import (
    BetsClosed,
    Confirm,
    Dice,
    Fault,
    FaultCleared,
    NoSpin,
    RollInvalid,
    RollStarted,
    RoundOpen,
    Segment,
    TableEvent,
    Void,
    WheelSpin,
    parse_event,
)
from tablectl.controller.core.outcomes import EngineOutput, Outcome, Verdict
from tablectl.controller.engines import build_engine, load_rules
from tablectl.controller.engines.wheel import WheelEngine
from tablectl.controller.games.monopoly_bonus import (
    Board,
    DiceBonus,
    bonus_result,
    check_roll,
    reroll,
    roll,
    start_bonus,
)
from tablectl.controller.games.wheel import WheelRules
from tablectl.controller.journal import Journal
from tablectl.controller.service.checkpoint import (
    Checkpoints,
    RecoveryState,
    _GameStateUnpickler,
    fingerprint,
)
from tablectl.controller.service.recovery import JournalScan
from tablectl.controller.service.runner import TableRunner
from tablectl.drivers.clock import ManualClock
from tests.support.replay import DATA, replay, table_config

DICE_BONUS = {"dice_bonus": True}
STREAM = DATA / "monopoly-bonus.jsonl"
CLOCK = 1_764_496_800.0


def rules(**overrides: Any) -> WheelRules:
    loaded: WheelRules = load_rules("monopoly", overrides)
    return loaded


def make(**overrides: Any) -> WheelEngine:
    return WheelEngine("MON-01", rules(**{**DICE_BONUS, **overrides}), game="monopoly")


def at(label: str, **kw: Any) -> Segment:
    """The segment event of the first segment labelled ``label`` in the preset layout."""
    return Segment(index=rules().segments.index(label), **kw)


def feed(engine: WheelEngine, events: Sequence[TableEvent]) -> list[EngineOutput]:
    out: list[EngineOutput] = []
    for event in events:
        out.extend(engine.apply(event))
    return out


def codes(outputs: Sequence[EngineOutput]) -> list[str]:
    return [
        o.code if isinstance(o, Verdict) else f"{o.status}:{o.reason}"
        for o in outputs
        if isinstance(o, (Verdict, Outcome))
    ]


def outcome(outputs: Sequence[EngineOutput]) -> Outcome:
    (found,) = [o for o in outputs if isinstance(o, Outcome)]
    return found


def rolls(*pairs: tuple[int, int]) -> list[TableEvent]:
    return [Dice(dice=p) for p in pairs]


def play(segment: str, pairs: Sequence[tuple[int, int]], board: Board | None = None) -> DiceBonus:
    """The pure bonus after ``pairs`` (stops when it ends: later pairs are never rolled)."""
    bonus = start_bonus(segment, 2 if segment == "2_rolls" else 4, board)
    for pair in pairs:
        if bonus.done:
            break
        bonus = roll(bonus, pair)
    return bonus


# -- the rule book, line by line ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("segment", "pairs", "count", "extra", "jailed", "end", "position"),
    [
        pytest.param("2_rolls", [(1, 2), (3, 4)], 2, 0, False, "rolls", 10,
                     id="L1897-2-rolls-rolls-the-dice-twice"),
        pytest.param("4_rolls", [(1, 2), (3, 4), (1, 3), (2, 6)], 4, 0, False, "rolls", 22,
                     id="L1897-4-rolls-rolls-them-four-times"),
        pytest.param("2_rolls", [(3, 3), (1, 2), (5, 6)], 3, 1, False, "rolls", 20,
                     id="L1899-a-double-gives-an-additional-roll"),
        pytest.param("2_rolls", [(1, 1), (2, 2), (1, 2), (1, 3)], 4, 2, False, "rolls", 13,
                     id="L1899-every-double-gives-one"),
        pytest.param("2_rolls", [(6, 5), (5, 4)], 2, 0, False, "rolls", 20,
                     id="L1901-moves-by-the-sum-of-the-dots"),
        pytest.param("4_rolls", [(6, 6), (6, 6), (3, 3), (1, 2), (6, 6)], 4, 3, True, "jail", 10,
                     id="L1921-go-to-jail-then-no-double-ends-the-bonus"),
        pytest.param("2_rolls", [(6, 6), (6, 6), (3, 3), (2, 2), (5, 6)], 5, 3, True, "rolls", 25,
                     id="L1919-the-double-out-of-jail-gives-no-extra-roll"),
        pytest.param("4_rolls", [(6, 4), (6, 4), (1, 2), (3, 4), (1, 1)], 4, 0, True, "rolls", 10,
                     id="L1921-sent-to-jail-on-the-last-roll-ends-there"),
        pytest.param("2_rolls", [(5, 5), (4, 6), (1, 2)], 3, 1, False, "rolls", 23,
                     id="L1921-jail-visiting-is-not-go-to-jail"),
    ],
)  # fmt: skip
def test_the_roll_count_rule(
    segment: str,
    pairs: list[tuple[int, int]],
    count: int,
    extra: int,
    jailed: bool,
    end: str,
    position: int,
) -> None:
    bonus = play(segment, pairs)
    assert len(bonus.rolls) == count
    assert (bonus.extra_rolls, bonus.jailed, bonus.end, bonus.position) == (
        extra,
        jailed,
        end,
        position,
    )
    assert bonus.done
    assert bonus.remaining == 0


def test_l1899_a_double_gives_an_extra_roll() -> None:
    bonus = roll(start_bonus("2_rolls", 2), (4, 4))
    assert (bonus.remaining, bonus.extra_rolls, bonus.rolls[0].extra_roll) == (2, 1, True)
    assert bonus.rolls[0].to_dict()["double"] is True


def test_l1919_the_pair_used_to_get_out_of_jail_gives_no_extra_roll() -> None:
    bonus = play("2_rolls", [(6, 6), (6, 6), (3, 3)])
    assert (bonus.in_jail, bonus.remaining) == (True, 2)
    out = roll(bonus, (2, 2))
    last = out.rolls[-1]
    assert (last.jail, last.double, last.extra_roll) == ("released", True, False)
    assert (out.in_jail, out.position, out.remaining) == (False, 14, 1)


def test_l1921_in_jail_no_pair_ends_the_bonus_and_forfeits_the_rolls_left() -> None:
    bonus = play("4_rolls", [(4, 6), (5, 5), (6, 4)])  # 10, 20 (double: +1), 30 → Jail
    assert (bonus.in_jail, bonus.remaining) == (True, 2)
    out = roll(bonus, (1, 2))
    assert (out.end, out.unused_rolls, out.remaining, out.rolls[-1].jail) == (
        "jail",
        1,
        0,
        "stayed",
    )
    with pytest.raises(RuleError, match="ended"):
        roll(out, (1, 1))


def test_l1897_two_dice_a_roll() -> None:
    assert check_roll((3, 4)) is None
    for dice in ((3,), (3, 4, 5)):
        finding = check_roll(dice)
        assert finding is not None
        assert (finding.code, finding.data["expected"]) == ("wrong_dice_count", 2)
    with pytest.raises(RuleError):
        roll(start_bonus("2_rolls", 2), (3, 4, 5))
    with pytest.raises(RuleError):
        roll(start_bonus("2_rolls", 2), (0, 7))


def test_passing_go_and_a_configured_board() -> None:
    # The book gives no board (L1907 names the fields only): a table configures its own.
    board = Board(squares=20, jail=5, go_to_jail=15)
    bonus = play("4_rolls", [(6, 5), (6, 5), (1, 2), (1, 3)], board)
    assert [(r.square, r.passed_go) for r in bonus.rolls] == [
        (11, False),
        (2, True),
        (5, False),  # Jail, just visiting
        (9, False),
    ]
    sent = play("2_rolls", [(6, 5), (2, 2)], board)
    assert (sent.rolls[-1].square, sent.position, sent.in_jail) == (15, 5, True)
    assert bonus_result(sent)["board"] == {"squares": 20, "go": 0, "jail": 5, "go_to_jail": 15}


@pytest.mark.parametrize(
    ("squares", "jail", "go_to_jail", "message"),
    [(1, 1, 1, "at least 2"), (40, 0, 30, "jail 0"), (40, 10, 40, "go_to_jail 40"),
     (40, 10, 10, "same square")],
)  # fmt: skip
def test_a_board_that_cannot_be(squares: int, jail: int, go_to_jail: int, message: str) -> None:
    with pytest.raises(RuleError, match=message):
        Board(squares, jail, go_to_jail)


def test_a_reroll_counts_nothing() -> None:
    bonus = reroll(start_bonus("2_rolls", 2))
    assert (bonus.rerolls, bonus.rolls, bonus.remaining) == (1, (), 2)


# -- the roll-count rule against an independent model ---------------------------------------------


def model(due: int, pairs: Sequence[tuple[int, int]], board: Board) -> tuple[int, int, bool, str]:
    """Rolls counted, extra rolls, jailed, why it ended: written from L1897–L1921 alone."""
    left, extra, pos, in_jail, jailed, counted = due, 0, 0, False, False, 0
    for a, b in pairs:
        if left == 0:
            return counted, extra, jailed, "rolls"
        counted, left = counted + 1, left - 1
        if in_jail and a != b:
            return counted, extra, jailed, "jail"
        if a == b and not in_jail:
            left, extra = left + 1, extra + 1
        in_jail = False
        pos = (pos + a + b) % board.squares
        if pos == board.go_to_jail:
            pos, in_jail, jailed = board.jail, True, True
    return counted, extra, jailed, "rolls" if left == 0 else "open"


die = st.integers(1, 6)


@st.composite
def boards(draw: st.DrawFn) -> Board:
    """Any board (the book gives none): small ones so Go to Jail comes up often."""
    squares = draw(st.integers(3, 48))
    jail, go_to_jail = draw(
        st.lists(st.integers(1, squares - 1), min_size=2, max_size=2, unique=True)
    )
    return Board(squares, jail, go_to_jail)


@settings(max_examples=400)
@given(
    st.sampled_from([1, 2, 4]),
    st.lists(st.tuples(die, die), max_size=30),
    st.one_of(st.just(Board()), boards()),
)
def test_the_roll_count_rule_matches_a_small_model(
    due: int, pairs: list[tuple[int, int]], board: Board
) -> None:
    bonus = start_bonus("2_rolls", due, board)
    for pair in pairs:
        if bonus.done:
            break
        bonus = roll(bonus, pair)
    counted, extra, jailed, end = model(due, pairs, board)
    assert (len(bonus.rolls), bonus.extra_rolls, bonus.jailed) == (counted, extra, jailed)
    assert (bonus.end or "open") == end
    # Every roll used one of the rolls due; a bonus ended by its rolls used them all.
    if bonus.end == "rolls":
        assert len(bonus.rolls) == due + bonus.extra_rolls
    if bonus.end == "jail":
        assert len(bonus.rolls) + bonus.unused_rolls == due + bonus.extra_rolls
    assert [r.remaining for r in bonus.rolls[:-1]] == [
        due + sum(r.extra_roll for r in bonus.rolls[: i + 1]) - (i + 1)
        for i in range(len(bonus.rolls) - 1)
    ]
    json.dumps(bonus_result(bonus))


# -- the [rules] switch ---------------------------------------------------------------------------


def test_without_the_switch_a_rolls_segment_ends_the_round_as_before() -> None:
    # dice_bonus = false (the default): a table with no dice reader, or a virtual bonus (§5.2 GAP).
    plain = WheelEngine("MON-01", rules(), game="monopoly")
    assert rules().dice_bonus is False
    out = feed(plain, [RoundOpen(), BetsClosed(), at("2_rolls")])
    result = outcome(out).result
    assert result is not None
    assert "bonus" not in result
    assert "bonus" not in plain.snapshot()
    assert codes(feed(plain, rolls((1, 2)))) == ["dice_without_bonus"]


@pytest.mark.parametrize(
    ("game", "overrides", "message"),
    [
        ("dream_catcher", DICE_BONUS, "dice_bonus needs bonus_rolls"),
        ("monopoly", {"bonus_rolls": {"5": 2}}, "not bonus segments"),
        ("monopoly", {"bonus_rolls": {"2_rolls": 0, "4_rolls": 4}}, "at least 1 roll"),
        ("monopoly", {"dice_bonus": "yes"}, "rules.dice_bonus"),
        ("monopoly", {**DICE_BONUS, "board_go_to_jail": 40}, "go_to_jail 40"),
        ("monopoly", {**DICE_BONUS, "board_jail": 30}, "same square"),
    ],
)
def test_bad_dice_bonus_rules_are_config_errors(
    game: str, overrides: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        build_engine("T1", game, overrides, source="t.toml")


# -- through the wheel engine ---------------------------------------------------------------------


def test_segment_then_rolls_then_the_outcome() -> None:
    engine = make()
    assert (
        feed(engine, [RoundOpen(), BetsClosed(), WheelSpin(), at("4_rolls", revolutions=3)]) == []
    )
    assert engine.phase == "bonus"
    snap = engine.snapshot()["bonus"]
    assert (snap["segment"], snap["remaining"], snap["rolls"]) == ("4_rolls", 4, [])
    out = feed(engine, [RollStarted(), *rolls((2, 2), (1, 3), (6, 5), (1, 2))])
    assert out == []
    assert engine.snapshot()["bonus"]["remaining"] == 1
    done = outcome(feed(engine, [Dice(dice=(3, 4), ts="2026-11-30T12:00:00.000000Z")]))
    assert (done.status, done.ts, engine.phase) == (
        "settled",
        "2026-11-30T12:00:00.000000Z",
        "idle",
    )
    result = done.result
    assert result is not None
    bonus = result.pop("bonus")
    # Every field of the wheel's own result is what a table without the dice bonus publishes.
    plain = WheelEngine("MON-01", rules(), game="monopoly")
    before = feed(plain, [RoundOpen(), BetsClosed(), WheelSpin(), at("4_rolls", revolutions=3)])
    assert result == outcome(before).result
    assert [r["dice"] for r in bonus["rolls"]] == [[2, 2], [1, 3], [6, 5], [1, 2], [3, 4]]
    assert [r["sum"] for r in bonus["rolls"]] == [4, 4, 11, 3, 7]
    assert [r["double"] for r in bonus["rolls"]] == [True, False, False, False, False]
    assert (bonus["extra_rolls"], bonus["jailed"], bonus["end"]) == (1, False, "rolls")
    assert bonus["rolls"][-1]["square"] == 29
    assert engine.snapshot()["bonus"] is None
    assert engine.snapshot()["last"] == {"segment": "4_rolls", "multiplier": 1}


def test_chance_then_rolls_keeps_the_chain() -> None:
    engine = make()
    out = feed(engine, [RoundOpen(), BetsClosed(), at("chance"), at("2_rolls"), *rolls((1, 2))])
    assert out == []
    result = outcome(feed(engine, rolls((1, 3)))).result
    assert result is not None
    assert [s["segment"] for s in result["spins"]] == ["chance", "2_rolls"]


@pytest.mark.parametrize(
    ("before", "event"),
    [
        pytest.param([], Dice(dice=(1, 2)), id="idle"),
        pytest.param([RoundOpen()], Dice(dice=(1, 2)), id="betting"),
        pytest.param([RoundOpen(), BetsClosed()], Dice(dice=(1, 2)), id="before-the-segment"),
        pytest.param([RoundOpen(), BetsClosed()], RollStarted(), id="roll-started"),
        pytest.param(
            [RoundOpen(), BetsClosed()], RollInvalid(code="die_cocked"), id="roll-invalid"
        ),
        pytest.param([RoundOpen(), BetsClosed(), at("5")], Dice(dice=(1, 2)), id="after-a-number"),
        pytest.param(
            [RoundOpen(), BetsClosed(), Fault(code="sensor")], Dice(dice=(1, 2)), id="held-spin"
        ),
    ],
)
def test_dice_when_no_bonus_is_in_play(before: list[TableEvent], event: TableEvent) -> None:
    engine = make()
    feed(engine, before)
    phase, snap = engine.phase, engine.snapshot()
    out = engine.apply(event)
    assert codes(out) == ["dice_without_bonus"]
    assert isinstance(out[0], Verdict)
    assert out[0].data["dice_bonus"] is True
    assert (engine.phase, engine.snapshot()) == (phase, snap)


def test_dice_on_a_wheel_without_a_dice_bonus() -> None:
    engine = WheelEngine("DC-01", load_rules("dream_catcher"), game="dream_catcher")
    out = feed(engine, [RoundOpen(), BetsClosed(), Dice(dice=(1, 2))])
    assert codes(out) == ["dice_without_bonus"]
    assert isinstance(out[0], Verdict)
    assert out[0].data["dice_bonus"] is False


def test_the_wrong_number_of_dice_is_not_a_roll() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls")])
    out = feed(engine, [Dice(dice=(1,)), Dice(dice=(1, 2, 3))])
    assert codes(out) == ["wrong_dice_count", "wrong_dice_count"]
    assert engine.snapshot()["bonus"]["rolls"] == []
    assert codes(feed(engine, rolls((1, 2), (3, 4)))) == ["settled:None"]


def test_a_roll_invalid_is_a_reroll_with_bets_standing() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls")])
    out = feed(engine, [RollStarted(), RollInvalid(code="dice_not_at_rest", detail="die 2")])
    # Coded as a dice table's re-roll (docs/games/dice.md): the reader's code, data.reroll.
    assert codes(out) == ["dice_not_at_rest"]
    assert isinstance(out[0], Verdict)
    assert out[0].data | {"phase": "bonus"} == {
        "event": "roll_invalid",
        "phase": "bonus",
        "reroll": True,
        "rerolls": 1,
        "detail": "die 2",
    }
    assert engine.phase == "bonus"
    result = outcome(feed(engine, rolls((1, 2), (3, 4)))).result
    assert result is not None
    assert (result["bonus"]["rerolls"], len(result["bonus"]["rolls"])) == (1, 2)


def test_the_wheel_is_done_during_the_bonus() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls")])
    out = feed(engine, [at("5"), WheelSpin(), NoSpin(reason=""), BetsClosed(), Confirm()])
    assert codes(out) == ["unexpected_event"] * 5
    assert engine.phase == "bonus"


def test_a_fault_during_the_bonus_holds_it_and_a_roll_read_meanwhile_waits() -> None:
    # Monopoly has no malfunction clause (§2.2): G3, G4, C42 → a supervisor decides.
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls"), *rolls((1, 2))])
    out = feed(engine, [Fault(code="dice_reader")])
    assert codes(out) == ["device_fault"]
    assert engine.phase == "bonus_held"
    assert engine.snapshot()["held"] is True
    out = feed(engine, [at("5"), RoundOpen(), Dice(dice=(2, 2, 2)), Dice(dice=(5, 6))])
    assert codes(out) == ["unexpected_event", "decision_pending", "wrong_dice_count"]
    assert len(engine.snapshot()["bonus"]["rolls"]) == 1  # the held roll is not counted yet
    done = outcome(feed(engine, [Confirm(), FaultCleared(code="dice_reader")]))
    assert done.result is not None
    assert [r["dice"] for r in done.result["bonus"]["rolls"]] == [[1, 2], [5, 6]]


def test_a_held_bonus_confirmed_without_a_roll_goes_on() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls"), Fault(code="shaker")])
    feed(engine, [RollStarted(), Dice(dice=(1, 1)), RollInvalid(code="die_off_table")])
    assert feed(engine, [Confirm()]) == []
    assert engine.phase == "bonus"
    assert engine.snapshot()["bonus"]["rolls"] == []  # the re-roll replaced the held roll
    assert codes(feed(engine, rolls((1, 2), (3, 4)))) == ["settled:None"]


def test_a_held_bonus_voided_by_the_supervisor_keeps_the_rolls_so_far() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls"), *rolls((3, 3)), Fault(code="x")])
    void = outcome(feed(engine, [Void(reason="reader_down")]))
    assert (void.status, void.reason) == ("void", "reader_down")
    assert void.result is not None
    assert (void.result["bonus"]["remaining"], void.result["bonus"]["end"]) == (2, None)


def test_on_fault_void_voids_the_bonus_round() -> None:
    # A table whose house rule is Dream Catcher's "any malfunction cancels the round" (G1).
    engine = make(on_fault="void")
    feed(engine, [RoundOpen(), BetsClosed(), at("4_rolls"), *rolls((1, 2))])
    void = outcome(feed(engine, [Fault(code="dice_reader")]))
    assert (void.status, void.reason) == ("void", "device_fault")
    assert void.result is not None
    assert len(void.result["bonus"]["rolls"]) == 1


def test_a_new_round_during_the_bonus_abandons_it() -> None:
    engine = make()
    feed(engine, [RoundOpen(), BetsClosed(), at("2_rolls"), *rolls((1, 2))])
    void = outcome(feed(engine, [RoundOpen()]))
    assert (void.reason, engine.phase) == ("round_abandoned", "open")
    assert void.result is not None
    assert void.result["bonus"]["remaining"] == 1
    assert engine.snapshot()["bonus"] is None


event_strategy = st.one_of(
    st.builds(RoundOpen),
    st.builds(BetsClosed),
    st.builds(WheelSpin),
    st.builds(Segment, index=st.integers(-1, 55)),
    st.builds(Segment, index=st.sampled_from([13, 16, 47])),  # 2 rolls, Chance, 4 rolls
    st.builds(Confirm),
    st.builds(Void, reason=st.just("x")),
    st.builds(Fault, code=st.just("sensor")),
    st.builds(FaultCleared, code=st.just("sensor")),
    st.builds(RollStarted),
    st.builds(RollInvalid, code=st.just("die_cocked")),
    st.builds(Dice, dice=st.lists(die, min_size=1, max_size=3).map(tuple)),
    st.builds(Dice, dice=st.tuples(die, die)),
)


@settings(max_examples=300)
@given(st.lists(event_strategy, max_size=80))
def test_any_sequence_never_raises_and_every_settled_bonus_keeps_the_rule(
    events: list[TableEvent],
) -> None:
    engine = make()
    for event in events:
        for output in engine.apply(event):
            if not isinstance(output, Outcome) or output.status != "settled":
                continue
            assert output.result is not None
            bonus = output.result.get("bonus")
            if output.result["segment"] not in ("2_rolls", "4_rolls"):
                assert bonus is None
                continue
            assert bonus is not None
            pairs = [tuple(r["dice"]) for r in bonus["rolls"]]
            counted, extra, jailed, end = model(bonus["rolls_due"], pairs, Board())
            assert (counted, extra, jailed, end) == (
                len(pairs),
                bonus["extra_rolls"],
                bonus["jailed"],
                bonus["end"],
            )


# -- across a checkpoint and a journal replay -----------------------------------------------------


def _events() -> list[TableEvent]:
    lines = STREAM.read_text(encoding="utf-8").splitlines()
    return [parse_event(json.loads(line)) for line in lines if line.strip()]


def _through_the_checkpoint_unpickler(engine: WheelEngine) -> WheelEngine:
    state = RecoveryState(engine, JournalScan(), {})
    loaded: WheelEngine = _GameStateUnpickler(io.BytesIO(pickle.dumps(state))).load().engine
    return loaded


@pytest.mark.parametrize(
    ("cut", "phase"),
    [
        pytest.param(5, "bonus", id="first-roll-due"),
        pytest.param(18, "bonus", id="after-a-reroll"),
        pytest.param(33, "bonus", id="in-jail"),
        pytest.param(55, "bonus_held", id="held-with-a-roll"),
        pytest.param(65, "idle", id="between-rounds"),
    ],
)
def test_an_engine_restored_from_a_checkpoint_goes_on_as_if_never_stopped(
    cut: int, phase: str
) -> None:
    events = _events()
    live = WheelEngine("T1", rules(**DICE_BONUS), game="monopoly")
    feed(live, events[:cut])
    assert live.phase == phase
    restored = _through_the_checkpoint_unpickler(live)
    assert restored.snapshot() == live.snapshot()
    assert feed(restored, events[cut:]) == feed(live, events[cut:])


def _runner(journal: Journal, *, every: int = 10_000, store: bool = True) -> TableRunner:
    checkpoints = None
    if store:
        checkpoints = Checkpoints(
            journal.path, "T1", fingerprint(table="T1", game="monopoly", rules=DICE_BONUS)
        )
    return TableRunner(
        table_id="T1",
        engine=build_engine("T1", "monopoly", DICE_BONUS, source="test"),
        journal=journal,
        clock=ManualClock(CLOCK),
        checkpoints=checkpoints,
        checkpoint_every=every,
    )


def _state(runner: TableRunner) -> tuple[Any, ...]:
    return (
        runner.engine.snapshot(),
        runner.engine.current_round,
        runner.state.scan,
        runner.latches.journaled,
    )


def test_a_checkpoint_mid_bonus_then_a_crash_rebuilds_what_a_full_replay_does(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite"
    events = _events()
    # The crash comes inside round 6's bonus, held by the shaker's fault.
    crash = next(i for i, e in enumerate(events) if isinstance(e, Fault) and e.code == "shaker")
    with Journal(path, "T1") as journal:
        runner = _runner(journal, every=7)
        # The live path one event at a time, periodic checkpoints included.
        asyncio.run(_step_each(runner, events[:crash]))
        runner.committer.handle(events[crash])  # handle() alone never checkpoints: records after it
        live = runner.engine.snapshot()
        assert live["phase"] == "bonus_held"
        written = runner.restart.checkpoints.seq if runner.restart.checkpoints else 0
        total = journal.last_seq
    assert 0 < written < total
    copy = tmp_path / "full.sqlite"
    copy.write_bytes(path.read_bytes())
    with Journal(copy, "T1") as journal:
        full = _runner(journal, store=False)
        full.restart.recover()
        expected = _state(full)
    assert expected[0] == live
    with Journal(path, "T1") as journal:
        runner = _runner(journal)
        assert runner.restart.recover() <= total - written
        assert _state(runner) == expected
        for event in events[crash + 1 :]:  # and play goes on from the rebuilt bonus
            runner.committer.handle(event)
        assert runner.engine.snapshot()["rounds"] == 9


# -- tablectl replay ------------------------------------------------------------------------------


def test_the_replay_stream(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = table_config(tmp_path, "MON-T1", "monopoly", "dice_bonus = true")
    outcomes, verdicts = replay(capsys, config, STREAM)
    assert [(o["status"], o["reason"], o["result"].get("segment")) for o in outcomes] == [
        ("settled", None, "2_rolls"),
        ("settled", None, "4_rolls"),
        ("settled", None, "2_rolls"),
        ("settled", None, "4_rolls"),
        ("settled", None, "2_rolls"),  # held, confirmed (G3)
        ("void", "dice_reader_down", None),  # held, voided by the supervisor
        ("settled", None, "5"),
        ("void", "round_abandoned", None),
        ("settled", None, "10"),
    ]
    bonuses = [o["result"].get("bonus") for o in outcomes]
    assert [[r["dice"] for r in b["rolls"]] for b in bonuses[:2]] == [
        [[2, 5], [4, 6]],
        [[1, 1], [3, 5], [6, 2], [2, 3], [4, 1]],
    ]
    assert [b["extra_rolls"] for b in bonuses[:5]] == [0, 1, 3, 1, 0]
    assert [(b["jailed"], b["end"], b["unused_rolls"]) for b in bonuses[2:4]] == [
        (True, "rolls", 0),  # L1919: out of Jail with a double, no extra roll
        (True, "jail", 1),  # L1921: no double in Jail, the bonus ends
    ]
    assert [r["jail"] for r in bonuses[2]["rolls"]] == [None, None, "sent", "released", None]
    assert bonuses[1]["rerolls"] == 1
    assert bonuses[5]["remaining"] == 1
    assert bonuses[7]["remaining"] == 1
    assert bonuses[6] is None
    assert bonuses[8] is None
    assert [v["verdict"]["code"] for v in verdicts] == [
        "die_cocked",
        "wrong_dice_count",
        "device_fault",
        "device_fault",
        "dice_without_bonus",
        "dice_without_bonus",
    ]


def test_the_replay_stream_without_the_switch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """dice_bonus = false: each rolls segment ends its round; every dice event is refused."""
    config = table_config(tmp_path, "MON-T1", "monopoly")
    outcomes, verdicts = replay(capsys, config, STREAM)
    segments = ["2_rolls", "4_rolls", "2_rolls", "4_rolls", "2_rolls", "2_rolls", "5", "2_rolls"]
    assert [(o["status"], o["result"]["segment"]) for o in outcomes] == [
        ("settled", segment) for segment in [*segments, "10"]
    ]
    assert all("bonus" not in o["result"] for o in outcomes)
    # The supervisor's confirm and void find no round: the rolls segment had already ended it.
    assert {(v["line"], v["verdict"]["code"]) for v in verdicts} - {
        (v["line"], "dice_without_bonus") for v in verdicts
    } == {(56, "unexpected_event"), (64, "unexpected_event")}


async def _step_each(runner: TableRunner, events: Sequence[TableEvent]) -> None:
    for event in events:
        await runner.step([event])
