"""``tablectl watch`` and ``tablectl demo`` on a terminal (a pseudo-terminal of a known size): the
panels, every line within the width, no JSON; the demo's Ctrl-C summary; the drum presenter that
confirms a hold nobody else would."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import re
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from rich.cells import cell_len

from tablectl.controller.lab.tables import start_draw_table
from tablectl.controller.service.app import open_table
from tests.support.mosquitto import MosquittoProcess, free_port
from tests.support.waiting import wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.timeout(120)
CLI = [sys.executable, "-m", "tablectl"]
_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]")


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1", **extra}


class Terminal:
    """A command on a pseudo-terminal of ``columns`` × ``rows``; what it wrote, escapes removed."""

    def __init__(self, command: list[str], *, columns: int, rows: int, cwd: Path) -> None:
        self.columns = columns
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        env = _env(COLUMNS=str(columns), LINES=str(rows), TERM="xterm-256color")
        self.process = subprocess.Popen(
            command, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=cwd, close_fds=True
        )
        os.close(slave)
        self._master = master
        self.raw = b""

    @property
    def text(self) -> str:
        return _ESCAPES.sub("", self.raw.decode("utf-8", "replace"))

    def lines(self) -> list[str]:
        """Every line as drawn (a redraw returns the cursor with CR: each piece is a line)."""
        return [line for line in re.split(r"[\r\n]", self.text) if line.strip()]

    def read_until(self, done: Callable[[str], bool], timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while not done(self.text):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; the terminal shows:\n{self.text[-3000:]}")
            if not self._read(0.1) and self.process.poll() is not None:
                raise AssertionError(f"exited {self.process.returncode}:\n{self.text[-3000:]}")

    def finish(self, timeout: float = 60) -> int:
        deadline = time.monotonic() + timeout
        while self.process.poll() is None or self._read(0):
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"did not exit:\n{self.text[-3000:]}")
            self._read(0.1)
        os.close(self._master)
        return self.process.returncode

    def _read(self, wait: float) -> bool:
        ready, _, _ = select.select([self._master], [], [], wait)
        if not ready:
            return False
        try:
            data = os.read(self._master, 65536)
        except OSError:  # the other side closed (Linux: EIO)
            return False
        self.raw += data
        return bool(data)


def _publish(mosquitto: MosquittoProcess, messages: list[tuple[str, dict[str, object]]]) -> None:
    import aiomqtt  # noqa: PLC0415 - only this test publishes by hand

    async def send() -> None:
        async with aiomqtt.Client(mosquitto.host, mosquitto.port) as client:
            for topic, payload in messages:
                await client.publish(topic, json.dumps(payload), qos=1, retain=True)

    asyncio.run(send())


@pytest.mark.broker
def test_watch_on_a_terminal_shows_a_panel_per_table_within_its_width(
    mosquitto: MosquittoProcess, tmp_path: Path
) -> None:
    state = {"game": "roulette", "phase": "open", "round": "ROU-W-000002", "rounds": 2}
    _publish(
        mosquitto,
        [
            ("it/ROU-W/status", {"state": "online", "table": "ROU-W"}),
            ("it/ROU-W/state", {**state, "faults": [], "outbox": {"pending": 0}}),
            ("it/ROU-W/devices/wheel", {"device": "wheel", "available": True, "faults": []}),
            (
                "it/ROU-W/outcome",
                {
                    "game": "roulette",
                    "round": "ROU-W-000001",
                    "status": "settled",
                    "result": {"number": 17, "color": "black", "revolutions": 6},
                },
            ),
        ],
    )
    terminal = Terminal(
        [*CLI, "watch", "--url", mosquitto.url, "--prefix", "it"], columns=70, rows=30, cwd=tmp_path
    )
    try:
        terminal.read_until(lambda text: "ROU-W roulette" in text and "(6 turns)" in text)
        terminal.read_until(lambda text: "connected to mqtt://" in text)
        _publish(mosquitto, [("it/ROU-W/state", {**state, "faults": ["ss2_fault_5"]})])
        terminal.read_until(lambda text: "faults ss2_fault_5" in text)
    finally:
        terminal.process.send_signal(signal.SIGINT)
        code = terminal.finish()
    assert code == 0, terminal.text[-2000:]
    lines = terminal.lines()
    assert all(cell_len(line) <= 70 for line in lines), [x for x in lines if cell_len(x) > 70]
    assert any("wheel ● journal ● outbox 0" in line for line in lines)
    assert any(" 17 " in line for line in lines)  # the roulette strip
    assert not any("{" in line for line in lines)
    assert "Traceback" not in terminal.text


def test_watch_on_a_terminal_fails_in_one_line(tmp_path: Path) -> None:
    port = free_port()
    terminal = Terminal(
        [*CLI, "watch", "--url", f"mqtt://127.0.0.1:{port}"], columns=100, rows=20, cwd=tmp_path
    )
    assert terminal.finish() == 1
    assert terminal.lines()[-1].startswith(f"tablectl watch: cannot reach mqtt://127.0.0.1:{port}")
    assert "Traceback" not in terminal.text


@pytest.mark.slow
def test_demo_on_a_terminal_draws_panels_records_them_and_sums_up(tmp_path: Path) -> None:
    picture = tmp_path / "demo.svg"
    command = [*CLI, "demo", "--tables", "roulette,baccarat", "--rounds", "2", "--speed", "20"]
    terminal = Terminal([*command, "--record", str(picture)], columns=80, rows=24, cwd=tmp_path)
    assert terminal.finish(timeout=100) == 0, terminal.text[-3000:]
    lines = terminal.lines()
    assert all(cell_len(line) <= 80 for line in lines), [x for x in lines if cell_len(x) > 80]
    assert not any("{" in line for line in lines), "raw JSON on the screen"
    text = terminal.text
    assert "ROU-DEMO roulette" in text
    assert "BAC-DEMO baccarat" in text
    assert "wheel ● journal ●" in text
    assert "shoe ● shuffler ● journal ●" in text
    summary = text[text.index("tablectl demo: 2 tables") :]
    rounds = [int(n) for n in re.findall(r"DEMO \w+: (\d+) rounds", summary)]
    assert len(rounds) == 2, summary  # --rounds counts per table: each showed two
    assert min(rounds) >= 2, summary
    assert "ROU-DEMO roulette: " in summary
    assert "BAC-DEMO baccarat: " in summary
    (folder,) = (tmp_path / "demo-journals").iterdir()  # kept, one folder per run
    assert (folder / "ROU-DEMO.sqlite").is_file()
    assert (folder / "BAC-DEMO.sqlite").is_file()
    assert "journal_not_keyed" in (folder / "demo.log").read_text("utf-8")  # logs: the file
    svg = picture.read_text("utf-8")
    assert svg.startswith("<svg")
    assert "ROU-DEMO" in svg
    assert "cdnjs" not in svg


@pytest.mark.slow
def test_demo_ctrl_c_prints_the_summary(tmp_path: Path) -> None:
    demo = subprocess.Popen(
        [*CLI, "demo", "--tables", "roulette", "--speed", "20", "--state-dir", "journals"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=tmp_path,
    )
    assert demo.stdout is not None
    try:
        for line in demo.stdout:  # the line view (not a terminal): wait for a second outcome
            if " ROU-DEMO #000002 " in line:
                break
        demo.send_signal(signal.SIGINT)
        out, err = demo.communicate(timeout=60)
    finally:
        demo.kill()
    assert demo.returncode == 0, err[-2000:]
    summary = out[out.index("tablectl demo: 1 tables") :].splitlines()
    assert summary[1].startswith("ROU-DEMO roulette: ")
    assert summary[1].endswith(f"; journal {Path('journals') / 'ROU-DEMO.sqlite'}")
    assert summary[2].startswith("journals kept in journals ")
    assert "Traceback" not in err
    check = subprocess.run(
        [*CLI, "verify", "journals/ROU-DEMO.sqlite"],
        capture_output=True,
        text=True,
        env=_env(),
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


@pytest.mark.broker
async def test_the_drum_presenter_confirms_a_hold_once_the_fault_cleared(
    tmp_path: Path, mosquitto: MosquittoProcess
) -> None:
    # The drum falls silent mid-draw for longer than the table's heartbeat timeout: the round is
    # held for a supervisor (device_fault). The lab's presenter is that supervisor: once the drum
    # is back it confirms, and the draw settles instead of waiting for good.
    try:
        await _hold_and_confirm(tmp_path, mosquitto)
    except* _Done:  # raised in the task group, which then cancels the simulated drum too
        pass


class _Done(Exception):  # noqa: N818 - not an error: the test is over
    pass


async def _hold_and_confirm(tmp_path: Path, mosquitto: MosquittoProcess) -> None:
    async with asyncio.TaskGroup() as group:
        sim = await start_draw_table(
            group,
            tmp_path / "L7.sqlite",
            table_id="L7-HOLD",
            channel="it-l7-hold",
            speed=50,
            faults=("silence@1=40",),  # 40 drum seconds at 50x: 0.8 s
            prefix="it",
            mqtt_url=mosquitto.url,
            heartbeat_timeout=0.3,
        )
        async with open_table(sim.config, broker=(mosquitto.host, mosquitto.port)) as app:
            runner = group.create_task(app.runner.run())
            host = sim.presenter(app, betting=0.05, mixing=0.05, interval=0.05)
            presenter = group.create_task(host.run())
            try:
                await wait_until(lambda: host.confirmed >= 1, timeout=30, what="a confirmed hold")
                await wait_until(
                    lambda: app.runner.engine.snapshot().get("rounds", 0) >= 2,
                    timeout=30,
                    what="the next round",
                )
            finally:
                for task in (presenter, runner):
                    task.cancel()
            types = [(r["type"], r.get("code"), r.get("status")) for r in app.journal.records()]
        assert ("verdict", "device_fault", None) in types
        assert ("outcome", None, "settled") in types
        raise _Done
