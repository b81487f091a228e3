"""Every ``config/scenarios/*.toml`` file, run against the production host code: one case per file.

The file is the test (``config/scenarios/README.md``): it names a device family, the simulator's
options and faults, the production driver's options and the events a correct host reports. Only
real parts run, nothing is mocked:

* clocked families (``ss2``, ``bigwheel``, ``shuffler``, ``drum``): the simulator model on a
  scripted clock, its bytes (frames) decoded by the production decoder and turned into events by
  the production interpreter, whose commands (``*R`` after a misspin, ``STAT`` polls, ``SEG``) are
  encoded by the production encoder and fed back to the model, as the driver does. The clock is
  the scenario's, so a run is exact and takes no wall time whatever the machine's load;
* ``shoe``: a shoe has no timing of its own, so it runs for real: the model served on a TCP port
  and read by the production ``SerialShoeDriver`` over ``socket://``.

A failing case prints the reported events in the file's own syntax, ready to compare or paste.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

import pytest

from tablectl.drivers.bigwheel import protocol as bigwheel_protocol
from tablectl.drivers.bigwheel.driver import BigWheelSettings
from tablectl.drivers.bigwheel.interpreter import BigWheelInterpreter
from tablectl.drivers.dice import protocol as dice_protocol
from tablectl.drivers.dice.driver import DiceSettings
from tablectl.drivers.dice.interpreter import DiceInterpreter
from tablectl.drivers.drum import protocol as drum_protocol
from tablectl.drivers.drum.driver import DrumSettings
from tablectl.drivers.drum.interpreter import DrumInterpreter
from tablectl.drivers.events import DeviceAvailable, DeviceEvent, ShoeEmptied
from tablectl.drivers.shoe.driver import SerialShoeDriver
from tablectl.drivers.shuffler import protocol as shuffler_protocol
from tablectl.drivers.shuffler.driver import ShufflerSettings
from tablectl.drivers.shuffler.interpreter import ShufflerInterpreter
from tablectl.drivers.ss2 import protocol as ss2_protocol
from tablectl.drivers.ss2.driver import SS2Settings
from tablectl.drivers.ss2.interpreter import SS2Interpreter
from tablectl.drivers.transports.frames import CanFrame
from tablectl.simulators.bigwheel import SimBigWheel
from tablectl.simulators.chunks import Chunk
from tablectl.simulators.dice import SimDice
from tablectl.simulators.drum import SimDrum
from tablectl.simulators.scenario import FAMILIES, Scenario, ScenarioError, load_scenario
from tablectl.simulators.serve import serve_tcp
from tablectl.simulators.shoe import SimShoe
from tablectl.simulators.shuffler import SimShuffler
from tablectl.simulators.ss2 import SimSS2
from tests.support.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "config" / "scenarios").glob("*.toml"))
DEVICE = "device"

M = TypeVar("M")
C = TypeVar("C")
M_contra = TypeVar("M_contra", contravariant=True)
C_co = TypeVar("C_co", covariant=True)


class _Interpreter(Protocol[M_contra, C_co]):
    """What the serial interpreters share (SS2, big wheel, shuffler)."""

    def feed(self, message: M_contra, now: float) -> list[DeviceEvent]: ...

    def tick(self, now: float) -> list[DeviceEvent]: ...

    def take_commands(self) -> Sequence[C_co]: ...


class _Model(Protocol):
    def advance_chunks(self, now: float) -> list[Chunk]: ...

    def receive(self, data: bytes, now: float) -> bytes: ...


def _host_loop(
    scenario: Scenario,
    model: _Model,
    decode: Callable[[bytes], Iterable[M]],
    interpreter: _Interpreter[M, C],
    encode: Callable[[C], bytes],
    handshake: Iterable[C] = (),
) -> list[DeviceEvent]:
    """What a serial driver does, on the scenario's clock: wheel bytes in at their send time,
    the interpreter's timers every ``step``, its commands out (their replies in at once)."""
    events: list[DeviceEvent] = []

    def hear(data: bytes, at: float) -> None:
        for message in decode(data):
            events.extend(interpreter.feed(message, at))

    def send(commands: Iterable[C], now: float) -> None:
        for command in commands:
            hear(model.receive(encode(command), now), now)

    send(handshake, 0.0)
    now = 0.0
    while now < scenario.seconds:
        now = min(now + scenario.step, scenario.seconds)
        for chunk in model.advance_chunks(now):
            hear(chunk.data, chunk.at)
        events += interpreter.tick(now)
        send(interpreter.take_commands(), now)
    return events


def run_ss2(scenario: Scenario) -> list[DeviceEvent]:
    model, settings = scenario.build(), scenario.host
    assert isinstance(model, SimSS2)
    assert isinstance(settings, SS2Settings)
    handshake = []  # SS2Interpreter.connected: the options the wheel is told on every connect
    if settings.operating_mode is not None:
        handshake.append(ss2_protocol.Command.operating_mode(settings.operating_mode))
    if settings.sensor_stream:
        handshake.append(ss2_protocol.Command.sensor_stream(on=True))
    interpreter = SS2Interpreter(DEVICE, settings)
    decoder = ss2_protocol.Decoder()
    return _host_loop(
        scenario, model, decoder.feed, interpreter, ss2_protocol.encode_command, handshake
    )


def run_bigwheel(scenario: Scenario) -> list[DeviceEvent]:
    model, settings = scenario.build(), scenario.host
    assert isinstance(model, SimBigWheel)
    assert isinstance(settings, BigWheelSettings)
    interpreter = BigWheelInterpreter(
        DEVICE, silence_timeout=settings.silence_timeout, segments=settings.segments
    )
    interpreter.connected(0.0)  # queues the handshake: identify, SEG, status
    decoder = bigwheel_protocol.Decoder()
    return _host_loop(scenario, model, decoder.feed, interpreter, bigwheel_protocol.encode_command)


def run_shuffler(scenario: Scenario) -> list[DeviceEvent]:
    model, settings = scenario.build(), scenario.host
    assert isinstance(model, SimShuffler)
    assert isinstance(settings, ShufflerSettings)
    interpreter = ShufflerInterpreter(
        DEVICE, status_interval=settings.status_interval, missed_polls=settings.missed_polls
    )
    interpreter.connected(0.0)  # queues the handshake: version and status
    codec = shuffler_protocol.REFERENCE_CODEC
    decoder = codec.new_decoder()
    return _host_loop(scenario, model, decoder.feed, interpreter, codec.encode_command)


def run_dice(scenario: Scenario) -> list[DeviceEvent]:
    model, settings = scenario.build(), scenario.host
    assert isinstance(model, SimDice)
    assert isinstance(settings, DiceSettings)
    interpreter = DiceInterpreter(
        DEVICE,
        dice=settings.dice,
        colors=settings.colors,
        poll_interval=settings.poll_interval,
        silence_timeout=settings.silence_timeout,
    )
    interpreter.connected(0.0)  # queues the handshake: identify and status
    decoder = dice_protocol.Decoder()
    return _host_loop(scenario, model, decoder.feed, interpreter, dice_protocol.encode_command)


def run_drum(scenario: Scenario) -> list[DeviceEvent]:
    model, settings = scenario.build(), scenario.host
    assert isinstance(model, SimDrum)
    assert isinstance(settings, DrumSettings)
    interpreter = DrumInterpreter(DEVICE, settings)
    events: list[DeviceEvent] = []

    def hear(frames: list[CanFrame], at: float) -> None:
        for frame in frames:
            message = drum_protocol.decode(frame)
            if not isinstance(message, drum_protocol.DecodeError):
                events.extend(interpreter.feed(message, at))

    hear(model.advance(0.0), 0.0)
    # DrumInterpreter.connected: ask for the state at once, not waiting for the periodic one.
    query = drum_protocol.Command(settings.node_id, drum_protocol.Opcode.QUERY_STATUS)
    hear(model.receive(drum_protocol.encode_command(query), 0.0), 0.0)
    now = 0.0
    while now < scenario.seconds:
        now = min(now + scenario.step, scenario.seconds)
        hear(model.advance(now), now)
        events += interpreter.tick(now)
    return events


async def run_shoe(scenario: Scenario) -> list[DeviceEvent]:
    model = scenario.build()
    assert isinstance(model, SimShoe)
    # Lines served before the driver connected would be lost: the shoe deals on request.
    assert model.rate == 0, f"{scenario.name}: a shoe scenario deals on request (rate = 0)"
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_tcp(model, "127.0.0.1", 0, on_ready=ready.set_result))
    driver = SerialShoeDriver(DEVICE, f"socket://{await ready}", scenario.host)
    events: list[DeviceEvent] = []

    async def host() -> None:
        async for event in driver.events():
            events.append(event)
            if isinstance(event, DeviceAvailable):  # connected: the dealer deals the shoe
                model.request(model.remaining)

    reader = asyncio.create_task(host())
    try:
        await wait_until(
            lambda: any(isinstance(e, ShoeEmptied) for e in events),
            timeout=scenario.seconds,
            what=f"{scenario.name}: the shoe-empty signal",
        )
    finally:
        await driver.aclose()
        for task in (reader, server):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    return events


CLOCKED: dict[str, Callable[[Scenario], list[DeviceEvent]]] = {
    "ss2": run_ss2,
    "bigwheel": run_bigwheel,
    "shuffler": run_shuffler,
    "drum": run_drum,
    "dice": run_dice,
}


def test_there_is_a_scenario_for_every_family() -> None:
    assert {*CLOCKED, "shoe"} == set(FAMILIES)
    assert {load_scenario(path).family.name for path in SCENARIOS} == set(FAMILIES)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
async def test_scenario(path: Path) -> None:
    scenario = load_scenario(path)
    if scenario.family.name == "shoe":
        events = await run_shoe(scenario)
    else:
        events = CLOCKED[scenario.family.name](scenario)
    report = scenario.mismatch(events)
    assert report is None, report


# --- the format is checked strictly ---------------------------------------------------------------

GOOD = """
spec = 1
family = "ss2"
description = "one clean game"
[simulator]
seed = 3
numbers = [17]
faults = ["misspin@2"]
[run]
seconds = 25
[expect]
events = [{type = "WheelReady", spin = 1}]
ignore = ["DeviceAvailable"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "case.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_good_file_loads(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD))
    assert scenario.family.name == "ss2"
    assert scenario.options == {"seed": 3, "numbers": [17]}
    assert [(f.kind, f.at) for f in scenario.faults] == [("misspin", 2)]
    assert isinstance(scenario.host, SS2Settings)
    assert (scenario.seconds, scenario.step) == (25.0, 0.05)
    assert isinstance(scenario.build(), SimSS2)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("spec = 1", "spec = 2"), r"spec: 2 is not supported \(this tablectl reads 1\)"),
        (("spec = 1", ""), "spec: missing; the file must say spec = 1"),
        (("spec = 1", 'spec = "1"'), "spec: '1' is not supported"),
        (('description = "one clean game"', 'comment = "x"'), "unknown key 'comment'"),
        (('family = "ss2"', 'family = "craps"'), "family: 'craps' is unknown; known: bigwheel"),
        (("seed = 3", "sead = 3"), r"\[simulator\]: unknown key 'sead'; known: faults, mode"),
        (("seed = 3", 'seed = "3"'), r"\[simulator\] seed: must be an integer, not '3'"),
        (("numbers = [17]", "numbers = [37]"), r"\[simulator\]: not a roulette number: 37"),
        (('["misspin@2"]', '["wobble@2"]'), "unknown fault kind 'wobble'"),
        (('["misspin@2"]', '["misspin@0"]'), "game must be an integer >= 1"),
        (("seconds = 25", "seconds = 0"), r"\[run\] seconds: must be a number of seconds > 0"),
        (("seconds = 25", "secs = 25"), r"\[run\]: unknown key 'secs'"),
        (("[run]", "[host]\nbaudrate = 0\n[run]"), r"\[host\] \(cammegh-ss2 options\): baudrate"),
        (("[run]", "[host]\nbaud = 9600\n[run]"), r"\[host\] \(cammegh-ss2 options\): baud"),
        (('type = "WheelReady"', 'type = "WheelReddy"'), "type 'WheelReddy' is no event"),
        (("spin = 1}", "wheel = 1}"), r"events\[1\] \(WheelReady\): unknown key 'wheel'"),
        (("events = [", "events = []\nold = ["), r"\[expect\]: unknown key 'old'"),
        (('ignore = ["DeviceAvailable"]', 'ignore = ["Nothing"]'), "'Nothing' is no event type"),
        (("[run]\nseconds = 25", ""), r"\[run\] seconds: missing"),
    ],
)
def test_a_bad_file_is_refused_naming_the_problem(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(ScenarioError, match=message) as raised:
        load_scenario(path)
    assert str(raised.value).startswith(str(path))


def test_unreadable_toml_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match=r"case\.toml"):
        load_scenario(write(tmp_path, "spec = = 1"))
    assert issubclass(ScenarioError, ValueError)


def test_a_mismatch_reports_what_was_reported(tmp_path: Path) -> None:
    scenario = load_scenario(write(tmp_path, GOOD))
    events = run_ss2(scenario)  # 25 s: game 1 opens, launches, closes and settles
    assert scenario.mismatch(events[:2]) is None  # the ignored DeviceAvailable, the WheelReady
    report = scenario.mismatch(events)
    assert report is not None
    assert report.startswith("case.toml: expected 1 events, got 4\nreported:\nevents = [\n")
    assert '    {type = "WheelReady", spin = 1},\n' in report
    assert '    {type = "WheelSettled", number = 17, spin = 1, rotor_direction = "ccw"' in report
    late = scenario.mismatch(events[2:])
    assert late is not None
    assert late.startswith('case.toml: event 1: expected {type = "WheelReady", spin = 1}, got ')
