"""The studio dice cycle: decoded messages + scripted time in, device events and commands out.

No I/O and no clock: every step says when it happens. The tables at the top are the contract:
each camera answer or shaker word that ends a roll badly, and each fault, with its stable code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

import pytest

from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.interpreter import (
    FAULT_MOTION,
    FAULT_READER_INVALID,
    FAULT_READER_SILENT,
    DiceStudioInterpreter,
)
from tablectl.drivers.dice_mqtt.messages import (
    DEFAULT_STATUS_WORDS,
    Command,
    DetectRequest,
    DetectResult,
    Shake,
    ShakerStatus,
    StateQuery,
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

DEV = "dice"
E = TypeVar("E", bound=DeviceEvent)
C = TypeVar("C", bound=Command)
BETTING, SHAKE, RESULT_TIMEOUT, SHOWING, ACK, POLL, SILENCE = 10.0, 6.0, 5.0, 3.0, 4.0, 2.0, 8.0
NEVER = 1e6
"""A silence timeout the scripts never reach (they jump in time without answering polls)."""
FIRST = "dice-s-1"
SECOND = "dice-s-2"


def status(word: str) -> ShakerStatus:
    return ShakerStatus(word, DEFAULT_STATUS_WORDS[word])


@dataclass
class Table:
    """One interpreter, the events and commands it produced, and the time of the last step."""

    interpreter: DiceStudioInterpreter
    now: float = 0.0
    events: list[DeviceEvent] = field(default_factory=list)
    commands: list[Command] = field(default_factory=list)

    def _took(self, events: list[DeviceEvent]) -> list[DeviceEvent]:
        self.events += events
        self.commands += self.interpreter.take_commands()
        return events

    def say(self, word: str, at: float) -> list[DeviceEvent]:
        self.now = at
        return self._took(self.interpreter.feed(status(word), at))

    def answer(
        self, at: float, dice: tuple[int, ...] | None, err: int = 0, rid: str = FIRST
    ) -> list[DeviceEvent]:
        self.now = at
        return self._took(self.interpreter.feed(DetectResult(rid, dice, err), at))

    def tick(self, at: float) -> list[DeviceEvent]:
        self.now = at
        return self._took(self.interpreter.tick(at))

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def sent(self, kind: type[C]) -> list[C]:
        return [c for c in self.commands if isinstance(c, kind)]


def make(**options: object) -> Table:
    settings: dict[str, object] = {
        "session": "s",
        "betting_seconds": BETTING,
        "shake_seconds": SHAKE,
        "result_timeout": RESULT_TIMEOUT,
        "result_seconds": SHOWING,
        "ack_timeout": ACK,
        "status_poll": POLL,
        "silence_timeout": NEVER,
    }
    settings.update(options)
    table = Table(DiceStudioInterpreter(DEV, **settings))  # type: ignore[arg-type]
    table.interpreter.connected(0.0)
    table.commands += table.interpreter.take_commands()
    return table


def to_shaking(table: Table) -> None:
    """Round opened at 0, bets closed at 10, S2 at 10.1, S1 at 10.2."""
    assert [type(e) for e in table.say("S0", 0.0)] == [DeviceAvailable, BettingOpened]
    assert table.tick(BETTING) == [NoMoreBets(device=DEV, at=BETTING)]
    table.say("S2", 10.1)
    assert table.say("S1", 10.2) == [DiceRollStarted(device=DEV, at=10.2)]


def to_reading(table: Table) -> None:
    """...and S0 at 16.2: the read of round id ``FIRST`` is asked."""
    to_shaking(table)
    table.say("S0", 16.2)
    assert table.commands[-1] == DetectRequest(FIRST)
    assert table.interpreter.phase == "reading"


# --- the contract: how a roll ends, and each fault's code -----------------------------------------

ROLL_ENDINGS = [
    # (camera dice, err, event, stable code or None, re-shaken)
    ((4, 6, 1), 0, DiceRead, None, False),
    (None, -1, DiceRollInvalid, "dice_unreadable", True),
    (None, 0, DiceRollInvalid, "dice_unreadable", True),  # "res": null without an error number
    (None, -2, DiceRollInvalid, "die_cocked", True),
    (None, -4, DiceRollInvalid, "die_off_table", True),
    (None, -3, DiceRollInvalid, "dice_unreadable", True),  # unmapped (the studio's "no shake")
    ((4, 6, 1), -2, DiceRollInvalid, "die_cocked", True),  # an error wins over dice sent along
]


@pytest.mark.parametrize(("dice", "err", "kind", "code", "reshaken"), ROLL_ENDINGS)
def test_how_a_roll_ends(
    dice: tuple[int, ...] | None,
    err: int,
    kind: type[DeviceEvent],
    code: RollInvalidCode | None,
    reshaken: bool,
) -> None:
    table = make()
    to_reading(table)
    shakes = len(table.sent(Shake))
    events = table.answer(16.5, dice, err)
    assert [type(e) for e in events] == [kind]
    if code is not None:
        assert events[0] == DiceRollInvalid(
            device=DEV,
            at=16.5,
            code=code,
            detail=f"camera err {err}" if err else "camera read no dice",
        )
    assert (len(table.sent(Shake)) == shakes + 1) is reshaken
    assert table.interpreter.phase == ("shake_sent" if reshaken else "showing")
    assert len(table.of(NoMoreBets)) == 1  # bets stand: no new round
    assert len(table.of(BettingOpened)) == 1


def silent_camera(table: Table) -> None:
    table.tick(16.2 + RESULT_TIMEOUT)


def rejected_then_silent(table: Table) -> None:
    table.answer(16.5, (4, 6))
    table.tick(16.2 + RESULT_TIMEOUT)


def motion_fault_mid_shake(table: Table) -> None:
    table.say("S90", 13.0)


FAULTS = [
    # (what happens once the dice are shaking or read, the code raised, what clears it)
    (motion_fault_mid_shake, FAULT_MOTION, ("S0", 20.0)),
    (silent_camera, FAULT_READER_SILENT, ((1, 2, 3), 0)),
    (rejected_then_silent, FAULT_READER_INVALID, ((1, 2, 3), 0)),
]


@pytest.mark.parametrize(("strike", "code", "clear"), FAULTS, ids=[f[1] for f in FAULTS])
def test_each_fault_raises_its_code_once_and_clears_once(
    strike: object, code: str, clear: tuple[object, object]
) -> None:
    table = make()
    if code == FAULT_MOTION:
        to_shaking(table)
    else:
        to_reading(table)
    strike(table)  # type: ignore[operator]
    raised = table.of(DeviceFaultRaised)
    assert [(e.code, e.at) for e in raised] == [(code, table.now)]
    assert table.interpreter.active_faults == {code}
    if code == FAULT_MOTION:
        table.say("S90", 14.0)  # repeated: no second event
        table.say(*clear)  # type: ignore[arg-type]
    else:
        table.tick(table.now + RESULT_TIMEOUT)  # still nothing: retried, not raised again
        table.answer(table.now + 0.1, *clear)  # type: ignore[arg-type]
    assert [e.code for e in table.of(DeviceFaultRaised)] == [code]
    assert [e.code for e in table.of(DeviceFaultCleared)] == [code]
    assert table.interpreter.active_faults == frozenset()


def test_silence_makes_the_device_unavailable_and_a_word_brings_it_back() -> None:
    table = make(silence_timeout=SILENCE, betting_seconds=NEVER)
    table.say("S0", 0.0)
    quiet = table.tick(SILENCE + 0.5)
    assert [type(e) for e in quiet] == [DeviceUnavailable]
    assert quiet[0].reason == "silent"  # type: ignore[union-attr]
    assert table.tick(SILENCE + 5) == []  # reported once
    assert [type(e) for e in table.say("S0", 20.0)] == [DeviceAvailable]


# --- the cycle ------------------------------------------------------------------------------------


def test_a_whole_round_and_the_next_one() -> None:
    table = make(colors=("red", "green", "blue"), reader="cam-7")
    to_reading(table)
    read = table.answer(16.5, (4, 6, 1))
    assert read == [
        DiceRead(
            device=DEV, at=16.5, dice=(4, 6, 1), colors=("red", "green", "blue"), reader="cam-7"
        )
    ]
    assert table.tick(16.5 + SHOWING - 0.1) == []
    assert table.tick(16.5 + SHOWING) == [BettingOpened(device=DEV, at=16.5 + SHOWING)]
    assert table.sent(Shake) == [Shake(0, SHAKE)]
    assert table.sent(DetectRequest) == [DetectRequest(FIRST)]


def test_a_reroll_gets_a_round_id_of_its_own() -> None:
    table = make()
    to_reading(table)
    table.answer(16.5, None, -1)
    table.say("S2", 16.6)
    assert [type(e) for e in table.say("S1", 16.7)] == [DiceRollStarted]
    table.say("S0", 22.7)
    assert table.sent(DetectRequest) == [DetectRequest(FIRST), DetectRequest(SECOND)]
    assert [type(e) for e in table.answer(23.0, (2, 2, 2), rid=SECOND)] == [DiceRead]
    assert table.interpreter.counters == {"rerolls": 1}


def test_stale_duplicate_and_rejected_answers_are_counted_and_dropped() -> None:
    table = make()
    to_reading(table)
    assert table.answer(16.3, (1, 2, 3), rid="dice-old-9") == []
    assert table.answer(16.4, (1, 2, 7)) == []  # a face outside 1-6
    assert table.answer(16.45, (1, 2, 3, 4)) == []  # four dice at a three-dice table
    assert [type(e) for e in table.answer(16.5, (1, 2, 3))] == [DiceRead]
    assert table.answer(16.6, (1, 2, 3)) == []  # the camera said it twice
    assert table.interpreter.counters == {
        "stale_results": 1,
        "rejected_results": 2,
        "duplicate_results": 1,
    }
    assert table.interpreter.last_rejected == DetectResult(FIRST, (1, 2, 3, 4), 0)


def test_garbage_is_counted_and_changes_nothing() -> None:
    table = make()
    table.say("S0", 0.0)
    assert table.interpreter.feed(DecodeError("unknown status word", b"S7"), 1.0) == []
    assert table.interpreter.counters == {"decode_errors": 1}
    assert table.interpreter.phase == "betting"


def test_an_idle_word_before_the_shake_was_received_is_not_its_end() -> None:
    table = make()
    table.say("S0", 0.0)
    table.tick(BETTING)
    assert table.say("S0", 10.1) == []  # the answer to an earlier query
    assert table.interpreter.phase == "shake_sent"
    table.tick(BETTING + ACK)  # no S2/S1: sent again
    assert table.sent(Shake) == [Shake(0, SHAKE), Shake(0, SHAKE)]
    assert table.interpreter.counters["shake_retries"] == 1


def test_a_lost_s1_is_inferred_from_s2_then_s0() -> None:
    table = make()
    table.say("S0", 0.0)
    table.tick(BETTING)
    table.say("S2", 10.1)
    events = table.say("S0", 16.1)
    assert events == [DiceRollStarted(device=DEV, at=16.1)]
    assert table.sent(DetectRequest) == [DetectRequest(FIRST)]


def test_a_motion_fault_during_betting_holds_the_shake_until_cleared() -> None:
    table = make()
    table.say("S0", 0.0)
    table.say("S90", 5.0)
    assert table.tick(BETTING) == [NoMoreBets(device=DEV, at=BETTING)]  # bets close on time
    assert table.sent(Shake) == []
    table.say("S1", 11.0)  # moving while faulted: still no roll
    assert table.of(DiceRollStarted) == []
    table.say("S0", 12.0)
    assert table.sent(Shake) == [Shake(0, SHAKE)]
    assert table.interpreter.active_faults == frozenset()


def test_an_aborted_shake_is_shaken_again_with_a_new_roll_started() -> None:
    table = make()
    to_shaking(table)
    table.say("S90", 13.0)
    table.say("S0", 15.0)
    table.say("S2", 15.1)
    table.say("S1", 15.2)
    assert [e.at for e in table.of(DiceRollStarted)] == [10.2, 15.2]
    assert table.sent(DetectRequest) == []  # the aborted shake's dice are never read
    assert table.interpreter.counters == {"shakes_aborted": 1}


def test_no_round_opens_while_faulted_or_silent() -> None:
    table = make()
    table.say("S90", 0.0)
    assert table.of(BettingOpened) == []
    table.tick(1.0)
    assert table.of(BettingOpened) == []
    table.say("S0", 1.5)
    assert [e.at for e in table.of(BettingOpened)] == [1.5]


def test_the_shaker_is_asked_on_connect_and_polled_when_quiet() -> None:
    table = make()
    assert table.commands == [StateQuery()]
    table.say("S0", 0.0)
    table.tick(POLL - 0.1)
    assert table.sent(StateQuery) == [StateQuery()]
    table.tick(POLL)
    table.tick(POLL + 0.1)  # one poll per quiet period
    assert table.sent(StateQuery) == [StateQuery(), StateQuery()]


def test_a_shake_in_flight_is_uncertain_after_a_reconnect() -> None:
    table = make()
    to_shaking(table)
    table.interpreter.connection_lost(12.0)
    table.interpreter.connected(20.0)
    table.commands += table.interpreter.take_commands()
    assert table.commands[-1] == StateQuery()
    # Its S0 may have been lost: an idle shaker is shaken again, with a new roll started.
    assert [type(e) for e in table.say("S0", 20.1)] == [DeviceAvailable]
    assert table.sent(Shake) == [Shake(0, SHAKE), Shake(0, SHAKE)]
    table.say("S1", 20.3)
    assert len(table.of(DiceRollStarted)) == 2


def test_a_shake_still_running_after_a_reconnect_is_not_started_twice() -> None:
    table = make()
    to_shaking(table)
    table.interpreter.connection_lost(12.0)
    table.interpreter.connected(13.0)
    table.say("S1", 13.1)
    assert len(table.of(DiceRollStarted)) == 1
    table.say("S0", 16.2)
    assert table.sent(DetectRequest) == [DetectRequest(FIRST)]


def test_a_read_in_flight_is_asked_again_after_a_reconnect() -> None:
    table = make()
    to_reading(table)
    table.interpreter.connection_lost(16.3)
    table.interpreter.connected(18.0)
    assert table.interpreter.take_commands() == [StateQuery(), DetectRequest(FIRST)]
    table.tick(18.0 + RESULT_TIMEOUT - 0.1)
    assert table.of(DeviceFaultRaised) == []  # the deadline restarted with the new request
    assert [type(e) for e in table.answer(19.0, (3, 3, 3))] == [DiceRead]
