"""SimShuffler against the production codec: the simulator must speak exactly what the driver
reads, and behave as docs/protocols/shuffler.md says a shuffler does.

Most tests drive the I/O-free model with a synthetic clock (no sleeping); the CLI and USB tests
use real time at short durations.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import pytest
import usb.core

from tablectl.drivers.shuffler.protocol import (
    Ack,
    ClearFault,
    Command,
    DeckReport,
    DecodeError,
    Decoder,
    Door,
    Fault,
    FaultClear,
    Message,
    Nak,
    QueryStatus,
    QueryVersion,
    RequestDeckCheck,
    ShuffleDone,
    ShuffleStart,
    StartShuffle,
    Status,
    Version,
    encode_command,
)
from tablectl.drivers.stx import crc8
from tablectl.simulators.shuffler import USB_PID, USB_VID, FaultSpec, SimShuffler, SimShufflerUsb

pytestmark = pytest.mark.timeout(10)


class Bench:
    """A host talking to the model with a synthetic clock."""

    def __init__(self, model: SimShuffler) -> None:
        self.model = model
        self.decoder = Decoder()
        self.now = 0.0
        self.model.advance(self.now)

    def send(self, command: Command | bytes) -> list[Message]:
        """The immediate reply to ``command``."""
        data = command if isinstance(command, bytes) else encode_command(command)
        return self.decoder.feed(self.model.receive(data, self.now))

    def run(self, seconds: float, step: float = 0.05) -> list[Message]:
        """Everything the shuffler sends in the next ``seconds``."""
        out: list[Message] = []
        end = self.now + seconds
        while self.now < end:
            self.now = min(self.now + step, end)
            out += self.decoder.feed(self.model.advance(self.now))
        return out

    def status(self) -> Status:
        (reply,) = self.send(QueryStatus())
        assert isinstance(reply, Status)
        return reply


def bench(*faults: str, **kwargs: object) -> Bench:
    kwargs.setdefault("shuffle_seconds", 4.0)
    return Bench(SimShuffler(faults=[FaultSpec.from_spec(f) for f in faults], **kwargs))  # type: ignore[arg-type]


def of(kind: type, messages: list[Message]) -> list[Message]:
    return [m for m in messages if isinstance(m, kind)]


# --- normal operation ----------------------------------------------------------------------------


def test_idle_status_version_and_deck_check() -> None:
    b = bench(decks=6)
    assert b.status() == Status("idle", False, 312, (), 0)
    assert b.send(QueryVersion()) == [Version("TS-1", "1.0.0", "SIM00000")]
    assert b.send(RequestDeckCheck()) == [DeckReport(312)]
    assert b.run(30) == []  # the status is polled, never sent unsolicited


def test_a_normal_shuffle() -> None:
    b = bench()
    assert b.send(StartShuffle(8)) == [Ack("SHUF")]
    assert b.run(0.05) == [ShuffleStart(1, 8)]
    assert b.status().state == "shuffling"
    assert b.send(StartShuffle(8)) == [Nak("SHUF", "BUSY")]
    assert b.send(RequestDeckCheck()) == [Nak("DCHK", "BUSY")]
    assert b.run(5) == [ShuffleDone(1, 416)]
    assert b.status() == Status("ready", False, 416, (), 1)
    assert b.send(StartShuffle(8)) == [Ack("SHUF")]
    assert b.run(5) == [ShuffleStart(2, 8), ShuffleDone(2, 416)]
    assert [r.cards for r in b.model.results] == [416, 416]


def test_shuffle_takes_about_shuffle_seconds_over_speed() -> None:
    b = bench(speed=4.0, shuffle_seconds=8.0)
    b.send(StartShuffle(8))
    assert of(ShuffleDone, b.run(1.8)) == []
    assert of(ShuffleDone, b.run(0.4)) == [ShuffleDone(1, 416)]


def test_requested_decks_differ_from_loaded_decks() -> None:
    # The shuffler counts what is loaded; the engine compares with decks x 52 (R6).
    b = bench(decks=6)
    b.send(StartShuffle(8))
    assert b.run(5) == [ShuffleStart(1, 8), ShuffleDone(1, 312)]


def test_auto_start_by_the_dealer_button() -> None:
    b = bench(auto=2.0)
    out = b.run(13)  # starts at 2 and 8 (2 s after the first one's 4 s shuffle)
    assert of(ShuffleStart, out) == [ShuffleStart(1, 8), ShuffleStart(2, 8)]
    assert len(of(ShuffleDone, out)) == 2


def test_press_start() -> None:
    b = bench()
    assert b.model.press_start(b.now)
    assert not b.model.press_start(b.now)  # busy
    assert of(ShuffleDone, b.run(5)) == [ShuffleDone(1, 416)]


def test_without_a_card_reader_deck_checks_are_unchecked() -> None:
    b = bench("missing_card@1", reads_faces=False)
    b.send(StartShuffle(8))
    assert of(ShuffleDone, b.run(5)) == [ShuffleDone(1, 415, checked=False)]
    assert b.send(RequestDeckCheck()) == [DeckReport(415, checked=False)]


def test_same_seed_same_bytes() -> None:
    def record(seed: int) -> bytes:
        model = SimShuffler(seed=seed, faults=[FaultSpec("garbage", 1), FaultSpec("split", 1)])
        out = model.advance(0.0) + model.receive(encode_command(StartShuffle(8)), 0.0)
        for i in range(1, 300):
            out += model.advance(i * 0.05)
        return out

    assert record(3) == record(3)
    assert record(3) != record(4)


# --- scripted faults -----------------------------------------------------------------------------


def test_jam_then_door_cycle_then_clear() -> None:
    b = bench("jam@1=1")
    b.send(StartShuffle(8))
    out = b.run(2.5)
    assert out == [ShuffleStart(1, 8), Fault(1, "card jam in the mixing elevator")]
    assert b.status() == Status("fault", False, 416, (1,), 1)
    assert b.send(StartShuffle(8)) == [Nak("SHUF", "FAULT")]
    assert b.send(ClearFault()) == [Nak("CLRF", "COND")]  # the jam is still in there
    assert b.run(1.0) == [Door(True)]
    assert b.send(ClearFault(1)) == [Nak("CLRF", "COND")]
    assert b.send(StartShuffle(8)) == [Nak("SHUF", "DOOR")]
    assert b.run(1.0) == [Door(False)]
    assert b.send(ClearFault(1)) == [Ack("CLRF")]
    assert b.run(0.05) == [FaultClear(1)]
    assert b.status() == Status("idle", False, 416, (), 1)
    # The jammed shuffle never completes; the next one is number 2 and is clean.
    assert b.send(StartShuffle(8)) == [Ack("SHUF")]
    assert b.run(5) == [ShuffleStart(2, 8), ShuffleDone(2, 416)]
    assert [r.shuffle for r in b.model.results] == [2]


def test_wrong_count() -> None:
    b = bench("wrong_count@1", "wrong_count@2=400")
    b.send(StartShuffle(8))
    assert of(ShuffleDone, b.run(5)) == [ShuffleDone(1, 415)]
    b.send(StartShuffle(8))
    assert of(ShuffleDone, b.run(5)) == [ShuffleDone(2, 400)]


def test_missing_and_extra_cards() -> None:
    b = bench("missing_card@1", "extra_card@2=JK", "missing_card@3=QS,KH", "extra_card@3=AH")
    counts = []
    for _ in range(3):
        b.send(StartShuffle(8))
        (done,) = of(ShuffleDone, b.run(5))
        counts.append(done)
    assert counts == [
        ShuffleDone(1, 415, ("QS",)),
        ShuffleDone(2, 417, (), ("JK",)),
        ShuffleDone(3, 415, ("QS", "KH"), ("AH",)),
    ]
    assert b.send(RequestDeckCheck()) == [DeckReport(415, ("QS", "KH"), ("AH",))]


def test_door_open_pauses_the_shuffle() -> None:
    b = bench("door_open@1=3")
    b.send(StartShuffle(8))
    out = b.run(10)
    assert out == [ShuffleStart(1, 8), Door(True), Door(False), ShuffleDone(1, 416)]
    done_after = 4 * 0.95 + 3  # the mechanism waited for the door
    assert b.model.results[0].cards == 416
    assert b.now >= done_after


def test_fault_code_clears_on_host_request() -> None:
    b = bench("fault@1")
    b.send(StartShuffle(8))
    assert of(Fault, b.run(5)) == [Fault(2, "elevator or mixing motor fault")]
    assert of(ShuffleDone, b.run(5)) == []
    assert b.send(ClearFault()) == [Ack("CLRF")]
    assert b.run(0.05) == [FaultClear(2)]


def test_service_only_fault_never_clears() -> None:
    b = bench("fault@1=7")
    b.send(StartShuffle(8))
    b.run(5)
    assert b.send(ClearFault(7)) == [Nak("CLRF", "COND")]
    assert b.run(30) == []
    assert b.status().faults == (7,)


def test_self_clearing_fault() -> None:
    b = bench("fault@1=4")
    b.send(StartShuffle(8))
    out = b.run(5)
    assert of(Fault, out) == [Fault(4, "input tray empty at start")]
    assert of(FaultClear, out) == [FaultClear(4)]
    assert b.status().state == "idle"


def test_garbage_costs_only_decode_errors() -> None:
    b = bench("garbage@1")
    b.send(StartShuffle(8))
    out = b.run(5)
    assert [m for m in out if not isinstance(m, DecodeError)] == [
        ShuffleStart(1, 8),
        ShuffleDone(1, 416),
    ]
    reasons = [m.reason for m in out if isinstance(m, DecodeError)]
    assert len(reasons) == 2
    assert any("checksum mismatch" in r for r in reasons)


def test_split_frames_arrive_in_pieces() -> None:
    model = SimShuffler(faults=[FaultSpec("split", 1)], shuffle_seconds=1.0)
    model.advance(0.0)
    model.receive(encode_command(StartShuffle(8)), 0.0)
    chunks = []
    for i in range(1, 40):
        chunks += model.advance_chunks(i * 0.05)
    assert chunks
    assert all(c.partial and 1 <= len(c.data) <= 4 for c in chunks)
    decoder = Decoder()
    out = [m for c in chunks for m in decoder.feed(c.data)]
    assert out == [ShuffleStart(1, 8), ShuffleDone(1, 416)]


def test_silence_stalls_output_and_commands() -> None:
    b = bench("silence@1=3")
    b.send(StartShuffle(8))
    assert b.run(2.5) == [ShuffleStart(1, 8)]  # then the device hangs
    assert b.send(QueryStatus()) == []
    out = b.run(6)
    assert out == [ShuffleDone(1, 416)]
    assert b.model.ignored_commands == 1


def test_disconnect_loses_what_is_sent_while_down() -> None:
    b = bench("disconnect@1=10")
    b.send(StartShuffle(8))
    assert b.model.link_down(b.now)
    assert b.run(9) == [ShuffleStart(1, 8)]  # sent just before the cable came out
    assert b.model.link_down(b.now)
    b.run(2)
    assert not b.model.link_down(b.now)
    # SHDN went out while the cable was pulled; the status still tells the host.
    assert b.status() == Status("ready", False, 416, (), 1)


# --- host frames the shuffler cannot use ---------------------------------------------------------


def _frame(payload: bytes, checksum: int | None = None) -> bytes:
    crc = crc8(payload) if checksum is None else checksum
    return b"\x02" + payload + b"\x03" + f"{crc:02X}".encode()


@pytest.mark.parametrize(
    ("data", "reply"),
    [
        (_frame(b"SHUF;9"), [Nak("SHUF", "ARG")]),
        (_frame(b"HALT"), [Nak("HALT", "VERB")]),
        (_frame(b"STAT", checksum=0), [Nak("?", "FRAME")]),
        (b"noise\r\n", []),
        (b"\x02STAT\x02", []),
    ],
)
def test_bad_host_frames(data: bytes, reply: list[Message]) -> None:
    b = bench()
    assert b.send(data) == reply
    assert b.model.ignored_commands == 1


# --- fault specs ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("jam@2", FaultSpec("jam", 2)),
        ("jam@2=0.5", FaultSpec("jam", 2, 0.5)),
        ("wrong_count@1=415", FaultSpec("wrong_count", 1, 415)),
        ("missing_card@1=qs", FaultSpec("missing_card", 1, ("QS",))),
        ("missing_card@1=QS,KH", FaultSpec("missing_card", 1, ("QS", "KH"))),
        ("extra_card@3", FaultSpec("extra_card", 3)),
        ("fault@3=7", FaultSpec("fault", 3, 7)),
        ("garbage@1", FaultSpec("garbage", 1)),
        ("silence@2=4", FaultSpec("silence", 2, 4.0)),
    ],
)
def test_fault_spec_parsing(text: str, spec: FaultSpec) -> None:
    assert FaultSpec.from_spec(text) == spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("jam", "expected KIND@SHUFFLE"),
        ("boom@1", "unknown fault kind"),
        ("jam@x", "not a number"),
        ("jam@0", "shuffle must be"),
        ("garbage@1=2", "takes no value"),
        ("fault@1=100", "1-99"),
        ("fault@1=2.5", "not a number"),
        ("missing_card@1=QX", "not a card code"),
        ("silence@1=-1", "seconds"),
        ("wrong_count@1=abc", "not a number"),
    ],
)
def test_bad_fault_specs(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FaultSpec.from_spec(text)


def test_model_argument_checks() -> None:
    with pytest.raises(ValueError, match="two jam faults"):
        SimShuffler(faults=[FaultSpec("jam", 1), FaultSpec("jam", 1)])
    with pytest.raises(ValueError, match="right count"):
        SimShuffler(decks=8, faults=[FaultSpec("wrong_count", 1, 416)])
    with pytest.raises(ValueError, match="decks"):
        SimShuffler(decks=9)
    with pytest.raises(ValueError, match="speed"):
        SimShuffler(speed=0)


# --- USB bulk endpoints --------------------------------------------------------------------------


async def test_usb_variant_speaks_the_same_frames() -> None:
    sim = SimShufflerUsb(SimShuffler(shuffle_seconds=0.2))
    dev = usb.core.find(idVendor=USB_VID, idProduct=USB_PID, backend=sim.backend)
    assert dev is not None
    dev.set_configuration()
    decoder = Decoder()

    def exchange(command: Command) -> None:
        dev.write(0x02, encode_command(command))

    out: list[Message] = []
    runner = asyncio.create_task(sim.run(interval=0.01))
    try:
        await asyncio.to_thread(exchange, StartShuffle(8))
        async with asyncio.timeout(3):
            while not of(ShuffleDone, out):
                data = await asyncio.to_thread(dev.read, 0x81, 64, 1000)
                out += decoder.feed(bytes(data))
    finally:
        runner.cancel()
        await asyncio.gather(runner, return_exceptions=True)
    assert out == [Ack("SHUF"), ShuffleStart(1, 8), ShuffleDone(1, 416)]


def test_usb_disconnect_unplugs_the_device() -> None:
    model = SimShuffler(faults=[FaultSpec("disconnect", 1, 1.0)])
    sim = SimShufflerUsb(model, clock=lambda: 0.0)
    sim.poll(0.0)
    model.receive(encode_command(StartShuffle(8)), 0.0)
    sim.poll(0.1)
    assert not sim.device.connected
    sim.poll(1.5)
    assert sim.device.connected


# --- the CLI -------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def cli(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.shuffler",
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


async def test_cli_serves_tcp_and_exits_after_n_shuffles() -> None:
    async with cli("--tcp", "127.0.0.1:0", "--speed", "20", "--auto", "1", "--shuffles", "1") as (
        proc,
        line,
    ):
        kind, _, where = line.split()[0:3]
        assert (kind, _) == ("READY", "tcp")
        host, port = where.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(encode_command(QueryVersion()))
        decoder = Decoder()
        out: list[Message] = []
        async with asyncio.timeout(5):
            while not of(ShuffleDone, out):
                out += decoder.feed(await reader.read(1024))
        writer.close()
        assert of(Version, out) == [Version("TS-1", "1.0.0", "SIM00000")]
        assert of(ShuffleDone, out) == [ShuffleDone(1, 416)]
        async with asyncio.timeout(5):
            assert await proc.wait() == 0


async def test_cli_prints_ready_pty() -> None:
    async with cli("--pty") as (_, line):
        assert line.startswith("READY pty /dev/")


async def test_cli_bad_fault_is_usage_error() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.shuffler",
        "--fault",
        "boom@1",
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert b"unknown fault kind" in err
