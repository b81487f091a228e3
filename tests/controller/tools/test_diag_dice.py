"""``tablectl diag`` against the dice simulator on a real pty: identify (``IDNT``, ``STAT``), the
self-test (``TEST``), live decoding and ``sniff --send``.

Like ``test_diag_shuffler.py``: the simulator runs in-process (``SimDice`` behind ``serve_pty``),
time-lapsed, and the commands run through :func:`tablectl.controller.tools.diag.cli.run_async`
with a table config pointing at the pty through a ``--link`` symlink. Where a test needs the unit
in a state, it waits for that state (the model's), never for a time.
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
from tablectl.controller.tools.diag.devices.dice import DiceDiagnostics, DiceLiveDecoder
from tablectl.controller.tools.diag.devices.plugins import get_diagnostics
from tablectl.drivers.dice.driver import DiceSettings
from tablectl.drivers.dice.protocol import (
    BettingOpen,
    QueryStatus,
    Result,
    Rolling,
    encode_command,
    encode_message,
)
from tablectl.simulators.dice import FaultSpec, SimDice
from tablectl.simulators.serve import serve_pty
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(20)


@dataclass
class Report:
    rc: int
    out: str
    err: str

    def json_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.splitlines() if line.strip()]


async def diag(*argv: str) -> Report:
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    rc = await run_async(parser.parse_args(list(argv)), out=out, err=err)
    return Report(rc, out.getvalue(), err.getvalue())


@dataclass
class Sim:
    model: SimDice
    config: Path


async def serve(tmp_path: Path, model: SimDice, options: str = "") -> AsyncIterator[Sim]:
    link = tmp_path / "dice"
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_pty(model, on_ready=ready.set_result, link_path=link))
    config = tmp_path / "table.toml"
    config.write_text(
        f"""[table]
id = "SICBO-D1"
game = "baccarat"
[journal]
path = "{tmp_path / "journal.sqlite"}"
[[devices]]
id = "dice"
driver = "tablectl-dice"
port = "{link}"
{options}
""",
        encoding="utf-8",
    )
    try:
        await asyncio.wait_for(ready, 5)
        yield Sim(model, config)
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


def sim_fixture(options: str = "", **kwargs: Any) -> Any:
    @pytest.fixture
    async def running(tmp_path: Path) -> AsyncIterator[Sim]:
        kwargs.setdefault("betting_seconds", None)  # betting stays open: a quiet unit
        kwargs.setdefault("speed", 20.0)
        model = SimDice(seed=3, **kwargs)
        async for sim in serve(tmp_path, model, options):
            yield sim

    return running


sim = sim_fixture()
duel_sim = sim_fixture(
    'dice = 3\ncolors = ["red", "blue", "green"]', dice=2, colors=["red", "blue"]
)
rolling_sim = sim_fixture(betting_seconds=0.5, shake_seconds=3600)
"""Betting closes after 0.5 device seconds and the shake never ends: always mid-game."""
faulted_sim = sim_fixture(
    betting_seconds=0.5, roll_delay=0.1, faults=[FaultSpec("motion_fault", 1, 3600)]
)
cycling_sim = sim_fixture(betting_seconds=2.0, roll_delay=0.5, shake_seconds=1.0, speed=50.0)
"""A game every 8.5 device seconds, 0.17 s of real time: a one-second probe sees several."""


# --- probe: IDNT + STAT, then live decoding ------------------------------------------------------


async def test_probe_identifies_the_unit(sim: Sim) -> None:
    result = await diag("probe", "dice", "--config", str(sim.config), "--seconds", "0.2")

    assert result.rc == 0, result.err
    assert "   model: TDS-1" in result.out
    assert "firmware: 1.0.0" in result.out
    assert "  serial: SIM00003" in result.out
    assert "    dice: 3 (not told apart)" in result.out
    assert "  status: ready, game #1, last roll #0, faults none" in result.out
    assert "\nidentified\n" in result.out


async def test_probe_warns_when_the_unit_is_not_the_table_s(duel_sim: Sim) -> None:
    result = await diag("probe", "--config", str(duel_sim.config), "--seconds", "0.2")

    assert result.rc == 0, result.err
    assert "    dice: 2 (red,blue)" in result.out
    assert "WARNING: the table is configured for 3 dice" in result.out
    assert "WARNING: the table's colours are red,blue,green" in result.out


async def test_probe_json_shows_a_game_decoded_with_its_events(cycling_sim: Sim) -> None:
    result = await diag("probe", "--config", str(cycling_sim.config), "--seconds", "1", "--json")

    assert result.rc == 0, result.err
    lines = result.json_lines()
    assert lines[0]["type"] == "identity"
    assert lines[0]["facts"]["model"] == "TDS-1"
    texts = [line["text"] for line in lines[1:]]
    assert any(t.startswith("Rolling: game ") for t in texts), texts
    assert any(t.startswith("DiceRollStarted") for t in texts)
    assert any(t.startswith("DiceRead dice=") for t in texts)
    # diag sends no STAT polls, so the interpreter must not call the unit silent.
    assert not any(t.startswith("DeviceUnavailable") for t in texts)


def test_live_decoder_shows_messages_events_and_errors() -> None:
    decoder = DiceLiveDecoder("dice", DiceSettings())
    data = (
        encode_message(BettingOpen(4))
        + encode_message(Rolling(4, 9))
        + b"\x02RSLT;4;9;1,2,3;-;99;-\x0300\r\n"  # a bad checksum
        + encode_message(Result(4, 9, (1, 2, 3)))
    )
    kinds = [(d.kind, d.text) for d in decoder.feed(data, 100.0)]
    assert ("message", "BettingOpen: game 4") in kinds
    assert any(k == "error" and "checksum" in t for k, t in kinds)
    assert ("event", "DiceRead dice=(1, 2, 3) confidence=1.0") in kinds
    assert decoder.tick(1000.0) == []


# --- selftest: TEST ------------------------------------------------------------------------------


async def test_selftest_passes(sim: Sim) -> None:
    result = await diag("selftest", "--config", str(sim.config))

    assert result.rc == 0, result.err
    assert "passed: shaker ok, reader ok, read " in result.out
    assert "self-test PASSED" in result.out


async def test_selftest_is_refused_mid_game(rolling_sim: Sim) -> None:
    await wait_until(lambda: rolling_sim.model.state == "rolling", what="the roll")
    result = await diag("selftest", "--config", str(rolling_sim.config))

    assert result.rc == 1
    assert "refused the self-test: NAK STATE" in result.err


async def test_selftest_lists_active_faults_instead_of_testing(faulted_sim: Sim) -> None:
    await wait_until(lambda: 1 in faulted_sim.model.active_faults, what="the motion fault")
    result = await diag("selftest", "--config", str(faulted_sim.config), "--json")

    assert result.rc == 1
    (report,) = result.json_lines()
    assert [c["code"] for c in report["codes"]] == [1]
    assert report["codes"][0]["meaning"].startswith("shaker motion fault")


# --- sniff: commands by name ---------------------------------------------------------------------


async def test_sniff_sends_dice_commands_by_name(sim: Sim) -> None:
    argv = ("sniff", "--config", str(sim.config), "--seconds", "0.3", "--json")
    result = await diag(*argv, "--send", "stat")

    assert result.rc == 0, result.err
    lines = result.json_lines()
    sent = [line for line in lines if line.get("dir") == "tx"]
    assert bytes.fromhex(sent[0]["hex"]) == encode_command(QueryStatus())
    received = b"".join(bytes.fromhex(line["hex"]) for line in lines if line.get("dir") == "rx")
    assert b"STAT;READY;1;0;-" in received

    bad = await diag("sniff", "--config", str(sim.config), "--send", "SHAKE", "--seconds", "0.1")
    assert bad.rc == 1
    assert "not a dice command" in bad.err


def test_the_dice_unit_gets_its_plugin() -> None:
    device = DeviceConfig(id="dice", driver="tablectl-dice", port="/dev/ttyUSB6")
    assert isinstance(get_diagnostics(device, DiceSettings()), DiceDiagnostics)
