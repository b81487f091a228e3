"""``tablectl diag`` against the shuffler simulator on a real pty (identify, deck check, sniff),
the shoe's listen-only message, and the plug-in registry.

Like ``test_diag.py`` for the SS2: the simulator runs in-process (``SimShuffler`` behind
``serve_pty``), time-lapsed, and the commands run through
:func:`tablectl.controller.tools.diag.cli.run_async` with a table config pointing at the pty through
a ``--link`` symlink.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.config import DeviceConfig
from tablectl.controller.tools.diag.cli import add_arguments, run_async
from tablectl.controller.tools.diag.devices.generic import ShoeDiagnostics, StreamDriverDiagnostics
from tablectl.controller.tools.diag.devices.plugins import get_diagnostics
from tablectl.controller.tools.diag.devices.shuffler import ShufflerDiagnostics, ShufflerLiveDecoder
from tablectl.drivers.shuffler.driver import ShufflerSettings
from tablectl.drivers.shuffler.protocol import (
    REFERENCE_CODEC,
    QueryStatus,
    ShuffleDone,
    ShuffleStart,
    Status,
    encode_command,
    encode_message,
)
from tablectl.simulators.serve import serve_pty
from tablectl.simulators.shuffler import FaultSpec, SimShuffler
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(15)

SPEED = 20.0
"""Simulator time-lapse: an 8-deck shuffle (10 device seconds) takes about half a second."""


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


async def diag(*argv: str) -> Result:
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    rc = await run_async(args, out=out, err=err)
    return Result(rc, out.getvalue(), err.getvalue())


@dataclass
class Sim:
    model: SimShuffler
    config: Path


def write_config(path: Path, port: str, options: str = "") -> Path:
    path.write_text(
        f"""[table]
id = "BAC-D1"
game = "baccarat"
[journal]
path = "{path.parent / "journal.sqlite"}"
[[devices]]
id = "shuffler"
driver = "tablectl-shuffler"
port = "{port}"
{options}
""",
        encoding="utf-8",
    )
    return path


async def serve(tmp_path: Path, model: SimShuffler) -> AsyncIterator[Sim]:
    link = tmp_path / "shuffler"
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    try:
        await asyncio.wait_for(ready, 5)
        yield Sim(model, write_config(tmp_path / "table.toml", str(link)))
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


def sim_fixture(**kwargs: Any) -> Any:
    @pytest.fixture
    async def running(tmp_path: Path) -> AsyncIterator[Sim]:
        async for sim in serve(tmp_path, SimShuffler(seed=3, speed=SPEED, **kwargs)):
            yield sim

    return running


sim = sim_fixture()
auto_sim = sim_fixture(auto=2.0)
"""The dealer presses start 2 device seconds (0.1 s) after the shuffler is idle or ready."""
missing_sim = sim_fixture(auto=2.0, faults=[FaultSpec("missing_card", 1, ("QS",))])
faulted_sim = sim_fixture(auto=2.0, faults=[FaultSpec("fault", 1, 7)])


# --- probe: VERS + STAT, then live decoding ------------------------------------------------------


async def test_probe_identifies_the_shuffler_with_vers_and_stat(sim: Sim) -> None:
    result = await diag("probe", "shuffler", "--config", str(sim.config), "--seconds", "0.3")

    assert result.rc == 0, result.err
    assert "   model: TS-1" in result.out
    assert "firmware: 1.0.0" in result.out
    assert "  serial: SIM00003" in result.out
    assert "  status: idle, door closed, 416 cards, faults none, last shuffle #0" in result.out
    assert "\nidentified\n" in result.out


async def test_probe_json_shows_a_shuffle_decoded_with_its_events(auto_sim: Sim) -> None:
    result = await diag("probe", "--config", str(auto_sim.config), "--seconds", "1.5", "--json")

    assert result.rc == 0, result.err
    lines = result.json_lines()
    assert lines[0]["type"] == "identity"
    assert lines[0]["identified"] is True
    assert lines[0]["facts"]["model"] == "TS-1"
    texts = [line["text"] for line in lines[1:]]
    assert "shuffle #1 started (8 decks)" in texts
    assert any(t.startswith("ShuffleStarted") for t in texts)
    assert "shuffle #1 done: 416 cards, missing none, extra none" in texts
    assert any(t.startswith("ShuffleCompleted") for t in texts)
    # diag sends no STAT polls, so the interpreter must not call the shuffler silent.
    assert not any(t.startswith("DeviceUnavailable") for t in texts)


async def test_probe_reports_active_faults_as_warnings(faulted_sim: Sim) -> None:
    await wait_until(
        lambda: 7 in faulted_sim.model.active_faults, 5.0, what="the simulator to get to: fault 7"
    )
    result = await diag("probe", "--config", str(faulted_sim.config), "--seconds", "0.2")

    assert result.rc == 0, result.err
    assert "WARNING: fault 7 active: firmware or memory integrity error" in result.out


def test_live_decoder_without_timers_and_with_errors() -> None:
    decoder = ShufflerLiveDecoder("shuffler", ShufflerSettings(), REFERENCE_CODEC)
    data = (
        encode_message(Status("idle", False, 416, (), 0))
        + encode_message(ShuffleStart(1, 8))
        + b"\x02SHDN;1;416;-;-\x0300\r\n"  # a bad checksum
        + encode_message(ShuffleDone(1, 416))
    )
    lines = decoder.feed(data, 100.0)

    kinds = [(d.kind, d.text) for d in lines]
    assert ("message", "shuffle #1 started (8 decks)") in kinds
    assert any(k == "error" and "checksum" in t for k, t in kinds)
    assert any(k == "event" and t.startswith("ShuffleCompleted") for k, t in kinds)
    assert decoder.tick(1000.0) == []  # no "silent" verdict: diag never polls


async def test_probe_says_when_the_service_holds_the_shuffler(sim: Sim, tmp_path: Path) -> None:
    from tablectl.drivers.transports.serial import SerialStream  # noqa: PLC0415

    held = SerialStream(str(tmp_path / "shuffler"), exclusive=True)  # as the service opens it
    await held.open()
    try:
        result = await diag("probe", "--config", str(sim.config), "--seconds", "0.2")
    finally:
        await held.close()

    assert result.rc == 1
    assert "the table service is holding" in result.err


# --- selftest: the deck check --------------------------------------------------------------------


async def test_selftest_deck_check_passes_on_a_complete_deck(sim: Sim) -> None:
    result = await diag("selftest", "--config", str(sim.config))

    assert result.rc == 0, result.err
    assert "deck complete: 416 cards, none missing, none extra" in result.out
    assert "self-test PASSED" in result.out


async def test_selftest_reports_missing_cards_and_a_wrong_count(missing_sim: Sim) -> None:
    await wait_until(
        lambda: missing_sim.model.state == "ready",
        5.0,
        what="the simulator to get to: READY after shuffle 1",
    )
    result = await diag("selftest", "--config", str(missing_sim.config), "--json")

    assert result.rc == 1
    (report,) = result.json_lines()
    assert report["ok"] is False
    codes = {c["code"]: c for c in report["codes"]}
    assert codes[100]["meaning"].startswith("counted 415 cards, expected 416")
    assert codes[101]["meaning"] == "missing: QS"
    assert not codes[100]["ok"]


async def test_selftest_lists_latched_faults_instead_of_checking(faulted_sim: Sim) -> None:
    await wait_until(
        lambda: 7 in faulted_sim.model.active_faults, 5.0, what="the simulator to get to: fault 7"
    )
    result = await diag("selftest", "--config", str(faulted_sim.config))

    assert result.rc == 1
    assert "   7  FAULT   firmware or memory integrity error" in result.out
    assert "clear them first" in result.out


async def test_selftest_refuses_while_shuffling(auto_sim: Sim) -> None:
    await wait_until(
        lambda: auto_sim.model.state == "shuffling", 5.0, what="the simulator to get to: shuffling"
    )
    result = await diag("selftest", "--config", str(auto_sim.config))

    assert result.rc == 1
    assert "the shuffler is shuffling" in result.err


# --- sniff: shuffler commands by name ------------------------------------------------------------


async def test_sniff_sends_shuffler_commands_by_name(sim: Sim) -> None:
    result = await diag(
        "sniff", "--config", str(sim.config), "--send", "STAT", "--seconds", "0.3", "--json"
    )

    assert result.rc == 0, result.err
    lines = result.json_lines()
    sent = [line for line in lines if line.get("dir") == "tx"]
    assert sent, lines
    assert bytes.fromhex(sent[0]["hex"]) == encode_command(QueryStatus())
    received = b"".join(bytes.fromhex(line["hex"]) for line in lines if line.get("dir") == "rx")
    assert b"STAT;IDLE;CLSD;416;-;0" in received

    bad = await diag("sniff", "--config", str(sim.config), "--send", "hello", "--seconds", "0.1")
    assert bad.rc == 1
    assert "not a shuffler command" in bad.err


# --- the registry --------------------------------------------------------------------------------


def test_the_shuffler_and_shoes_get_their_plugins() -> None:
    shuffler = DeviceConfig(id="s", driver="tablectl-shuffler", port="/dev/ttyUSB3")
    assert isinstance(get_diagnostics(shuffler, ShufflerSettings()), ShufflerDiagnostics)
    shoe = DeviceConfig(id="shoe", driver="serial-shoe", port="/dev/ttyUSB4")
    from tablectl.drivers.shoe.driver import ShoeSettings  # noqa: PLC0415

    assert isinstance(get_diagnostics(shoe, ShoeSettings()), ShoeDiagnostics)


def test_the_big_wheel_is_listen_only_when_its_driver_is_there() -> None:
    driver = pytest.importorskip("tablectl.drivers.bigwheel.driver")
    device = DeviceConfig(id="wheel", driver="tablectl-bigwheel", port="/dev/ttyUSB5")
    plugin = get_diagnostics(device, driver.BigWheelSettings())
    assert type(plugin) is StreamDriverDiagnostics
