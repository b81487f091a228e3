"""SS2 interpreter: timed scripts of wheel lines → the exact device events and host commands.

Each script is ``(time, step)``: a step is a wire line (decoded by the production
:class:`~tablectl.drivers.ss2.protocol.Decoder`), :data:`TICK` (a timer tick only) or :data:`LOST`
(the link dropped). After every line the runner ticks too, as the driver's loop does. Events are
compared as short tuples (see :func:`summary`) so a failing assertion reads like the script.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tablectl.drivers.events import (
    BallLaunched,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    NoMoreBets,
    SpinInvalid,
    WheelReady,
    WheelSettled,
)
from tablectl.drivers.ss2.driver import SS2Settings
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.ss2.protocol import (
    BallInPocket,
    BareNumber,
    Decoder,
    FaultReport,
    Message,
    SensorPassed,
    Status,
    encode_command,
)

TICK = "<tick>"
LOST = "<lost>"
CAPTURE = Path(__file__).parent.parent / "data" / "captures" / "ss2-six-spins.trace"


def status(
    state: int, spin: int, win: str = "  ", *, warn: int = 0, speed: int = 140, rotor: int = 0
) -> str:
    """A status line as the wheel sends it (without the terminator)."""
    return f"*X;{state};{spin:03d};{win:>2};{warn:X};{speed:03d};{rotor}"


def every(step: float, start: float, *lines: str) -> list[tuple[float, str]]:
    """Lines one ``step`` apart from ``start`` (the wheel's automatic status is every 0.5 s)."""
    return [(start + i * step, line) for i, line in enumerate(lines)]


def summary(event: DeviceEvent) -> tuple[Any, ...]:
    match event:
        case DeviceAvailable():
            return ("available",)
        case DeviceUnavailable(reason=reason):
            return ("unavailable", reason)
        case DeviceFaultRaised(code=code):
            return ("fault", code)
        case DeviceFaultCleared(code=code):
            return ("cleared", code)
        case WheelReady(spin=spin):
            return ("ready", spin)
        case BallLaunched(spin=spin, rotor_direction=rotor):
            return ("launched", spin, rotor)
        case NoMoreBets(spin=spin):
            return ("nmb", spin)
        case WheelSettled():
            e = event
            return ("settled", e.number, e.spin, e.revolutions, e.ball_direction, e.rotor_direction)
        case SpinInvalid(reason=reason, spin=spin):
            return ("invalid", reason, spin)
    raise AssertionError(event)  # pragma: no cover


class Run:
    """Feeds a script; keeps every event (with its time) and every command sent."""

    def __init__(self, **options: Any) -> None:
        self.interpreter = SS2Interpreter("wheel-1", SS2Settings(**options))
        self.decoder = Decoder()
        self.events: list[DeviceEvent] = []
        self.commands: list[tuple[float, bytes]] = []

    def play(self, script: Iterable[tuple[float, str]]) -> list[tuple[Any, ...]]:
        """Run the script; return the summaries of the events it produced."""
        start = len(self.events)
        for now, step in script:
            if step == LOST:
                self._keep(now, self.interpreter.connection_lost(now))
                continue
            if step != TICK:
                for message in self.decoder.feed(step.encode("ascii") + b"\r\n"):
                    self._keep(now, self.interpreter.feed(message, now))
            self._keep(now, self.interpreter.tick(now))
        return [summary(e) for e in self.events[start:]]

    def _keep(self, now: float, events: Sequence[DeviceEvent]) -> None:
        for event in events:
            assert event.at == now
            assert event.device == "wheel-1"
        self.events += events
        self.commands += [(now, encode_command(c)) for c in self.interpreter.take_commands()]


def game(spin: int, number: int, start: float, *, rotor_before: int, rotor: int) -> list[Any]:
    """One game in the real trace's shape: the rotor reverses during state 2, the bare number
    comes just before the first state-5 line, and 5 goes straight to 2 with spin + 1."""
    lines = [status(2, spin, "34", speed=s, rotor=rotor_before) for s in (154, 80, 0, 0)]
    lines += [status(2, spin, "34", speed=s, rotor=rotor) for s in (78, 142)]
    lines += [status(3, spin, "34", speed=141, rotor=rotor)] * 4
    lines += [status(4, spin, "34", speed=137, rotor=rotor)] * 6
    lines += [f"{number:2d}"]
    lines += [status(5, spin, f"{number:2d}", speed=136, rotor=rotor)] * 2
    return every(0.5, start, *lines)


# --- normal play -----------------------------------------------------------------------------


def test_real_trace_shape() -> None:
    run = Run()
    script = every(0.5, 0.0, "*P OK", *[status(1, 11, "34")] * 4)
    script += game(11, 27, 2.0, rotor_before=0, rotor=1)
    script += game(12, 6, 14.0, rotor_before=1, rotor=0)
    script += every(0.5, 26.0, status(2, 13, " 6", rotor=0))
    assert run.play(script) == [
        ("available",),
        ("ready", 11),
        ("launched", 11, "ccw"),  # the direction of state 3, not the one state 2 started with
        ("nmb", 11),
        ("settled", 27, 11, None, None, "ccw"),  # from the bare line, before state 5
        ("ready", 12),
        ("launched", 12, "cw"),
        ("nmb", 12),
        ("settled", 6, 12, None, None, "cw"),
        ("ready", 13),
    ]
    assert run.commands == []


def test_our_six_spin_capture() -> None:
    """The synthetic capture in tests/data: six results, then the power-down in state 2."""
    run = Run()
    decoder = Decoder()
    messages = decoder.feed(CAPTURE.read_bytes())
    interpreter = run.interpreter
    events: list[DeviceEvent] = []
    for i, message in enumerate(messages):
        events += interpreter.feed(message, i * 0.5)
    settled = [e for e in events if isinstance(e, WheelSettled)]
    assert [e.number for e in settled] == [32, 15, 0, 26, 3, 35]
    assert [e.spin for e in settled] == [101, 102, 103, 104, 105, 106]
    assert [e.rotor_direction for e in settled] == ["cw", "ccw", "cw", "ccw", "cw", "ccw"]
    assert sum(isinstance(e, WheelReady) for e in events) == 7
    # The host's *P 0 dropped the wheel to 6 in the middle of spin 107's state 2.
    assert summary(events[-1]) == ("fault", "ss2_powered_down")


def test_repeated_status_lines_are_not_new_events() -> None:
    run = Run()
    lines = [status(1, 5)] * 5 + [status(2, 5)] * 10 + [status(3, 5, rotor=1)] * 10
    lines += [status(4, 5, rotor=1)] * 10 + [status(5, 5, "17", rotor=1)] * 10
    lines += [status(2, 6, "17")] * 10
    assert run.play(every(0.5, 0.0, *lines)) == [
        ("available",),
        ("ready", 5),
        ("launched", 5, "ccw"),
        ("nmb", 5),
        ("settled", 17, 5, None, None, "ccw"),  # from state 5 when there is no bare line
        ("ready", 6),
    ]


def test_decode_errors_are_ignored() -> None:
    run = Run()
    assert run.play([(0.0, "garbage"), (0.5, "*X;9;1")]) == []
    assert run.play([(1.0, status(2, 1))]) == [("available",), ("ready", 1)]


# --- the vendor's exception handling -----------------------------------------------------------


def test_misspin_voids_once_and_sends_restart() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 40), status(3, 40), *[status(3, 40, warn=2)] * 4)
    assert run.play(script) == [
        ("available",),
        ("ready", 40),
        ("launched", 40, "cw"),
        ("invalid", "same_direction", 40),
    ]
    assert run.commands == [(1.0, b"*R\r\n")]
    # The wheel obeys *R (state 1) and respins from state 2 with the same spin number.
    script = every(0.5, 3.0, status(4, 40), status(1, 40), status(2, 40), status(3, 40))
    script += every(0.5, 5.0, status(4, 40), status(5, 40, " 9"))
    assert run.play(script) == [
        ("ready", 40),
        ("launched", 40, "cw"),
        ("nmb", 40),
        ("settled", 9, 40, None, None, "cw"),
    ]
    assert len(run.commands) == 1


def test_no_ball_held_under_five_seconds_is_ignored() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 7), status(3, 7), status(4, 7))
    script += every(0.5, 10.0, *[status(4, 7, warn=1)] * 10)  # 10.0 … 14.5
    script += [(14.9, TICK)]
    assert run.play(script)[-1] == ("nmb", 7)
    assert run.commands == []
    assert run.play([(15.0, TICK)]) == [("invalid", "no_ball", 7)]
    assert run.commands == [(15.0, b"*R\r\n")]
    # Held on: still one void, one *R.
    assert run.play(every(0.5, 15.5, *[status(4, 7, warn=1)] * 12)) == []
    assert len(run.commands) == 1


def test_no_ball_hold_restarts_when_the_bit_drops() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 7), status(3, 7), status(4, 7))
    script += every(0.5, 2.0, *[status(4, 7, warn=1)] * 8)  # 2.0 … 5.5
    script += every(0.5, 6.0, status(4, 7))  # the ball is sensed again
    script += every(0.5, 6.5, *[status(4, 7, warn=1)] * 10)  # 6.5 … 11.0
    script += [(11.4, TICK)]
    assert ("invalid", "no_ball", 7) not in run.play(script)
    assert run.play([(11.5, TICK)]) == [("invalid", "no_ball", 7)]


def test_misfire_in_state_2_is_counted_not_voided() -> None:
    run = Run()
    lines = [status(2, 8, warn=8)] * 3 + [status(2, 8)] * 2 + [status(2, 8, warn=8)] * 3
    lines += [status(2, 8), status(3, 8), status(4, 8), status(5, 8, "12")]
    assert run.play(every(0.5, 0.0, *lines)) == [
        ("available",),
        ("ready", 8),
        ("launched", 8, "cw"),
        ("nmb", 8),
        ("settled", 12, 8, None, None, "cw"),
    ]
    assert run.interpreter.misfire_retries == 2
    assert run.commands == []


def test_misfire_in_state_3_is_ignored_for_the_grace_period() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 9), *[status(3, 9, warn=8)] * 5)  # 0.5 … 2.5
    script += every(0.5, 3.0, *[status(3, 9)] * 4)
    assert ("invalid", "misfire", 9) not in run.play(script)
    assert run.commands == []


def test_misfire_in_state_3_beyond_the_grace_period_voids() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 9), *[status(3, 9, warn=8)] * 7)  # 0.5 … 3.5
    events = run.play(script)
    assert events[-1] == ("invalid", "misfire", 9)
    assert run.events[-1].at == 3.5  # held from 0.5: 3 s later
    assert run.commands == [(3.5, b"*R\r\n")]
    assert events.count(("invalid", "misfire", 9)) == 1


def test_sensor_fault_is_raised_and_cleared_once_each() -> None:
    run = Run()
    lines = [status(1, 3)] + [status(1, 3, warn=4)] * 4 + [status(1, 3)] * 3
    lines += [status(2, 3, warn=4)] * 3 + [status(2, 3, warn=5)]
    assert run.play(every(0.5, 0.0, *lines)) == [
        ("available",),
        ("fault", "ss2_sensor_fault"),
        ("cleared", "ss2_sensor_fault"),
        ("fault", "ss2_sensor_fault"),
        ("ready", 3),
    ]


def test_fault_report_is_latched_until_the_wheel_plays_again() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 20), status(3, 20), "*F 5", status(3, 20), "*F 5")
    script += every(0.5, 3.0, status(4, 20), status(5, 20, " 1"), status(5, 20, " 1"))
    script += every(0.5, 5.0, status(2, 21, " 1"), status(2, 21, " 1"), "*F 5", status(2, 21))
    assert run.play(script) == [
        ("available",),
        ("ready", 20),
        ("launched", 20, "cw"),
        ("fault", "ss2_fault_5"),
        ("nmb", 20),
        ("settled", 1, 20, None, None, "cw"),
        ("cleared", "ss2_fault_5"),  # before the new round opens
        ("ready", 21),
        ("fault", "ss2_fault_5"),  # reported in state 2: repeated 2 lines do not clear it
    ]
    raised = [e for e in run.events if isinstance(e, DeviceFaultRaised)]
    assert raised[0].detail == "motor fault"
    assert run.play([(7.0, "*F 0"), (7.5, "*F 0")]) == [("cleared", "ss2_fault_5")]


def test_powered_down_mid_game_is_a_fault_until_the_wheel_leaves_6() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 30), status(3, 30), *[status(6, 30)] * 3)
    script += every(0.5, 2.5, status(6, 30), status(1, 30), status(6, 30))
    assert run.play(script) == [
        ("available",),
        ("ready", 30),
        ("launched", 30, "cw"),
        ("fault", "ss2_powered_down"),
        ("cleared", "ss2_powered_down"),
    ]  # 1 → 6 is an orderly close, not a fault


# --- silence and reconnects ----------------------------------------------------------------------


def test_silence_is_reported_once_and_the_next_line_brings_it_back() -> None:
    run = Run()
    script = every(0.5, 0.0, status(1, 2), status(1, 2))
    script += [(t / 10, TICK) for t in range(6, 40)]  # ticks 0.6 … 3.9
    events = run.play(script)
    assert events == [("available",), ("unavailable", "silent")]
    assert run.events[-1].at == pytest.approx(2.5)  # 2 s after the last line
    assert run.play([(4.0, status(1, 2)), (4.5, status(1, 2))]) == [("available",)]


def test_a_wheel_that_never_speaks_is_reported_silent() -> None:
    run = Run()
    assert run.play([(t / 10, TICK) for t in range(50)]) == [("unavailable", "silent")]


def test_reconnect_in_the_same_game_emits_the_missed_transitions() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 50), status(3, 50, rotor=1), status(3, 50, rotor=1))
    script += [(1.2, LOST), (5.0, status(5, 50, "22", rotor=1)), (5.5, status(5, 50, "22"))]
    script += [(6.0, status(2, 51, "22"))]
    assert run.play(script) == [
        ("available",),
        ("ready", 50),
        ("launched", 50, "ccw"),
        ("available",),
        ("nmb", 50),
        ("settled", 22, 50, None, None, "ccw"),
        ("ready", 51),
    ]


def test_reconnect_into_a_new_spin_opens_a_new_game() -> None:
    run = Run()
    script = [*every(0.5, 0.0, status(2, 50), status(3, 50)), (1.2, LOST)]
    script += [(9.0, status(2, 52, "22")), (9.5, status(2, 52, "22"))]
    assert run.play(script) == [
        ("available",),
        ("ready", 50),
        ("launched", 50, "cw"),
        ("available",),
        ("ready", 52),
    ]


def test_reconnect_into_a_new_spin_past_no_more_bets_closes_its_bets() -> None:
    """Caveat of the design: a new game found in 4 gets WheelReady *and* the milestones the
    wheel is already past, so the engine never holds bets open on a closed wheel."""
    run = Run()
    script = [(0.0, status(3, 50)), (0.5, LOST), (9.0, status(4, 52, "22", rotor=1))]
    assert run.play(script) == [
        ("available",),
        ("ready", 50),
        ("launched", 50, "cw"),
        ("available",),
        ("ready", 52),
        ("launched", 52, "ccw"),
        ("nmb", 52),
    ]


def test_reconnect_into_the_result_of_an_unseen_game_settles_nothing() -> None:
    run = Run()
    script = [(0.0, status(5, 49, " 3")), (0.5, LOST), (9.0, status(5, 50, "22"))]
    assert run.play(script) == [("available",), ("available",)]


def test_reconnect_into_state_6_from_a_game_is_powered_down() -> None:
    run = Run()
    script = [(0.0, status(3, 50)), (0.5, LOST), (9.0, status(6, 50)), (9.5, status(1, 50))]
    assert run.play(script)[-3:] == [
        ("available",),
        ("fault", "ss2_powered_down"),
        ("cleared", "ss2_powered_down"),
    ]


# --- the sensor stream (*I 4) --------------------------------------------------------------------


def _spin_with_sensors(spin: int, sensors: Sequence[int], number: int) -> list[tuple[float, str]]:
    lines = [status(2, spin), status(3, spin, rotor=1)]
    lines += [f"bs {n}" for n in sensors]
    lines += [status(4, spin, rotor=1), "bs 0", f"bn {number:2d}", f"{number:2d}"]
    lines += [status(5, spin, f"{number:2d}", rotor=1)]
    return every(0.1, spin * 10.0, *lines)


@pytest.mark.parametrize(
    ("sensors", "revolutions", "direction"),
    [
        ([0, 1, 2] * 6, 6, "cw"),  # + the "bs 0" in state 4: the 6th pass after the first event
        ([1, 0, 2, 1, 0, 2, 1], 3, "ccw"),
        ([2, 0], 2, "cw"),
    ],
)
def test_sensor_stream_revolutions_and_direction(
    sensors: list[int], revolutions: int, direction: str
) -> None:
    run = Run(sensor_stream=True)
    events = run.play(_spin_with_sensors(1, sensors, 14))
    assert events[-1] == ("settled", 14, 1, revolutions, direction, "ccw")


def test_sensor_data_is_per_game() -> None:
    run = Run(sensor_stream=True)
    run.play(_spin_with_sensors(1, [0, 1, 2] * 4, 14))
    script = every(0.1, 30.0, status(2, 2), status(3, 2), status(4, 2), status(5, 2, " 8"))
    assert run.play(script)[-1] == ("settled", 8, 2, None, None, "cw")  # no events: unknown


def test_without_the_sensor_stream_its_lines_are_ignored() -> None:
    run = Run()
    events = run.play(_spin_with_sensors(1, [0, 1, 2] * 6, 14))
    assert events[-1] == ("settled", 14, 1, None, None, "ccw")


def test_ball_in_pocket_disagreeing_with_the_result_voids() -> None:
    run = Run(sensor_stream=True)
    script = every(0.1, 0.0, status(2, 4), status(3, 4), "bs 0", "bs 1", status(4, 4), "bn  5")
    script += every(0.1, 1.0, "27", status(5, 4, "27"), status(5, 4, "27"))
    assert run.play(script)[-1:] == [("invalid", "number_mismatch", 4)]
    assert not any(isinstance(e, WheelSettled) for e in run.events)
    assert run.commands == []  # the game is over anyway; nothing to restart


def test_ball_in_pocket_after_the_result_still_reports_a_mismatch() -> None:
    run = Run(sensor_stream=True)
    script = every(0.1, 0.0, status(2, 4), status(3, 4), status(4, 4), "27", "bn 27")
    script += every(0.1, 1.0, status(5, 4, "27"), "bn 26", "bn 25")
    assert run.play(script)[-2:] == [
        ("settled", 27, 4, None, None, "cw"),
        ("invalid", "number_mismatch", 4),
    ]


def test_ball_in_pocket_between_the_bare_line_and_its_status_line_voids_first() -> None:
    # The result is complete only with its state-5 line: a pocket report before it still counts.
    run = Run(sensor_stream=True)
    script = every(0.1, 0.0, status(2, 4), status(3, 4), status(4, 4), "27", "bn 26")
    script += every(0.1, 1.0, status(5, 4, "27"))
    assert run.play(script)[-1:] == [("invalid", "number_mismatch", 4)]
    assert not any(isinstance(e, WheelSettled) for e in run.events)


# --- both readings of the result, the rotor at the result (issue 11) --------------------------


def _settled(run: Run) -> WheelSettled:
    (settled,) = [e for e in run.events if isinstance(e, WheelSettled)]
    return settled


def _bytes(run: Run, chunks: Sequence[bytes], start: float = 0.0) -> list[tuple[Any, ...]]:
    """Feed raw wire bytes in the given chunks (0.1 s apart), ticking after each."""
    out: list[DeviceEvent] = []
    for i, chunk in enumerate(chunks):
        now = start + i * 0.1
        for message in run.decoder.feed(chunk):
            out += run.interpreter.feed(message, now)
        out += run.interpreter.tick(now)
    run.events += out
    return [summary(e) for e in out]


_GAME_6 = b"*X;2;006;34;0;150;0\r\n*X;3;006;34;0;141;1\r\n*X;4;006;34;0;139;1\r\n"


def test_bare_line_waits_for_its_status_line_and_both_are_reported() -> None:
    run = Run()
    assert _bytes(run, [_GAME_6, b"17\r\n"]) == [
        ("available",),
        ("ready", 6),
        ("launched", 6, "ccw"),
        ("nmb", 6),
    ]  # nothing settles on the bare line alone while its status line may still come
    assert _bytes(run, [b"*X;5;006;17;0;138;1\r\n"], start=1.0) == [
        ("settled", 17, 6, None, None, "ccw")
    ]
    assert (_settled(run).number, _settled(run).status_number) == (17, 17)
    assert _settled(run).at == 1.0


@pytest.mark.parametrize(
    "chunks",
    [
        pytest.param([_GAME_6 + b"17\r\n*X;5;006;18;0;138;1\r\n"], id="one-read"),
        pytest.param([_GAME_6, b"1", b"7\r", b"\n*X;5;0", b"06;18;0;138;1\r\n"], id="split"),
        pytest.param(
            [_GAME_6, b"17\r\n\x00\xff\x13*", b"*X;5;006;18;0;1", b"38;1\r\n"],
            id="garbage-then-split",
        ),
        pytest.param(
            [_GAME_6, b"17\r\n*X;5;006;1", b"8;Z;138;1\r\n", b"*X;5;006;18;0;138;1\r\n"],
            id="garbled-status-line-then-a-good-one",
        ),
    ],
)
def test_bare_line_and_status_line_that_disagree_are_both_reported(chunks: list[bytes]) -> None:
    """R22 lives in the engine: the interpreter reports what each line said, never picks."""
    run = Run()
    _bytes(run, chunks)
    settled = _settled(run)
    assert (settled.number, settled.status_number, settled.spin) == (17, 18, 6)
    assert run.commands == []


def test_a_bare_line_garbled_beyond_recognition_leaves_the_status_line_alone() -> None:
    run = Run()
    _bytes(run, [_GAME_6, b"1\x807\r\n", b"*X;5;006;18;0;138;1\r\n"])
    assert (_settled(run).number, _settled(run).status_number) == (18, None)


def test_without_a_bare_line_the_status_line_settles_alone() -> None:
    run = Run()
    _bytes(run, [_GAME_6, b"*X;5;006;18;0;138;1\r\n"])
    assert (_settled(run).number, _settled(run).status_number) == (18, None)


@pytest.mark.parametrize(
    ("after", "rest"),
    [
        pytest.param(b"*X;2;007;17;0;150;1\r\n", [("ready", 7)], id="next-spin-in-2"),
        pytest.param(b"*X;1;006;17;0;150;1\r\n", [], id="same-spin-in-1"),
    ],
)
def test_a_bare_line_whose_status_line_never_comes_settles_alone_first(
    after: bytes, rest: list[tuple[Any, ...]]
) -> None:
    run = Run()
    _bytes(run, [_GAME_6, b"17\r\n"])
    assert _bytes(run, [after], start=1.0) == [("settled", 17, 6, None, None, "ccw"), *rest]
    assert _settled(run).status_number is None


def test_a_bare_line_survives_a_reconnect_until_its_status_line() -> None:
    run = Run()
    _bytes(run, [_GAME_6, b"17\r\n"])
    run.play([(1.0, LOST)])
    assert _bytes(run, [b"*X;5;006;18;0;138;1\r\n"], start=5.0) == [
        ("available",),
        ("settled", 17, 6, None, None, "ccw"),
    ]
    assert _settled(run).status_number == 18


def test_a_fault_bit_on_the_state5_line_does_not_overtake_the_result() -> None:
    run = Run()
    events = _bytes(run, [_GAME_6 + b"17\r\n*X;5;006;17;4;138;1\r\n"])
    assert events[-2:] == [("settled", 17, 6, None, None, "ccw"), ("fault", "ss2_sensor_fault")]


@pytest.mark.parametrize(
    ("lines", "launch", "result"),
    [
        pytest.param(
            [status(3, 6, rotor=1), status(4, 6, rotor=0), "17", status(5, 6, "17", rotor=0)],
            "ccw",
            "cw",
            id="reversed-at-no-more-bets",
        ),
        pytest.param(
            [status(3, 6, rotor=1), status(4, 6, rotor=1), "17", status(5, 6, "17", rotor=0)],
            "ccw",
            "cw",
            id="reversed-on-the-result-line",
        ),
        pytest.param(
            [status(3, 6, rotor=1), status(4, 6, rotor=0), status(5, 6, "17", rotor=0)],
            "ccw",
            "cw",
            id="no-bare-line",
        ),
        pytest.param(
            [status(3, 6, rotor=1), status(4, 6, rotor=1), "17", status(5, 6, "17", rotor=1)],
            "ccw",
            "ccw",
            id="kept-its-direction",
        ),
    ],
)
def test_the_result_carries_the_rotor_direction_of_the_line_that_completed_it(
    lines: list[str], launch: str, result: str
) -> None:
    """seed-001 §4.1 L95 lives in the engine; the interpreter reports both directions."""
    run = Run()
    events = run.play(every(0.5, 0.0, status(2, 6, rotor=0), *lines))
    assert ("launched", 6, launch) in events
    assert _settled(run).rotor_direction == result


def test_a_rotor_reversal_while_the_link_was_down_shows_on_the_result() -> None:
    run = Run()
    script = every(0.5, 0.0, status(2, 50), status(3, 50, rotor=1))
    script += [(1.2, LOST), (5.0, status(5, 50, "22", rotor=0))]
    assert run.play(script)[-1] == ("settled", 22, 50, None, None, "cw")
    assert ("launched", 50, "ccw") in [summary(e) for e in run.events]


# --- property: whatever the wheel says -----------------------------------------------------------

_statuses = st.builds(
    Status,
    state=st.integers(1, 6),
    spin=st.sampled_from([1, 2, 3, 255, 256]),
    last_number=st.none() | st.integers(0, 36),
    warnings=st.integers(0, 15),
    rotor_rpm_x10=st.integers(0, 999),
    rotor_direction=st.integers(0, 1),
)
_messages: st.SearchStrategy[Message | str] = st.one_of(
    _statuses,
    _statuses,
    _statuses,
    st.builds(BareNumber, st.integers(0, 36)),
    st.builds(FaultReport, st.sampled_from([0, 0, 2, 5, 11, 100])),
    st.builds(SensorPassed, st.integers(0, 2)),
    st.builds(BallInPocket, st.integers(0, 36)),
    st.just(TICK),
    st.just(LOST),
)


@settings(max_examples=300, deadline=None)
@given(
    steps=st.lists(st.tuples(st.floats(0, 6, allow_nan=False), _messages), max_size=80),
    sensor_stream=st.booleans(),
)
def test_interpreter_invariants(
    steps: list[tuple[float, Message | str]], sensor_stream: bool
) -> None:
    interpreter = SS2Interpreter("w", SS2Settings(sensor_stream=sensor_stream))
    now = 0.0
    events: list[DeviceEvent] = []
    restarts = 0
    available = False
    for delta, step in steps:
        now += delta
        if step == LOST:
            new = interpreter.connection_lost(now)
            available = False
        elif step == TICK:
            new = interpreter.tick(now)
        else:
            assert not isinstance(step, str)
            new = interpreter.feed(step, now) + interpreter.tick(now)
        for event in new:
            if isinstance(event, DeviceAvailable):
                assert not available, "available twice without going down"
                available = True
            elif isinstance(event, DeviceUnavailable):
                assert available or not events, "unavailable twice"
                available = False
        events += new
        restarts += len(interpreter.take_commands())

    latched: dict[str, bool] = {}
    for event in events:
        if isinstance(event, DeviceFaultRaised):
            assert not latched.get(event.code), f"{event.code} raised twice"
            latched[event.code] = True
        elif isinstance(event, DeviceFaultCleared):
            assert latched.get(event.code), f"{event.code} cleared while not raised"
            latched[event.code] = False
    assert {code for code, on in latched.items() if on} == interpreter.active_faults

    # Per game (from one WheelReady to the next): at most one result, at most one void, and
    # every game event names the game's spin.
    game_spin: int | None = None
    settled = invalid = 0
    for event in events:
        if isinstance(event, WheelReady):
            game_spin, settled, invalid = event.spin, 0, 0
        elif isinstance(event, BallLaunched | NoMoreBets | WheelSettled | SpinInvalid):
            assert event.spin == game_spin
            settled += isinstance(event, WheelSettled)
            invalid += isinstance(event, SpinInvalid)
            assert settled <= 1
            assert invalid <= 1
    voids = [e for e in events if isinstance(e, SpinInvalid) and e.reason != "number_mismatch"]
    assert restarts == len(voids)
    # A second reading is only ever reported beside a bare line the wheel really sent.
    if not any(isinstance(step, BareNumber) for _, step in steps):
        assert all(e.status_number is None for e in events if isinstance(e, WheelSettled))
