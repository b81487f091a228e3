"""SimDrum as an I/O-free model (scripted clock, frames decoded by the production codec), its
faults, the model + interpreter path without any bus, and the ``simulate drum`` CLI."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from dataclasses import dataclass
from typing import TypeVar

import pytest

from tablectl.drivers.drum.interpreter import DrumInterpreter
from tablectl.drivers.drum.protocol import (
    Ack,
    AckResult,
    BallReport,
    Command,
    DecodeError,
    DrumMessage,
    DrumState,
    FaultKind,
    FaultReport,
    Heartbeat,
    Opcode,
    TubeFullReport,
    decode,
    encode_command,
)
from tablectl.drivers.events import BallRead, DeviceEvent, DeviceFaultRaised, TubeFull
from tablectl.drivers.transports.frames import CanFrame
from tablectl.simulators.cli import drum as drum_cli
from tablectl.simulators.cli import kit as clikit
from tablectl.simulators.drum import DrawResult, FaultSpec, SimDrum

N = 0x10
M = TypeVar("M", bound=DrumMessage)


class Runner:
    """Drives a model with a scripted clock and keeps everything it sent, decoded."""

    def __init__(self, model: SimDrum) -> None:
        self.model = model
        self.now = 0.0
        self.log: list[tuple[float, DrumMessage | DecodeError]] = []
        self._token = 0
        self._record(model.advance(0.0))

    def _record(self, frames: list[CanFrame]) -> list[DrumMessage | DecodeError]:
        decoded = [decode(f) for f in frames]
        self.log += [(self.now, m) for m in decoded]
        return decoded

    def run(self, seconds: float, step: float = 0.01) -> list[DrumMessage | DecodeError]:
        out: list[DrumMessage | DecodeError] = []
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now = min(end, self.now + step)
            out += self._record(self.model.advance(self.now))
        return out

    def send(self, opcode: Opcode, **kw: int) -> list[DrumMessage | DecodeError]:
        self._token = (self._token + 1) & 0xFF
        frame = encode_command(Command(N, opcode, self._token, **kw))
        return self._record(self.model.receive(frame, self.now))

    def messages(self, kind: type[M]) -> list[M]:
        return [m for _, m in self.log if isinstance(m, kind)]

    def balls(self) -> list[BallReport]:
        return [m for _, m in self.log if isinstance(m, BallReport)]

    def draw(self, count: int, travel: float = 0.1) -> None:
        """Start mixing and release ``count`` balls, waiting for each."""
        assert ack_of(self.send(Opcode.START_MIXING)) is AckResult.OK
        for _ in range(count):
            assert ack_of(self.send(Opcode.RELEASE_BALL)) is AckResult.OK
            self.run(travel)


def ack_of(messages: list[DrumMessage | DecodeError]) -> AckResult:
    acks = [m for m in messages if isinstance(m, Ack)]
    assert len(acks) == 1, messages
    assert messages[0] is acks[0], "the acknowledgement goes first"
    return acks[0].result


def fast(**kw: object) -> SimDrum:
    """Speed 10: a ball travels 0.03 s."""
    return SimDrum(speed=10, **kw)  # type: ignore[arg-type]


# --- the periodic frames -------------------------------------------------------------------------


def test_heartbeats_every_200_ms_from_every_node_and_state_every_second() -> None:
    r = Runner(SimDrum(readers=2))
    r.run(1.0)
    beats = [(t, m.node) for t, m in r.log if isinstance(m, Heartbeat)]
    for node in (N, N + 1, N + 2):
        times = [t for t, n in beats if n == node]
        assert times == pytest.approx([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    states = [t for t, m in r.log if isinstance(m, DrumState)]
    assert states == pytest.approx([0.0, 1.0])


def test_heartbeats_do_not_speed_up_with_the_time_lapse() -> None:
    r = Runner(SimDrum(speed=100))
    r.run(1.0)
    assert len([m for m in r.messages(Heartbeat) if m.node == N]) == 6


def test_same_seed_same_frames() -> None:
    def frames(seed: int) -> list[CanFrame]:
        model = SimDrum(seed=seed, speed=20, auto=True)
        out: list[CanFrame] = []
        for i in range(400):
            out += model.advance(i * 0.01)
        return out

    assert frames(5) == frames(5)
    assert frames(5) != frames(6)


def test_no_frame_is_malformed_in_a_normal_run() -> None:
    r = Runner(fast(auto=True, readers=3))
    r.run(5.0)
    assert not [m for _, m in r.log if isinstance(m, DecodeError)]
    assert r.model.results


# --- a draw by commands ---------------------------------------------------------------------


def test_a_draw_by_host_commands() -> None:
    r = Runner(fast(seed=4, draw=5, balls=36))
    out = r.send(Opcode.START_MIXING)
    assert ack_of(out) is AckResult.OK
    assert isinstance(out[1], DrumState)
    assert out[1].mixing
    assert out[1].air
    for i in range(1, 6):
        out = r.send(Opcode.RELEASE_BALL)
        assert ack_of(out) is AckResult.OK
        assert isinstance(out[1], DrumState)
        assert out[1].gate_open
        # A second release while the ball is on its way is refused.
        assert ack_of(r.send(Opcode.RELEASE_BALL)) is AckResult.REFUSED
        out = r.run(0.05)
        ball = next(m for m in out if isinstance(m, BallReport))
        assert (ball.position, ball.reader, ball.node) == (i, 1, N + 1)
        state = [m for m in out if isinstance(m, DrumState)][-1]
        assert (state.tube_count, state.gate_open) == (i, False)
    assert r.messages(TubeFullReport) == [TubeFullReport(N, 5, 5)]
    assert [b.ball for b in r.balls()] == list(r.model.results[0].balls)
    assert len(set(r.model.results[0].balls)) == 5
    assert all(1 <= b <= 36 for b in r.model.results[0].balls)
    assert [b.seq for b in r.balls()] == [1, 2, 3, 4, 5]
    assert ack_of(r.send(Opcode.RELEASE_BALL)) is AckResult.REFUSED
    out = r.send(Opcode.RETURN_BALLS)
    assert ack_of(out) is AckResult.OK
    assert isinstance(out[1], DrumState)
    assert out[1].tube_count == 0
    # The next draw draws again from all 36 balls.
    r.draw(5, travel=0.05)
    assert r.model.draws_started == 2
    assert len(r.model.results) == 2


def test_query_status_answers_with_the_state() -> None:
    r = Runner(fast())
    out = r.send(Opcode.QUERY_STATUS)
    assert ack_of(out) is AckResult.OK
    assert out[1] == r.model.state()


def test_frames_for_other_nodes_and_garbage_are_not_commands() -> None:
    model = fast()
    model.advance(0.0)
    assert model.receive(encode_command(Command(0x20, Opcode.START_MIXING, 1)), 0.0) == []
    assert model.receive(CanFrame(0x310, b"\x01"), 0.0) == []
    assert model.receive(CanFrame(0x191, bytes.fromhex("1101016205")), 0.0) == []
    assert model.commands == ()
    assert model.ignored_frames == 1


def test_the_automatic_cycle() -> None:
    r = Runner(SimDrum(speed=10, draw=7, auto=True))
    r.run(3.0)
    assert len(r.model.results) >= 1
    first = r.model.results[0]
    assert [b.ball for b in r.balls()][:7] == list(first.balls)
    mixing = [m.mixing for m in r.messages(DrumState)]
    assert True in mixing
    assert mixing[-1] is not None


# --- faults --------------------------------------------------------------------------------------


def test_not_read_ball_passes_unread() -> None:
    r = Runner(fast(draw=3, faults=[FaultSpec("not_read", 1, 2)]))
    r.draw(3)
    result = r.model.results[0]
    assert len(result.balls) == 3
    assert result.reported == (result.balls[0], result.balls[2])
    assert [b.position for b in r.balls()] == [1, 3]
    assert r.messages(TubeFullReport) == [TubeFullReport(N, 3, 3)]


def test_double_read_repeats_the_frame_and_reads_again() -> None:
    r = Runner(fast(draw=2, readers=2, faults=[FaultSpec("double_read", 1, 1)]))
    r.draw(2)
    first, repeat, second, other = r.balls()
    assert repeat == first
    assert (second.ball, second.position, second.reader) == (first.ball, 1, 2)
    assert second.seq != first.seq or second.node != first.node
    assert other.position == 2
    assert r.model.results[0].reported == r.model.results[0].balls


def test_double_read_with_one_reader_uses_a_new_sequence_number() -> None:
    r = Runner(fast(draw=1, faults=[FaultSpec("double_read", 1)]))
    r.draw(1)
    first, repeat, second = r.balls()
    assert repeat == first
    assert second.ball == first.ball
    assert second.seq == first.seq + 1


def test_out_of_range_reads_one_past_the_top() -> None:
    r = Runner(fast(draw=2, balls=42, faults=[FaultSpec("out_of_range", 1, 2)]))
    r.draw(2)
    assert r.balls()[1].ball == 43
    assert r.model.results[0].reported[1] == 43


def test_extra_ball_after_the_tube_is_full() -> None:
    r = Runner(fast(draw=3, faults=[FaultSpec("extra_ball", 1)]))
    r.draw(3)
    r.run(0.1)
    assert [b.position for b in r.balls()] == [1, 2, 3, 4]
    assert len(r.model.results[0].balls) == 4
    assert r.messages(TubeFullReport) == [TubeFullReport(N, 3, 3)]
    assert r.messages(DrumState)[-1].tube_count == 4


def test_blower_fault_stops_mixing_and_clears() -> None:
    r = Runner(fast(faults=[FaultSpec("blower_fault", 1, 1.0)]))
    assert ack_of(r.send(Opcode.START_MIXING)) is AckResult.OK
    r.run(0.05)  # 0.3 drum s at speed 10 = 0.03 s
    assert r.messages(FaultReport) == [FaultReport(N, FaultKind.BLOWER, 0, 1, True)]
    assert not r.model.mixing
    assert FaultKind.BLOWER in r.model.state().faults
    assert ack_of(r.send(Opcode.RELEASE_BALL)) is AckResult.FAULT_ACTIVE
    assert ack_of(r.send(Opcode.START_MIXING)) is AckResult.FAULT_ACTIVE
    assert ack_of(r.send(Opcode.CLEAR_FAULT)) is AckResult.REFUSED
    out = r.send(Opcode.QUERY_STATUS)
    assert FaultReport(N, FaultKind.BLOWER, 0, 1, True) in out
    r.run(0.1)
    assert r.messages(FaultReport)[-1] == FaultReport(N, FaultKind.BLOWER, 0, 0, False)
    assert r.model.mixing  # the host wanted mixing: it resumes
    assert ack_of(r.send(Opcode.CLEAR_FAULT)) is AckResult.OK


def test_reader_silent_stops_its_heartbeats_and_blocks_releases() -> None:
    r = Runner(fast(readers=2, faults=[FaultSpec("reader_silent", 1, 5.0)]))
    r.run(0.1)
    r.send(Opcode.START_MIXING)
    assert ack_of(r.send(Opcode.RELEASE_BALL)) is AckResult.FAULT_ACTIVE
    start = r.now
    r.run(0.6)
    during = [m.node for t, m in r.log if isinstance(m, Heartbeat) and start < t < start + 0.5]
    assert N + 2 not in during
    assert N + 1 in during
    assert N in during
    assert [m.node for m in r.run(0.2) if isinstance(m, Heartbeat)].count(N + 2) == 1
    assert ack_of(r.send(Opcode.RELEASE_BALL)) is AckResult.OK


def test_silence_drops_everything_and_ignores_commands() -> None:
    r = Runner(fast(faults=[FaultSpec("silence", 1, 5.0)]))
    assert ack_of(r.send(Opcode.START_MIXING)) is AckResult.OK
    r.run(0.05)
    quiet = r.run(0.4)
    assert quiet == []
    assert r.model.receive(encode_command(Command(N, Opcode.QUERY_STATUS, 9)), r.now) == []
    assert r.model.ignored_frames == 1
    assert any(isinstance(m, Heartbeat) for m in r.run(0.2))


def test_garbage_burst_decodes_to_errors_only() -> None:
    r = Runner(fast(faults=[FaultSpec("garbage", 1)]))
    out = r.send(Opcode.START_MIXING)
    errors = [m for m in out if isinstance(m, DecodeError)]
    assert len(errors) == 7
    assert ack_of([m for m in out if not isinstance(m, DecodeError)]) is AckResult.OK


def test_faults_apply_to_their_draw_only() -> None:
    r = Runner(fast(draw=2, faults=[FaultSpec("not_read", 2, 1)]))
    r.draw(2)
    r.send(Opcode.RETURN_BALLS)
    r.draw(2)
    assert [len(d.reported) for d in r.model.results] == [2, 1]


# --- model + interpreter, no bus -----------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    node_id: int = N
    readers: int = 2
    heartbeat_timeout: float = 1.0
    balls: int = 42
    first_ball: int = 1


@pytest.mark.parametrize(
    "faults",
    [
        [],
        [FaultSpec("double_read", 1, 3)],
        [FaultSpec("repeat_frame", 1, 1)],
        [FaultSpec("not_read", 1, 4)],
        [FaultSpec("garbage", 1)],
        [FaultSpec("extra_ball", 1)],
    ],
    ids=lambda f: f[0].kind if f else "clean",
)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_interpreter_reports_what_a_correct_host_should(
    faults: list[FaultSpec], seed: int
) -> None:
    model = SimDrum(seed=seed, speed=20, draw=7, readers=2, auto=True, faults=faults)
    interp = DrumInterpreter("drum", Settings())
    events: list[DeviceEvent] = []
    t = 0.0
    while not model.results and t < 10:
        for frame in model.advance(t):
            message = decode(frame)
            if not isinstance(message, DecodeError):
                events += interp.feed(message, t)
        events += interp.tick(t)
        t += 0.01
    (result,) = model.results
    assert isinstance(result, DrawResult)
    assert [e.ball for e in events if isinstance(e, BallRead)] == list(result.reported)
    assert sum(isinstance(e, TubeFull) for e in events) == 1
    assert not [e for e in events if isinstance(e, DeviceFaultRaised)]


# --- fault specs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("not_read@1", FaultSpec("not_read", 1)),
        ("double_read@2=3", FaultSpec("double_read", 2, 3)),
        ("blower_fault@1=2.5", FaultSpec("blower_fault", 1, 2.5)),
        (" extra_ball@4 ", FaultSpec("extra_ball", 4)),
    ],
)
def test_fault_specs_parse(text: str, spec: FaultSpec) -> None:
    assert FaultSpec.from_spec(text) == spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jam@1", "unknown fault kind"),
        ("not_read", "expected KIND@DRAW"),
        ("not_read@x", "not a number"),
        ("not_read@0", "draw must be"),
        ("not_read@1=0", "ball index"),
        ("not_read@1=1.5", "not a number"),
        ("silence@1=0", "seconds must be"),
        ("garbage@1=3", "takes no value"),
    ],
)
def test_bad_fault_specs_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultSpec.from_spec(text)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"speed": 0}, "speed"),
        ({"balls": 101}, "balls"),
        ({"draw": 43}, "draw"),
        ({"readers": 9}, "readers"),
        ({"first_ball": 2}, "first_ball"),
        ({"faults": [FaultSpec("not_read", 1, 8)]}, "ball 8 > draw 7"),
        ({"faults": [FaultSpec("silence", 1), FaultSpec("silence", 1, 2.0)]}, "two silence"),
        ({"balls": 100, "faults": [FaultSpec("out_of_range", 1)]}, "exceeds the protocol"),
        ({"mix_seconds": 0}, "mix_seconds"),
    ],
)
def test_bad_model_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimDrum(**kwargs)  # type: ignore[arg-type]


# --- the CLI -------------------------------------------------------------------------------------


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    drum_cli.add_arguments(parser)
    return parser.parse_args(argv)


def test_cli_defaults_and_flags() -> None:
    args = parse()
    assert (args.interface, args.channel, args.balls, args.draw, args.manual) == (
        "virtual",
        "tablectl-drum",
        42,
        7,
        False,
    )
    args = parse("--channel", "x", "--node-id", "0x20", "--fault", "not_read@1=2", "--manual")
    assert args.node_id == 0x20
    assert args.fault == [FaultSpec("not_read", 1, 2)]
    with pytest.raises(SystemExit):
        parse("--fault", "jam@1")
    with pytest.raises(SystemExit):
        parse("--balls", "0")


async def test_cli_run_until_draws(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--channel", "tablectl-cli-test", "--speed", "50", "--draws", "1", "--draw", "3")
    assert await asyncio.wait_for(drum_cli.run(args), 5) == clikit.EXIT_OK
    assert capsys.readouterr().out == "READY can virtual tablectl-cli-test\n"


async def test_cli_bad_combination_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--balls", "5", "--draw", "7")
    assert await drum_cli.run(args) == clikit.EXIT_USAGE
    assert "draw must be" in capsys.readouterr().err


async def test_cli_absent_bus_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    args = parse("--interface", "socketcan", "--channel", "tablectl-no-such-can9")
    assert await drum_cli.run(args) == clikit.EXIT_ERROR
    assert "tablectl-no-such-can9" in capsys.readouterr().err


def test_cli_as_a_process_prints_ready_and_exits() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tablectl.simulators.cli.drum", "--speed", "50", "--draws", "1"],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "READY can virtual tablectl-drum\n"


@pytest.mark.slow
async def test_cross_process_over_udp_multicast_on_this_host_only() -> None:
    """python-can's ``virtual`` bus is in-process only; ``udp_multicast`` crosses processes.

    TTL 0 (``hop_limit=0``) keeps every datagram on this host. python-can needs ``msgpack`` for
    this interface, which tablectl does not depend on: skipped without it.
    """
    pytest.importorskip("msgpack")
    import random  # noqa: PLC0415 - only this test needs a port

    from tablectl.drivers.drum.driver import DrumDriver  # noqa: PLC0415

    port = random.randint(40000, 49999)
    options = {"hop_limit": 0, "port": port, "fd": False}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.drum",
        "--interface",
        "udp_multicast",
        "--channel",
        "239.74.163.2",
        *[arg for key, value in options.items() for arg in ("--can-option", f"{key}={value}")],
        "--speed",
        "40",
        "--draw",
        "3",
        stdout=asyncio.subprocess.PIPE,
    )
    driver = DrumDriver(
        "drum",
        None,
        {"interface": "udp_multicast", "channel": "239.74.163.2", "can_options": options},
    )
    try:
        assert proc.stdout is not None
        ready = await asyncio.wait_for(proc.stdout.readline(), 10)
        assert ready.startswith(b"READY can udp_multicast")
        reads: list[int] = []
        async with asyncio.timeout(10):
            async for event in driver.events():
                if isinstance(event, BallRead):
                    reads.append(event.ball)
                if isinstance(event, TubeFull):
                    break
        assert len(reads) == 3
    finally:
        await driver.aclose()
        proc.terminate()
        await proc.wait()
