"""Drum interpreter: messages + time → events, with a scripted clock (no I/O)."""

from __future__ import annotations

from dataclasses import dataclass

from tablectl.drivers.drum.interpreter import DrumInterpreter
from tablectl.drivers.drum.protocol import (
    Ack,
    AckResult,
    BallReport,
    Command,
    DrumMessage,
    DrumState,
    FaultKind,
    FaultReport,
    Heartbeat,
    NodeState,
    Opcode,
    TubeFullReport,
)
from tablectl.drivers.events import (
    BallRead,
    DeviceAvailable,
    DeviceEvent,
    DeviceFaultCleared,
    DeviceFaultRaised,
    DeviceUnavailable,
    MixingChanged,
    TubeFull,
)

N = 0x10


@dataclass(frozen=True)
class Settings:
    node_id: int = N
    readers: int = 2
    heartbeat_timeout: float = 1.0
    balls: int = 42
    first_ball: int = 1


class Rig:
    def __init__(self, **kwargs: int | float) -> None:
        self.counts: dict[str, int] = {}
        self.interp = DrumInterpreter("drum", Settings(**kwargs), count=self._count)  # type: ignore[arg-type]

    def _count(self, name: str) -> None:
        self.counts[name] = self.counts.get(name, 0) + 1

    def feed(self, message: DrumMessage, now: float) -> list[DeviceEvent]:
        return self.interp.feed(message, now)

    def alive(self, now: float, readers: int = 2) -> list[DeviceEvent]:
        """One heartbeat round: the controller and every reader."""
        events = self.feed(Heartbeat(N, NodeState.OPERATIONAL, int(now)), now)
        for r in range(1, readers + 1):
            events += self.feed(Heartbeat(N + r, NodeState.OPERATIONAL, int(now)), now)
        return events


def state(count: int = 0, *, mixing: bool = False, capacity: int = 7, **kw: object) -> DrumState:
    return DrumState(N, mixing, mixing, False, count >= capacity, count, capacity, **kw)  # type: ignore[arg-type]


def ball(number: int, position: int, seq: int, reader: int = 1) -> BallReport:
    return BallReport(N + reader, number, reader, position, 95, seq)


def balls(events: list[DeviceEvent]) -> list[int]:
    return [e.ball for e in events if isinstance(e, BallRead)]


def test_first_controller_frame_makes_the_drum_available_once() -> None:
    rig = Rig()
    events = rig.alive(0.0)
    assert events == [DeviceAvailable(device="drum", at=0.0)]
    assert rig.alive(0.2) == []
    assert rig.interp.available


def test_reader_frames_alone_do_not_make_the_drum_available() -> None:
    rig = Rig()
    assert rig.feed(Heartbeat(N + 1, NodeState.OPERATIONAL, 0), 0.0) == []
    assert not rig.interp.available


def test_silence_makes_the_drum_unavailable_then_available_again() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert rig.interp.tick(0.9) == []
    events = rig.interp.tick(1.01)
    assert len(events) == 1
    assert isinstance(events[0], DeviceUnavailable)
    assert events[0].reason == "silent"
    assert rig.interp.tick(5.0) == []  # reported once
    assert rig.alive(5.1) == [DeviceAvailable(device="drum", at=5.1)]


def test_any_controller_frame_counts_as_alive() -> None:
    rig = Rig()
    rig.alive(0.0)
    rig.feed(state(), 0.8)
    rig.feed(Heartbeat(N + 1, NodeState.OPERATIONAL, 1), 1.5)
    rig.feed(Heartbeat(N + 2, NodeState.OPERATIONAL, 1), 1.5)
    assert rig.interp.tick(1.5) == []
    assert isinstance(rig.interp.tick(1.9)[0], DeviceUnavailable)


def test_mixing_changes_are_reported_on_change_only() -> None:
    rig = Rig()
    rig.alive(0.0)
    first = rig.feed(state(), 0.1)
    assert first == [MixingChanged(device="drum", at=0.1, on=False)]
    assert rig.feed(state(), 1.1) == []
    assert rig.feed(state(mixing=True), 1.2) == [MixingChanged(device="drum", at=1.2, on=True)]
    assert rig.feed(state(mixing=True), 2.2) == []
    assert rig.feed(state(mixing=False), 2.3) == [MixingChanged(device="drum", at=2.3, on=False)]


def test_a_draw_of_seven_balls() -> None:
    rig = Rig()
    rig.alive(0.0)
    drawn = [17, 3, 42, 8, 25, 11, 30]
    events: list[DeviceEvent] = []
    for i, number in enumerate(drawn, start=1):
        events += rig.feed(ball(number, i, i), float(i))
        events += rig.feed(state(i, mixing=True), float(i))
    events += rig.feed(TubeFullReport(N, 7, 7), 7.0)
    assert balls(events) == drawn
    reads = [e for e in events if isinstance(e, BallRead)]
    assert [e.position for e in reads] == list(range(1, 8))
    assert all(e.reader == 1 and e.quality == 95 for e in reads)
    assert sum(isinstance(e, TubeFull) for e in events) == 1


def test_a_repeated_frame_is_not_a_second_ball() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert balls(rig.feed(ball(17, 1, 5), 1.0)) == [17]
    assert rig.feed(ball(17, 1, 5), 1.001) == []
    assert rig.counts == {"repeated_frames": 1}


def test_the_same_ball_read_again_at_the_same_position_is_a_reread() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert balls(rig.feed(ball(17, 1, 5), 1.0)) == [17]
    # A new sequence counter (a second reader, or the reader reading it again).
    assert rig.feed(ball(17, 1, 6), 1.1) == []
    assert rig.feed(ball(17, 1, 1, reader=2), 1.2) == []
    assert rig.counts == {"rereads": 2}


def test_the_same_number_at_another_position_is_reported_for_the_engine() -> None:
    rig = Rig()
    rig.alive(0.0)
    events = rig.feed(ball(17, 1, 5), 1.0) + rig.feed(ball(17, 2, 6), 2.0)
    assert balls(events) == [17, 17]


def test_unknown_positions_match_any_position() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert balls(rig.feed(ball(17, 0, 1), 1.0)) == [17]
    assert rig.feed(ball(17, 3, 2), 1.1) == []
    events = rig.feed(ball(18, 0, 3), 1.2)
    assert events == [BallRead(device="drum", at=1.2, ball=18, reader=1, position=None, quality=95)]


def test_an_empty_receiver_starts_a_new_draw() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert balls(rig.feed(ball(17, 1, 1), 1.0)) == [17]
    rig.feed(state(1), 1.0)
    rig.feed(state(0), 2.0)  # balls returned
    assert balls(rig.feed(ball(17, 1, 2), 3.0)) == [17]


def test_a_rebooted_reader_may_reuse_a_sequence_number() -> None:
    rig = Rig()
    rig.alive(100.0)
    assert balls(rig.feed(ball(17, 1, 1), 101.0)) == [17]
    rig.feed(state(0), 102.0)
    rig.feed(Heartbeat(N + 1, NodeState.OPERATIONAL, 0), 103.0)  # uptime went backwards
    assert balls(rig.feed(ball(9, 1, 1), 104.0)) == [9]
    assert rig.counts["reboots"] == 1


def test_out_of_range_balls_are_reported_and_counted() -> None:
    rig = Rig(balls=42)
    rig.alive(0.0)
    assert balls(rig.feed(ball(43, 1, 1), 1.0)) == [43]
    assert balls(rig.feed(ball(0, 2, 2), 1.0)) == [0]
    assert rig.counts == {"out_of_range": 2}
    zero_based = Rig(balls=37, first_ball=0)
    zero_based.alive(0.0)
    zero_based.feed(ball(0, 1, 1), 1.0)
    zero_based.feed(ball(36, 2, 2), 1.0)
    assert zero_based.counts == {}


def test_a_ball_frame_from_the_wrong_node_is_dropped() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert rig.feed(BallReport(N + 2, 17, 1, 1, 90, 1), 1.0) == []
    assert rig.counts == {"reader_mismatch": 1}


def test_frames_of_other_drums_are_ignored() -> None:
    rig = Rig()
    assert rig.feed(Heartbeat(0x20, NodeState.OPERATIONAL, 1), 0.0) == []
    assert rig.feed(BallReport(0x13, 17, 3, 1, 90, 1), 0.0) == []  # reader 3 of a 2-reader drum
    assert rig.counts == {"foreign_frames": 2}


def test_tube_full_once_per_fill() -> None:
    rig = Rig()
    rig.alive(0.0)
    events = rig.feed(TubeFullReport(N, 7, 7), 1.0)
    events += rig.feed(state(7), 1.0)
    events += rig.feed(state(7), 2.0)
    events += rig.feed(TubeFullReport(N, 7, 7), 2.0)
    assert [type(e) for e in events if not isinstance(e, MixingChanged)] == [TubeFull]
    rig.feed(state(0), 3.0)
    assert rig.feed(state(7), 4.0)[-1] == TubeFull(device="drum", at=4.0)


def test_blower_fault_raised_and_cleared_once() -> None:
    rig = Rig()
    rig.alive(0.0)
    rig.feed(state(), 0.0)
    raised = rig.feed(state(faults=frozenset({FaultKind.BLOWER})), 1.0)
    raised += rig.feed(FaultReport(N, FaultKind.BLOWER, 0, 2, True), 1.0)
    raised += rig.feed(state(faults=frozenset({FaultKind.BLOWER})), 2.0)
    assert [type(e) for e in raised] == [DeviceFaultRaised]
    assert isinstance(raised[0], DeviceFaultRaised)
    assert raised[0].code == "drum_blower_fault"
    cleared = rig.feed(FaultReport(N, FaultKind.BLOWER, 0, 0, False), 3.0)
    cleared += rig.feed(state(), 3.0)
    assert cleared == [DeviceFaultCleared(device="drum", at=3.0, code="drum_blower_fault")]


def test_fault_frame_detail_is_kept() -> None:
    rig = Rig()
    rig.alive(0.0)
    (event,) = rig.feed(FaultReport(N, FaultKind.GATE, 0, 9, True), 1.0)
    assert event == DeviceFaultRaised(
        device="drum", at=1.0, code="drum_gate_fault", detail="detail 9"
    )


def test_state_bits_clear_faults_missed_while_disconnected() -> None:
    rig = Rig()
    rig.alive(0.0)
    rig.feed(FaultReport(N + 2, FaultKind.READER, 2, 1, True), 1.0)
    rig.interp.connection_lost(2.0)
    events = rig.alive(5.0) + rig.feed(state(), 5.0)
    assert DeviceFaultCleared(device="drum", at=5.0, code="drum_reader_fault_2") in events
    assert rig.interp.faults.codes == frozenset()


def test_reader_silence_is_a_fault_not_unavailability() -> None:
    rig = Rig()
    rig.alive(0.0)
    for t in (0.2, 0.4, 0.6, 0.8, 1.0):
        rig.feed(Heartbeat(N, NodeState.OPERATIONAL, 1), t)
        rig.feed(Heartbeat(N + 1, NodeState.OPERATIONAL, 1), t)
        assert rig.interp.tick(t) == []
    events = rig.interp.tick(1.01)
    assert events == [
        DeviceFaultRaised(
            device="drum", at=1.01, code="drum_reader_silent_2", detail="no heartbeat for 1 s"
        )
    ]
    assert rig.interp.available
    assert rig.interp.tick(1.3) == []
    back = rig.feed(Heartbeat(N + 2, NodeState.OPERATIONAL, 2), 2.0)
    assert back == [DeviceFaultCleared(device="drum", at=2.0, code="drum_reader_silent_2")]


def test_a_reader_that_never_heartbeats_is_reported_silent() -> None:
    rig = Rig(readers=1)
    rig.feed(Heartbeat(N, NodeState.OPERATIONAL, 0), 0.0)
    rig.feed(Heartbeat(N, NodeState.OPERATIONAL, 0), 0.9)
    assert [e.code for e in rig.interp.tick(1.1) if isinstance(e, DeviceFaultRaised)] == [
        "drum_reader_silent_1"
    ]


def test_readers_are_not_blamed_while_the_whole_drum_is_silent() -> None:
    rig = Rig()
    rig.alive(0.0)
    events = rig.interp.tick(3.0)
    assert [type(e) for e in events] == [DeviceUnavailable]
    assert rig.interp.tick(4.0) == []
    # Back: the readers get a fresh heartbeat_timeout to show up.
    rig.feed(Heartbeat(N, NodeState.OPERATIONAL, 5), 5.0)
    assert rig.interp.tick(5.5) == []


def test_controller_not_operational_is_a_latched_fault() -> None:
    rig = Rig()
    rig.alive(0.0)
    events = rig.feed(Heartbeat(N, NodeState.PRE_OPERATIONAL, 1), 1.0)
    assert events == [
        DeviceFaultRaised(
            device="drum", at=1.0, code="drum_not_operational", detail="node state PRE_OPERATIONAL"
        )
    ]
    assert rig.feed(Heartbeat(N, NodeState.PRE_OPERATIONAL, 1), 1.2) == []
    assert rig.feed(Heartbeat(N, NodeState.OPERATIONAL, 2), 1.4) == [
        DeviceFaultCleared(device="drum", at=1.4, code="drum_not_operational")
    ]


def test_acks_and_commands_produce_no_events() -> None:
    rig = Rig()
    rig.alive(0.0)
    assert rig.feed(Ack(N, Opcode.START_MIXING, 1, AckResult.OK), 1.0) == []
    assert rig.feed(Command(N, Opcode.START_MIXING, 1), 1.0) == []
