"""The big-wheel interpreter: decoded messages + scripted time in, device events out (no I/O)."""

from __future__ import annotations

from tablectl.drivers.bigwheel.interpreter import (
    FAULT_RESULT_MISMATCH,
    FAULT_SEGMENT_COUNT,
    SEGMENT_RETRY,
    BigWheelInterpreter,
    fault_code,
)
from tablectl.drivers.bigwheel.protocol import (
    Ack,
    DecodeError,
    Fault,
    FaultCleared,
    Identify,
    Message,
    QueryStatus,
    RevolutionTick,
    SetSegments,
    SpinStarted,
    Status,
    Stopped,
    StoppedOnDivider,
    Version,
)
from tablectl.drivers.events import (
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    Direction,
    WheelSpinStarted,
    WheelStopped,
)

DEV = "wheel"
IDLE = Status("idle", 54, 0)


def make(segments: int | None = 54, silence: float = 3.0) -> BigWheelInterpreter:
    interpreter = BigWheelInterpreter(DEV, silence_timeout=silence, segments=segments)
    interpreter.connected(0.0)
    return interpreter


def run(interpreter: BigWheelInterpreter, *script: tuple[float, Message]) -> list[DeviceEvent]:
    out: list[DeviceEvent] = []
    for now, message in script:
        out += interpreter.feed(message, now)
    return out


def game(events: list[DeviceEvent]) -> list[DeviceEvent]:
    """Only the spin events."""
    return [e for e in events if isinstance(e, WheelSpinStarted | WheelStopped)]


def stopped(
    index: int,
    revolutions: int,
    at: float,
    *,
    direction: Direction = "cw",
    on_divider: bool = False,
) -> WheelStopped:
    return WheelStopped(
        device=DEV,
        at=at,
        index=index,
        revolutions=revolutions,
        direction=direction,
        on_divider=on_divider,
    )


def test_connect_asks_identity_sets_segments_and_queries() -> None:
    interpreter = make(segments=19)
    assert interpreter.take_commands() == [Identify(), SetSegments(19), QueryStatus()]
    assert interpreter.take_commands() == []
    bare = BigWheelInterpreter(DEV, silence_timeout=3.0)
    bare.connected(0.0)
    assert bare.take_commands() == [Identify(), QueryStatus()]


def test_a_normal_spin() -> None:
    interpreter = make()
    events = run(
        interpreter,
        (0.1, Version("TBW-1", "1.2", "S9")),
        (0.2, IDLE),
        (1.0, SpinStarted(1, "cw")),
        (1.1, Status("spinning", 54, 1, "cw", 0)),
        (3.0, RevolutionTick(1, 1, 2000)),
        (5.5, RevolutionTick(1, 2, 2500)),
        (8.5, RevolutionTick(1, 3, 3000)),
        (12.5, RevolutionTick(1, 4, 4000)),
        (14.0, Stopped(1, 17, 4, "cw")),
        (14.1, Status("stopped", 54, 1, "cw", 4, 17)),
        (15.0, Status("stopped", 54, 1, "cw", 4, 17)),
    )
    assert events == [
        DeviceAvailable(device=DEV, at=0.1, detail="TBW-1 firmware 1.2 serial S9"),
        WheelSpinStarted(device=DEV, at=1.0, direction="cw"),
        stopped(17, 4, 14.0),
    ]
    assert interpreter.tick_mismatches == 0
    assert interpreter.spinning is None


def test_ticks_are_counted_and_the_sensor_count_wins() -> None:
    interpreter = make()
    run(interpreter, (0, IDLE), (1, SpinStarted(1, "cw")), (2, RevolutionTick(1, 1, 900)))
    assert interpreter.ticks == 1
    # Tick 2 was lost on the line; the sensor counted 3 full turns: a good spin stays good.
    events = run(interpreter, (4, RevolutionTick(1, 3, 1200)), (5, Stopped(1, 5, 3, "cw")))
    assert events == [stopped(5, 3, 5)]
    assert interpreter.tick_mismatches == 1


def test_divider_short_spin_and_wrong_direction_are_data() -> None:
    interpreter = make()
    events = run(
        interpreter,
        (0, IDLE),
        (1, SpinStarted(1, "cw")),
        (9, StoppedOnDivider(1, 53, 0, 4, "cw")),
        (20, SpinStarted(2, "cw")),
        (25, Stopped(2, 8, 2, "cw")),
        (40, SpinStarted(3, "ccw")),
        (48, Stopped(3, 60, 5, "ccw")),  # beyond a 54-segment layout: the engine judges
    )
    assert game(events)[1] == stopped(53, 4, 9, on_divider=True)
    assert game(events)[3] == stopped(8, 2, 25)
    assert game(events)[4] == WheelSpinStarted(device=DEV, at=40, direction="ccw")
    assert game(events)[5] == stopped(60, 5, 48, direction="ccw")


def test_each_spin_is_reported_once() -> None:
    interpreter = make()
    events = run(
        interpreter,
        (0, IDLE),
        (1, SpinStarted(1, "cw")),
        (1.5, SpinStarted(1, "cw")),
        (1.6, Status("spinning", 54, 1, "cw", 0)),
        (9, Stopped(1, 3, 3, "cw")),
        (9.1, Stopped(1, 3, 3, "cw")),
        (9.2, Status("stopped", 54, 1, "cw", 3, 3)),
        (9.3, SpinStarted(1, "cw")),
    )
    assert [type(e) for e in game(events)] == [WheelSpinStarted, WheelStopped]


def test_a_reversal_restarts_the_count_without_a_new_start() -> None:
    # The 19-sector wheel: wound counter-clockwise, then spun clockwise (rule book 5.4).
    interpreter = make(segments=19)
    events = run(
        interpreter,
        (0, Status("idle", 19, 0)),
        (1, SpinStarted(1, "ccw")),
        (2, RevolutionTick(1, 1, 1000)),
        (3, SpinStarted(1, "cw")),
    )
    assert game(events) == [WheelSpinStarted(device=DEV, at=1, direction="ccw")]
    assert interpreter.ticks == 0
    events = run(interpreter, (5, RevolutionTick(1, 1, 1000)), (9, Stopped(1, 4, 1, "cw")))
    assert events == [stopped(4, 1, 9)]
    assert interpreter.tick_mismatches == 0


def test_lost_start_is_recovered_from_a_tick_a_stop_or_a_status() -> None:
    interpreter = make()
    events = run(interpreter, (0, IDLE), (3, RevolutionTick(1, 1, 2000)))
    assert game(events) == [WheelSpinStarted(device=DEV, at=3, direction=None)]
    events = run(interpreter, (9, Stopped(1, 2, 3, "cw")), (20, Stopped(2, 7, 4, "ccw")))
    assert game(events) == [
        stopped(2, 3, 9),
        WheelSpinStarted(device=DEV, at=20, direction="ccw"),
        stopped(7, 4, 20, direction="ccw"),
    ]
    events = run(interpreter, (30, Status("spinning", 54, 3, "cw", 1)))
    assert events == [WheelSpinStarted(device=DEV, at=30, direction="cw")]


def test_lost_stop_is_recovered_from_the_status_level() -> None:
    interpreter = make()
    run(interpreter, (0, IDLE), (1, SpinStarted(1, "cw")))
    events = run(interpreter, (12, Status("stopped", 54, 1, "cw", 5, (20, 21))))
    assert events == [stopped(20, 5, 12, on_divider=True)]
    assert run(interpreter, (12.5, Stopped(1, 20, 5, "cw"))) == []


def test_a_stop_seen_only_as_history_is_not_reported() -> None:
    interpreter = make()
    assert game(run(interpreter, (0, Status("stopped", 54, 7, "cw", 4, 3)))) == []
    # ... and its late STP (a repeat) is not either; the next spin is.
    assert run(interpreter, (0.5, Stopped(7, 3, 4, "cw"))) == []
    assert game(run(interpreter, (5, SpinStarted(8, "cw")))) != []


def test_a_spin_in_progress_when_we_connect_is_announced() -> None:
    interpreter = make()
    events = run(interpreter, (0, Status("spinning", 54, 4, "ccw", 2)))
    assert game(events) == [WheelSpinStarted(device=DEV, at=0, direction="ccw")]


def test_power_cycle_restarts_spin_numbers() -> None:
    interpreter = make()
    run(interpreter, (0, IDLE), (1, SpinStarted(1, "cw")), (9, Stopped(1, 2, 3, "cw")))
    run(interpreter, (30, Status("idle", 54, 0)))
    events = run(interpreter, (31, SpinStarted(1, "cw")), (40, Stopped(1, 9, 4, "cw")))
    assert [type(e) for e in game(events)] == [WheelSpinStarted, WheelStopped]


def test_reconnect_keeps_the_spin_and_finishes_it_from_the_status() -> None:
    interpreter = make()
    run(interpreter, (0, IDLE), (1, SpinStarted(1, "cw")))
    assert interpreter.connection_lost(3) == []
    interpreter.connected(6)
    events = run(interpreter, (6.5, Status("stopped", 54, 1, "cw", 4, 11)))
    assert events == [DeviceAvailable(device=DEV, at=6.5), stopped(11, 4, 6.5)]


def test_faults_raised_and_cleared_once() -> None:
    interpreter = make()
    events = run(
        interpreter,
        (0, IDLE),
        (1, Fault("IDX", "no mark")),
        (1.1, Fault("IDX", "no mark")),
        (2, Status("idle", 54, 0, faults=("IDX",))),
        (3, FaultCleared("IDX")),
        (3.1, FaultCleared("IDX")),
        (4, IDLE),
    )
    faults = [e for e in events if isinstance(e, DeviceFaultRaised | DeviceFaultCleared)]
    assert faults == [
        DeviceFaultRaised(device=DEV, at=1, code="bigwheel_index_sensor", detail="no mark"),
        DeviceFaultCleared(device=DEV, at=3, code="bigwheel_index_sensor"),
    ]


def test_faults_reconcile_against_the_status() -> None:
    interpreter = make()
    events = run(interpreter, (0, Status("idle", 54, 0, faults=("MOT", "ENC"))))
    raised = [e.code for e in events if isinstance(e, DeviceFaultRaised)]
    assert raised == ["bigwheel_motor", "bigwheel_encoder"]
    events = run(interpreter, (1, Status("idle", 54, 0, faults=("ENC",))))  # lost FCL,MOT
    assert events == [DeviceFaultCleared(device=DEV, at=1, code="bigwheel_motor")]
    assert interpreter.active_faults == {"bigwheel_encoder"}


def test_fault_codes() -> None:
    assert fault_code("IDX") == "bigwheel_index_sensor"
    assert fault_code("ENC") == "bigwheel_encoder"
    assert fault_code("PTR") == "bigwheel_pointer"
    assert fault_code("MOT") == "bigwheel_motor"
    assert fault_code("XYZ") == "bigwheel_fault_xyz"


def test_wrong_segment_count_is_latched_and_retried_at_rest() -> None:
    interpreter = make(segments=54)
    interpreter.take_commands()
    events = run(interpreter, (1, Status("spinning", 19, 1, "cw", 0)))
    assert [e.code for e in events if isinstance(e, DeviceFaultRaised)] == [FAULT_SEGMENT_COUNT]
    assert interpreter.take_commands() == []  # spinning: SEG would be refused
    run(interpreter, (SEGMENT_RETRY + 1, Status("stopped", 19, 1, "cw", 3, 2)))
    assert interpreter.take_commands() == [SetSegments(54)]
    run(interpreter, (SEGMENT_RETRY + 2, Ack("SEG")), (SEGMENT_RETRY + 3, IDLE))
    assert interpreter.active_faults == frozenset()
    assert interpreter.last_reply == Ack("SEG")


def test_silence_and_back() -> None:
    interpreter = make(silence=3.0)
    assert interpreter.tick(2.9) == []
    assert interpreter.tick(3.0) == [
        DeviceUnavailable(device=DEV, at=3.0, reason="silent", detail="no valid sentence for 3.0 s")
    ]
    assert interpreter.tick(10) == []  # once
    # Garbage is not a sign of life.
    assert interpreter.feed(DecodeError("garbage", b"x"), 11) == []
    assert interpreter.feed(IDLE, 12) == [DeviceAvailable(device=DEV, at=12)]
    assert interpreter.tick(14.9) == []
    assert isinstance(interpreter.tick(15.0)[0], DeviceUnavailable)


def test_heartbeats_keep_it_available() -> None:
    interpreter = make(silence=3.0)
    for second in range(20):
        interpreter.feed(IDLE, float(second))
        assert interpreter.tick(second + 0.9) == []


def test_a_stop_the_heartbeat_contradicts_is_latched_until_the_next_spin() -> None:
    interpreter = make()
    run(interpreter, (0, IDLE), (1, SpinStarted(1, "cw")), (9, Stopped(1, 12, 4, "cw")))
    assert run(interpreter, (9.5, Status("stopped", 54, 1, "cw", 4, 12))) == []
    events = run(interpreter, (10, Status("stopped", 54, 1, "cw", 4, 13)))
    assert [e.code for e in events if isinstance(e, DeviceFaultRaised)] == [FAULT_RESULT_MISMATCH]
    assert run(interpreter, (11, Status("stopped", 54, 1, "cw", 4, 13))) == []  # once
    events = run(interpreter, (20, SpinStarted(2, "cw")))
    assert events == [
        DeviceFaultCleared(device=DEV, at=20, code=FAULT_RESULT_MISMATCH),
        WheelSpinStarted(device=DEV, at=20, direction="cw"),
    ]
