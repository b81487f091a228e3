"""SimBigWheel against the production decoder: the simulator must speak exactly what the driver
reads. Most tests drive the I/O-free model with a synthetic clock (no sleeping); the CLI tests
run the real process at a high ``speed``."""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import pytest

from tablectl.drivers.bigwheel.interpreter import BigWheelInterpreter
from tablectl.drivers.bigwheel.protocol import (
    Ack,
    ClearFault,
    DecodeError,
    Decoder,
    Fault,
    FaultCleared,
    Identify,
    Message,
    Nak,
    QueryStatus,
    RevolutionTick,
    SetSegments,
    SpinStarted,
    Status,
    Stopped,
    StoppedOnDivider,
    Version,
    encode_command,
)
from tablectl.drivers.events import DeviceEvent, DeviceUnavailable, WheelStopped
from tablectl.simulators.bigwheel import FaultSpec, SimBigWheel, SpinResult, from_spec

Timed = list[tuple[float, Message]]


def drive(model: SimBigWheel, end: float, step: float = 0.05, start: float = 0.0) -> Timed:
    """Advance ``model`` from ``start`` to ``end`` and decode everything with send times."""
    decoder = Decoder()
    out: Timed = []
    t = start
    while t < end:
        t = min(t + step, end)
        for chunk in model.advance_chunks(t):
            out.extend((chunk.at, m) for m in decoder.feed(chunk.data))
    return out


def of(kind: type, messages: Timed) -> list[Message]:
    return [m for _, m in messages if isinstance(m, kind)]


def decode(data: bytes) -> list[Message]:
    return Decoder().feed(data)


def test_heartbeat_every_second_from_power_up() -> None:
    model = SimBigWheel(every=100.0)
    out = drive(model, 5.0)
    beats = [(at, m) for at, m in out if isinstance(m, Status)]
    # Power-up is the first advance (0.05); a heartbeat then, and every second after it.
    assert [at for at, _ in beats] == pytest.approx([0.05, 1.05, 2.05, 3.05, 4.05])
    assert {m for _, m in beats} == {Status("idle", 54, 0)}


def test_a_spin_decelerates_and_stops_where_scripted() -> None:
    model = SimBigWheel(seed=7, stops=[17], every=2.0, spins=1)
    out = drive(model, 60.0, step=0.5)
    assert of(SpinStarted, out) == [SpinStarted(1, "cw")]
    ticks = [m for m in of(RevolutionTick, out) if isinstance(m, RevolutionTick)]
    result = model.results[0]
    assert 3 <= result.revolutions <= 6
    assert [t.count for t in ticks] == list(range(1, result.revolutions + 1))
    periods = [t.period_ms for t in ticks]
    assert periods == sorted(periods)  # slowing down
    assert 1000 < periods[0] < 3000
    assert of(Stopped, out) == [Stopped(1, 17, result.revolutions, "cw")]
    assert result == SpinResult(1, 17, result.revolutions, "cw", False)
    last = [m for m in of(Status, out) if isinstance(m, Status)][-1]
    assert last == Status("stopped", 54, 1, "cw", result.revolutions, 17)


def test_status_reports_progress_while_spinning() -> None:
    model = SimBigWheel(seed=2, every=1.0, spins=1)
    spinning = [
        m for m in of(Status, drive(model, 40.0)) if isinstance(m, Status) and m.state == "spinning"
    ]
    assert spinning
    assert all(s.spin == 1 and s.direction == "cw" for s in spinning)
    assert [s.revolutions for s in spinning] == sorted(s.revolutions for s in spinning)


def test_scripted_then_seeded_stops_and_every() -> None:
    model = SimBigWheel(seed=1, stops=[3, 17, 40], every=5.0, spins=5)
    out = drive(model, 300.0, step=0.25)
    assert [r.index for r in model.results][:3] == [3, 17, 40]
    assert len(model.results) == 5
    assert all(0 <= r.index < 54 for r in model.results)
    starts = [at for at, m in out if isinstance(m, SpinStarted)]
    stops = [at for at, m in out if isinstance(m, Stopped)]
    assert starts[0] == pytest.approx(0.25 + 5.0)  # power-up at the first advance
    for stop, start in zip(stops, starts[1:], strict=False):
        assert start - stop == pytest.approx(5.0)


def test_a_hand_spun_wheel_turns_only_when_the_presenter_presses() -> None:
    """A studio host sets the wheel going once the round's RNG has drawn (seed-001 L4339)."""
    model = SimBigWheel(seed=4, stops=[19, 5], every=1.0, by_hand=True)
    beats = of(Status, drive(model, 30.0, step=0.5))
    assert beats  # the sensor is alive ...
    assert model.results == ()  # ... but the wheel does not spin by itself
    assert model.press_spin(30.0)
    assert not model.press_spin(30.5)  # still turning
    out = drive(model, 90.0, step=0.5, start=30.0)
    assert [r.index for r in model.results] == [19]
    assert [at for at, m in out if isinstance(m, SpinStarted)] == [30.0]
    assert model.press_spin(90.0)
    drive(model, 150.0, step=0.5, start=90.0)
    assert [r.index for r in model.results] == [19, 5]


def test_speed_scales_every_duration() -> None:
    slow = SimBigWheel(seed=9, every=2.0, spins=1)
    fast = SimBigWheel(seed=9, every=2.0, spins=1, speed=10.0)
    slow_out, fast_out = drive(slow, 60.0, 0.01), drive(fast, 6.0, 0.001)
    t_slow = next(at for at, m in slow_out if isinstance(m, Stopped))
    t_fast = next(at for at, m in fast_out if isinstance(m, Stopped))
    assert t_fast == pytest.approx(t_slow / 10)
    # Periods are what the sensor measures: wheel milliseconds, whatever the speed.
    assert of(RevolutionTick, slow_out) == of(RevolutionTick, fast_out)


def test_same_seed_same_bytes_whatever_the_step() -> None:
    def run(step: float) -> bytes:
        model = SimBigWheel(seed=11, every=1.0, spins=3, faults=[FaultSpec("garbage", 2)])
        data = b""
        t = 0.0
        while t < 120:
            t += step
            data += model.advance(t)
        return data

    assert run(0.05) == run(0.7)


def test_segments_set_by_the_host() -> None:
    model = SimBigWheel(seed=1, every=100.0)
    model.advance(0.0)
    reply = decode(model.receive(encode_command(SetSegments(19)), 0.5))
    assert reply == [Ack("SEG")]
    assert decode(model.receive(encode_command(QueryStatus()), 0.6)) == [Status("idle", 19, 0)]


def test_segments_refused_while_spinning_and_kept_when_unchanged() -> None:
    model = SimBigWheel(seed=1, every=1.0, stops=[5], spins=1)
    drive(model, 2.0)
    assert model.state == "spinning"
    assert decode(model.receive(encode_command(SetSegments(19)), 2.0)) == [Nak("SEG", "BUSY")]
    drive(model, 60.0, start=2.0)
    assert model.state == "stopped"
    # The driver sends SEG on every connect: the same count must not wipe the result.
    assert decode(model.receive(encode_command(SetSegments(54)), 60.0)) == [Ack("SEG")]
    assert model.state == "stopped"


def test_identify_and_bad_host_sentences() -> None:
    model = SimBigWheel(seed=42)
    assert decode(model.receive(encode_command(Identify()), 0.0)) == [
        Version("TBW-SIM", "1.0.0", "SIM00042")
    ]
    assert decode(model.receive(b"$BHRUN*00\r\n$BWQRY*4E\r\n", 0.1)) == [Nak("?", "TYPE")] * 2
    assert decode(model.receive(b"$BHSEG,200*45\r\n", 0.2)) == [Nak("SEG", "ARG")]
    assert model.ignored_commands == 3
    assert model.segments == 54


def test_divider_stops_on_the_pin_after_the_segment() -> None:
    model = SimBigWheel(seed=3, every=1.0, stops=[53], faults=[FaultSpec("divider", 1)], spins=1)
    out = drive(model, 60.0)
    result = model.results[0]
    assert of(StoppedOnDivider, out) == [StoppedOnDivider(1, 53, 0, result.revolutions, "cw")]
    last = [m for m in of(Status, out) if isinstance(m, Status)][-1]
    assert last.last == (53, 0)


def test_short_spin_and_wrong_direction() -> None:
    faults = [FaultSpec("short_spin", 1, 2), FaultSpec("wrong_direction", 1)]
    model = SimBigWheel(seed=3, every=1.0, stops=[10], faults=faults, spins=1)
    out = drive(model, 60.0)
    assert of(SpinStarted, out) == [SpinStarted(1, "ccw")]
    assert len(of(RevolutionTick, out)) == 2
    assert of(Stopped, out) == [Stopped(1, 10, 2, "ccw")]


def test_sensor_fault_raised_mid_spin_then_cleared_after_the_stop() -> None:
    model = SimBigWheel(seed=3, every=1.0, faults=[FaultSpec("sensor_fault", 1, "PTR")], spins=1)
    out = drive(model, 10.0)
    assert of(Fault, out) == [Fault("PTR", "pointer sensor: position unreadable")]
    assert model.active_faults == ("PTR",)
    assert decode(model.receive(encode_command(ClearFault()), 10.0)) == [Nak("CLR", "COND")]
    out += drive(model, 80.0, start=10.0)
    assert of(FaultCleared, out) == [FaultCleared("PTR")]
    fault_at = next(at for at, m in out if isinstance(m, Fault))
    stop_at = next(at for at, m in out if isinstance(m, Stopped))
    clear_at = next(at for at, m in out if isinstance(m, FaultCleared))
    assert fault_at < stop_at < clear_at
    assert clear_at - stop_at == pytest.approx(2.0)
    assert decode(model.receive(encode_command(ClearFault()), 80.0)) == [Ack("CLR")]


def test_garbage_costs_only_decode_errors() -> None:
    model = SimBigWheel(seed=3, every=1.0, stops=[7], faults=[FaultSpec("garbage", 1)], spins=1)
    out = drive(model, 60.0)
    assert any(isinstance(m, DecodeError) for _, m in out)
    assert of(Stopped, out) == [Stopped(1, 7, model.results[0].revolutions, "cw")]


def test_split_sentences_arrive_in_pieces() -> None:
    model = SimBigWheel(seed=3, every=1.0, stops=[7], faults=[FaultSpec("split", 1)], spins=1)
    chunks = []
    t = 0.0
    while t < 60:
        t += 0.05
        chunks += model.advance_chunks(t)
    assert any(c.partial for c in chunks)
    messages = decode(b"".join(c.data for c in chunks))
    assert not any(isinstance(m, DecodeError) for m in messages)
    assert Stopped(1, 7, model.results[0].revolutions, "cw") in messages


def test_silence_loses_the_stop_and_the_interpreter_recovers_it() -> None:
    model = SimBigWheel(
        seed=3, every=1.0, stops=[9], faults=[FaultSpec("silence", 1, 60.0)], spins=1
    )
    interpreter = BigWheelInterpreter("w", silence_timeout=3.0, segments=54)
    interpreter.connected(0.0)
    decoder = Decoder()
    events: list[DeviceEvent] = []
    heard: list[Message] = []
    t = 0.0
    while t < 80:
        t += 0.1
        for chunk in model.advance_chunks(t):
            for message in decoder.feed(chunk.data):
                heard.append(message)
                events += interpreter.feed(message, chunk.at)
        events += interpreter.tick(t)
    assert not any(isinstance(m, Stopped) for m in heard)  # the STP fell into the silence
    unavailable = [e for e in events if isinstance(e, DeviceUnavailable)]
    assert [e.reason for e in unavailable] == ["silent"]
    stops = [e for e in events if isinstance(e, WheelStopped)]
    assert [(s.index, s.revolutions) for s in stops] == [(9, model.results[0].revolutions)]
    assert stops[0].at > unavailable[0].at


def test_disconnect_window() -> None:
    model = SimBigWheel(seed=3, every=1.0, faults=[FaultSpec("disconnect", 1, 3.0)], spins=1)
    drive(model, 1.5)
    assert not model.link_down(1.5)
    assert model.link_down(2.5)
    assert model.advance(3.0) == b""
    assert model.receive(encode_command(QueryStatus()), 3.0) == b""
    assert not model.link_down(5.1)
    assert decode(model.advance(6.0))


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("short_spin@2", FaultSpec("short_spin", 2)),
        ("short_spin@2=1", FaultSpec("short_spin", 2, 1)),
        ("divider@3", FaultSpec("divider", 3)),
        ("wrong_direction@1", FaultSpec("wrong_direction", 1)),
        ("sensor_fault@1=enc", FaultSpec("sensor_fault", 1, "ENC")),
        ("silence@4=2.5", FaultSpec("silence", 4, 2.5)),
        ("disconnect@1", FaultSpec("disconnect", 1)),
    ],
)
def test_fault_spec_parsing(text: str, spec: FaultSpec) -> None:
    assert from_spec(text) == spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("boom@1", "unknown fault kind"),
        ("divider", "expected KIND@SPIN"),
        ("divider@x", "is not a number"),
        ("divider@0", "spin must be"),
        ("divider@1=2", "takes no value"),
        ("short_spin@1=0", "1-100"),
        ("short_spin@1=2.5", "1-100"),
        ("sensor_fault@1=INDEX", "3 capitals"),
        ("silence@1=-1", "seconds"),
        ("silence@1=x", "is not a number"),
    ],
)
def test_bad_fault_specs(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_spec(text)


def test_model_argument_checks() -> None:
    with pytest.raises(ValueError, match="speed"):
        SimBigWheel(speed=0)
    with pytest.raises(ValueError, match="segments"):
        SimBigWheel(segments=1)
    with pytest.raises(ValueError, match="stop"):
        SimBigWheel(segments=19, stops=[19])
    with pytest.raises(ValueError, match="every"):
        SimBigWheel(every=0)
    with pytest.raises(ValueError, match="revolutions"):
        SimBigWheel(revolutions=(4, 3))
    with pytest.raises(ValueError, match="two divider faults"):
        SimBigWheel(faults=[FaultSpec("divider", 1), FaultSpec("divider", 1)])


# --- the CLI -------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def cli(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.bigwheel",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(5):
            line = (await proc.stdout.readline()).decode()
        yield proc, line
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


async def test_cli_serves_tcp_and_exits_after_n_spins() -> None:
    args = ("--tcp", "127.0.0.1:0", "--speed", "40", "--every", "1", "--stops", "3")
    async with cli(*args, "--fault", "divider@1", "--spins", "1") as (proc, line):
        kind, transport, where = line.split()[0:3]
        assert (kind, transport) == ("READY", "tcp")
        host, port = where.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(encode_command(SetSegments(19)))
        decoder = Decoder()
        out: list[Message] = []
        async with asyncio.timeout(5):
            while not any(isinstance(m, StoppedOnDivider) for m in out):
                out += decoder.feed(await reader.read(1024))
        writer.close()
        assert Ack("SEG") in out
        stop = next(m for m in out if isinstance(m, StoppedOnDivider))
        assert (stop.before, stop.after) == (3, 4)
        async with asyncio.timeout(5):
            assert await proc.wait() == 0


async def test_cli_prints_ready_pty() -> None:
    async with cli("--pty") as (_, line):
        assert line.startswith("READY pty /dev/")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fault", "boom@1"), b"unknown fault kind"),
        (("--segments", "200"), b"segments must be"),
        (("--segments", "19", "--stops", "3,19"), b"stop 19"),
        (("--tcp", "127.0.0.1:0", "--link", "wheel-link"), b"--link needs --pty"),
    ],
)
async def test_cli_usage_errors(args: tuple[str, ...], message: bytes) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.bigwheel",
        *args,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert message in err
