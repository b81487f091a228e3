"""The dice interpreter alone, on scripted time: messages in, events out (``docs/protocols/dice.md``
§9). Table-driven where the rule is a mapping: every no-result reason and every fault to its stable
code."""

from __future__ import annotations

from typing import Any

import pytest

from tablectl.drivers.dice.interpreter import FAULT_CONFIG_MISMATCH, DiceInterpreter, fault_code
from tablectl.drivers.dice.protocol import (
    NO_RESULT_WIRE,
    Ack,
    BettingClosed,
    BettingOpen,
    DecodeError,
    Fault,
    FaultClear,
    Identify,
    Identity,
    Message,
    Nak,
    NoResult,
    QueryStatus,
    RepeatLast,
    Result,
    Rolling,
    Status,
    TestReport,
)
from tablectl.drivers.events import (
    BettingOpened,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    DiceRead,
    DiceRollInvalid,
    DiceRollStarted,
    NoMoreBets,
    RollInvalidCode,
)

UNIT = Identity("TDS-1", "1.0.0", "SIM00001", 3)


def host(**options: Any) -> DiceInterpreter:
    """An interpreter after the handshake, with the unit identified (no event yet)."""
    interpreter = DiceInterpreter("dice", **options)
    interpreter.connected(0.0)
    assert interpreter.take_commands() == [Identify(), QueryStatus()]
    return interpreter


def names(events: list[DeviceEvent]) -> list[str]:
    return [type(e).__name__ for e in events]


def run(interpreter: DiceInterpreter, *messages: Message, at: float = 0.1) -> list[DeviceEvent]:
    events: list[DeviceEvent] = []
    for message in messages:
        events += interpreter.feed(message, at)
    return events


def opened(game: int = 12, **options: Any) -> DiceInterpreter:
    """Identified and with game ``game`` announced and open."""
    interpreter = host(**options)
    identity = Identity("TDS-1", "1.0.0", "S1", options.get("dice", 3), options.get("colors") or ())
    assert names(run(interpreter, identity, BettingOpen(game))) == [
        "DeviceAvailable",
        "BettingOpened",
    ]
    return interpreter


# --- the cycle -----------------------------------------------------------------------------------


def test_a_normal_game() -> None:
    interpreter = host()
    events = run(
        interpreter,
        UNIT,
        Status("ready", 12, 56),
        BettingClosed(12, "timer"),
        Rolling(12, 57),
        Result(12, 57, (4, 6, 1), (), 97, "CAM1"),
        BettingOpen(13),
    )
    assert events == [
        DeviceAvailable(
            device="dice", at=0.1, detail="TDS-1 firmware 1.0.0 serial SIM00001, 3 dice"
        ),
        BettingOpened(device="dice", at=0.1),
        NoMoreBets(device="dice", at=0.1),
        DiceRollStarted(device="dice", at=0.1),
        DiceRead(device="dice", at=0.1, dice=(4, 6, 1), reader="CAM1", confidence=0.97),
        BettingOpened(device="dice", at=0.1),
    ]


def test_repeated_frames_and_levels_are_idempotent() -> None:
    interpreter = opened()
    events = run(
        interpreter,
        BettingOpen(12),
        Status("ready", 12, 56),
        BettingClosed(12, "button"),
        BettingClosed(12, "button"),
        Status("closed", 12, 56),
        Rolling(12, 57),
        Status("rolling", 12, 57),
        Rolling(12, 57),
    )
    assert names(events) == ["NoMoreBets", "DiceRollStarted"]


def test_a_re_roll_is_a_new_roll_in_the_same_game() -> None:
    interpreter = opened()
    events = run(
        interpreter,
        BettingClosed(12, "host"),
        Rolling(12, 57),
        NoResult(12, 57, "die_cocked", "die 2"),
        Status("closed", 12, 57),
        Rolling(12, 58),
        Result(12, 58, (1, 1, 2)),
    )
    assert names(events) == [
        "NoMoreBets",
        "DiceRollStarted",
        "DiceRollInvalid",
        "DiceRollStarted",
        "DiceRead",
    ]
    assert interpreter.take_commands() == []  # roll 57's outcome came: nothing to ask


@pytest.mark.parametrize(
    ("lost", "expected"),
    [
        # What a status or a later frame fills in when frames were lost, always in order.
        ([Status("closed", 13, 57)], ["BettingOpened", "NoMoreBets"]),
        ([Status("rolling", 13, 58)], ["BettingOpened", "NoMoreBets", "DiceRollStarted"]),
        ([BettingClosed(13, "timer")], ["BettingOpened", "NoMoreBets"]),
        ([Rolling(13, 58)], ["BettingOpened", "NoMoreBets", "DiceRollStarted"]),
        (
            [BettingOpen(13), Status("rolling", 13, 58), Result(13, 58, (2, 2, 2))],
            ["BettingOpened", "NoMoreBets", "DiceRollStarted", "DiceRead"],
        ),
        # The game's frames were lost but the result is for the announced game: all four.
        (
            [Status("ready", 13, 57), Result(13, 58, (2, 2, 2))],
            ["BettingOpened", "NoMoreBets", "DiceRollStarted", "DiceRead"],
        ),
    ],
)
def test_lost_frames_are_filled_in_in_order(lost: list[Message], expected: list[str]) -> None:
    interpreter = opened()
    run(interpreter, BettingClosed(12, "timer"), Rolling(12, 57), Result(12, 57, (1, 2, 3)))
    assert names(run(interpreter, *lost)) == expected


@pytest.mark.parametrize(
    ("first", "expected"),
    [
        (Status("ready", 5, 9), ["BettingOpened"]),
        (Status("closed", 5, 9), ["BettingOpened", "NoMoreBets"]),
        (Status("rolling", 5, 10), ["BettingOpened", "NoMoreBets", "DiceRollStarted"]),
        (Status("result", 5, 9), []),  # history: a round we never opened is not settled
        (Status("fault", 5, 9, (1,)), ["DeviceFaultRaised"]),
        (Status("ready", 0, 0), []),  # powered up, no game yet
    ],
)
def test_the_first_status_is_a_baseline(first: Status, expected: list[str]) -> None:
    interpreter = host()
    events = run(interpreter, first)
    assert names(events) == ["DeviceAvailable", *expected]


def test_a_game_first_seen_in_result_is_history() -> None:
    interpreter = host()
    run(interpreter, Status("result", 5, 9))
    assert run(interpreter, Result(5, 9, (1, 2, 3)), NoResult(5, 9, "die_cocked")) == []
    assert interpreter.counts == {"stale_results": 2}
    assert interpreter.take_commands() == []  # and nothing is asked for it
    assert names(run(interpreter, BettingOpen(6))) == ["BettingOpened"]


def test_an_outcome_before_any_baseline_is_history() -> None:
    interpreter = host()
    assert names(run(interpreter, UNIT, Result(5, 9, (1, 2, 3)))) == ["DeviceAvailable"]
    assert names(run(interpreter, Status("result", 5, 9), BettingOpen(6))) == ["BettingOpened"]


def test_what_the_unit_says_before_the_handshake_reply_follows_the_availability() -> None:
    # The unit runs its cycle whoever listens: its OPEN may beat the reply to IDNT.
    interpreter = host()
    assert run(interpreter, BettingOpen(4), BettingClosed(4, "timer"), at=0.01) == []
    assert not interpreter.available
    events = run(interpreter, UNIT, at=0.02)
    assert [(type(e).__name__, e.at) for e in events] == [
        ("DeviceAvailable", 0.02),
        ("BettingOpened", 0.01),
        ("NoMoreBets", 0.01),
    ]
    assert isinstance(events[0], DeviceAvailable)
    assert events[0].detail == "TDS-1 firmware 1.0.0 serial SIM00001, 3 dice"


def test_a_unit_that_talks_but_never_answers_the_handshake_is_available_all_the_same() -> None:
    interpreter = host(poll_interval=1.0)
    assert run(interpreter, BettingOpen(4), at=0.5) == []
    assert interpreter.tick(0.9) == []
    assert names(interpreter.tick(1.0)) == ["DeviceAvailable", "BettingOpened"]


def test_held_frames_are_released_when_the_link_drops() -> None:
    interpreter = host()
    run(interpreter, BettingOpen(4), at=0.5)
    assert names(interpreter.connection_lost(0.6)) == ["DeviceAvailable", "BettingOpened"]
    assert not interpreter.available


def test_an_old_game_s_repeat_does_not_disturb_the_current_game() -> None:
    interpreter = opened(12)
    run(interpreter, BettingClosed(12, "timer"), Rolling(12, 57))
    assert run(interpreter, Result(11, 56, (1, 2, 3))) == []  # LAST after an abandoned roll
    assert interpreter.counts == {"stale_results": 1}
    assert names(run(interpreter, Result(12, 57, (3, 3, 3)))) == ["DiceRead"]


# --- outcomes ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("wire", "code"), sorted(NO_RESULT_WIRE.items()))
def test_every_no_result_reason_has_its_stable_code(wire: str, code: RollInvalidCode) -> None:
    interpreter = opened()
    events = run(interpreter, Rolling(12, 57), NoResult(12, 57, code, "die 3"))
    assert events[-1] == DiceRollInvalid(device="dice", at=0.1, code=code, detail="die 3")
    assert wire.isupper()


def test_a_duplicate_result_is_dropped_and_counted() -> None:
    interpreter = opened()
    result = Result(12, 57, (4, 6, 1))
    assert names(run(interpreter, Rolling(12, 57), result, result)) == [
        "NoMoreBets",
        "DiceRollStarted",
        "DiceRead",
    ]
    # A repeat with other faces is still a repeat: the first report stands.
    assert run(interpreter, Result(12, 57, (1, 1, 1)), NoResult(12, 57, "die_cocked")) == []
    assert interpreter.counts == {"duplicate_results": 3}


@pytest.mark.parametrize(
    ("options", "result"),
    [
        ({}, Result(12, 57, (4, 6))),  # two dice on a three-dice table
        ({}, Result(12, 57, (4, 6, 1, 2))),
        ({"dice": 2, "colors": ("red", "blue")}, Result(12, 57, (4, 6))),  # no colours
        ({"dice": 2, "colors": ("red", "blue")}, Result(12, 57, (4, 6), ("red", "green"))),
    ],
)
def test_a_result_that_does_not_fit_the_table_is_rejected(
    options: dict[str, Any], result: Result
) -> None:
    interpreter = opened(**options)
    assert names(run(interpreter, Rolling(12, 57), result)) == ["NoMoreBets", "DiceRollStarted"]
    assert interpreter.counts == {"rejected_results": 1}
    # A correct repeat of the same roll is still reported: the rejected one was never counted.
    faces, colors = ((4, 6, 1), ()) if not options else ((4, 6), ("blue", "red"))
    assert names(run(interpreter, Result(12, 57, faces, colors))) == ["DiceRead"]


def test_coloured_dice_are_put_in_the_table_s_order() -> None:
    interpreter = opened(dice=2, colors=("red", "blue"))
    (_, _, read) = run(interpreter, Rolling(12, 57), Result(12, 57, (5, 2), ("blue", "red"), 90))
    assert read == DiceRead(
        device="dice", at=0.1, dice=(2, 5), colors=("red", "blue"), confidence=0.9
    )


def test_a_table_without_colours_passes_the_reader_s_colours_through() -> None:
    interpreter = opened(dice=2)
    (_, _, read) = run(interpreter, Rolling(12, 57), Result(12, 57, (5, 2), ("blue", "red")))
    assert isinstance(read, DiceRead)
    assert (read.dice, read.colors) == ((5, 2), ("blue", "red"))


# --- lost outcomes are asked for -----------------------------------------------------------------


def test_a_result_status_without_its_result_asks_last_once() -> None:
    interpreter = opened()
    run(interpreter, BettingClosed(12, "timer"), Rolling(12, 57))
    interpreter.take_commands()
    # The RSLT frame was lost (a decode error); the poll shows RESULT for roll 57.
    assert run(interpreter, DecodeError("checksum mismatch", b""), Status("result", 12, 57)) == []
    assert interpreter.take_commands() == [RepeatLast()]
    run(interpreter, Status("result", 12, 57))
    assert interpreter.take_commands() == []  # once per roll
    assert names(run(interpreter, Result(12, 57, (6, 6, 6)))) == ["DiceRead"]


def test_a_closed_status_after_the_roll_asks_for_a_lost_no_result() -> None:
    interpreter = opened()
    run(interpreter, Rolling(12, 57))
    interpreter.take_commands()
    run(interpreter, Status("closed", 12, 57))  # NRES was lost; the unit waits for a re-roll
    assert interpreter.take_commands() == [RepeatLast()]
    assert names(run(interpreter, NoResult(12, 57, "no_wall_hit"))) == ["DiceRollInvalid"]


def test_a_result_status_of_the_announced_game_for_a_roll_never_seen_asks_too() -> None:
    interpreter = opened()
    run(interpreter, Status("result", 12, 57))  # CLSD, ROLL and RSLT all lost
    assert interpreter.take_commands() == [RepeatLast()]
    assert names(run(interpreter, Result(12, 57, (1, 2, 3)))) == [
        "NoMoreBets",
        "DiceRollStarted",
        "DiceRead",
    ]


# --- faults --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("wire", "code"),
    [
        (1, "dice_motion_fault"),
        (2, "dice_lid_open"),
        (3, "dice_reader_fault"),
        (42, "dice_fault_42"),
    ],
)
def test_every_fault_has_its_stable_code_raised_and_cleared_once(wire: int, code: str) -> None:
    assert fault_code(wire) == code
    interpreter = opened()
    raised = run(
        interpreter, Fault(wire, "detail"), Fault(wire, "again"), Status("fault", 12, 0, (wire,))
    )
    assert raised == [DeviceFaultRaised(device="dice", at=0.1, code=code, detail="detail")]
    cleared = run(interpreter, FaultClear(wire), FaultClear(wire), Status("ready", 12, 0))
    assert cleared == [DeviceFaultCleared(device="dice", at=0.1, code=code)]
    assert interpreter.active_faults == frozenset()


def test_a_fault_without_detail_gets_its_meaning() -> None:
    interpreter = opened()
    (raised,) = run(interpreter, Fault(3))
    assert isinstance(raised, DeviceFaultRaised)
    assert raised.detail.startswith("result reader fault")


def test_the_status_heals_lost_fault_frames() -> None:
    interpreter = opened()
    events = run(interpreter, Status("fault", 12, 57, (1, 2)))
    assert {e.code for e in events if isinstance(e, DeviceFaultRaised)} == {
        "dice_motion_fault",
        "dice_lid_open",
    }
    events = run(interpreter, Status("fault", 12, 57, (2,)))  # FCLR;1 was lost
    assert events == [DeviceFaultCleared(device="dice", at=0.1, code="dice_motion_fault")]


@pytest.mark.parametrize(
    ("options", "identity"),
    [
        ({}, Identity("TDS-1", "1", "S", 2)),
        ({"dice": 2, "colors": ("red", "blue")}, Identity("TDS-1", "1", "S", 2)),
        ({"dice": 2, "colors": ("red", "blue")}, Identity("TDS-1", "1", "S", 2, ("red", "green"))),
    ],
)
def test_an_identity_that_is_not_the_table_s_latches_a_mismatch(
    options: dict[str, Any], identity: Identity
) -> None:
    interpreter = host(**options)
    (_, raised) = run(interpreter, identity)
    assert isinstance(raised, DeviceFaultRaised)
    assert raised.code == FAULT_CONFIG_MISMATCH
    run(interpreter, Status("ready", 1, 0))  # the status's fault list does not clear our own
    assert interpreter.active_faults == {FAULT_CONFIG_MISMATCH}
    good = Identity("TDS-1", "1", "S", options.get("dice", 3), options.get("colors", ()))
    assert run(interpreter, good) == [
        DeviceFaultCleared(device="dice", at=0.1, code=FAULT_CONFIG_MISMATCH)
    ]


# --- polls, silence, replies, connections --------------------------------------------------------


def test_polls_and_silence_on_scripted_time() -> None:
    interpreter = host(poll_interval=1.0, silence_timeout=3.0)
    run(interpreter, UNIT, Status("ready", 1, 0), at=0.1)
    events: list[DeviceEvent] = []
    for tenth in range(1, 50):
        events += interpreter.tick(tenth / 10)
    (down,) = events
    assert isinstance(down, DeviceUnavailable)
    assert (down.at, down.reason) == (3.1, "silent")  # 3 s after the last frame, exactly
    assert not interpreter.available
    assert interpreter.take_commands() == [QueryStatus()] * 4  # at 1.0, 2.0, 3.0, 4.0
    assert run(interpreter, DecodeError("garbage between frames", b"x"), at=5.0) == []
    (up,) = run(interpreter, Status("ready", 1, 0), at=5.1)
    assert isinstance(up, DeviceAvailable)
    assert interpreter.tick(7.0) == []  # 1.9 s since the last frame


def test_a_unit_that_never_answers_is_silent() -> None:
    interpreter = host(poll_interval=0.5, silence_timeout=2.0)
    assert interpreter.tick(1.9) == []
    (down,) = interpreter.tick(2.0)
    assert isinstance(down, DeviceUnavailable)
    assert interpreter.tick(9.0) == []  # once


def test_replies_and_reports_are_kept_not_events() -> None:
    interpreter = opened()
    assert run(interpreter, Ack("CLOS"), Nak("ROLL", "STATE"), TestReport((), "ok")) == []
    assert interpreter.last_reply == Nak("ROLL", "STATE")
    assert interpreter.last_test == TestReport((), "ok")


def test_a_reconnect_keeps_what_was_announced() -> None:
    interpreter = opened()
    run(interpreter, BettingClosed(12, "timer"), Rolling(12, 57))
    interpreter.take_commands()
    assert interpreter.connection_lost(1.0) == []
    assert not interpreter.available
    interpreter.connected(2.0)
    assert interpreter.take_commands() == [Identify(), QueryStatus()]
    # While the link was down roll 57 ended and game 13 opened: only the new game is reported.
    events = run(interpreter, UNIT, Status("ready", 13, 57), at=2.1)
    assert names(events) == ["DeviceAvailable", "BettingOpened"]
