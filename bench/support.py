"""What every benchmark needs: a Mosquitto, a wheel pty, SS2 lines, a timestamping subscriber,
controller processes and ``/proc`` readings.

The broker helper follows ``tests/support/mosquitto.py`` (a private Mosquitto on a free loopback
port, ``set_tcp_nodelay`` as production should have it) but is kept here, so ``bench`` does not
depend on the test tree; both find the binary and the port with the service's own
``find_mosquitto`` and ``free_port`` (:mod:`tablectl.controller.mqtt.broker`).
"""

from __future__ import annotations

import contextlib
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import tty
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tablectl.controller.mqtt.broker import find_mosquitto, free_port
from tablectl.drivers.ss2.protocol import BareNumber, Status, encode_message

__all__ = [
    "PREFIX",
    "REPO",
    "Broker",
    "WheelLines",
    "WheelPty",
    "child_env",
    "load_average",
    "machine_info",
    "proc_cpu_seconds",
    "proc_hwm_kb",
    "proc_rss_kb",
    "proc_runqueue_wait_seconds",
    "start_controller",
    "start_module",
    "stop_process",
    "summarize_ms",
    "write_table_config",
]

REPO = Path(__file__).resolve().parents[1]
PREFIX = "bench"
"""Topic prefix of every benchmark table."""

_CLK_TCK = os.sysconf("SC_CLK_TCK")


# --- statistics ------------------------------------------------------------------------------


def summarize_ms(samples_ns: Sequence[int]) -> dict[str, float]:
    """p50 / p99 / max / mean (milliseconds) and the count of nanosecond samples."""
    if not samples_ns:
        return {"n": 0, "p50_ms": float("nan"), "p99_ms": float("nan"), "max_ms": float("nan")}
    ordered = sorted(samples_ns)
    n = len(ordered)

    def pick(q: float) -> float:
        # Nearest rank: the value below which q of the samples fall (no interpolation).
        return ordered[min(n - 1, max(0, round(q * n + 0.5) - 1))] / 1e6

    return {
        "n": n,
        "p50_ms": round(pick(0.50), 4),
        "p99_ms": round(pick(0.99), 4),
        "max_ms": round(ordered[-1] / 1e6, 4),
        "mean_ms": round(statistics.fmean(ordered) / 1e6, 4),
    }


# --- the broker ------------------------------------------------------------------------------


class Broker:
    """A private Mosquitto on a free loopback port (a context manager)."""

    def __init__(self, workdir: Path) -> None:
        binary = find_mosquitto()
        if binary is None:
            raise FileNotFoundError("mosquitto not found (apt-get install mosquitto)")
        self.binary = binary
        self.host = "127.0.0.1"
        self.port = free_port(self.host)
        self.workdir = workdir
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def __enter__(self) -> Self:
        self.workdir.mkdir(parents=True, exist_ok=True)
        conf = self.workdir / "mosquitto.conf"
        conf.write_text(
            f"listener {self.port} {self.host}\n"
            "allow_anonymous true\n"
            "persistence false\n"
            "set_tcp_nodelay true\n"
            "max_queued_messages 100000\n"
            "log_dest stderr\nlog_type error\nlog_type warning\n",
            encoding="utf-8",
        )
        with (self.workdir / "mosquitto.log").open("ab") as log:
            self._proc = subprocess.Popen(
                [self.binary, "-c", str(conf)], stdout=log, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError("mosquitto exited at startup (see its log in the workdir)")
            with contextlib.suppress(OSError):
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return self
            time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not listen on {self.port}")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            stop_process(self._proc)
            self._proc = None


# --- the wheel's pty -------------------------------------------------------------------------


class WheelPty:
    """A pty pair: the controller opens :attr:`path` (the slave), we write the wheel's bytes to
    the master. Both ends raw, like the simulator's; the slave fd stays open here so the pty is
    never hung up between controller runs."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.master)
        tty.setraw(self.slave)
        self.path = os.ttyname(self.slave)

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.master, view) :]

    def close(self) -> None:
        for fd in (self.master, self.slave):
            with contextlib.suppress(OSError):
                os.close(fd)


class WheelLines:
    """Minimal SS2 status traffic for one wheel, built with the driver's own encoder.

    A round is: state 2 (place bets), state 3 (ball launched), state 4 (no more bets), then the
    bare winning number followed by the first state-5 line, in one write. The interpreter
    settles on the pair: the status line's number must agree with the bare one (R22).
    """

    def __init__(self) -> None:
        self.spin = 0
        self.last: int | None = None

    def idle(self) -> bytes:
        return encode_message(Status(1, self.spin or 1, self.last, 0, 0, 0))

    def next_round(self) -> tuple[bytes, bytes, bytes, bytes]:
        """``(state 2, state 3, state 4, bare number + state 5)`` of the next game."""
        self.spin = self.spin % 256 + 1
        number = self.spin % 37
        spin, last = self.spin, self.last
        ready = encode_message(Status(2, spin, last, 0, 250, 0))
        launched = encode_message(Status(3, spin, last, 0, 250, 0))
        closed = encode_message(Status(4, spin, last, 0, 250, 0))
        result = encode_message(BareNumber(number)) + encode_message(
            Status(5, spin, number, 0, 250, 0)
        )
        self.last = number
        return ready, launched, closed, result


# --- controller processes --------------------------------------------------------------------


def write_table_config(path: Path, *, table: str, port: str, broker: Broker, journal: Path) -> Path:
    """A roulette table on an SS2 wheel at ``port``; the silence timeout is long so that pauses
    of the harness (between phases) never latch a fault."""
    path.write_text(
        f"""[table]
id = "{table}"
game = "roulette"

[rules]
variant = "european"

[mqtt]
url = "{broker.url}"
topic_prefix = "{PREFIX}"

[journal]
path = "{journal}"

[[devices]]
id = "wheel"
driver = "cammegh-ss2"
port = "{port}"
silence_timeout = 600
""",
        encoding="utf-8",
    )
    return path


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def start_controller(
    config: Path, log: Path, *, extra: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """``python -m tablectl run --config CONFIG`` as production runs it (JSON logs, to a file)."""
    with log.open("ab") as err:
        return subprocess.Popen(
            [
                sys.executable,
                *extra,
                "-m",
                "tablectl",
                "--log-format",
                "json",
                "run",
                "--config",
                str(config),
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=child_env(),
            cwd=REPO,
        )


def start_module(module: str, args: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    """``python -m MODULE ARGS`` with stdout piped (for a ``READY`` line)."""
    with log.open("ab") as err:
        return subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=child_env(),
            cwd=REPO,
        )


def stop_process(proc: subprocess.Popen[Any], timeout: float = 10.0) -> int:
    """SIGTERM (the graceful way out), SIGKILL if it does not go."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode


# --- /proc -----------------------------------------------------------------------------------


def _status_kb(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def proc_rss_kb(pid: int) -> int:
    """Resident set size (``VmRSS``) in KiB."""
    return _status_kb(pid, "VmRSS")


def proc_hwm_kb(pid: int) -> int:
    """Peak resident set size (``VmHWM``) in KiB."""
    return _status_kb(pid, "VmHWM")


def proc_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _CLK_TCK


def proc_runqueue_wait_seconds(pid: int) -> float:
    """Time the process's threads spent runnable but waiting for a CPU (``schedstat``).

    A benchmark is only as good as the machine is quiet: this says how much other load on it
    delayed the process under test.
    """
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError, ValueError, IndexError):
            total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return []


def machine_info() -> dict[str, Any]:
    """What the figures were taken on."""
    model = "unknown"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    mem_kb = 0
    with contextlib.suppress(OSError, ValueError, IndexError):
        mem_kb = int(Path("/proc/meminfo").read_text().split()[1])
    commit = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        if dirty:
            commit += "+dirty"
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "mem_total_gib": round(mem_kb / 1024 / 1024, 1),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "commit": commit,
    }
