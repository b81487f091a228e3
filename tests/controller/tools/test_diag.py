"""``tablectl diag`` against the SS2 simulator on a real pty, and ``diag stats`` on a journal.

The simulator runs in-process (``SimSS2`` behind ``serve_pty``) at a high speed, and the commands
run through :func:`tablectl.controller.tools.diag.cli.run_async` exactly as ``tablectl diag`` parses
them, with a table config pointing at the simulator's pty through a ``--link`` symlink (the way a
real config points at ``/dev/serial/by-id/...``).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import itertools
import json
import os
import random
import re
import tty
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.tools.diag.capture import load_capture, rx_bytes
from tablectl.controller.tools.diag.cli import add_arguments, run_async
from tablectl.drivers.ss2.protocol import DecodeError, Decoder, Status
from tablectl.drivers.transports.serial import SerialStream
from tablectl.simulators.serve import serve_pty
from tablectl.simulators.ss2 import FaultSpec, SimSS2
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(10)

SPEED = 20.0
"""Simulator time-lapse: one status line every 25 ms, a whole game in about 1.2 s."""


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


async def diag(
    *argv: str, stop: asyncio.Event | None = None, out: io.StringIO | None = None
) -> Result:
    """Parse ``argv`` as ``tablectl diag`` does and run it on this loop (``out``: to watch the
    output while the command runs)."""
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    out, err = out if out is not None else io.StringIO(), io.StringIO()
    rc = await run_async(args, stop=stop, out=out, err=err)
    return Result(rc, out.getvalue(), err.getvalue())


@dataclass
class Sim:
    model: SimSS2
    link: Path
    pty: str
    config: Path


def write_config(path: Path, port: str, journal: Path, rules: str = "") -> Path:
    path.write_text(
        f"""[table]
id = "ROU-D1"
game = "roulette"
[rules]
{rules}
[journal]
path = "{journal}"
[[devices]]
id = "wheel"
driver = "cammegh-ss2"
port = "{port}"
""",
        encoding="utf-8",
    )
    return path


async def _serve(tmp_path: Path, model: SimSS2) -> AsyncIterator[Sim]:
    link = tmp_path / "wheel"
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    try:
        pty = await asyncio.wait_for(ready, 5)
        config = write_config(tmp_path / "table.toml", str(link), tmp_path / "journal.sqlite")
        yield Sim(model, link, pty, config)
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


@pytest.fixture
async def sim(tmp_path: Path) -> AsyncIterator[Sim]:
    async for running in _serve(tmp_path, SimSS2(seed=3, speed=SPEED)):
        yield running


@pytest.fixture
async def faulty_sim(tmp_path: Path) -> AsyncIterator[Sim]:
    """A wheel whose first game dies with ``*F 5`` (motor) and drops to state 6."""
    model = SimSS2(seed=3, speed=SPEED, faults=[FaultSpec("fault", 1, 5)])
    async for running in _serve(tmp_path, model):
        yield running


# --- probe ------------------------------------------------------------------------------------


async def test_probe_identifies_the_wheel_and_shows_decoded_events(sim: Sim) -> None:
    result = await diag("probe", "wheel", "--config", str(sim.config), "--seconds", "1.6")

    assert result.rc == 0, result.err
    assert "identify: *K CAM" in result.out
    assert "firmware: SS2 controller V1.22" in result.out
    assert "identified" in result.out
    assert "message  status: state" in result.out
    assert "event    WheelReady" in result.out or "event    NoMoreBets" in result.out


async def test_probe_json_streams_identity_then_decoded_lines(sim: Sim) -> None:
    result = await diag("probe", "--config", str(sim.config), "--seconds", "0.8", "--json")

    assert result.rc == 0, result.err
    lines = result.json_lines()
    assert lines[0]["type"] == "identity"
    assert lines[0]["identified"] is True
    assert lines[0]["facts"]["identify"] == "*K CAM"
    assert any(line.get("type") == "status" for line in lines[1:])


# --- sniff and captures -------------------------------------------------------------------------


async def test_sniff_capture_replays_into_ss2_status_lines(sim: Sim, tmp_path: Path) -> None:
    capture = tmp_path / "wheel.cap"
    result = await diag(
        "sniff",
        "wheel",
        "--config",
        str(sim.config),
        "--seconds",
        "1.5",
        "--send",
        "*X",
        "--capture",
        str(capture),
    )

    assert result.rc == 0, result.err
    assert " tx  2a 58 0d 0a" in result.out
    assert re.search(r" rx  [0-9a-f]{2}( [0-9a-f]{2})* +\|", result.out)  # hex, then ASCII column
    records = load_capture(capture)
    assert records[0].direction == "tx"
    assert records[0].data == b"*X\r\n"
    assert all(b.t >= a.t for a, b in itertools.pairwise(records))
    # The *X reply came back; where a read split it from the status lines depends on the load.
    assert b"*X;" in rx_bytes(records)
    messages = Decoder().feed(rx_bytes(records))
    statuses = [m for m in messages if isinstance(m, Status)]
    # ~60 automatic lines at 25 ms, plus the *X reply; a loaded CI machine may see far fewer,
    # and what matters is that the capture decodes back into status lines.
    assert len(statuses) >= 3
    assert sum(isinstance(m, DecodeError) for m in messages) <= 1  # at most a cut first line


async def test_sniff_refuses_what_is_no_ss2_command(sim: Sim) -> None:
    result = await diag("sniff", "--config", str(sim.config), "--send", "hello", "--seconds", "1")

    assert result.rc == 1
    assert "not an SS2 command" in result.err


def test_load_capture_names_the_bad_line(tmp_path: Path) -> None:
    good = tmp_path / "good.cap"
    good.write_text(
        "# tablectl capture 1\n\n0.0 tx 2a580d0a\n"
        "0.5 rx 2a583b313b3030313b20203b303b3134303b300d0a\n",
        encoding="utf-8",
    )
    records = load_capture(good)
    assert [r.direction for r in records] == ["tx", "rx"]
    assert Decoder().feed(rx_bytes(records)) == [Status(1, 1, None, 0, 140, 0)]

    bad = tmp_path / "bad.cap"
    bad.write_text("0.0 rx 2a58\n0.1 sideways 2a\n", encoding="utf-8")
    with pytest.raises(Exception, match=r"bad\.cap:2: expected"):
        load_capture(bad)
    backwards = tmp_path / "backwards.cap"
    backwards.write_text("1.0 rx 2a\n0.5 rx 2a\n", encoding="utf-8")
    with pytest.raises(Exception, match="goes backwards"):
        load_capture(backwards)


# --- selftest -----------------------------------------------------------------------------------


async def test_selftest_refuses_outside_state_6_and_says_how(sim: Sim) -> None:
    await wait_until(lambda: sim.model.state == 2, 5.0, what="the simulator to reach state 2")
    result = await diag("selftest", "wheel", "--config", str(sim.config))

    assert result.rc == 1
    assert "only in state 6" in result.err
    assert "--power-down" in result.err


async def test_selftest_with_power_down_passes_with_code_0(sim: Sim) -> None:
    await wait_until(lambda: sim.model.state == 2, 5.0, what="the simulator to reach state 2")
    result = await diag("selftest", "--config", str(sim.config), "--power-down")

    assert result.rc == 0, result.err
    assert sim.model.state == 6
    assert "   0  ok      ok" in result.out
    assert "sent *P 0" in result.out
    assert "self-test PASSED" in result.out


async def test_selftest_reports_fault_codes_with_meanings(faulty_sim: Sim) -> None:
    # Past the power-up silence (also state 6), then the *F 5 fault powered it down.
    await wait_until(
        lambda: faulty_sim.model.state == 2, 5.0, what="the simulator to reach state 2"
    )
    await wait_until(
        lambda: faulty_sim.model.state == 6, 5.0, what="the simulator to reach state 6"
    )
    result = await diag("selftest", "--config", str(faulty_sim.config), "--settle", "0.3", "--json")

    assert result.rc == 1
    (report,) = result.json_lines()
    assert report["ok"] is False
    assert report["codes"] == [{"code": 5, "ok": False, "meaning": "motor fault"}]


# --- the port held by the service ---------------------------------------------------------------


async def test_a_port_held_by_the_service_gives_a_clear_message(sim: Sim, tmp_path: Path) -> None:
    held = SerialStream(str(sim.link), exclusive=True)  # what the running service holds
    await held.open()
    try:
        probe = await diag("probe", "--config", str(sim.config), "--seconds", "0.5")
        fill_journal(tmp_path / "journal.sqlite", uniform_spins(74, seed=1))
        stats = await diag("stats", "--config", str(sim.config), "--device", "wheel")
    finally:
        await held.close()

    assert probe.rc == 1
    assert f"the table service is holding {sim.link}" in probe.err
    assert "use `diag stats` on the journal" in probe.err
    assert stats.rc == 1
    assert "chi-square = " in stats.out  # the journal part still comes
    assert "the table service is holding" in stats.err


# --- stats --------------------------------------------------------------------------------------

EUROPEAN = list(range(37))


def uniform_spins(rounds: int, seed: int) -> list[int]:
    """Every number ``rounds // 37`` times, in a shuffled order."""
    spins = EUROPEAN * (rounds // 37)
    random.Random(seed).shuffle(spins)
    return spins


def fill_journal(path: Path, numbers: Sequence[int | str], voids: int = 0) -> None:
    from tablectl.controller.journal import Journal  # noqa: PLC0415

    records: list[dict[str, Any]] = []
    for i, number in enumerate(numbers, start=1):
        records.append(
            {
                "type": "outcome",
                "ts": f"2026-11-30T10:{i // 60 % 60:02d}:{i % 60:02d}Z",
                "game": "roulette",
                "round": f"ROU-D1-{i:06d}",
                "status": "settled",
                "reason": None,
                "result": {"number": number, "color": "red", "revolutions": 6},
            }
        )
    for i in range(voids):
        records.append(
            {
                "type": "outcome",
                "ts": "2026-11-30T11:00:00Z",
                "game": "roulette",
                "round": f"ROU-D1-V{i}",
                "status": "void",
                "reason": "misspin",
                "result": None,
            }
        )
    with Journal(path, "ROU-D1") as journal:
        journal.append([{"type": "round_open", "ts": "2026-11-30T09:59:59Z"}, *records])


@pytest.fixture
def table(tmp_path: Path) -> Path:
    return write_config(tmp_path / "table.toml", "/dev/null-wheel", tmp_path / "journal.sqlite")


async def test_stats_uniform_journal_is_not_flagged(table: Path, tmp_path: Path) -> None:
    fill_journal(tmp_path / "journal.sqlite", uniform_spins(370, seed=5), voids=3)
    result = await diag("stats", "--config", str(table), "--json")

    assert result.rc == 0, result.err
    (doc,) = result.json_lines()
    stats = doc["journal_stats"]
    assert doc["window"]["spins"] == 370
    assert doc["window"]["voids_skipped"] == 3
    assert stats["chi_square"]["value"] == 0.0
    assert stats["chi_square"]["p_value"] == 1.0
    assert not any(f["flagged"] for f in stats["frequencies"])
    assert stats["serial_correlation"]["by_number"]["flagged"] is False
    assert stats["flagged"] is False


async def test_stats_biased_journal_flags_the_number_and_chi_square(
    table: Path, tmp_path: Path
) -> None:
    spins = uniform_spins(370, seed=5) + [17] * 30
    random.Random(9).shuffle(spins)
    fill_journal(tmp_path / "journal.sqlite", spins)
    result = await diag("stats", "--config", str(table))

    assert result.rc == 0, result.err
    assert "numbers beyond 3 sigma: 17 (40," in result.out
    assert "FLAGGED" in result.out
    doc = (await diag("stats", "--config", str(table), "--json")).json_lines()[0]
    stats = doc["journal_stats"]
    assert [f["number"] for f in stats["frequencies"] if f["flagged"]] == [17]
    assert stats["chi_square"]["flagged"] is True
    assert stats["chi_square"]["p_value"] < 1e-4


async def test_stats_last_n_windows_out_an_old_bias(table: Path, tmp_path: Path) -> None:
    fill_journal(tmp_path / "journal.sqlite", [17] * 60 + uniform_spins(370, seed=5))
    everything = (await diag("stats", "--config", str(table), "--json")).json_lines()[0]
    recent = (await diag("stats", "--config", str(table), "--last", "370", "--json")).json_lines()[
        0
    ]

    assert everything["journal_stats"]["flagged"] is True
    assert recent["window"]["spins"] == 370
    assert recent["window"]["first"]["round"] == "ROU-D1-000061"
    assert recent["journal_stats"]["chi_square"]["flagged"] is False


async def test_stats_serial_correlation_catches_a_sequence(table: Path, tmp_path: Path) -> None:
    fill_journal(tmp_path / "journal.sqlite", EUROPEAN * 10)  # 0, 1, 2, ... 36, 0, 1, ...
    doc = (await diag("stats", "--config", str(table), "--json")).json_lines()[0]
    serial = doc["journal_stats"]["serial_correlation"]["by_number"]

    assert doc["journal_stats"]["chi_square"]["flagged"] is False  # perfectly uniform counts
    assert serial["r"] > 0.8
    assert serial["flagged"] is True


async def test_stats_reads_the_journal_while_the_service_writes_it(
    table: Path, tmp_path: Path
) -> None:
    from tablectl.controller.journal import Journal  # noqa: PLC0415

    fill_journal(tmp_path / "journal.sqlite", uniform_spins(74, seed=2))
    with Journal(tmp_path / "journal.sqlite", "ROU-D1"):  # the service has it open (WAL)
        result = await diag("stats", "--config", str(table), "--json")
    assert result.rc == 0, result.err
    assert result.json_lines()[0]["window"]["spins"] == 74


async def test_stats_without_a_journal_is_a_one_line_error(table: Path) -> None:
    result = await diag("stats", "--config", str(table))
    assert result.rc == 1
    assert result.err.startswith("tablectl diag stats: ")
    assert "no such journal file" in result.err


async def test_stats_asks_the_wheel_for_its_own_figures(sim: Sim, tmp_path: Path) -> None:
    # One result on the wheel's books.
    await wait_until(lambda: sim.model.state == 5, 5.0, what="the simulator to reach state 5")
    # Power it down (state 6) with the sniffer; *w and *W answer only in states 5 and 6.
    sniff = await diag("sniff", "--config", str(sim.config), "--send", "*P 0", "--seconds", "0.2")
    assert sniff.rc == 0, sniff.err
    fill_journal(tmp_path / "journal.sqlite", uniform_spins(37, seed=1))
    result = await diag("stats", "--config", str(sim.config), "--device", "wheel", "--json")

    assert result.rc == 0, result.err
    device = result.json_lines()[0]["device"]
    assert device["error"] is None
    assert device["chi_square"] is not None
    assert len(device["counts"]) == 37
    assert sum(device["counts"].values()) == len(sim.model.results)
    assert device["table_stats"]["spins"] == len(sim.model.results)


# --- ports --------------------------------------------------------------------------------------


async def test_ports_marks_the_configured_pty(sim: Sim) -> None:
    result = await diag("ports", "--config", str(sim.config), "--json")

    assert result.rc == 0, result.err
    (doc,) = result.json_lines()
    (wheel,) = doc["configured"]
    assert wheel["device"] == "wheel"
    assert wheel["port"] == str(sim.link)
    assert wheel["resolved"] == sim.pty
    assert wheel["exists"] is True
    assert isinstance(doc["usb"], list)  # with or without libusb: listed, or a note, no crash
    human = await diag("ports", "--config", str(sim.config))
    assert "configured devices:" in human.out
    rows = [line.split() for line in human.out.splitlines() if line.startswith("wheel ")]
    assert rows == [
        [
            "wheel",
            "cammegh-ss2",
            str(sim.link),
            sim.pty,
            "present",
            "not",
            "enumerated",
            "(pty",
            "or",
            "other)",
        ]
    ]


async def test_unknown_device_lists_the_configured_ones(table: Path) -> None:
    result = await diag("probe", "shoe", "--config", str(table))
    assert result.rc == 1
    assert "no device 'shoe' (configured: wheel)" in result.err


# --- other stream drivers: listen-only through the driver's own hooks ----------------------------


async def test_probe_listens_to_a_serial_shoe_through_its_driver(tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    config = tmp_path / "bac.toml"
    config.write_text(
        f"""[table]
id = "BAC-D1"
game = "baccarat"
[journal]
path = "{tmp_path / "j.sqlite"}"
[[devices]]
id = "shoe"
driver = "serial-shoe"
port = "{os.ttyname(slave)}"
""",
        encoding="utf-8",
    )

    out, stop = io.StringIO(), asyncio.Event()

    async def deal() -> None:
        try:
            # "listening only" is written with the port open (and flushed by pyserial's open).
            await wait_until(lambda: "listening only" in out.getvalue(), what="the probe to listen")
            os.write(master, b"KH\r\n")
            await wait_until(lambda: "CardScanned" in out.getvalue(), what="the card decoded")
        finally:
            stop.set()

    try:
        dealer = asyncio.create_task(deal())
        result = await diag("probe", "shoe", "--config", str(config), stop=stop, out=out)
        await dealer
    finally:
        os.close(master)
        os.close(slave)

    assert result.rc == 0, result.err
    assert "a card shoe has no query protocol" in result.out
    assert "listening only" in result.out
    assert "event    CardScanned card=KH barcode=KH" in result.out
