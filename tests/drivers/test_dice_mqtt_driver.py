"""The real ``mqtt-dice`` driver against the real studio simulator, through a real Mosquitto.

No mocks: the driver and the simulator each open their own aiomqtt connection to a broker the
fixture started on a free port. Both run on one :class:`ManualClock`, so every timer (betting,
the shake, the camera's delay, backoff) fires when the test moves the clock and never because a
machine was slow: :meth:`Rig.run_until` moves it in small steps, and after each step waits (with
a real-time deadline) until whoever woke up has gone back to waiting on the clock. Timeouts the
scenario does not exercise are set far beyond anything it reaches, so a slow broker can delay a
test but not change its outcome.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypeVar

import aiomqtt
import pytest

import tablectl.drivers.dice_mqtt.driver as driver_module
from tablectl.controller.config import parse_config
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.service.app import build_drivers
from tablectl.drivers.clock import ManualClock
from tablectl.drivers.dice_mqtt.bounded import NOT_AN_OBJECT, NOT_JSON, NOT_UTF8, TOO_DEEP, TOO_LONG
from tablectl.drivers.dice_mqtt.driver import DiceMqttDriver
from tablectl.drivers.errors import DriverConfigError, DriverInitError
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
)
from tablectl.drivers.registry import get_driver_class
from tablectl.drivers.transports.pubsub import BrokerEndpoint
from tablectl.simulators.dice_studio import FAULT_CODES, FaultSpec, SimDiceStudio, StudioService
from tests.support.mosquitto import MosquittoProcess
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.broker, pytest.mark.timeout(60)]

E = TypeVar("E", bound=DeviceEvent)

FAR = 600.0
"""A timeout no scenario reaches on the clock (the settings' upper bound)."""
SETTINGS: dict[str, Any] = {
    "betting_seconds": 3.0,
    "shake_seconds": 2.0,
    "result_seconds": 1.0,
    "result_timeout": FAR,
    "ack_timeout": FAR,
    "status_poll": 1.0,
    "silence_timeout": FAR + 1,
    "reconnect_min_delay": 0.2,
    "reconnect_max_delay": 0.5,
}


class SteppedClock(ManualClock):
    """A manual clock that counts its sleeps: a sleep after a step means the sleeper has done
    what the step woke it for and is waiting again."""

    def __init__(self, start: float = 0.0) -> None:
        super().__init__(start)
        self.sleeps = 0

    async def sleep(self, delay: float) -> None:
        self.sleeps += 1
        await super().sleep(delay)


class Rig:
    """The studio simulator and the driver on one broker and one clock; see the module doc."""

    def __init__(self, broker: MosquittoProcess, model: SimDiceStudio, **options: Any) -> None:
        self.clock = SteppedClock(1_000.0)
        self.model = model
        self.endpoint = BrokerEndpoint(broker.host, broker.port)
        self.service = StudioService(model, self.endpoint, clock=self.clock, reconnect_delay=0.5)
        self.driver = DiceMqttDriver(
            "dice", None, {**SETTINGS, **options}, clock=self.clock, table_broker=self.endpoint
        )
        self.events: list[DeviceEvent] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self) -> None:
        self._tasks.append(asyncio.create_task(self.service.run()))
        await wait_until(lambda: self.service.connected, what="the studio on the broker")
        self._tasks.append(asyncio.create_task(self._consume()))

    async def _consume(self) -> None:
        async for event in self.driver.events():
            self.events.append(event)

    async def close(self) -> None:
        await self.driver.aclose()
        studio, *driver = self._tasks
        studio.cancel()
        async with asyncio.timeout(5):
            await asyncio.gather(*driver)
            await asyncio.gather(studio, return_exceptions=True)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]

    def _settled(self, predicate: Callable[[], object], sleeps: int) -> bool:
        return bool(predicate()) or self.clock.sleeps > sleeps

    async def run_until(
        self, predicate: Callable[[], object], what: str, step: float = 0.1
    ) -> None:
        """Move the clock by ``step`` until ``predicate()`` holds (a 20 s real-time deadline)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 20.0
        while not predicate():
            if loop.time() > deadline:
                raise AssertionError(f"timed out waiting for {what}; events: {self.events}")
            woken = [p for p in self.clock.pending if p <= step]
            before = self.clock.sleeps
            self.clock.advance(step)
            if woken:
                # Pacing only, never the outcome: a woken sleeper may go on to wait for a message
                # rather than for the clock (the studio with nothing planned), so this gives up
                # quietly after a moment and the loop steps again.
                with contextlib.suppress(AssertionError):
                    await wait_until(
                        functools.partial(self._settled, predicate, before),
                        timeout=0.5,
                        what=f"the clock's sleepers to settle ({what})",
                    )
            else:
                await asyncio.sleep(0)  # nothing was due: let arrived messages be handled


@contextlib.asynccontextmanager
async def rig(
    mosquitto: MosquittoProcess, model: SimDiceStudio, **options: Any
) -> AsyncIterator[Rig]:
    running = Rig(mosquitto, model, **options)
    await running.start()
    try:
        yield running
    finally:
        await running.close()


async def test_a_round_through_a_real_broker(mosquitto: MosquittoProcess) -> None:
    model = SimDiceStudio(seed=7)
    async with rig(mosquitto, model, reader="cam-1", colors=["red", "green", "blue"]) as r:
        await r.run_until(lambda: r.of(DiceRead), "the first result")
        cycle = [type(e) for e in r.events if not isinstance(e, DeviceFaultRaised)]
        assert cycle == [DeviceAvailable, BettingOpened, NoMoreBets, DiceRollStarted, DiceRead]
        read = r.of(DiceRead)[0]
        assert read.dice == model.results[0]
        assert (read.reader, read.colors) == ("cam-1", ("red", "green", "blue"))
        assert model.answers[0].round_id.startswith("dice-")
        await r.run_until(lambda: len(r.of(DiceRead)) == 2, "the second result")
        assert [e.dice for e in r.of(DiceRead)] == model.results[:2]
        assert r.driver.counters.get("decode_errors", 0) == 0


@pytest.mark.parametrize("kind", sorted(FAULT_CODES))
async def test_a_failed_read_is_its_stable_code_and_a_reroll(
    mosquitto: MosquittoProcess, kind: str
) -> None:
    model = SimDiceStudio(seed=3, faults=[FaultSpec(kind, 1)])
    async with rig(mosquitto, model) as r:
        await r.run_until(lambda: r.of(DiceRead), "the result of the re-roll")
        (invalid,) = r.of(DiceRollInvalid)
        assert invalid.code == FAULT_CODES[kind]
        assert len(r.of(BettingOpened)) == len(r.of(NoMoreBets)) == 1  # bets stood
        assert len(r.of(DiceRollStarted)) == 2
        assert r.of(DiceRead)[0].dice == model.results[1]


async def test_a_motion_fault_is_latched_until_the_shaker_is_idle(
    mosquitto: MosquittoProcess,
) -> None:
    model = SimDiceStudio(seed=4, faults=[FaultSpec("motion_fault", 1, 1.0)])
    async with rig(mosquitto, model) as r:
        await r.run_until(lambda: r.of(DiceRead), "the result after the fault")
        assert [e.code for e in r.of(DeviceFaultRaised)] == ["dice_motion_fault"]
        assert [e.code for e in r.of(DeviceFaultCleared)] == ["dice_motion_fault"]
        order = [type(e) for e in r.events if not isinstance(e, DeviceAvailable | BettingOpened)]
        assert order == [
            NoMoreBets,
            DiceRollStarted,
            DeviceFaultRaised,
            DeviceFaultCleared,
            DiceRollStarted,  # shaken again
            DiceRead,
        ]
        # The aborted shake left no dice; the result is the second shake's.
        assert model.shaker.shakes == 2
        assert r.of(DiceRead)[0].dice == model.results[0]


async def test_a_silent_camera_raises_reader_silent_and_is_asked_again(
    mosquitto: MosquittoProcess,
) -> None:
    model = SimDiceStudio(seed=5, faults=[FaultSpec("silence", 1, 2.5)])
    async with rig(mosquitto, model, result_timeout=1.0) as r:
        await r.run_until(lambda: r.of(DiceRead), "the result after the silence")
        assert [e.code for e in r.of(DeviceFaultRaised)] == ["dice_reader_silent"]
        assert [e.code for e in r.of(DeviceFaultCleared)] == ["dice_reader_silent"]
        assert r.driver.counters["detect_retries"] >= 2
        assert model.camera.ignored >= 1
        assert r.of(DiceRead)[0].dice == model.results[0]


async def test_duplicate_answers_and_garbage_are_dropped_and_counted(
    mosquitto: MosquittoProcess,
) -> None:
    faults = [FaultSpec("duplicate_result", 1), FaultSpec("garbage", 1)]
    model = SimDiceStudio(seed=6, faults=faults)
    async with rig(mosquitto, model) as r:
        await r.run_until(
            lambda: r.of(DiceRead) and r.driver.counters.get("duplicate_results"),
            "the result and its duplicate",
        )
        assert len(r.of(DiceRead)) == 1
        assert r.of(DiceRead)[0].dice == model.results[0]
        assert r.driver.counters["decode_errors"] == 2  # the status word and the JSON
        assert r.driver.counters["duplicate_results"] == 1


async def test_the_studio_dropping_off_the_broker_mid_shake(mosquitto: MosquittoProcess) -> None:
    # Off for longer than the 2 s shake: the shaker's S0 is said while the studio is away.
    model = SimDiceStudio(seed=8, faults=[FaultSpec("disconnect", 1, 3.0)])
    async with rig(mosquitto, model) as r:
        await r.run_until(lambda: r.of(DiceRead), "the result after the studio is back")
        assert r.service.connections == 2
        assert model.lost >= 1  # its S0 went nowhere; a poll found the shaker idle
        assert len(r.of(DiceRollStarted)) == 1
        assert r.of(DiceRead)[0].dice == model.results[0]


async def test_a_broker_restart_is_a_disconnect_and_the_cycle_goes_on(
    mosquitto: MosquittoProcess,
) -> None:
    model = SimDiceStudio(seed=9)
    async with rig(mosquitto, model) as r:
        await r.run_until(lambda: r.of(DiceRead), "the first result")
        mosquitto.stop()
        await wait_until(
            lambda: (
                any(e.reason == "disconnected" for e in r.of(DeviceUnavailable))
                and not r.service.connected
            ),
            what="both ends to see the broker gone",
        )
        # Down for a few backoff rounds: the driver keeps retrying without an event per attempt.
        before = r.driver.counters.get("open_failures", 0)
        await r.run_until(
            lambda: r.driver.counters.get("open_failures", 0) >= before + 2, "failed reconnects"
        )
        mosquitto.start()
        available = len(r.of(DeviceAvailable))
        await r.run_until(
            lambda: len(r.of(DeviceAvailable)) > available and r.service.connected,
            "the driver and the studio back on the broker",
        )
        reads = len(r.of(DiceRead))
        await r.run_until(lambda: len(r.of(DiceRead)) > reads, "a result after the restart")
        assert r.of(DiceRead)[-1].dice == model.results[-1]
        downs = [e.reason for e in r.of(DeviceUnavailable)]
        assert downs == ["disconnected"]  # once, not once per failed attempt


# --- hostile payloads (issue 26: bounded input where a broker message lands) --------------------

SAYS, RESULTS = "studio/shaker/says", "studio/camera/response"
_GOOD: dict[str, Any] = {
    "response": "result",
    "arg": {"round_id": "dice-0-1", "res": [4, 6, 1], "err": 0},
}


def _deep(levels: int) -> Any:
    inner: Any = 1
    for _ in range(levels):
        inner = [inner]
    return inner


def _result(**arg: Any) -> bytes:
    return json.dumps({"response": "result", "arg": {**_GOOD["arg"], **arg}}).encode()


HOSTILE: list[tuple[str, bytes, str]] = [
    # (topic, payload, the reason it is refused with)
    (RESULTS, b"{" * 10_000_000, TOO_LONG),
    (SAYS, b"S0" * 5_000_000, "status too long"),
    (RESULTS, b"[" * 60_000, TOO_DEEP),
    (RESULTS, b"[" * 30_000 + b"]" * 30_000, TOO_DEEP),
    (RESULTS, json.dumps({**_GOOD, "x": _deep(500)}).encode(), TOO_DEEP),
    (RESULTS, json.dumps(_GOOD).encode("utf-16"), NOT_UTF8),
    (RESULTS, b'{"response":"result","arg":{"round_id":"\xff\xfe"}}', NOT_UTF8),
    (SAYS, b"S\xff", "status not UTF-8"),
    (SAYS, "S0".encode("utf-16"), "status not UTF-8"),
    (RESULTS, b'{"response":"result","arg":{"round_id":"r","res":[1,2,3],"err":NaN}}', NOT_JSON),
    (RESULTS, _result(err=10**40), NOT_JSON),
    (RESULTS, b"[4, 6, 1]", NOT_AN_OBJECT),
    (
        RESULTS,
        json.dumps({"response": "result", "arg": [1]}).encode(),
        "result without an object 'arg'",
    ),
    (RESULTS, _result(round_id=True), "result without a round id 'round_id'"),
    (RESULTS, _result(round_id={"id": 1}), "result without a round id 'round_id'"),
    (RESULTS, _result(round_id="r" * 300), "result round id 'round_id' too long"),
    (RESULTS, _result(res="4,6,1"), "result 'res' is not a list of whole numbers"),
    (RESULTS, _result(res=[4, "6", 1]), "result 'res' is not a list of whole numbers"),
    (RESULTS, _result(res=[4, True, 1]), "result 'res' is not a list of whole numbers"),
    (RESULTS, _result(res=[4, 6.0, 1]), "result 'res' is not a list of whole numbers"),
    (RESULTS, _result(err="0"), "result 'err' is not a whole number"),
    (RESULTS, _result(err=[0]), "result 'err' is not a whole number"),
    (SAYS, b"S3", "unknown status word"),
]
FLOOD = 2_000


class _RecordingLog:
    """Stands in for the driver module's structlog logger: keeps ``(event, fields)``."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, dict[str, Any]]] = []

    def warning(self, event: str, **fields: Any) -> None:
        self.lines.append((event, fields))


async def test_hostile_payloads_are_counted_and_the_cycle_goes_on(
    mosquitto: MosquittoProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    recording = _RecordingLog()
    monkeypatch.setattr(driver_module, "log", recording)
    model = SimDiceStudio(seed=11)
    async with rig(mosquitto, model) as r:
        await r.run_until(lambda: r.of(BettingOpened), "the first round open")
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=30) as attacker:
            for topic, payload, _ in HOSTILE:
                await attacker.publish(topic, payload, qos=1)
            for n in range(FLOOD):  # a flood, both topics, while the round is open
                await attacker.publish((SAYS, RESULTS)[n % 2], b"\x00garbage %d" % n, qos=1)
        expected = len(HOSTILE) + FLOOD
        await wait_until(
            lambda: r.driver.counters.get("decode_errors", 0) >= expected,
            timeout=30,
            what=f"{expected} decode errors",
        )
        assert r.driver.counters["decode_errors"] == expected
        # Each refused with its own reason and logged as malformed with its topic and reason: the
        # first of a reason at once, its repeats (the flood's too) only counted, as the clock
        # stood still meanwhile.
        firsts: dict[str, str] = {}
        for topic, _, reason in HOSTILE:
            firsts.setdefault(reason, topic)
        malformed = [fields for event, fields in recording.lines if event == "malformed"]
        assert [(f["topic"], f["reason"]) for f in malformed] == [
            (topic, reason) for reason, topic in firsts.items()
        ]
        assert all(f["count"] == 1 and len(f["raw"]) <= 4 * 80 for f in malformed)
        # Nothing of it changed the cycle: the next two rounds read the studio's own dice.
        await r.run_until(lambda: len(r.of(DiceRead)) == 2, "two results after the flood")
        assert [e.dice for e in r.of(DiceRead)] == model.results[:2]
        assert not r.of(DiceRollInvalid)
        assert not r.of(DeviceFaultRaised)
        assert not r.of(DeviceUnavailable)
        assert r.driver.counters["decode_errors"] == expected


async def test_a_message_that_breaks_the_handler_is_counted_and_the_next_is_read(
    mosquitto: MosquittoProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last line of defence: a codec that raised (a bug) costs its message, not the device."""
    recording = _RecordingLog()
    monkeypatch.setattr(driver_module, "log", recording)
    model = SimDiceStudio(seed=12)
    async with rig(mosquitto, model) as r:
        decode = r.driver.codec.decode

        def poisoned(topic: str, payload: bytes) -> Any:
            if payload == b"poison":
                raise RecursionError("maximum recursion depth exceeded")
            return decode(topic, payload)

        monkeypatch.setattr(r.driver.codec, "decode", poisoned)
        await r.run_until(lambda: r.of(BettingOpened), "the first round open")
        async with aiomqtt.Client(mosquitto.host, mosquitto.port, timeout=5) as attacker:
            await attacker.publish(RESULTS, b"poison", qos=1)
        await wait_until(lambda: r.driver.counters.get("decode_errors"), what="the poison counted")
        await r.run_until(lambda: r.of(DiceRead), "the result after the poison")
        assert r.of(DiceRead)[0].dice == model.results[0]
        assert r.driver.malformed.last == (RESULTS, "RecursionError while handling it")
        assert [f["reason"] for e, f in recording.lines if e == "malformed"] == [
            "RecursionError while handling it"
        ]


# --- settings and the table's broker (no broker needed) ------------------------------------------


def _config(tmp_path: Path, device: dict[str, Any], **mqtt: Any) -> Any:
    return parse_config(
        {
            "table": {"id": "SB-1", "game": "roulette"},
            "mqtt": {"url": "mqtt://broker.studio:1884", **mqtt},
            "journal": {"path": str(tmp_path / "j.sqlite")},
            "devices": [{"id": "dice", "driver": "mqtt-dice", **device}],
        }
    )


def test_without_url_the_device_uses_the_tables_broker(tmp_path: Path) -> None:
    (driver,) = build_drivers(_config(tmp_path, {}))
    assert isinstance(driver, DiceMqttDriver)
    assert (driver.endpoint.host, driver.endpoint.port) == ("broker.studio", 1884)
    (driver,) = build_drivers(_config(tmp_path, {}), broker=("127.0.0.1", 4242))
    assert isinstance(driver, DiceMqttDriver)
    assert driver.endpoint.url == "mqtt://127.0.0.1:4242"  # where the publisher connects too


def test_the_tables_login_comes_along(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cret\n")
    secret.chmod(0o600)
    config = _config(tmp_path, {}, username="table", password_file=str(secret))
    (driver,) = build_drivers(config)
    assert isinstance(driver, DiceMqttDriver)
    assert (driver.endpoint.username, driver.endpoint.password) == ("table", "s3cret")
    assert "s3cret" not in repr(driver.endpoint)


def test_a_url_of_its_own_wins(tmp_path: Path) -> None:
    (driver,) = build_drivers(_config(tmp_path, {"url": "mqtt://shaker.lan"}))
    assert isinstance(driver, DiceMqttDriver)
    assert driver.endpoint.url == "mqtt://shaker.lan:1883"


@pytest.mark.parametrize(
    ("device", "message"),
    [
        ({"url": "http://x"}, "scheme must be mqtt:// or mqtts://"),
        ({"username": "u"}, "need url"),
        ({"url": "mqtt://x", "ca_file": "/ca.pem"}, "needs an mqtts:// url"),
        ({"colors": ["red"]}, "colors names 1 dice"),
        ({"camera_result_topic": "studio/shaker/says"}, "must all differ"),
        ({"shake_command": "/cycle/?p={speed}"}, "only {pattern} and {duration}"),
        ({"status_words": {"S0": "sleeping"}}, "status_words"),
        ({"silence_timeout": 1.0}, "silence_timeout must exceed status_poll"),
        ({"port": "/dev/ttyUSB0"}, "port does not apply"),
        ({"camera_errors": {"0": "die_cocked"}}, "error 0 means success"),
    ],
)
def test_config_mistakes_name_the_key(tmp_path: Path, device: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match="devices\\[0\\]") as info:
        build_drivers(_config(tmp_path, device))
    assert message in str(info.value)


def test_outside_a_table_a_url_is_needed() -> None:
    with pytest.raises(DriverConfigError, match="missing key 'url'"):
        DiceMqttDriver("dice", None, {})
    with pytest.raises(DriverInitError, match="betting_seconds"):
        DiceMqttDriver("dice", None, {"betting_seconds": 0})


def test_registered_as_mqtt_dice() -> None:
    assert get_driver_class("mqtt-dice") is DiceMqttDriver
