"""SimDiceStudio against the production codec (host side): the studio must say exactly what the
driver reads. Most tests drive the I/O-free model with passed-in times; the service and CLI tests
run it on a real Mosquitto started by the fixture."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tablectl.controller.tools.cli import main as tablectl_main
from tablectl.drivers.codec import DecodeError
from tablectl.drivers.dice_mqtt.messages import (
    CameraShape,
    DetectRequest,
    DetectResult,
    Shake,
    ShakerShape,
    ShakerStatus,
    StateQuery,
    StudioCodec,
    StudioShape,
)
from tablectl.drivers.transports.mqtt import MqttLink
from tablectl.drivers.transports.pubsub import BrokerEndpoint, TopicMessage
from tablectl.simulators.dice_studio import FaultSpec, SimDiceStudio, StudioService
from tablectl.simulators.errors import SimulatorError
from tests.support.mosquitto import MosquittoProcess
from tests.support.mqtt import Subscriber
from tests.support.waiting import wait_until

HOST = StudioCodec()
"""The host's side of the default wiring: how the driver reads what the studio says."""


def ask(
    model: SimDiceStudio, command: StateQuery | Shake | DetectRequest, at: float
) -> list[object]:
    return heard(model.receive(*HOST.encode(command), at))


def heard(messages: list[TopicMessage]) -> list[object]:
    return [HOST.decode(m.topic, m.payload) for m in messages]


def run(
    model: SimDiceStudio, start: float, end: float, step: float = 0.01
) -> list[tuple[float, object]]:
    """Advance ``model`` from ``start`` to ``end``; what it says, with times."""
    out: list[tuple[float, object]] = []
    t = start
    while t < end:
        t = round(min(t + step, end), 6)
        out += [(t, m) for m in heard(model.advance(t))]
    return out


def words(timed: list[tuple[float, object]]) -> list[str]:
    return [m.word for _, m in timed if isinstance(m, ShakerStatus)]


S0, S1, S2 = (
    ShakerStatus("S0", "idle"),
    ShakerStatus("S1", "shaking"),
    ShakerStatus("S2", "accepted"),
)


# --- the shaker -----------------------------------------------------------------------------------


def test_the_shaker_answers_queries_and_shakes_for_the_commanded_time() -> None:
    model = SimDiceStudio(seed=1)
    assert ask(model, StateQuery(), 0.0) == [S0]
    assert ask(model, Shake(0, 6.0), 1.0) == [S2]
    timed = run(model, 1.0, 8.0)
    assert [(t, m.word) for t, m in timed] == [(1.2, "S1"), (7.2, "S0")]  # type: ignore[attr-defined]
    assert len(model.results) == 1
    assert all(1 <= d <= 6 for d in model.results[0])
    assert len(model.results[0]) == 3


def test_a_command_while_busy_is_answered_with_the_current_word_and_ignored() -> None:
    model = SimDiceStudio()
    ask(model, Shake(0, 6.0), 0.0)
    run(model, 0.0, 1.0)
    assert ask(model, Shake(0, 6.0), 1.0) == [S1]
    assert ask(model, StateQuery(), 1.1) == [S1]
    run(model, 1.0, 10.0)
    assert model.shaker.shakes == 1


def test_speed_divides_every_duration() -> None:
    model = SimDiceStudio(speed=10)
    ask(model, Shake(0, 6.0), 0.0)
    assert [t for t, _ in run(model, 0.0, 1.0)] == [0.02, 0.62]


def test_the_dice_depend_only_on_the_seed() -> None:
    def results(seed: int) -> list[tuple[int, ...]]:
        model = SimDiceStudio(seed=seed, dice=2)
        for n in range(5):
            ask(model, Shake(0, 1.0), n * 10.0)
            run(model, n * 10.0, n * 10.0 + 2, step=0.5)
        return model.results

    assert results(3) == results(3)
    assert results(3) != results(4)
    assert all(len(r) == 2 for r in results(3))


def test_motion_fault_aborts_the_shake_and_clears_later() -> None:
    model = SimDiceStudio(faults=[FaultSpec("motion_fault", 1, 2.0)])
    ask(model, Shake(0, 6.0), 0.0)
    timed = run(model, 0.0, 10.0)
    assert [(t, m.word) for t, m in timed] == [(0.2, "S1"), (3.2, "S90"), (5.2, "S0")]  # type: ignore[attr-defined]
    assert model.results == []  # no dice from an aborted shake


def test_garbage_comes_with_the_shake_command() -> None:
    model = SimDiceStudio(faults=[FaultSpec("garbage", 1)])
    said = ask(model, Shake(0, 6.0), 0.0)
    assert said[0] == S2
    assert isinstance(said[1], DecodeError)


# --- the camera -----------------------------------------------------------------------------------


def shaken(model: SimDiceStudio, shakes: int = 1) -> float:
    """``shakes`` shakes of 1 s, one after the other; the time after the last."""
    t = 0.0
    for _ in range(shakes):
        ask(model, Shake(0, 1.0), t)
        run(model, t, t + 1.5)
        t += 1.5
    return t


def test_the_camera_answers_after_its_delay_with_the_dice_at_rest() -> None:
    model = SimDiceStudio(seed=2, camera_delay=0.5)
    t = shaken(model)
    assert ask(model, DetectRequest("r-1"), t) == []
    assert run(model, t, t + 1.0) == [(t + 0.5, DetectResult("r-1", model.results[0], 0))]


@pytest.mark.parametrize(("kind", "err"), [("unreadable", -1), ("cocked", -2), ("off_table", -4)])
def test_failed_reads_carry_the_shapes_error_number(kind: str, err: int) -> None:
    model = SimDiceStudio(faults=[FaultSpec(kind, 2)])
    t = shaken(model)
    ask(model, DetectRequest("r-1"), t)
    assert [m for _, m in run(model, t, t + 1)] == [DetectResult("r-1", model.results[0], 0)]
    t = shaken(model, 1) + t
    ask(model, DetectRequest("r-2"), t)
    assert [m for _, m in run(model, t, t + 1)] == [DetectResult("r-2", None, err)]


def test_another_error_table_gives_its_own_numbers() -> None:
    shape = StudioShape(camera=CameraShape(errors={-7: "die_cocked", -8: "die_off_table"}))
    model = SimDiceStudio(shape, faults=[FaultSpec("cocked", 1)])
    t = shaken(model)
    answer = model.receive(*StudioCodec(shape).encode(DetectRequest("r")), t)
    assert answer == []
    (said,) = model.advance(t + 1)
    assert json.loads(said.payload)["arg"] == {"round_id": "r", "res": None, "err": -7}
    with pytest.raises(SimulatorError, match="no number for die_off_table"):
        SimDiceStudio(
            StudioShape(camera=CameraShape(errors={-1: "dice_unreadable"})),
            faults=[FaultSpec("off_table", 1)],
        )


def test_silence_ignores_reads_for_a_while() -> None:
    model = SimDiceStudio(faults=[FaultSpec("silence", 1, 5.0)])
    t = shaken(model)
    ask(model, DetectRequest("r"), t)
    ask(model, DetectRequest("r"), t + 4.9)
    assert run(model, t, t + 4.95) == []
    ask(model, DetectRequest("r"), t + 5.0)
    assert [m for _, m in run(model, t + 5.0, t + 6.0)] == [DetectResult("r", model.results[0], 0)]
    assert model.camera.ignored == 2


def test_duplicate_results_and_garbage_json() -> None:
    model = SimDiceStudio(faults=[FaultSpec("duplicate_result", 1), FaultSpec("garbage", 1)])
    t = shaken(model)
    ask(model, DetectRequest("r"), t)
    said = [m for _, m in run(model, t, t + 1)]
    result = DetectResult("r", model.results[0], 0)
    assert isinstance(said[0], DecodeError)
    assert said[1:] == [result, result]


# --- the studio on and off the broker ------------------------------------------------------------


def test_disconnect_takes_the_studio_off_the_broker_and_loses_what_it_says() -> None:
    model = SimDiceStudio(faults=[FaultSpec("disconnect", 1, 3.0)])
    ask(model, Shake(0, 2.0), 0.0)
    assert [m for _, m in run(model, 0.0, 0.25)] == [S1]  # said just before it drops
    assert model.offline(0.3)
    assert model.offline_until == pytest.approx(3.2)
    assert run(model, 0.25, 3.1) == []  # the S0 at 2.2 is lost
    assert model.lost == 1
    assert not model.offline(3.3)
    assert ask(model, StateQuery(), 3.3) == [S0]


def test_what_the_studio_says_does_not_depend_on_how_often_it_is_advanced() -> None:
    def played(step: float) -> tuple[list[object], int, int]:
        faults = [FaultSpec("disconnect", 1, 3.0), FaultSpec("duplicate_result", 1)]
        model = SimDiceStudio(seed=5, faults=faults)
        ask(model, Shake(0, 2.0), 0.0)
        said = [m for _, m in run(model, 0.0, 10.0, step=step)]
        ask(model, DetectRequest("r"), 10.0)
        said += [m for _, m in run(model, 10.0, 12.0, step=step)]
        return said, model.lost, model.drops

    fine = played(0.01)
    assert fine == played(5.0)  # one call covers the S1, the drop and the lost S0
    assert fine[1:] == (1, 1)


def test_commands_not_in_the_shape_are_counted() -> None:
    model = SimDiceStudio()
    assert model.receive("studio/shaker/listens", b"/reboot", 0.0) == []
    assert model.receive("studio/camera/command", b"{", 0.0) == []
    assert model.receive("elsewhere", b"/state", 0.0) == []
    assert model.decode_errors == 2


def test_another_studios_shapes_are_spoken() -> None:
    shape = StudioShape(
        ShakerShape(
            command_topic="t/listens",
            status_topic="t/says",
            status_words={"OK": "idle", "GO": "shaking", "ACK": "accepted", "ERR": "motion_fault"},
            shake_command="SHAKE {duration}",
        )
    )
    model = SimDiceStudio(shape)
    codec = StudioCodec(shape)
    said = model.receive(*codec.encode(Shake(0, 1.0)), 0.0)
    assert [codec.decode(m.topic, m.payload) for m in said] == [ShakerStatus("ACK", "accepted")]
    assert model.topics == ("t/listens", "studio/camera/command")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"dice": 0}, "dice must be 1-6"),
        ({"speed": 0.0}, "speed must be"),
        ({"faults": [FaultSpec("garbage", 1), FaultSpec("garbage", 1)]}, "two garbage faults"),
    ],
)
def test_impossible_settings(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SimulatorError, match=message):
        SimDiceStudio(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spec", "message"),
    [("boom@1", "unknown fault kind"), ("cocked@1=2", "takes no value"), ("silence@0", ">= 1")],
)
def test_fault_specs_are_checked(spec: str, message: str) -> None:
    with pytest.raises(SimulatorError, match=message):
        FaultSpec.from_spec(spec)


# --- on a real broker -----------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def host_link(broker: MosquittoProcess) -> AsyncIterator[MqttLink]:
    """The production link, publishing only: the test plays the host."""
    link = MqttLink(BrokerEndpoint(broker.host, broker.port), [])
    await link.open()
    try:
        yield link
    finally:
        await link.close()


@pytest.mark.broker
@pytest.mark.timeout(30)
async def test_the_service_plays_both_services_on_a_broker(mosquitto: MosquittoProcess) -> None:
    model = SimDiceStudio(seed=3, speed=20)
    service = StudioService(model, BrokerEndpoint(mosquitto.host, mosquitto.port))
    task = asyncio.create_task(service.run())
    try:
        await wait_until(lambda: service.connected, what="the studio on the broker")
        topics = ["studio/+/says", "studio/+/response"]
        async with (
            Subscriber(mosquitto.host, mosquitto.port, topics) as sub,
            host_link(mosquitto) as link,
        ):
            await link.send(TopicMessage(*HOST.encode(Shake(0, 2.0))))
            await sub.wait_until(
                lambda ms: [m.payload for m in ms] == [b"S2", b"S1", b"S0"], timeout=5
            )
            request = b'{"command":"detect","arg":{"round_id":"x-1"}}'
            await link.send(TopicMessage("studio/camera/command", request))
            answer = await sub.wait_for(lambda m: m.topic == "studio/camera/response", timeout=5)
            assert answer.json() == {
                "response": "result",
                "arg": {"round_id": "x-1", "res": list(model.results[0]), "err": 0},
            }
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def cli(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.dice_studio",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        async with asyncio.timeout(10):
            line = (await proc.stdout.readline()).decode()
        yield proc, line
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


@pytest.mark.broker
@pytest.mark.timeout(30)
async def test_cli_serves_the_broker_with_shapes_and_exits_after_n_shakes(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    shapes = tmp_path / "studio.toml"
    shapes.write_text(
        'id = "dice"\ndriver = "mqtt-dice"\n'
        'shaker_command_topic = "ikg/sicbo/Billy-III/listens"\n'
        'shaker_status_topic = "ikg/sicbo/Billy-III/says"\n'
    )
    args = ("--url", mosquitto.url, "--speed", "50", "--shapes", str(shapes), "--shakes", "1")
    says = "ikg/sicbo/Billy-III/says"
    async with (
        Subscriber(mosquitto.host, mosquitto.port, says) as sub,
        host_link(mosquitto) as link,
        cli(*args) as (proc, line),
    ):
        assert line.split() == ["READY", "mqtt", mosquitto.url]
        shake = b"/cycle/?pattern=0&parameter1=10&parameter2=0&amplitude=0.41&duration=1"
        await link.send(TopicMessage("ikg/sicbo/Billy-III/listens", shake))
        await sub.wait_until(lambda ms: [m.payload for m in ms][-1:] == [b"S0"], timeout=5)
        async with asyncio.timeout(10):
            assert await proc.wait() == 0


def test_help_shows_defaults_and_an_example(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        tablectl_main(["simulate", "dice-studio", "--help"])
    assert info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert "default mqtt://127.0.0.1:1883" in out
    assert "default 3" in out
    assert "tablectl simulate dice-studio --url mqtt://" in out
    assert "unreadable" in out
    assert "duplicate_result" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fault", "boom@1"), b"unknown fault kind"),
        (("--url", "http://x"), b"scheme must be mqtt://"),
        (("--dice", "7"), b"dice must be 1-6"),
        (("--shapes", "/nonexistent/studio.toml"), b"--shapes /nonexistent/studio.toml"),
        (("--username", "u", "--password-file", "/nonexistent"), b"password_file /nonexistent"),
    ],
)
async def test_cli_usage_errors(args: tuple[str, ...], message: bytes) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.dice_studio",
        *args,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert message in err
