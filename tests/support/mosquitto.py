"""A real Mosquitto broker on a free port, for tests that need a broker that can die and return.

Why a subprocess and not the embedded broker: the reliability tests must stop and restart the
broker on the same port while the publisher is connected, the way a production outage looks.
``find_mosquitto`` and ``free_port`` are the embedded broker's
(:mod:`tablectl.controller.mqtt.broker`), re-exported for the tests.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from tablectl.controller.mqtt.broker import find_mosquitto, free_port
from tests.support.processes import ServerProcess

__all__ = ["Bridge", "MosquittoProcess", "find_mosquitto", "free_port"]


@dataclass(frozen=True)
class Bridge:
    """A Mosquitto bridge from this broker to another (a table host's broker to the floor's).

    ``topics`` are bridge ``topic`` lines without the keyword (``"it/+/events out 1"``). The
    bridge keeps its session on the remote (``cleansession false``) and reconnects quickly, so
    a test can cut it by stopping either broker and watch it come back.
    """

    address: str
    topics: tuple[str, ...]
    name: str = "floor"

    def config_text(self) -> str:
        lines = [
            f"connection {self.name}",
            f"address {self.address}",
            *(f"topic {topic}" for topic in self.topics),
            "cleansession false",
            "bridge_protocol_version mqttv311",
            "try_private true",
            "notifications false",
            "restart_timeout 1 2",
            "keepalive_interval 5",
        ]
        return "\n".join(lines) + "\n"


class MosquittoProcess(ServerProcess):
    """One mosquitto process that can be stopped and started again on the same port.

    ``persistence false``: a restart loses retained messages and sessions, which is the harder
    case for the publisher (it must re-publish its retained slots itself).

    Args:
        workdir: holds the config file and the broker's log (shown when startup fails).
        binary: the mosquitto executable (default: :func:`find_mosquitto`).
        port: fixed port, or ``None`` to pick a free one once (kept across restarts).
        bridge: a bridge to another broker (:class:`Bridge`), configured at every start.
    """

    def __init__(
        self,
        workdir: Path,
        binary: str | None = None,
        port: int | None = None,
        *,
        bridge: Bridge | None = None,
    ) -> None:
        found = binary or find_mosquitto()
        if found is None:
            raise FileNotFoundError("mosquitto binary not found")
        self.binary = found
        self.host = "127.0.0.1"
        self.port = port or free_port(self.host)
        self.workdir = workdir
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.config_path = self.workdir / "mosquitto.conf"
        self.log_path = self.workdir / "mosquitto.log"
        self.bridge = bridge
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout: float = 5.0) -> None:
        """Start the broker and return once its port accepts connections."""
        if self.running:
            return
        self.config_path.write_text(self.config_text(), encoding="utf-8")
        with self.log_path.open("ab") as log:
            self._proc = subprocess.Popen(
                [self.binary, "-c", str(self.config_path)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited at startup: {self._log_tail()}")
            with contextlib.suppress(OSError):
                socket.create_connection((self.host, self.port), timeout=0.2).close()
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen on {self.port} in {timeout}s")

    def config_text(self) -> str:
        """The broker's config file (a TLS/ACL variant overrides it: ``tests/support/tls.py``)."""
        return (
            f"listener {self.port} {self.host}\n"
            "allow_anonymous true\n"
            "persistence false\n"
            # As production should: without it, pipelined PUBACKs wait on Nagle + delayed ACK
            # (about 40 ms per outbox batch, ~2k instead of ~10k records/s).
            "set_tcp_nodelay true\n"
            "log_dest stderr\n"
            "log_type error\n"
            "log_type warning\n" + (self.bridge.config_text() if self.bridge is not None else "")
        )

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL after 3 s). Idempotent."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=3)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=3)

    def kill(self) -> None:
        """Kill the broker abruptly (SIGKILL): no goodbye to clients."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(timeout=3)

    def close(self) -> None:
        self.stop()
