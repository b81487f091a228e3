"""SimDice against the production codec: the simulator must speak exactly what the driver reads,
and behave as docs/protocols/dice.md says a dice unit does.

The model is I/O-free and driven here with a synthetic clock (no sleeping); only the CLI tests run
a real process.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator

import pytest

from tablectl.drivers.dice.protocol import (
    Ack,
    BettingClosed,
    BettingOpen,
    ClearFault,
    CloseBetting,
    Command,
    DecodeError,
    Decoder,
    Fault,
    FaultClear,
    Identify,
    Identity,
    Message,
    Nak,
    NoResult,
    QueryStatus,
    RepeatLast,
    Result,
    Rolling,
    RollNow,
    SelfTest,
    Status,
    TestReport,
    encode_command,
)
from tablectl.drivers.stx import crc8
from tablectl.simulators.dice import FaultSpec, RollOutcome, SimDice
from tablectl.simulators.errors import SimulatorError

pytestmark = pytest.mark.timeout(15)


class Bench:
    """A host talking to the model on a synthetic clock."""

    def __init__(self, model: SimDice) -> None:
        self.model = model
        self.decoder = Decoder()
        self.now = 0.0
        self.opening = self.decoder.feed(self.model.advance(self.now))

    def send(self, command: Command | bytes) -> list[Message]:
        """The immediate reply to ``command``."""
        data = command if isinstance(command, bytes) else encode_command(command)
        return self.decoder.feed(self.model.receive(data, self.now))

    def run(self, seconds: float, step: float = 0.05) -> list[Message]:
        """Everything the unit sends in the next ``seconds``."""
        out: list[Message] = []
        end = self.now + seconds
        while self.now < end:
            self.now = min(self.now + step, end)
            out += self.decoder.feed(self.model.advance(self.now))
        return out

    def until(self, kind: type, limit: float = 60.0) -> list[Message]:
        """Everything the unit sends up to and including the first ``kind``."""
        out: list[Message] = []
        end = self.now + limit
        while not any(isinstance(m, kind) for m in out):
            assert self.now < end, f"no {kind.__name__} within {limit} s: {out}"
            out += self.run(0.05)
        return out

    def status(self) -> Status:
        (reply,) = self.send(QueryStatus())
        assert isinstance(reply, Status)
        return reply


def bench(*faults: str, **kwargs: object) -> Bench:
    return Bench(SimDice(faults=[FaultSpec.from_spec(f) for f in faults], **kwargs))  # type: ignore[arg-type]


def of(kind: type, messages: list[Message]) -> list[Message]:
    return [m for m in messages if isinstance(m, kind)]


def kinds(messages: list[Message]) -> list[str]:
    return [type(m).__name__ for m in messages]


# --- the cycle -----------------------------------------------------------------------------------


def test_the_cycle_runs_by_itself_on_its_timers() -> None:
    b = bench(seed=3, faces=[(4, 6, 1)])
    assert b.opening == [BettingOpen(1)]
    assert b.status() == Status("ready", 1, 0)
    assert b.run(9.9) == []  # betting: 10 s
    assert b.run(0.1) == [BettingClosed(1, "timer")]
    assert b.run(1.0) == [Rolling(1, 1)]  # the dealer shakes 1 s later
    assert b.status() == Status("rolling", 1, 1)
    assert b.run(3.7) == []  # 3 s shake + 1 s settle, ±5 %
    out = b.run(0.6)
    assert out == [Result(1, 1, (4, 6, 1), (), out[0].confidence, "CAM1")]  # type: ignore[union-attr]
    assert b.status() == Status("result", 1, 1)
    assert of(BettingOpen, b.run(4.2)) == [BettingOpen(2)]  # the result shows 4 s
    assert b.model.results == (RollOutcome(1, 1, faces=(4, 6, 1)),)


def test_speed_divides_every_duration() -> None:
    b = bench(speed=10.0)
    assert b.run(0.95) == []
    assert b.run(0.1) == [BettingClosed(1, "timer")]


def test_the_host_closes_betting_and_rolls() -> None:
    b = bench(betting_seconds=None, roll_delay=None)
    assert b.run(60) == []  # nobody closes, nobody rolls
    assert b.send(RollNow()) == [Nak("ROLL", "STATE")]  # betting is still open
    assert b.send(CloseBetting()) == [Ack("CLOS")]
    assert b.run(0.05) == [BettingClosed(1, "host")]
    assert b.send(CloseBetting()) == [Nak("CLOS", "STATE")]
    assert b.run(60) == []
    assert b.send(RollNow()) == [Ack("ROLL")]
    assert b.run(0.05) == [Rolling(1, 1)]
    assert b.send(RollNow()) == [Nak("ROLL", "STATE")]
    assert kinds(b.until(Result)) == ["Result"]


def test_the_dealer_s_buttons() -> None:
    b = bench(betting_seconds=None, roll_delay=None)
    assert not b.model.press_roll(b.now)
    assert b.model.press_close(b.now)
    assert b.model.press_roll(b.now)
    assert b.run(0.05) == [BettingClosed(1, "button"), Rolling(1, 1)]


def test_coloured_dice_are_reported_in_the_order_they_came_to_rest() -> None:
    b = bench(seed=1, dice=2, colors=["red", "blue"], faces=[(5, 2)] * 8)
    assert b.send(Identify()) == [Identity("TDS-1", "1.0.0", "SIM00001", 2, ("red", "blue"))]
    seen = set()
    for _ in range(8):
        (result,) = of(Result, b.until(Result))
        assert isinstance(result, Result)
        by_color = dict(zip(result.colors, result.faces, strict=True))
        assert by_color == {"red": 5, "blue": 2}
        seen.add(result.colors)
    assert seen == {("red", "blue"), ("blue", "red")}  # both orders occur: use the colours
    assert {r.faces for r in b.model.results} == {(5, 2)}  # recorded in the table's order


def test_same_seed_same_bytes() -> None:
    def transcript(seed: int) -> bytes:
        model = SimDice(seed=seed, speed=10.0, faults=[FaultSpec("cocked", 2)])
        return b"".join(model.advance(t / 20) for t in range(0, 20 * 12))

    assert transcript(4) == transcript(4)
    assert transcript(4) != transcript(5)


# --- roll faults ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "code", "detail"),
    [
        ("cocked@1", "die_cocked", "die 1"),
        ("cocked@1=3", "die_cocked", "die 3"),
        ("off_table@1=2", "die_off_table", "die 2"),
        ("unreadable@1", "dice_unreadable", "die 1"),
        ("not_at_rest@1", "dice_not_at_rest", ""),
        ("no_wall@1", "no_wall_hit", ""),
    ],
)
def test_a_no_result_then_a_re_roll(spec: str, code: str, detail: str) -> None:
    b = bench(spec, faces=[(2, 2, 3)])
    out = b.until(NoResult)
    assert out[-1] == NoResult(1, 1, code, detail)  # type: ignore[arg-type]
    assert b.status() == Status("closed", 1, 1)  # bets stand
    out = b.until(Result)
    assert kinds(out) == ["Rolling", "Result"]
    assert out[0] == Rolling(1, 2)
    assert [(r.roll, r.code, r.faces) for r in b.model.results] == [
        (1, code, None),
        (2, None, (2, 2, 3)),
    ]


def test_duplicate_result_sends_the_frame_twice() -> None:
    b = bench("duplicate_result@1")
    out = of(Result, b.until(Result) + b.run(0.1))
    assert len(out) == 2
    assert out[0] == out[1]


def test_bad_checksum_result_and_last_repeats_it() -> None:
    b = bench("bad_checksum@1")
    assert b.send(RepeatLast()) == [Nak("LAST", "NONE")]
    out = b.until(DecodeError)
    assert isinstance(out[-1], DecodeError)
    assert out[-1].reason.startswith("checksum mismatch")
    assert b.status().state == "result"
    (repeat,) = b.send(RepeatLast())
    assert isinstance(repeat, Result)
    assert (repeat.game, repeat.roll) == (1, 1)


def test_motion_fault_abandons_the_roll_until_cleared() -> None:
    b = bench("motion_fault@1=60")
    out = b.until(Fault)
    assert out[-1] == Fault(1, "shaker motion fault: the dome stopped mid-shake")
    assert b.status() == Status("fault", 1, 1, (1,))
    assert b.send(RollNow()) == [Nak("ROLL", "FAULT")]
    assert b.run(10) == []  # the abandoned roll gives no outcome
    assert b.send(ClearFault(1)) == [Ack("CLRF")]
    assert b.run(0.05) == [FaultClear(1)]
    assert b.status() == Status("closed", 1, 1)
    out = b.until(Result)
    assert out[0] == Rolling(1, 2)  # the re-roll


def test_motion_fault_clears_by_itself_after_its_seconds() -> None:
    b = bench("motion_fault@1=2")
    b.until(Fault)
    assert b.run(1.9) == []
    assert b.run(0.2) == [FaultClear(1)]


def test_reader_fault_at_the_read() -> None:
    b = bench("reader_fault@1=1")
    out = b.until(Fault)
    assert kinds(out) == ["BettingClosed", "Rolling", "Fault"]
    assert out[-1] == Fault(3, "result reader fault: no image from CAM1")
    assert kinds(b.until(Result)) == ["FaultClear", "Rolling", "Result"]


def test_lid_open_holds_the_cycle_and_cannot_be_cleared_by_the_host() -> None:
    b = bench("lid_open@1=3")
    assert b.run(5.0) == [Fault(2, "lid open")]  # halfway through betting
    assert b.send(ClearFault()) == [Nak("CLRF", "COND")]
    assert b.send(CloseBetting()) == [Nak("CLOS", "LID")]
    assert b.run(3.0) == [FaultClear(2)]
    assert b.status() == Status("ready", 1, 0)
    assert b.run(4.9) == []  # the betting timer was held for the 3 s
    assert b.run(0.2) == [BettingClosed(1, "timer")]


def test_silence_stalls_output_and_commands() -> None:
    b = bench("silence@1=5")
    b.until(Rolling)
    assert b.send(QueryStatus()) == []
    assert b.run(4.9) == []
    assert b.model.silent(b.now)
    b.run(0.2)
    assert not b.model.silent(b.now)
    assert b.status() == Status("rolling", 1, 1)  # the roll resumes, 5 s late
    assert kinds(b.until(Result)) == ["Result"]


def test_garbage_and_split() -> None:
    b = bench("garbage@1", "split@1")
    decoder_errors = b.decoder.errors
    out = b.until(Result)
    assert kinds([m for m in out if not isinstance(m, DecodeError)]) == [
        "BettingClosed",
        "Rolling",
        "Result",
    ]
    assert b.decoder.errors - decoder_errors == 2  # the noise and the broken frame


def test_split_frames_arrive_in_pieces() -> None:
    model = SimDice(faults=[FaultSpec("split", 1)], speed=10.0)
    chunks = model.advance_chunks(0.0)
    assert len(chunks) > 1
    assert all(c.partial and 1 <= len(c.data) <= 4 for c in chunks)
    assert Decoder().feed(b"".join(c.data for c in chunks)) == [BettingOpen(1)]


def test_disconnect_drops_the_link_for_its_seconds() -> None:
    b = bench("disconnect@1=3")
    b.until(Rolling)
    assert b.model.link_down(b.now)
    assert b.send(QueryStatus()) == []
    assert b.run(2.9) == []
    assert not b.model.link_down(b.now + 0.2)


# --- commands ------------------------------------------------------------------------------------


def test_self_test_between_games_only() -> None:
    b = bench()
    assert b.send(SelfTest()) == [Ack("TEST")]
    assert b.send(SelfTest()) == [Nak("TEST", "BUSY")]
    assert b.send(CloseBetting()) == [Nak("CLOS", "BUSY")]
    (report,) = b.run(2.1)
    assert isinstance(report, TestReport)
    assert report.passed
    assert report.detail.startswith("shaker ok, reader ok, read ")
    assert b.run(9.8) == []  # the betting timer (10 s) waited for the test (2 s)
    assert b.run(0.2) == [BettingClosed(1, "timer")]
    assert b.send(SelfTest()) == [Nak("TEST", "STATE")]


def test_identity_and_status() -> None:
    b = bench(seed=42, dice=2)
    assert b.send(Identify()) == [Identity("TDS-1", "1.0.0", "SIM00042", 2)]
    assert b.status() == Status("ready", 1, 0)


def test_clearing_nothing_is_acknowledged() -> None:
    b = bench()
    assert b.send(ClearFault()) == [Ack("CLRF")]
    assert b.send(ClearFault(3)) == [Ack("CLRF")]


def _framed(payload: bytes) -> bytes:
    return b"\x02" + payload + b"\x03" + f"{crc8(payload):02X}".encode() + b"\r\n"


@pytest.mark.parametrize(
    ("data", "reply"),
    [
        (b"\x02STAT\x0300\r\n", [Nak("?", "FRAME")]),
        (_framed(b"SHAK"), [Nak("SHAK", "VERB")]),
        (_framed(b"CLRF;0"), [Nak("CLRF", "ARG")]),
        (_framed(b"ROLL;1"), [Nak("ROLL", "ARG")]),
        (b"noise\r\n", []),
        (b"\x02STAT\x02", []),
    ],
)
def test_bad_host_frames(data: bytes, reply: list[Message]) -> None:
    b = bench()
    assert b.send(data) == reply
    assert b.model.ignored_commands >= 1


# --- faults and arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("cocked@2", FaultSpec("cocked", 2)),
        ("cocked@2=3", FaultSpec("cocked", 2, 3)),
        ("motion_fault@1=4.5", FaultSpec("motion_fault", 1, 4.5)),
        ("duplicate_result@3", FaultSpec("duplicate_result", 3)),
        (" bad_checksum@1 ", FaultSpec("bad_checksum", 1)),
    ],
)
def test_fault_spec_parsing(text: str, spec: FaultSpec) -> None:
    assert FaultSpec.from_spec(text) == spec


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("wobble@1", "unknown fault kind 'wobble'"),
        ("cocked@0", "game must be an integer >= 1"),
        ("cocked@1=7", "die must be 1-6"),
        ("split@1=2", "takes no value"),
        ("silence@1=0", "seconds must be > 0"),
        ("cocked", "expected KIND@GAME"),
    ],
)
def test_bad_fault_specs(text: str, message: str) -> None:
    with pytest.raises(SimulatorError, match=message):
        FaultSpec.from_spec(text)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"speed": 0}, "speed"),
        ({"dice": 7}, "dice must be 1-6"),
        ({"dice": 2, "colors": ["red"]}, "2 distinct colours"),
        ({"dice": 2, "colors": ["red", "red"]}, "2 distinct colours"),
        ({"dice": 2, "colors": ["Red", "blue"]}, "lower-case"),
        ({"faces": [(1, 2)]}, "not 3 faces"),
        ({"faces": [(1, 2, 7)]}, "not 3 faces"),
        ({"betting_seconds": 0}, "betting_seconds"),
        ({"shake_seconds": float("nan")}, "shake_seconds"),
        ({"faults": [FaultSpec("cocked", 1), FaultSpec("cocked", 1, 2)]}, "two cocked faults"),
    ],
)
def test_model_argument_checks(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(SimulatorError, match=message):
        SimDice(**kwargs)  # type: ignore[arg-type]


# --- the CLI -------------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def cli(*args: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, str]]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.dice",
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


async def test_cli_serves_tcp_and_exits_after_n_games() -> None:
    args = ("--tcp", "127.0.0.1:0", "--speed", "50", "--dice", "2", "--colors", "red,blue")
    async with cli(*args, "--games", "1") as (proc, line):
        kind, medium, where = line.split()[0:3]
        assert (kind, medium) == ("READY", "tcp")
        host, port = where.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(encode_command(Identify()))
        decoder = Decoder()
        out: list[Message] = []
        async with asyncio.timeout(10):
            while not of(Result, out):
                out += decoder.feed(await reader.read(1024))
        writer.close()
        assert of(Identity, out) == [Identity("TDS-1", "1.0.0", "SIM00000", 2, ("red", "blue"))]
        async with asyncio.timeout(10):
            assert await proc.wait() == 0


async def test_cli_prints_ready_pty() -> None:
    async with cli("--pty") as (_, line):
        assert line.startswith("READY pty /dev/")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--fault", "boom@1"), b"unknown fault kind"),
        (("--dice", "7"), b"dice must be 1-6"),
        (("--colors", "Red"), b"lower-case words"),
        (("--dice", "2", "--colors", "red"), b"2 distinct colours"),
    ],
)
async def test_cli_bad_arguments_are_usage_errors(args: tuple[str, ...], message: bytes) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl.simulators.cli.dice",
        *args,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    assert proc.returncode == 2
    assert message in err


async def test_tablectl_simulate_dice_help_shows_defaults_and_an_example() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tablectl",
        "simulate",
        "dice",
        "--help",
        stdout=asyncio.subprocess.PIPE,
    )
    out, _ = await proc.communicate()
    assert proc.returncode == 0
    text = out.decode()
    assert "usage: tablectl simulate dice" in text
    assert "(default 10)" in text
    assert "tablectl simulate dice --tcp 127.0.0.1:7010" in text
    assert "motion_fault[=s]" in text
