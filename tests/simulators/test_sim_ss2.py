"""SimSS2 against the production decoder: the simulator must speak exactly what the driver reads.

Most tests drive the I/O-free model with a synthetic clock (no sleeping), so they are fast at any
``speed``; the server tests use real time at a high ``speed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import serial

from tablectl.drivers.ss2.protocol import (
    BallInPocket,
    BareNumber,
    ChiSquare,
    DecodeError,
    Decoder,
    FaultReport,
    Message,
    Reply,
    SensorPassed,
    Status,
)
from tablectl.simulators import FaultSpec, SimSS2
from tablectl.simulators.serve import serve_pty, serve_tcp
from tablectl.simulators.ss2 import (
    MODE_AUTO_STATUS,
    MODE_HOST_START,
    MODE_NO_BARE_NUMBER,
    from_spec,
)
from tests.support.waiting import wait_until

Timed = list[tuple[float, Message]]

REPO = Path(__file__).resolve().parents[2]


def drive(model: SimSS2, start: float, end: float, step: float = 0.05) -> Timed:
    """Advance ``model`` from ``start`` to ``end`` and decode everything with send times."""
    decoder = Decoder()
    out: Timed = []
    t = start
    while t < end:
        t = min(t + step, end)
        for chunk in model.advance_chunks(t):
            out.extend((chunk.at, m) for m in decoder.feed(chunk.data))
    return out


def statuses(messages: Timed) -> list[Status]:
    return [m for _, m in messages if isinstance(m, Status)]


def state_changes(messages: Timed) -> list[Status]:
    """The first status line of each new state (what a host acts on)."""
    out: list[Status] = []
    for status in statuses(messages):
        if not out or status.state != out[-1].state:
            out.append(status)
    return out


def until_state(model: SimSS2, state: int, t: float, limit: float = 600.0) -> float:
    """Advance in 0.05 s steps until the model reports ``state``; the time reached."""
    while model.state != state:
        t += 0.05
        model.advance(t)
        assert t < limit, f"state {state} never reached"
    return t


def game_of(messages: Timed, state: int) -> Iterator[list[Status]]:
    """Runs of consecutive status lines in ``state``."""
    run: list[Status] = []
    for status in statuses(messages):
        if status.state == state:
            run.append(status)
        elif run:
            yield run
            run = []
    if run:
        yield run


# --- normal play ----------------------------------------------------------------------------------


def test_clean_run_cycles_states_with_spin_increments() -> None:
    model = SimSS2(seed=3)
    messages = drive(model, 0.0, 130.0)
    assert not [m for _, m in messages if isinstance(m, DecodeError)]
    changes = state_changes(messages)
    assert [s.state for s in changes[:10]] == [1, 2, 3, 4, 5, 2, 3, 4, 5, 2]
    spins = [s.spin for s in changes if s.state == 2]
    assert spins[:4] == [1, 2, 3, 4]
    assert changes[0].last_number is None
    # Rotor speed stays plausible (rpm × 10) while the ball is in play.
    for status in statuses(messages):
        if status.state in (3, 4, 5):
            assert 130 <= status.rotor_rpm_x10 <= 190


def test_game_takes_about_twenty_seconds_at_speed_one() -> None:
    messages = drive(SimSS2(seed=4), 0.0, 100.0)
    # Timed from the status lines: between the first lines of two consecutive state-2 runs.
    starts = [t for t, m in messages if isinstance(m, Status) and m.state == 2]
    firsts = [starts[0]] + [b for a, b in itertools.pairwise(starts) if b - a > 1]
    assert 18 <= firsts[1] - firsts[0] <= 26
    idle = [t for t, m in messages if isinstance(m, Status) and m.state == 1]
    assert 1.5 <= idle[-1] - idle[0] + 0.5 <= 2.5


def test_spin_counter_wraps_256_to_1() -> None:
    model = SimSS2(seed=1, spin=255)
    changes = state_changes(drive(model, 0.0, 100.0))
    assert [s.spin for s in changes if s.state == 2][:3] == [255, 256, 1]


def test_rotor_direction_alternates_per_game() -> None:
    messages = drive(SimSS2(seed=2), 0.0, 150.0)
    directions = [run[0].rotor_direction for run in game_of(messages, 3)]
    assert len(directions) >= 5
    assert all(a != b for a, b in itertools.pairwise(directions))


def test_status_lines_repeat_every_half_second_over_speed() -> None:
    speed = 20.0
    messages = drive(SimSS2(seed=5, speed=speed), 0.0, 3.0, step=0.013)
    times = [t for t, m in messages if isinstance(m, Status)]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert len(gaps) > 50
    assert all(abs(gap - 0.5 / speed) < 1e-9 for gap in gaps)


def test_bare_number_comes_just_before_first_state5_line_and_matches_it() -> None:
    messages = [m for _, m in drive(SimSS2(seed=6), 0.0, 120.0)]
    seen = 0
    for i, message in enumerate(messages):
        if isinstance(message, BareNumber):
            after = messages[i + 1]
            assert isinstance(after, Status)
            assert after.state == 5
            assert after.last_number == message.number
            before = next(m for m in reversed(messages[:i]) if isinstance(m, Status))
            assert before.state == 4
            seen += 1
    assert seen >= 4


def test_scripted_numbers_come_out_in_order() -> None:
    model = SimSS2(seed=7, numbers=[17, 0, "32", 5])
    messages = drive(model, 0.0, 120.0)
    bare = [m.number for _, m in messages if isinstance(m, BareNumber)]
    assert bare[:4] == [17, 0, 32, 5]
    assert model.results[:4] == (17, 0, 32, 5)


def test_double_zero_on_a_38_pocket_wheel() -> None:
    messages = drive(SimSS2(pockets=38, numbers=["00"]), 0.0, 30.0)
    assert BareNumber("00") in [m for _, m in messages]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"numbers": [37]}, "not a roulette number"),
        ({"numbers": ["00"]}, "pockets=38"),
        ({"pockets": 36}, "pockets"),
        ({"speed": 0.0}, "speed"),
        ({"spin": 0}, "spin"),
        ({"revolutions": (5, 2)}, "revolutions"),
        ({"faults": [FaultSpec("misspin", 1), FaultSpec("misspin", 1)]}, "two misspin"),
    ],
)
def test_bad_arguments_are_rejected(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimSS2(**kwargs)  # type: ignore[arg-type]


def test_same_seed_gives_identical_bytes_whatever_the_call_granularity() -> None:
    def record(step: float) -> bytes:
        model = SimSS2(seed=11, faults=[FaultSpec("garbage", 2), FaultSpec("split", 3)])
        model.receive(b"*I 4\r\n", 0.0)
        out = bytearray()
        t = 0.0
        while t < 90:
            t += step
            out += model.advance(t)
        return bytes(out + model.advance(90.0))

    fine = record(0.01)
    assert fine == record(0.01)
    assert fine == record(0.7)


def test_different_seeds_give_different_numbers() -> None:
    a, b = SimSS2(seed=1), SimSS2(seed=2)
    a.advance(0.0)
    b.advance(0.0)
    a.advance(200.0)
    b.advance(200.0)
    assert len(a.results) >= 6
    assert a.results != b.results


# --- the sensor stream ----------------------------------------------------------------------------


def sensor_games(messages: Timed) -> list[list[int]]:
    """Sensor numbers per game, each game closed by its ``bn`` line."""
    games: list[list[int]] = []
    current: list[int] = []
    for _, message in messages:
        if isinstance(message, SensorPassed):
            current.append(message.sensor)
        elif isinstance(message, BallInPocket):
            games.append(current)
            current = []
    return games


def test_sensor_stream_on_i4_revolutions_within_range_and_direction() -> None:
    model = SimSS2(seed=8, revolutions=(8, 14))
    model.advance(0.0)
    assert model.receive(b"*I 4\r\n", 0.0) == b"*I OK\r\n"
    messages = drive(model, 0.0, 100.0)
    games = sensor_games(messages)
    assert len(games) >= 3
    rotor = [run[0].rotor_direction for run in game_of(messages, 3)]
    for sensors, rotor_dir in zip(games, rotor, strict=False):
        assert len(sensors) % 3 == 0
        assert 8 <= len(sensors) // 3 <= 14
        # Sensors are numbered clockwise (docs/protocols/cammegh-ss2.md) and each revolution
        # ends at sensor 0: against a clockwise rotor the ball goes 2, 1, 0 (anticlockwise).
        expected = [2, 1, 0] if rotor_dir == 0 else [1, 2, 0]
        assert sensors[:3] == expected
        assert sensors.count(0) == len(sensors) // 3  # one `bs 0` per revolution
    # `bn` then the bare number, both carrying the result.
    plain = [m for _, m in messages]
    for i, message in enumerate(plain):
        if isinstance(message, BallInPocket):
            assert plain[i + 1] == BareNumber(message.number)


def test_sensor_stream_stops_on_i0() -> None:
    model = SimSS2(seed=8)
    model.receive(b"*I 4\r\n", 0.0)
    t = until_state(model, 3, 0.0)
    assert model.receive(b"*I 0\r\n", t) == b"*I OK\r\n"
    messages = drive(model, t, t + 60)
    assert not [m for _, m in messages if isinstance(m, SensorPassed | BallInPocket)]


def test_short_spin_shows_value_revolutions() -> None:
    model = SimSS2(seed=9, faults=[FaultSpec("short_spin", 1, 3)])
    model.receive(b"*I 4\r\n", 0.0)
    games = sensor_games(drive(model, 0.0, 60.0))
    assert len(games[0]) == 9
    assert 8 <= len(games[1]) // 3 <= 14


def test_same_direction_sensor_reverses_the_order_without_a_warning() -> None:
    model = SimSS2(seed=10, faults=[FaultSpec("same_direction_sensor", 1)])
    model.receive(b"*I 4\r\n", 0.0)
    messages = drive(model, 0.0, 30.0)
    rotor = next(game_of(messages, 3))[0].rotor_direction
    ball_with_rotor = [1, 2, 0] if rotor == 0 else [2, 1, 0]
    assert sensor_games(messages)[0][:3] == ball_with_rotor
    assert all(s.warnings == 0 for s in statuses(messages))


# --- faults ---------------------------------------------------------------------------------------


def _lines_of_game(messages: Timed, game: int) -> list[Message]:
    """The messages of the ``game``-th game (1-based): from its first state-2 line to the next."""
    out: list[list[Message]] = []
    previous = None
    for _, message in messages:
        if isinstance(message, Status) and message.state == 2 and previous != 2:
            out.append([])
        if isinstance(message, Status):
            previous = message.state
        if out:
            out[-1].append(message)
    return out[game - 1]


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        pytest.param(FaultSpec("result_mismatch", 2), 18, id="default-the-next-pocket"),
        pytest.param(FaultSpec("result_mismatch", 2, 5), 5, id="given-number"),
    ],
)
def test_result_mismatch_status_lines_disagree_with_the_bare_line(
    spec: FaultSpec, shown: int
) -> None:
    model = SimSS2(seed=6, numbers=[3, 17, 8], faults=[spec])
    model.receive(b"*I 4\r\n", 0.0)
    messages = drive(model, 0.0, 75.0)
    first, second, third = (_lines_of_game(messages, n) for n in (1, 2, 3))
    assert [m.number for m in second if isinstance(m, BareNumber | BallInPocket)] == [17, 17]
    results = [m for m in second if isinstance(m, Status) and m.state == 5]
    assert results
    assert {m.last_number for m in results} == {shown}
    assert model.results[:2] == (3, 17)  # the ball's number is the one on the bare line
    # The games around it agree, and the fault draws nothing from the RNG: game 3 is as without.
    assert next(m.last_number for m in first if isinstance(m, Status) and m.state == 5) == 3
    plain = SimSS2(seed=6, numbers=[3, 17, 8])
    plain.receive(b"*I 4\r\n", 0.0)
    plain_third = _lines_of_game(drive(plain, 0.0, 75.0), 3)

    def shape(lines: list[Message]) -> list[object]:
        return [
            (m.state, m.spin, m.rotor_rpm_x10, m.rotor_direction) if isinstance(m, Status) else m
            for m in lines
        ]

    assert shape(third) == shape(plain_third)


def test_rotor_reversal_turns_the_rotor_the_other_way_from_no_more_bets() -> None:
    model = SimSS2(seed=11, faults=[FaultSpec("rotor_reversal", 2)])
    messages = drive(model, 0.0, 75.0)
    for game, reversed_ in ((1, False), (2, True), (3, False)):
        lines = [m for m in _lines_of_game(messages, game) if isinstance(m, Status)]
        launch = {m.rotor_direction for m in lines if m.state == 3}
        after = {m.rotor_direction for m in lines if m.state in (4, 5)}
        assert len(launch) == len(after) == 1
        assert (launch != after) is reversed_, game
        assert all(m.warnings == 0 for m in lines)  # the wheel does not flag it itself


def test_misspin_warns_in_state3_until_host_restarts() -> None:
    model = SimSS2(seed=12, faults=[FaultSpec("misspin", 1)])
    t = until_state(model, 3, 0.0)
    messages = drive(model, t, t + 4)
    rim = [s for s in statuses(messages) if s.state == 3]
    assert rim
    assert all(s.warnings & 2 for s in rim)
    assert model.state == 3  # held: the wheel waits for the host's acknowledgement
    model.advance(t + 4)
    assert model.receive(b"*R\r\n", t + 4) == b"*R OK\r\n"
    after = drive(model, t + 4, t + 40)
    changes = state_changes(after)
    assert [s.state for s in changes[:3]] == [1, 2, 3]
    assert changes[1].spin == rim[0].spin + 1  # the respin is a new spin
    assert all(s.warnings == 0 for s in statuses(after))


def test_misspin_without_acknowledgement_restarts_after_ten_seconds() -> None:
    speed = 10.0
    model = SimSS2(seed=12, speed=speed, faults=[FaultSpec("misspin", 1)])
    t = until_state(model, 3, 0.0)
    messages = drive(model, t, t + 2)
    rim_times = [at for at, m in messages if isinstance(m, Status) and m.state == 3]
    idle = [at for at, m in messages if isinstance(m, Status) and m.state == 1]
    assert idle
    assert idle[0] - rim_times[0] == pytest.approx(10 / speed, abs=0.06)


def test_no_ball_warns_in_state4_then_the_wheel_stops_itself() -> None:
    model = SimSS2(seed=13, faults=[FaultSpec("no_ball", 1)])
    t = until_state(model, 4, 0.0)
    messages = drive(model, t, t + 80)
    waiting = [s for s in statuses(messages) if s.state == 4]
    assert len(waiting) >= 145  # about 75 s of lines
    assert all(s.warnings & 1 for s in waiting)
    assert statuses(messages)[-1].state == 6
    assert not [m for _, m in messages if isinstance(m, BareNumber)]


def test_no_ball_cleared_by_restart() -> None:
    model = SimSS2(seed=13, faults=[FaultSpec("no_ball", 1)])
    t = until_state(model, 4, 0.0) + 3
    model.advance(t)
    assert model.receive(b"*R\r\n", t) == b"*R OK\r\n"
    assert model.state == 1


def test_misfire_holds_warn8_in_state2_then_launches() -> None:
    model = SimSS2(seed=14, faults=[FaultSpec("misfire", 1, 3)])
    messages = drive(model, 0.0, 40.0)
    warned = [s for s in statuses(messages) if s.warnings & 8]
    assert len(warned) == 6  # 3 s of lines
    assert {s.state for s in warned} == {2}
    assert 3 in {s.state for s in statuses(messages)}


def test_misfire_stuck_keeps_warn8_into_state3() -> None:
    model = SimSS2(seed=14, faults=[FaultSpec("misfire_stuck", 1)])
    messages = drive(model, 0.0, 30.0)
    rim = [s for s in statuses(messages) if s.state == 3]
    assert rim
    assert all(s.warnings & 8 for s in rim)


def test_sensor_fault_warns_and_reports_then_clears_next_game() -> None:
    model = SimSS2(seed=15, faults=[FaultSpec("sensor_fault", 1)])
    model.receive(b"*I 4\r\n", 0.0)
    messages = drive(model, 0.0, 60.0)
    assert FaultReport(21) in [m for _, m in messages]
    first_game = next(game_of(messages, 3))
    assert all(s.warnings & 4 for s in first_game)
    games = sensor_games(messages)
    assert 0 not in games[0]  # sensor 0 stuck off
    assert 0 in games[1]
    second_game = list(game_of(messages, 3))[1]
    assert all(s.warnings == 0 for s in second_game)


def test_fault_powers_down_until_power_up() -> None:
    model = SimSS2(seed=16, faults=[FaultSpec("fault", 1, 5)])
    messages = drive(model, 0.0, 30.0)
    plain = [m for _, m in messages]
    assert FaultReport(5) in plain
    after = plain[plain.index(FaultReport(5)) + 1 :]
    assert {m.state for m in after if isinstance(m, Status)} == {6}
    # The self-test reports the fault; power-up clears it.
    assert model.receive(b"*F\r\n", 30.0) == b""
    assert FaultReport(5) in [m for _, m in drive(model, 30.0, 35.0)]
    assert model.receive(b"*P 1\r\n", 35.0) == b"*P OK\r\n"
    assert model.state == 1


def test_garbage_gives_decode_errors_then_clean_frames() -> None:
    model = SimSS2(seed=17, faults=[FaultSpec("garbage", 2)])
    messages = drive(model, 0.0, 80.0)
    errors = [i for i, (_, m) in enumerate(messages) if isinstance(m, DecodeError)]
    assert errors
    raw = b"".join(m.raw for _, m in messages if isinstance(m, DecodeError))
    assert b"\x00" in raw or b"\xff" in raw
    assert b"*" in raw
    # Every game-2 state still decodes: garbage never swallows a status or number line.
    changes = state_changes(messages)
    assert [s.state for s in changes[:10]] == [1, 2, 3, 4, 5, 2, 3, 4, 5, 2]
    assert len([m for _, m in messages if isinstance(m, BareNumber)]) >= 3
    assert not [m for _, m in messages[errors[-1] + 1 :] if isinstance(m, DecodeError)]
    assert isinstance(messages[errors[-1] + 1][1], Status)


def test_split_marks_fragments_and_still_decodes() -> None:
    model = SimSS2(seed=18, faults=[FaultSpec("split", 1)])
    chunks = model.advance_chunks(0.0) + model.advance_chunks(25.0)
    assert any(c.partial for c in chunks)
    assert max(len(c.data) for c in chunks if c.partial) <= 4
    decoder = Decoder()
    messages = [m for c in chunks for m in decoder.feed(c.data)]
    assert decoder.errors == 0
    assert any(isinstance(m, BareNumber) for m in messages)


def test_silence_leaves_a_gap_then_continues() -> None:
    model = SimSS2(seed=19, faults=[FaultSpec("silence", 1, 4)])
    messages = drive(model, 0.0, 60.0)
    times = [t for t, _ in messages]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert max(gaps) >= 4
    # Nothing is lost: the game goes on to its result.
    assert [s.state for s in state_changes(messages)[:5]] == [1, 2, 3, 4, 5]
    # Commands sent into the silence are lost too.
    model2 = SimSS2(seed=19, faults=[FaultSpec("silence", 1, 4)])
    t = until_state(model2, 3, 0.0) + 1.1
    model2.advance(t)
    assert model2.receive(b"*X\r\n", t) == b""


def test_disconnect_window_drops_output_and_is_reported() -> None:
    model = SimSS2(seed=20, faults=[FaultSpec("disconnect", 1, 2)])
    t = until_state(model, 3, 0.0)
    messages = drive(model, t, t + 10, step=0.1)
    times = [at for at, _ in messages]
    assert max(b - a for a, b in itertools.pairwise(times)) >= 2
    down = [at / 10 for at in range(int(t * 10), int((t + 10) * 10)) if model.link_down(at / 10)]
    assert down
    assert down[-1] - down[0] == pytest.approx(2, abs=0.15)


# --- commands -------------------------------------------------------------------------------------


def ask(model: SimSS2, line: bytes, now: float) -> list[Message]:
    model.advance(now)
    return Decoder().feed(model.receive(line, now))


def test_idle_commands_get_their_replies() -> None:
    model = SimSS2(seed=21)
    t = until_state(model, 1, 0.0)
    assert ask(model, b"*K\r\n", t) == [Reply("K", "CAM")]
    assert ask(model, b"*S\r\n", t)[0] == Reply("S", "1.22")
    version = ask(model, b"*V\r\n", t)[0]
    assert isinstance(version, Reply)
    assert version.letter == "V"
    assert "1.22" in version.text
    status = ask(model, b"*X\r\n", t)
    assert len(status) == 1
    assert isinstance(status[0], Status)
    assert status[0].state == 1
    assert ask(model, b"*I 4\r\n", t) == [Reply("I", "OK")]
    assert ask(model, b"*I 0\r\n", t) == [Reply("I", "OK")]
    assert ask(model, b"*o 1159\r\n", t) == [Reply("o", "1159")]
    assert model.mode == 1159
    assert ask(model, b"*q 0\r\n", t) == [Reply("q", "OK")]
    assert ask(model, b"*q 1\r\n", t) == [Reply("q", "OK")]
    for letter in "wWM":
        assert ask(model, f"*{letter}\r\n".encode(), t) == [Reply(letter, "BUSY")]
    assert ask(model, b"*F\r\n", t) == [Reply("F", "BUSY")]
    encoder = ask(model, b"*A\r\n", t)[0]
    assert isinstance(encoder, Reply)
    assert encoder.letter == "A"
    assert 0 <= int(encoder.text) < 4096
    clock = ask(model, b"*d g\r\n", t)[0]
    assert isinstance(clock, Reply)
    assert clock.letter == "d"
    assert clock.text.endswith("01/01/24")
    assert ask(model, b"*d s h 13\r\n", t) == [Reply("d", "OK")]
    clock = ask(model, b"*d g\r\n", t)[0]
    assert isinstance(clock, Reply)
    assert clock.text.startswith("13:")
    assert ask(model, b"*T H\r\n", t) == [Reply("T", "h 60")]
    assert ask(model, b"*T h 45\r\n", t) == [Reply("T", "OK")]
    assert ask(model, b"*T H\r\n", t) == [Reply("T", "h 45")]
    assert ask(model, b"*T f\r\n", t) == [Reply("T", "OK")]
    assert ask(model, b"*T Z\r\n", t) == [Reply("T", "z 37")]
    assert ask(model, b"*u 1\r\n", t) == [Reply("u", "OK")]
    assert model.ignored_commands == 0


def test_restart_and_power_commands() -> None:
    model = SimSS2(seed=22)
    t = until_state(model, 3, 0.0)
    assert ask(model, b"*R\r\n", t) == [Reply("R", "OK")]
    assert model.state == 1
    assert ask(model, b"*P 0\r\n", t) == [Reply("P", "OK")]
    assert model.state == 6
    # Powered down: state-6 lines continue (as in the real capture), the game does not.
    later = drive(model, t, t + 30)
    assert {s.state for s in statuses(later)} == {6}
    assert statuses(later)[-1].rotor_rpm_x10 == 0
    assert ask(model, b"*P 1\r\n", t + 30) == [Reply("P", "OK")]
    assert model.state == 1


def test_statistics_and_self_test_between_games() -> None:
    model = SimSS2(seed=23, numbers=[7, 7, 9])
    t = until_state(model, 5, 0.0)
    chi = ask(model, b"*w\r\n", t)
    assert len(chi) == 1
    assert isinstance(chi[0], ChiSquare)
    table = ask(model, b"*W\r\n", t)
    assert len(table) == 37
    assert Reply("W", "7 1") in table
    assert ask(model, b"*M\r\n", t) == [Reply("M", "0 1")]
    assert ask(model, b"*P 0\r\n", t) == [Reply("P", "OK")]
    assert model.receive(b"*F\r\n", t) == b""  # the result comes after the test runs
    later = [m for _, m in drive(model, t, t + 5)]
    assert FaultReport(0) in later


def test_host_start_mode_waits_for_k() -> None:
    model = SimSS2(seed=24, mode=MODE_AUTO_STATUS | MODE_HOST_START | 1)
    messages = drive(model, 0.0, 30.0)
    assert {s.state for s in statuses(messages)} == {1}
    assert ask(model, b"*K\r\n", 30.0) == [Reply("K", "OK")]
    after = drive(model, 30.0, 60.0)
    assert [s.state for s in state_changes(after)][:4] == [2, 3, 4, 5]
    assert model.state == 5  # holds again after the result
    assert ask(model, b"*u 1\r\n", 60.0) == [Reply("u", "OK")]
    assert model.state == 2


def test_leaving_host_start_mode_releases_a_held_wheel() -> None:
    model = SimSS2(seed=24, mode=MODE_AUTO_STATUS | MODE_HOST_START)
    model.advance(0.0)
    model.advance(10.0)
    assert model.state == 1
    assert ask(model, b"*o 128\r\n", 10.0) == [Reply("o", "128")]
    model.advance(10.6)
    assert model.state == 2


def test_wait_for_host_holds_game_one_until_the_first_command() -> None:
    model = SimSS2(seed=24, wait_for_host=True, numbers=[17])
    messages = drive(model, 0.0, 30.0)
    assert {s.state for s in statuses(messages)} == {1}  # status lines go out while it holds
    assert ask(model, b"*I 4\r\n", 30.0)  # any command the wheel understands releases it
    after = drive(model, 30.0, 60.0)
    assert [s.state for s in state_changes(after)][:4] == [2, 3, 4, 5]
    assert next(s.last_number for s in statuses(after) if s.state == 5) == 17  # game 1 itself
    later = drive(model, 60.0, 120.0)  # no command since: the next games run on by themselves
    assert [s.state for s in state_changes(later)].count(2) >= 2


def test_wait_for_host_ignores_garbage_until_a_real_command() -> None:
    model = SimSS2(seed=24, wait_for_host=True)
    model.advance(10.0)
    model.receive(b"\x00\xffnoise\r\n", 10.0)
    model.advance(20.0)
    assert model.state == 1


def test_mode_bit_16_drops_the_bare_number() -> None:
    model = SimSS2(seed=28, mode=MODE_AUTO_STATUS | MODE_NO_BARE_NUMBER)
    messages = drive(model, 0.0, 60.0)
    assert 5 in {s.state for s in statuses(messages)}
    assert not [m for _, m in messages if isinstance(m, BareNumber)]


def test_status_off_without_mode_bit_128_and_x_still_answers() -> None:
    model = SimSS2(seed=25, mode=1)
    assert drive(model, 0.0, 10.0) == []
    status = ask(model, b"*X\r\n", 10.0)
    assert isinstance(status[0], Status)


def test_garbled_and_unknown_commands_are_counted_and_ignored() -> None:
    model = SimSS2(seed=26)
    model.advance(2.0)
    assert model.receive(b"\x00\xff junk\r\n*Z\r\n*P 7\r\n*s t\r\n*o 99999\r\n", 2.0) == b""
    assert model.ignored_commands == 5
    assert model.receive(b"*K\r", 2.0) == b"*K CAM\r\n"  # CR alone terminates too


def test_commands_split_across_receives() -> None:
    model = SimSS2(seed=27)
    model.advance(2.0)
    assert model.receive(b"*", 2.0) == b""
    assert model.receive(b"K\r", 2.01) == b"*K CAM\r\n"


# --- from_spec ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("misspin@2", FaultSpec("misspin", 2)),
        ("silence@3=4", FaultSpec("silence", 3, 4.0)),
        ("fault@1=5", FaultSpec("fault", 1, 5)),
        ("short_spin@4=3", FaultSpec("short_spin", 4, 3)),
        (" misfire@1=1.5 ", FaultSpec("misfire", 1, 1.5)),
        ("result_mismatch@2", FaultSpec("result_mismatch", 2)),
        ("result_mismatch@2=0", FaultSpec("result_mismatch", 2, 0)),
        ("rotor_reversal@3", FaultSpec("rotor_reversal", 3)),
    ],
)
def test_from_spec_parses(text: str, expected: FaultSpec) -> None:
    assert from_spec(text) == expected
    assert FaultSpec.from_spec(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("misspin", "expected KIND@GAME"),
        ("@2", "expected KIND@GAME"),
        ("wobble@2", "unknown fault kind 'wobble'"),
        ("misspin@x", "game 'x' is not a number"),
        ("misspin@0", "game must be an integer >= 1"),
        ("misspin@2=3", "takes no value"),
        ("silence@2=abc", "value 'abc' is not a number"),
        ("silence@2=-1", "seconds must be > 0"),
        ("fault@1=2.5", "not a number"),
        ("sensor_fault@1=5", "code must be one of"),
        ("result_mismatch@1=37", "number must be 0-36"),
        ("result_mismatch@1=1.5", "not a number"),
        ("rotor_reversal@1=1", "takes no value"),
    ],
)
def test_from_spec_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_spec(text)


# --- servers --------------------------------------------------------------------------------------


def read_until(
    port: serial.Serial, done: Callable[[list[Message]], bool], timeout: float = 5.0
) -> list[Message]:
    """Read and decode until ``done(messages so far)``; fail after ``timeout`` seconds."""
    decoder = Decoder()
    out: list[Message] = []
    deadline = time.monotonic() + timeout
    while not done(out):
        assert time.monotonic() < deadline, f"timed out; the last messages: {out[-5:]}"
        out.extend(decoder.feed(port.read(256)))
    return out


def status_lines(count: int) -> Callable[[list[Message]], bool]:
    return lambda messages: len([m for m in messages if isinstance(m, Status)]) >= count


def replies(*wanted: Reply) -> Callable[[list[Message]], bool]:
    return lambda messages: all(reply in messages for reply in wanted)


async def test_serve_pty_streams_and_answers(tmp_path: Path) -> None:
    model = SimSS2(seed=30, speed=40)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    link = tmp_path / "wheel"
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    try:
        path = await asyncio.wait_for(ready, 2)
        assert path.startswith("/dev/pts/")
        assert os.readlink(link) == path

        def talk() -> list[Message]:
            with serial.serial_for_url(str(link), timeout=0.05) as port:
                streamed = read_until(port, status_lines(10))
                port.write(b"*K\r\n")
                read_until(port, replies(Reply("K", "CAM")))
            return streamed

        streamed = await asyncio.to_thread(talk)
        assert not [m for m in streamed if isinstance(m, DecodeError)]
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server
    assert not link.exists()


async def test_serve_pty_disconnect_replaces_the_pty_behind_the_link(tmp_path: Path) -> None:
    speed = 40.0
    model = SimSS2(seed=33, speed=speed, faults=[FaultSpec("disconnect", 1, 8)])
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    link = tmp_path / "wheel"
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    try:
        assert (await asyncio.wait_for(ready, 2)).startswith("/dev/pts/")

        def until_dropped() -> str:
            start = time.monotonic()
            with serial.serial_for_url(str(link), timeout=0.05) as port:
                while time.monotonic() - start < 3:
                    try:
                        port.read(256)
                    except serial.SerialException as exc:
                        return str(exc)
            return "still connected"

        assert await asyncio.to_thread(until_dropped) != "still connected"
        # The link went with the old pair; it comes back when the window (0.2 s) ends.
        await wait_until(link.is_symlink, what="the new pty behind the link")
        assert os.readlink(link).startswith("/dev/pts/")  # a new pair (the number may recur)

        def reconnect() -> list[Message]:
            with serial.serial_for_url(str(link), timeout=0.05) as port:
                return read_until(port, status_lines(1))

        await asyncio.to_thread(reconnect)
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


async def test_serve_tcp_streams_and_answers() -> None:
    model = SimSS2(seed=31, speed=40)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_tcp(model, "127.0.0.1", 0, on_ready=ready.set_result))
    try:
        where = await asyncio.wait_for(ready, 2)

        def talk() -> list[Message]:
            with serial.serial_for_url(f"socket://{where}", timeout=0.05) as port:
                streamed = read_until(port, status_lines(10))
                port.write(b"*K\r\n*V\r\n")
                read_until(
                    port,
                    lambda m: (
                        Reply("K", "CAM") in m
                        and any(isinstance(r, Reply) and r.letter == "V" for r in m)
                    ),
                )
            return streamed

        streamed = await asyncio.to_thread(talk)
        assert not [m for m in streamed if isinstance(m, DecodeError)]
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


async def test_serve_tcp_disconnect_closes_the_client_then_accepts_again() -> None:
    speed = 40.0
    model = SimSS2(seed=32, speed=speed, faults=[FaultSpec("disconnect", 1, 8)])
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_tcp(model, "127.0.0.1", 0, on_ready=ready.set_result))
    try:
        where = await asyncio.wait_for(ready, 2)

        def until_dropped() -> str:
            start = time.monotonic()
            with serial.serial_for_url(f"socket://{where}", timeout=0.05) as port:
                while time.monotonic() - start < 3:
                    try:
                        port.read(256)
                    except serial.SerialException as exc:
                        return str(exc)
            return "still connected"

        assert await asyncio.to_thread(until_dropped) != "still connected"

        def reconnected() -> bool:
            # During the window (8 wheel seconds = 0.2 s) a new client is closed at once; after
            # it, a new connection gets the stream again.
            try:
                with serial.serial_for_url(f"socket://{where}", timeout=0.05) as port:
                    return bool(read_until(port, status_lines(1), timeout=0.5))
            except (serial.SerialException, AssertionError):
                return False

        await wait_until(lambda: asyncio.to_thread(reconnected), what="the stream after the window")
    finally:
        server.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await server


# --- CLI ------------------------------------------------------------------------------------------


async def start_cli(*args: str) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.ss2",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 5)
    return process, line.decode().strip()


async def test_cli_prints_ready_and_stops_on_sigterm() -> None:
    process, line = await start_cli("--tcp", "127.0.0.1:0", "--speed", "40")
    try:
        kind, transport, where = line.split()
        assert (kind, transport) == ("READY", "tcp")
        assert int(where.rsplit(":", 1)[1]) > 0
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 5) == 0


async def test_cli_pty_exits_after_games() -> None:
    process, line = await start_cli("--pty", "--speed", "50", "--games", "1", "--numbers", "17")
    assert line.startswith("READY pty /dev/pts/")
    assert await asyncio.wait_for(process.wait(), 5) == 0


async def test_cli_rejects_a_bad_fault() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.ss2",
        "--fault",
        "wobble@1",
        stderr=asyncio.subprocess.PIPE,
        cwd=REPO,
    )
    _, err = await asyncio.wait_for(process.communicate(), 5)
    assert process.returncode == 2
    assert b"unknown fault kind 'wobble'" in err
