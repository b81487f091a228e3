"""Real processes for end-to-end tests: the simulator and the controller, as users run them.

Each is started with ``python -m tablectl …`` (the same code as the ``tablectl`` script), its
stderr kept in a log file so a failing test can show what the process said.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from tablectl.controller.core.closing import Closing

__all__ = [
    "Process",
    "ServerProcess",
    "end_process",
    "log_tail",
    "start_controller",
    "start_simulator",
    "write_config",
]

REPO = Path(__file__).resolve().parents[2]


class ServerProcess(Closing):
    """A server the tests start for real (Mosquitto, PostgreSQL, a RabbitMQ node): a context
    manager that starts it and closes it, with its log at ``log_path`` for failure messages."""

    log_path: Path

    def start(self) -> object:
        raise NotImplementedError

    def _log_tail(self) -> str:
        return log_tail(self.log_path, 2000)

    def __enter__(self) -> Self:
        self.start()
        return self


@dataclass
class Process:
    """A started subprocess with its log file."""

    proc: subprocess.Popen[bytes]
    log: Path
    ready: str = ""

    def log_tail(self, chars: int = 3000) -> str:
        return log_tail(self.log, chars)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 5.0) -> int:
        """Signal the process and wait; SIGKILL if it does not go. Returns the exit code."""
        return end_process(self.proc, sig, timeout)


def end_process(proc: subprocess.Popen[bytes], sig: int, timeout: float = 10.0) -> int:
    """Send ``sig`` to ``proc`` (if it still runs) and reap it; SIGKILL after ``timeout``
    seconds. Returns its exit code."""
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    if proc.stdout is not None:
        proc.stdout.close()
    return proc.returncode


def log_tail(path: Path, chars: int = 3000) -> str:
    """The end of a process's log, for a failure message."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")[-chars:]
    except OSError:
        return "(no log)"


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _start(args: Sequence[str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "tablectl", *args],
            stdout=subprocess.PIPE,
            stderr=err,
            stdin=subprocess.DEVNULL,
            env=_env(),
            cwd=REPO,
        )


@contextlib.contextmanager
def start_simulator(args: Sequence[str], workdir: Path, timeout: float = 10.0) -> Iterator[Process]:
    """``tablectl simulate ss2 ARGS``; yields once it printed its ``READY …`` line."""
    log = workdir / "simulator.log"
    proc = _start(["--log-format", "json", "simulate", "ss2", *args], log)
    process = Process(proc, log)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while time.monotonic() < deadline and not line:
            line = proc.stdout.readline()
            if proc.poll() is not None and not line:
                break
        if not line.startswith(b"READY "):
            raise AssertionError(f"simulator not ready: {line!r}\n{process.log_tail()}")
        process.ready = line.decode().split(" ", 2)[2].strip()
        yield process
    finally:
        process.stop()


@contextlib.contextmanager
def start_controller(config: Path, workdir: Path) -> Iterator[Process]:
    """``tablectl run --config CONFIG``; stopped with SIGTERM at the end."""
    log = workdir / "controller.log"
    proc = _start(["--log-format", "json", "run", "--config", str(config)], log)
    process = Process(proc, log)
    try:
        yield process
    finally:
        process.stop()


def write_config(
    path: Path,
    *,
    table: str,
    port: str,
    mqtt_url: str,
    journal: Path,
    rules: str = "",
    device: str = "",
    journal_options: str = "",
    security: str = "insecure_commands = true",
    sections: str = "",
) -> Path:
    """A table config file for the roulette table under test (a lab table: unsigned commands
    are accepted unless ``security`` says otherwise; ``""`` leaves ``[security]`` out).
    ``sections`` is more TOML placed before the device (e.g. a ``[metrics]`` table)."""
    path.write_text(
        f"""[table]
id = "{table}"
game = "roulette"

[rules]
{rules}

[mqtt]
url = "{mqtt_url}"
topic_prefix = "it"
reconnect_max_delay = 0.5

[journal]
path = "{journal}"
{journal_options}
{"[security]" if security else ""}
{security}
{sections}

[[devices]]
id = "wheel"
driver = "cammegh-ss2"
port = "{port}"
reconnect_max_delay = 0.5
{device}
""",
        encoding="utf-8",
    )
    return path
