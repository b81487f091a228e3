"""Every long-running command stops in order on SIGINT and SIGTERM (issue 25, item 5).

``run``, ``demo``, ``watch``, ``dashboard``, ``archive`` and ``simulate`` each run as a real
process (``python -m tablectl``, as the script runs them) and get SIGINT or SIGTERM at a random
moment once they took their signals — during startup, while running, and once a second signal
while they stop. Each must end with exit 0, its summary where it has one (``demo``'s per-table
summary, ``run``'s ``power_off`` journaled and flushed), no traceback or asyncio complaint in its
output, and no process of its own left behind: every descendant seen while it ran (polled from
/proc) is gone, and no process names the private ``TMPDIR`` the command was given (the embedded
broker's config lives there). A SIGKILL of the demo takes its embedded Mosquitto with it (the
parent-death signal, :mod:`tablectl.controller.mqtt.children`). docs/operations.md, "Stopping".

The delays are drawn from a seeded generator (``TABLECTL_SIGNAL_SEED`` replays another draw);
every failure message names the seed, the command, the signal and the delay.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tablectl.controller.journal import Journal
from tests.support.mosquitto import MosquittoProcess, find_mosquitto, free_port
from tests.support.processes import start_simulator, write_config

REPO = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("TABLECTL_SIGNAL_SEED", "25"))
pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]
needs_mosquitto = pytest.mark.skipif(find_mosquitto() is None, reason="no mosquitto binary")

MESS = (
    "Traceback",
    "Task was destroyed",
    "coroutine ignored",
    "Exception ignored",
    "was never retrieved",
    "no running event loop",
)
"""What an orderly stop never prints (the issue's report, and asyncio's other complaints)."""
STOP_TIMEOUT = 30.0
"""Seconds a command may take to stop (the slowest, ``run``, flushes for at most 2 s)."""


# --- processes, seen from /proc -----------------------------------------------------------------


@dataclass(frozen=True)
class Proc:
    pid: int
    start: int
    """Start time in clock ticks since boot: a pid used again is another process."""
    cmdline: str


def _stat(pid: int) -> tuple[str, int, int] | None:
    """``(state, ppid, start)`` of ``pid``, or ``None`` once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
        fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
        return fields[0], int(fields[1]), int(fields[19])
    except (OSError, ValueError, IndexError):  # gone, or going while read
        return None


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline")
            .read_bytes()
            .replace(b"\0", b" ")
            .decode("utf-8", "replace")
        )
    except OSError:
        return ""


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _alive(proc: Proc) -> bool:
    """Still running (a zombie is not: it only waits for a parent to reap it)."""
    stat = _stat(proc.pid)
    return stat is not None and stat[2] == proc.start and stat[0] not in ("Z", "X")


def _descendants(root: int) -> list[Proc]:
    children: dict[int, list[int]] = {}
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None:
            children.setdefault(stat[1], []).append(pid)
    found: list[Proc] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        stat = _stat(pid)
        if stat is not None:
            found.append(Proc(pid, stat[2], _cmdline(pid)))
        todo.extend(children.get(pid, []))
    return found


def _naming(text: str) -> list[Proc]:
    """Running processes whose command line contains ``text``."""
    found = []
    for pid in _pids():
        stat = _stat(pid)
        if stat is not None and stat[0] not in ("Z", "X") and text in _cmdline(pid):
            found.append(Proc(pid, stat[2], _cmdline(pid)))
    return found


def _catches_sigterm(pid: int) -> bool:
    """The process has a handler for SIGTERM (``SigCgt``): the command took its signals."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGTERM - 1)))


@dataclass
class Command:
    """``python -m tablectl ARGS`` with its output in files, its descendants polled while it
    runs, and a ``TMPDIR`` of its own."""

    name: str
    args: Sequence[str]
    workdir: Path
    proc: subprocess.Popen[bytes] = field(init=False)
    _seen: dict[tuple[int, int], Proc] = field(init=False, default_factory=dict)
    _lock: threading.Lock = field(init=False, default_factory=threading.Lock)
    _poller: threading.Thread = field(init=False)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(exist_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
            "TMPDIR": str(self.tmp),
        }
        with self.out.open("wb") as out, self.err.open("wb") as err:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "tablectl", *self.args],
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env=env,
                cwd=self.workdir,
            )
        self._poller = threading.Thread(target=self._poll, daemon=True)
        self._poller.start()

    @property
    def tmp(self) -> Path:
        return self.workdir / "tmp"

    @property
    def out(self) -> Path:
        return self.workdir / f"{self.name}.out"

    @property
    def err(self) -> Path:
        return self.workdir / f"{self.name}.err"

    def _poll(self) -> None:
        while self.proc.poll() is None:
            found = _descendants(self.proc.pid)
            with self._lock:
                for proc in found:  # the newest command line: a child seen before its exec
                    if proc.cmdline or (proc.pid, proc.start) not in self._seen:  # had ours
                        self._seen[proc.pid, proc.start] = proc
            time.sleep(0.02)

    def seen(self) -> list[Proc]:
        """Every process seen below the command while it ran."""
        with self._lock:
            return list(self._seen.values())

    def broker(self) -> Proc | None:
        """The embedded Mosquitto it started, once seen."""
        return next((p for p in self.seen() if "mosquitto" in p.cmdline), None)

    def stdout(self) -> str:
        return self.out.read_text(errors="replace")

    def output(self) -> str:
        return self.stdout() + self.err.read_text(errors="replace")

    def wait_for(self, what: str, predicate: Callable[[], object], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not predicate():
            assert self._poller.is_alive() or self.proc.poll() is not None, "the poller died"
            if self.proc.poll() is not None:
                ended = f"{self.name} ended ({self.proc.returncode}) before {what}"
                raise AssertionError(f"{ended}:\n{self.output()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: no {what} in {timeout} s:\n{self.output()}")
            time.sleep(0.01)

    def wait_for_signals(self) -> None:
        """Until the command handles SIGTERM itself (before that, a signal is Python's). One
        that never does (up to 15 s) is signalled anyway: what then happens is the failure."""
        with contextlib.suppress(AssertionError):
            self.wait_for("signal handlers", lambda: _catches_sigterm(self.proc.pid), timeout=15)

    def stop(self, sig: int, *, again: int | None = None) -> int:
        """Send ``sig`` (and ``again`` 0.2 s later, while it stops); its exit code."""
        self.proc.send_signal(sig)
        if again is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=0.2)
            if self.proc.poll() is None:
                self.proc.send_signal(again)
        try:
            return self.proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(
                f"{self.name} did not stop within {STOP_TIMEOUT} s:\n{self.output()[-3000:]}"
            ) from None
        finally:
            self._poller.join(timeout=5)

    def left_behind(self) -> list[Proc]:
        """What the command started and is still running (killed here, so that a failing test
        leaves nothing either)."""
        time.sleep(0.1)  # a child told to stop as its parent ends takes a moment
        deadline = time.monotonic() + 5
        while True:
            left = {p for p in self.seen() if _alive(p)} | set(_naming(str(self.tmp)))
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        for proc in left:
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)
        return sorted(left, key=lambda p: p.pid)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.left_behind()


@contextlib.contextmanager
def command(name: str, args: Sequence[str], workdir: Path) -> Iterator[Command]:
    cmd = Command(name, args, workdir)
    try:
        yield cmd
    finally:
        cmd.kill()


@dataclass(frozen=True)
class Plan:
    """One stop: which signal, after how long (from the moment the command took its signals,
    or from ``after`` in its output), and a second signal while it stops, or none."""

    sig: signal.Signals
    delay: float
    again: signal.Signals | None = None
    after: str | None = None

    def __str__(self) -> str:
        again = f" then {self.again.name}" if self.again else ""
        since = f"{self.after!r}" if self.after else "its signal handlers"
        return f"{self.sig.name}{again} {self.delay:.2f} s after {since} (seed {SEED})"


def plans(name: str, longest: float, *, running: str | None = None) -> list[Plan]:
    """The stops of command ``name``: SIGINT and SIGTERM in turn (which first is drawn), delays
    drawn up to ``longest`` s; the first while it may still be starting, then (with
    ``running``, its output once it runs) one while it runs, and one more with a second signal
    while it stops."""
    rng = random.Random(f"{SEED}:{name}")
    first = rng.choice([signal.SIGINT, signal.SIGTERM])
    other = signal.SIGTERM if first == signal.SIGINT else signal.SIGINT
    twice = rng.choice([signal.SIGINT, signal.SIGTERM])
    found = [Plan(first, round(rng.uniform(0.0, longest), 2))]
    if running is not None:
        found.append(Plan(other, round(rng.uniform(0.0, longest), 2), after=running))
    found.append(
        Plan(
            other if running is None else first,
            round(rng.uniform(0.0, longest), 2),
            again=twice,
            after=running,
        )
    )
    return found


def stopped_in_order(cmd: Command, plan: Plan) -> str:
    """Stop ``cmd`` as ``plan`` says; check the exit, the output and what is left. Its output."""
    cmd.wait_for_signals()
    if (after := plan.after) is not None:
        cmd.wait_for(repr(after), lambda: after in cmd.output())
    time.sleep(plan.delay)
    code = cmd.stop(plan.sig, again=plan.again)
    output = cmd.output()
    what = f"{cmd.name}, {plan}"
    assert code == 0, f"{what}: exit {code}\n{output[-3000:]}"
    mess = [word for word in MESS if word in output]
    assert not mess, f"{what}: {mess} in the output\n{output[-4000:]}"
    left = cmd.left_behind()
    assert not left, f"{what}: left behind {left}"
    return output


# --- the commands -------------------------------------------------------------------------------

ONLINE = " status online"
"""A table's first line in the demo's and watch's view: it has started."""
SUMMARY = re.compile(r"^tablectl demo: \d+ tables, \d+ min \d\d s$", re.MULTILINE)


@needs_mosquitto
def test_demo_stops_in_order_with_its_summary(tmp_path: Path) -> None:
    for i, plan in enumerate(plans("demo", 3.0, running=ONLINE)):
        journals = tmp_path / f"journals-{i}"
        args = [
            *("demo", "--plain", "--speed", "8", "--tables", "roulette,baccarat,lucky7"),
            *("--state-dir", str(journals)),
        ]
        with command(f"demo-{i}", args, tmp_path / f"demo-{i}") as demo:
            stopped_in_order(demo, plan)
            stdout = demo.stdout()
            if "tablectl demo: tables" in stdout:  # its broker listened: a summary at the end
                assert SUMMARY.search(stdout), f"{plan}: no summary\n{stdout[-2000:]}"
                assert demo.broker() is not None, demo.seen()
            if ONLINE in stdout:  # a table had started: the summary lists it
                assert f"journals kept in {journals}" in stdout, stdout[-2000:]


@needs_mosquitto
def test_a_killed_demo_takes_its_broker_along(tmp_path: Path) -> None:
    args = ["demo", "--plain", "--tables", "roulette", "--state-dir", str(tmp_path / "j")]
    with command("demo-kill", args, tmp_path / "demo") as demo:
        demo.wait_for("its embedded broker", demo.broker)
        broker = demo.broker()
        assert broker is not None
        demo.proc.send_signal(signal.SIGKILL)
        demo.proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _alive(broker) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not _alive(broker), f"the embedded broker {broker} outlived a SIGKILL of the demo"
        assert not demo.left_behind()


@pytest.mark.broker
def test_run_journals_power_off_and_flushes(tmp_path: Path, mosquitto: MosquittoProcess) -> None:
    with start_simulator(["--tcp", "127.0.0.1:0", "--speed", "8"], tmp_path) as wheel:
        for i, plan in enumerate(plans("run", 2.0, running="service_ready")):
            workdir = tmp_path / f"run-{i}"
            workdir.mkdir()
            config = write_config(
                workdir / "table.toml",
                table="ROU-SIG",
                port=f"socket://{wheel.ready}",
                mqtt_url=mosquitto.url,
                journal=workdir / "journal.sqlite",
            )
            args = ["--log-format", "json", "run", "--config", str(config)]
            with command(f"run-{i}", args, workdir) as run:
                stopped_in_order(run, plan)
            journal_path = workdir / "journal.sqlite"
            if plan.after is None and not journal_path.exists():
                continue  # stopped before it opened the journal
            with Journal(journal_path, "ROU-SIG") as journal:
                last = list(journal.records())[-1]
                assert (last["type"], last.get("reason")) == ("power_off", "shutdown"), (
                    f"{plan}: the journal ends with {dict(last)}"
                )
                if plan.after is not None:  # connected before the signal: the final flush
                    unsent = [r["type"] for r in journal.unpublished()]
                    assert unsent == [], f"{plan}: not published {unsent}"


@pytest.mark.broker
def test_watch_stops_in_order(tmp_path: Path, mosquitto: MosquittoProcess) -> None:
    for i, plan in enumerate(plans("watch", 1.5, running="connected to")):
        args = ["watch", "--plain", "--url", mosquitto.url]
        with command(f"watch-{i}", args, tmp_path / f"watch-{i}") as watch:
            stopped_in_order(watch, plan)


@pytest.mark.broker
def test_dashboard_stops_in_order(tmp_path: Path, mosquitto: MosquittoProcess) -> None:
    pytest.importorskip("uvicorn")
    for i, plan in enumerate(plans("dashboard", 2.0)):
        args = ["dashboard", "--listen", f"127.0.0.1:{free_port()}", "--url", mosquitto.url]
        with command(f"dashboard-{i}", args, tmp_path / f"dashboard-{i}") as dashboard:
            stopped_in_order(dashboard, plan)


@pytest.mark.broker
def test_archive_stops_in_order(
    tmp_path: Path, mosquitto: MosquittoProcess, postgres_dsn: str
) -> None:
    for i, plan in enumerate(plans("archive", 2.0, running="archive_connected")):
        args = [
            *("--log-format", "json", "archive", "--url", mosquitto.url, "--dsn", postgres_dsn),
            *("--prefix", "it", "--name", f"sig{i}"),
        ]
        with command(f"archive-{i}", args, tmp_path / f"archive-{i}") as archive:
            stopped_in_order(archive, plan)


SIMULATORS = [
    pytest.param(["ss2", "--pty", "--speed", "8"], id="ss2-pty"),
    pytest.param(["bigwheel", "--tcp", "127.0.0.1:0", "--speed", "8"], id="bigwheel-tcp"),
    pytest.param(["drum", "--speed", "8"], id="drum-can"),
]


@pytest.mark.parametrize("device", SIMULATORS)
def test_simulators_stop_in_order(tmp_path: Path, device: list[str]) -> None:
    for i, plan in enumerate(plans(f"simulate-{device[0]}", 1.5, running="READY")):
        args = ["--log-format", "json", "simulate", *device]
        with command(f"simulate-{i}", args, tmp_path / f"sim-{i}") as sim:
            stopped_in_order(sim, plan)
